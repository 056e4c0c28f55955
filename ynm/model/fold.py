"""The fold: a memory is every record sharing its ``memoryId``, applied in order.

Rules (seed 000 "fold"; reference/storage.md §2):

- Records apply in ``(recordedAt, id)`` order, compared as strings, whatever their line or shard
  order. A record id met twice is applied once.
- The base is the first ``create`` *or* ``supersede`` in that order. Records sorted before the
  base still count as versions and add their tags and links (placed first), but fill only the
  fields the base *record* left unset; an early tombstone hides a create-based memory and is
  ignored before a supersede base.
- After the base: ``supersede`` replaces content (``current``), type and namespace, sets the
  scalars it carries, adds tags/links and revives; ``annotate`` adds and sets but never revives;
  ``tombstone`` hides (its reason kept, even after a revive); a second ``create`` adds tags and
  links only; ``purge-marker`` and ``snapshot`` only count.
- A pure dream mark (an annotate whose only payload is ``data: {dreamed: <string>}``) counts as a
  version but leaves ``updatedAt`` alone (storage.md §2.6).
- Records whose memory never gets a base are orphans: kept and reported, never shown.
- A plain fold ignores ``snapshot`` lines entirely; :func:`fold_with_snapshot` starts from one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from ynm.model.records import Link, Record, normalize_datetime, union_links

DEFAULT_IMPORTANCE = 0.5
DEFAULT_CONFIDENCE = 1.0
_SCALARS = ("importance", "confidence", "pinned", "needs_review")


@dataclass(slots=True)
class Memory:
    """The folded state of one memory (reference/storage.md §2.1).

    ``current`` is the record holding the content (the base or the latest supersede); content,
    summary, data, dataSchema, ttl, validFrom/validTo and provenance are read from it.
    ``created_at``/``updated_at`` are ``recordedAt`` values (canonical UTC); ``versions``
    counts folded records.
    """

    memory_id: str
    current: Record
    type: str
    level: str
    namespace: str
    subject: str | None
    tags: list[str]
    links: list[Link]
    importance: float
    confidence: float
    pinned: bool
    needs_review: bool
    tombstoned: bool
    created_at: str
    updated_at: str
    versions: int
    tombstone_reason: str | None = None
    dreamed: str | None = None

    def copy(self) -> Memory:
        """A copy safe to mutate (lists copied; records are immutable and shared)."""
        return Memory(
            self.memory_id, self.current, self.type, self.level, self.namespace, self.subject,
            list(self.tags), list(self.links), self.importance, self.confidence, self.pinned,
            self.needs_review, self.tombstoned, self.created_at, self.updated_at, self.versions,
            self.tombstone_reason, self.dreamed,
        )

    def expires_at_ms(self) -> int | None:
        """When this memory's ttl runs out, in milliseconds since the epoch: ``updatedAt +
        ttl`` of the current record for a ``working`` memory whose current record has a ttl;
        None for any other memory (it never expires). Expired means ``expires_at <= now``.
        Source: seed 001 (working memory expires ttl after its updatedAt; no other type
        expires), reference/algorithms.md §4.6 and §6."""
        ttl = self.current.ttl
        if self.type != "working" or not ttl:
            return None
        from ynm.model.durations import duration_ms
        from ynm.model.ranker import iso_to_ms

        try:
            return iso_to_ms(self.updated_at) + duration_ms(ttl)
        except ValueError:  # records are validated on read; a bad value never expires
            return None

    def to_obj(self) -> dict[str, Any]:
        """JSON shape of a folded memory (reference/cli.md §3.3), without ``mount``."""
        from ynm.model.jsonl import record_to_obj

        out: dict[str, Any] = {"memoryId": self.memory_id, "current": record_to_obj(self.current),
                               "type": self.type, "level": self.level, "namespace": self.namespace}
        if self.subject is not None:
            out["subject"] = self.subject
        out.update({
            "tags": list(self.tags),
            "links": [{"rel": link.rel, "to": link.to} for link in self.links],
            "importance": self.importance, "confidence": self.confidence, "pinned": self.pinned,
            "needsReview": self.needs_review, "tombstoned": self.tombstoned,
            "createdAt": self.created_at, "updatedAt": self.updated_at, "versions": self.versions,
        })
        if self.tombstone_reason is not None:
            out["tombstoneReason"] = self.tombstone_reason
        if self.dreamed is not None:
            out["dreamed"] = self.dreamed
        return out

    @classmethod
    def from_obj(cls, obj: dict[str, Any]) -> Memory:
        """Rebuild a memory from :meth:`to_obj` output (as carried by snapshot records).

        ``createdAt``/``updatedAt`` are normalised to canonical UTC like every record time.

        Raises:
            ValueError: the object is not a folded memory.
        """
        from ynm.model.jsonl import parse_obj

        try:
            return cls(
                memory_id=obj["memoryId"], current=parse_obj(obj["current"]), type=obj["type"],
                level=obj["level"], namespace=obj["namespace"], subject=obj.get("subject"),
                tags=list(obj.get("tags", [])),
                links=[Link.model_validate(x) for x in obj.get("links", [])],
                importance=obj.get("importance", DEFAULT_IMPORTANCE),
                confidence=obj.get("confidence", DEFAULT_CONFIDENCE),
                pinned=bool(obj.get("pinned", False)),
                needs_review=bool(obj.get("needsReview", False)),
                tombstoned=bool(obj.get("tombstoned", False)),
                created_at=normalize_datetime(obj["createdAt"]),
                updated_at=normalize_datetime(obj["updatedAt"]),
                versions=int(obj["versions"]), tombstone_reason=obj.get("tombstoneReason"),
                dreamed=obj.get("dreamed"),
            )
        except (KeyError, TypeError) as err:
            raise ValueError(f"not a folded memory: {err}") from None


@dataclass(slots=True)
class FoldResult:
    """``memories``: memoryId -> Memory (tombstoned included, flagged); ``orphans``: records
    whose memory has no base, grouped by memory in first-seen order, each group sorted."""

    memories: dict[str, Memory] = field(default_factory=dict)
    orphans: list[Record] = field(default_factory=list)


def sort_records(records: Iterable[Record]) -> list[Record]:
    """Records in fold order, ``(recordedAt, id)`` (storage.md §2.2, seed 000).

    ``recordedAt`` is held in canonical UTC (``YYYY-MM-DDTHH:MM:SS.sssZ``, normalised when the
    record is read), so comparing the strings compares the instants: a line written with an
    offset or another precision sorts where its instant is. The reference compares the text
    as written (storage.md §7.1); ynm deliberately differs.
    """
    return sorted(records, key=lambda r: (r.recorded_at, r.id))


def dreamed_of(r: Record) -> str | None:
    """The dream version an annotate records in ``data.dreamed`` (a string), else None."""
    if r.op == "annotate" and r.data is not None:
        value = r.data.get("dreamed")
        if isinstance(value, str):
            return value
    return None


def is_dream_mark(r: Record) -> bool:
    """A pure dream mark: an annotate whose data is exactly ``{dreamed: <string>}`` and which
    carries no tags, links, subject or scalar flags (storage.md §2.6; reason and provenance do
    not matter). It counts as a version but does not move ``updatedAt``."""
    return (
        dreamed_of(r) is not None
        and len(r.data or {}) == 1
        and not r.tags
        and not r.links
        and r.subject is None
        and r.importance is None
        and r.confidence is None
        and r.pinned is None
        and r.needs_review is None
    )


def _union_tags(first: list[str], second: Iterable[str]) -> list[str]:
    out = list(first)
    seen = set(out)
    for tag in second:
        if tag not in seen:
            seen.add(tag)
            out.append(tag)
    return out


def memory_from_base(r: Record) -> Memory:
    """Start a memory from its base record (the first create or supersede)."""
    return Memory(
        memory_id=r.memory_id, current=r, type=r.type, level=r.level, namespace=r.namespace,
        subject=r.subject, tags=list(r.tags), links=list(r.links),
        importance=DEFAULT_IMPORTANCE if r.importance is None else r.importance,
        confidence=DEFAULT_CONFIDENCE if r.confidence is None else r.confidence,
        pinned=bool(r.pinned), needs_review=bool(r.needs_review), tombstoned=False,
        created_at=r.recorded_at, updated_at=r.recorded_at, versions=1,
    )


def _set_scalars(m: Memory, r: Record) -> None:
    for name in _SCALARS:
        value = getattr(r, name)
        if value is not None:
            setattr(m, name, value)


def apply_record(m: Memory, r: Record) -> None:
    """Apply a record that sorts after the memory's base, in place (storage.md §2.4)."""
    m.versions += 1
    if not is_dream_mark(r):
        m.updated_at = r.recorded_at
    op = r.op
    if op == "supersede":
        m.current = r
        m.type = r.type
        m.namespace = r.namespace
        if r.subject is not None:
            m.subject = r.subject
        m.tags = _union_tags(m.tags, r.tags)
        m.links = union_links(m.links, r.links)
        _set_scalars(m, r)
        m.tombstoned = False
    elif op == "annotate":
        m.tags = _union_tags(m.tags, r.tags)
        m.links = union_links(m.links, r.links)
        if r.subject is not None:
            m.subject = r.subject
        _set_scalars(m, r)
        dreamed = dreamed_of(r)
        if dreamed is not None:
            m.dreamed = dreamed
    elif op == "tombstone":
        m.tombstoned = True
        m.tombstone_reason = r.reason
    elif op == "create":
        m.tags = _union_tags(m.tags, r.tags)
        m.links = union_links(m.links, r.links)
    # purge-marker and snapshot: counted only.


