"""Faults a new user meets with the client port, each by kind: records refused for good that a
fix can cure, a write finished by an orphaned ``ynm remember`` and sent again, a queue store
that is down or lives in memory, secrets kept in the queue, records for a repository that is
gone, and the rough edges of ``ynm outbox`` (seed 003_b7c8dac142c7aed9.txt; docs/client.md)."""

from __future__ import annotations

import json
import logging
import os
import signal
import stat
import sys
import time
from datetime import timedelta
from pathlib import Path

import pytest

from tests.client.conftest import listed, worker
from tests.client.test_queue import FakeMemory, rec
from ynm.client import (
    OUTBOX_TAG,
    QUEUE_PREFIX,
    REFUSED_PREFIX,
    NotYet,
    Queue,
    Queued,
    Record,
    Rejected,
    SQLQueueStore,
    StoreUnavailable,
    StoreUnusable,
    Unavailable,
    YnmCLI,
    YnmHTTP,
    detect,
)
from ynm.client.queue import WITHHELD

GITHUB_TOKEN = "ghp_" + "aB3dE5gH7jK9mN1pQ3sT5vX7zA9cE1gI3kM5"
NS = "factory/host/owner/repo"


@pytest.fixture
def store(tmp_path: Path):
    s = SQLQueueStore(tmp_path / "queue.sqlite")
    yield s
    s.close()


# -- 1. refusals a fix can cure --------------------------------------------------------------


def test_no_distributed_mount_in_a_repository_waits_for_ynm_init(git_repo, ynm_home, cli_run,
                                                                  tmp_path, caplog):
    """In a repository without ``.ynm/`` (the user's store only) a distributed record cannot
    be written yet: it stays queued, saying why, and is sent once ``ynm init`` ran there."""
    ynm_home.mkdir(exist_ok=True)
    store = SQLQueueStore(tmp_path / "q.sqlite")
    memory, reason = detect(git_repo)
    assert reason.startswith("user store ")
    q = Queue(memory, store, owner="w1")
    record = Record(type="episodic", namespace=NS, level="distributed", content="step passed")
    with caplog.at_level(logging.WARNING, logger="ynm.client"):
        assert q.remember(record) == "queued"
        assert q.remember(Record(type="episodic", namespace=NS, level="distributed",
                                 content="second step")) == "queued"
    assert q.stopped.startswith("no distributed mount: ") and "ynm init" in q.stopped
    assert str(git_repo) in q.stopped
    assert any("cannot take the record yet" in r.getMessage() for r in caplog.records)
    assert store.keys(REFUSED_PREFIX) == [] and len(store.keys(QUEUE_PREFIX)) == 2
    assert cli_run("init", "--cwd", git_repo).exit_code == 0
    memory, reason = detect(git_repo)
    assert reason == f"project store {git_repo / '.ynm'}"
    q = Queue(memory, store, owner="w1")
    assert q.flush() == 0 and q.sent == 2
    assert [r["content"] for r in listed(git_repo) if r.get("namespace") == NS] == [
        "step passed", "second step"]  # each once: the tried one was looked up first


def test_not_yet_is_an_outage_and_the_other_mount_errors_stay_refusals(tmp_path, git_repo):
    """Exit 1 ``no distributed mount`` is NotYet (kept queued) inside a repository, a refusal
    for good outside any; the other mount errors stay refusals everywhere."""
    script = tmp_path / "fake-ynm"
    script.write_text("#!/bin/sh\necho \"Error: $YNM_FAKE\" >&2\nexit 1\n")
    script.chmod(0o755)
    plain = tmp_path / "plain"
    plain.mkdir()
    record = Record(type="episodic", level="distributed", content="x")
    cases = [
        (git_repo, "no distributed mount: run `ynm init` in the project", NotYet),
        (plain, "no distributed mount: run `ynm init` in the project", Rejected),
        (git_repo, "no personal mount available: pass --level distributed", Rejected),
        (git_repo, "nothing stored: this store has no personal level; pass it", Rejected),
    ]
    for cwd, message, kind in cases:
        env = dict(os.environ, YNM_FAKE=message)
        with pytest.raises(kind) as caught:
            YnmCLI(bin=str(script), cwd=cwd, env=env).remember(record)
        assert type(caught.value) is kind and str(caught.value).startswith(message), cwd
    assert issubclass(NotYet, Unavailable)


