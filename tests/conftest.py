"""Shared fixtures: an isolated ynm home and git identity for every test, real git repositories,
and a project (a repository after ``ynm init``).

Every git command runs the real ``git`` executable with a fixed identity and no user or system
configuration, so the tests see what a user's git would see.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

IDENTITY = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.com",
    "GIT_COMMITTER_NAME": "Test Committer",
    "GIT_COMMITTER_EMAIL": "committer@example.com",
}


@pytest.fixture(autouse=True)
def _isolated(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """``YNM_HOME`` in tmp_path, no other ``YNM_*`` variable leaking in (``YNM_EMBEDDER=none``),
    a fixed git identity and no global or system git configuration. Returns the ynm home."""
    for name in list(os.environ):
        if name.startswith("YNM_"):
            monkeypatch.delenv(name)
    home = tmp_path / "ynm-home"
    monkeypatch.setenv("YNM_HOME", str(home))
    # Full-text only unless a test asks for vectors (tests/index/test_vectors.py does): loading
    # the embedding model in every CLI test would cost seconds each.
    monkeypatch.setenv("YNM_EMBEDDER", "none")
    for name, value in IDENTITY.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", os.devnull)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    # ynm on PATH, as for a user who activated the virtualenv; tests of the other case take
    # the virtualenv's bin/ off PATH themselves.
    bindir = str(Path(sys.executable).parent)
    parts = os.environ.get("PATH", "").split(os.pathsep)
    if bindir not in parts:
        monkeypatch.setenv("PATH", os.pathsep.join([bindir, *parts]))
    return home


@pytest.fixture
def ynm_home(_isolated: Path) -> Path:
    """The ``YNM_HOME`` of this test (it need not exist yet)."""
    return _isolated


def run_git(cwd: Path | str, *args: str, input: bytes | None = None) -> str:
    """Run the real ``git`` and return stdout without its final newline; raise on failure."""
    proc = subprocess.run(["git", *args], cwd=cwd, input=input, capture_output=True,
                          env=dict(os.environ), timeout=60)
    if proc.returncode != 0:
        raise AssertionError(f"git {' '.join(args)} failed: {proc.stderr.decode()}")
    return proc.stdout.decode().removesuffix("\n")


@pytest.fixture
def git():
    """``git(cwd, *args, input=None) -> stdout`` with the real executable."""
    if shutil.which("git") is None:  # pragma: no cover
        pytest.skip("git executable not found")
    return run_git


@pytest.fixture
def git_repo(tmp_path: Path, git) -> Path:
    """A work-tree repository on ``main`` with two commits (``a.txt`` then ``b.txt``)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    for i, name in enumerate(("a.txt", "b.txt")):
        (repo / name).write_text(f"file {name}\n")
        git(repo, "add", name)
        git(repo, "-c", "commit.gpgsign=false", "commit", "-q", "-m", f"commit {i}")
    return repo


@pytest.fixture
def cli_run():
    """``cli_run(*args, input=None) -> click Result`` running the ``ynm`` group in-process
    (stdout and stderr kept apart)."""
    from click.testing import CliRunner

    from ynm.cli import cli

    def run(*args: str, input: str | bytes | None = None):
        return CliRunner().invoke(cli, [str(a) for a in args], input=input,
                                  catch_exceptions=False)

    return run


@pytest.fixture
def project(git_repo: Path, cli_run, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``git_repo`` after ``ynm init`` run through the CLI; the test's cwd is the repository."""
    monkeypatch.chdir(git_repo)
    result = cli_run("init", "--cwd", git_repo)
    assert result.exit_code == 0, result.stderr
    return git_repo
