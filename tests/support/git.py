"""Real-git helpers for tests: run git with a fixed identity and build repositories.

Every helper runs the ``git`` executable (argv, no shell) so tests can check ynm's in-process
writes against what git itself reads and writes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

HAVE_GIT = shutil.which("git") is not None

IDENTITY = {
    "GIT_AUTHOR_NAME": "Test Author",
    "GIT_AUTHOR_EMAIL": "author@example.com",
    "GIT_COMMITTER_NAME": "Test Committer",
    "GIT_COMMITTER_EMAIL": "committer@example.com",
}
BASE_DATE = "2026-01-01T00:00:00Z"


def git_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The process environment plus a fixed identity and no system config."""
    env = dict(os.environ)
    env.update(IDENTITY)
    env["GIT_CONFIG_NOSYSTEM"] = "1"
    if extra:
        env.update(extra)
    return env


def git(cwd: Path | str, *args: str, input: bytes | None = None,
        env: dict[str, str] | None = None, check: bool = True) -> str:
    """Run ``git <args>`` in ``cwd`` and return stdout decoded (UTF-8), stripped of a final
    newline. Raises CalledProcessError (with stderr) when ``check`` and git fails."""
    out = git_bytes(cwd, *args, input=input, env=env, check=check)
    return out.decode("utf-8").removesuffix("\n")


def git_bytes(cwd: Path | str, *args: str, input: bytes | None = None,
              env: dict[str, str] | None = None, check: bool = True) -> bytes:
    """Run ``git <args>`` in ``cwd`` and return raw stdout bytes."""
    proc = subprocess.run(
        ["git", *args], cwd=cwd, input=input, capture_output=True, env=git_env(env),
        timeout=60,
    )
    if check and proc.returncode != 0:
        raise subprocess.CalledProcessError(
            proc.returncode, ["git", *args], proc.stdout, proc.stderr
        )
    return proc.stdout


def commit_env(date: str) -> dict[str, str]:
    """Identity env with author and committer date fixed to ``date`` (ISO 8601)."""
    return {"GIT_AUTHOR_DATE": date, "GIT_COMMITTER_DATE": date}


def init_repo(path: Path, *, bare: bool = False) -> Path:
    """``git init -b main`` at ``path``; returns ``path``."""
    path.mkdir(parents=True, exist_ok=True)
    args = ["init", "-q", "-b", "main"] + (["--bare"] if bare else [])
    git(path, *args)
    return path


def make_repo(path: Path, commits: int = 3) -> Path:
    """A work-tree repository on ``main`` with ``commits`` linear commits, one day apart from
    2026-01-01, each adding ``file<i>.txt``."""
    init_repo(path)
    for i in range(commits):
        (path / f"file{i}.txt").write_text(f"content {i}\n")
        git(path, "add", f"file{i}.txt")
        git(path, "commit", "-q", "-m", f"commit {i}",
            env=commit_env(f"2026-01-{i + 1:02d}T00:00:00Z"))
    return path


def orphan_commit(repo: Path, ref: str, date: str, message: str = "orphan") -> str:
    """A parentless empty-tree commit dated ``date`` placed at ``ref`` with plumbing only."""
    tree = git(repo, "mktree", input=b"")
    sha = git(repo, "commit-tree", tree, "-m", message, env=commit_env(date))
    git(repo, "update-ref", ref, sha)
    return sha


def root_commit(repo: Path) -> str:
    """The root commit of HEAD (``rev-list --max-parents=0 HEAD``)."""
    return git(repo, "rev-list", "--max-parents=0", "HEAD").splitlines()[0]