def test_retry_queues_refused_records_again_in_their_place(store, caplog):
    from ynm.errors import InvalidInput

    mem = FakeMemory(up=False)
    q = Queue(mem, store, owner="w1")
    for i in range(3):
        q.remember(rec(i))
    mem.up, mem.refuse = True, {"record 0", "record 1"}
    with caplog.at_level(logging.WARNING, logger="ynm.client"):
        assert q.flush() == 0
    refused = store.keys(REFUSED_PREFIX)
    assert len(refused) == 2 and mem.took == ["record 2"]
    # the log names the way back
    assert any(f"ynm outbox drop {refused[0][len(REFUSED_PREFIX):]}" in r.getMessage()
               for r in caplog.records)
    secret = Queue(None, store, owner="w1").remember(
        Record(type="episodic", content=f"token {GITHUB_TOKEN}"))
    assert secret == "refused"
    withheld = store.keys(REFUSED_PREFIX)[-1]
    for bad, problem in (("01NOSUCH", "no refused record"), (withheld, "withheld"),
                         ("x/" + refused[0], "not a refused record's id")):
        with pytest.raises(InvalidInput, match=problem):
            q.retry([refused[0], bad])
        assert len(store.keys(REFUSED_PREFIX)) == 3  # a bad id changes nothing
    with pytest.raises(ValueError, match="not both"):
        q.retry()
    mem.refuse = set()
    assert q.retry(refused[1]) == [QUEUE_PREFIX + refused[1][len(REFUSED_PREFIX):]]
    assert q.retry(refused=True) == [QUEUE_PREFIX + refused[0][len(REFUSED_PREFIX):]]
    assert store.keys(REFUSED_PREFIX) == [withheld]  # a withheld record is never resent
    doc = json.loads(store.get(store.keys(QUEUE_PREFIX)[0])[0])
    assert "error" not in doc and "claimedBy" not in doc
    assert q.flush() == 0 and mem.took == ["record 2", "record 0", "record 1"]  # by age


def test_outbox_retry(tmp_path, cli_run):
    path = tmp_path / "q.sqlite"
    store = SQLQueueStore(path)

    class Refusing:
        target = "user"

        def remember(self, record):
            raise Rejected("no personal mount available: pass --level distributed")

    q = Queue(Refusing(), store, owner="w1")
    for i in range(2):
        assert q.remember(rec(i)) == "refused"
    keys = store.keys(REFUSED_PREFIX)
    store.close()
    result = cli_run("outbox", "retry", "--store", path)
    assert result.exit_code == 2 and "retry needs the ids" in result.stderr
    result = cli_run("outbox", "retry", "01NOSUCH", "--store", path)
    assert result.exit_code == 2
    assert result.stderr == "Error: invalid input: 01NOSUCH: no refused record with this id\n"
    result = cli_run("outbox", "retry", keys[1], "--store", path, "--json")
    assert result.exit_code == 0, result.stderr
    back = QUEUE_PREFIX + keys[1][len(REFUSED_PREFIX):]
    assert json.loads(result.stdout) == {"store": f"sqlite:///{path}", "queued": [back]}
    result = cli_run("outbox", "retry", "--refused", "--store", path)
    assert result.stdout.startswith("queued 1 refused record again")
    rows = json.loads(cli_run("outbox", "list", "--store", path, "--json").stdout)
    assert [r["state"] for r in rows] == ["queued", "queued"]


# -- 2. a kill during a flush -------------------------------------------------------------


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie (dead, not yet reaped) is gone too
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return True


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_ynm_remember_dies_with_a_killed_worker(tmp_path, sig):
    """The ``ynm remember`` child of a worker killed mid-send does not finish its write."""
    fake = tmp_path / "fake-ynm"
    started, finished = tmp_path / "started", tmp_path / "finished"
    fake.write_text(f"#!/bin/sh\necho $$ > {started}\nsleep 5\necho done > {finished}\n")
    fake.chmod(0o755)
    url = f"sqlite:///{tmp_path / 'queue.sqlite'}"
    store = SQLQueueStore(url)
    Queue(None, store, owner="producer", target="user").remember(rec(0))
    doomed = worker("cli", url, "doomed", str(fake), cwd=tmp_path)
    deadline = time.monotonic() + 60
    while not (started.exists() and started.read_text().strip()):
        assert doomed.poll() is None, doomed.stderr.read()
        assert time.monotonic() < deadline, "the worker never ran ynm remember"
        time.sleep(0.02)
    child = int(started.read_text())
    os.kill(doomed.pid, sig)
    doomed.wait(timeout=10)
    deadline = time.monotonic() + 5
    while _alive(child) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(child), "ynm remember outlived its parent"
    time.sleep(5.5)
    assert not finished.exists()
    store.close()


