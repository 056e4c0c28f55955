"""Record schema: storage.md §1.1-§1.3, §7.10/§7.11/§7.25/§7.27 and the §8 "Record schema" vectors."""

from __future__ import annotations

import json

import pytest
from pydantic import ValidationError

from ynm.model.durations import DEFAULT_WORKING_TTL, duration_ms, is_duration
from ynm.model.ids import is_ulid
from ynm.model.jsonl import dumps_record, parse_jsonl, parse_line, parse_obj
from ynm.model.records import (
    Link,
    Provenance,
    Record,
    datetime_ms,
    normalize_datetime,
    validation_message,
)

try:
    from tests.support.records import DROP, make_record, ulid
except ImportError:  # tests/ is not a package: pytest puts tests/ itself on sys.path
    from support.records import DROP, make_record, ulid

DAY = 86_400_000


def ok(**overrides) -> Record:
    return parse_obj(make_record(**overrides))


def bad(**overrides) -> str:
    with pytest.raises(ValueError) as info:
        parse_obj(make_record(**overrides))
    return str(info.value)


# --- §8 "Record schema" vectors ------------------------------------------------------------


def test_fixture_create_parses_with_default_tags_and_links():
    r = ok()
    assert r.tags == []
    assert r.links == []
    assert r.op == "create"
    assert r.memory_id == r.id
    assert r.content == "Root commit is the anchor."
    assert r.provenance.actor == "test"


def test_removing_content_fails():
    bad(content=DROP)


def test_create_with_memory_id_not_equal_to_id_fails():
    msg = bad(memoryId=ulid())
    assert "memoryId" in msg


def test_supersede_needs_supersedes_link():
    prior = ulid()
    base = {"op": "supersede", "id": ulid(), "memoryId": prior}
    bad(**base)
    bad(**base, links=[{"rel": "about", "to": prior}])
    r = ok(**base, links=[{"rel": "supersedes", "to": prior}])
    assert r.links == [Link(rel="supersedes", to=prior)]


def test_supersedes_link_target_is_not_checked_against_memory_id():
    ok(op="supersede", id=ulid(), memoryId=ulid(), links=[{"rel": "supersedes", "to": ulid()}])


def test_working_needs_session_namespace():
    bad(type="working", namespace="user/david")
    r = ok(type="working", namespace="session/abc", ttl="PT1H")
    assert r.ttl == "PT1H"


def test_extra_top_level_key_fails():
    bad(extra=1)


def test_data_and_data_schema_pass():
    r = ok(data={"role": "engineer"}, dataSchema="user-profile/1")
    assert r.data == {"role": "engineer"}
    assert r.data_schema == "user-profile/1"


# --- §1.3 cross-field rules ---------------------------------------------------------------


@pytest.mark.parametrize("op", ["create", "supersede"])
def test_empty_content_fails_for_content_ops(op):
    rid = ulid()
    links = [{"rel": "supersedes", "to": rid}]
    bad(op=op, id=rid, memoryId=rid, links=links, content="")
    bad(op=op, id=rid, memoryId=rid, links=links, content=DROP)


@pytest.mark.parametrize("op", ["annotate", "tombstone", "purge-marker"])
def test_other_ops_need_no_content_and_may_carry_it(op):
    mid = ulid()
    ok(op=op, id=ulid(), memoryId=mid, content=DROP)
    ok(op=op, id=ulid(), memoryId=mid, content="ignored by the fold")
    ok(op=op, id=ulid(), memoryId=mid, content="")


@pytest.mark.parametrize("op", ["annotate", "tombstone", "purge-marker", "snapshot"])
def test_non_create_ops_may_have_memory_id_other_than_id(op):
    extra = {"data": {}} if op == "snapshot" else {}
    r = ok(op=op, id=ulid(), memoryId=ulid(), content=DROP, **extra)
    assert r.memory_id != r.id


