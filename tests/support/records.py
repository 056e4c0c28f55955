"""Builders for record dicts and records used by the model tests.

``make_record(**overrides)`` returns a valid create record as a camelCase dict (what a JSONL line
decodes to). Overrides replace keys; pass ``DROP`` as a value to remove a key entirely.
"""

from __future__ import annotations

import itertools
from typing import Any

from ynm.model.ids import iso_ms, new_ulid

DROP = object()
BASE_MS = 1_788_220_800_000  # 2026-09-01T00:00:00.000Z
_counter = itertools.count(1)


def ulid(ms: int = BASE_MS, seq: int | None = None) -> str:
    """A deterministic ULID: time part ``ms``, random part the integer ``seq`` (fresh if None)."""
    n = next(_counter) if seq is None else seq
    return new_ulid(ms, lambda k: n.to_bytes(k, "big"))


def at(seconds: float) -> str:
    """``recordedAt`` string ``seconds`` after 2026-09-01T00:00:00.000Z."""
    return iso_ms(BASE_MS + round(seconds * 1000))


def make_record(**overrides: Any) -> dict[str, Any]:
    """A valid ``create`` record dict (storage.md §8 "Record schema" fixture), with overrides.

    ``memoryId`` defaults to ``id`` (also when only ``id`` is overridden).
    """
    rid = overrides.get("id") or ulid()
    obj: dict[str, Any] = {
        "v": 1,
        "id": rid,
        "memoryId": rid,
        "op": "create",
        "type": "semantic",
        "level": "personal",
        "namespace": "user/david",
        "content": "Root commit is the anchor.",
        "recordedAt": "2026-09-01T10:00:00.000Z",
        "provenance": {"actor": "test"},
    }
    obj.update(overrides)
    return {k: v for k, v in obj.items() if v is not DROP}
