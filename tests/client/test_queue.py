"""``Queue`` and ``SQLQueueStore`` in one process, with a memory whose availability the test
sets: order, the cap, claims and their TTL, refused records, and the store's conditional
writes on SQLite and PostgreSQL (seed 003_b7c8dac142c7aed9.txt, Queue, Queued)."""

from __future__ import annotations

import json
import logging
import os
import re
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
    StoreUnavailable,
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
    # sent directly once (nothing was queued), then each remember flushed first: the oldest
    # was tried (and its claim given back) four times more
    assert doc == {"record": rec(0).to_json(), "queued": "2026-12-01T08:00:00.000000Z",
                   "attempts": 5, "target": q.target}
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


def test_a_store_that_fails_sends_directly_and_raises_only_when_it_cannot(tmp_path):
    def fail(*args, **kwargs):
        raise OSError("disk gone")

    class Broken:
        keys = get = create = compare_and_set = delete = fail

    mem = FakeMemory()
    q = Queue(mem, Broken(), owner="w1")
    assert q.remember(rec(1)) == "sent" and mem.took == ["record 1"]
    mem.up = False
    with pytest.raises(StoreUnavailable, match="neither sent .down. nor queued: queue store "
                                               "Broken: disk gone") as caught:
        q.remember(rec(2))
    assert isinstance(caught.value.__cause__, OSError)
    for call in (q.pending, q.flush, lambda: q.drop(refused=True),
                 lambda: q.retry(refused=True)):
        with pytest.raises(StoreUnavailable, match="disk gone"):
            call()
    with pytest.raises(StoreUnavailable, match="disk gone"):
        Queue(None, Broken(), owner="w1").remember(rec(3))


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
    with pytest.raises(ValueError, match="unknown database scheme 'nosuchdb\\+nodriver'"):
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


# -- refusals for good, and why a flush stops ---------------------------------------------


class RecordingMemory(FakeMemory):
    """A FakeMemory that keeps the records themselves, and refuses for good (``Rejected``)
    with the message in ``refuse_with``."""

    def __init__(self, up: bool = True) -> None:
        super().__init__(up)
        self.records: list[Record] = []
        self.refuse_with: str | None = None

    def remember(self, record: Record) -> dict:
        if self.refuse_with is not None:
            raise Rejected(self.refuse_with)
        out = super().remember(record)
        self.records.append(record)
        return out


def test_a_record_refused_in_flight_keeps_its_reason_and_no_claim(store):
    mem, clock = RecordingMemory(up=False), Clock()
    q = Queue(mem, store, owner="w1", now=clock)
    assert q.remember(rec(0)) == "queued" and q.remember(rec(1)) == "queued"
    mem.up, mem.refuse_with = True, "no distributed mount: run `ynm init` in the project"
    assert q.flush() == 0 and q.refused == 2 and q.stopped is None
    keys = store.keys(REFUSED_PREFIX)
    assert len(keys) == 2 and store.keys(QUEUE_PREFIX) == []
    for key, attempts in zip(keys, (3, 1), strict=True):
        doc = json.loads(store.get(key)[0])
        # it was claimed while in flight; moved aside, nobody holds it any more
        assert "claimedBy" not in doc and "claimedAt" not in doc
        assert doc["error"] == "no distributed mount: run `ynm init` in the project"
        # record 0 was sent directly, then tried by remember(rec(1)) too
        assert doc["attempts"] == attempts


def test_every_flush_that_stops_says_why(store):
    mem = RecordingMemory(up=False)
    q = Queue(mem, store, owner="w1")
    q.remember(rec(0))
    assert q.flush() == 1 and q.stopped == "down"
    assert Queue(None, store, owner="w2").flush() == 1
    nobody = Queue(None, store, owner="w2")
    nobody.flush()
    assert nobody.stopped.startswith("no ynm to send to")
    mem.up = True
    assert q.flush() == 0 and q.stopped is None


@pytest.mark.parametrize(("code", "message", "kind"), [
    (2, "invalid input: content: must not be blank", Rejected),
    (2, "refused: content matches 1 secret detector: AWS Access Key", Rejected),
    (1, "no distributed mount: run `ynm init` in the project (or configure a mount)", Rejected),
    (1, "no personal mount available: this store is shared only; set level to distributed",
     Rejected),
    (1, "nothing stored: this store has no personal level, so a memory stored here is shared",
     Rejected),
    (1, "cannot lock the repository: timed out", Unavailable),
    (3, "no distributed mount: but a crash code", Unavailable),
])
def test_the_cli_sorts_refusals_for_good_from_outages(tmp_path, code, message, kind):
    from ynm.client import YnmCLI

    fake = tmp_path / "ynm"
    fake.write_text(f"#!/bin/sh\necho 'Error: {message}' >&2\nexit {code}\n")
    fake.chmod(0o755)
    with pytest.raises(kind) as caught:
        YnmCLI(bin=str(fake), cwd=tmp_path).remember(rec(0))
    assert message in str(caught.value)


