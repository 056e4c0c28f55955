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

from ynm.client.memory import OUTBOX_TAG, Memory, NotYet, Rejected, Unavailable
from ynm.client.record import Record
from ynm.client.stores import QueueStore, StoreUnavailable, StoreUnusable

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
"""Where a record refused for good is moved (same ULID, the document plus ``error``, the
reason, without a claim): refused input, no mount of its level where it writes (see
:class:`~ynm.client.memory.Rejected`), or a secret in its texts. Kept for an operator
(``ynm outbox list``), never retried by itself, never blocking the queue: ``ynm outbox
retry`` (:meth:`Queue.retry`) queues it again once the cause is fixed, ``ynm outbox drop``
deletes it. At most ``cap`` are kept, the oldest dropped first."""

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
        cap: the most records kept queued, and the most kept refused (default
            :data:`QUEUE_CAP`).
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

    Every failure of the store itself (a database that is down, a locked or full disk) is
    raised as :class:`~ynm.client.stores.StoreUnavailable`, the store's own error as its
    ``__cause__``.
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
        self._store = _Guarded(store)
        self.owner = owner
        self.cap = cap
        self.claim_ttl = claim_ttl
        self.now = now or (lambda: datetime.now(UTC))
        self.new_id = new_id or _new_ulid()
        self.log = log or _LOG
        self.target = target or _target_of(memory)
        self.sent = 0  # records this queue delivered, directly or from the store
        self.refused = 0  # records refused for good (by ynm, or holding a secret), kept aside
        self.stopped: str | None = None
        """Why the last :meth:`flush`, or the last :meth:`remember` that queued its record,
        left records queued: ynm's message for the outage, or that there is no memory; None
        when the last one went through."""

    def remember(self, record: Record) -> str:
        """Send ``record`` behind anything already queued: flush first, and send directly only
        when nothing is left queued, so records never jump the queue; queue it when it cannot
        be sent.

        A record any of whose texts (content, summary, subject, tags, data, dataSchema,
        source) holds a secret, by ynm's own detectors (``ynm.service.redaction.detect``), is
        refused at once, whatever its level: it is neither sent nor queued, so no queue file
        or database ever holds the secret (stricter than ynm, which checks distributed writes
        only: a record may wait in a queue for days, and whether it is kept must not depend on
        ynm being up).

        When the queue store cannot be read (its database is down) but ``memory`` is there,
        the record is sent directly: nothing queued can be known to be ahead of it, and a
        program must never stop because of memory; records queued earlier may then land after
        it (their ``validFrom`` still says when they happened).

        Returns:
            ``"sent"``, ``"queued"`` (:attr:`stopped` says why), or ``"refused"`` (ynm refused
            it for good, or it holds a secret; it is kept under :data:`REFUSED_PREFIX` with the
            reason, its texts withheld when it held a secret, and logged). A record without
            ``valid_from`` is sent with the time of this call, whenever it is sent.

        Raises:
            TypeError: ``record`` is not a :class:`Record` (an invalid one cannot be built).
            StoreUnavailable: the record could be neither sent nor queued (ynm unavailable
                or absent, and the store failing). Never because ynm is down.
        """
        if not isinstance(record, Record):
            raise TypeError(f"expected a Record, got {type(record).__name__}")
        handed = self.now()
        ulid = self.new_id()
        secret = secret_in(record)
        if secret is not None:
            self._keep_refused(ulid, Queued(record=record, queued=handed, target=self.target),
                               secret)
            return "refused"
        attempts = 0
        if self.memory is None:
            self.stopped = "no ynm to send to (none was detected)"
        else:
            try:
                left = self.flush()
            except StoreUnavailable as err:
                self.log.warning("cannot read the queue store (%s): sending the record "
                                 "directly, possibly ahead of records queued before", err)
                left = 0
            if left == 0:
                try:
                    self.memory.remember(_outgoing(record, handed, ulid))
                    self.sent += 1
                    self.stopped = None
                    return "sent"
                except NotYet as err:
                    self.stopped = str(err)
                    self.log.warning("ynm cannot take the record yet, queuing it: %s", err)
                except Unavailable as err:
                    self.stopped = str(err)
                    self.log.info("ynm is unavailable, queuing the record: %s", err)
                except Rejected as err:
                    self._keep_refused(ulid, Queued(record=record, queued=handed, attempts=1,
                                                    target=self.target), str(err))
                    return "refused"
                attempts = 1  # it may have been written (a timeout): looked up before a resend
        key = QUEUE_PREFIX + ulid
        doc = Queued(record=record, queued=handed, attempts=attempts, target=self.target)
        try:
            created = self._store.create(key, doc.to_json())
        except StoreUnavailable as err:
            raise StoreUnavailable(f"the record could be neither sent ({self.stopped}) nor "
                                   f"queued: {err}") from err.__cause__
        if not created:
            raise RuntimeError(f"queue key {key} already exists: new_id must give unique ids")
        self._trim(QUEUE_PREFIX, "queue")
        return "queued"

    def _keep_refused(self, ulid: str, doc: Queued, error: str) -> None:
        """Keep a record refused for good under :data:`REFUSED_PREFIX` with ``error`` (its
        texts withheld for a secret) and log it; a store failure is logged, not raised: the
        record could never be written anyway."""
        key = REFUSED_PREFIX + ulid
        self.refused += 1
        try:
            self._store.create(key, _with_error(doc.to_json(), error))
        except StoreUnavailable as err:
            self.log.warning("ynm refused a record (%s), and the queue store could not keep "
                             "it: %s", error, err)
            return
        self.log.warning("ynm refused a record, kept as %s: %s%s", key, error, _after(key, error))
        self._trim(REFUSED_PREFIX, "refused records")

    def _trim(self, prefix: str, what: str) -> None:
        """Drop the oldest documents under ``prefix`` past :attr:`cap`, logged; a store
        failure here is logged (what was written stays written)."""
        try:
            keys = self._store.keys(prefix)
            excess = len(keys) - self.cap
            if excess <= 0:
                return
            dropped = [key for key in keys[:excess] if self._store.delete(key)]
        except StoreUnavailable as err:
            self.log.warning("could not apply the cap of %d to the %s: %s", self.cap, what, err)
            return
        if dropped:
            self.log.warning("%s over its cap of %d: dropped the %d oldest record(s) "
                             "(%s .. %s)", "queue is" if prefix == QUEUE_PREFIX else
                             f"{what} are", self.cap, len(dropped), dropped[0], dropped[-1])

    def _claimed_by_other(self, doc: Queued, now: datetime) -> bool:
        return (bool(doc.claimed_by) and doc.claimed_by != self.owner
                and doc.claimed_at is not None and now - doc.claimed_at < self.claim_ttl)

    def flush(self) -> int:
        """Send queued records oldest first, deleting each once sent; stop at the first that
        fails (ynm is still down, so the rest stay queued; :attr:`stopped` keeps why). A record
        ynm refuses for good (:class:`~ynm.client.memory.Rejected`: refused input, or no mount
        for its level) is moved to :data:`REFUSED_PREFIX` with the reason (logged) and the flush
        goes on. Each record is sent with ``valid_from`` set to when it was queued, unless it
        has its own (see :class:`~ynm.client.record.Record`), and with its idempotency tag
        (:data:`~ynm.client.memory.OUTBOX_TAG` plus its ULID). Records claimed by another
        worker less than ``claim_ttl`` ago are left to it. With nothing queued it costs one
        key listing.

        A record sent before (``attempts`` above 0: a worker killed mid-send, a timeout) is
        first looked up by its tag when the memory has ``has_tag`` (``YnmCLI``, ``YnmHTTP``):
        found, it was written after all and is only deleted from the queue (counted in
        :attr:`sent`), so a re-send never writes it twice.

        Records meant for another store (their ``target``, see :class:`Queue`) are left
        queued for a worker writing there and not counted.

        Returns:
            How many records for this queue's target are left queued, those other workers
            have claimed included.

        Raises:
            StoreUnavailable: the store failed.
        """
        self.stopped = None
        store = self._store
        keys = store.keys(QUEUE_PREFIX)
        if not keys:
            return 0
        if self.memory is None:
            self.stopped = "no ynm to send to (none was detected)"
            return len(keys)
        foreign = 0  # records meant for another store, left queued for it
        moved = False
        for key in keys:
            got = store.get(key)
            if got is None:
                continue  # sent (or dropped) by another worker since the listing
            text, version = got
            try:
                doc = Queued.from_json(text)
            except Exception as err:  # noqa: BLE001 - a damaged document must not block
                self._move_aside(key, text, version, f"unreadable queued document: {err}")
                moved = True
                continue
            now = self.now()
            if doc.target and doc.target != self.target:
                foreign += 1  # meant for another store: left for a worker writing there
                continue
            if self._claimed_by_other(doc, now):
                continue
            tried = doc.attempts > 0
            doc.claimed_by, doc.claimed_at, doc.attempts = self.owner, now, doc.attempts + 1
            claimed = doc.to_json()
            if not store.compare_and_set(key, claimed, version):
                continue  # another worker claimed or sent it first
            ulid = key[len(QUEUE_PREFIX):]
            try:
                if tried and self._written_before(ulid):
                    self.log.info("queued record %s was written by an earlier attempt: not "
                                  "sent again", key)
                else:
                    self.memory.remember(_outgoing(doc.record, doc.queued, ulid))
            except NotYet as err:
                self._release(key, doc, version + 1, str(err))
                self.log.warning("ynm cannot take %s yet, it stays queued: %s", key, err)
                break
            except Unavailable as err:
                self._release(key, doc, version + 1, str(err))
                self.log.info("ynm is unavailable, %s stays queued: %s", key, err)
                break
            except Rejected as err:
                self._move_aside(key, claimed, version + 1, str(err))
                moved = True
                continue
            store.delete(key)
            self.sent += 1
        if moved:
            self._trim(REFUSED_PREFIX, "refused records")
        return max(0, len(store.keys(QUEUE_PREFIX)) - foreign)

    def _written_before(self, ulid: str) -> bool:
        """Whether the record queued as ``ulid`` is in ynm already (its idempotency tag),
        for a memory that can tell (``has_tag``); False for one that cannot.

        Raises:
            Unavailable: the memory could not answer.
        """
        has_tag = getattr(self.memory, "has_tag", None)
        return bool(has_tag(OUTBOX_TAG + ulid)) if has_tag is not None else False

    def _release(self, key: str, doc: Queued, version: int, why: str) -> None:
        doc.claimed_by, doc.claimed_at = "", None
        self._store.compare_and_set(key, doc.to_json(), version)
        self.stopped = why

    def _move_aside(self, key: str, text: str, version: int, error: str) -> None:
        aside = REFUSED_PREFIX + key[len(QUEUE_PREFIX):]
        self._store.create(aside, _with_error(text, error))
        self._store.delete(key, version)
        self.refused += 1
        self.log.warning("ynm refused queued record %s, kept as %s: %s%s", key, aside, error,
                         _after(aside, error))

    def pending(self, this_target: bool = False) -> tuple[int, datetime | None]:
        """How many records are queued and when the oldest of them was first queued (its
        ``queued``); ``(0, None)`` when none.

        Args:
            this_target: count only the records meant for this queue's :attr:`target` (and
                those without one), not those a shared queue file keeps for other
                repositories or servers.

        Raises:
            StoreUnavailable: the store failed.
        """
        keys = self._store.keys(QUEUE_PREFIX)
        count, oldest = 0 if this_target else len(keys), None
        for key in keys:
            if oldest is not None and not this_target:
                break
            got = self._store.get(key)
            if got is None:
                continue
            try:
                doc = json.loads(got[0])
                target = doc.get("target") or ""
                queued = _parse_time(doc["queued"])
            except (ValueError, KeyError, TypeError, AttributeError):
                continue
            if this_target:
                if target not in ("", self.target):
                    continue
                count += 1
            if oldest is None:
                oldest = queued
        return count, oldest

    def _resolve(self, ids: list[str], allowed: Callable[[str, str], str | None],
                 what: str) -> list[str]:
        """The keys named by ``ids`` (a key or a bare ULID each), checked before anything is
        changed: ``allowed(ulid, given)`` returns the key to act on, or raises.

        Raises:
            ynm.errors.InvalidInput: an id of no form this takes.
        """
        from ynm.errors import InvalidInput

        keys: list[str] = []
        for given in ids:
            ulid = given.rsplit("/", 1)[-1]
            if not ulid or given not in (ulid, REFUSED_PREFIX + ulid, QUEUE_PREFIX + ulid):
                raise InvalidInput(f"{given}: not {what} ({REFUSED_PREFIX}<id>, "
                                   f"{QUEUE_PREFIX}<id> or <id>)")
            key = allowed(ulid, given)
            if key is not None and key not in keys:
                keys.append(key)
        return keys

    def drop(self, ids: Iterable[str] = (), *, refused: bool = False, orphaned: bool = False,
             queued: bool = False) -> list[str]:
        """Delete records for good: refused records (under :data:`REFUSED_PREFIX`) named in
        ``ids`` (a key or the bare ULID), or all of them with ``refused=True``; queued records
        meant for a repository that no longer exists (``target`` ``repo:<root>`` where
        ``<root>`` holds no ``.git`` any more: nothing could ever send them), named in ``ids``
        or all of them with ``orphaned=True``; and with ``queued=True`` any queued record named
        in ``ids``. Every id is checked before anything is deleted, so a bad one deletes
        nothing.

        Returns:
            The keys deleted, in key order.

        Raises:
            ValueError: not exactly one of ``ids``, ``refused`` and ``orphaned``; ``queued``
                without ``ids``.
            ynm.errors.InvalidInput: ``invalid input: <id>: ...`` for an id that names no
                record this may drop (none at all, or a queued one whose target still exists
                without ``queued=True``).
            StoreUnavailable: the store failed.
        """
        from ynm.errors import InvalidInput

        ids = [ids] if isinstance(ids, str) else list(ids)  # one id given as a string
        if (bool(ids) + refused + orphaned) != 1:
            raise ValueError("name the records to drop, or drop every refused record with "
                             "refused=True, or every orphaned one with orphaned=True (not "
                             "both)")
        if queued and not ids:
            raise ValueError("queued=True applies to the ids named")
        store = self._store
        if refused:
            keys = store.keys(REFUSED_PREFIX)
        elif orphaned:
            keys = [key for key in store.keys(QUEUE_PREFIX) if self._orphaned(key)]
        else:
            def allowed(ulid: str, given: str) -> str:
                if given != QUEUE_PREFIX + ulid and store.get(REFUSED_PREFIX + ulid) is not None:
                    return REFUSED_PREFIX + ulid
                key = QUEUE_PREFIX + ulid
                if given != REFUSED_PREFIX + ulid and store.get(key) is not None:
                    if queued or self._orphaned(key):
                        return key
                    raise InvalidInput(f"{given}: it is queued (for {self._target(key)}): "
                                       "only refused records, and queued ones whose "
                                       "repository no longer exists, are dropped unless "
                                       "queued records are asked for (--queued)")
                raise InvalidInput(f"{given}: no refused or queued record with this id")

            keys = self._resolve(ids, allowed, "a record's id")
        dropped = sorted(key for key in keys if store.delete(key))
        if dropped:
            # info, not warning: the caller asked for it and has the keys
            self.log.info("dropped %d record(s): %s", len(dropped), ", ".join(dropped))
        return dropped

    def _target(self, key: str) -> str:
        got = self._store.get(key)
        try:
            return str(json.loads(got[0]).get("target") or "any store") if got else "?"
        except (ValueError, AttributeError):
            return "?"

    def _orphaned(self, key: str) -> bool:
        """Whether the queued record ``key`` is meant for a repository that is gone."""
        return target_gone(self._target(key))

    def retry(self, ids: Iterable[str] = (), *, refused: bool = False) -> list[str]:
        """Queue refused records again, once what made ynm refuse them is fixed (``ynm init``
        in a repository, a mount configured): those named in ``ids`` (``memory/refused/<ULID>``
        or the ULID), or all of them with ``refused=True``, except those whose texts were
        withheld (they held a secret). Each goes back under :data:`QUEUE_PREFIX` with its ULID,
        so it keeps its place (by when it was first queued), without its ``error``; the next
        :meth:`flush` sends it. Every id is checked first.

        Returns:
            The queue keys the records went back to, in key order.

        Raises:
            ValueError: both or neither of ``ids`` and ``refused``.
            ynm.errors.InvalidInput: an id naming no refused record, or one whose texts were
                withheld (``drop`` it instead).
            StoreUnavailable: the store failed.
        """
        from ynm.errors import InvalidInput

        ids = [ids] if isinstance(ids, str) else list(ids)
        if bool(ids) == refused:
            raise ValueError("name the refused records to retry, or retry them all with "
                             "refused=True (not both)")
        store = self._store

        def allowed(ulid: str, given: str) -> str | None:
            got = store.get(REFUSED_PREFIX + ulid)
            if got is None or given == QUEUE_PREFIX + ulid:
                raise InvalidInput(f"{given}: no refused record with this id")
            if _withheld(got[0]):
                raise InvalidInput(f"{given}: its texts were withheld (it held a secret), so "
                                   "it cannot be sent again: drop it")
            return REFUSED_PREFIX + ulid

        if refused:
            keys = [key for key in store.keys(REFUSED_PREFIX)
                    if not _withheld((store.get(key) or ("",))[0])]
        else:
            keys = self._resolve(ids, allowed, "a refused record's id")
        back = []
        for key in sorted(keys):
            got = store.get(key)
            if got is None:
                continue
            doc = _parsed(got[0])
            if doc is None or not isinstance(doc.get("record"), dict):
                continue  # an unreadable document: nothing to send
            doc.pop("error", None)
            doc.pop("claimedBy", None)
            doc.pop("claimedAt", None)
            queued_key = QUEUE_PREFIX + key[len(REFUSED_PREFIX):]
            if store.create(queued_key, json.dumps(doc, ensure_ascii=False, sort_keys=True)):
                store.delete(key, got[1])
                back.append(queued_key)
        if back:
            self.log.info("queued %d refused record(s) again: %s", len(back), ", ".join(back))
            self._trim(QUEUE_PREFIX, "queue")
        return back