def apply_before(m: Memory, p: Record) -> None:
    """Apply a record that sorts before the memory's base, in place (storage.md §2.5).

    The base wins on every field the base *record* set; early tags and links go first; only a
    create base is hidden by an early tombstone. ``updatedAt`` stays the base's time.
    """
    m.versions += 1
    if p.recorded_at < m.created_at:
        m.created_at = p.recorded_at
    base = m.current
    if p.op in ("annotate", "create"):
        m.tags = _union_tags(list(p.tags), m.tags)
        m.links = union_links(list(p.links), m.links)
        if m.subject is None and p.subject is not None:
            m.subject = p.subject
        for name in _SCALARS:
            value = getattr(p, name)
            if value is not None and getattr(base, name) is None:
                setattr(m, name, value)
        if m.dreamed is None:
            m.dreamed = dreamed_of(p)
    elif p.op == "tombstone" and base.op != "supersede":
        m.tombstoned = True
        m.tombstone_reason = p.reason


def _fold_sorted(
    ordered: Iterable[Record],
    memories: dict[str, Memory],
    pending: dict[str, list[Record]],
) -> None:
    for r in ordered:
        if r.op == "snapshot":
            continue
        m = memories.get(r.memory_id)
        if m is not None:
            apply_record(m, r)
        elif r.op in ("create", "supersede"):
            m = memory_from_base(r)
            for p in sort_records(pending.pop(r.memory_id, ())):
                apply_before(m, p)
            memories[r.memory_id] = m
        else:
            pending.setdefault(r.memory_id, []).append(r)


