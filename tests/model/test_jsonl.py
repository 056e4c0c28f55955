"""JSONL reader and writer: storage.md §1.1 (line format, key order, numbers), §1.4 (reader rules)
and the §8 "Parser" vectors."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ynm.model.ids import iso_ms
from ynm.model.jsonl import (
    dumps_record,
    js_number,
    parse_jsonl,
    parse_line,
    parse_obj,
    record_to_obj,
    serialize_records,
)

try:
    from tests.support.records import DROP, make_record, ulid
except ImportError:
    from support.records import DROP, make_record, ulid


def line(**overrides) -> str:
    return json.dumps(make_record(**overrides))


# --- §8 Parser vectors --------------------------------------------------------------------


def test_parser_vector_good_bad_json_and_invalid_record():
    good = line()
    no_memory_id = line(id=ulid(), memoryId=DROP)
    text = f"{good}\n{{not json\n{no_memory_id}\n"
    result = parse_jsonl(text)
    assert len(result.records) == 1
    assert result.records[0].id == json.loads(good)["id"]
    assert len(result.problems) == 2
    assert result.problems[0].line == 2
    assert result.problems[0].message.startswith("invalid JSON")
    assert result.problems[1].line == 3
    assert "memoryId" in result.problems[1].message


def test_parser_vector_unknown_version():
    result = parse_jsonl(line(v=99))
    assert result.records == []
    assert [p.message for p in result.problems] == ["unknown schema version 99"]


def test_parser_vector_same_line_twice_gives_one_record():
    good = line()
    result = parse_jsonl(f"{good}\n{good}\n")
    assert len(result.records) == 1
    assert result.problems == []


def test_duplicate_id_first_in_text_order_wins():
    rid = ulid()
    first = line(id=rid, content="first")
    second = line(id=rid, content="second")
    result = parse_jsonl(f"{second}\n{first}\n")
    assert [r.content for r in result.records] == ["second"]
    assert result.problems == []


def test_parser_vector_serialize_round_trip():
    records = parse_jsonl("\n".join(line() for _ in range(3))).records
    text = serialize_records(records)
    assert text.endswith("\n")
    assert text.count("\n") == 3
    assert parse_jsonl(text).records == records
    assert serialize_records(parse_jsonl(text).records) == text


def test_serialize_empty_batch():
    assert serialize_records([]) == ""
    assert serialize_records(iter([])) == ""


def test_blank_lines_skipped_with_correct_line_numbers():
    a, b = line(), line()
    text = f"\n\n{a}\n   \n{{bad\n\t\n{b}\n\n[1, 2]\n42\nnull\n\"str\"\n"
    result = parse_jsonl(text)
    assert [r.id for r in result.records] == [json.loads(a)["id"], json.loads(b)["id"]]
    assert [p.line for p in result.problems] == [5, 9, 10, 11, 12]
    assert result.problems[0].message.startswith("invalid JSON")
    assert str(result.problems[0]).startswith("line 5: invalid JSON")


def test_first_line_offsets_problem_numbers():
    result = parse_jsonl("{bad\n", first_line=10)
    assert [p.line for p in result.problems] == [10]


def test_reader_never_raises_on_junk():
    for junk in ["", "\n", "{", "}", "\x00", b"\xff\xfe{", b"", "\r\n", "[]", "{}"]:
        parse_jsonl(junk)


def test_crlf_lines_are_tolerated():
    result = parse_jsonl(line() + "\r\n" + line() + "\r\n")
    assert len(result.records) == 2
    assert result.problems == []


def test_bytes_are_decoded_as_utf8():
    text = line(content="café ✓").encode("utf-8")
    assert parse_jsonl(text).records[0].content == "café ✓"


def test_nan_and_infinity_are_invalid_json():
    # JSON.parse rejects NaN/Infinity; accepting them would also make the record unwritable.
    for literal in ["NaN", "Infinity", "-Infinity"]:
        text = line()[:-1] + f', "data": {{"x": {literal}}}}}'
        result = parse_jsonl(text)
        assert result.records == [], literal
        assert len(result.problems) == 1
        assert result.problems[0].message.startswith("invalid JSON"), literal


@pytest.mark.parametrize(("number", "where"), [
    ("1e400", "x"), ("-1e999", "x"), ("1" + "0" * 400, "x"), ("[0.5, 2e308]", "x.1")])
def test_numbers_out_of_range_make_a_bad_line(number, where):
    """JSON.parse reads 1e400 as Infinity, which no record can be written with; a line
    holding one (or an integer no double holds) is a bad line, skipped and reported."""
    text = line()[:-1] + f', "data": {{"x": {number}}}}}'
    result = parse_jsonl(text)
    assert result.records == []
    assert [p.message for p in result.problems] == [
        f"data: key {where} is NaN, Infinity or a number out of range, which JSON cannot hold"]


def test_large_finite_numbers_are_kept():
    text = line()[:-1] + ', "data": {"x": 1.7976931348623157e308, "y": -9007199254740993}}'
    assert parse_jsonl(text).records[0].data == {"x": 1.7976931348623157e308,
                                                 "y": -9007199254740993}


def test_parse_line_raises_value_errors():
    with pytest.raises(ValueError, match="^invalid JSON"):
        parse_line("{nope")
    with pytest.raises(ValueError):
        parse_line("[1]")
    with pytest.raises(ValueError):
        parse_obj("x")


# --- writer: key order, numbers, text -----------------------------------------------------


FULL_ID = "01M1D47Z00AAAAAAAAAAAAAAAA"
FULL_MID = "01M1D47Z00BBBBBBBBBBBBBBBB"
FULL_TO = "01M1D47Z00CCCCCCCCCCCCCCCC"


def full_record_obj() -> dict:
    # Every field set; keys deliberately scrambled so the writer must impose the order.
    return {
        "reason": "because",
        "links": [{"to": FULL_MID, "rel": "supersedes"}, {"to": FULL_TO, "rel": "about"}],
        "provenance": {"tool": "cli", "source": "file.md", "session": "s1", "client": "c1",
                       "actor": "user:david"},
        "ttl": "PT1H",
        "validTo": "2026-12-31T00:00:00.000Z",
        "validFrom": "2026-09-01T00:00:00.000Z",
        "recordedAt": "2026-09-29T10:00:00.000Z",
        "needsReview": False,
        "pinned": True,
        "confidence": 0.35,
        "importance": 1.0,
        "dataSchema": "user-profile/1",
        "data": {"role": "engineer", "n": 100.0, "tiny": 1e-7, "k": [1, 2.5]},
        "summary": "Café ✓",
        "content": "Héllo — 日本語 ✓",
        "tags": ["a", "b"],
        "subject": "entity:git-notes",
        "namespace": "session/abc",
        "level": "personal",
        "type": "working",
        "op": "supersede",
        "memoryId": FULL_MID,
        "id": FULL_ID,
        "v": 1,
    }


FULL_LINE = (
    '{"v":1,"id":"01M1D47Z00AAAAAAAAAAAAAAAA","memoryId":"01M1D47Z00BBBBBBBBBBBBBBBB",'
    '"op":"supersede","type":"working","level":"personal","namespace":"session/abc",'
    '"subject":"entity:git-notes","tags":["a","b"],"content":"Héllo — 日本語 ✓",'
    '"summary":"Café ✓","data":{"role":"engineer","n":100,"tiny":1e-7,"k":[1,2.5]},'
    '"dataSchema":"user-profile/1","importance":1,"confidence":0.35,"pinned":true,'
    '"needsReview":false,"recordedAt":"2026-09-29T10:00:00.000Z",'
    '"validFrom":"2026-09-01T00:00:00.000Z","validTo":"2026-12-31T00:00:00.000Z","ttl":"PT1H",'
    '"provenance":{"actor":"user:david","client":"c1","session":"s1","source":"file.md",'
    '"tool":"cli"},'
    '"links":[{"rel":"supersedes","to":"01M1D47Z00BBBBBBBBBBBBBBBB"},'
    '{"rel":"about","to":"01M1D47Z00CCCCCCCCCCCCCCCC"}],"reason":"because"}'
)


def test_key_order_of_a_full_record_is_exact():
    r = parse_obj(full_record_obj())
    assert dumps_record(r) == FULL_LINE
    assert serialize_records([r]) == FULL_LINE + "\n"
    assert list(record_to_obj(r)) == [
        "v", "id", "memoryId", "op", "type", "level", "namespace", "subject", "tags", "content",
        "summary", "data", "dataSchema", "importance", "confidence", "pinned", "needsReview",
        "recordedAt", "validFrom", "validTo", "ttl", "provenance", "links", "reason",
    ]
    assert parse_line(FULL_LINE) == r
    assert dumps_record(parse_line(FULL_LINE)) == FULL_LINE


def test_minimal_record_leaves_absent_keys_out_but_keeps_tags_and_links():
    rid = "01M1D47Z00DDDDDDDDDDDDDDDD"
    r = parse_obj(make_record(id=rid, content="x"))
    assert dumps_record(r) == (
        f'{{"v":1,"id":"{rid}","memoryId":"{rid}","op":"create","type":"semantic",'
        '"level":"personal","namespace":"user/david","tags":[],"content":"x",'
        '"recordedAt":"2026-09-01T10:00:00.000Z","provenance":{"actor":"test"},"links":[]}'
    )


def test_lines_begin_with_v_and_id():
    r = parse_obj(make_record())
    assert dumps_record(r).startswith(f'{{"v":1,"id":"{r.id}",')


def test_valid_to_null_kept_when_given_and_absent_when_not():
    with_null = parse_obj(make_record(validTo=None))
    assert '"validTo":null' in dumps_record(with_null)
    assert record_to_obj(with_null)["validTo"] is None
    assert '"validTo":null' in dumps_record(parse_line(dumps_record(with_null)))
    without = parse_obj(make_record())
    assert "validTo" not in dumps_record(without)


def test_non_ascii_written_as_utf8():
    text = "café — 日本語 ✓ 🎉 \u2028"
    out = dumps_record(parse_obj(make_record(content=text, tags=["ünï"], subject="ß")))
    assert text in out
    assert "\\u" not in out
    assert '"tags":["ünï"]' in out
    assert '"subject":"ß"' in out


def test_control_characters_escaped_as_json_stringify_does():
    out = dumps_record(parse_obj(make_record(content='a\nb\t"c"\\\x01\x1f\x7f')))
    assert '"content":"a\\nb\\t\\"c\\"\\\\\\u0001\\u001f\x7f"' in out


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (1, "1"),
        (1.0, "1"),
        (0, "0"),
        (0.0, "0"),
        (-0.0, "0"),
        (0.35, "0.35"),
        (0.5, "0.5"),
        (1e-7, "1e-7"),
        (1.5e-7, "1.5e-7"),
        (0.000001, "0.000001"),
        (0.0000015, "0.0000015"),
        (1e21, "1e+21"),
        (1.5e21, "1.5e+21"),
        (1e20, "100000000000000000000"),
        (123456789012345680000.0, "123456789012345680000"),
        (100.0, "100"),
        (100, "100"),
        (2.5e-05, "0.000025"),
        (0.1 + 0.2, "0.30000000000000004"),
        (-0.35, "-0.35"),
        (-1e-7, "-1e-7"),
        (1.5e300, "1.5e+300"),
        (5e-324, "5e-324"),
        (1.7976931348623157e308, "1.7976931348623157e+308"),
        (123.456, "123.456"),
        (0.0012, "0.0012"),
        (10.5, "10.5"),
        (1e16, "10000000000000000"),
    ],
)
def test_js_number(value, text):
    assert js_number(value) == text


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_js_number_rejects_non_finite(value):
    with pytest.raises(ValueError):
        js_number(value)


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_js_number_property(x):
    text = js_number(x)
    assert float(text) == x
    assert "e-0" not in text and "e+0" not in text and ".0e" not in text
    if x == 0:
        assert text == "0"
    elif 1e-6 <= abs(x) < 1e21:
        assert "e" not in text
    else:
        assert "e" in text
    if x == int(x) and abs(x) < 1e21:
        assert "." not in text


def test_numbers_in_records_are_written_as_javascript_does():
    r = parse_obj(make_record(importance=1.0, confidence=0.35,
                              data={"a": 1e-7, "b": 0.000001, "c": 1e21, "d": 100.0,
                                    "e": 2.5e-05, "f": [1.0, -0.0]}))
    out = dumps_record(r)
    assert '"importance":1,"confidence":0.35' in out
    assert '"data":{"a":1e-7,"b":0.000001,"c":1e+21,"d":100,"e":0.000025,"f":[1,0]}' in out


@pytest.mark.parametrize(
    ("literal", "written"),
    [
        ("5", "5"),
        ("-42", "-42"),
        ("9007199254740991", "9007199254740991"),  # 2**53 - 1: exact in a double
        ("1000000000000000000000", "1e+21"),
        ("9007199254740993", "9007199254740992"),
        ("12345678901234567890", "12345678901234567000"),
    ],
)
def test_integer_literals_written_as_javascript_does(literal, written):
    # JSON.parse turns every number into a double; JSON.stringify then writes e.g. the integer
    # literal 1000000000000000000000 as 1e+21. Byte-compatible re-serialisation (purge, export)
    # must do the same.
    text = line()[:-1] + f', "data": {{"big": {literal}}}}}'
    r = parse_jsonl(text).records[0]
    assert f'"data":{{"big":{written}}}' in dumps_record(r)


# --- round-trip property ------------------------------------------------------------------

ULIDS = st.builds(
    lambda ms, rnd: ulid(ms, rnd),
    st.integers(0, 2**48 - 1),
    st.integers(0, 2**80 - 1),
)
SEGMENT = st.from_regex(r"\A[a-z0-9][a-z0-9_-]{0,8}\Z")
NAMESPACE = st.lists(SEGMENT, min_size=1, max_size=4).map("/".join)
DATETIME = st.integers(0, 253_402_300_799_999).map(iso_ms)
JSON_SCALAR = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**53) + 1, 2**53 - 1),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=20),
)
JSON_VALUE = st.recursive(
    JSON_SCALAR,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)
UNIT = st.one_of(st.floats(0, 1), st.sampled_from([0, 1]))
OPS = ["create", "supersede", "annotate", "tombstone", "purge-marker", "snapshot"]
TYPES = ["working", "episodic", "semantic", "procedural", "reflective", "reference"]
RELS = ["supersedes", "derives-from", "contradicts", "supports", "about", "in-session"]


def as_js(value):
    """Numbers as JavaScript holds them (doubles), for comparing decoded JSON values."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, list):
        return [as_js(v) for v in value]
    return {k: as_js(v) for k, v in value.items()}


