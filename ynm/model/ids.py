"""Record ids (ULIDs) and the monotonic clock that stamps ``id`` and ``recordedAt``.

Source: reference/storage.md §1.5 (ULIDs) and §1.11 (service stamping).
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Callable
from datetime import datetime, timezone

ULID_RE = re.compile(r"^[0-7][0-9A-HJKMNP-TV-Z]{25}$")
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def is_ulid(value: object) -> bool:
    """True for a 26-character uppercase Crockford ULID whose first character is 0..7.

    Lowercase ULIDs, legal in Crockford base 32, are rejected as the reference does (§7.25).
    """
    return isinstance(value, str) and ULID_RE.match(value) is not None


def new_ulid(ms: int, random_bytes: Callable[[int], bytes] = os.urandom) -> str:
    """A ULID whose first ten characters encode ``ms`` (milliseconds since the epoch, 48 bits)
    and whose last sixteen encode 80 random bits."""
    from ulid import ULID  # imported on first write: python-ulid costs ~50 ms to import

    return str(ULID.from_bytes(ms.to_bytes(6, "big") + random_bytes(10)))


def ulid_time(value: str) -> int:
    """Milliseconds since the epoch encoded in a ULID's first ten characters."""
    out = 0
    for ch in value[:10]:
        out = out * 32 + _CROCKFORD.index(ch)
    return out


def iso_ms(ms: int) -> str:
    """``YYYY-MM-DDTHH:mm:ss.sssZ`` for ``ms`` since the epoch (what JavaScript's
    ``Date.prototype.toISOString`` writes; every ynm writer stamps this form)."""
    dt = datetime.fromtimestamp(ms / 1000, tz=timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


class Clock:
    """A clock that never goes backwards within a process: each stamp is
    ``max(wall clock, previous + 1)`` milliseconds, so ids and ``recordedAt`` strictly increase.

    Args:
        wall_ms: returns the wall-clock time in ms since the epoch (injectable for tests).
    """

    def __init__(self, wall_ms: Callable[[], int] | None = None) -> None:
        self._wall_ms = wall_ms or (lambda: time.time_ns() // 1_000_000)
        self._last = 0

    def now_ms(self) -> int:
        """The next strictly increasing timestamp, in ms since the epoch."""
        t = max(self._wall_ms(), self._last + 1)
        self._last = t
        return t

    def stamp(self) -> tuple[str, str]:
        """A fresh ``(ulid, recordedAt)`` pair sharing one timestamp."""
        ms = self.now_ms()
        return new_ulid(ms), iso_ms(ms)