class _Guarded:
    """A store whose failures are :class:`~ynm.client.stores.StoreUnavailable` (the store's
    own error as the cause); :class:`~ynm.client.stores.StoreUnusable` passes as it is."""

    def __init__(self, store: QueueStore) -> None:
        self.inner = store

    def __getattr__(self, name: str) -> Any:
        fn = getattr(self.inner, name)

        def call(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except (StoreUnavailable, StoreUnusable):
                raise
            except Exception as err:
                where = getattr(self.inner, "display_url", None) or type(self.inner).__name__
                detail = str(getattr(err, "orig", None) or err).strip().splitlines()
                raise StoreUnavailable(f"queue store {where}: "
                                       f"{detail[0] if detail else type(err).__name__}") from err

        return call


_TEXT_FIELDS = (("content", "content"), ("summary", "summary"), ("subject", "subject"),
                ("tags", "tags"), ("data", "data"), ("data_schema", "dataSchema"),
                ("source", "source"))
"""Every text of a record that may hold a secret: (attribute, the name in messages and in
the queued document). The texts ynm's redaction gate reads of a remember
(``ynm.service.redaction.record_texts``)."""


def secret_in(record: Record) -> str | None:
    """The refusal for a record any of whose texts holds a secret, naming each field and the
    detectors that fired (``refused: tags matches 1 secret detector: GitHub Token``), or
    None. ynm's own detectors (``ynm.service.redaction.detect``, the default set; the
    ``redaction`` patterns of a store's config are still applied by ynm when it writes);
    detect-secrets is imported on the first call.

    Raises:
        ynm.errors.YnmError: detect-secrets is not installed.
    """
    from ynm.service.redaction import detect

    parts = []
    for name, wire in _TEXT_FIELDS:
        value = getattr(record, name)
        if value is None or value == ():
            continue
        if name == "tags":
            texts = list(value)
        elif name == "data":
            texts = [json.dumps(value, ensure_ascii=False)]
        else:
            texts = [value]
        found = detect(texts)
        if found:
            noun = "detector" if len(found) == 1 else "detectors"
            parts.append(f"{wire} matches {len(found)} secret {noun}: {', '.join(found)}")
    return "refused: " + "; ".join(parts) if parts else None


def target_gone(target: str) -> bool:
    """Whether ``target`` (a queued record's, see :class:`Queued`) names a repository that no
    longer exists: ``repo:<root>`` where ``<root>/.git`` is gone, so no worker can ever send
    the record where it was meant to go."""
    import os

    if not target.startswith("repo:"):
        return False
    return not os.path.exists(os.path.join(target[len("repo:"):], ".git"))


def _after(key: str, error: str) -> str:
    """What an operator can do with the refused record ``key``: the tail of its log line."""
    ulid = key[len(REFUSED_PREFIX):]
    if error.startswith("refused:"):
        return f" (its texts are withheld; `ynm outbox drop {ulid}` deletes it)"
    if error.startswith("invalid input:"):
        return f" (`ynm outbox drop {ulid}` deletes it)"
    return (f" (once that is fixed, `ynm outbox retry {ulid}` queues it again; "
            f"`ynm outbox drop {ulid}` deletes it)")


def _parsed(text: str) -> dict[str, Any] | None:
    try:
        doc = json.loads(text)
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


def _withheld(text: str) -> bool:
    """Whether a refused document's texts were withheld (it held a secret)."""
    doc = _parsed(text)
    record = doc.get("record") if doc is not None else None
    return isinstance(record, dict) and record.get("content") == WITHHELD


def _outgoing(record: Record, queued: datetime, ulid: str) -> Record:
    """The record as it is sent: with its ``valid_from`` (:func:`_with_time`) and its
    idempotency tag ``ynm-outbox:<ulid>`` (:data:`~ynm.client.memory.OUTBOX_TAG`)."""
    record = _with_time(record, queued)
    tag = OUTBOX_TAG + ulid
    if tag in record.tags:
        return record
    return replace(record, tags=(*record.tags, tag))


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

_SECRET_FIELDS = ("content", "summary", "subject", "data", "dataSchema", "source")


def _with_error(text: str, error: str) -> str:
    """A queued document's text with ``"error": <message>`` added (kept as text when it is not
    a JSON object). When the record was refused as holding a secret (``refused: ...``, the
    redaction gate), every text that may hold one is withheld: content, summary, subject,
    data, dataSchema and source are replaced by :data:`WITHHELD` and the tags removed: the
    record can never be written, and a queue file and ``ynm outbox list`` must not keep or
    show the secret; its type, level, namespace and times stay, so an operator can still tell
    which write it was."""
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
        if record is not None:
            record.pop("tags", None)
        if "raw" in doc:
            doc["raw"] = WITHHELD
    # moved aside, nobody holds it: a claim left in the document would show it as being sent
    doc.pop("claimedBy", None)
    doc.pop("claimedAt", None)
    doc["error"] = error
    return json.dumps(doc, ensure_ascii=False, sort_keys=True)
