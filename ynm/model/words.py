"""Counts in words, for every message that prints one (``1 record``, ``2 records``), and the
kind of a JSON value in words, for a message that says what it got (``got an array``).

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


def json_kind(value: object) -> str:
    """What a parsed JSON value is, in words, for a message that says what was given instead
    of what was expected: ``an object``, ``an array``, ``a string``, ``a number``, ``true``,
    ``false``, ``null``."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    return "a number"