def test_the_permanent_messages_are_ynms_own():
    """The messages :func:`permanent` knows are the ones ynm raises (not copies that drift)."""
    from ynm.client.memory import permanent
    from ynm.errors import NoMount, ShareRequired
    from ynm.service.mounts import route

    assert permanent(ShareRequired().message)
    for level in ("personal", "distributed"):
        with pytest.raises(NoMount) as caught:
            route([], level)
        assert permanent(caught.value.message)
    assert not permanent("unknown memory 01ABC") and not permanent("ynm remember exited 1")


def test_a_record_no_mount_can_take_is_refused_by_the_real_ynm(tmp_path, monkeypatch):
    """A distributed record written outside any repository (only the user's personal store
    there): ynm can never take it, so it is moved aside with ynm's reason, not kept queued."""
    from ynm.client import YnmCLI

    plain = tmp_path / "plain"
    plain.mkdir()
    q = Queue(YnmCLI(cwd=plain), SQLQueueStore(tmp_path / "q.sqlite"), owner="w1")
    outcome = q.remember(Record(type="episodic", level="distributed", content="step passed"))
    assert outcome == "refused" and q.pending() == (0, None)
    doc = json.loads(q.store.get(q.store.keys(REFUSED_PREFIX)[0])[0])
    assert doc["error"].startswith("no distributed mount: ")
    assert q.remember(Record(type="episodic", content="a personal one")) == "sent"


# -- the time a record was written ----------------------------------------------------------


def test_a_flushed_record_carries_the_time_it_was_queued(store):
    from ynm.errors import InvalidInput

    mem, clock = RecordingMemory(up=False), Clock()
    q = Queue(mem, store, owner="w1", now=clock)
    q.remember(rec(0))
    clock.t = T0 + timedelta(seconds=90)
    q.remember(Record(type="episodic", content="own time", valid_from="2026-11-30T10:00:00Z"))
    clock.t = T0 + timedelta(hours=3)
    mem.up = True
    assert q.flush() == 0
    assert q.remember(rec(2)) == "sent"
    assert [r.valid_from for r in mem.records] == [
        "2026-12-01T08:00:00.000Z",  # queued at T0, sent three hours later
        "2026-11-30T10:00:00Z",  # the record's own time is kept (ynm normalises it)
        "2026-12-01T11:00:00.000Z",  # sent directly: the time it was handed over
    ]
    # what is queued is the record as given: the time is added when it is sent
    assert "validFrom" not in rec(0).to_json()
    assert Record(type="episodic", content="x", valid_from="2026-11-30T10:00:00Z").to_json()[
        "validFrom"] == "2026-11-30T10:00:00Z"
    with pytest.raises(InvalidInput, match="validFrom|valid_from"):
        Record(type="episodic", content="x", valid_from="yesterday")


def test_the_real_ynm_keeps_the_queued_time_as_valid_from(project, tmp_path):
    from tests.client.conftest import listed
    from ynm.client import YnmCLI

    clock = Clock()
    clock.t = datetime(2026, 11, 30, 8, 0, tzinfo=UTC)  # before any test runs
    store = SQLQueueStore(tmp_path / "q.sqlite")
    Queue(None, store, owner="w1", now=clock, target=f"repo:{project}").remember(rec("late"))
    q = Queue(YnmCLI(cwd=project), store, owner="w2")
    assert q.flush() == 0 and q.sent == 1
    [memory] = [m for m in listed(project) if m["content"] == "record late"]
    assert memory["validFrom"] == "2026-11-30T08:00:00.000Z"
    assert memory["recordedAt"] > "2026-11-30T08:00:00.000Z"  # ynm's own transaction time


# -- drop --------------------------------------------------------------------------------


def test_drop_deletes_refused_records_only(store):
    from ynm.errors import InvalidInput

    mem = RecordingMemory()
    q = Queue(mem, store, owner="w1")
    mem.refuse_with = "invalid input: no"
    for i in range(3):
        assert q.remember(rec(i)) == "refused"
    mem.refuse_with, mem.up = None, False
    assert q.remember(rec("queued")) == "queued"
    refused = store.keys(REFUSED_PREFIX)
    queued = store.keys(QUEUE_PREFIX)[0]
    ulid = queued[len(QUEUE_PREFIX):]
    for bad, problem in ((ulid, "it is queued .for repo:.*--queued"),
                         ("01NOSUCH", "no refused or queued record"),
                         (queued, "it is queued"), ("other/" + ulid, "not a record's id"),
                         ("", "not a record's id")):
        with pytest.raises(InvalidInput, match=problem):
            q.drop([refused[0], bad])
        assert store.keys(REFUSED_PREFIX) == refused  # a bad id drops nothing
    for both_or_neither in ({"ids": [refused[0]], "refused": True}, {}):
        with pytest.raises(ValueError, match="not both"):
            q.drop(**both_or_neither)
    # by key or by bare ULID, each once
    assert q.drop([refused[1], refused[0][len(REFUSED_PREFIX):], refused[0]]) == refused[:2]
    assert store.keys(REFUSED_PREFIX) == refused[2:]
    assert q.drop(refused[2]) == [refused[2]]  # one id as a plain string
    assert q.drop(refused=True) == [] and store.keys(REFUSED_PREFIX) == []
    assert store.keys(QUEUE_PREFIX) == [queued]