@st.composite
def record_objs(draw):
    op = draw(st.sampled_from(OPS))
    rid = draw(ULIDS)
    mid = rid if op == "create" else draw(st.one_of(st.just(rid), ULIDS))
    mtype = draw(st.sampled_from(TYPES))
    ns = draw(NAMESPACE)
    if mtype == "working":
        ns = "session/" + ns
    obj = {"v": 1, "id": rid, "memoryId": mid, "op": op, "type": mtype,
           "level": draw(st.sampled_from(["personal", "distributed"])), "namespace": ns,
           "recordedAt": draw(DATETIME)}
    prov = {"actor": draw(st.text(min_size=1, max_size=20))}
    for key in ["client", "session", "source", "tool"]:
        if draw(st.booleans()):
            prov[key] = draw(st.text(max_size=20))
    obj["provenance"] = prov
    links = draw(st.lists(st.builds(lambda rel, to: {"rel": rel, "to": to},
                                    st.sampled_from(RELS), ULIDS), max_size=3))
    if op == "supersede":
        links.append({"rel": "supersedes", "to": mid})
    if links or draw(st.booleans()):
        obj["links"] = links
    # Length limits count UTF-16 code units, as JavaScript does: keep to the BMP here so a
    # character count equals the JavaScript length.
    bmp = st.characters(max_codepoint=0xFFFF, exclude_categories=("Cs",))
    optional = {
        "subject": st.text(bmp, max_size=200),
        "tags": st.lists(st.text(bmp, min_size=1, max_size=64), max_size=5),
        "summary": st.text(bmp, max_size=280),
        "dataSchema": st.text(bmp, max_size=100),
        "importance": UNIT,
        "confidence": UNIT,
        "pinned": st.booleans(),
        "needsReview": st.booleans(),
        "validFrom": DATETIME,
        "validTo": st.one_of(st.none(), DATETIME),
        "ttl": st.sampled_from(["PT2H", "P7D", "P1Y2M3W4DT5H6M7S", "PT8H"]),
        "reason": st.text(max_size=100),
        "data": st.dictionaries(st.text(max_size=8), JSON_VALUE, max_size=4),
        "content": st.text(min_size=1, max_size=200),
    }
    for key, strategy in optional.items():
        if draw(st.booleans()):
            obj[key] = draw(strategy)
    if op in ("create", "supersede") and "content" not in obj:
        obj["content"] = draw(st.text(min_size=1, max_size=50))
    if op == "snapshot" and "data" not in obj:
        obj["data"] = {}
    return obj


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
@given(record_objs())
def test_round_trip_property(obj):
    r = parse_obj(obj)
    text = dumps_record(r)
    assert "\n" not in text
    again = parse_line(text)
    assert dumps_record(again) == text
    # Equal as JavaScript sees it: JSON numbers are doubles, so 1 and 1.0 are the same value.
    assert again.model_dump(exclude={"data"}) == r.model_dump(exclude={"data"})
    assert as_js(again.data) == as_js(r.data)
    # The line is plain JSON with the same content.
    decoded = json.loads(text)
    assert decoded["id"] == obj["id"]
    assert list(decoded)[:4] == ["v", "id", "memoryId", "op"]
    assert ("validTo" in decoded) == ("validTo" in obj)


@settings(max_examples=100, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(record_objs(), max_size=6))
def test_batch_round_trip_property(objs):
    records = [parse_obj(o) for o in objs]
    text = serialize_records(records)
    parsed = parse_jsonl(text)
    assert parsed.problems == []
    # duplicates by id collapse, first wins
    seen, expected = set(), []
    for r in records:
        if r.id not in seen:
            seen.add(r.id)
            expected.append(r)
    assert [r.id for r in parsed.records] == [r.id for r in expected]
    assert serialize_records(parsed.records) == serialize_records(expected)
