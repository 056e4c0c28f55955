"""Fixtures for the cache tests: a real repository, its distributed shard log, a cache file,
and builders for records."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest

from ynm.index.cache import MountCache
from ynm.model.ids import new_ulid
from ynm.model.jsonl import dumps_record, parse_obj
from ynm.model.records import Record
from ynm.model.shards import ShardKey
from ynm.store.gitnotes import GitNotesLog

BASE_MS = 1_767_225_600_000  # 2026-01-01T00:00:00.000Z
KEY = ShardKey("distributed", "common", "semantic", "2026-01")
_seq = itertools.count(1)


def ulid(ms: int = BASE_MS) -> str:
    n = next(_seq)
    return new_ulid(ms, lambda k: n.to_bytes(k, "big"))


def rec(**over: Any) -> dict[str, Any]:
    """A distributed semantic ``create`` in ``common`` (January 2026); None drops a key."""
    rid = over.pop("id", None) or ulid()
    obj: dict[str, Any] = {
        "v": 1, "id": rid, "memoryId": rid, "op": "create", "type": "semantic",
        "level": "distributed", "namespace": "common", "tags": [],
        "content": "content", "summary": "summary",
        "recordedAt": f"2026-01-01T00:00:{next(_seq) % 60:02d}.000Z",
        "provenance": {"actor": "user:test"}, "links": [],
    }
    obj.update(over)
    return {k: v for k, v in obj.items() if v is not None}


def line(obj: dict[str, Any]) -> str:
    return json.dumps(obj, separators=(",", ":"))


def record(obj: dict[str, Any]) -> Record:
    return parse_obj(obj)


def cache_over(root: Path, objs: list[dict[str, Any]]) -> MountCache:
    """A cache under ``root`` built from the records ``objs``, appended by shard (the
    ``KEY`` month) to a new repository ``root/repo`` made by the real ``git``; for
    module-scoped stores that tests only read. The caller closes it."""
    import subprocess

    repo = root / "repo"
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "PATH": "/usr/bin:/bin"}
    subprocess.run(["git", "init", "-q", str(repo)], check=True, env=env)
    subprocess.run(["git", "-C", str(repo), "commit", "-q", "--allow-empty", "-m", "root"],
                   check=True, env=env)
    anchor = subprocess.run(["git", "-C", str(repo), "rev-list", "--max-parents=0", "HEAD"],
                            check=True, env=env, capture_output=True, text=True).stdout.strip()
    log = GitNotesLog(repo, level="distributed", anchor=anchor, mount_id="project")
    groups: dict[ShardKey, list[Record]] = {}
    for obj in objs:
        r = record(obj)
        groups.setdefault(ShardKey(r.level, r.namespace, r.type, KEY.bucket), []).append(r)
    log.append({k: ("".join(dumps_record(r) + "\n" for r in rs).encode(), len(rs))
                for k, rs in groups.items()})
    cache = MountCache(root / "cache.sqlite", "project")
    cache.refresh(log)
    return cache


@pytest.fixture
def anchor(git_repo: Path, git) -> str:
    return git(git_repo, "rev-list", "--max-parents=0", "HEAD")


@pytest.fixture
def log(git_repo: Path, anchor: str) -> GitNotesLog:
    return GitNotesLog(git_repo, level="distributed", anchor=anchor, mount_id="project")


@pytest.fixture
def cache_path(tmp_path: Path) -> Path:
    return tmp_path / "cache" / "project.sqlite"


@pytest.fixture
def cache(cache_path: Path):
    c = MountCache(cache_path, "project")
    yield c
    c.close()


@pytest.fixture
def append(log: GitNotesLog, cache: MountCache):
    """``append(*objs, key=KEY, own=True)``: ynm's own append of records to one shard; with
    ``own`` the cache is updated in the same call (as the service does)."""

    def _append(*objs: dict[str, Any], key: ShardKey = KEY, own: bool = True):
        recs = [record(o) for o in objs]
        payload = "".join(dumps_record(r) + "\n" for r in recs).encode()
        appended = log.append({key: (payload, len(recs))})
        if own:
            cache.apply_append(log, appended, recs)
        return appended

    return _append
