"""Fixtures for the CLI tests: a fixed user id and builders for records with known times."""

from __future__ import annotations

import itertools
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.embeddings_server import server  # noqa: F401 (a fixture)
from ynm.model.ids import new_ulid

USER = "tester"
BASE_MS = 1_767_225_600_000  # 2026-01-01T00:00:00.000Z
_seq = itertools.count(1)


@pytest.fixture(autouse=True)
def _user(monkeypatch: pytest.MonkeyPatch) -> None:
    """``YNM_USER=tester`` so the personal namespace is ``user/tester``."""
    monkeypatch.setenv("YNM_USER", USER)


def ulid(ms: int = BASE_MS) -> str:
    """A ULID with time part ``ms`` and a fresh, increasing random part."""
    n = next(_seq)
    return new_ulid(ms, lambda k: n.to_bytes(k, "big"))


def make_record(**over: Any) -> dict[str, Any]:
    """A valid personal semantic ``create`` record dict; ``over`` replaces keys (None drops one)."""
    rid = over.pop("id", None) or ulid()
    obj: dict[str, Any] = {
        "v": 1, "id": rid, "memoryId": rid, "op": "create", "type": "semantic",
        "level": "personal", "namespace": f"user/{USER}", "tags": [],
        "content": "Root commit is the anchor.", "summary": "Root commit is the anchor.",
        "recordedAt": "2026-01-01T10:00:00.000Z", "provenance": {"actor": "user:tester"},
        "links": [],
    }
    obj.update(over)
    return {k: v for k, v in obj.items() if v is not None}


def mount_org(ynm_home: Path, path: Path) -> None:
    """Configure in ``ynm_home``'s config.json one distributed git-notes mount ``org`` at
    ``path`` (anchor ``a`` * 40), as a user adds an org store; a test that leaves ``path``
    without a repository has a configured mount that does not open."""
    ynm_home.mkdir(exist_ok=True)
    (ynm_home / "config.json").write_text(json.dumps({"mounts": [
        {"id": "org", "level": "distributed", "provider": "git-notes", "path": str(path),
         "anchor": "a" * 40}]}))


def jsonl(*records: dict[str, Any]) -> str:
    """Compact JSONL text of ``records``, one per line."""
    return "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records)


def stop_import_after(monkeypatch: pytest.MonkeyPatch, parts: int) -> Any:
    """Make ``ynm import`` read its input in parts of two lines and meet Ctrl-C
    (``KeyboardInterrupt``) after ``parts`` of them (0: while the first is read). Returns the
    real ``line_chunks``, for a test that imports again afterwards."""
    from ynm.cli import import_

    whole = import_.line_chunks

    def stopped(stream: Any, lines: Any) -> Any:
        chunks = whole(stream, lines)
        for _ in range(parts):
            yield next(chunks)
        raise KeyboardInterrupt

    monkeypatch.setattr(import_, "CHUNK_LINES", 2)
    monkeypatch.setattr(import_, "line_chunks", stopped)
    return whole


@pytest.fixture
def user_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A user home of the test's own (no agent client of this machine is detected), and only
    ynm's and git's folders on PATH."""
    h = tmp_path / "user-home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    git_dir = str(Path(shutil.which("git") or "/usr/bin/git").parent)
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent), git_dir]))
    return h


@pytest.fixture
def load(cli_run, tmp_path: Path):
    """``load(*records)`` imports records through ``ynm import`` (ids and times kept)."""

    def _load(*records: dict[str, Any]) -> None:
        path = tmp_path / f"load-{next(_seq)}.jsonl"
        path.write_text(jsonl(*records))
        result = cli_run("import", path, "--json")
        assert result.exit_code == 0, result.stderr
        assert json.loads(result.stdout) == {"imported": len(records), "problems": []}

    return _load


@pytest.fixture
def run_json(cli_run):
    """``run_json(*args)`` runs a command with ``--json``, checks exit 0, returns parsed stdout."""

    def _run(*args: str) -> Any:
        result = cli_run(*args, "--json")
        assert result.exit_code == 0, result.stderr
        return json.loads(result.stdout)

    return _run


@pytest.fixture
def server_home(tmp_path: Path) -> Path:
    """The hosted server's own ``YNM_HOME`` (never the CLI's: its config mounts the server)."""
    return tmp_path / "server-home"


@pytest.fixture
def hosted_repo(tmp_path: Path, git, cli_run) -> Path:
    """A second repository after ``ynm init``: the hosted store's content."""
    repo = tmp_path / "hosted"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    (repo / "README").write_text("team store\n")
    git(repo, "add", "README")
    git(repo, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "root")
    assert cli_run("init", "--cwd", repo).exit_code == 0
    return repo
