"""The dream engine: which memories are fresh, the fixed order of the run, the pair cap, the
writes of a pass and the dream marks (reference/algorithms.md §1.2, §4.4, §4.5).

Entry points:

- :func:`run_dream` ``(ynm, inp, judge, writer) -> ConsolidateReport``: one run.

A memory's *version* is ``current.id + ("#" + subject) + "@" + judge.name``; it is *fresh* when
its ``dreamed`` mark differs. Only fresh memories are judged (a pair needs one fresh side); with
nothing fresh and no ``promote``-tagged working memory only expire and retention run, and no
model is called. A full run (all six passes, no namespace, not a dry run) ends by appending a
pure dream mark ``{data: {dreamed: <version>}}`` to every memory that was fresh at the start,
was not deferred by the pair cap and still has the same version; a partial run marks nothing.

Writes: each pass collects its records and appends them when it ends, one append per mount
(one commit per shard touched, ynm.service.ynm.Ynm._append), records that add or link before
the tombstones they justify, so a crash between the two leaves both memories (judged again)
rather than a tombstone without its merge. The marks are one append per mount.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ynm.dream.report import CALIBRATED_USD_PER_MTOK, PassReport, consolidate_report
from ynm.dream.seams import Judge, Judgment, ModelUnavailable, Question, Usage, Writer, band
from ynm.errors import InvalidInput, YnmError
from ynm.index.schema import current_sql, state_sql

if TYPE_CHECKING:
    from ynm.service.config import DreamConfig
    from ynm.service.mounts import Mount
    from ynm.service.ynm import Ynm

__all__ = ["PASSES", "DreamInput", "Mem", "Run", "run_dream"]

PASSES = ("expire", "promote", "dedupe", "contradict", "reflect", "normalise")
CONTENT_BRIEF = 2000  # characters of content a judge or writer sees (§4.5 brief)


@dataclass
class DreamInput:
    """One run's input (``ConsolidateInputSchema``, §4.1): ``passes`` (a subset of
    :data:`PASSES`, None = all six), ``namespace`` (a prefix filter, already normalised),
    ``dry_run``, ``judge`` (only with ``dry_run``: judge and report, write nothing) and
    ``max_pairs`` (>= 1; None = ``dream.maxPairsPerRun``).

    Raises (from :meth:`check`):
        InvalidInput: ``judge`` without ``dry_run``, an unknown pass, an empty ``passes``
            list, ``max_pairs`` < 1.
    """

    passes: list[str] | None = None
    namespace: str | None = None
    dry_run: bool = False
    judge: bool = False
    max_pairs: int | None = None

    def check(self) -> DreamInput:
        """Validate (see the class) and return self."""
        if self.judge and not self.dry_run:
            raise InvalidInput("judge: judge only applies to a dry run; add dryRun")
        if self.passes is not None and not self.passes:
            raise InvalidInput("passes: name at least one pass (leave it out for all six)")
        for name in self.passes or ():
            if name not in PASSES:
                raise InvalidInput(f"passes: unknown pass {name!r} (expected one of "
                                   f"{', '.join(PASSES)})")
        if self.max_pairs is not None and self.max_pairs < 1:
            raise InvalidInput("maxPairs: must be an integer >= 1")
        return self


class Mem:
    """A live memory as the passes see it: its ``mount``, cache ``rowid``, the summary
    ``shown`` for it (derived from the content when the record has none) and the columns the
    passes sort and pair on (id, type, subject, tags, updatedAt, the current content and
    summary), read from the cache's columns; the folded ``state`` (reference/cli.md §3.3) is
    parsed from its JSON only when a pass reads it (a brief, a write), so listing 100k live
    memories parses none."""

    __slots__ = ("_raw", "_state", "_tags", "content", "id", "mount", "raw_summary", "rowid",
                 "shown", "subject", "type", "updated_at")

    def __init__(self, mount: Mount, rowid: int, state: dict[str, Any] | str, shown: str,
                 row: tuple[Any, ...] | None = None) -> None:
        """``state``: the folded state (a dict, or its JSON text, parsed when read); ``row``:
        ``(memory_id, type, subject, tags JSON, updated_at, current content, current
        summary)`` from the cache (None: taken from ``state``)."""
        self.mount, self.rowid, self.shown = mount, rowid, shown
        if isinstance(state, dict):
            self._state, self._raw = state, None
        else:
            self._state, self._raw = None, state
        if row is None:
            s = self.state
            cur = s["current"]
            row = (s["memoryId"], s["type"], s.get("subject"), s.get("tags", []),
                   s["updatedAt"], cur.get("content"), cur.get("summary"))
        (self.id, self.type, self.subject, self._tags, self.updated_at, content,
         summary) = row
        self.content = content or ""
        self.raw_summary = summary or ""

    @property
    def state(self) -> dict[str, Any]:
        if self._state is None:
            self._state = json.loads(self._raw)
            self._raw = None
        return self._state

    @property
    def tags(self) -> list[str]:
        if isinstance(self._tags, str):
            self._tags = json.loads(self._tags)
        return self._tags

    @property
    def current(self) -> dict[str, Any]:
        return self.state["current"]

    def brief(self) -> dict[str, Any]:
        """What a judge or writer sees of the memory (§4.5): ``{summary, content (first 2000
        characters), type, namespace, subject, updatedAt}``."""
        return {"summary": self.raw_summary, "content": self.content[:CONTENT_BRIEF],
                "type": self.type, "namespace": self.state["namespace"],
                "subject": self.subject, "updatedAt": self.updated_at}


# What :class:`Mem` reads from a ``memories`` row besides the state (see Mem.__init__).
_MEM_COLUMNS = (f"memory_id, type, subject, tags, updated_at, {current_sql('m', '$.content')}, "
                f"{current_sql('m', '$.summary')}")


def version_of(current_id: str, subject: str | None, judge_name: str) -> str:
    """The dream version ``<current id>[#<subject>]@<judge>`` (§4.4)."""
    return current_id + (f"#{subject}" if subject else "") + "@" + judge_name


@dataclass
class Run:
    """The state of one run, shared by the passes (the reference's ``ctx``).

    Attributes:
        ynm: the service (mounts, clock, config, redaction gate, appends).
        judge, writer: the models consulted.
        inp: the run's input; ``judging`` is ``not dry_run or judge``.
        fresh: memory id -> version, for the memories fresh at the start.
        order: memory id -> rank in the run's fixed order (updatedAt desc, then id desc).
        deferred: memories left for the next run (pair cap, unavailable model, failed write).
        max_pairs: judgments allowed per pass; ``pairs_judged`` is reset before each pass.
        live: the live memories in scope, by id (loaded when a model pass first needs them
            and updated after each pass's writes).
        handoffs: pairs dedupe hands to contradict, ``(a, b, owner)`` ids.
    """

    ynm: Ynm
    judge: Judge
    writer: Writer
    inp: DreamInput
    now_ms: int
    fresh: dict[str, str] = field(default_factory=dict)
    order: dict[str, int] = field(default_factory=dict)
    deferred: set[str] = field(default_factory=set)
    max_pairs: int = 2000
    pairs_judged: int = 0
    live: dict[str, Mem] | None = None
    handoffs: list[tuple[str, str, str]] = field(default_factory=list)
    pending: list[tuple[Mount, Any]] = field(default_factory=list)
    judge_down: str | None = None
    notes: list[str] = field(default_factory=list)
    dry_gone: set[str] = field(default_factory=set)

    @property
    def config(self) -> DreamConfig:
        return self.ynm.config.dream

    @property
    def dry_run(self) -> bool:
        return self.inp.dry_run

    @property
    def judging(self) -> bool:
        return not self.inp.dry_run or self.inp.judge

    def is_fresh(self, memory_id: str) -> bool:
        return memory_id in self.fresh

    # -- reading ----------------------------------------------------------------------------

    def _scope_sql(self, namespace: str | None) -> tuple[str, list[Any]]:
        from ynm.index.search import SearchQuery, filter_sql

        return filter_sql(SearchQuery(namespace=namespace))

    def versions(self) -> dict[str, tuple[str, str, str | None]]:
        """Every live memory in scope: id -> ``(version, updatedAt, dreamed)``, in one query per
        mount that parses no state in Python (the whole of a run with nothing fresh)."""
        cond, args = self._scope_sql(self.inp.namespace)
        out: dict[str, tuple[str, str, str | None]] = {}
        name = self.judge.name
        for mount in self.ynm.mounts:
            cache = mount.fresh_cache()
            for memory_id, current_id, subject, updated_at, dreamed in cache.conn.execute(
                    "SELECT memory_id, (SELECT id FROM records r WHERE r.rowid = m.current), "
                    "subject, updated_at, json_extract(ynm_unpack(extra), '$.dreamed') "
                    f"FROM memories m WHERE {cond}", args):
                if memory_id in out:  # the first mount in mount order holds it (Ynm.find)
                    continue
                out[memory_id] = (version_of(current_id, subject, name), updated_at, dreamed)
        return out

    def promote_tagged(self) -> bool:
        """Whether a live working memory in scope is tagged ``promote`` (one query per mount)."""
        from ynm.index.search import SearchQuery, filter_sql

        cond, args = filter_sql(SearchQuery(types=["working"], namespace=self.inp.namespace,
                                            tags=["promote"]))
        return any(mount.cache.conn.execute(
            f"SELECT 1 FROM memories m WHERE {cond} LIMIT 1", args).fetchone()
            for mount in self.ynm.mounts)

    def memories(self) -> dict[str, Mem]:
        """The live memories in scope (loaded once, then kept current by :meth:`flush`)."""
        if self.live is None:
            cond, args = self._scope_sql(self.inp.namespace)
            self.live = {}
            for mount in self.ynm.mounts:
                for rowid, state, shown, *row in mount.fresh_cache().conn.execute(
                        f"SELECT rowid, {state_sql('m')}, summary, {_MEM_COLUMNS} FROM memories m "
                        f"WHERE {cond}", args):
                    if row[0] not in self.live and row[0] not in self.dry_gone:
                        self.live[row[0]] = Mem(mount, rowid, state, shown, tuple(row))
        return self.live

    def by_order(self, mems: Iterable[Mem]) -> list[Mem]:
        """``byOwner`` (§4.5): by rank in the run's order (unknown last), then id ascending."""
        inf = len(self.order) + 1
        return sorted(mems, key=lambda m: (self.order.get(m.id, inf), m.id))

    def _reload(self, ids: set[str]) -> None:
        """Re-read ``ids`` (and memories they created) into :attr:`live` after a write."""
        if self.live is None or not ids:
            return
        from ynm.model.namespaces import namespace_matches

        for memory_id in ids:
            self.live.pop(memory_id, None)
        for mount in self.ynm.mounts:
            for rowid, state, shown, tomb, namespace, *row in mount.fresh_cache().conn.execute(
                    f"SELECT rowid, {state_sql('m')}, summary, tombstoned, namespace, "
                    f"{_MEM_COLUMNS} "
                    "FROM memories m WHERE memory_id IN (SELECT value FROM json_each(?))",
                    (json.dumps(sorted(ids)),)):
                if tomb or row[0] in self.live:
                    continue
                if self.inp.namespace and not namespace_matches(namespace, self.inp.namespace):
                    continue
                self.live[row[0]] = Mem(mount, rowid, state, shown, tuple(row))

    # -- judging ----------------------------------------------------------------------------

    def capped(self, report: PassReport, owner: str) -> bool:
        """The pair cap (§4.5): True (and ``skipped += 1``, owner deferred) once
        ``max_pairs`` judgments were made in this pass."""
        if self.pairs_judged >= self.max_pairs:
            report.skipped += 1
            self.deferred.add(owner)
            return True
        return False

    def ask(self, report: PassReport, state: Any, questions: dict[str, Question],
            owner: str | None = None, *, pair: bool = True,
            sides: Iterable[str] = ()) -> Judgment | None:
        """Ask the judge. Counts ``judged``, the pass's usage, ``uncalibrated`` and
        ``fallback`` (heuristic) (``noteJudge``, §4.5); a ``pair`` judgment counts against the
        cap.

        When the judge is unavailable (network, 429/529, spend guard, state too large) a
        ``pair`` judgment (promote, dedupe, contradict) is answered by the heuristic judge,
        the no-model floor, which being uncalibrated can only flag for review (§4.3); the
        pass notes ``judge unavailable: <why>; the heuristic judge answered instead``, sets
        ``fallback`` and defers the owner and the pair's ``sides`` (memory ids), so the
        configured judge sees them again next run.
        After a failure other than a too-large state the judge is not asked again in this run
        (each call would wait for the same failure). Reflect's verification (``pair`` False)
        is not answered by the floor: it returns None (noted, ``fallback``, owner deferred).
        Ours: the reference only takes the pass's fallback, so an unavailable judge flagged
        nothing and a run read as if nothing was found (reference/algorithms.md §4.17).

        A pair answered only by the heuristic floor of a judge that has one (the similarity
        judge without vectors) also defers its owner and sides: their dream version names the
        configured judge, which did not judge them (§4.4)."""
        from ynm.dream.judges import StateTooLarge

        j = None
        why = self.judge_down
        if why is None:
            try:
                j = self.judge.judge(state, questions)
            except ModelUnavailable as err:
                why = str(err)
                if not isinstance(err, StateTooLarge):
                    self.judge_down = why
        if j is None:
            report.fallback = True
            if owner is not None:
                self.deferred.add(owner)
            self.deferred.update(sides)
            if not pair or self.judge.name == "heuristic":
                note = f"judge unavailable: {why}"
                if note not in report.notes:
                    report.notes.append(note)
                return None
            from ynm.dream.heuristic import HeuristicJudge

            note = (f"judge unavailable: {why}; the heuristic judge answered instead (it only "
                    "flags for review); these memories are judged again next run")
            if note not in report.notes:
                report.notes.append(note)
            j = HeuristicJudge().judge(state, questions)
        elif pair and self.judge.name != "heuristic" and j.model == "heuristic":
            if owner is not None:
                self.deferred.add(owner)
            self.deferred.update(sides)
        report.judged += 1
        if pair:
            self.pairs_judged += 1
        if j.usage is not None:
            report.usage = report.usage + j.usage
        if not j.calibrated:
            report.uncalibrated = True
        if j.model == "heuristic":
            report.fallback = True
        return j

    def band(self, p: float, thresholds: Any, j: Judgment) -> str:
        """:func:`ynm.dream.seams.band` with the judgment's calibration (§4.3)."""
        return band(p, thresholds.act, thresholds.review, j.calibrated)

    def thresholds(self, pass_name: str, j: Judgment) -> Any:
        """The band ``j`` is read with in ``pass_name``: ``dream.thresholds.<pass>``, unless
        the configuration leaves it at its default and the judge has a review threshold of
        its own for the pass and this judgment (``judge.review_threshold(pass, judgment) ->
        float | None``, e.g. :meth:`ynm.dream.judges.SimilarityJudge.review_threshold`):
        then the default's ``act`` with that ``review`` (at most ``act``). Ours; the
        reference bands every judge with the same thresholds (§4.3)."""
        configured = getattr(self.config.thresholds, pass_name)
        own = getattr(self.judge, "review_threshold", None)
        if own is None or pass_name in self.config.thresholds.model_fields_set:
            return configured
        review = own(pass_name, j)
        if review is None:
            return configured
        return configured.model_copy(update={"review": min(review, configured.act)})

    def stored(self, pass_name: str, j: Judgment, questions: dict[str, Question],
               decision: str | None = None) -> dict[str, Any]:
        """A StoredJudgment (§4.13): ``{pass, model, calibrated, at, questions, answers,
        band?, usage?}``."""
        from ynm.model.ids import iso_ms

        out: dict[str, Any] = {
            "pass": pass_name, "model": j.model, "calibrated": j.calibrated,
            "at": iso_ms(self.now_ms),
            "questions": {k: q.model_dump(exclude_none=True) for k, q in questions.items()},
            "answers": {k: a.model_dump(exclude_none=True) for k, a in j.answers.items()},
        }
        if decision is not None:
            out["band"] = decision
        if j.usage is not None:
            out["usage"] = j.usage.model_dump(by_alias=True)
        return out

    # -- writing ----------------------------------------------------------------------------

    def write(self, mount: Mount, fields: dict[str, Any]) -> Any:
        """Stamp a record (``fields`` without id/time/provenance), pass a ``create`` or
        ``supersede`` through the redaction gate and queue it for :meth:`flush`. Returns the
        record (its ``memory_id`` is a new memory's id for a ``create``). Annotates and
        tombstones carry no new text of a memory (links, tags it already had, reasons and the
        judge's answers), so they skip the gate, which cost most of a first run's writes.

        Raises:
            Refused: a distributed create or supersede holds a secret (nothing is queued)."""
        record = self.ynm._stamp(dict(fields))
        if record.op in ("create", "supersede"):
            self.ynm._gate(record)
        self.pending.append((mount, record))
        return record

    def edit(self, mem: Mem, fields: dict[str, Any]) -> Any:
        """Queue a record on an existing memory (type, level and namespace from its state)."""
        base = {"memoryId": mem.id, "type": mem.type, "level": mem.state["level"],
                "namespace": mem.state["namespace"], "tags": [], "links": []}
        base.update({k: v for k, v in fields.items() if v is not None})
        return self.write(mem.mount, base)

    def tombstone(self, mem: Mem, reason: str) -> None:
        self.edit(mem, {"op": "tombstone", "reason": reason})

    def flag(self, mems: Iterable[Mem], data: dict[str, Any], reason: str,
             links: list[dict[str, str]] | None = None) -> None:
        """Flag for review (§4.5 ``flag``): annotate ``needsReview: true``, ``reason``,
        ``data`` (and ``links`` when given), unless a dry run."""
        if self.dry_run:
            return
        for mem in mems:
            self.edit(mem, {"op": "annotate", "needsReview": True, "reason": reason,
                            "data": data, "links": links or []})

    def flush(self, report: PassReport) -> None:
        """Append what the pass queued: per mount, first every record that is not a tombstone,
        then the tombstones (one append each, one commit per shard), all under one
        acquisition of each mount's repository lock. A failed append is noted in the report
        and its memories are deferred (judged again next run).

        Raises:
            LockTimeout: a mount's lock stayed taken: nothing of this pass is written, and the
                run stops here rather than wait out the lock again at every later write; what
                earlier passes wrote stays, and the hint says so."""
        from ynm.errors import LockTimeout

        if not self.pending:
            return
        pending, self.pending = self.pending, []
        touched: set[str] = set()
        try:
            with self.ynm._write_lock({m.id: m for m, _ in pending}.values()):
                for phase in (False, True):
                    by_mount: dict[str, tuple[Mount, list[Any]]] = {}
                    for mount, record in pending:
                        if (record.op == "tombstone") == phase:
                            by_mount.setdefault(mount.id, (mount, []))[1].append(record)
                    for mount, records in by_mount.values():
                        ids = {r.memory_id for r in records}
                        try:
                            self.ynm._append(mount, records, locked=True)
                        except (YnmError, OSError) as err:
                            report.notes.append(f"not written to {mount.id}: {err}")
                            report.failed.extend({"memoryId": i, "error": str(err)}
                                                 for i in sorted(ids))
                            self.deferred.update(ids)
                            continue
                        touched.update(ids)
        except LockTimeout as err:
            err.hint = ("this dream run stopped before writing its changes (what earlier "
                        "passes wrote stays; the memories it did not mark are judged again "
                        f"next run); {err.hint or 'run ynm dream again'}")
            raise
        self._reload(touched)


def run_dream(ynm: Ynm, inp: DreamInput, judge: Judge, writer: Writer) -> dict[str, Any]:
    """One dream run (reference/algorithms.md §4.4). Returns the ConsolidateReport
    ``{dryRun, passes: {<pass>: {candidates, changed}}, full: DreamReport}`` (§4.14).

    Passes run in the fixed order expire (then retention), promote, dedupe, contradict,
    reflect, normalise, each only when requested; every pass but expire is skipped when nothing
    is fresh and no working memory is tagged ``promote``. Progress: ``("dream", i, n)`` before
    each requested pass and ``(n, n)`` at the end.

    Raises:
        InvalidInput: see :meth:`DreamInput.check`.
        DreamInterrupted: Ctrl-C; its ``report`` is the ConsolidateReport of the passes that
            ended before it, ``dreamed`` 0 and ``full.stopped`` saying where it stopped and
            whether that step had written part of its changes (:func:`_stopped`); a pass
            stopped while judging has written nothing, and no marks are written, so the next
            run judges again what this one did not finish.
        YnmError: a mount's lock stayed taken (LockTimeout, from :meth:`Run.flush`); its
            ``result`` is that report of the passes before it, unless it carried one.
    """
    from ynm.dream import passes as P

    inp.check()
    run = Run(ynm=ynm, judge=judge, writer=writer, inp=inp, now_ms=ynm._now_ms(),
              max_pairs=inp.max_pairs or ynm.config.dream.max_pairs_per_run)
    before = run.versions()
    if inp.namespace and not before:
        run.notes.append(f"no memory is in namespace {inp.namespace!r} (nor under it)")
    run.fresh = {i: v[0] for i, v in before.items() if v[2] != v[0]}
    tagged = run.promote_tagged()
    ranked = sorted(before, key=lambda i: (before[i][1], i), reverse=True)
    run.order = {memory_id: rank for rank, memory_id in enumerate(ranked)}

    requested = list(dict.fromkeys(inp.passes or PASSES))
    todo = [p for p in PASSES if p in requested]
    runners = {"expire": P.expire, "promote": P.promote, "dedupe": P.dedupe,
               "contradict": P.contradict, "reflect": P.reflect, "normalise": P.normalise}
    reports: dict[str, PassReport] = {}
    progress = ynm.progress
    # where the run is, for a report of a run stopped part way: (step, writing)
    step, writing = "", False
    try:
        for i, name in enumerate(todo):
            if progress:
                progress("dream", i, len(todo))
            if name != "expire" and not run.fresh and not tagged:
                continue
            run.pairs_judged = 0
            step, writing = name, name == "expire"  # expire writes as it goes
            report = runners[name](run)
            writing = True
            run.flush(report)
            reports[name] = report
            if name == "expire" and run.config.occurrence_retention:
                step, writing = "retention", False
                retention = P.retention(run)
                writing = True
                run.flush(retention)
                reports["retention"] = retention
            step, writing = "", False
            if name == "expire" and inp.dry_run:
                # what a real run would have tombstoned is not there for the later passes
                run.dry_gone.update(report.changed)
                run.dry_gone.update(reports["retention"].changed if "retention" in reports
                                    else ())
        if progress and todo:
            progress("dream", len(todo), len(todo))

        full_run = not inp.namespace and set(requested) == set(PASSES)
        if full_run and not inp.dry_run:
            step, writing = "marks", True
            dreamed = mark_dreamed(run)
        else:
            dreamed = 0
    except KeyboardInterrupt:
        raise DreamInterrupted(_report(run, judge, writer, reports, 0,
                                       _stopped(step, writing, inp.dry_run))) from None
    except YnmError as err:  # a lock that stayed taken: the passes done before it stay
        if err.result is None:
            # LockTimeout: nothing of the pass it met was written (Run.flush)
            err.result = _report(run, judge, writer, reports, 0,
                                 _stopped(step, False, inp.dry_run))
        raise
    return _report(run, judge, writer, reports, dreamed)


class DreamInterrupted(KeyboardInterrupt):
    """Ctrl-C stopped a run: ``report`` is the ConsolidateReport of the passes that ended
    before it (:func:`run_dream`), with ``full.stopped`` naming where it stopped."""

    def __init__(self, report: dict[str, Any]) -> None:
        super().__init__()
        self.report = report


def _stopped(step: str, writing: bool, dry_run: bool) -> dict[str, Any]:
    """``full.stopped`` of a run stopped part way: ``{"pass": <pass, retention or marks; ""
    between passes>, "written": <"nothing" or "part">}``. A pass queues its records and writes
    them when it ends (:meth:`Run.flush`), so stopped while judging nothing of it is written;
    stopped while writing (the expire pass, a pass's flush, the marks), some of its appends
    may have landed (each is one commit, never half a record)."""
    return {"pass": step, "written": "part" if writing and not dry_run and step else "nothing"}


def _report(run: Run, judge: Judge, writer: Writer, reports: dict[str, PassReport],
            dreamed: int, stopped: dict[str, Any] | None = None) -> dict[str, Any]:
    """The ConsolidateReport (§4.14) of the passes in ``reports``; ``stopped`` (a run cut
    short, :func:`_stopped`) is added to ``full`` as ``stopped``, after the reference's keys."""
    usage = Usage()
    for report in reports.values():
        usage = usage + report.usage
    cost = (usage.input_tokens * CALIBRATED_USD_PER_MTOK / 1_000_000
            if run.judging and judge.calibrated else 0)
    full = {
        "dryRun": run.inp.dry_run, "judged": run.judging,
        "judge": {"name": judge.name, "calibrated": judge.calibrated}, "writer": writer.name,
        "passes": {name: r.to_obj() for name, r in reports.items()},
        "fresh": len(run.fresh), "dreamed": dreamed,
        "usage": {"inputTokens": usage.input_tokens, "outputTokens": usage.output_tokens},
        "estimatedCostUsd": cost,
    }
    if run.notes:
        full["notes"] = list(run.notes)
    if stopped is not None:
        full["stopped"] = stopped
    return consolidate_report(full)


def mark_dreamed(run: Run) -> int:
    """``markDreamed`` (§4.4): append a pure dream mark to every memory fresh at the start,
    not deferred, whose version is unchanged; one append per mount. Returns how many."""
    if not run.fresh:
        return 0
    now = run.versions()
    by_mount: dict[str, list[str]] = {}
    owner: dict[str, Mount] = {}
    for mount in run.ynm.mounts:
        owner[mount.id] = mount
    due = [i for i, v in run.fresh.items()
           if i not in run.deferred and i in now and now[i][0] == v]
    if not due:
        return 0
    # which mount holds each (the first in mount order, as Ynm.find)
    where: dict[str, tuple[Mount, dict[str, Any]]] = {}
    for mount in run.ynm.mounts:
        for memory_id, kind, level, namespace in mount.cache.conn.execute(
                "SELECT memory_id, type, level, namespace FROM memories "
                "WHERE memory_id IN (SELECT value FROM json_each(?))", (json.dumps(due),)):
            where.setdefault(memory_id, (mount, {"type": kind, "level": level,
                                                 "namespace": namespace}))
    records: dict[str, list[Any]] = {}
    for memory_id in due:
        if memory_id not in where:
            continue
        mount, info = where[memory_id]
        record = run.ynm._stamp({"memoryId": memory_id, "op": "annotate", **info, "tags": [],
                                 "links": [], "data": {"dreamed": run.fresh[memory_id]}})
        records.setdefault(mount.id, []).append(record)
        by_mount.setdefault(mount.id, []).append(memory_id)
    count = 0
    for mount_id, recs in records.items():
        try:
            run.ynm._append(owner[mount_id], recs)
        except (YnmError, OSError) as err:  # unmarked memories are judged again next run
            run.ynm.warnings.append(f"dream marks not written to {mount_id}: {err}")
            continue
        count += len(recs)
    return count