def test_snapshot_needs_data():
    bad(op="snapshot", id=ulid(), memoryId=ulid(), content=DROP)
    r = ok(op="snapshot", id=ulid(), memoryId=ulid(), content=DROP, data={})
    assert r.data == {}


@pytest.mark.parametrize("ns", ["session", "user/david", "sessions/x", "common", "x/session/y"])
def test_working_outside_session_prefix_fails(ns):
    bad(type="working", namespace=ns)


@pytest.mark.parametrize("ns", ["session/abc", "session/abc/def", "session/my-session-"])
def test_working_inside_session_prefix_passes(ns):
    ok(type="working", namespace=ns)


@pytest.mark.parametrize("t", ["episodic", "semantic", "procedural", "reflective", "reference"])
def test_other_types_may_live_under_session(t):
    ok(type=t, namespace="session/abc")


# --- strictness ---------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["extra", "memory_id", "Content", "recorded_at", "dreamed"])
def test_unknown_top_level_keys_fail(key):
    bad(**{key: "x"})


def test_nested_provenance_unknown_keys_are_dropped():
    r = ok(provenance={"actor": "user:david", "client": "cli", "colour": "blue", "n": 1})
    assert r.provenance == Provenance(actor="user:david", client="cli")
    assert '"provenance":{"actor":"user:david","client":"cli"}' in dumps_record(r)
    assert "colour" not in dumps_record(r)


def test_nested_link_unknown_keys_are_dropped():
    to = ulid()
    r = ok(links=[{"rel": "about", "to": to, "weight": 3, "note": "x"}])
    assert r.links == [Link(rel="about", to=to)]
    assert f'"links":[{{"rel":"about","to":"{to}"}}]' in dumps_record(r)


@pytest.mark.parametrize(
    "prov",
    [{}, {"actor": ""}, {"actor": 5}, {"source": "x"}, "user:david", None],
)
def test_provenance_needs_actor(prov):
    bad(provenance=prov)


def test_provenance_required():
    bad(provenance=DROP)


@pytest.mark.parametrize(
    "link",
    [
        {"rel": "likes", "to": "01ARZ3NDEKTSV4RRFFQ69G5FAV"},
        {"rel": "about"},
        {"to": "01ARZ3NDEKTSV4RRFFQ69G5FAV"},
        {"rel": "about", "to": "01arz3ndektsv4rrffq69g5fav"},
        {"rel": "about", "to": "not-a-ulid"},
    ],
)
def test_bad_links_fail(link):
    bad(links=[link])


def test_all_relations_accepted():
    to = ulid()
    rels = ["supersedes", "derives-from", "contradicts", "supports", "about", "in-session"]
    r = ok(links=[{"rel": rel, "to": to} for rel in rels])
    assert [link.rel for link in r.links] == rels


@pytest.mark.parametrize("key", ["v", "id", "memoryId", "op", "type", "level", "namespace",
                                 "recordedAt", "provenance"])
def test_required_fields(key):
    bad(**{key: DROP})


@pytest.mark.parametrize("op", ["delete", "Create", "", "snapshots"])
def test_bad_op_fails(op):
    bad(op=op)


@pytest.mark.parametrize("t", ["Working", "note", ""])
def test_bad_type_fails(t):
    bad(type=t)


@pytest.mark.parametrize("level", ["shared", "Personal", ""])
def test_bad_level_fails(level):
    bad(level=level)


# --- ULIDs --------------------------------------------------------------------------------


def test_ulid_is_uppercase_only():
    good = "01ARZ3NDEKTSV4RRFFQ69G5FAV"
    assert is_ulid(good)
    assert not is_ulid(good.lower())
    bad(id=good.lower(), memoryId=good.lower())
    bad(id=good, memoryId=good.lower())


