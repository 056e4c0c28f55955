"""The people document of a store, and who a request writes as.

The document (:mod:`ynm.model.people` for its shape and rules) is kept by the distributed mount
``project``, else the first distributed mount, on its own ref ``refs/ynm/distributed/documents/
people`` (a commit whose tree holds ``people.json``), as the reference stores it, so either
implementation reads the other's. It is written whole with compare-and-swap on its version (the
ref's commit), up to 5 attempts, read at most every 30 s per process, and merged per person on
``ynm sync`` (:func:`ynm.model.people.merge_people_text`).

Source: reference/server.md §2.4, §2.5; reference/cli.md §4.14; reference/storage.md §3.2, §4.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ynm.errors import StoreConflict, YnmError
from ynm.model.ids import iso_ms
from ynm.model.people import (
    PEOPLE_DOCUMENT,
    author_of,
    check_new_nickname,
    check_person_id,
    dump_people,
    login_key,
    merge_people_text,
    parse_people,
    person_id,
    resolve_person,
)

if TYPE_CHECKING:
    from ynm.service.mounts import Mount

__all__ = [
    "NO_PEOPLE",
    "Caller",
    "DocumentLog",
    "People",
    "PeopleUnavailable",
    "merge_people_text",
    "people_mount",
    "person_id",
]

PEOPLE_TTL_S = 30.0  # how long a process trusts its copy of the document (PEOPLE_TTL_MS)
MAX_ATTEMPTS = 5  # compare-and-swap attempts of one write
NO_PEOPLE = "this store keeps no people (it has no distributed mount that can)"


class PeopleUnavailable(YnmError):
    """No open mount can keep the people document (no distributed git-notes mount), exit 1
    (reference/cli.md §4.14)."""

    def __init__(self) -> None:
        super().__init__(NO_PEOPLE)


@dataclass(frozen=True)
class Caller:
    """Who one request (or CLI call) writes as (reference/server.md §2.5).

    Attributes:
        actor: ``provenance.actor`` of its writes: ``user:<person id>``, ``token:static``,
            ``client:<client id>`` or the server's own actor.
        client: ``provenance.client`` (the OAuth client id of a signed-in person), or None.
        person: the signed-in person's id, or None when the caller is not a person.
        namespace: where a distributed write that names no namespace goes (``user/<person
            id>`` for a person, ``common`` otherwise); None: the service's own default.
        may_use_people: whether ``memory_people`` may act (signed-in persons only).
        login: the signed-in person's ``(issuer, subject)``, or None.
    """

    actor: str
    client: str | None = None
    person: str | None = None
    namespace: str | None = None
    may_use_people: bool = False
    login: tuple[str, str] | None = None


class DocumentLog(Protocol):
    """What keeps named documents (:class:`ynm.store.gitnotes.GitNotesLog`)."""

    def read_document(self, name: str) -> tuple[str, str] | None: ...

    def write_document(self, name: str, text: str, expected: str | None) -> str | None: ...


def people_mount(mounts: list[Mount]) -> Mount | None:
    """The mount that keeps the people document: distributed ``project``, else the first
    distributed mount whose provider keeps documents (git-notes); None when none can."""
    candidates = [m for m in mounts if m.level == "distributed" and m.provider == "git-notes"
                  and hasattr(m.log, "read_document")]
    return next((m for m in candidates if m.id == "project"), candidates[0] if candidates
                else None)


class People:
    """The people document of one store.

    Args:
        log: the document keeper (a distributed mount's log).
        now_ms: the wall clock in milliseconds (``updatedAt`` stamps).
        monotonic: seconds for the cache's age (tests move it).
        ttl_s: how long a read is trusted (30 s).
    """

    def __init__(self, log: DocumentLog, *, now_ms: Callable[[], int] | None = None,
                 monotonic: Callable[[], float] = time.monotonic,
                 ttl_s: float = PEOPLE_TTL_S) -> None:
        self.log = log
        self._now_ms = now_ms or (lambda: time.time_ns() // 1_000_000)
        self._monotonic = monotonic
        self.ttl_s = ttl_s
        self._doc: dict[str, Any] | None = None
        self._read_at = 0.0

    # -- reading -----------------------------------------------------------------------

    def _read(self) -> tuple[dict[str, Any], str | None]:
        found = self.log.read_document(PEOPLE_DOCUMENT)
        if found is None:
            doc, version = parse_people(None), None
        else:
            text, version = found
            try:
                doc = parse_people(text)
            except ValueError as exc:
                raise YnmError(f"the people document ({version[:12]}) cannot be read: {exc}; "
                               "fix or remove refs/ynm/distributed/documents/people") from None
        self._doc, self._read_at = doc, self._monotonic()
        return doc, version

    def document(self, fresh: bool = False) -> dict[str, Any]:
        """The document; a copy read less than 30 s ago unless ``fresh``.

        Raises:
            YnmError: the stored document is not a people document."""
        if fresh or self._doc is None or self._monotonic() - self._read_at >= self.ttl_s:
            return self._read()[0]
        return self._doc

    def person_for(self, issuer: str, subject: str) -> str:
        """The person a login resolves to (a linked login wins over the derived id)."""
        return resolve_person(self.document(), issuer, subject)

    def author(self, actor: str | None) -> str | None:
        """``author`` for a write by ``actor``: nickname, else person id, for ``user:<person
        id>`` actors; None otherwise."""
        return author_of(actor, self.document())

    def entry(self, pid: str) -> dict[str, Any] | None:
        """A person's entry in the (cached) document, or None."""
        return self.document()["people"].get(pid)

    # -- writing -----------------------------------------------------------------------

    def update(self, change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
        """Read the document fresh, apply ``change`` (which edits it in place), write it
        whole by compare-and-swap; on a lost race read again and retry, 5 attempts in all.
        Returns the document written.

        Raises:
            StoreConflict: the document kept moving for 5 attempts.
            LockTimeout, StoreError: from the store."""
        for _attempt in range(MAX_ATTEMPTS):
            doc, version = self._read()
            change(doc)
            if self.log.write_document(PEOPLE_DOCUMENT, dump_people(doc), version) is not None:
                self._doc, self._read_at = doc, self._monotonic()
                return doc
        self._doc = None
        raise StoreConflict(f"the people document kept changing: compare-and-swap failed "
                            f"after {MAX_ATTEMPTS} attempts")

    def _touch(self, doc: dict[str, Any], pid: str) -> dict[str, Any]:
        entry = doc["people"].setdefault(pid, {"logins": [], "updatedAt": ""})
        entry["updatedAt"] = iso_ms(self._now_ms())
        return entry

    def set_nickname(self, pid: str, nickname: str | None) -> dict[str, Any]:
        """Set (or with None, remove) a person's nickname; ``updatedAt`` now, logins kept.
        Returns the entry.

        Raises:
            InvalidInput: a bad person id or nickname."""
        check_person_id(pid)
        name = check_new_nickname(nickname) if nickname is not None else None

        def change(doc: dict[str, Any]) -> None:
            entry = self._touch(doc, pid)
            entry.pop("nickname", None)
            if name is not None:
                doc["people"][pid] = {"nickname": name, **entry}

        return self.update(change)["people"][pid]

    def link(self, pid: str, issuer: str, subject: str) -> dict[str, Any]:
        """Link a login to a person (removing it from any other person, whose entry is then
        stamped too so a merge keeps the move). Returns the person's entry.

        Raises:
            InvalidInput: a bad person id, or an empty issuer or subject."""
        from ynm.errors import InvalidInput

        check_person_id(pid)
        if not issuer.strip() or not subject.strip():
            raise InvalidInput("link needs a non-empty --issuer and --subject")
        key = login_key(issuer, subject)

        def change(doc: dict[str, Any]) -> None:
            for other, entry in doc["people"].items():
                if other != pid and key in entry["logins"]:
                    entry["logins"].remove(key)
                    self._touch(doc, other)
            entry = self._touch(doc, pid)
            if key not in entry["logins"]:
                entry["logins"].append(key)

        return self.update(change)["people"][pid]
