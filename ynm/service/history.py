"""One memory up close: its folded state with its links resolved (``ynm show``), and every
record of it in fold order with what each changed (``ynm history``).

Both read the cache of each mount (kept fresh from git first); neither writes.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from ynm.errors import UnknownMemory
from ynm.index.schema import state_sql
from ynm.model.jsonl import parse_line
from ynm.model.records import Record

# Fields a record may set, in the order a history line lists them.
_SCALARS = ("type", "namespace", "subject", "importance", "confidence", "pinned", "needsReview",
            "validFrom", "validTo", "ttl", "dataSchema")


def record_changes(record: Record) -> dict[str, Any]:
    """What one record sets or adds on its memory, as JSON-ready values keyed by field name:
    ``content``/``summary`` for a new version, the scalars it sets, ``tags`` and ``links`` it
    adds (a supersede's own ``supersedes`` link to its memory left out), ``data``, and the
    ``reason`` it gives. Empty lists and unset fields are left out.
    Source: the op table of seed 000 (which fields each op may change)."""
    obj = record.model_dump(by_alias=True, exclude_none=True)
    out: dict[str, Any] = {}
    if record.op in ("create", "supersede"):
        for key in ("summary", "content"):
            if key in obj:
                out[key] = obj[key]
    for key in _SCALARS:
        if key in obj and record.op != "purge-marker":
            out[key] = obj[key]
    if record.op == "supersede":
        # its link to the memory it replaces is the memory itself (the op says it): not listed
        obj["links"] = [link for link in obj.get("links", [])
                        if (link["rel"], link["to"]) != ("supersedes", record.memory_id)]
    for key in ("tags", "links"):
        if obj.get(key):
            out[key] = obj[key]
    if "data" in obj and record.op != "snapshot":
        out["data"] = obj["data"]
    if "reason" in obj:
        out["reason"] = obj["reason"]
    return out


def history(mounts: Iterable[Any], memory_id: str) -> list[dict[str, Any]]:
    """Every record of ``memory_id`` in every mount that holds one, in fold order (the order
    of ``Record.sort_key``): ``[{recordId, op, recordedAt, actor, mount, shard, changes}]``,
    ``changes`` as :func:`record_changes` (type and namespace only where they change; a
    supersede that drops the data, dataSchema, validFrom or validTo of the version before it
    has that key as null), ``session``/``source`` when the record has them.
    A purged memory shows its purge marker; an orphan shows its records.

    Raises:
        UnknownMemory: no mount has a record of it.
    """
    found: list[tuple[Record, str, str]] = []
    for mount in mounts:
        cache = mount.fresh_cache()
        for ref, line in cache.conn.execute(
                "SELECT s.ref, ynm_unpack(r.line) FROM records AS r JOIN shard_refs AS s "
                "ON s.shard = r.shard WHERE r.memory_id = ?", (memory_id,)):
            found.append((parse_line(line), mount.id, ref))
    if not found:
        raise UnknownMemory(memory_id)
    found.sort(key=lambda f: f[0].sort_key)
    out = []
    placed: tuple[str, str] | None = None  # (type, namespace) so far: listed when they change
    before: dict[str, Any] | None = None  # the current version's record so far (JSON keys)
    for record, mount_id, ref in found:
        entry: dict[str, Any] = {
            "recordId": record.id, "op": record.op, "recordedAt": record.recorded_at,
            "actor": record.provenance.actor, "mount": mount_id,
            "shard": ref.removeprefix("refs/notes/ynm/"),
        }
        if record.provenance.session:
            entry["session"] = record.provenance.session
        if record.provenance.source:
            entry["source"] = record.provenance.source
        changes = record_changes(record)
        if record.op in ("create", "supersede"):
            version = record.model_dump(by_alias=True, exclude_none=True)
            if record.op == "supersede" and before is not None:
                for key in ("data", "dataSchema", "validFrom", "validTo"):
                    if key in before and key not in version:
                        changes[key] = None
            if before is None or record.op == "supersede":
                before = version
        if placed == (record.type, record.namespace) or record.op == "purge-marker":
            changes.pop("type", None)
            changes.pop("namespace", None)
        else:
            placed = (record.type, record.namespace)
        entry["changes"] = changes
        out.append(entry)
    return out


def show(mounts: Iterable[Any], memory_id: str, now_ms: int | None = None) -> dict[str, Any]:
    """The folded memory (``ynm list``'s shape, with ``mount`` and ``summary``) plus ``linked``: each link's
    target with its summary (``null`` when no mount has it), and ``linkedFrom``: the live
    memories of the same mount whose links point at it, as ``{memoryId, rel, summary}``.
    With ``now_ms`` (ms since the epoch), ``expired: true`` as ``list`` gives it: working
    memory whose ttl ran out by then that no sweep has forgotten yet
    (:func:`ynm.service.recall.is_expired`).

    Raises:
        UnknownMemory: no mount folds a memory of this id (an orphan counts as unknown).
    """
    mounts = list(mounts)
    for mount in mounts:
        cache = mount.fresh_cache()
        # the summary shown for it, as list gives it: the current record's, or one derived
        # from its content when the record has none (an imported record may not)
        row = cache.conn.execute(
            f"SELECT {state_sql()}, summary, tombstoned, expires_at FROM memories "
            "WHERE memory_id = ?", (memory_id,)).fetchone()
        if row is None:
            continue
        state = json.loads(row[0])
        out = {**state, "mount": mount.id, "summary": row[1]}
        if now_ms is not None:
            from ynm.service.recall import is_expired

            if is_expired({"tombstoned": row[2], "expires_at": row[3]}, now_ms):
                out["expired"] = True
        # A supersede's link to the memory it replaces is the memory itself: not listed.
        out["linked"] = [{**link, "summary": _summary(mounts, link["to"])}
                         for link in state.get("links", []) if link["to"] != memory_id]
        out["linkedFrom"] = [
            {"memoryId": mid, "rel": rel, "summary": summary}
            for mid, rel, summary in cache.conn.execute(
                "SELECT m.memory_id, json_extract(l.value, '$.rel'), m.summary "
                "FROM memories m, json_each(ynm_unpack(m.extra), '$.links') l "
                "WHERE m.tombstoned = 0 AND json_extract(l.value, '$.to') = ? "
                "AND m.memory_id != ? ORDER BY m.updated_ms DESC, m.memory_id DESC", (memory_id, memory_id))
        ]
        return out
    raise UnknownMemory(memory_id)


def _summary(mounts: list[Any], memory_id: str) -> str | None:
    for mount in mounts:
        row = mount.cache.conn.execute(
            "SELECT summary FROM memories WHERE memory_id = ?", (memory_id,)).fetchone()
        if row is not None:
            return row[0]
    return None