@pytest.mark.parametrize(
    "value",
    [
        "81ARZ3NDEKTSV4RRFFQ69G5FAV",  # first char 8: beyond 48 bits
        "Z1ARZ3NDEKTSV4RRFFQ69G5FAV",
        "01ARZ3NDEKTSV4RRFFQ69G5FA",  # 25 chars
        "01ARZ3NDEKTSV4RRFFQ69G5FAVV",  # 27 chars
        "01ARZ3NDEKTSV4RRFFQ69G5FAI",  # I, L, O, U are not Crockford
        "01ARZ3NDEKTSV4RRFFQ69G5FAL",
        "01ARZ3NDEKTSV4RRFFQ69G5FAO",
        "01ARZ3NDEKTSV4RRFFQ69G5FAU",
        "",
    ],
)
def test_bad_ulids_rejected(value):
    assert not is_ulid(value)
    bad(id=value, memoryId=value)


def test_first_char_7_is_the_maximum():
    assert is_ulid("7ZZZZZZZZZZZZZZZZZZZZZZZZZ")
    ok(id="7ZZZZZZZZZZZZZZZZZZZZZZZZZ", memoryId="7ZZZZZZZZZZZZZZZZZZZZZZZZZ")
    assert not is_ulid("8000000000000000000000000")
    assert not is_ulid(None)
    assert not is_ulid(123)


# --- schema version -----------------------------------------------------------------------


def test_unknown_schema_version_message():
    line = json.dumps(make_record(v=99))
    with pytest.raises(ValueError, match=r"^unknown schema version 99$"):
        parse_line(line)
    result = parse_jsonl(line + "\n")
    assert result.records == []
    assert [(p.line, p.message) for p in result.problems] == [(1, "unknown schema version 99")]


@pytest.mark.parametrize("v", [0, 2, -1])
def test_other_numeric_versions(v):
    with pytest.raises(ValueError, match=rf"^unknown schema version {v}$"):
        parse_obj(make_record(v=v))


@pytest.mark.parametrize("v", ["1", None, True, [1]])
def test_non_numeric_versions_fail(v):
    # v is the literal number 1; JSON true is not the number 1 (zod z.literal(1) rejects it).
    with pytest.raises(ValueError):
        parse_obj(make_record(v=v))


# --- date-times ---------------------------------------------------------------------------


def test_bare_date_becomes_midnight_utc():
    r = ok(recordedAt="2026-09-01", validFrom="2026-08-31", validTo="2027-01-01")
    assert r.recorded_at == "2026-09-01T00:00:00.000Z"
    assert r.valid_from == "2026-08-31T00:00:00.000Z"
    assert r.valid_to == "2027-01-01T00:00:00.000Z"
    assert '"recordedAt":"2026-09-01T00:00:00.000Z"' in dumps_record(r)


@pytest.mark.parametrize(
    ("value", "canonical"),
    [
        ("2026-09-01T10:00:00.000Z", "2026-09-01T10:00:00.000Z"),
        ("2026-09-01T10:00:00Z", "2026-09-01T10:00:00.000Z"),
        ("2026-09-01T10:00Z", "2026-09-01T10:00:00.000Z"),
        ("2026-09-01T12:00:00+02:00", "2026-09-01T10:00:00.000Z"),
        ("2026-09-01T12:00:00.123+02:00", "2026-09-01T10:00:00.123Z"),
        ("2026-09-01T05:30:00-04:30", "2026-09-01T10:00:00.000Z"),
        ("2026-09-01T15:30:00+0530", "2026-09-01T10:00:00.000Z"),
        ("2026-09-01T10:00:00.5Z", "2026-09-01T10:00:00.500Z"),
        ("2026-09-01T10:00:00.123456Z", "2026-09-01T10:00:00.123Z"),  # digits past ms dropped
        ("2026-09-01T10:00:00.999999999Z", "2026-09-01T10:00:00.999Z"),
        ("2026-12-01T01:00:00.000+05:00", "2026-11-30T20:00:00.000Z"),  # previous UTC month
        ("2026-12-31T16:30:00-08:00", "2027-01-01T00:30:00.000Z"),  # next UTC year
        ("2026-09-01T10:00:00-00:00", "2026-09-01T10:00:00.000Z"),
        ("0001-01-01T00:00:00Z", "0001-01-01T00:00:00.000Z"),
        ("9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.999Z"),
    ],
)
def test_datetimes_become_canonical_utc_instants(value, canonical):
    r = ok(recordedAt=value, validFrom=value, validTo=value)
    assert (r.recorded_at, r.valid_from, r.valid_to) == (canonical,) * 3
    assert r.bucket == canonical[:7]
    assert f'"recordedAt":"{canonical}"' in dumps_record(r)


