"""ISO 8601 durations as ynm uses them for ``ttl``.

Grammar (integers only; ``P`` and ``PT`` alone are invalid):
``^P(?!$)(\\d+Y)?(\\d+M)?(\\d+W)?(\\d+D)?(T(?=\\d)(\\d+H)?(\\d+M)?(\\d+S)?)?$``.
Arithmetic: a year is 365 days, a month 30 days, a week 7 days.
Source: reference/storage.md §1.2 and reference/algorithms.md §1.4.

A ttl given as input must also be longer than zero (:func:`ensure_ttl`): ``PT0S``, ``P0D``
or ``PT0M`` match the grammar, and the reference takes them, but a working memory with such a
ttl expires the moment it is written. Records already stored keep any ttl the grammar allows
(:func:`ensure_duration`), so a store written by the reference still reads.
"""

from __future__ import annotations

import re

DURATION_RE = re.compile(
    r"^P(?!$)(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?(?:T(?=\d)(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$"
)
DEFAULT_WORKING_TTL = "PT8H"
DURATION_EXAMPLES = "PT8H (8 hours), P30D (30 days), P1W or P1DT12H"


def is_duration(value: str) -> bool:
    """True when ``value`` matches the duration grammar above."""
    return DURATION_RE.match(value) is not None


def duration_ms(value: str) -> int:
    """Length of an ISO 8601 duration in milliseconds (Y=365 d, M=30 d, W=7 d).

    Raises:
        ValueError: ``value`` does not match the grammar.
    """
    m = DURATION_RE.match(value)
    if not m:
        raise ValueError(f"not an ISO 8601 duration: {value!r}; expected e.g. {DURATION_EXAMPLES}")
    y, mo, w, d, h, mi, s = (int(g) if g else 0 for g in m.groups())
    days = y * 365 + mo * 30 + w * 7 + d
    return ((days * 24 + h) * 3600 + mi * 60 + s) * 1000


def ensure_duration(value: str | None) -> str | None:
    """Return ``value`` (None passes) when it is an ISO 8601 duration.

    Raises:
        ValueError: ``must be an ISO 8601 duration in whole numbers (no fractions) such as PT8H (8 hours), ...`` (the
            validators' message, cli.md §1.3, with examples: :data:`DURATION_EXAMPLES`).
    """
    if value is not None and not is_duration(value):
        raise ValueError(f"must be an ISO 8601 duration in whole numbers (no fractions) such as {DURATION_EXAMPLES}")
    return value


def ensure_ttl(value: str | None) -> str | None:
    """Return ``value`` (None passes) when it is an ISO 8601 duration longer than zero: the
    check of every ttl given as input (remember, supersede, session start; the CLI flags and
    the MCP tools alike). Stricter than the reference, which takes ``PT0S``.

    Raises:
        ValueError: not a duration (:func:`ensure_duration`'s message), or one of no length
            (``PT0S``, ``P0D``, ``PT0M``): ``must be longer than zero: PT0S would expire the
            working memory at once; give one such as PT8H (8 hours), ...``.
    """
    if ensure_duration(value) is not None and duration_ms(value) == 0:
        raise ValueError(f"must be longer than zero: {value} would expire the working memory "
                         f"at once; give one such as {DURATION_EXAMPLES}")
    return value

