"""ISO 8601 durations as ynm uses them for ``ttl``.

Grammar (integers only; ``P`` and ``PT`` alone are invalid):
``^P(?!$)(\\d+Y)?(\\d+M)?(\\d+W)?(\\d+D)?(T(?=\\d)(\\d+H)?(\\d+M)?(\\d+S)?)?$``.
Arithmetic: a year is 365 days, a month 30 days, a week 7 days.
Source: reference/storage.md §1.2 and reference/algorithms.md §1.4.
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
        ValueError: ``must be an ISO 8601 duration such as PT8H (8 hours), ...`` (the
            validators' message, cli.md §1.3, with examples: :data:`DURATION_EXAMPLES`).
    """
    if value is not None and not is_duration(value):
        raise ValueError(f"must be an ISO 8601 duration such as {DURATION_EXAMPLES}")
    return value

