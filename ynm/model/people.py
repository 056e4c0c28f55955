"""People: who wrote a memory on a hosted store, independent of the identity provider.

A **login** is the ``(issuer, subject)`` pair a verified token names (``iss`` and ``sub``; email
and names are never read). Its **person id** is ``p`` + the first 16 characters of the base32
(``a-z2-7``, most significant bit first) of SHA-256(``issuer + "\\n" + subject``): it exists
without any write. The **people document** links further logins to an existing person id (a
linked login wins over derivation) and holds the nickname each person chose. Records carry only
the person id, in ``provenance.actor`` ``user:<person id>``.

Document shape: ``{"v": 1, "people": {<person id>: {"nickname"?: str, "logins": [str],
"updatedAt": iso}}}``, a login key being ``"<issuer> <subject>"``. Two copies changed apart
merge per person: the entry with the newer ``updatedAt`` wins and ``logins`` are unioned.

Pure functions only (no I/O); the store-backed document is :mod:`ynm.service.people`.
Source: reference/server.md §2.4, §2.5; reference/cli.md §4.14.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from typing import Any

from ynm.errors import InvalidInput

PERSON_ID_RE = re.compile(r"^p[a-z2-7]{16}$")
PEOPLE_DOCUMENT = "people"
NICKNAME_MAX = 64
LOGIN_KEY_MIN = 3  # the reference's schema: a login key is at least 3 characters


def person_id(issuer: str, subject: str) -> str:
    """The person id a login gets when no entry of the people document links it:
    ``p`` + 16 base32 characters (``^p[a-z2-7]{16}$``) of SHA-256(``issuer\\nsubject``).

    Source: reference/server.md §2.4, reference/cli.md §4.14."""
    digest = hashlib.sha256(f"{issuer}\n{subject}".encode()).digest()
    return "p" + base64.b32encode(digest).decode("ascii")[:16].lower()


def login_key(issuer: str, subject: str) -> str:
    """``"<issuer> <subject>"``: how a login is written in the people document."""
    return f"{issuer} {subject}"


def is_person_id(value: object) -> bool:
    """Whether ``value`` is a person id (``^p[a-z2-7]{16}$``)."""
    return isinstance(value, str) and PERSON_ID_RE.match(value) is not None


def check_person_id(value: str | None, field: str = "person") -> str:
    """``value`` if it is a person id.

    Raises:
        InvalidInput: ``invalid input: person: must be a person id (p and 16 characters of
            a-z, 2-7)``.
    """
    if not is_person_id(value):
        raise InvalidInput(f"{field}: must be a person id (p and 16 characters of a-z, 2-7), "
                           f"got {value!r}")
    return str(value)


def check_nickname(value: str) -> str:
    """A nickname trimmed: 1..64 characters on one line (no newline, carriage return or tab).

    Raises:
        InvalidInput: ``invalid input: nickname: ...``.
    """
    nickname = value.strip()
    if not 1 <= len(nickname) <= NICKNAME_MAX:
        raise InvalidInput(f"nickname: must be 1..{NICKNAME_MAX} characters after trimming")
    if any(c in nickname for c in "\n\r\t"):
        raise InvalidInput("nickname: must be one line")
    return nickname


def check_new_nickname(value: str) -> str:
    """A nickname being set: :func:`check_nickname`, and no other control character either
    (ESC, NUL, ...: everyone who reads the store sees it;
    :func:`ynm.model.controls.control_character_problem`). A people document already holding
    one is still read (shown escaped).

    Raises:
        InvalidInput: ``invalid input: nickname: ...``.
    """
    from ynm.model.controls import control_character_problem

    nickname = check_nickname(value)
    problem = control_character_problem(nickname, lines=False)
    if problem:
        raise InvalidInput(f"nickname: {problem}")
    return nickname


def empty_people() -> dict[str, Any]:
    """``{"v": 1, "people": {}}``."""
    return {"v": 1, "people": {}}


def parse_people(text: str | None) -> dict[str, Any]:
    """The people document in ``text`` (empty or None: no one yet), checked strictly: ``v``
    is 1, keys are person ids, each entry has only ``nickname`` (a valid nickname), ``logins``
    (strings of 3 or more characters, default ``[]``) and ``updatedAt`` (a string).

    Raises:
        ValueError: the text is not JSON or not a people document (saying what is wrong).
    """
    if not text or not text.strip():
        return empty_people()
    try:
        raw = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON ({exc})") from None
    if not isinstance(raw, dict) or raw.get("v") != 1:
        raise ValueError('not a people document (needs "v": 1)')
    extra = set(raw) - {"v", "people"}
    if extra:
        raise ValueError(f"unknown key {min(extra)!r}")
    people = raw.get("people", {})
    if not isinstance(people, dict):
        raise ValueError("people: must be an object")  # noqa: TRY004 - bad data, not a bug
    out: dict[str, Any] = {}
    for pid, entry in people.items():
        if not is_person_id(pid):
            raise ValueError(f"people: {pid!r} is not a person id")
        out[pid] = _parse_entry(pid, entry)
    return {"v": 1, "people": out}


def _parse_entry(pid: str, entry: Any) -> dict[str, Any]:
    if not isinstance(entry, dict):
        raise ValueError(f"people.{pid}: must be an object")  # noqa: TRY004 - bad data
    extra = set(entry) - {"nickname", "logins", "updatedAt"}
    if extra:
        raise ValueError(f"people.{pid}: unknown key {min(extra)!r}")
    updated = entry.get("updatedAt")
    if not isinstance(updated, str) or not updated:
        raise ValueError(f"people.{pid}.updatedAt: must be a date-time")
    logins = entry.get("logins", [])
    if not isinstance(logins, list) or not all(
            isinstance(k, str) and len(k) >= LOGIN_KEY_MIN for k in logins):
        raise ValueError(f"people.{pid}.logins: must be a list of login keys")
    out: dict[str, Any] = {}
    if "nickname" in entry:
        nickname = entry["nickname"]
        if not isinstance(nickname, str):
            raise ValueError(f"people.{pid}.nickname: must be a string")
        try:
            out["nickname"] = check_nickname(nickname)
        except InvalidInput as exc:
            raise ValueError(f"people.{pid}.{exc.detail}") from None
    out["logins"] = list(logins)
    out["updatedAt"] = updated
    return out


def dump_people(doc: dict[str, Any]) -> str:
    """The document's text as stored: 2-space indented JSON and a final newline (the form the
    reference writes, ``JSON.stringify(doc, null, 2)``), non-ASCII kept as it is."""
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def resolve_person(doc: dict[str, Any], issuer: str, subject: str) -> str:
    """The person a login belongs to: the entry that links it, else :func:`person_id`."""
    key = login_key(issuer, subject)
    for pid, entry in doc["people"].items():
        if key in entry.get("logins", []):
            return pid
    return person_id(issuer, subject)


def merge_people(ours: dict[str, Any], theirs: dict[str, Any]) -> dict[str, Any]:
    """Two copies of the document changed apart, merged per person: the entry with the newer
    ``updatedAt`` wins (ours on a tie) and ``logins`` are unioned (sorted, so both clones
    merge to the same document).

    A login can belong to one person only. When it ends up on two (linked to one person on
    one clone and moved to another on the other), it stays with the person whose winning
    entry lists it (the newest such entry), so a move survives the merge; the reference
    unions blindly and the first entry in document order would win.
    Source: reference/server.md §2.4, reference/storage.md §4 ("People merge")."""
    winners: dict[str, dict[str, Any]] = {pid: e for pid, e in ours["people"].items()}
    held: dict[str, set[str]] = {pid: set(e.get("logins", [])) for pid, e in winners.items()}
    for pid, their in theirs["people"].items():
        our = winners.get(pid)
        if our is None or their["updatedAt"] > our["updatedAt"]:
            winners[pid] = their
        held.setdefault(pid, set()).update(their.get("logins", []))
    owner: dict[str, str] = {}
    for key in sorted({k for keys in held.values() for k in keys}):
        claim = [p for p in winners if key in winners[p].get("logins", [])]
        claim = claim or [p for p in winners if key in held[p]]
        owner[key] = max(claim, key=lambda p: winners[p]["updatedAt"])  # first on a tie
    out = {pid: {**entry, "logins": sorted(k for k in held[pid] if owner[k] == pid)}
           for pid, entry in winners.items()}
    return {"v": 1, "people": out}


def merge_people_text(ours: str, theirs: str) -> str:
    """:func:`merge_people` on two document texts, as stored text (a sync's merge rule).

    Raises:
        ValueError: either text is not a people document."""
    return dump_people(merge_people(parse_people(ours), parse_people(theirs)))


def person_of_actor(actor: str | None) -> str | None:
    """The person id in an actor a signed-in person wrote (``user:<person id>``), else None
    (``user:david``, ``token:static``, ``client:ci`` are not persons)."""
    if not actor or not actor.startswith("user:"):
        return None
    bare = actor[5:]
    return bare if is_person_id(bare) else None


def author_of(actor: str | None, doc: dict[str, Any]) -> str | None:
    """How a signed-in person's write is shown (``author`` in recall, list and review): their
    nickname, else their person id; None for any other actor. Source: reference/server.md
    §2.4 ("Display everywhere ... uses nickname else person id"), algorithms.md §2.9."""
    pid = person_of_actor(actor)
    if pid is None:
        return None
    return doc["people"].get(pid, {}).get("nickname") or pid
