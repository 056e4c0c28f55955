"""The ``none`` writer: the no-model floor of the writer seam (reference/algorithms.md §4.17).

It never writes: every call raises :class:`ynm.dream.seams.ModelUnavailable`, and the passes
take their fallbacks (dedupe flags or links instead of merging, reflect counts and skips; both
report ``fallback: true``, §4.18).
"""

from __future__ import annotations

from typing import Any

from ynm.dream.seams import ModelUnavailable, T, Written

__all__ = ["NoneWriter"]


class NoneWriter:
    """A :class:`ynm.dream.seams.Writer` named ``none`` that always raises ModelUnavailable."""

    name = "none"

    def write(self, instructions: str, state: Any, schema: type[T],
              schema_name: str | None = None) -> Written[T]:
        """Raises:
            ModelUnavailable: always (``no writer configured (writer none)``)."""
        raise ModelUnavailable("no writer configured (writer none)")
