"""The recall ranker: a weighted sum of relevance, recency, importance and pinned.

Constants are seed 001's and are not configuration:

- recency = ``0.5 ** (age_days / half_life)`` with half-lives working 1, episodic 14,
  semantic 180, reflective 90 days; procedural and reference never decay (recency 1);
  age is measured from ``updatedAt`` and never negative;
- weights with text: relevance 0.6, recency 0.2, importance 0.15, pinned 0.05;
  filter only: relevance 0, recency 0.55, importance 0.35, pinned 0.1.

Ties within a mount go to the larger memoryId; across mounts to the newer ``updatedAt``
(reference/algorithms.md §2.5).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from ynm.model.records import datetime_ms

HALF_LIFE_DAYS: dict[str, float | None] = {
    "working": 1,
    "episodic": 14,
    "semantic": 180,
    "procedural": None,
    "reflective": 90,
    "reference": None,
}
DAY_MS = 86_400_000


@dataclass(frozen=True, slots=True)
class Weights:
    """Weights of the four score terms."""

    relevance: float
    recency: float
    importance: float
    pinned: float

    def to_obj(self) -> dict[str, float]:
        """``{relevance, recency, importance, pinned}``."""
        return {"relevance": self.relevance, "recency": self.recency,
                "importance": self.importance, "pinned": self.pinned}


TEXT_WEIGHTS = Weights(relevance=0.6, recency=0.2, importance=0.15, pinned=0.05)
FILTER_WEIGHTS = Weights(relevance=0.0, recency=0.55, importance=0.35, pinned=0.1)


@dataclass(frozen=True, slots=True)
class Score:
    """A scored memory's parts: relevance, recency and importance in 0..1, pinned 0 or 1."""

    relevance: float
    recency: float
    importance: float
    pinned: int
    total: float
    weights: Weights

    def explain(self) -> dict[str, object]:
        """``--explain`` shape: ``{relevance, recency, importance, pinned, total, weights}``."""
        return {"relevance": self.relevance, "recency": self.recency,
                "importance": self.importance, "pinned": self.pinned, "total": self.total,
                "weights": self.weights.to_obj()}


def iso_to_ms(value: str) -> int:
    """Milliseconds since the epoch of an ISO 8601 date-time (``Z`` or offset, or a bare
    date), by the same rule as every date-time ynm reads (:func:`ynm.model.records.datetime_ms`).

    Raises:
        ValueError: not an ISO 8601 date-time.
    """
    return datetime_ms(value)


def recency(memory_type: str, updated_at_ms: int, now_ms: int) -> float:
    """``0.5 ** (age_days / half_life)``, or 1 for types without a half-life (seed 001)."""
    half_life = HALF_LIFE_DAYS.get(memory_type)
    if half_life is None:
        return 1.0
    age_days = max(0.0, (now_ms - updated_at_ms) / DAY_MS)
    return math.exp(-math.log(2) * age_days / half_life)


def score(
    *,
    relevance: float,
    memory_type: str,
    updated_at_ms: int,
    importance: float,
    pinned: bool,
    has_text: bool,
    now_ms: int,
) -> Score:
    """Score one candidate with seed 001's weights (text or filter-only)."""
    w = TEXT_WEIGHTS if has_text else FILTER_WEIGHTS
    rec = recency(memory_type, updated_at_ms, now_ms)
    pin = 1 if pinned else 0
    total = w.relevance * relevance + w.recency * rec + w.importance * importance + w.pinned * pin
    return Score(relevance, rec, importance, pin, total, w)
