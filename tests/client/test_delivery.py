"""End to end: the real ``ynm`` executable, real git repositories, ``ynm serve --http`` on
127.0.0.1, and worker subprocesses sharing one queue store (seed 003_b7c8dac142c7aed9.txt:
an outage loses nothing; two workers never send the same record; a dead worker's claim is
retaken after ClaimTTL)."""

from __future__ import annotations

import json
import os
import signal
import time
from datetime import timedelta
from pathlib import Path

import pytest

from tests.client.conftest import TOKEN, free_port, listed, serving, worker
from ynm.client import (
    QUEUE_PREFIX,
    Queue,
    Queued,
    Record,
    Rejected,
    SQLQueueStore,
    Unavailable,
    YnmCLI,
    YnmHTTP,
    detect,
)

NS = "factory/host/owner/repo"


def step(i: int) -> Record:
    return Record(type="episodic", namespace=NS, level="distributed", subject=f"step:{i}",
                  summary=f"Step {i:03d} passed", content=f"step {i:03d} outcome",
                  tags=["ci"], data_schema="ynf.step.v1", data={"i": i}, source="build")


def _assert_delivered_once_in_order(project: Path, n: int) -> None:
    got = [r for r in listed(project) if r.get("namespace") == NS]
    assert [r["content"] for r in got] == [f"step {i:03d} outcome" for i in range(n)]
    assert got[0]["data"] == {"i": 0} and got[0]["dataSchema"] == "ynf.step.v1"
    assert got[0]["provenance"]["source"] == "build"


def _path_without_ynm() -> str:
    keep = [d for d in os.environ["PATH"].split(os.pathsep)
            if d and not os.path.exists(os.path.join(d, "ynm"))]
    return os.pathsep.join(keep)


def test_cli_outage_loses_nothing_and_one_flush_delivers_in_order(project, tmp_path,
                                                                  monkeypatch):
    n = 12  # each delivery is a `ynm remember` process (~1 s here); order shows at 12 as at 50
    store = SQLQueueStore(tmp_path / "queue.sqlite")
    path = os.environ["PATH"]
    monkeypatch.setenv("PATH", _path_without_ynm())
    assert detect(project) == (None, "ynm is not on PATH")
    queue = Queue(YnmCLI(cwd=project), store, owner="harness")
    for i in range(n):
        assert queue.remember(step(i)) == "queued"
    count, oldest = queue.pending()
    assert count == n and oldest is not None

    monkeypatch.setenv("PATH", path)
    memory, _ = detect(project)
    assert memory is not None
    queue = Queue(memory, store, owner="harness")
    assert queue.flush() == 0
    assert queue.pending() == (0, None) and store.keys("") == []
    _assert_delivered_once_in_order(project, n)


def test_http_outage_loses_nothing_and_one_flush_delivers_in_order(project, tmp_path):
    n = 50
    port = free_port()
    store = SQLQueueStore(f"sqlite:///{tmp_path / 'queue.sqlite'}")
    with serving(project, port) as endpoint:
        queue = Queue(YnmHTTP(endpoint, TOKEN), store, owner="worker-1")
        first = Record(type="episodic", namespace="factory/up", level="distributed",
                       content="sent while the server was up")
        assert queue.remember(first) == "sent"
    # the server is stopped: nothing is refused, everything waits
    started = time.monotonic()
    for i in range(n):
        assert queue.remember(step(i)) == "queued"
    assert time.monotonic() - started < 60
    assert queue.pending()[0] == n
    with serving(project, port):
        assert queue.flush() == 0
    assert store.keys("") == []
    _assert_delivered_once_in_order(project, n)
    assert [r["content"] for r in listed(project) if r["namespace"] == "factory/up"] == [
        "sent while the server was up"]


def test_http_sorts_failures_into_later_and_never(project):
    port = free_port()
    with serving(project, port) as endpoint:
        ok = YnmHTTP(endpoint, TOKEN).remember(step(0))
        assert ok["mount"] == "project" and len(ok["memoryId"]) == 26
        with pytest.raises(Unavailable, match=f"^{endpoint}: HTTP 401: "):
            YnmHTTP(endpoint, "wrong-token").remember(step(1))
        secret = Record(type="semantic", level="distributed",
                        content="deploy key AKIAIOSFODNN7EXAMPLE")
        with pytest.raises(Rejected, match="^refused: content matches 1 secret detector"):
            YnmHTTP(endpoint, TOKEN).remember(secret)
        with pytest.raises(Unavailable, match="no answer within"):
            YnmHTTP(endpoint, TOKEN, timeout=0.001).remember(step(2))
    with pytest.raises(Unavailable, match="127.0.0.1"):
        YnmHTTP(endpoint, TOKEN, timeout=10).remember(step(3))


def test_http_transport_is_injectable(project, monkeypatch):
    pytest.importorskip("mcp")
    from ynm.server.app import MemoryService, build_server

    service = MemoryService(project)
    service.open()
    try:
        memory = YnmHTTP("in-process", transport=lambda: build_server(service))
        out = memory.remember(step(7))
        bad = Record(type="semantic", level="distributed", content="AKIAIOSFODNN7EXAMPLE")
        with pytest.raises(Rejected):
            memory.remember(bad)
    finally:
        service.close()
    [got] = [r for r in listed(project) if r["id"] == out["memoryId"]]
    assert got["content"] == "step 007 outcome"