def test_normalize_datetime_rounds_up_only_when_asked():
    assert normalize_datetime("2026-09-01T10:00:00.1231Z") == "2026-09-01T10:00:00.123Z"
    assert normalize_datetime("2026-09-01T10:00:00.1231Z", round_up=True) == \
        "2026-09-01T10:00:00.124Z"
    assert normalize_datetime("2026-09-01T10:00:00.1230000Z", round_up=True) == \
        "2026-09-01T10:00:00.123Z"
    assert normalize_datetime("2026-09-01T10:00:00.9999+05:00", round_up=True) == \
        "2026-09-01T05:00:01.000Z"
    assert datetime_ms("1970-01-01T00:00:00.001Z") == 1
    assert datetime_ms("1970-01-01T05:30:00+05:30") == 0
    assert datetime_ms("1969-12-31") == -86_400_000


def test_canonical_text_order_is_instant_order():
    values = ["2026-11-30T12:00:00Z", "2026-11-30T12:00:00.500Z", "2026-11-30T17:00:00.250+05:00",
              "2026-11-30T04:00:00.750-08:00", "2026-11-30T12:00:01+00:00", "2026-11-30"]
    by_text = sorted(normalize_datetime(v) for v in values)
    by_instant = [normalize_datetime(v) for v in sorted(values, key=datetime_ms)]
    assert by_text == by_instant
    assert [datetime_ms(v) for v in by_text] == sorted(datetime_ms(v) for v in values)


@pytest.mark.parametrize(
    "value",
    [
        "yesterday",
        "",
        "2026-13-01T00:00:00Z",
        "2026-02-30T00:00:00Z",
        "2026-09-01T25:00:00Z",
        "2026-09-01T10:61:00Z",
        "2026-09-01 10:00:00Z",
        "2026-09-01T10:00:00",  # no offset
        "2026-9-1",
        "2026-02-30",
        "20260901",
        "1788220800000",
        "2026-02-30T00:00:00.000Z",  # the canonical form is checked too
        "2026-09-01T24:00:00.000Z",
        "0000-01-01T00:00:00.000Z",
        "2026-09-01T10:00:00+24:00",  # offsets stay under a day
        "2026-09-01T10:00:00+05:60",
        "2026-09-01T10:00:00.Z",
        "2026-09-01T10:00:00z",
        "2026-09-01T10:00:00Z\n",
        "2026-09-01\n",
        "\uff12\uff10\uff12\uff16-09-01",  # full-width digits are not ASCII digits
        "0001-01-01T00:00:00+01:00",  # year 0 in UTC
        "9999-12-31T23:30:00-01:00",  # year 10000 in UTC
    ],
)
def test_garbage_datetimes_rejected(value):
    assert "expected an ISO 8601 date-time" in bad(recordedAt=value)
    bad(validFrom=value)
    with pytest.raises(ValueError):
        normalize_datetime(value)


