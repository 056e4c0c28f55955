"""Counts in words, for every message that prints one (``1 record``, ``2 records``).

Pure and imports nothing, so the CLI's output path loads it for free. Where the reference
fixes a template with a literal plural (``imported <n> record(s)``, ``<n> shard(s)`` in
``ynm status``, ``<n> memories indexed``: reference/cli.md §12), the caller keeps the
reference's text instead.
"""

from __future__ import annotations


def counted(n: int, one: str, many: str | None = None) -> str:
    """``n`` and the noun that agrees with it: ``one`` when ``n == 1``, else ``many``
    (default ``one + "s"``; give it for an irregular plural: ``counted(2, "memory",
    "memories")``). Zero takes the plural, as in English (``0 records``)."""
    return f"{n} {one if n == 1 else many or one + 's'}"