def _dedupe(records: Iterable[Record]) -> list[Record]:
    seen: set[str] = set()
    out = []
    for r in records:
        if r.id not in seen:
            seen.add(r.id)
            out.append(r)
    return out


def fold(records: Iterable[Record]) -> FoldResult:
    """Fold records into memories, independent of input order.

    Returns a :class:`FoldResult`: memoryId -> Memory (tombstoned ones included and flagged)
    and the orphans. Snapshot records are skipped. Source: seed 000 fold; storage.md §2.3.
    """
    result = FoldResult()
    pending: dict[str, list[Record]] = {}
    _fold_sorted(sort_records(_dedupe(records)), result.memories, pending)
    result.orphans = [r for group in pending.values() for r in sort_records(group)]
    return result


def snapshot_data(result: FoldResult) -> dict[str, Any]:
    """The ``data`` of a snapshot record: ``{"memories": [...], "orphans": [...]}``.

    Orphans are carried so that a base arriving after the snapshot still folds exactly
    (storage.md §2.8, §7.12).
    """
    from ynm.model.jsonl import record_to_obj

    return {
        "memories": [m.to_obj() for m in result.memories.values()],
        "orphans": [record_to_obj(r) for r in result.orphans],
    }


def fold_with_snapshot(snapshot: Record, tail: Iterable[Record]) -> FoldResult:
    """Start from a snapshot's folded state and apply only the tail records that sort after it.

    Tail records at or before the snapshot are ignored, so this equals a full fold only when
    the snapshot already covers every record ordered before it (storage.md §2.8, §7.12). A
    snapshot without data starts empty.

    Raises:
        ValueError: the snapshot's data does not hold folded memories.
    """
    from ynm.model.jsonl import parse_obj

    memories: dict[str, Memory] = {}
    pending: dict[str, list[Record]] = {}
    data = snapshot.data or {}
    for obj in data.get("memories", []) or []:
        m = Memory.from_obj(obj)
        memories[m.memory_id] = m
    for obj in data.get("orphans", []) or []:
        r = parse_obj(obj)
        pending.setdefault(r.memory_id, []).append(r)
    cut = snapshot.sort_key
    later = sort_records(r for r in _dedupe(tail) if r.sort_key > cut)
    _fold_sorted(later, memories, pending)
    return FoldResult(memories, [r for group in pending.values() for r in sort_records(group)])


class Folder:
    """An incremental fold: add batches of records in any order and any split; the state always
    equals one full fold of everything added (storage.md §2.9).

    Only the memories a batch touches are folded again, from all their records.
    """

    def __init__(self) -> None:
        self._by_memory: dict[str, list[Record]] = {}
        self._seen: set[str] = set()
        self.memories: dict[str, Memory] = {}

    def add(self, records: Iterable[Record]) -> list[str]:
        """Add records (ids already seen are dropped). Returns the ids of the touched memories
        that exist after the re-fold, in first-touched order; orphan-only batches return []."""
        touched: dict[str, None] = {}
        for r in records:
            if r.id in self._seen:
                continue
            self._seen.add(r.id)
            self._by_memory.setdefault(r.memory_id, []).append(r)
            touched[r.memory_id] = None
        out = []
        for memory_id in touched:
            folded = fold(self._by_memory[memory_id]).memories.get(memory_id)
            if folded is None:
                self.memories.pop(memory_id, None)
            else:
                self.memories[memory_id] = folded
                out.append(memory_id)
        return out

    @property
    def orphans(self) -> list[Record]:
        """Records whose memory still has no base, grouped by memory, each group sorted."""
        return [
            r
            for memory_id, group in self._by_memory.items()
            if memory_id not in self.memories
            for r in sort_records(group)
            if r.op != "snapshot"
        ]
