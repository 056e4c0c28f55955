"""The six passes of a dream run, and occurrence retention (reference/algorithms.md §4.6–§4.12).

Each pass takes the :class:`ynm.dream.engine.Run` and returns a
:class:`ynm.dream.report.PassReport`; writes are queued on the run and appended when the pass
ends. Expire, retention and normalise need no model; promote, dedupe and contradict consult the
judge (and dedupe the writer, to merge); reflect needs a writer and verifies with the judge.

Deviation from the reference: a pair flagged by contradict gets one annotate per side that
carries the ``contradicts`` link, ``needsReview``, the reason ``contradiction needs review`` and
the judgment (``{judgments, pair}``), where the reference writes the link and the flag as two
annotates and the flag with empty data; so ``ynm review list`` can show why.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from ynm.dream.questions import PAIR, PROMOTE, SUPERSEDE, VERIFY
from ynm.dream.report import PassReport
from ynm.dream.seams import ModelUnavailable, StructuredOutputError
from ynm.errors import Refused, YnmError
from ynm.index.schema import state_sql

if TYPE_CHECKING:
    from ynm.dream.engine import Mem, Run

__all__ = ["RELATIVE", "absolutise", "contradict", "dedupe", "expire", "normalise", "promote",
           "reflect", "retention"]

OCCURRENCE = "occurrence"
PROMOTE_TAG = "promote"
DEDUPE_TYPES = ("semantic", "procedural", "episodic", "reference", "reflective")
PROMOTE_TARGETS = ("semantic", "procedural", "reference")
MAX_EVIDENCE = 12  # episodes a reflection is written from and links to
EPISODE_CONTENT = 800  # characters of each episode the writer sees
DEDUPE_TEXT = 400  # characters of content the neighbour search starts from
DEDUPE_BLOCK = 64  # fewest owners whose neighbours dedupe looks up at once

RELATIVE = re.compile(r"\b(today|yesterday|tomorrow|last week|next week|this week|last month|"
                      r"next month|(\d+) days? ago)\b", re.IGNORECASE)


class Merged(BaseModel):
    """What a writer returns to merge two duplicates (schema ``merged_memory``)."""

    content: str = Field(min_length=1)
    summary: str = Field(min_length=1, max_length=280)


class Reflection(BaseModel):
    """What a writer returns for a reflection (schema ``reflection``)."""

    summary: str = Field(min_length=1, max_length=280)
    content: str = Field(min_length=1)


MERGE_INSTRUCTIONS = (
    "Two memories state the same fact. Write one memory that keeps every fact of both, "
    "preferring the newer where they differ. Return content and a one-line summary.")
REFLECT_INSTRUCTIONS = (
    "Write a reflective memory about the subject that summarises the episodes. Report only "
    "facts, dates and outcomes present in them; you may note repetition; invent no causes or "
    "recommendations; keep dates absolute. Return content and a one-line summary.")


def _is_occurrence(m: Mem) -> bool:
    return OCCURRENCE in m.tags


def _key(m: Mem) -> str:
    return f"{m.mount.id}:{m.subject}"


# -- expire and retention (no model) ---------------------------------------------------------


def expire(run: Run) -> PassReport:
    """Expire (§4.6): tombstone each live working memory in scope whose ttl ran out
    (``updatedAt + ttl <= now``), reason ``expired``, through :meth:`Ynm.expire`. Candidates:
    the live working memories in scope whose current record has a ttl. A dry run lists what
    would change in ``changed``."""
    from ynm.index.search import SearchQuery, filter_sql

    report = PassReport()
    cond, args = filter_sql(SearchQuery(types=["working"], namespace=run.inp.namespace))
    for mount in run.ynm.mounts:
        report.candidates += mount.fresh_cache().conn.execute(
            f"SELECT count(*) FROM memories m WHERE {cond} AND m.expires_at IS NOT NULL",
            args).fetchone()[0]
    report.changed = run.ynm.expire(run.inp.namespace, dry_run=run.dry_run,
                                    failed=report.failed)
    for f in report.failed:
        report.notes.append(f"{f['memoryId']} not forgotten: {f['error']}")
    return report


def retention(run: Run) -> PassReport:
    """Occurrence retention (§4.7, reported as ``retention``): tombstone each memory tagged
    ``occurrence`` in scope not updated within ``dream.occurrenceRetention``, reason
    ``occurrence retention (<window>)``, unless the newest reflection on its subject (per
    mount, over every live memory whatever the run's namespace) links to it."""
    from ynm.index.search import SearchQuery, filter_sql
    from ynm.model.durations import duration_ms
    from ynm.model.ranker import iso_to_ms

    report = PassReport()
    window = run.config.occurrence_retention
    if not window:
        return report
    cutoff = run.now_ms - duration_ms(window)
    newest: dict[str, tuple[str, dict[str, Any]]] = {}
    for mount in run.ynm.mounts:
        for state, updated_at in mount.fresh_cache().conn.execute(
                f"SELECT {state_sql()}, updated_at FROM memories WHERE tombstoned = 0 "
                "AND type = 'reflective' AND subject IS NOT NULL"):
            import json

            obj = json.loads(state)
            key = f"{mount.id}:{obj['subject']}"
            if key not in newest or updated_at > newest[key][0]:
                newest[key] = (updated_at, obj)
    evidence = {link["to"] for _, obj in newest.values() for link in obj.get("links", [])}
    cond, args = filter_sql(SearchQuery(namespace=run.inp.namespace, tags=[OCCURRENCE]))
    kept = 0
    for mount in run.ynm.mounts:
        rows = mount.cache.conn.execute(
            f"SELECT memory_id, updated_at, type, level, namespace FROM memories m "
            f"WHERE {cond} ORDER BY memory_id", args).fetchall()
        for memory_id, updated_at, kind, level, namespace in rows:
            report.candidates += 1
            if iso_to_ms(updated_at) > cutoff:
                continue
            if memory_id in evidence:
                kept += 1
                continue
            if not run.dry_run:
                run.write(mount, {"memoryId": memory_id, "op": "tombstone", "type": kind,
                                  "level": level, "namespace": namespace, "tags": [],
                                  "links": [], "reason": f"occurrence retention ({window})"})
            report.changed.append(memory_id)
    if kept:
        report.notes.append(f"kept {kept} past retention as evidence for a reflection")
    return report


# -- promote -----------------------------------------------------------------------------


def promote(run: Run) -> PassReport:
    """Promote (§4.8): each working memory in scope, in the run's order, that is fresh or
    tagged ``promote``. Tagged: act without a judge, target ``episodic``. Otherwise (when
    judging) the judge's ``usefulLater`` is banded with ``dream.thresholds.promote`` and
    ``kind`` picks semantic, procedural or reference (else episodic).

    Act: a new memory of the target type in the level's default namespace (personal
    ``user/<userId>``, distributed ``common``) and default mount, with the content, summary,
    subject, importance and tags (minus ``promote``), linked ``derives-from`` the original,
    which is tombstoned (``promoted to <newId>``); a judged promotion stores its judgment on
    the copy (reason ``promotion judgment``). Review: flag the working memory (``promotion
    needs review``)."""
    from ynm.service.mounts import route

    report = PassReport()
    cfg = run.config
    working = [m for m in run.memories().values() if m.type == "working"]
    for m in run.by_order(working):
        tagged = PROMOTE_TAG in m.tags
        if not (run.is_fresh(m.id) or tagged):
            continue
        report.candidates += 1
        stored = None
        if tagged:
            decision, target = "act", "episodic"
        else:
            if not run.judging or run.capped(report, m.id):
                continue
            j = run.ask(report, {"memory": m.brief()}, PROMOTE, m.id)
            if j is None:
                continue
            decision = run.band(j.answers["usefulLater"].noul or 0.0, cfg.thresholds.promote, j)
            kind = j.answers["kind"].choice
            target = kind if kind in PROMOTE_TARGETS else "episodic"
            stored = run.stored("promote", j, PROMOTE, decision)
        if decision == "act":
            if not run.dry_run:
                level = m.state["level"]
                namespace = (f"user/{run.ynm.config.user_id}" if level == "personal"
                             else "common")
                try:
                    mount = route(run.ynm.mounts, level)
                    fields = {"op": "create", "type": target, "level": level,
                              "namespace": namespace, "subject": m.subject,
                              "tags": [t for t in m.tags if t != PROMOTE_TAG],
                              "content": m.content, "summary": m.current.get("summary"),
                              "importance": m.state.get("importance"),
                              "links": [{"rel": "derives-from", "to": m.id}]}
                    new = run.write(mount, {k: v for k, v in fields.items() if v is not None})
                except (Refused, YnmError) as err:
                    report.notes.append(f"{m.id} not promoted: {err}")
                    run.deferred.add(m.id)
                    continue
                run.tombstone(m, f"promoted to {new.memory_id}")
                if stored is not None:
                    run.write(mount, {"memoryId": new.memory_id, "op": "annotate",
                                      "type": target, "level": level, "namespace": namespace,
                                      "tags": [], "links": [], "data": {"judgments": [stored]},
                                      "reason": "promotion judgment"})
            report.changed.append(m.id)
        elif decision == "review":
            run.flag([m], {"judgments": [stored]}, "promotion needs review")
            report.flagged.append(m.id)
    return report


# -- dedupe ------------------------------------------------------------------------------


def dedupe(run: Run) -> PassReport:
    """Dedupe (§4.9): each fresh memory of the types semantic, procedural, episodic,
    reference and reflective (never working, never tagged ``occurrence``), newest first, is
    paired with its nearest neighbours of the same type in the same mount and scope
    (``dream.candidatesPerMemory``; found without any model: :mod:`ynm.dream.candidates`).
    Each pair (a older, b newer) is judged on ``sameFact``, ``relation`` and ``contradicts``;
    ``contradicts`` at or above the contradict review threshold hands the pair to contradict.
    ``sameFact`` banded with ``dream.thresholds.dedupe`` (or the judge's own review threshold
    while that is left at its default: :meth:`ynm.dream.engine.Run.thresholds`):

    - act: the writer merges the two (``merged_memory``) and b is superseded with the merged
      text, a's tags and a ``derives-from`` link to a; without a writer (or when it fails) b
      is annotated with the link, a's tags and the judgment (``duplicate merged``). Then a is
      tombstoned (``duplicate of <b>``).
    - review: both are flagged ``possible duplicate`` with ``{judgments, pair: [a, b]}``.

    Deviation from the reference, which lists every owner's pairs before judging any: pairs
    are listed a block of owners at a time, while the pair cap (§4.5) still allows a judgment.
    Once ``maxPairs`` judgments were made, each owner not reached is deferred (fresh next run)
    and counted as one candidate and one ``skipped``, its neighbours never looked up, so a
    first run over 100k fresh memories costs the pairs it judges, not the whole store. The
    pairs judged, and their order, are the reference's. A run that does not judge (a dry run
    without ``judge``) lists every pair, so its ``candidates`` is the reference's count.
    """
    from ynm.dream.candidates import neighbours

    report = PassReport()
    cfg = run.config
    live = run.memories()
    pool = {i: m for i, m in live.items() if m.type in DEDUPE_TYPES and not _is_occurrence(m)}
    owners = run.by_order(m for m in pool.values() if run.is_fresh(m.id))
    k = min(cfg.candidates_per_memory, run.max_pairs)
    index: dict[Any, Any] = {}  # the neighbour search's index, built once for the pass
    seen: set[tuple[str, str]] = set()

    def pairs_of(block: list[Mem]):
        near = neighbours(run, block, pool, k, index)
        for m in block:
            for other_id in near.get(m.id, []):
                other = pool.get(other_id)
                if other is None or other_id == m.id:
                    continue
                key = (min(m.id, other_id), max(m.id, other_id))
                if key in seen:
                    continue
                seen.add(key)
                a, b = (m, other) if m.updated_at <= other.updated_at else (other, m)
                yield a, b, m

    if not run.judging:
        report.candidates = sum(1 for _ in pairs_of(owners))
        return report
    gone: set[str] = set()
    start, size = 0, 0
    while start < len(owners):
        # owners a block at a time, each block about what the rest of the cap can judge
        size = max(DEDUPE_BLOCK, -(-(run.max_pairs - run.pairs_judged) // k), 2 * size)
        block = owners[start:start + size]
        start += len(block)
        for a, b, owner in pairs_of(block):
            report.candidates += 1
            if a.id in gone or b.id in gone or run.capped(report, owner.id):
                continue
            j = run.ask(report, {"a": a.brief(), "b": b.brief()}, PAIR, owner.id,
                        sides=(a.id, b.id))
            if j is None:
                continue
            contradicts = j.answers["contradicts"].noul or 0.0
            if contradicts >= cfg.thresholds.contradict.review:
                run.handoffs.append((a.id, b.id, owner.id))
            decision = run.band(j.answers["sameFact"].noul or 0.0,
                                run.thresholds("dedupe", j), j)
            data = {"judgments": [run.stored("dedupe", j, PAIR, decision)],
                    "pair": [a.id, b.id]}
            if decision == "act":
                if not run.dry_run:
                    _merge(run, report, a, b, data)
                gone.add(a.id)
                report.changed.append(a.id)
            elif decision == "review":
                run.flag([a, b], data, "possible duplicate")
                report.flagged.extend([a.id, b.id])
        if run.pairs_judged >= run.max_pairs:
            rest = owners[start:]  # not reached: one candidate and one skip each, deferred
            report.candidates += len(rest)
            report.skipped += len(rest)
            run.deferred.update(m.id for m in rest)
            break
    return report


def _merge(run: Run, report: PassReport, a: Mem, b: Mem, data: dict[str, Any]) -> None:
    """Merge duplicate ``a`` (older) into ``b`` (newer), then tombstone ``a`` (§4.9 act)."""
    merged = None
    if run.writer.name == "none":
        report.fallback = True
    else:
        try:
            written = run.writer.write(MERGE_INSTRUCTIONS, {"older": a.brief(),
                                                            "newer": b.brief()},
                                       Merged, "merged_memory")
            merged = written.value
            if written.usage is not None:
                report.usage = report.usage + written.usage
        except (ModelUnavailable, StructuredOutputError, YnmError) as err:
            report.notes.append(f"merge text fallback for {b.id}: {err}")
            report.fallback = True
    link = [{"rel": "derives-from", "to": a.id}]
    try:
        if merged is not None:
            ttl = b.current.get("ttl") if b.type == "working" else None
            run.edit(b, {"op": "supersede", "content": merged.content,
                         "summary": merged.summary, "subject": b.subject, "tags": a.tags,
                         "ttl": ttl, "links": [{"rel": "supersedes", "to": b.id}, *link]})
        else:
            run.edit(b, {"op": "annotate", "tags": a.tags, "links": link, "data": data,
                         "reason": "duplicate merged"})
    except Refused as err:
        report.notes.append(f"{a.id} not merged into {b.id}: {err}")
        run.deferred.update({a.id, b.id})
        return
    run.tombstone(a, f"duplicate of {b.id}")


# -- contradict --------------------------------------------------------------------------


def contradict(run: Run) -> PassReport:
    """Contradict (§4.10): pairs of live memories with the same mount and subject (not
    working, not ``occurrence``) where the owner is fresh, plus dedupe's hand-offs (with or
    without a subject, as the reference: a pair without one, "Alice owns the on-call
    rotation" / "Bob owns ...", was dropped here before); each is
    judged on ``contradicts`` and ``newerSupersedes``. ``contradicts`` banded with
    ``dream.thresholds.contradict``: ignore does nothing; otherwise both sides get a
    ``contradicts`` link to the other. Act with ``newerSupersedes`` at or above the act
    threshold tombstones the older side (``superseded by <b> (contradiction resolved)``);
    any other case flags both (``contradiction needs review``).

    A subject's pairs are counted, not listed: an owner at position ``i`` of its subject's
    memories (in the run's order) pairs with every later memory and every earlier one that is
    not fresh, at most ``maxPairs``, so no pair comes twice; pairs are made one owner at a
    time only while the judge may still be asked, so a subject of thousands of memories costs
    no more memory than the pairs judged (the reference lists them all first)."""
    report = PassReport()
    live = run.memories()
    mems = {i: m for i, m in live.items()
            if m.subject and m.type != "working" and not _is_occurrence(m)}
    handoffs: dict[str, list[tuple[Mem, Mem]]] = {}
    seen: set[tuple[str, str]] = set()
    for a_id, b_id, owner_id in run.handoffs:
        # a hand-off needs no subject (§4.10: only occurrences are left out)
        a, b = live.get(a_id), live.get(b_id)
        if a is not None and b is not None and not _is_occurrence(a) \
                and not _is_occurrence(b):
            key = (min(a_id, b_id), max(a_id, b_id))
            if key not in seen:
                seen.add(key)
                handoffs.setdefault(owner_id, []).append((a, b))
    groups: dict[str, list[Mem]] = {}
    for m in mems.values():
        groups.setdefault(_key(m), []).append(m)
    owners: dict[str, tuple[list[Mem], list[bool], int]] = {}
    counts: dict[str, int] = {owner_id: len(pairs) for owner_id, pairs in handoffs.items()}
    handed = {x for key in seen for x in key}
    for group in groups.values():
        ordered = run.by_order(group)
        fresh = [run.is_fresh(m.id) for m in ordered]
        stale_before = 0
        for i, owner in enumerate(ordered):
            if fresh[i]:
                owners[owner.id] = (ordered, fresh, i)
                n = min(len(ordered) - 1 - i + stale_before, run.max_pairs)
                if owner.id in handed:
                    n = sum(1 for _ in _peers(ordered, fresh, i, run.max_pairs, seen))
                counts[owner.id] = counts.get(owner.id, 0) + n
            else:
                stale_before += 1
    report.candidates = sum(counts.values())
    if not run.judging:
        return report
    inf = len(run.order) + 1
    gone: set[str] = set()
    for owner_id in sorted(counts, key=lambda i: (run.order.get(i, inf), i)):
        pairs = list(handoffs.get(owner_id, []))
        group = owners.get(owner_id)
        left = counts[owner_id]
        if run.pairs_judged >= run.max_pairs:  # capped: count the owner's pairs, list none
            if left:
                report.skipped += left
                run.deferred.add(owner_id)
            continue
        for a, b in _chain(pairs, _owner_pairs(group, run.max_pairs, seen)):
            if run.pairs_judged >= run.max_pairs:  # the pair cap (§4.5), for the rest at once
                report.skipped += left
                run.deferred.add(owner_id)
                break
            left -= 1
            if a.id in gone or b.id in gone:
                continue
            _judge_contradiction(run, report, a, b, owner_id, gone)
    return report


def _peers(ordered: list[Mem], fresh: list[bool], i: int, cap: int,
           seen: set[tuple[str, str]]):
    """The owner ``ordered[i]``'s peers (every later memory, every earlier one not fresh; the
    first ``cap``) whose pair is not already in ``seen``."""
    owner = ordered[i]
    taken = 0
    for k, peer in enumerate(ordered):
        if k == i or (k < i and fresh[k]):
            continue
        if taken >= cap:
            return
        taken += 1
        if (min(owner.id, peer.id), max(owner.id, peer.id)) not in seen:
            yield peer


def _owner_pairs(group: tuple[list[Mem], list[bool], int] | None, cap: int,
                 seen: set[tuple[str, str]]):
    """``(a older, b newer)`` for each of an owner's peers (ties: the peer is a)."""
    if group is None:
        return
    ordered, fresh, i = group
    owner = ordered[i]
    for peer in _peers(ordered, fresh, i, cap, seen):
        yield (owner, peer) if owner.updated_at < peer.updated_at else (peer, owner)


def _chain(first, second):
    yield from first
    yield from second


def _judge_contradiction(run: Run, report: PassReport, a: Mem, b: Mem, owner_id: str,
                         gone: set[str]) -> None:
    cfg = run.config
    j = run.ask(report, {"a": a.brief(), "b": b.brief()}, SUPERSEDE, owner_id,
                sides=(a.id, b.id))
    if j is None:
        return
    decision = run.band(j.answers["contradicts"].noul or 0.0, cfg.thresholds.contradict, j)
    if decision == "ignore":
        return
    data = {"judgments": [run.stored("contradict", j, SUPERSEDE, decision)],
            "pair": [a.id, b.id]}
    supersedes = (j.answers["newerSupersedes"].noul or 0.0) >= cfg.thresholds.contradict.act
    if decision == "act" and supersedes:
        if not run.dry_run:
            run.edit(b, {"op": "annotate", "links": [{"rel": "contradicts", "to": a.id}],
                         "data": data, "reason": "contradiction"})
            run.edit(a, {"op": "annotate", "links": [{"rel": "contradicts", "to": b.id}],
                         "reason": "contradiction"})
            run.tombstone(a, f"superseded by {b.id} (contradiction resolved)")
        gone.add(a.id)
        report.changed.append(a.id)
    else:
        run.flag([b], data, "contradiction needs review", [{"rel": "contradicts", "to": a.id}])
        run.flag([a], data, "contradiction needs review", [{"rel": "contradicts", "to": b.id}])
        report.flagged.extend([a.id, b.id])


# -- reflect -----------------------------------------------------------------------------


def reflect(run: Run) -> PassReport:
    """Reflect (§4.11): per mount and subject with at least ``dream.thresholds.reflect.
    minEpisodes`` episodic memories (occurrences included), one of them fresh and newer than
    the existing reflection, the writer drafts a reflection from the newest 12 episodes and the
    judge verifies it (``unsupported``, ``lostFact``, ``wrongDate``; no pair cap). A question
    at or above ``flagAt`` withholds the draft; otherwise a reflective memory is written in the
    oldest episode's mount and namespace, with the episodes' tags (minus ``occurrence``) and a
    ``derives-from`` link to each episode it was drawn from, its verification stored (reason
    ``reflection verified``), and an older reflection on the subject is tombstoned (``replaced
    by <newId>``). ``changed`` lists ``<mount>:<subject>`` keys. Without a writer the subject is
    counted and skipped (``fallback``)."""
    report = PassReport()
    cfg = run.config.thresholds.reflect
    newest_first = sorted(run.memories().values(),
                          key=lambda m: (m.updated_at, m.id), reverse=True)
    episodes: dict[str, list[Mem]] = {}
    reflections: dict[str, Mem] = {}
    for m in newest_first:
        if not m.subject:
            continue
        if m.type == "episodic":
            episodes.setdefault(_key(m), []).append(m)
        elif m.type == "reflective":
            reflections[_key(m)] = m
    for key in sorted(episodes):
        group = episodes[key]
        if len(group) < cfg.min_episodes or not any(run.is_fresh(m.id) for m in group):
            continue
        latest = max(group, key=lambda m: m.updated_at)
        existing = reflections.get(key)
        if existing is not None and existing.updated_at >= latest.updated_at:
            continue
        report.candidates += 1
        if not run.judging:
            continue
        subject = group[0].subject
        if run.writer.name == "none":
            report.skipped += 1
            report.fallback = True
            continue
        group.sort(key=lambda m: m.updated_at)
        evidence = group[-MAX_EVIDENCE:]
        sample = [{"date": m.updated_at[:10], "summary": m.raw_summary,
                   "content": m.content[:EPISODE_CONTENT]} for m in evidence]
        try:
            written = run.writer.write(REFLECT_INSTRUCTIONS,
                                       {"subject": subject, "episodes": sample},
                                       Reflection, "reflection")
        except (ModelUnavailable, StructuredOutputError, YnmError) as err:
            report.notes.append(f"reflect skipped {subject}: {err}")
            report.skipped += 1
            report.fallback = True
            for m in group:
                run.deferred.add(m.id)
            continue
        if written.usage is not None:
            report.usage = report.usage + written.usage
        sources = "\n".join(f"[{s['date']}] {s['summary']}: {s['content']}" for s in sample)
        j = run.ask(report, {"summary": written.value.content, "sources": sources}, VERIFY,
                    pair=False)
        if j is None:
            report.skipped += 1
            for m in group:
                run.deferred.add(m.id)
            continue
        scores = {q: j.answers[q].noul or 0.0 for q in VERIFY}
        flags = [q for q, p in scores.items() if p >= cfg.flag_at]
        report.notes.append(f"verify {subject}: " + " ".join(
            f"{q}={p:.2f}" for q, p in scores.items()))
        if flags:
            report.flagged.extend(m.id for m in group)
            report.notes.append(f"reflection for {subject} not written: "
                                f"{', '.join(flags)} flagged")
            continue
        if not run.dry_run:
            first = group[0]
            tags = list(dict.fromkeys(t for m in group for t in m.tags if t != OCCURRENCE))
            fields = {"op": "create", "type": "reflective", "level": first.state["level"],
                      "namespace": first.state["namespace"], "subject": subject,
                      "content": written.value.content, "summary": written.value.summary,
                      "tags": tags,
                      "links": [{"rel": "derives-from", "to": m.id} for m in evidence]}
            try:
                new = run.write(first.mount, fields)
            except Refused as err:
                report.notes.append(f"reflection for {subject} not written: {err}")
                continue
            run.write(first.mount, {
                "memoryId": new.memory_id, "op": "annotate", "type": "reflective",
                "level": first.state["level"], "namespace": first.state["namespace"],
                "tags": [], "links": [],
                "data": {"judgments": [run.stored("reflect", j, VERIFY, "act")]},
                "reason": "reflection verified"})
            if existing is not None:
                run.tombstone(existing, f"replaced by {new.memory_id}")
        report.changed.append(key)
    return report


# -- normalise (no model) ----------------------------------------------------------------


def absolutise(content: str, recorded_at: str) -> str:
    """Replace relative dates in ``content`` by absolute ones, counted from ``recorded_at``
    (§4.12): with ``day(k)`` the UTC date ``YYYY-MM-DD`` of recordedAt + k days, today,
    yesterday and tomorrow become day(0), day(-1), day(1); last, next and this week become
    ``the week of`` day(-7), day(7), day(0); last and next month ``around`` day(-30), day(30);
    ``N day(s) ago`` day(-N). Any case matches.

    Example: at ``2026-09-29T12:00:00Z``, "Deployed yesterday and again 3 days ago; review next
    week." becomes "Deployed 2026-09-28 and again 2026-09-26; review the week of 2026-10-06."
    """
    from ynm.model.ranker import iso_to_ms

    base = datetime.fromtimestamp(iso_to_ms(recorded_at) / 1000, tz=UTC)

    def day(k: int) -> str:
        return (base + timedelta(days=k)).strftime("%Y-%m-%d")

    fixed = {"today": day(0), "yesterday": day(-1), "tomorrow": day(1),
             "last week": "the week of " + day(-7), "next week": "the week of " + day(7),
             "this week": "the week of " + day(0), "last month": "around " + day(-30),
             "next month": "around " + day(30)}

    def swap(match: re.Match[str]) -> str:
        if match.group(2) is not None:
            return day(-int(match.group(2)))
        return fixed[match.group(1).lower()]

    return RELATIVE.sub(swap, content)


def normalise(run: Run) -> PassReport:
    """Normalise (§4.12): each fresh live memory in scope whose content holds a relative date
    is a candidate; when :func:`absolutise` (from its current ``recordedAt``) changes the
    content, it is superseded with the fixed content and its current summary, nothing else
    added. Importance is not re-scored.

    Unlike the reference, which keeps the summary as it was, a summary holding a relative date
    is absolutised the same way: list, recall and context show the summary, and "Yesterday we
    decided ..." next to content saying "2026-11-30 we decided ..." would be wrong from the
    day after."""
    report = PassReport()
    search = RELATIVE.search
    for m in run.by_order(m for m in run.memories().values()
                          if m.id in run.fresh and search(m.content)):
        report.candidates += 1
        fixed = absolutise(m.content, m.current["recordedAt"])
        if fixed == m.content:
            continue
        if not run.dry_run:
            ttl = m.current.get("ttl") if m.type == "working" else None
            try:
                summary = m.current.get("summary")
                if summary:
                    summary = absolutise(summary, m.current["recordedAt"])
                run.edit(m, {"op": "supersede", "content": fixed,
                             "summary": summary, "subject": m.subject,
                             "ttl": ttl, "links": [{"rel": "supersedes", "to": m.id}]})
            except Refused as err:
                report.notes.append(f"{m.id} not normalised: {err}")
                continue
        report.changed.append(m.id)
    return report