def test_a_record_written_before_its_worker_died_is_not_sent_again(project, tmp_path):
    """kill -9 after ynm wrote the record but before the worker deleted it from the queue:
    after the claim's TTL another worker finds it by its tag and does not write it again."""
    url = f"sqlite:///{tmp_path / 'queue.sqlite'}"
    store = SQLQueueStore(url)
    record = Record(type="episodic", namespace=NS, level="distributed", content="written once")
    Queue(None, store, owner="producer").remember(record)
    marker = tmp_path / "written"
    doomed = worker("write-hang", url, "doomed", str(project), str(marker), cwd=project)
    deadline = time.monotonic() + 120
    while not marker.exists():
        assert doomed.poll() is None, doomed.stderr.read()
        assert time.monotonic() < deadline, "the worker never wrote"
        time.sleep(0.05)
    os.kill(doomed.pid, signal.SIGKILL)
    doomed.wait(timeout=10)
    [key] = store.keys(QUEUE_PREFIX)
    left = Queued.from_json(store.get(key)[0])
    assert left.claimed_by == "doomed"
    memory, _ = detect(project)
    rescuer = Queue(memory, store, owner="rescuer", claim_ttl=timedelta(seconds=1))
    time.sleep(max(0.0, 1.1 - (time.time() - left.claimed_at.timestamp())))
    assert rescuer.flush() == 0 and rescuer.sent == 1
    got = [r for r in listed(project) if r.get("namespace") == NS]
    assert [r["content"] for r in got] == ["written once"]
    assert got[0]["id"] == marker.read_text()
    assert OUTBOX_TAG + key[len(QUEUE_PREFIX):] in got[0]["tags"]
    assert store.keys("") == []


def test_a_timed_out_write_that_landed_is_not_written_twice(project, tmp_path):
    """A direct send that ynm wrote but reported as a failure (a timeout) is queued as tried;
    the next flush looks it up and deletes it instead of writing it again. A record never
    tried is sent without a lookup."""

    class WritesThenTimesOut(YnmCLI):
        def remember(self, record):
            super().remember(record)
            raise Unavailable("ynm remember timed out after 120 s")

    class Counting(YnmCLI):
        lookups = 0

        def has_tag(self, tag):
            Counting.lookups += 1
            return super().has_tag(tag)

    store = SQLQueueStore(tmp_path / "q.sqlite")
    first = Record(type="episodic", namespace=NS, level="distributed", content="first")
    assert Queue(WritesThenTimesOut(cwd=project), store, owner="w1").remember(first) == "queued"
    q = Queue(Counting(cwd=project), store, owner="w1")
    assert q.remember(Record(type="episodic", namespace=NS, level="distributed",
                             content="second")) == "sent"
    assert Counting.lookups == 1 and q.sent == 2
    assert [r["content"] for r in listed(project) if r.get("namespace") == NS] == [
        "first", "second"]


def test_http_has_tag(project):
    pytest.importorskip("mcp")
    from ynm.server.app import MemoryService, build_server

    service = MemoryService(project)
    service.open()
    try:
        memory = YnmHTTP("in-process", transport=lambda: build_server(service))
        memory.remember(Record(type="episodic", level="distributed", content="x",
                               tags=["ynm-outbox:01KNOWN"]))
        assert memory.has_tag("ynm-outbox:01KNOWN") is True
        assert memory.has_tag("ynm-outbox:01OTHER") is False
    finally:
        service.close()


# -- 3. a queue store that is down --------------------------------------------------------