def test_http_refuses_for_good_what_no_mount_of_the_server_can_take(project):
    """A server without a personal store (``--no-personal``, a hosted one): a personal record,
    or one without a level, can never be written there; the tool errors say so and the
    client takes them as refusals, not outages."""
    pytest.importorskip("mcp")
    from ynm.server.app import MemoryService, build_server

    service = MemoryService(project, personal=False)
    service.open()
    try:
        memory = YnmHTTP("in-process", transport=lambda: build_server(service))
        with pytest.raises(Rejected, match="^no personal mount available: "):
            memory.remember(Record(type="episodic", level="personal", content="mine"))
        with pytest.raises(Rejected, match="^nothing stored: this store has no personal "):
            memory.remember(Record(type="episodic", content="no level"))
        out = memory.remember(Record(type="episodic", level="distributed", content="shared",
                                     valid_from="2026-11-30T10:00:00Z"))
    finally:
        service.close()
    [got] = [r for r in listed(project) if r["id"] == out["memoryId"]]
    assert got["validFrom"] == "2026-11-30T10:00:00.000Z"  # the client's time goes through


def test_http_from_async_code_still_sends(project):
    import asyncio

    port = free_port()
    with serving(project, port) as endpoint:
        async def harness() -> dict:
            return YnmHTTP(endpoint, TOKEN).remember(step(8))

        out = asyncio.run(harness())
    assert [r["content"] for r in listed(project) if r["id"] == out["memoryId"]] == [
        "step 008 outcome"]


def test_cli_exit_2_is_rejected_other_failures_unavailable(project, tmp_path):
    secret = Record(type="semantic", level="distributed", content="AKIAIOSFODNN7EXAMPLE")
    with pytest.raises(Rejected, match="^refused: content matches 1 secret detector"):
        YnmCLI(cwd=project).remember(secret)
    failing = tmp_path / "ynm-fails"
    failing.write_text("#!/bin/sh\necho 'Error: store is locked' >&2\nexit 1\n")
    failing.chmod(0o755)
    with pytest.raises(Unavailable, match="exited 1: store is locked"):
        YnmCLI(bin=str(failing), cwd=project).remember(step(1))
    with pytest.raises(Unavailable, match="cannot run"):
        YnmCLI(bin=str(tmp_path / "missing"), cwd=project).remember(step(1))
    slow = tmp_path / "ynm-slow"
    slow.write_text("#!/bin/sh\nsleep 5\n")
    slow.chmod(0o755)
    with pytest.raises(Unavailable, match="timed out"):
        YnmCLI(bin=str(slow), cwd=project, timeout=0.5).remember(step(1))


def _concurrent_flush(project: Path, url: str, tmp_path: Path) -> None:
    n, workers = 200, 4
    store = SQLQueueStore(url)
    q = Queue(None, store, owner="producer")
    for i in range(n):
        q.remember(step(i))
    assert q.pending()[0] == n
    go = tmp_path / "go"
    procs = [worker("flush", url, f"worker-{w}", str(project), str(go), cwd=project)
             for w in range(workers)]
    time.sleep(0.5)
    go.touch()
    sent = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err
        sent.append(json.loads(out.strip().splitlines()[-1])["sent"])
    assert sum(sent) == n
    assert sum(1 for s in sent if s) >= 2, sent  # the work was shared
    assert store.keys("") == []
    got = [r["content"] for r in listed(project) if r.get("namespace") == NS]
    assert sorted(got) == [f"step {i:03d} outcome" for i in range(n)]  # each exactly once
    store.close()


def test_four_workers_share_one_sqlite_store(project, tmp_path):
    _concurrent_flush(project, f"sqlite:///{tmp_path / 'shared.sqlite'}", tmp_path)


def test_four_workers_share_one_postgresql_database(project, tmp_path, postgres_url):
    _concurrent_flush(project, postgres_url, tmp_path)


def test_sigkilled_worker_leaves_its_claim_and_another_retakes_it(project, tmp_path):
    url = f"sqlite:///{tmp_path / 'queue.sqlite'}"
    store = SQLQueueStore(url)
    Queue(None, store, owner="producer").remember(step(0))
    marker = tmp_path / "claimed"
    doomed = worker("hang", url, "doomed", str(marker), cwd=project)
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert doomed.poll() is None, doomed.stderr.read()
        assert time.monotonic() < deadline, "the worker never claimed the record"
        time.sleep(0.02)
    os.kill(doomed.pid, signal.SIGKILL)
    doomed.wait(timeout=10)
    assert doomed.returncode == -signal.SIGKILL

    [key] = store.keys(QUEUE_PREFIX)
    left = Queued.from_json(store.get(key)[0])
    assert (left.claimed_by, left.attempts) == ("doomed", 1) and left.claimed_at is not None

    memory, _ = detect(project)
    rescuer = Queue(memory, store, owner="rescuer", claim_ttl=timedelta(seconds=2))
    assert rescuer.flush() == 1 and rescuer.sent == 0  # the claim still holds
    time.sleep(max(0.0, 2.1 - (time.time() - left.claimed_at.timestamp())))
    assert rescuer.flush() == 0 and rescuer.sent == 1
    got = [r for r in listed(project) if r.get("namespace") == NS]
    assert [r["content"] for r in got] == ["step 000 outcome"]
    assert store.keys("") == []


def test_detected_memory_writes_where_ynm_would(project):
    memory, _ = detect(project)
    out = memory.remember(step(5))
    assert out["mount"] == "project"
    assert [r["id"] for r in listed(project) if r.get("namespace") == NS] == [out["memoryId"]]