def test_datetime_messages_say_what_is_missing_and_which_value():
    assert bad(recordedAt="2026-09-01T10:00:00") == (
        "recordedAt: expected an ISO 8601 date-time with Z or an offset, got "
        "'2026-09-01T10:00:00': add Z for UTC (2026-09-01T10:00:00Z) or an offset "
        "(2026-09-01T10:00:00+05:00)")
    assert bad(validFrom="9999-12-31T23:30:00-01:00") == (
        "validFrom: expected an ISO 8601 date-time in years 0001..9999 (UTC), got "
        "'9999-12-31T23:30:00-01:00'")
    assert bad(validTo="2026-02-30T00:00:00Z") == (
        "validTo: expected an ISO 8601 date-time, got '2026-02-30T00:00:00Z': no such day or "
        "time")
    assert bad(validTo="2026-13-01") == (
        "validTo: expected an ISO 8601 date-time, got '2026-13-01': no such day or time")
    assert bad(validTo="2026-02-30T00:00:00.000Z") == (  # the canonical form's own path
        "validTo: expected an ISO 8601 date-time, got '2026-02-30T00:00:00.000Z': no such day "
        "or time")
    assert bad(validTo="20261131T120000Z") == (
        "validTo: expected an ISO 8601 date-time, got '20261131T120000Z': no such day or time")
    assert bad(validTo="2026-11-30T12:00:00+05:60") == (
        "validTo: expected an ISO 8601 date-time, got '2026-11-30T12:00:00+05:60': no such "
        "offset")
    long = "x" * 100  # a long value is cut, and control characters are escaped
    assert bad(validTo=long).endswith(f", got {'x' * 40!r}...")
    assert bad(validTo="\x1b[31m").endswith(", got '\\x1b[31m'")


def test_recorded_at_must_be_a_string():
    bad(recordedAt=1_788_220_800_000)


def test_valid_to_may_be_null_but_recorded_at_may_not():
    r = ok(validTo=None)
    assert r.valid_to is None
    bad(recordedAt=None)


# --- numbers and flags --------------------------------------------------------------------


@pytest.mark.parametrize("field", ["importance", "confidence"])
@pytest.mark.parametrize("value", [0, 1, 0.0, 1.0, 0.5, 1e-9])
def test_unit_interval_accepted(field, value):
    r = ok(**{field: value})
    assert getattr(r, field) == value


@pytest.mark.parametrize("field", ["importance", "confidence"])
@pytest.mark.parametrize("value", [-0.01, 1.0001, 2, -1, True, False, "0.5", [0.5]])
def test_unit_interval_rejected(field, value):
    bad(**{field: value})


@pytest.mark.parametrize("field", ["pinned", "needsReview"])
@pytest.mark.parametrize("value", [1, 0, "true", "false"])
def test_flags_must_be_booleans(field, value):
    bad(**{field: value})


@pytest.mark.parametrize(
    "field",
    ["subject", "content", "summary", "data", "dataSchema", "importance", "confidence",
     "pinned", "needsReview", "validFrom", "ttl", "reason", "tags", "links"],
)
def test_null_is_only_allowed_for_valid_to(field):
    # §1.2: optional fields are absent or typed; only validTo is "date-time or null".
    # (zod .optional() rejects null; the create fixture keeps content required separately.)
    overrides = {field: None}
    if field == "content":
        overrides.update(op="annotate", id=ulid(), memoryId=ulid())
    bad(**overrides)


# --- lengths ------------------------------------------------------------------------------


def test_tags_length_per_tag_and_no_count_limit():
    ok(tags=["x" * 64])
    bad(tags=["x" * 65])
    bad(tags=[""])
    bad(tags=["ok", ""])
    bad(tags=[1])
    bad(tags="a")
    r = ok(tags=[f"t{i}" for i in range(1000)])
    assert len(r.tags) == 1000


def test_links_have_no_count_limit():
    r = ok(links=[{"rel": "about", "to": ulid()} for _ in range(500)])
    assert len(r.links) == 500


@pytest.mark.parametrize(
    ("field", "limit"),
    [("subject", 200), ("summary", 280), ("dataSchema", 100), ("reason", 1000)],
)
def test_string_limits(field, limit):
    ok(**{field: "s" * limit})
    bad(**{field: "s" * (limit + 1)})


def test_summary_281_rejected():
    bad(summary="x" * 281)


def test_content_limit():
    ok(content="c" * 65536)
    bad(content="c" * 65537)