def test_a_queue_database_that_is_down_never_stops_the_program(caplog):
    pytest.importorskip("psycopg")
    store = SQLQueueStore("postgresql+psycopg://ynm@127.0.0.1:1/factory")
    mem = FakeMemory()
    q = Queue(mem, store, owner="w1")
    with caplog.at_level(logging.WARNING, logger="ynm.client"):
        assert q.remember(rec(1)) == "sent"
    assert mem.took == ["record 1"]
    assert any("cannot read the queue store" in r.getMessage() for r in caplog.records)
    mem.up = False
    with pytest.raises(StoreUnavailable, match="neither sent .down. nor queued: queue store "
                       "postgresql\\+psycopg://ynm@127.0.0.1:1/factory: "):
        q.remember(rec(2))
    for call in (q.pending, q.flush):
        with pytest.raises(StoreUnavailable, match="127.0.0.1:1/factory"):
            call()
    store.close()


# -- 4. stores in memory ------------------------------------------------------------------


@pytest.mark.parametrize("url", ["sqlite://", "sqlite:///:memory:",
                                 "sqlite+pysqlite:///:memory:",
                                 "sqlite:///file::memory:?uri=true",
                                 "sqlite:///file:q?mode=memory&uri=true"])
def test_a_store_in_memory_is_refused(url, cli_run):
    with pytest.raises(StoreUnusable, match="in-memory database: everything queued"):
        SQLQueueStore(url)
    result = cli_run("outbox", "status", "--store", url)
    assert result.exit_code == 2 and "in-memory database" in result.stderr


# -- 5. secrets ---------------------------------------------------------------------------

SECRET_FIELDS = {
    "content": {"content": f"deploy with {GITHUB_TOKEN}"},
    "summary": {"summary": f"token {GITHUB_TOKEN}"},
    "subject": {"subject": f"token:{GITHUB_TOKEN}"},
    "tags": {"tags": ["ci", GITHUB_TOKEN]},
    "data": {"data": {"env": {"GH": GITHUB_TOKEN}}},
    "dataSchema": {"data_schema": GITHUB_TOKEN},
    "source": {"source": f"https://github.com/o/r/actions?token={GITHUB_TOKEN}"},
}


@pytest.mark.parametrize("field", sorted(SECRET_FIELDS))
@pytest.mark.parametrize("up", [False, True])
def test_a_record_holding_a_secret_is_refused_at_once(tmp_path, cli_run, field, up):
    path = tmp_path / "q.sqlite"
    store = SQLQueueStore(path)
    kw = {"type": "episodic", "content": "step failed"} | SECRET_FIELDS[field]
    mem = FakeMemory() if up else None
    q = Queue(mem, store, owner="w1", target="user")
    assert q.remember(Record(**kw)) == "refused"
    if mem is not None:
        assert mem.took == []  # never sent either
    assert store.keys(QUEUE_PREFIX) == []
    [key] = store.keys(REFUSED_PREFIX)
    doc = json.loads(store.get(key)[0])
    assert doc["error"] == f"refused: {field} matches 1 secret detector: GitHub Token"
    store.close()
    assert GITHUB_TOKEN.encode() not in b"".join(p.read_bytes() for p in tmp_path.iterdir())
    for args in (["list"], ["list", "--json"], ["status"]):
        out = cli_run("outbox", *args, "--store", path)
        assert out.exit_code == 0 and GITHUB_TOKEN not in out.stdout
    line = cli_run("outbox", "list", "--store", path).stdout
    assert "  refused: field" not in line and "refused: refused:" not in line
    assert f"  refused: {field} matches 1 secret detector" in line


def test_a_secret_ynm_refuses_in_flight_leaves_no_text_behind(store):
    """ynm's own gate (a configured pattern the client cannot know) refuses a record: every
    text it had is withheld, tags and source included."""

    class Gate:
        target = "user"

        def remember(self, record):
            raise Rejected("refused: content matches 1 redaction pattern: acme-[0-9]+")

    record = Record(type="episodic", namespace=NS, content="acme-1", summary="acme-2",
                    subject="acme-3", tags=["acme-4"], data={"k": "acme-5"},
                    data_schema="acme-6", source="acme-7", valid_from="2026-12-01T08:00:00Z")
    for memory in (None, Gate()):
        q = Queue(memory, store, owner="w1", target="user")
        assert q.remember(record) == ("queued" if memory is None else "refused")
    Queue(Gate(), store, owner="w1", target="user").flush()
    for key in store.keys(REFUSED_PREFIX):
        text = store.get(key)[0]
        assert "acme-" not in text.replace("acme-[0-9]+", "")
        kept = json.loads(text)["record"]
        assert "tags" not in kept and kept["source"] == kept["content"] == WITHHELD
        assert (kept["type"], kept["namespace"]) == ("episodic", NS)