# -- store arguments ----------------------------------------------------------------------


def _bad_stores(tmp_path: Path) -> dict[str, tuple[str, str]]:
    """A store argument that can never be a queue store, by kind: (argument, message)."""
    import sqlite3

    (tmp_path / "adir").mkdir()
    (tmp_path / "notes.txt").write_text("not a database at all, only some text\n")
    other = sqlite3.connect(tmp_path / "other.sqlite")
    other.execute("CREATE TABLE memories (id TEXT)")
    other.commit()
    other.close()
    return {
        "empty": ("", "empty"),
        "blank": ("  ", "empty"),
        "directory": (str(tmp_path / "adir"), "is a directory"),
        "directory URL": (f"sqlite:///{tmp_path / 'adir'}", "is a directory"),
        "missing directory": (str(tmp_path / "no" / "dir" / "q.sqlite"), "no directory"),
        "missing directory URL": (f"sqlite:///{tmp_path / 'no' / 'dir' / 'q.sqlite'}",
                                  "no directory"),
        "unknown scheme": ("foo://x/y", "unknown database scheme 'foo'"),
        "unsupported database": ("mysql://u@h/db", "unknown database scheme 'mysql'"),
        "no file in URL": ("sqlite:///", "no file named"),
        "text file": (str(tmp_path / "notes.txt"), "is not a queue store (not a SQLite"),
        "another program's database": (str(tmp_path / "other.sqlite"),
                                       "without the ynm_client_queue table"),
    }


def test_store_arguments_that_can_never_be_a_queue_store_are_refused(tmp_path):
    from ynm.client.stores import StoreUnusable

    for kind, (arg, message) in _bad_stores(tmp_path).items():
        with pytest.raises(StoreUnusable) as caught:
            SQLQueueStore(arg)
        assert message in str(caught.value), kind
    assert not (tmp_path / "no").exists()  # nothing was created for a missing directory
    import sqlite3

    tables = sqlite3.connect(tmp_path / "other.sqlite").execute(
        "SELECT name FROM sqlite_master").fetchall()
    assert tables == [("memories",)]  # another program's database is left alone


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads every file")
def test_an_unreadable_store_file_is_refused(tmp_path):
    from ynm.client.stores import StoreUnusable

    path = tmp_path / "q.sqlite"
    s = SQLQueueStore(path)
    s.create("k", "v")
    s.close()
    path.chmod(0)
    with pytest.raises(StoreUnusable, match="cannot read .*permission denied"):
        SQLQueueStore(path)


def test_an_operators_store_must_exist_in_either_form(tmp_path):
    from ynm.client.stores import StoreUnusable

    path = tmp_path / "missing" / "dir" / "q.sqlite"
    for arg in (str(path), f"sqlite:///{path}", path):
        with pytest.raises(StoreUnusable, match=f"no queue store at {path}$"):
            SQLQueueStore(arg, create=False)
    assert not (tmp_path / "missing").exists()
    here = tmp_path / "q.sqlite"
    with pytest.raises(StoreUnusable, match="no queue store at"):
        SQLQueueStore(here, create=False)
    SQLQueueStore(here).create("k", "v")
    assert SQLQueueStore(f"sqlite:///{here}", create=False).get("k") == ("v", 1)


def test_only_a_queue_write_creates_the_default_store_and_its_directory(ynm_home):
    path = ynm_home / "queue.sqlite"
    q = Queue(RecordingMemory(up=False), SQLQueueStore(), owner="w1", target="user")
    assert q.pending() == (0, None) and q.flush() == 0
    assert q.store.keys(QUEUE_PREFIX) == [] and q.store.get("k") is None
    assert not q.store.delete("k") and not q.store.compare_and_set("k", "v", 1)
    assert not ynm_home.exists()  # looking created nothing
    assert q.remember(rec(0)) == "queued"
    assert path.is_file() and q.pending()[0] == 1


def test_a_missing_driver_names_the_extra_that_brings_it(monkeypatch):
    import sys
    import tomllib

    from ynm.client.stores import _DRIVER_EXTRAS, StoreUnusable
    from ynm.errors import MissingExtra, pip_install

    monkeypatch.setitem(sys.modules, "psycopg", None)
    with pytest.raises(MissingExtra, match=re.escape(
            f"needs the client extra (psycopg is not installed): {pip_install('client')}")):
        SQLQueueStore("postgresql+psycopg://u@h/db")
    monkeypatch.setitem(sys.modules, "pg8000", None)
    with pytest.raises(StoreUnusable, match="its driver pg8000 is not installed and no ynm "
                       "extra brings it; use postgresql\\+psycopg"):
        SQLQueueStore("postgresql+pg8000://u@h/db")
    # the extras named are the ones pyproject.toml gives those packages
    extras = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())[
        "project"]["optional-dependencies"]
    for module, extra in _DRIVER_EXTRAS.items():
        assert any(req.lower().startswith(module) for req in extras[extra]), (module, extra)
