"""``Queue``: send records to ynm, and keep the ones it cannot take in a store until it can
(seed 003_b7c8dac142c7aed9.txt, Queue, Queued; ADR-008): an outage of ynm loses nothing and
never stops the program."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from typing import Any

from ynm.client.memory import Memory, Rejected, Unavailable
from ynm.client.record import Record
from ynm.client.stores import QueueStore

QUEUE_CAP = 1000
"""Seed 003 ``QueueCap``: past it the oldest records are dropped, so a ynm that never comes
back cannot fill the store."""

CLAIM_TTL = timedelta(minutes=5)
"""Seed 003 ``ClaimTTL``: how long a claim on a queued record holds; a worker that died
mid-send leaves its claim behind, and after this another may retake the record."""

QUEUE_PREFIX = "memory/queue/"
"""Seed 003 ``QueuePrefix``: where queued writes live, one document per record keyed by a ULID,
so the keys sort oldest first."""

REFUSED_PREFIX = "memory/refused/"
"""Where a record ynm refused for good is moved (same ULID, the document plus ``error``, the
reason, without a claim): refused input, or no mount of its level where it writes (see
:class:`~ynm.client.memory.Rejected`). Kept for an operator (``ynm outbox list``, ``drop``),
never retried, never blocking the queue."""

_LOG = logging.getLogger("ynm.client")


def _iso(t: datetime) -> str:
    return t.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _parse_time(text: str) -> datetime:
    return datetime.fromisoformat(text)


@dataclass
class Queued:
    """The document for one record waiting to be sent (seed 003, Queued); stored as JSON
    ``{"record", "queued", "attempts", "claimedBy", "claimedAt"}``, the last two left out
    when no one holds a claim.

    Attributes:
        record: the record.
        queued: when it was first queued (UTC).
        attempts: sends tried, including one in flight.
        claimed_by: the owner of the worker sending it now, or "".
        claimed_at: when that worker claimed it, or None.
        target: the store it is meant for (``repo:<root>``, ``user``, ``http:<endpoint>``:
            see :attr:`ynm.client.memory.YnmCLI.target`), stored as ``target`` (ours, not in
            the seed's document); "" for a document without one, which any memory may send.
    """

    record: Record
    queued: datetime
    attempts: int = 0
    claimed_by: str = ""
    claimed_at: datetime | None = None
    target: str = ""

    def to_json(self) -> str:
        """The document's JSON text."""
        doc: dict[str, Any] = {"record": self.record.to_json(), "queued": _iso(self.queued),
                               "attempts": self.attempts}
        if self.target:
            doc["target"] = self.target
        if self.claimed_by:
            doc["claimedBy"] = self.claimed_by
        if self.claimed_at is not None:
            doc["claimedAt"] = _iso(self.claimed_at)
        return json.dumps(doc, ensure_ascii=False, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> Queued:
        """Parse a document.

        Raises:
            ValueError: not JSON, or a field missing or of the wrong kind.
            TypeError: not a JSON object holding a ``record`` object.
            ynm.errors.InvalidInput: a record that breaks the rules of ``ynm remember``.
        """
        doc = json.loads(text)
        if not isinstance(doc, dict) or not isinstance(doc.get("record"), dict):
            raise TypeError("not a queued document")
        claimed_at = doc.get("claimedAt")
        return cls(record=Record.from_json(doc["record"]), queued=_parse_time(doc["queued"]),
                   attempts=int(doc.get("attempts", 0)), claimed_by=doc.get("claimedBy") or "",
                   claimed_at=_parse_time(claimed_at) if claimed_at else None,
                   target=doc.get("target") or "")


def _new_ulid() -> Callable[[], str]:
    from ynm.model.ids import Clock

    clock = Clock()
    return lambda: clock.stamp()[0]


class Queue:
    """Sends records to ``memory`` and keeps the ones it cannot in ``store`` until it can
    (seed 003, Queue). Records go oldest first; each is claimed with a conditional write
    before it is sent, so two workers sharing a store never send the same one.

    Args:
        memory: a :class:`~ynm.client.memory.Memory` (``YnmCLI``, ``YnmHTTP``), or None when
            ynm was not detected: every record is queued until a later run has a memory.
        store: a :class:`~ynm.client.stores.QueueStore`, e.g. ``SQLQueueStore(url)``.
        owner: this process, unique among the workers sharing the store.
        cap: the most records kept queued (default :data:`QUEUE_CAP`).
        claim_ttl: how long a claim holds (default :data:`CLAIM_TTL`).
        now: the clock, returning an aware UTC datetime (for tests).
        new_id: returns a new ULID for each queued record (default: strictly increasing
            within the process).
        log: the logger for dropped and refused records (default ``ynm.client``).
        target: the store the records are meant for (default ``memory.target``; without a
            memory, ``repo:<root>`` of the current directory's repository, else ``user``).
            Each queued record keeps it, and :meth:`flush` sends a record only through a
            memory of the same target, so one queue file shared by several repositories
            never delivers a record into the wrong one.
    """

    def __init__(self, memory: Memory | None, store: QueueStore, owner: str, *,
                 cap: int = QUEUE_CAP, claim_ttl: timedelta = CLAIM_TTL,
                 now: Callable[[], datetime] | None = None,
                 new_id: Callable[[], str] | None = None,
                 log: logging.Logger | None = None, target: str | None = None) -> None:
        if not owner:
            raise ValueError("owner must name this worker")
        if cap < 1:
            raise ValueError("cap must be at least 1")
        self.memory = memory
        self.store = store
        self.owner = owner
        self.cap = cap
        self.claim_ttl = claim_ttl
        self.now = now or (lambda: datetime.now(UTC))
        self.new_id = new_id or _new_ulid()
        self.log = log or _LOG
        self.target = target or _target_of(memory)
        self.sent = 0  # records this queue delivered, directly or from the store
        self.refused = 0  # records ynm refused for good, moved aside
        self.stopped: str | None = None
        """Why the last :meth:`flush` stopped with records left (ynm's message for the
        outage, or that there is no memory); None when it went through the queue."""

    def remember(self, record: Record) -> str:
        """Send ``record`` behind anything already queued: flush first, and send directly only
        when nothing is left queued, so records never jump the queue; queue it when it cannot
        be sent.

        Returns:
            ``"sent"``, ``"queued"``, or ``"refused"`` (ynm refused it for good; it is kept
            under :data:`REFUSED_PREFIX` with the reason, and logged). A record without
            ``valid_from`` is sent with the time of this call, whenever it is sent.

        Raises:
            TypeError: ``record`` is not a :class:`Record` (an invalid one cannot be built).
            Exception: whatever the store raises: the record could not even be queued. Never
                because ynm is down.
        """
        if not isinstance(record, Record):
            raise TypeError(f"expected a Record, got {type(record).__name__}")
        handed = self.now()
        if self.memory is not None and self.flush() == 0:
            try:
                self.memory.remember(_with_time(record, handed))
                self.sent += 1
                return "sent"
            except Unavailable as err:
                self.log.info("ynm is unavailable, queuing the record: %s", err)
            except Rejected as err:
                key = REFUSED_PREFIX + self.new_id()
                doc = Queued(record=record, queued=handed, attempts=1, target=self.target)
                self.store.create(key, _with_error(doc.to_json(), str(err)))
                self.refused += 1
                self.log.warning("ynm refused a record, kept as %s: %s", key, err)
                return "refused"
        key = QUEUE_PREFIX + self.new_id()
        if not self.store.create(key, Queued(record=record, queued=handed,
                                             target=self.target).to_json()):
            raise RuntimeError(f"queue key {key} already exists: new_id must give unique ids")
        self._trim()
        return "queued"

    def _trim(self) -> None:
        keys = self.store.keys(QUEUE_PREFIX)
        excess = len(keys) - self.cap
        if excess <= 0:
            return
        dropped = [key for key in keys[:excess] if self.store.delete(key)]
        if dropped:
            self.log.warning("queue is over its cap of %d: dropped the %d oldest record(s) "
                             "(%s .. %s)", self.cap, len(dropped), dropped[0], dropped[-1])

    def _claimed_by_other(self, doc: Queued, now: datetime) -> bool:
        return (bool(doc.claimed_by) and doc.claimed_by != self.owner
                and doc.claimed_at is not None and now - doc.claimed_at < self.claim_ttl)

    def flush(self) -> int:
        """Send queued records oldest first, deleting each once sent; stop at the first that
        fails (ynm is still down, so the rest stay queued; :attr:`stopped` keeps why). A record
        ynm refuses for good (:class:`~ynm.client.memory.Rejected`: refused input, or no mount
        for its level) is moved to :data:`REFUSED_PREFIX` with the reason (logged) and the flush
        goes on. Each record is sent with ``valid_from`` set to when it was queued, unless it
        has its own (see :class:`~ynm.client.record.Record`). Records claimed by
        another worker less than ``claim_ttl`` ago are left to it. With nothing queued it costs
        one key listing.

        Records meant for another store (their ``target``, see :class:`Queue`) are left
        queued for a worker writing there and not counted.

        Returns:
            How many records for this queue's target are left queued, those other workers
            have claimed included.

        Raises:
            Exception: whatever the store raises.
        """
        self.stopped = None
        keys = self.store.keys(QUEUE_PREFIX)
        if not keys:
            return 0
        if self.memory is None:
            self.stopped = "no ynm to send to (none was detected)"
            return len(keys)
        foreign = 0  # records meant for another store, left queued for it
        for key in keys:
            got = self.store.get(key)
            if got is None:
                continue  # sent (or dropped) by another worker since the listing
            text, version = got
            try:
                doc = Queued.from_json(text)
            except Exception as err:  # noqa: BLE001 - a damaged document must not block
                self._move_aside(key, text, version, f"unreadable queued document: {err}")
                continue
            now = self.now()
            if doc.target and doc.target != self.target:
                foreign += 1  # meant for another store: left for a worker writing there
                continue
            if self._claimed_by_other(doc, now):
                continue
            doc.claimed_by, doc.claimed_at, doc.attempts = self.owner, now, doc.attempts + 1
            claimed = doc.to_json()
            if not self.store.compare_and_set(key, claimed, version):
                continue  # another worker claimed or sent it first
            try:
                self.memory.remember(_with_time(doc.record, doc.queued))
            except Unavailable as err:
                doc.claimed_by, doc.claimed_at = "", None
                self.store.compare_and_set(key, doc.to_json(), version + 1)
                self.stopped = str(err)
                self.log.info("ynm is unavailable, %s stays queued: %s", key, err)
                break
            except Rejected as err:
                self._move_aside(key, claimed, version + 1, str(err))
                continue
            self.store.delete(key)
            self.sent += 1
        return max(0, len(self.store.keys(QUEUE_PREFIX)) - foreign)

    def _move_aside(self, key: str, text: str, version: int, error: str) -> None:
        aside = REFUSED_PREFIX + key[len(QUEUE_PREFIX):]
        self.store.create(aside, _with_error(text, error))
        self.store.delete(key, version)
        self.refused += 1
        self.log.warning("ynm refused queued record %s, kept as %s: %s", key, aside, error)

    def pending(self) -> tuple[int, datetime | None]:
        """How many records are queued and when the oldest was first queued (its
        ``queued``); ``(0, None)`` when none."""
        keys = self.store.keys(QUEUE_PREFIX)
        for key in keys:
            got = self.store.get(key)
            if got is None:
                continue
            try:
                return len(keys), _parse_time(json.loads(got[0])["queued"])
            except (ValueError, KeyError, TypeError):
                continue
        return len(keys), None

    def drop(self, ids: Iterable[str] = (), *, refused: bool = False) -> list[str]:
        """Delete records ynm refused for good (those under :data:`REFUSED_PREFIX`), for good:
        the ones named in ``ids`` (a key ``memory/refused/<ULID>`` or the bare ULID), or with
        ``refused=True`` all of them. Every id is checked before anything is deleted, so a bad
        one deletes nothing. Queued records cannot be dropped: they are still to be sent.

        Returns:
            The keys deleted, in key order.

        Raises:
            ValueError: both or neither of ``ids`` and ``refused``.
            ynm.errors.InvalidInput: ``invalid input: <id>: ...`` for an id that names no
                refused record (a queued one, or none at all).
            Exception: whatever the store raises.
        """
        from ynm.errors import InvalidInput

        ids = [ids] if isinstance(ids, str) else list(ids)  # one id given as a string
        if bool(ids) == refused:
            raise ValueError("name the refused records to drop, or drop them all with "
                             "refused=True (not both)")
        if refused:
            keys = self.store.keys(REFUSED_PREFIX)
        else:
            keys = []
            for given in ids:
                ulid = given.rsplit("/", 1)[-1]
                key = REFUSED_PREFIX + ulid
                if given not in (ulid, key, QUEUE_PREFIX + ulid) or not ulid:
                    raise InvalidInput(f"{given}: not a refused record's id "
                                       f"({REFUSED_PREFIX}<id> or <id>)")
                if self.store.get(key) is None:
                    where = (" (it is queued: only refused records can be dropped)"
                             if self.store.get(QUEUE_PREFIX + ulid) is not None else "")
                    raise InvalidInput(f"{given}: no refused record with this id{where}")
                if key not in keys:
                    keys.append(key)
        dropped = sorted(key for key in keys if self.store.delete(key))
        if dropped:
            self.log.warning("dropped %d refused record(s): %s", len(dropped),
                             ", ".join(dropped))
        return dropped


def _with_time(record: Record, queued: datetime) -> Record:
    """``record`` with ``valid_from`` set to ``queued`` unless it has its own: ynm stamps
    ``recordedAt`` when it writes, so this is where the time it was written survives a late
    send (see :class:`~ynm.client.record.Record`)."""
    if record.valid_from is not None:
        return record
    stamp = queued.astimezone(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
    return replace(record, valid_from=stamp)


def _target_of(memory: Memory | None) -> str:
    """``memory.target``, or for no memory the target a ``YnmCLI`` here would have."""
    if memory is not None and getattr(memory, "target", None):
        return str(memory.target)
    from ynm.client.memory import YnmCLI

    return YnmCLI().target


WITHHELD = "[withheld: ynm refused this record as holding a secret]"
"""What a record refused by the redaction gate keeps of its text fields (see
:func:`_with_error`)."""

_SECRET_FIELDS = ("content", "summary", "subject", "data")


def _with_error(text: str, error: str) -> str:
    """A queued document's text with ``"error": <message>`` added (kept as text when it is not
    a JSON object). When ynm refused the record as holding a secret (``refused: ...``, the
    redaction gate), its content, summary, subject and data are replaced by
    :data:`WITHHELD`: the record can never be written, and a queue file and ``ynm outbox
    list`` must not keep or show the secret; its namespace, tags and times stay, so an
    operator can still tell which write it was."""
    try:
        doc = json.loads(text)
    except ValueError:
        doc = None
    if not isinstance(doc, dict):
        doc = {"raw": text}
    if error.startswith("refused:"):
        record = doc.get("record") if isinstance(doc.get("record"), dict) else None
        for name in _SECRET_FIELDS:
            if record is not None and record.get(name) is not None:
                record[name] = WITHHELD
        if "raw" in doc:
            doc["raw"] = WITHHELD
    # moved aside, nobody holds it: a claim left in the document would show it as being sent
    doc.pop("claimedBy", None)
    doc.pop("claimedAt", None)
    doc["error"] = error
    return json.dumps(doc, ensure_ascii=False, sort_keys=True)
