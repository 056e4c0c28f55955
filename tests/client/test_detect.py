"""``detect``: ynm when the executable is on PATH and a store is present; where it looks and
what it never takes for a project's store (seed 003_b7c8dac142c7aed9.txt, Detect)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from ynm.client import YnmCLI, detect


@pytest.fixture
def bare_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No ``YNM_HOME`` and a ``HOME`` in tmp_path without ``.ynm``."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.delenv("YNM_HOME", raising=False)
    monkeypatch.setenv("HOME", str(home))
    return home


def test_repository_with_its_own_store(project: Path):
    sub = project / "src" / "deep"
    sub.mkdir(parents=True)
    for cwd in (project, sub):
        memory, reason = detect(cwd)
        assert isinstance(memory, YnmCLI)
        assert reason == f"project store {project / '.ynm'}"
        assert memory.cwd == cwd
        assert Path(memory.bin).name == "ynm" and os.access(memory.bin, os.X_OK)


def test_linked_worktree_finds_the_main_repository_store(project: Path, git, tmp_path: Path):
    linked = tmp_path / "linked"
    git(project, "worktree", "add", "-q", "-b", "side", str(linked))
    assert not (linked / ".ynm").exists()  # .ynm/ is not committed: only the main one has it
    (linked / "pkg").mkdir()
    memory, reason = detect(linked / "pkg")
    assert memory is not None and memory.cwd == linked / "pkg"
    assert reason == f"project store {project / '.ynm'}"


def test_repository_without_store_uses_ynm_home(git_repo: Path, ynm_home: Path):
    ynm_home.mkdir()
    sub = git_repo / "sub"
    sub.mkdir()
    memory, reason = detect(sub)
    assert memory is not None
    assert reason == f"user store {ynm_home} ($YNM_HOME)"


def test_ynm_home_set_but_absent_never_falls_back_to_home(git_repo: Path, ynm_home: Path,
                                                          bare_home: Path, monkeypatch):
    monkeypatch.setenv("YNM_HOME", str(ynm_home))  # set, not created
    (bare_home / ".ynm").mkdir()
    memory, reason = detect(git_repo)
    assert memory is None
    assert reason == (f"no ynm store: no .ynm/ at repository root {git_repo}; "
                      f"no user store at {ynm_home} ($YNM_HOME)")


def test_repository_without_store_uses_home_dot_ynm(git_repo: Path, bare_home: Path):
    (bare_home / ".ynm").mkdir()
    sub = git_repo / "sub"
    sub.mkdir()
    memory, reason = detect(sub)
    assert memory is not None
    assert reason == f"user store {bare_home / '.ynm'} (~/.ynm)"


def test_repository_under_home_never_takes_home_dot_ynm_for_its_store(bare_home: Path, git):
    # a repository in the home directory, with ~/.ynm above it: found as the user's store,
    # never as the repository's (nothing above the repository root is looked at)
    (bare_home / ".ynm").mkdir()
    repo = bare_home / "code" / "repo"
    repo.mkdir(parents=True)
    git(repo, "init", "-q")
    _, reason = detect(repo)
    assert reason == f"user store {bare_home / '.ynm'} (~/.ynm)"
    # a dotfiles repository rooted at the home directory: its .ynm is the user's store
    git(bare_home, "init", "-q")
    _, reason = detect(bare_home)
    assert reason == f"user store {bare_home / '.ynm'} (~/.ynm)"


def test_outside_any_repository_without_store(tmp_path: Path, bare_home: Path):
    here = tmp_path / "plain"
    here.mkdir()
    memory, reason = detect(here)
    assert memory is None
    assert reason == (f"no ynm store: {here} is not inside a git repository; "
                      f"no user store at {bare_home / '.ynm'} (~/.ynm)")


def test_outside_any_repository_with_user_store(tmp_path: Path, ynm_home: Path):
    ynm_home.mkdir()
    memory, reason = detect(tmp_path)
    assert memory is not None and reason == f"user store {ynm_home} ($YNM_HOME)"


def test_ynm_missing_from_path(project: Path, tmp_path: Path, monkeypatch):
    empty = tmp_path / "emptybin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    assert detect(project) == (None, "ynm is not on PATH")


def test_default_cwd_is_the_working_directory(project: Path):
    memory, reason = detect()
    assert memory is not None and memory.cwd is None
    assert reason == f"project store {project / '.ynm'}"


def test_detect_is_fast_and_starts_no_process(project: Path, monkeypatch):
    import subprocess

    sub = project / "a" / "b" / "c"
    sub.mkdir(parents=True)

    def no_process(*a, **k):
        raise AssertionError("detect started a process")

    monkeypatch.setattr(subprocess.Popen, "__init__", no_process)
    detect(sub)
    times = []
    for _ in range(20):
        start = time.perf_counter()
        memory, _ = detect(sub)
        times.append(time.perf_counter() - start)
        assert memory is not None
    assert sorted(times)[len(times) // 2] < 0.020, times
