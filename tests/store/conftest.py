"""Fixtures for the store tests: real git repositories in tmp_path and a fixed git identity."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

# Until pytest's `pythonpath` includes the project root, make `tests.support` importable.
_ROOT = str(Path(__file__).resolve().parents[2])
if _ROOT not in sys.path:
    sys.path.insert(0, _ROOT)

from tests.support.git import HAVE_GIT, IDENTITY, make_repo, root_commit  # noqa: E402

from ynm.model.shards import ShardKey  # noqa: E402

if not HAVE_GIT:  # pragma: no cover - the real git executable is needed for interop checks
    pytest.skip("git executable not found", allow_module_level=True)


@pytest.fixture(autouse=True)
def _git_identity(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Fixed identity for git and for ynm's commits; no user or system config leaks in."""
    for name, value in IDENTITY.items():
        monkeypatch.setenv(name, value)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    empty = tmp_path / "empty-gitconfig"
    empty.write_text("")
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(empty))


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A work-tree repository with three commits on ``main``."""
    return make_repo(tmp_path / "repo")


@pytest.fixture
def anchor(repo: Path) -> str:
    """The root commit of ``repo``."""
    return root_commit(repo)


@pytest.fixture
def key() -> ShardKey:
    """A personal semantic shard for September 2026."""
    return ShardKey("personal", "user/test", "semantic", "2026-09")
