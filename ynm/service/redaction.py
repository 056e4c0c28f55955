"""The redaction gate: distributed writes whose text matches a secret pattern are refused.

Patterns come from config ``redaction`` (default: the six of reference/cli.md §5.5). A pattern
starting ``(?i)`` is matched case-insensitively with that prefix removed. A hit refuses the
whole write; nothing is rewritten. Personal writes are not gated.

ynm checks every text a record carries (content, summary, subject, tags, data, dataSchema,
reason and the provenance strings); the reference checks only content, summary and data (and
only content and summary on import), which lets a secret through in a tag or a source URL.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from functools import lru_cache

from ynm.errors import Refused
from ynm.model.records import Record


@lru_cache(maxsize=32)
def _compile(patterns: tuple[str, ...]) -> tuple[tuple[str, re.Pattern[str]], ...]:
    out = []
    for p in patterns:
        flags = 0
        body = p
        if body.startswith("(?i)"):
            body, flags = body[4:], re.IGNORECASE
        out.append((p, re.compile(body, flags)))
    return tuple(out)


def matching_patterns(texts: Iterable[str | None], patterns: Sequence[str]) -> list[str]:
    """The patterns (as configured) that match any of ``texts``, in pattern order."""
    compiled = _compile(tuple(patterns))
    present = [t for t in texts if t]
    return [p for p, rx in compiled if any(rx.search(t) for t in present)]


def record_texts(record: Record) -> list[str | None]:
    """Every text of a record that the gate reads."""
    from ynm.model.jsonl import dumps_obj

    prov = record.provenance
    return [record.content, record.summary, record.subject, *record.tags,
            dumps_obj(record.data) if record.data is not None else None, record.data_schema,
            record.reason, prov.actor, prov.client, prov.session, prov.source, prov.tool]


def check_record(record: Record, patterns: Sequence[str]) -> None:
    """Refuse a record when any of its texts matches (see :func:`check`)."""
    check(record_texts(record), patterns)


def check(texts: Iterable[str | None], patterns: Sequence[str]) -> None:
    """Refuse when any pattern matches.

    Raises:
        Refused: ``refused: content matches <n> redaction pattern[s]: <p>, <p>`` (exit 2,
            reference/cli.md §2).
    """
    hits = matching_patterns(texts, patterns)
    if hits:
        noun = "pattern" if len(hits) == 1 else "patterns"
        raise Refused(f"refused: content matches {len(hits)} redaction {noun}: {', '.join(hits)}")
