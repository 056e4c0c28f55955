"""The hosted scheduler of ``ynm serve --http``: ``--dream-every`` / ``--sync-every`` and their
variables, single flight, failures, shutdown. Real servers on 127.0.0.1 in subprocesses.
Reference: server.md §2.1, §2.2 (``/health``), §2.9; algorithms.md §4.1."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from itertools import pairwise
from pathlib import Path

import pytest

from tests.server.conftest import run, text
from tests.server.test_transports import _client, _get
from tests.support.serve import free_port
from ynm.errors import InvalidInput
from ynm.server.scheduler import (
    Schedule,
    dream_summary,
    parse_interval,
    schedule_settings,
    sync_summary,
)

TRACED = Path(__file__).with_name("scheduled_serve.py")

# -- the interval grammar (server.md §2.1) ---------------------------------------------------


@pytest.mark.parametrize(("text", "ms"), [
    ("500ms", 500), ("30s", 30_000), ("15m", 900_000), ("2h", 7_200_000),
    ("1d", 86_400_000), ("250", 250), ("1", 1), (" 5s ", 5000), ("0010s", 10_000),
    ("365d", 365 * 86_400_000),
])
def test_parse_interval(text, ms):
    assert parse_interval(text) == ms


@pytest.mark.parametrize("text", [
    "", " ", "s", "ms", "0", "0s", "0ms", "-5s", "+5s", "1.5s", "5 s", "5S", "5MS", "5sec",
    "5min", "1w", "1y", "5s5", "1e3", "0x10", "abc", "٣s", "5s\n6", "366d",
])
def test_bad_intervals_are_refused(text):
    with pytest.raises(ValueError, match=r"^bad interval "):
        parse_interval(text)


def test_flag_wins_over_variable_and_empty_variable_is_unset():
    env = {"YNM_DREAM_EVERY": "not an interval", "YNM_SYNC_EVERY": "  "}
    s = schedule_settings(dream_every="2s", sync_every=None, http=True, env=env)
    assert (s.dream_ms, s.sync_ms) == (2000, None)
    s = schedule_settings(dream_every=None, sync_every=None, http=True,
                          env={"YNM_DREAM_EVERY": "15m", "YNM_SYNC_EVERY": "5000"})
    assert (s.dream_ms, s.sync_ms) == (900_000, 5000)
    assert not schedule_settings(dream_every=None, sync_every=None, http=True, env={})
    # the variables are for the HTTP server only; stdio ignores them
    assert not schedule_settings(dream_every=None, sync_every=None, http=False,
                                 env={"YNM_DREAM_EVERY": "1s"})
    with pytest.raises(InvalidInput, match="YNM_DREAM_EVERY: bad interval 'not an interval'"):
        schedule_settings(dream_every=None, sync_every=None, http=True, env=env)
    with pytest.raises(InvalidInput, match="--sync-every needs --http"):
        schedule_settings(dream_every=None, sync_every="5m", http=False, env={})


def test_summaries_count_what_ran():
    report = {"dryRun": False, "passes": {
        "expire": {"candidates": 2, "changed": ["a"]},
        "promote": {"candidates": 0, "changed": [], "available": False, "reason": "x"},
        "dedupe": {"candidates": 4, "changed": []}},
        "full": {"passes": {"dedupe": {"flagged": ["b", "c"]}}}}
    line, passes = dream_summary(report)
    assert line == "expire 1/2 changed, dedupe 0/4 changed, 2 flagged"
    assert passes == {"expire": {"candidates": 2, "changed": 1},
                      "dedupe": {"candidates": 4, "changed": 0, "flagged": 2}}
    assert dream_summary({"passes": {}})[0] == "no passes ran"
    line, conflicts = sync_summary({
        "project": {"fetched": {"shards": [], "records": 3}, "pushed": {"shards": ["r"],
                    "records": 2}, "conflicts": ["r: boom"]},
        "team": {"skipped": "no remote"}})
    assert line == "project fetched 3 records, pushed 2 records; team skipped (no remote)"
    assert conflicts == ["project: r: boom"]


# -- refused at start (exit 2, one clear line) ------------------------------------------------


@pytest.mark.parametrize(("args", "env", "message"), [
    (("--http", "--dream-every", "5x"), {},
     ("Error: invalid input: --dream-every: bad interval '5x' (a whole number and a unit ms, "
      "s, m, h or d, e.g. 30s, 15m, 2h; a bare number is milliseconds)\n")),
    (("--http",), {"YNM_SYNC_EVERY": "0"},
     "Error: invalid input: YNM_SYNC_EVERY: bad interval '0' (must be more than 0)\n"),
    (("--dream-every", "5s"), {},
     ("Error: invalid input: --dream-every needs --http: the scheduler runs in the HTTP "
      "server (a stdio server is one process per client)\n")),
])
def test_bad_schedule_stops_start_up(project, args, env, message):
    result = subprocess.run(
        [sys.executable, "-m", "ynm", "serve", "--port", str(free_port()), "--cwd",
         str(project), *args], env={**os.environ, **env}, capture_output=True, text=True,
        timeout=30, stdin=subprocess.DEVNULL, check=False)
    assert result.returncode == 2
    assert result.stderr == message
    assert result.stdout == ""


# -- real servers ----------------------------------------------------------------------------


@dataclass
class Served:
    base: str
    proc: subprocess.Popen
    trace: Path
    stderr: str = ""

    def health(self) -> dict:
        return json.loads(_get(self.base + "/health")[2])

    def scheduler(self) -> dict:
        return self.health()["scheduler"]

    def runs(self) -> list[tuple[str, float, float]]:
        if not self.trace.exists():
            return []
        return [tuple(json.loads(line)) for line in self.trace.read_text().splitlines()]

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 20) -> int:
        self.proc.send_signal(sig)
        self.proc.wait(timeout=timeout)
        self.stderr = _drain(self.proc)
        return self.proc.returncode


@contextmanager
def serving(project: Path, *args: str, env: dict[str, str] | None = None) -> Iterator[Served]:
    """``ynm serve --http --host 127.0.0.1 --port <free> <args>`` with consolidate and sync
    traced (``scheduled_serve.py``); stops it on exit (SIGTERM) and keeps its stderr."""
    port = free_port()
    trace = project.parent / f"trace-{port}.jsonl"
    proc = subprocess.Popen(
        [sys.executable, str(TRACED), "serve", "--http", "--host", "127.0.0.1", "--port",
         str(port), "--cwd", str(project), *args],
        env={**os.environ, "SCHED_TRACE": str(trace), **(env or {})},
        # stderr to a file: a pipe read only at the end would fill up with request log lines
        stdout=subprocess.DEVNULL, stderr=(err := tempfile.TemporaryFile()),
        stdin=subprocess.DEVNULL)
    proc.stderr_file = err  # type: ignore[attr-defined]
    served = Served(f"http://127.0.0.1:{port}", proc, trace)
    try:
        wait_for(lambda: _up(served), 30, lambda: f"server did not start: {_drain(proc)}")
        yield served
    finally:
        if proc.poll() is None:
            served.stop()


def _up(served: Served) -> bool:
    if served.proc.poll() is not None:
        raise AssertionError(f"server stopped: {_drain(served.proc)}")
    try:
        return _get(served.base + "/health")[0] == 200
    except OSError:
        return False


def _drain(proc: subprocess.Popen) -> str:
    """The stderr of ``proc`` so far (killed first if it still runs)."""
    if proc.poll() is None:
        proc.kill()
        proc.wait()
    err = proc.stderr_file  # type: ignore[attr-defined]
    err.seek(0)
    return err.read().decode()


def wait_for(check: Callable[[], object], timeout: float, why: Callable[[], str] | str = ""):
    """Poll ``check()`` every 50 ms until it is truthy; returns its value."""
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError(why() if callable(why) else why or "timed out")
        time.sleep(0.05)


def _call(base: str, tool: str, args: dict) -> dict:
    async def go():
        client, http = _client(base, token=None)
        async with http, client as c:
            return await c.call_tool(tool, args)

    result = run(go, timeout=30)
    assert not result.is_error, text(result)
    return result.structured_content["data"]


def _tombstoned(project: Path, memory_id: str) -> bool:
    from ynm.service.ynm import Ynm

    with Ynm.open(project) as ynm:
        return bool(ynm.find(memory_id)[1]["tombstoned"])


def test_dream_every_expires_working_memory_in_separate_runs_while_serving(project):
    """Two working memories with a one-second ttl, written one after the other: each is
    tombstoned (reason ``expired``) by its own scheduled run, while tool calls are answered."""
    with serving(project, "--dream-every", "2s") as srv:
        health = srv.health()
        assert health["scheduler"]["dreamEvery"] == 2000
        assert health["scheduler"]["syncEvery"] is None
        ids, runs_at_expiry = [], []
        for n in range(2):
            start_runs = srv.scheduler()["dreamRuns"]
            wrote = _call(srv.base, "memory_remember", {
                "type": "working", "namespace": "session/sched", "ttl": "PT1S",
                "content": f"scratch note {n} for the scheduler"})
            ids.append(wrote["memoryId"])
            # the server keeps answering while the timer runs
            hits = _call(srv.base, "memory_recall", {"text": f"scratch note {n}"})
            assert hits[0]["memoryId"] == wrote["memoryId"]
            wait_for(lambda: _tombstoned(project, ids[-1]), 15,
                     f"memory {n} was not expired by a scheduled dream")
            sched = wait_for(lambda before=start_runs: (s := srv.scheduler())["dreamRuns"] > before
                             and (s["lastDream"] or {}).get("expire", {}).get("changed") and s,
                             5)
            runs_at_expiry.append(sched["dreamRuns"])
        assert runs_at_expiry[1] > runs_at_expiry[0]
        assert srv.scheduler()["lastError"] is None
        assert srv.stop() == 0
    from ynm.service.ynm import Ynm

    with Ynm.open(project) as ynm:
        for memory_id in ids:
            records = ynm.history(memory_id)
            assert records[-1]["op"] == "tombstone"
            assert records[-1]["changes"] == {"reason": "expired"}
    log = srv.stderr.splitlines()
    assert "[ynm-mcp] scheduler: dream every 2s" in log
    # one line per run, every pass that ran; the expire pass comes first
    assert sum(1 for line in log if line.startswith("[ynm-mcp] dream: expire 1/1 changed")) == 2
    assert "[ynm-mcp] scheduler: stopped" in log and log[-1] == "[ynm-mcp] stopped"


def test_sync_every_pushes_and_variables_are_honoured(project, git, tmp_path):
    """``YNM_SYNC_EVERY`` (environment) and ``YNM_DREAM_EVERY`` (the repository's ``.env``)
    start the timers; the scheduled sync pushes a distributed memory to the remote."""
    from ynm.service.ynm import Ynm

    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(origin))
    git(project, "remote", "add", "origin", str(origin))
    with Ynm.open(project) as ynm:
        from ynm.model.inputs import RememberInput

        ynm.remember(RememberInput(type="semantic", level="distributed",
                                   content="the team deploys on Tuesdays"))
    (project / ".env").write_text("YNM_DREAM_EVERY=400ms\n")
    with serving(project, env={"YNM_SYNC_EVERY": "300"}) as srv:
        sched = srv.scheduler()
        assert (sched["dreamEvery"], sched["syncEvery"]) == (400, 300)
        wait_for(lambda: git(origin, "for-each-ref", "refs/notes/ynm/"), 15,
                 "the scheduled sync pushed nothing")
        wait_for(lambda: (s := srv.scheduler())["syncRuns"] >= 2 and s["dreamRuns"] >= 2, 15)
        assert srv.scheduler()["lastError"] is None
        assert srv.stop() == 0
    assert "[ynm-mcp] scheduler: sync every 300ms" in srv.stderr
    assert "[ynm-mcp] sync: project pushed 1 record" in srv.stderr


def _overlaps(runs: list[tuple[str, float, float]]) -> list[tuple]:
    runs = sorted(runs, key=lambda r: r[1])
    return [(a, b) for a, b in pairwise(runs) if b[1] < a[2]]


def test_runs_never_overlap_and_late_ticks_are_skipped(project):
    """A dream that takes 0.8 s on a 200 ms timer and a sync that takes 0.3 s on a 150 ms
    timer: no two runs ever overlap, not of one job and not of the two jobs, and the ticks
    that came while a run was going are skipped (counted, logged once per run)."""
    with serving(project, "--dream-every", "200ms", "--sync-every", "150ms",
                 env={"SCHED_DREAM_DELAY_S": "0.8", "SCHED_SYNC_DELAY_S": "0.3"}) as srv:
        wait_for(lambda: len([r for r in srv.runs() if r[0] == "dream"]) >= 3, 30,
                 "fewer than three dreams ran")
        # a tool call waits its turn and is answered
        assert _call(srv.base, "memory_status", {})["mounts"]
        sched = srv.scheduler()
        assert srv.stop() == 0
    runs = srv.runs()
    assert {r[0] for r in runs} == {"dream", "sync"}
    assert _overlaps(runs) == []
    assert sched["dreamSkipped"] > 0 and sched["syncSkipped"] > 0
    log = srv.stderr.splitlines()
    skips = log.count("[ynm-mcp] dream: tick skipped, the previous run is still going")
    assert 0 < skips <= len([r for r in runs if r[0] == "dream"])


def test_failed_run_is_one_line_and_retried_at_the_next_tick(project):
    with serving(project, "--dream-every", "300ms",
                 env={"SCHED_DREAM_FAIL_FIRST": "1"}) as srv:
        sched = wait_for(lambda: (s := srv.scheduler())["dreamRuns"] >= 1 and s, 15)
        assert sched["lastError"] == "dream failed: RuntimeError: boom"
        assert sched["lastErrorAt"] < sched["lastDreamAt"]
        assert srv.stop() == 0
    log = srv.stderr.splitlines()
    assert log.count("[ynm-mcp] dream failed: RuntimeError: boom") == 1
    assert "Traceback" not in srv.stderr
    ran = [i for i, line in enumerate(log) if line.startswith("[ynm-mcp] dream: expire 0/0")]
    assert ran and log.index("[ynm-mcp] dream failed: RuntimeError: boom") < ran[0]


def test_failed_run_shows_its_traceback_with_ynm_debug(project):
    with serving(project, "--dream-every", "300ms",
                 env={"SCHED_DREAM_FAIL_FIRST": "1", "YNM_DEBUG": "1"}) as srv:
        wait_for(lambda: srv.scheduler()["dreamRuns"] >= 1, 15)
        assert srv.stop() == 0
    assert "[ynm-mcp] dream failed: RuntimeError: boom\nTraceback" in srv.stderr
    assert "RuntimeError: boom" in srv.stderr.split("Traceback", 1)[1]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_stopping_waits_for_the_running_dream(project, sig):
    """SIGTERM or SIGINT in the middle of a 1.5 s dream: no new run starts, the running one
    finishes, the store closes, exit 0."""
    with serving(project, "--dream-every", "100ms",
                 env={"SCHED_DREAM_DELAY_S": "1.5"}) as srv:
        wait_for(lambda: srv.scheduler()["running"] == ["dream"], 15)
        asked = time.monotonic()
        assert srv.stop(sig) == 0
    runs = srv.runs()
    assert len(runs) == 1 and runs[0][2] >= asked  # it ended after the signal, not cut
    log = srv.stderr.splitlines()
    tail = log[log.index("[ynm-mcp] scheduler: waiting for the running dream to finish"):]
    assert len(tail) == 4 and tail[1].startswith("[ynm-mcp] dream: expire 0/0 changed")
    assert tail[2:] == ["[ynm-mcp] scheduler: stopped", "[ynm-mcp] stopped"]


def test_no_schedule_by_default(project):
    with serving(project) as srv:
        assert srv.health()["scheduler"] is None
        time.sleep(0.3)
        assert srv.stop() == 0
    assert "scheduler" not in srv.stderr and srv.runs() == []


def test_schedule_is_truthy_only_with_a_job():
    assert not Schedule() and Schedule(dream_ms=1) and Schedule(sync_ms=1)
