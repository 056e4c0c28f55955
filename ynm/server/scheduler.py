"""The hosted scheduler of ``ynm serve --http``: a consolidation (dream) every ``--dream-every``
and a sync every ``--sync-every`` (reference/server.md §2.1, §2.9; reference/algorithms.md
§4.1).

Rules:

- Intervals: a whole number of ``ms``, ``s``, ``m``, ``h`` or ``d``; a bare number is
  milliseconds (``500ms``, ``30s``, ``15m``, ``2h``, ``1d``, ``250``). Anything else, zero
  included, is refused (:func:`parse_interval`). The flag wins over its variable
  (``YNM_DREAM_EVERY``, ``YNM_SYNC_EVERY``); an empty variable counts as unset.
- Ticks come at a fixed rate from start, the first one interval after the server starts (as
  ``setInterval``). A dream runs every pass, not a dry run (``Ynm.consolidate()``); a sync runs
  ``Ynm.sync()`` (every replicating distributed mount). Both write as the server's own actor.
- Single flight: a tick that comes while the previous run of the same job is still going is
  skipped (counted in ``/health``; logged once per run). Dream and sync never run at the same
  time either: both go through :meth:`MemoryService.call` as writes, which takes the service's
  write lock and runs on its one worker thread (the same queue as tool writes). The store lock
  (:mod:`ynm.store.lock`) would not be enough: it orders each append and a sync's merge, but a
  dream is many appends, and the ``Ynm`` object and its SQLite connections belong to one
  thread.
- A failed run is one stderr line (``[ynm-mcp] dream failed: <message>``; the traceback too
  with ``YNM_DEBUG``), is kept in ``/health`` as ``lastError`` and the job simply runs again at
  its next tick. A sync that reports conflicts counts as failed.
- Stopping (SIGINT/SIGTERM, via the ASGI lifespan of :func:`ynm.server.http.build_http_app`):
  no tick starts a run any more, a run in progress is waited for (its git writes are never cut
  short), then the server closes.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ynm.errors import InvalidInput, YnmError
from ynm.model.words import counted

if TYPE_CHECKING:
    from ynm.server.app import MemoryService
    from ynm.service.ynm import Ynm

__all__ = ["JOBS", "Schedule", "Scheduler", "parse_interval", "schedule_settings"]

INTERVAL_RE = re.compile(r"^([0-9]+)(ms|s|m|h|d)?$")
UNIT_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
# asyncio.sleep (and threading waits) overflow past this; a year is already far beyond any
# sensible timer, so longer intervals are refused as mistakes.
MAX_INTERVAL_MS = 365 * UNIT_MS["d"]
# job -> (flag, environment variable)
JOBS = {"dream": ("--dream-every", "YNM_DREAM_EVERY"), "sync": ("--sync-every", "YNM_SYNC_EVERY")}


def parse_interval(text: str) -> int:
    """The length of an interval in milliseconds.

    Grammar: ``<digits>[ms|s|m|h|d]`` (ASCII digits, lowercase unit, no sign, no fraction, no
    space inside; surrounding space is ignored); a bare number is milliseconds. Source:
    reference/server.md §2.1 ("bad interval").

    Raises:
        ValueError: ``bad interval '<text>' (...)`` for anything else, for zero, and for more
            than 365 days.
    """
    value = text.strip()
    m = INTERVAL_RE.match(value) if value.isascii() else None
    if m is None:
        raise ValueError(f"bad interval {text!r} (a whole number and a unit ms, s, m, h or d, "
                         "e.g. 30s, 15m, 2h; a bare number is milliseconds)")
    ms = int(m.group(1)) * UNIT_MS[m.group(2) or "ms"]
    if ms <= 0:
        raise ValueError(f"bad interval {text!r} (must be more than 0)")
    if ms > MAX_INTERVAL_MS:
        raise ValueError(f"bad interval {text!r} (at most 365d)")
    return ms


@dataclass
class Schedule:
    """How often each job runs, in milliseconds (None: the job is off).

    Attributes:
        dream_ms: the consolidation interval.
        sync_ms: the sync interval.
    """

    dream_ms: int | None = None
    sync_ms: int | None = None

    def __bool__(self) -> bool:
        return self.dream_ms is not None or self.sync_ms is not None


def schedule_settings(*, dream_every: str | None, sync_every: str | None, http: bool,
                      env: Mapping[str, str]) -> Schedule:
    """Decide the schedule from the flags, else ``YNM_DREAM_EVERY`` / ``YNM_SYNC_EVERY``.

    The variables apply only with ``--http`` (a stdio server is one process per client, so a
    timer there would run once per open client); a flag without ``--http`` is refused.

    Raises:
        InvalidInput: ``--dream-every: bad interval ...`` (or ``YNM_SYNC_EVERY: ...``, naming
            where the value came from); ``--dream-every needs --http ...``.
    """
    given = {"dream": dream_every, "sync": sync_every}
    out: dict[str, int | None] = {}
    for job, (flag, var) in JOBS.items():
        if given[job] is not None and not http:
            raise InvalidInput(f"{flag} needs --http: the scheduler runs in the HTTP server "
                               "(a stdio server is one process per client)")
        text, source = given[job], flag
        if text is None:
            text, source = (env.get(var) or "").strip() or None, var
        if text is None or not http:
            out[job] = None
            continue
        try:
            out[job] = parse_interval(text)
        except ValueError as err:
            raise InvalidInput(f"{source}: {err}") from None
    return Schedule(dream_ms=out["dream"], sync_ms=out["sync"])


def _now_iso() -> str:
    from ynm.model.ids import iso_ms

    return iso_ms(int(time.time() * 1000))


def dream_summary(report: Mapping[str, Any]) -> tuple[str, dict[str, Any]]:
    """The log line and the ``lastDream`` of a consolidation report (``Ynm.consolidate``,
    reference/algorithms.md §4.14): per pass that ran, ``<pass> <changed>/<candidates>
    changed`` (plus ``, <n> flagged`` when the engine's full report flags some), joined by
    ``, ``; passes reported as not available are left out. ``lastDream`` is ``{<pass>:
    {"candidates", "changed", "flagged"?}}`` with counts."""
    full = (report.get("full") or {}).get("passes") or {}
    parts: list[str] = []
    passes: dict[str, Any] = {}
    for name, p in (report.get("passes") or {}).items():
        if p.get("available") is False:
            continue
        counts: dict[str, Any] = {"candidates": p.get("candidates", 0),
                                  "changed": len(p.get("changed") or [])}
        part = f"{name} {counts['changed']}/{counts['candidates']} changed"
        flagged = len((full.get(name) or {}).get("flagged") or [])
        if flagged:
            counts["flagged"] = flagged
            part += f", {flagged} flagged"
        passes[name] = counts
        parts.append(part)
    return ", ".join(parts) or "no passes ran", passes


def sync_summary(result: Mapping[str, Any]) -> tuple[str, list[str]]:
    """The log line of a sync result (``Ynm.sync``: ``{mount id: SyncResult JSON}``) and its
    conflicts: per mount ``<mount> skipped (<why>)``, ``<mount> up to date`` when no shard
    moved, else what moved (``fetched <n> records``, ``pushed <n> records``, each only when
    its side moved; ``no new record`` for shards that moved without one: a merge of records
    both sides had, a purge); ``no distributed mount`` when there is none. Counts agree with
    their nouns (``1 record``)."""
    parts, conflicts = [], []
    for mount, r in result.items():
        if r.get("skipped"):
            parts.append(f"{mount} skipped ({r['skipped']})")
            continue
        moved = [f"{verb} {counted(side['records'], 'record')}"
                 for verb, side in (("fetched", r["fetched"]), ("pushed", r["pushed"]))
                 if side["records"]]
        if not moved and (r["fetched"]["shards"] or r["pushed"]["shards"]):
            moved = ["no new record (shards moved: merges or purges)"]
        parts.append(f"{mount} {', '.join(moved) or 'up to date'}")
        conflicts += [f"{mount}: {c}" for c in r.get("conflicts") or []]
    return "; ".join(parts) or "no distributed mount", conflicts


@dataclass
class _Job:
    name: str
    every_ms: int
    run: Callable[[Ynm], Any]
    runs: int = 0
    skipped: int = 0
    last_at: str | None = None
    task: asyncio.Task[None] | None = None
    skip_logged: bool = False
    ticker: asyncio.Task[None] | None = None


class Scheduler:
    """The timers of one server process, run on its event loop.

    Args:
        service: the process's memory service; every run is one write call on it.
        schedule: the intervals (a job whose interval is None never runs).
        log: where a line goes (default: the server's stderr log).

    ``/health`` shows :meth:`health`. Use :meth:`start` once the event loop runs and
    :meth:`stop` before the service closes.
    """

    def __init__(self, service: MemoryService, schedule: Schedule,
                 log: Callable[[str], None] | None = None) -> None:
        from ynm.server.app import log as server_log

        self.service = service
        self.schedule = schedule
        self.log = log or server_log
        self.last_error: str | None = None
        self.last_error_at: str | None = None
        self.last_dream: dict[str, Any] | None = None
        self._stopping = False
        self.jobs: dict[str, _Job] = {}
        if schedule.dream_ms is not None:
            self.jobs["dream"] = _Job("dream", schedule.dream_ms, self._dream)
        if schedule.sync_ms is not None:
            self.jobs["sync"] = _Job("sync", schedule.sync_ms, self._sync)

    # -- the two jobs (run on the service's worker thread) ---------------------------------

    def _dream(self, ynm: Ynm) -> str:
        line, passes = dream_summary(ynm.consolidate())
        self.last_dream = passes
        return line

    @staticmethod
    def _sync(ynm: Ynm) -> str:
        line, conflicts = sync_summary(ynm.sync())
        if conflicts:
            raise YnmError(f"{line}; conflicts: {'; '.join(conflicts)}")
        return line

    # -- lifecycle -------------------------------------------------------------------------

    def start(self) -> None:
        """Start one timer per job on the running event loop and log the schedule."""
        for job in self.jobs.values():
            job.ticker = asyncio.get_running_loop().create_task(self._tick(job))
            self.log(f"scheduler: {job.name} every {_shown(job.every_ms)}")

    async def stop(self) -> None:
        """Stop the timers, then wait for runs in progress to finish (never cut short)."""
        self._stopping = True
        for job in self.jobs.values():
            if job.ticker is not None:
                job.ticker.cancel()
        for job in self.jobs.values():
            if job.ticker is not None:
                try:
                    await job.ticker
                except asyncio.CancelledError:
                    pass
            if job.task is not None and not job.task.done():
                self.log(f"scheduler: waiting for the running {job.name} to finish")
                await asyncio.shield(job.task)
        if self.jobs:
            self.log("scheduler: stopped")

    async def _tick(self, job: _Job) -> None:
        loop = asyncio.get_running_loop()
        every = job.every_ms / 1000
        due = loop.time() + every
        while not self._stopping:
            await asyncio.sleep(max(0.0, due - loop.time()))
            due += every
            if due < loop.time():  # the loop was held up for more than an interval
                due = loop.time() + every
            if job.task is not None and not job.task.done():
                job.skipped += 1
                if not job.skip_logged:
                    job.skip_logged = True
                    self.log(f"{job.name}: tick skipped, the previous run is still going")
                continue
            job.task = loop.create_task(self._run(job))

    async def _run(self, job: _Job) -> None:
        from ynm.server.app import report_unexpected

        job.skip_logged = False
        try:
            line = await self.service.call(job.run, write=True)
        except YnmError as err:
            self._failed(job, str(err))
            self.log(f"{job.name} failed: {err}")
        except Exception as err:  # noqa: BLE001 - a failed run never stops the server
            self._failed(job, report_unexpected(job.name, err).partition(" failed: ")[2])
        else:
            job.runs += 1
            job.last_at = _now_iso()
            self.log(f"{job.name}: {line}")

    def _failed(self, job: _Job, message: str) -> None:
        self.last_error = f"{job.name} failed: {message}"
        self.last_error_at = _now_iso()

    def health(self) -> dict[str, Any]:
        """The ``scheduler`` object of ``/health``: ``{dreamRuns, syncRuns, lastDreamAt,
        lastSyncAt, lastError, lastDream}`` as the reference (server.md §2.2; runs count the
        ones that finished without error, times are ISO 8601 UTC, ``lastError`` is
        ``<job> failed: <message>`` of the latest failure and stays after a later success,
        ``lastDream`` the per-pass counts of the latest dream), plus ynm's ``dreamEvery`` /
        ``syncEvery`` (ms or null), ``dreamSkipped`` / ``syncSkipped`` (ticks skipped because
        the previous run was still going), ``lastErrorAt`` and ``running`` (jobs in
        progress)."""
        def job(name: str) -> _Job | None:
            return self.jobs.get(name)

        out: dict[str, Any] = {}
        for name in JOBS:
            j = job(name)
            out[f"{name}Runs"] = j.runs if j else 0
        for name in JOBS:
            j = job(name)
            out[f"last{name.capitalize()}At"] = j.last_at if j else None
        out["lastError"] = self.last_error
        out["lastDream"] = self.last_dream
        out["lastErrorAt"] = self.last_error_at
        for name in JOBS:
            j = job(name)
            out[f"{name}Every"] = j.every_ms if j else None
            out[f"{name}Skipped"] = j.skipped if j else 0
        out["running"] = [n for n, j in self.jobs.items() if j.task and not j.task.done()]
        return out


def _shown(ms: int) -> str:
    """``ms`` in the largest unit that divides it exactly (``900000`` -> ``15m``)."""
    for unit in ("d", "h", "m", "s"):
        if ms % UNIT_MS[unit] == 0:
            return f"{ms // UNIT_MS[unit]}{unit}"
    return f"{ms}ms"
