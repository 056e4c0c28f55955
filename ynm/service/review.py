"""Why a memory is flagged for review: the flag's reason and the judgment it carries.

A flag is an annotate ``{needsReview: true, reason, data}`` (reference/algorithms.md §4.15);
the folded state keeps only ``needsReview``, so the reason and data are read back from the
newest flagging record in the mount's cache.
"""

from __future__ import annotations

import json
from typing import Any

__all__ = ["why_line", "with_reasons"]


def with_reasons(mounts: list[Any], memories: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Add ``review: {reason, data, at}`` (the newest annotate that set ``needsReview: true``;
    ``reason``/``data`` None when it had none) to each memory of ``memories`` (folded states
    with their ``mount``); one query per mount. Returns ``memories``."""
    by_mount: dict[str, list[dict[str, Any]]] = {}
    for m in memories:
        by_mount.setdefault(m["mount"], []).append(m)
    for mount in mounts:
        wanted = by_mount.get(mount.id)
        if not wanted:
            continue
        flags: dict[str, dict[str, Any]] = {}
        for memory_id, line in mount.cache.conn.execute(
                "SELECT memory_id, ynm_unpack(line) FROM records WHERE op = 'annotate' "
                "AND memory_id IN (SELECT value FROM json_each(?)) ORDER BY recorded_at, id",
                (json.dumps([m["memoryId"] for m in wanted]),)):
            obj = json.loads(line)
            if obj.get("needsReview") is True:
                flags[memory_id] = {"reason": obj.get("reason"), "data": obj.get("data"),
                                    "at": obj.get("recordedAt")}
        for m in wanted:
            if m["memoryId"] in flags:
                m["review"] = flags[m["memoryId"]]
    return memories


def _level_meaning(judgment: dict[str, Any], qid: str, answer: dict[str, Any]) -> str | None:
    """What a score answer's level means: the stored question's criterion at that level
    (reference/algorithms.md §4.16, e.g. ``relation`` 2 is ``the same thing``), else the
    answer's ``legend``, else None."""
    level = answer.get("score")
    criteria = ((judgment.get("questions") or {}).get(qid) or {}).get("criteria")
    if isinstance(criteria, list) and isinstance(level, int) and 0 <= level < len(criteria):
        return str(criteria[level])
    legend = answer.get("legend")
    return str(legend) if legend else None


def why_line(memory: dict[str, Any]) -> str | None:
    """One line saying why ``memory`` is flagged: ``<reason>: <answers>; pair with <id>``,
    e.g. ``possible duplicate: sameFact 0.72, relation 1 (same subject, different claims),
    contradicts 0.10; pair with 01K...`` (noul answers with two decimals, a score's level and
    what the level means, a choice's key). None without a flag,
    or for a flag that gives no reason, judgment or pair (``ynm annotate --needs-review``)."""
    review = memory.get("review")
    if not review:
        return None
    parts = []
    data = review.get("data") or {}
    judgments = data.get("judgments") if isinstance(data, dict) else None
    for j in judgments or []:
        for qid, a in (j.get("answers") or {}).items():
            if a.get("noul") is not None:
                parts.append(f"{qid} {a['noul']:.2f}")
            elif a.get("score") is not None:
                meaning = _level_meaning(j, qid, a)
                parts.append(f"{qid} {a['score']}" + (f" ({meaning})" if meaning else ""))
            elif a.get("choice") is not None:
                parts.append(f"{qid} {a['choice']}")
        if j.get("model"):
            parts.append(f"by {j['model']}")
    pair = data.get("pair") if isinstance(data, dict) else None
    others = [p for p in pair or [] if p != memory["memoryId"]]
    if not (review.get("reason") or parts or others):
        return None  # flagged by hand without a reason: nothing to say
    line = review.get("reason") or "flagged"
    if parts:
        line += ": " + ", ".join(parts)
    if others:
        line += f"; pair with {', '.join(others)}"
    return line
