"""The context block: pinned memories first, then ranked ones, packed into a token budget.

Source: reference/algorithms.md §3.3 and reference/cli.md §3.4, §4.3.

- header ``## Memory\\n``; one line per memory:
  ``- (<type>[, pinned]) <summary or first content line>[ [tag1, tag2]]``;
- tokens are estimated as ``ceil(length / 4)`` per line (length in UTF-16 units, as the
  reference counts), the header counted first;
- pinned memories go in importance order (then newest); the first that does not fit ends the
  pinned phase (``truncated``), but ranked memories may still fill what is left;
- ranked memories follow in score order, skipping those already in; the first that does not
  fit stops packing;
- memories tagged ``occurrence`` never enter, pinned or not;
- a personal memory and its promoted copy (a distributed memory that ``derives-from`` it,
  reference/cli.md §4.16) are one memory to the reader: when both are candidates only the
  distributed copy enters, at its own place (the copy is what the team shares and is kept
  current; showing both spends the budget twice on one fact);
- nothing packed gives ``{"markdown": "", "included": [], "tokens": 0, ...}``: never a bare
  heading.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from ynm.model.records import OCCURRENCE_TAG, js_length

HEADER = "## Memory\n"
DEFAULT_BUDGET_TOKENS = 1500


@dataclass(frozen=True, slots=True)
class Entry:
    """A memory as the block shows it."""

    memory_id: str
    type: str
    pinned: bool
    summary: str
    content: str
    tags: tuple[str, ...]
    level: str = ""
    derives_from: tuple[str, ...] = ()  # the ids this memory's ``derives-from`` links point to


def estimate_tokens(text: str) -> int:
    """About four characters per token: ``ceil(length / 4)``."""
    return math.ceil(js_length(text) / 4)


def line_of(e: Entry) -> str:
    """``- (<type>[, pinned]) <summary or first content line>[ [tags]]``."""
    text = e.summary or (e.content.split("\n", 1)[0] if e.content else "")
    tags = f" [{', '.join(e.tags)}]" if e.tags else ""
    return f"- ({e.type}{', pinned' if e.pinned else ''}) {text}{tags}"


def pack(pinned: Iterable[Entry], ranked: Iterable[Entry], budget_tokens: int) -> dict[str, Any]:
    """Pack entries into ``{"markdown", "included", "tokens", "truncated"}`` (cli.md §3.4).

    ``pinned`` must already be in importance-then-newest order and ``ranked`` in score order.
    A personal entry that a distributed entry among ``pinned`` or ``ranked`` ``derives-from``
    (its promoted copy) is left out: the copy stands for it.
    """
    pinned, ranked = list(pinned), list(ranked)
    copied = {to for e in (*pinned, *ranked) if e.level == "distributed"
              for to in e.derives_from}
    tokens = estimate_tokens(HEADER)
    lines: list[str] = []
    included: list[str] = []

    def take(entries: Iterable[Entry]) -> bool:
        """Add entries until one does not fit; True when one did not."""
        nonlocal tokens
        for e in entries:
            if e.memory_id in included or OCCURRENCE_TAG in e.tags:
                continue
            if e.level == "personal" and e.memory_id in copied:
                continue
            line = line_of(e)
            cost = estimate_tokens(line)
            if tokens + cost > budget_tokens:
                return True
            lines.append(line)
            included.append(e.memory_id)
            tokens += cost
        return False

    # A pinned memory that does not fit ends the pinned phase; ranked ones may still fill.
    truncated = take(pinned)
    truncated = take(ranked) or truncated
    if not lines:
        return {"markdown": "", "included": [], "tokens": 0, "truncated": truncated}
    return {"markdown": HEADER + "\n".join(lines) + "\n", "included": included,
            "tokens": tokens, "truncated": truncated}