def test_namespace_limit():
    ns = "/".join(["a" * 15] * 32)  # 32*15 + 31 = 511
    ok(namespace=ns + "b")
    bad(namespace=ns + "bb")


@pytest.mark.parametrize("ns", ["", "/leading", "trailing/", "Upper/case", "a//b", "spa ce",
                                "a/b/../c", ".hidden", "x/a..b", "a.lock"])
def test_bad_namespace_rejected_in_records(ns):
    bad(namespace=ns)


def test_data_must_be_an_object():
    bad(data=[1, 2])
    bad(data="x")
    ok(data={"nested": {"a": [1, "b", None, True]}})


# --- ttl and durations --------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    ["PT2H", "P7D", "P1Y2M3W4DT5H6M7S", "PT8H", "P1M", "PT1M", "P2W", "PT0S", "P0D", "PT36H",
     "P1DT1S", DEFAULT_WORKING_TTL],
)
def test_valid_durations(value):
    assert is_duration(value)
    ok(type="working", namespace="session/abc", ttl=value)


@pytest.mark.parametrize(
    "value",
    ["P", "PT", "P1.5D", "PT1H2D", "PT1.5H", "P1DT", "p1d", "P1d", "-P1D", "P1H", "PT1D",
     "P1D1Y", "1D", "", "P 1D", "PT1H ", "P1W1Y"],
)
def test_invalid_durations(value):
    assert not is_duration(value)
    bad(ttl=value)
    with pytest.raises(ValueError):
        duration_ms(value)


@pytest.mark.parametrize(
    ("value", "ms"),
    [
        ("PT2H", 2 * 3600 * 1000),
        ("P7D", 7 * DAY),
        ("PT8H", 8 * 3600 * 1000),
        ("P1Y", 365 * DAY),
        ("P1M", 30 * DAY),
        ("P1W", 7 * DAY),
        ("PT1M", 60 * 1000),
        ("PT1S", 1000),
        ("P0D", 0),
        ("P1Y2M3W4DT5H6M7S", ((365 + 60 + 21 + 4) * 86400 + 5 * 3600 + 6 * 60 + 7) * 1000),
        ("PT36H", 36 * 3600 * 1000),
    ],
)
def test_duration_ms(value, ms):
    assert duration_ms(value) == ms


def test_default_working_ttl():
    assert DEFAULT_WORKING_TTL == "PT8H"


# --- messages and immutability ------------------------------------------------------------


def test_validation_message_names_the_path():
    with pytest.raises(ValidationError) as info:
        Record.model_validate(make_record(importance=2))
    assert validation_message(info.value).startswith("importance: ")
    with pytest.raises(ValidationError) as info:
        Record.model_validate(make_record(content=""))
    assert "content" in validation_message(info.value)


def test_records_are_immutable_and_python_names_work():
    r = ok()
    with pytest.raises(ValidationError):
        r.content = "changed"  # type: ignore[misc]
    same = Record(
        v=1, id=r.id, memory_id=r.id, op="create", type="semantic", level="personal",
        namespace="user/david", content=r.content, recorded_at=r.recorded_at,
        provenance=Provenance(actor="test"),
    )
    assert same == r
    assert r.bucket == "2026-09"
    assert r.sort_key == (r.recorded_at, r.id)


def test_length_limits_count_utf16_code_units_like_javascript():
    # A character outside the Basic Multilingual Plane is two UTF-16 code units (storage.md §1.2
    # limits are the reference's zod .max(), which counts code units).
    from ynm.model.records import js_length

    assert js_length("abc") == 3
    assert js_length("é") == 1
    assert js_length("😀") == 2
    ok = make_record(summary="😀" * 140)
    assert parse_obj(ok).summary == "😀" * 140
    with pytest.raises(ValueError, match="summary"):
        parse_obj(make_record(summary="😀" * 141))
    with pytest.raises(ValueError, match="tag"):
        parse_obj(make_record(tags=["😀" * 33]))
