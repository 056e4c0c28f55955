"""``Queue`` and ``SQLQueueStore`` in one process, with a memory whose availability the test
sets: order, the cap, claims and their TTL, refused records, and the store's conditional
writes on SQLite and PostgreSQL (seed 003_b7c8dac142c7aed9.txt, Queue, Queued)."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from ynm.client import (
    CLAIM_TTL,
    QUEUE_CAP,
    QUEUE_PREFIX,
    REFUSED_PREFIX,
    Queue,
    Queued,
    Record,
    Rejected,
    SQLQueueStore,
    Unavailable,
)

T0 = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)


class FakeMemory:
    """Up or down as the test says; refuses contents in ``refuse``; keeps what it took."""

    def __init__(self, up: bool = True) -> None:
        self.up = up
        self.took: list[str] = []
        self.refuse: set[str] = set()
        self.fail_after: int | None = None

    def remember(self, record: Record) -> dict:
        if record.content in self.refuse:
            raise Rejected(f"invalid input: {record.content}")
        if not self.up or (self.fail_after is not None and len(self.took) >= self.fail_after):
            raise Unavailable("down")
        self.took.append(record.content)
        return {"memoryId": str(len(self.took))}


class Clock:
    def __init__(self) -> None:
        self.t = T0

    def __call__(self) -> datetime:
        return self.t


class CountingStore:
    """A store wrapper counting calls per method."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.calls: dict[str, int] = {}

    def __getattr__(self, name):
        fn = getattr(self.inner, name)

        def counted(*a, **k):
            self.calls[name] = self.calls.get(name, 0) + 1
            return fn(*a, **k)

        return counted


def rec(i: int | str) -> Record:
    return Record(type="episodic", content=f"record {i}", namespace="factory/h/o/r")


@pytest.fixture
def store(tmp_path: Path) -> SQLQueueStore:
    s = SQLQueueStore(f"sqlite:///{tmp_path / 'queue.sqlite'}")
    yield s
    s.close()


def test_seed_constants():
    assert QUEUE_CAP == 1000
    assert CLAIM_TTL == timedelta(minutes=5)
    assert QUEUE_PREFIX == "memory/queue/"


def test_sent_directly_when_up_and_nothing_queued(store):
    mem = FakeMemory()
    q = Queue(mem, store, owner="w1")
    assert q.remember(rec(1)) == "sent"
    assert mem.took == ["record 1"] and q.pending() == (0, None)


def test_queued_while_down_then_flushed_oldest_first(store):
    mem, clock = FakeMemory(up=False), Clock()
    q = Queue(mem, store, owner="w1", now=clock)
    for i in range(5):
        clock.t = T0 + timedelta(seconds=i)
        assert q.remember(rec(i)) == "queued"
    assert q.pending() == (5, T0)
    keys = store.keys(QUEUE_PREFIX)
    assert keys == sorted(keys) and len(keys) == 5
    doc = json.loads(store.get(keys[0])[0])
    # each remember flushed first: the oldest was tried (and its claim given back) four times
    assert doc == {"record": rec(0).to_json(), "queued": "2026-12-01T08:00:00.000000Z",
                   "attempts": 4, "target": q.target}
    assert json.loads(store.get(keys[4])[0])["attempts"] == 0
    mem.up, mem.fail_after = True, 2
    assert q.flush() == 3  # stops at the first failure
    assert mem.took == ["record 0", "record 1"]
    assert q.pending() == (3, T0 + timedelta(seconds=2))
    doc = json.loads(store.get(store.keys(QUEUE_PREFIX)[0])[0])
    assert doc["attempts"] == 1 and "claimedBy" not in doc  # the claim was given back
    assert "claimedAt" not in doc
    mem.fail_after = None
    assert q.flush() == 0
    assert mem.took == [f"record {i}" for i in range(5)]


