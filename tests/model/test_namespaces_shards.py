"""Namespaces (storage.md §1.7), session ids (§1.8, §7.9), shard keys and refs (§3.1, §3.2) and
the §8 "Shards" / "Refs" vectors."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ynm.model.namespaces import (
    SESSION_PREFIX,
    is_valid_namespace,
    namespace_matches,
    namespace_problem,
    normalize_filter_namespace,
    normalize_session_id,
    session_namespace,
    shard_collision_problem,
    write_namespace_problem,
)
from ynm.model.shards import (
    NOTES_PREFIX,
    REMOTE_PREFIX,
    TYPES,
    ShardKey,
    bucket_of,
    key_from_ref,
    ref_prefix_for,
)

DEEP = "/".join(f"l{i}" for i in range(40))


@pytest.mark.parametrize(
    "ns",
    ["common", "user/david", "org/eyelock/team/platform/project/ynm", "a.b-c_d/e", DEEP,
     "session/01m3n5dkqz", "session/my-session-", "0", "a" * 512, "x/a.b", "a.lockx", "9-_."],
)
def test_accepted_namespaces(ns):
    assert namespace_problem(ns) is None
    assert is_valid_namespace(ns)


@pytest.mark.parametrize(
    "ns",
    ["", "/leading", "trailing/", "Upper/case", "a//b", "spa ce", "a/b/../c", ".hidden",
     "x/a..b", "a.lock", "x/y.lock", "-dash", "_under", "a/.b", "a" * 513, "ü", "a\nb", "/"],
)
def test_rejected_namespaces(ns):
    assert isinstance(namespace_problem(ns), str)
    assert not is_valid_namespace(ns)


@pytest.mark.parametrize(
    ("ns", "prefix", "expected"),
    [
        ("org/eyelock/x", "org/eyelock", True),
        ("org/eyelock", "org/eyelock", True),
        ("org/eyelockx", "org/eyelock", False),
        ("user/test", "user", True),
        ("user/test", "use", False),
        ("user/test/sub", "user/test", True),
        ("user", "user/test", False),
        ("common", "common", True),
        ("commons", "common", False),
        ("anything/at/all", "", True),
    ],
)
def test_whole_segment_matching(ns, prefix, expected):
    assert namespace_matches(ns, prefix) is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, None), ("a/b/", "a/b"), ("a/b//", "a/b"), ("/", None), ("", None), ("a", "a"),
     ("user/david", "user/david")],
)
def test_filter_namespaces_strip_trailing_slashes(value, expected):
    assert normalize_filter_namespace(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [("Team/Payments", "team/payments"), ("TEAM/payments/", "team/payments"),
     ("User/David//", "user/david"), ("docs/reference/2026-12", "docs/reference/2026-12")],
)
def test_filter_namespaces_lower_case(value, expected):
    # namespaces are lowercase-only (seed 000); shard collisions only refuse new writes
    assert normalize_filter_namespace(value) == expected


@pytest.mark.parametrize(
    ("value", "words"),
    [("Team//x", "/-separated"), ("a b", "/-separated"), ("/leading", "/-separated"),
     ("-dash", "/-separated"), ("x/a..b", "'..'"), ("x/y.lock", "'.lock'"),
     ("a" * 513, "at most 512"), ("ü", "/-separated")],
)
def test_filter_namespaces_refuse_what_writes_refuse(value, words):
    with pytest.raises(ValueError, match=re.escape(words)):
        normalize_filter_namespace(value)


@pytest.mark.parametrize(
    ("session_id", "namespace"),
    [
        ("01M3N5DKQZ", "session/01m3n5dkqz"),
        ("My Session!", "session/my-session-"),
        ("a/b", "session/a-b"),
        ("..x", "session/x"),
        ("01M3N5DKQZPVDY9DMKV7YBZ341", "session/01m3n5dkqzpvdy9dmkv7ybz341"),
        ("  a  b  ", "session/a-b-"),
        ("Ünïcode ✓ id", "session/n-code-id"),
        ("-_.a", "session/a"),
        ("a_b.c-d", "session/a_b.c-d"),
    ],
)
def test_session_ids(session_id, namespace):
    assert session_namespace(session_id) == namespace
    assert normalize_session_id(session_id) == namespace[len("session/"):]


def test_session_id_truncated_to_100_after_stripping():
    assert normalize_session_id("x" * 150) == "x" * 100
    assert normalize_session_id("!!" + "y" * 120) == "y" * 100
    assert normalize_session_id("a" * 99 + "!!!b") == "a" * 99 + "-"


@pytest.mark.parametrize(
    "session_id, normalised",
    [
        ("a..b", "a.b"),
        ("..x", "x"),
        ("x.lock", "x-lock"),
        ("X.LOCK", "x-lock"),
        ("a...b.lock", "a.b-lock"),
        ("x..lock", "x-lock"),
        ("-lead", "lead"),
        (".hidden", "hidden"),
        ("_x", "x"),
        ("a b..c.lock", "a-b.c-lock"),
        ("z" * 95 + ".lock" + "tail", "z" * 95 + "-lock"),  # cut to 100, then .lock fixed
        ("w" * 600, "w" * 100),
    ],
)
def test_session_ids_that_were_invalid_segments_normalise_into_valid_ones(session_id, normalised):
    assert normalize_session_id(session_id) == normalised
    assert namespace_problem(session_namespace(session_id)) is None
    assert normalize_session_id(normalised) == normalised


@pytest.mark.parametrize("session_id", ["", "!!!", "---", "...", "._-", "  ", "✓✓", "-.-.-"])
def test_session_ids_with_nothing_usable_are_refused(session_id):
    with pytest.raises(ValueError, match="has no letter or digit"):
        normalize_session_id(session_id)
    with pytest.raises(ValueError):
        session_namespace(session_id)


@given(st.text(max_size=200))
def test_session_id_property(session_id):
    try:
        out = normalize_session_id(session_id)
    except ValueError:
        assert not any(c in "abcdefghijklmnopqrstuvwxyz0123456789" for c in session_id.lower())
        return
    assert 1 <= len(out) <= 100
    assert out[0].isascii() and (out[0].isdigit() or out[0].islower())
    assert all(c in "abcdefghijklmnopqrstuvwxyz0123456789._-" for c in out)
    assert namespace_problem(session_namespace(session_id)) is None
    assert normalize_session_id(out) == out


@given(st.text(alphabet="ab.-_!Lock", max_size=120))
def test_session_id_property_dots_and_locks(session_id):
    # an alphabet dense in the characters that make invalid segments
    try:
        out = normalize_session_id(session_id)
    except ValueError:
        return
    assert namespace_problem(SESSION_PREFIX + out) is None
    assert normalize_session_id(out) == out


# --- shards -------------------------------------------------------------------------------


def test_bucket_of():
    assert bucket_of("2026-09-29T10:00:00.000Z") == "2026-09"
    assert bucket_of("2026-12-31T23:59:59.999Z") == "2026-12"
    # The UTC month of the instant, where the reference takes the local month (§7.2).
    assert bucket_of("2026-10-01T01:00:00+02:00") == "2026-09"
    assert bucket_of("2026-12-01T01:00:00.000+05:00") == "2026-11"
    assert bucket_of("2026-11-30T16:00:00-08:00") == "2026-12"
    assert bucket_of("2026-11-30") == "2026-11"
    with pytest.raises(ValueError):
        bucket_of("2026-11-30T16:00:00")


def test_shard_id_and_refs():
    key = ShardKey("personal", "user/david", "semantic", "2026-09")
    assert key.shard_id == "personal/user/david/semantic/2026-09"
    assert key.ref == "refs/notes/ynm/personal/user/david/semantic/2026-09"
    dist = ShardKey("distributed", "org/eyelock/project/ynm", "semantic", "2026-09")
    assert dist.ref == "refs/notes/ynm/distributed/org/eyelock/project/ynm/semantic/2026-09"
    assert dist.remote_ref("origin") == (
        "refs/notes/ynm-remote/origin/distributed/org/eyelock/project/ynm/semantic/2026-09")


def test_prefix_constants():
    assert NOTES_PREFIX == "refs/notes/ynm"
    assert REMOTE_PREFIX == "refs/notes/ynm-remote"


@pytest.mark.parametrize(
    ("ref", "key"),
    [
        ("refs/notes/ynm/distributed/org/eyelock/project/ynm/semantic/2026-09",
         ShardKey("distributed", "org/eyelock/project/ynm", "semantic", "2026-09")),
        ("refs/notes/ynm/personal/user/david/semantic/2026-09",
         ShardKey("personal", "user/david", "semantic", "2026-09")),
        ("refs/notes/ynm/distributed/common/working/2026-01",
         ShardKey("distributed", "common", "working", "2026-01")),
        # parsed from the end: type-like and date-like namespace segments stay unambiguous
        ("refs/notes/ynm/personal/proj/semantic/2026-09/episodic/2026-12",
         ShardKey("personal", "proj/semantic/2026-09", "episodic", "2026-12")),
        ("refs/notes/ynm/distributed/personal/reference/2026-10",
         ShardKey("distributed", "personal", "reference", "2026-10")),
    ],
)
def test_key_from_ref_accepts(ref, key):
    assert key_from_ref(ref) == key
    assert key.ref == ref


@pytest.mark.parametrize(
    "ref",
    [
        "refs/notes/ynm/distributed/x/semantic",  # too short
        "refs/notes/ynm/distributed/x/nope/2026-09",  # bad type
        "refs/notes/ynm/distributed/x/semantic/2026-13",  # bad month
        "refs/notes/other/shared/x/semantic/2026-09",  # wrong prefix
        "refs/notes/ynm/shared/x/semantic/2026-09",  # old level name
        "refs/notes/ynm/distributed/x/semantic/2026-00",
        "refs/notes/ynm/distributed/x/semantic/26-09",
        "refs/notes/ynmx/distributed/x/semantic/2026-09",
        "refs/notes/ynm",
        "",
    ],
)
def test_key_from_ref_rejects(ref):
    assert key_from_ref(ref) is None


def test_key_from_remote_ref():
    ref = "refs/notes/ynm-remote/origin/distributed/org/eyelock/project/ynm/semantic/2026-09"
    key = key_from_ref(ref, prefix=f"{REMOTE_PREFIX}/origin")
    assert key == ShardKey("distributed", "org/eyelock/project/ynm", "semantic", "2026-09")
    assert key_from_ref(ref) is None


def test_ref_prefix_for():
    assert ref_prefix_for("distributed", "org") == "refs/notes/ynm/distributed/org/"
    assert ref_prefix_for("distributed", "org/") == "refs/notes/ynm/distributed/org/"
    assert ref_prefix_for("personal") == "refs/notes/ynm/personal/"
    assert ref_prefix_for("personal", None) == "refs/notes/ynm/personal/"


SEG = st.from_regex(r"\A[a-z0-9][a-z0-9_-]{0,6}\Z")


@given(
    st.sampled_from(["personal", "distributed"]),
    st.lists(SEG, min_size=1, max_size=5).map("/".join),
    st.sampled_from(["working", "episodic", "semantic", "procedural", "reflective",
                     "reference"]),
    st.integers(1970, 9999),
    st.integers(1, 12),
)
def test_ref_round_trip_property(level, ns, mtype, year, month):
    key = ShardKey(level, ns, mtype, f"{year:04d}-{month:02d}")
    assert key_from_ref(key.ref) == key
    assert key.ref.startswith(ref_prefix_for(level, ns))


# ----------------------------------------------------------------- shard ref collisions (§7.22)

@pytest.mark.parametrize(
    "ns",
    ["docs/reference/2026-12", "a/semantic/2026-09", "a/semantic/2026-09/x",
     "org/team/working/2025-01", "x/y/episodic/1999-12/z", "p/procedural/0000-01",
     "q/reflective/2026-02/reference/2026-03"],
)
def test_namespaces_that_would_collide_with_another_namespaces_shard_refs(ns):
    problem = shard_collision_problem(ns)
    assert problem is not None and "collide" in problem
    assert write_namespace_problem(ns) == problem
    assert namespace_problem(ns) is None  # still a readable namespace: old records stay visible


@pytest.mark.parametrize(
    "ns",
    ["docs", "reference/2026-12", "semantic/2026-09/x", "docs/reference", "docs/reference/x",
     "docs/2026-12/reference", "docs/references/2026-12", "docs/reference/2026-1",
     "docs/reference/202612", "docs/reference-2026-12", "a/semantic/2026-09x",
     "x/episodic/1999-13", "p/procedural/2026-00"],
)
def test_namespaces_that_cannot_collide(ns):
    assert shard_collision_problem(ns) is None
    assert write_namespace_problem(ns) is None


def test_collision_rule_matches_ref_prefixes():
    """The rule is exact for refs: a namespace is refused when some shard ref of another
    namespace is a directory of one of its own shard refs."""
    spaces = ["a", "a/b", "a/semantic", "a/semantic/2026-09", "a/semantic/2026-09/x",
              "semantic/2026-09", "a/b/working/2026-01", "a/b/working"]
    def refs(ns):
        return {ShardKey("distributed", ns, t, b).ref for t in TYPES for b in ("2026-09", "2026-01")}
    for ns in spaces:
        clashes = any(
            other != ns and any(mine.startswith(theirs + "/") for mine in refs(ns)
                                for theirs in refs(other))
            for other in spaces)
        assert (shard_collision_problem(ns) is not None) == clashes, ns
