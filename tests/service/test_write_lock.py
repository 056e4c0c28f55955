"""Writes of many memories take each repository lock once: expire appends its tombstones with
one commit per shard, and a lock another process holds is waited out once, not once per
memory, and changes nothing (reference/algorithms.md §4.6; reference/storage.md §3.5)."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from ynm.errors import LockTimeout
from ynm.model.ids import iso_ms, new_ulid
from ynm.model.inputs import ExportQuery, ForgetInput, ListQuery, RememberInput
from ynm.service.ynm import Ynm

HOUR = 3_600_000
NOW = 1_772_323_200_000  # 2026-03-01T00:00:00.000Z
TIMEOUT_S = 0.4  # the lock timeout these tests give each mount
_seq = itertools.count(1)


def working(at: int, session: str, n: int, ttl: str = "PT1H") -> dict[str, Any]:
    rid = new_ulid(at, lambda k: next(_seq).to_bytes(k, "big"))
    return {"v": 1, "id": rid, "memoryId": rid, "op": "create", "type": "working",
            "level": "personal", "namespace": f"session/{session}", "tags": [],
            "content": f"{session} note {n}", "summary": f"{session} note {n}", "ttl": ttl,
            "recordedAt": iso_ms(at), "provenance": {"actor": "user:tester"}, "links": []}


def open_store(where: Path, home: Path, monkeypatch: pytest.MonkeyPatch,
               objs: list[dict[str, Any]]) -> Ynm:
    """A Ynm on a personal store in ``home`` holding ``objs``, reading time as NOW."""
    monkeypatch.setenv("YNM_HOME", str(home))
    where.mkdir(exist_ok=True)
    y = Ynm.open(where, now_ms=lambda: NOW)
    assert y.import_jsonl("".join(json.dumps(o) + "\n" for o in objs))["imported"] == len(objs)
    for m in y.mounts:
        m.log.lock_timeout_s = TIMEOUT_S
    return y


def due_notes(count: int = 50) -> list[dict[str, Any]]:
    """``count`` working memories past their ttl in two sessions (two shards), and two live."""
    due = [working(NOW - 2 * HOUR, "run-a" if n % 2 else "run-b", n) for n in range(count)]
    return [*due, working(NOW - 10 * 60_000, "run-a", 900), working(NOW, "run-b", 901)]


def commits(y: Ynm) -> dict[str, int]:
    """Shard ref -> how many commits its history holds, from the real git."""
    common = y.mounts[0].log.common_dir
    refs = subprocess.run(["git", "--git-dir", str(common), "for-each-ref",
                           "--format=%(refname)", "refs/notes/ynm/"],
                          capture_output=True, text=True, check=True).stdout.split()
    return {ref: int(subprocess.run(["git", "--git-dir", str(common), "rev-list", "--count",
                                     ref], capture_output=True, text=True,
                                    check=True).stdout) for ref in refs}


def hold_lock(y: Ynm) -> Path:
    """Take the personal store's lock as another live ynm process would (this process's pid,
    written now)."""
    path = y.mounts[0].log.common_dir / "ynm.lock"
    path.write_text(f"{os.getpid()}\n{int(time.time() * 1000)}\n")
    return path


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("YNM_USER", "tester")
    notes = due_notes()
    y = open_store(tmp_path / "outside", tmp_path / "home-a", monkeypatch, notes)
    yield y, notes
    y.close()


def test_expire_of_50_due_memories_is_one_commit_per_shard(store):
    y, notes = store
    before = commits(y)
    told: list[tuple[str, int, int]] = []
    y.progress = lambda phase, done, total: told.append((phase, done, total))
    expired = y.expire()
    y.progress = None
    after = commits(y)
    assert [t for t in told if t[0] == "expire"] == [("expire", 25, 50), ("expire", 50, 50)]
    assert expired == sorted(n["id"] for n in notes[:50])
    grew = {ref: n - before.get(ref, 0) for ref, n in after.items() if n != before.get(ref)}
    # 50 tombstones in two sessions, filed under the month they are written in: two shards,
    # one commit each (one by one, it was 50 commits)
    month = iso_ms(int(time.time() * 1000))[:7]
    assert grew == {f"refs/notes/ynm/personal/session/run-a/working/{month}": 1,
                    f"refs/notes/ynm/personal/session/run-b/working/{month}": 1}
    live = {m["memoryId"] for m in y.list(ListQuery(type="working"))}
    assert live == {notes[50]["id"], notes[51]["id"]}
    assert y.expire() == []  # nothing left due: nothing written
    assert commits(y) == after


def test_expire_writes_what_forgetting_one_by_one_writes(store, tmp_path, monkeypatch):
    """The batch's records equal those of one forget per due memory, in id order, as expire
    wrote them before (ids and times aside, which the clock stamps)."""
    y, notes = store
    one_by_one = open_store(tmp_path / "outside-b", tmp_path / "home-b", monkeypatch, notes)
    try:
        for memory_id in sorted(n["id"] for n in notes[:50]):
            one_by_one.forget(ForgetInput(memory_id=memory_id, reason="expired"))
        assert y.expire() == sorted(n["id"] for n in notes[:50])

        def records(z: Ynm) -> list[dict[str, Any]]:
            out = []
            for line in z.export(ExportQuery()):
                obj = json.loads(line)
                if obj["op"] == "tombstone":
                    del obj["id"], obj["recordedAt"]
                out.append(obj)
            return sorted(out, key=lambda o: (o["memoryId"], o["op"]))

        assert records(y) == records(one_by_one)
        tombstones = [o for o in records(y) if o["op"] == "tombstone"]
        assert len(tombstones) == 50
        assert {o["reason"] for o in tombstones} == {"expired"}
    finally:
        one_by_one.close()


def test_a_held_lock_fails_expire_once_and_changes_nothing(store):
    y, _notes = store
    before = commits(y)
    lock = hold_lock(y)
    started = time.monotonic()
    with pytest.raises(LockTimeout) as info:
        y.expire()
    took = time.monotonic() - started
    assert TIMEOUT_S <= took < 3 * TIMEOUT_S  # one timeout, not 50
    assert str(info.value) == f"lock timeout after 400ms: {lock}"
    hint = info.value.hint or ""
    assert hint.startswith(f"no memory was expired (50 due); held by process {os.getpid()} ")
    assert "wait for it to finish, then run this again" in hint
    assert commits(y) == before
    assert len(y.list(ListQuery(type="working", include_tombstoned=True))) == 52
    lock.unlink()
    assert len(y.expire()) == 50


def test_a_held_lock_stops_a_dream_run_at_its_first_write(store):
    """The expire pass meets the lock first and the run stops there, once."""
    y, _notes = store
    before = commits(y)
    hold_lock(y)
    started = time.monotonic()
    with pytest.raises(LockTimeout):
        y.consolidate(["expire"])
    assert time.monotonic() - started < 3 * TIMEOUT_S
    assert commits(y) == before


def test_a_held_lock_stops_a_dream_pass_that_queues_writes(tmp_path, monkeypatch):
    """A pass that writes through the run's queue (promote of a tagged working memory) fails
    once with the lock's error and its hint says the run stopped."""
    monkeypatch.setenv("YNM_USER", "tester")
    tagged = [dict(working(NOW - 60_000, "s", n, ttl="P30D"), tags=["promote"])
              for n in range(5)]
    y = open_store(tmp_path / "outside", tmp_path / "home", monkeypatch, tagged)
    try:
        before = commits(y)
        hold_lock(y)
        started = time.monotonic()
        with pytest.raises(LockTimeout) as info:
            y.consolidate(["promote"])
        assert time.monotonic() - started < 3 * TIMEOUT_S
        assert (info.value.hint or "").startswith("this dream run stopped before writing")
        assert commits(y) == before
    finally:
        y.close()