def test_remember_never_jumps_the_queue(store):
    mem = FakeMemory(up=False)
    q = Queue(mem, store, owner="w1")
    for i in range(3):
        q.remember(rec(i))
    mem.up = True
    assert q.remember(rec("new")) == "sent"
    assert mem.took == ["record 0", "record 1", "record 2", "record new"]
    mem.up, mem.fail_after = True, 4  # the backlog does not drain: the new one waits behind it
    mem.took.clear()
    mem.fail_after = 0
    q.remember(rec("a"))
    mem.fail_after = None
    q2 = Queue(mem, store, owner="w2")
    assert q2.remember(rec("b")) == "sent"
    assert mem.took == ["record a", "record b"]


def test_with_nothing_queued_flush_costs_one_listing(store):
    counting = CountingStore(store)
    assert Queue(FakeMemory(), counting, owner="w1").flush() == 0
    assert counting.calls == {"keys": 1}


def test_without_memory_everything_is_queued(store):
    q = Queue(None, store, owner="w1")
    assert [q.remember(rec(i)) for i in range(3)] == ["queued"] * 3
    assert q.flush() == 3 and q.pending()[0] == 3


def test_cap_keeps_the_newest_and_logs_the_drop(store, caplog):
    q = Queue(None, store, owner="w1", cap=10)
    with caplog.at_level(logging.WARNING, logger="ynm.client"):
        for i in range(15):
            q.remember(rec(i))
    assert q.pending()[0] == 10
    mem = FakeMemory()
    Queue(mem, store, owner="w1", cap=10).flush()
    assert mem.took == [f"record {i}" for i in range(5, 15)]
    drops = [r.getMessage() for r in caplog.records if "over its cap" in r.getMessage()]
    assert len(drops) == 5 and all("dropped the 1 oldest" in m for m in drops)


def test_refused_record_is_moved_aside_and_does_not_block(store, caplog):
    mem = FakeMemory(up=False)
    q = Queue(mem, store, owner="w1")
    for i in range(3):
        q.remember(rec(i))
    mem.up, mem.refuse = True, {"record 1"}
    with caplog.at_level(logging.WARNING, logger="ynm.client"):
        assert q.flush() == 0
    assert mem.took == ["record 0", "record 2"]
    [aside] = store.keys(REFUSED_PREFIX)
    doc = json.loads(store.get(aside)[0])
    assert doc["record"]["content"] == "record 1"
    assert doc["error"] == "invalid input: record 1" and doc["attempts"] == 1
    assert any(aside in r.getMessage() for r in caplog.records)
    assert q.pending() == (0, None) and (q.sent, q.refused) == (2, 1)
    # refused when sent directly: kept aside as well, never raised
    mem.refuse = {"record 9"}
    assert q.remember(rec(9)) == "refused"
    assert len(store.keys(REFUSED_PREFIX)) == 2


def test_damaged_document_is_moved_aside(store):
    store.create(QUEUE_PREFIX + "01AAAAAAAAAAAAAAAAAAAAAAAA", "{not json")
    mem = FakeMemory()
    q = Queue(mem, store, owner="w1")
    q.remember(rec(1))
    assert mem.took == ["record 1"]
    [aside] = store.keys(REFUSED_PREFIX)
    assert json.loads(store.get(aside)[0])["raw"] == "{not json"


def test_another_workers_claim_holds_until_the_ttl(store):
    clock = Clock()
    Queue(None, store, owner="w0", now=clock).remember(rec(1))
    [key] = store.keys(QUEUE_PREFIX)
    text, version = store.get(key)
    doc = Queued.from_json(text)
    doc.claimed_by, doc.claimed_at, doc.attempts = "w-other", T0, 1
    assert store.compare_and_set(key, doc.to_json(), version)
    mem = FakeMemory()
    q = Queue(mem, store, owner="w1", now=clock, claim_ttl=timedelta(seconds=30))
    clock.t = T0 + timedelta(seconds=29)
    assert q.flush() == 1 and mem.took == []  # left, and counted
    assert q.remember(rec(2)) == "queued"  # never sent ahead of the claimed one
    clock.t = T0 + timedelta(seconds=30)
    assert q.flush() == 0
    assert mem.took == ["record 1", "record 2"]