def test_the_sqlite_queue_is_private(tmp_path, ynm_home):
    store = SQLQueueStore(tmp_path / "q.sqlite")
    Queue(None, store, owner="w1").remember(rec(1))
    store.close()
    for name in ("q.sqlite", "q.sqlite-wal", "q.sqlite-shm"):
        path = tmp_path / name
        if path.exists():
            assert stat.S_IMODE(path.stat().st_mode) == 0o600, name
    default = SQLQueueStore()
    Queue(None, default, owner="w1").remember(rec(2))
    default.close()
    assert stat.S_IMODE((ynm_home / "queue.sqlite").stat().st_mode) == 0o600
    assert stat.S_IMODE(ynm_home.stat().st_mode) == 0o700


# -- 6. records for a repository that is gone ---------------------------------------------


def _content(doc: str) -> str:
    record = json.loads(doc)["record"]
    return (json.loads(record) if isinstance(record, str) else record)["content"]


def test_records_for_a_deleted_repository_can_be_dropped(tmp_path, cli_run, project, git):
    import shutil

    gone, live = tmp_path / "gone", tmp_path / "live"
    for repo in (gone, live):
        repo.mkdir()
        git(repo, "init", "-q")
    path = tmp_path / "q.sqlite"
    store = SQLQueueStore(path)
    Queue(None, store, owner="w1", target=f"repo:{gone}").remember(rec("gone 1"))
    Queue(None, store, owner="w1", target=f"repo:{gone}").remember(rec("gone 2"))
    Queue(None, store, owner="w1", target=f"repo:{live}").remember(rec("other"))
    # by what each holds: three Queue objects keep three clocks, so records queued in the
    # same millisecond do not sort in the order they were queued
    content = {key: _content(store.get(key)[0])
               for key in store.keys(QUEUE_PREFIX)}
    keys = sorted(content, key=lambda k: ["record gone 1", "record gone 2",
                                          "record other"].index(content[k]))
    store.close()
    result = cli_run("outbox", "drop", keys[0], "--store", path, "--yes")
    assert result.exit_code == 2 and f"it is queued (for repo:{gone})" in result.stderr
    shutil.rmtree(gone)
    lines = cli_run("outbox", "list", "--store", path).stdout.splitlines()
    assert f"  for repo:{gone} (gone)  " in lines[0]
    flushed = cli_run("outbox", "flush", "--store", path)
    assert flushed.exit_code == 1
    assert "2 meant for a repository that no longer exists (`ynm outbox drop --orphaned`" \
        in flushed.stderr and "1 meant for another store" in flushed.stderr
    result = cli_run("outbox", "drop", keys[0], "--store", path, "--yes", "--json")
    assert json.loads(result.stdout)["dropped"] == [keys[0]]
    result = cli_run("outbox", "drop", "--orphaned", "--store", path)
    assert result.exit_code == 2 and "irreversible" in result.stderr
    result = cli_run("outbox", "drop", "--orphaned", "--store", path, "--yes")
    assert result.stdout == f"dropped 1 record\n  {keys[1]}\n"
    result = cli_run("outbox", "drop", keys[2], "--store", path, "--yes")
    assert result.exit_code == 2  # its repository may come back: only with --queued
    result = cli_run("outbox", "drop", keys[2], "--queued", "--store", path, "--yes")
    assert result.exit_code == 0 and cli_run("outbox", "list", "--store", path).stdout == \
        "outbox is empty\n"
    for args in (["--queued", "--refused"], ["--orphaned", "--refused"], ["--queued"]):
        assert cli_run("outbox", "drop", *args, "--store", path, "--yes").exit_code == 2


# -- 7. the cap ---------------------------------------------------------------------------