def test_a_held_lock_fails_a_group_of_remembers_after_one_wait(store):
    """remember_many over several shards of one mount waits for its lock once and fails each
    of its inputs with that one error."""
    y, _notes = store
    hold_lock(y)
    calls = [(RememberInput(content=f"fact {n}", type=kind, level="personal"), None)
             for n, kind in enumerate(["semantic", "procedural", "episodic", "reference"] * 2)]
    started = time.monotonic()
    outs = y.remember_many(calls)
    assert time.monotonic() - started < 3 * TIMEOUT_S
    assert len(outs) == 8 and all(isinstance(o, LockTimeout) for o in outs)
    assert len({id(o) for o in outs}) == 1


def test_hook_stop_names_the_lock_holder(tmp_path, monkeypatch, cli_run):
    """The stop hook's expiry meets the held lock once: the error and its hint on stderr,
    nothing written, and the hook still answers ``{}``."""
    from ynm.store.gitnotes import GitNotesLog
    from ynm.store.lock import LOCK_FILE_NAME, RepoLock

    monkeypatch.setenv("YNM_USER", "tester")
    notes = [working(NOW - 2 * HOUR, "hook-run", n) for n in range(20)]
    y = open_store(tmp_path / "outside", tmp_path / "home", monkeypatch, notes)
    before = commits(y)
    lock = hold_lock(y)
    monkeypatch.setattr(GitNotesLog, "lock",
                        lambda self: RepoLock(self.common_dir / LOCK_FILE_NAME, TIMEOUT_S))
    started = time.monotonic()
    result = cli_run("hook", "stop", "--cwd", tmp_path / "outside",
                     input=json.dumps({"session_id": "hook-run"}))
    assert time.monotonic() - started < 3 * TIMEOUT_S + 2  # one wait, plus opening the store
    assert result.exit_code == 0
    assert result.stdout == "{}\n"
    lines = result.stderr.splitlines()
    assert lines[0] == f"ynm hook: lock timeout after 400ms: {lock}"
    assert lines[1].startswith(f"ynm hook: hint: no memory was expired (20 due); held by "
                               f"process {os.getpid()} ")
    assert len(lines) == 2
    assert commits(y) == before
    y.close()