def test_a_store_that_fails_makes_remember_raise(tmp_path):
    class Broken:
        def keys(self, prefix):
            raise OSError("disk gone")

    with pytest.raises(OSError, match="disk gone"):
        Queue(FakeMemory(), Broken(), owner="w1").remember(rec(1))


def test_queue_refuses_what_is_not_a_record(store):
    with pytest.raises(TypeError, match="expected a Record"):
        Queue(FakeMemory(), store, owner="w1").remember({"type": "episodic"})
    with pytest.raises(ValueError, match="owner"):
        Queue(FakeMemory(), store, owner="")


@pytest.fixture(params=["sqlite", "postgresql"])
def any_store(request, tmp_path):
    if request.param == "sqlite":
        s = SQLQueueStore(tmp_path / "q.sqlite")  # a path works as well as a URL
    else:
        s = SQLQueueStore(request.getfixturevalue("postgres_url"))
    yield s
    s.close()


def test_store_conditional_writes(any_store):
    s = any_store
    assert s.keys("p/") == [] and s.get("p/a") is None
    assert s.create("p/b", "B") and s.create("p/a", "A") and s.create("p_x", "X")
    assert not s.create("p/a", "again")
    assert s.get("p/a") == ("A", 1)
    assert s.keys("p/") == ["p/a", "p/b"]  # sorted; "_" in the prefix is no wildcard
    assert s.keys("p_") == ["p_x"] and s.keys("p%") == []
    assert s.compare_and_set("p/a", "A2", 1) and not s.compare_and_set("p/a", "A3", 1)
    assert s.get("p/a") == ("A2", 2)
    assert not s.delete("p/a", 1) and s.delete("p/a", 2) and not s.delete("p/a")
    assert s.delete("p/b") and s.keys("p/") == []


def test_default_store_is_queue_sqlite_in_ynm_home(ynm_home):
    s = SQLQueueStore()
    try:
        assert s.url == f"sqlite:///{ynm_home / 'queue.sqlite'}"
        s.create("k", "v")
        assert (ynm_home / "queue.sqlite").is_file()
    finally:
        s.close()


def test_bad_url_is_a_clear_error():
    with pytest.raises(ValueError, match="not a database URL"):
        SQLQueueStore("not a url://x")
    with pytest.raises(ValueError, match="not a database URL"):
        SQLQueueStore("postgresql+psycopg://u@h:port/db")
    with pytest.raises(ValueError, match="cannot open"):
        SQLQueueStore("nosuchdb+nodriver://x/y")


def test_a_shared_queue_sends_each_record_only_to_the_store_it_was_meant_for(store):
    # One queue file (the user's default) serves every repository: a record queued while
    # ynm was away in repository A must not be written into B by a worker running there.
    in_a = Queue(FakeMemory(up=False), store, owner="a", target="repo:/src/a")
    assert in_a.remember(rec(0)) == "queued" and in_a.remember(rec(1)) == "queued"
    up_in_b = FakeMemory()
    in_b = Queue(up_in_b, store, owner="b", target="repo:/src/b")
    assert in_b.flush() == 0  # nothing of B's is left; A's two stay queued for A
    assert in_b.remember(rec(2)) == "sent"  # and B's own record is not held behind them
    assert up_in_b.took == ["record 2"]
    assert in_b.pending()[0] == 2
    back_in_a = FakeMemory()
    assert Queue(back_in_a, store, owner="a2", target="repo:/src/a").flush() == 0
    assert back_in_a.took == ["record 0", "record 1"]
    assert store.keys(QUEUE_PREFIX) == []


def test_the_target_is_the_repository_of_the_memory(tmp_path, git_repo):
    from ynm.client import YnmCLI

    sub = git_repo / "src"
    sub.mkdir()
    assert YnmCLI(cwd=sub).target == f"repo:{git_repo}"
    assert YnmCLI(cwd=tmp_path / "nowhere").target in ("user", f"repo:{tmp_path}")
