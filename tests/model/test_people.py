"""Person ids, the people document's shape and its per-person merge (reference/server.md §2.4,
reference/cli.md §4.14)."""

from __future__ import annotations

import hashlib
import json
import re

import pytest

from ynm.errors import InvalidInput
from ynm.model.people import (
    author_of,
    check_nickname,
    check_person_id,
    dump_people,
    merge_people,
    merge_people_text,
    parse_people,
    person_id,
    person_of_actor,
    resolve_person,
)

ALPHABET = "abcdefghijklmnopqrstuvwxyz234567"


def base32_by_hand(data: bytes, n: int) -> str:
    """MSB-first base32 over the bits of ``data``, the first ``n`` characters (the reference's
    own loop, written out independently of the base64 module)."""
    bits = "".join(f"{b:08b}" for b in data)
    return "".join(ALPHABET[int(bits[i:i + 5], 2)] for i in range(0, 5 * n, 5))


@pytest.mark.parametrize(("issuer", "subject"), [
    ("https://tenant.us.auth0.com/", "auth0|6ac0"),
    ("https://example.okta.com/oauth2/default", "00u1abcd"),
    ("https://accounts.google.com", "1234567890"),
    ("http://127.0.0.1:8080/realms/ynm", "f3a1-ü"),  # non-ASCII subject: UTF-8 bytes
])
def test_person_id_is_p_and_16_base32_of_sha256(issuer: str, subject: str) -> None:
    digest = hashlib.sha256(f"{issuer}\n{subject}".encode()).digest()
    pid = person_id(issuer, subject)
    assert pid == "p" + base32_by_hand(digest, 16)
    assert check_person_id(pid) == pid


def test_person_id_known_value_and_separation() -> None:
    # fixed vector: sha256("https://idp.example.com\nalice") in base32 starts 2FEMP2ISI32M5SWH
    assert person_id("https://idp.example.com", "alice") == "p2femp2isi32m5swh"
    # issuer and subject are kept apart by the newline: moving a character changes the id
    assert person_id("a", "bc") != person_id("ab", "c")
    assert person_id("iss", "sub") != person_id("sub", "iss")


@pytest.mark.parametrize("bad", ["", "p", "P" + "a" * 16, "p" + "a" * 15, "p" + "a" * 17,
                                 "p" + "a" * 15 + "1", "q" + "a" * 16, None])
def test_bad_person_ids_are_refused(bad) -> None:
    with pytest.raises(InvalidInput, match="must be a person id"):
        check_person_id(bad)


@pytest.mark.parametrize(("raw", "ok"), [
    ("ada", "ada"), ("  Ada Lovelace ", "Ada Lovelace"), ("x" * 64, "x" * 64),
    ("", None), ("   ", None), ("x" * 65, None), ("a\nb", None), ("a\tb", None),
    ("a\rb", None),
])
def test_nicknames_are_one_trimmed_line_of_1_to_64(raw: str, ok: str | None) -> None:
    if ok is None:
        with pytest.raises(InvalidInput, match="nickname"):
            check_nickname(raw)
    else:
        assert check_nickname(raw) == ok


PA, PB, PC = "p" + "a" * 16, "p" + "b" * 16, "p" + "c" * 16


def doc(**people) -> dict:
    return {"v": 1, "people": people}


def test_merge_newer_entry_wins_and_logins_union() -> None:
    ours = doc(**{PA: {"nickname": "ada", "logins": ["i1 s1"], "updatedAt": "2026-01-02T00:00:00.000Z"},
                  PB: {"nickname": "old-bob", "logins": [], "updatedAt": "2026-01-01T00:00:00.000Z"}})
    theirs = doc(**{PA: {"nickname": "ada-old", "logins": ["i2 s2"],
                         "updatedAt": "2026-01-01T00:00:00.000Z"},
                    PB: {"nickname": "bob", "logins": ["i3 s3"], "updatedAt": "2026-01-03T00:00:00.000Z"},
                    PC: {"logins": [], "updatedAt": "2026-01-01T00:00:00.000Z"}})
    merged = merge_people(ours, theirs)
    assert merged == doc(**{
        PA: {"nickname": "ada", "logins": ["i1 s1", "i2 s2"], "updatedAt": "2026-01-02T00:00:00.000Z"},
        PB: {"nickname": "bob", "logins": ["i3 s3"], "updatedAt": "2026-01-03T00:00:00.000Z"},
        PC: {"logins": [], "updatedAt": "2026-01-01T00:00:00.000Z"},
    })
    # the same result from either side, person by person
    assert merge_people(theirs, ours)["people"] == merged["people"]