def test_the_cap_applies_to_refused_records_too(store, caplog):
    mem = FakeMemory()
    mem.refuse = {f"record {i}" for i in range(6)}
    q = Queue(mem, store, owner="w1", cap=2)
    with caplog.at_level(logging.WARNING, logger="ynm.client"):
        for i in range(4):
            assert q.remember(rec(i)) == "refused"
    kept = [json.loads(store.get(k)[0])["record"]["content"] for k in store.keys(REFUSED_PREFIX)]
    assert kept == ["record 2", "record 3"]
    assert sum("refused records are over its cap of 2" in r.getMessage()
               for r in caplog.records) == 2
    # refused in flight by a flush: capped as well
    mem.up = False
    q.remember(rec(4))
    q.remember(rec(5))
    mem.up = True
    q.flush()
    kept = [json.loads(store.get(k)[0])["record"]["content"] for k in store.keys(REFUSED_PREFIX)]
    assert kept == ["record 4", "record 5"]


# -- 8. rough edges -----------------------------------------------------------------------


def test_a_fresh_machine_has_an_empty_outbox(tmp_path, cli_run, ynm_home, monkeypatch):
    assert not (ynm_home / "queue.sqlite").exists()
    result = cli_run("outbox", "status", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == {"store": f"sqlite:///{ynm_home / 'queue.sqlite'}",
                                         "pending": 0, "oldest": None, "refused": 0,
                                         "lastRefusal": None}
    assert cli_run("outbox", "list").stdout == "outbox is empty\n"
    assert not (ynm_home / "queue.sqlite").exists()  # looking created nothing
    # named explicitly, a missing store stays an error, and the message names how it was named
    missing = tmp_path / "none.sqlite"
    result = cli_run("outbox", "status", "--store", missing)
    assert result.exit_code == 2 and result.stderr.startswith("Error: invalid input: --store: ")
    monkeypatch.setenv("YNM_OUTBOX", str(missing))
    result = cli_run("outbox", "status")
    assert result.exit_code == 2
    assert result.stderr == f"Error: invalid input: $YNM_OUTBOX: no queue store at {missing}\n"
    (tmp_path / "adir").mkdir()
    monkeypatch.setenv("YNM_OUTBOX", str(tmp_path / "adir"))
    result = cli_run("outbox", "list")
    assert result.stderr.startswith("Error: invalid input: $YNM_OUTBOX: ")


def test_pending_can_count_this_target_only(store):
    Queue(None, store, owner="w1", target="repo:/a").remember(rec(1))
    Queue(None, store, owner="w1", target="repo:/b").remember(rec(2))
    Queue(None, store, owner="w1", target="repo:/b").remember(rec(3))
    b = Queue(None, store, owner="w1", target="repo:/b")
    assert b.pending()[0] == 3
    count, oldest = b.pending(this_target=True)
    first_b = json.loads(store.get(store.keys(QUEUE_PREFIX)[1])[0])["queued"]
    assert count == 2 and oldest.isoformat().startswith(first_b[:19])
    assert Queue(None, store, owner="w1", target="repo:/c").pending(this_target=True) == (0, None)


def test_endpoint_and_token_are_checked(cli_run, tmp_path):
    path = tmp_path / "q.sqlite"
    SQLQueueStore(path).create("memory/refused/01A", "{}")
    for args, problem in ((["--endpoint", "notaurl"], "invalid input: --endpoint: 'notaurl' "),
                          (["--endpoint", "ftp://h/mcp"], "is not an http(s) URL"),
                          (["--endpoint", "http:///mcp"], "is not an http(s) URL"),
                          (["--token", "t"], "--token needs --endpoint")):
        result = cli_run("outbox", "flush", "--store", path, *args)
        assert result.exit_code == 2 and problem in result.stderr, (args, result.stderr)
    with pytest.raises(ValueError, match="not an http"):
        YnmHTTP("notaurl")


def test_an_endpoint_has_one_target_however_it_is_spelled():
    targets = {YnmHTTP(e).target for e in ("https://memory.example.com/mcp",
                                           "https://memory.example.com/mcp/",
                                           "HTTPS://Memory.Example.com/mcp//")}
    assert targets == {"http:https://memory.example.com/mcp"}
    assert YnmHTTP("http://127.0.0.1:8080/").endpoint == "http://127.0.0.1:8080"


def test_stopped_says_why_remember_queued(store):
    mem = FakeMemory(up=False)
    q = Queue(mem, store, owner="w1")
    assert q.remember(rec(1)) == "queued" and q.stopped == "down"
    mem.up = True
    assert q.remember(rec(2)) == "sent" and q.stopped is None
    q = Queue(None, store, owner="w1")
    assert q.remember(rec(3)) == "queued" and q.stopped.startswith("no ynm to send to")