def test_merge_cleared_nickname_wins_when_newer() -> None:
    ours = doc(**{PA: {"nickname": "ada", "logins": [], "updatedAt": "2026-01-01T00:00:00.000Z"}})
    theirs = doc(**{PA: {"logins": [], "updatedAt": "2026-01-02T00:00:00.000Z"}})
    assert "nickname" not in merge_people(ours, theirs)["people"][PA]


def test_merge_tie_keeps_ours() -> None:
    at = "2026-01-01T00:00:00.000Z"
    ours = doc(**{PA: {"nickname": "ours", "logins": [], "updatedAt": at}})
    theirs = doc(**{PA: {"nickname": "theirs", "logins": [], "updatedAt": at}})
    assert merge_people(ours, theirs)["people"][PA]["nickname"] == "ours"


def test_merge_a_login_moved_to_another_person_stays_with_the_newer_entry() -> None:
    # clone 1 linked "i s" to A; clone 2 later moved it to B (stamping both A and B)
    ours = doc(**{PA: {"logins": ["i s"], "updatedAt": "2026-01-01T00:00:00.000Z"}})
    theirs = doc(**{PA: {"logins": [], "updatedAt": "2026-01-02T00:00:00.000Z"},
                    PB: {"logins": ["i s"], "updatedAt": "2026-01-02T00:00:00.000Z"}})
    merged = merge_people(ours, theirs)
    assert merged["people"][PA]["logins"] == [] and merged["people"][PB]["logins"] == ["i s"]
    assert resolve_person(merged, "i", "s") == PB


def test_merge_text_is_the_stored_form() -> None:
    a = dump_people(doc(**{PA: {"nickname": "ada", "logins": [], "updatedAt": "2026-01-01T00:00:00.000Z"}}))
    b = dump_people(doc(**{PB: {"nickname": "Zoë", "logins": [], "updatedAt": "2026-01-01T00:00:00.000Z"}}))
    text = merge_people_text(a, b)
    assert text.endswith("}\n") and '\n  "people": {\n' in text and "Zoë" in text
    assert json.loads(text)["people"].keys() == {PA, PB}
    assert merge_people_text("", b) == b  # an empty side is no one


@pytest.mark.parametrize(("text", "why"), [
    ("not json", "not JSON"),
    ('{"v": 2, "people": {}}', '"v": 1'),
    ('{"v": 1, "people": {}, "extra": 1}', "unknown key 'extra'"),
    ('{"v": 1, "people": {"bob": {"logins": [], "updatedAt": "x"}}}', "'bob' is not a person id"),
    (f'{{"v": 1, "people": {{"{PA}": {{"logins": []}}}}}}', "updatedAt"),
    (f'{{"v": 1, "people": {{"{PA}": {{"logins": [1], "updatedAt": "x"}}}}}}', "logins"),
    (f'{{"v": 1, "people": {{"{PA}": {{"logins": [], "updatedAt": "x", "email": "e"}}}}}}',
     "unknown key 'email'"),
    (f'{{"v": 1, "people": {{"{PA}": {{"nickname": "", "logins": [], "updatedAt": "x"}}}}}}',
     "nickname"),
])
def test_parse_refuses_what_is_not_a_people_document(text: str, why: str) -> None:
    with pytest.raises(ValueError, match=re.escape(why)):
        parse_people(text)


def test_parse_defaults_and_resolution() -> None:
    d = parse_people(f'{{"v": 1, "people": {{"{PA}": {{"updatedAt": "t"}}}}}}')
    assert d["people"][PA] == {"logins": [], "updatedAt": "t"}
    assert parse_people(None) == parse_people("") == {"v": 1, "people": {}}
    linked = doc(**{PA: {"logins": ["https://idp 42"], "updatedAt": "t"}})
    assert resolve_person(linked, "https://idp", "42") == PA  # the link wins
    assert resolve_person(linked, "https://idp", "43") == person_id("https://idp", "43")


@pytest.mark.parametrize(("actor", "person"), [
    (f"user:{PA}", PA), ("user:david", None), ("token:static", None), ("client:ci", None),
    (f"client:{PA}", None), (PA, None), (None, None), ("user:" + PA.upper(), None),
])
def test_only_signed_in_actors_have_an_author(actor, person) -> None:
    d = doc(**{PA: {"nickname": "ada", "logins": [], "updatedAt": "t"}})
    assert person_of_actor(actor) == person
    assert author_of(actor, d) == ("ada" if person else None)
    assert author_of(actor, doc()) == person  # no nickname: the person id
