"""A small cache: record lines, and what a folded state keeps besides its columns, are kept
packed (zstd against a fixed dictionary, ynm.index.schema.pack), on every path that writes them, read back exactly, and the
file stays within a bound of the raw JSONL it was built from; a rebuild inserts memories in
chunks (DESIGN.md "The cache")."""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from datetime import UTC, datetime, timedelta
from functools import partialmethod
from pathlib import Path
from typing import Any, get_args

import pytest
import sqlean as sqlite3
from hypothesis import given
from hypothesis import strategies as st

from ynm.index import schema
from ynm.index.cache import MountCache, _Folded
from ynm.index.search import SearchQuery, filter_sql
from ynm.model.jsonl import dumps_record
from ynm.model.records import Level, MemoryType
from ynm.model.shards import ShardKey
from ynm.model.text import summarize

from .conftest import KEY, line, rec
from .test_cache import find, porcelain_append

ROOT = Path(__file__).resolve().parents[2]


@given(st.text())
def test_pack_round_trips_any_text(text):
    packed = schema.pack(text)
    assert isinstance(packed, bytes)
    assert schema.unpack(packed) == text


@given(st.lists(st.text(), max_size=200))
def test_pack_many_gives_the_bytes_pack_gives(texts):
    # below schema._PACK_MANY_MIN texts one at a time, above it on the compression threads
    packed = schema.pack_many(texts)
    assert packed == [schema.pack(text) for text in texts]
    assert [schema.unpack(p) for p in packed] == texts


def test_pack_many_of_a_shard_of_lines_in_order():
    texts = [line(rec(content=f"line {i} of the shard " + "é" * (i % 3), summary=f"line {i}"))
             for i in range(1000)] + [""]
    packed = schema.pack_many(texts)
    assert len(packed) == len(texts) > schema._PACK_MANY_MIN
    assert [schema.unpack(p) for p in packed] == texts
    assert packed == [schema.pack(text) for text in texts]


def test_pack_is_smaller_for_a_record_line_and_unpack_passes_text_through():
    obj = rec(content="The deploy pipeline runs the smoke tests before every release.",
              summary="The deploy pipeline runs the smoke tests.", subject="entity:deploy",
              tags=["ci"], importance=0.4)
    text = line(obj)
    assert len(schema.pack(text)) < 0.75 * len(text.encode())
    assert schema.unpack(text) == text and schema.unpack(None) is None


def _stored(cache: MountCache) -> tuple[dict[str, bytes], dict[str, tuple[int, Any]]]:
    lines = dict(cache.conn.execute("SELECT id, line FROM records"))
    states = {mid: (current, extra) for mid, current, extra in cache.conn.execute(
        "SELECT memory_id, current, extra FROM memories")}
    return lines, states


def _assert_packed(cache: MountCache, objs: list[dict]) -> None:
    """Every record is a packed blob that unpacks to exactly what was written, the SQL reader
    agrees, a memory's row points at its current record's line and keeps none of its text
    again, and no content text is kept in the clear in either table."""
    lines, states = _stored(cache)
    for obj in objs:
        packed = lines[obj["id"]]
        assert isinstance(packed, bytes)
        assert json.loads(schema.unpack(packed)) == obj
        assert obj["content"].encode() not in packed
        current, extra = states[obj["memoryId"]]
        assert cache.conn.execute("SELECT id FROM records WHERE rowid = ?",
                                  (current,)).fetchone()[0] == obj["id"]
        assert extra is None or obj["content"].encode() not in schema.unpack(extra).encode()
        assert cache.get_state(obj["memoryId"])["current"]["content"] == obj["content"]
        got = cache.conn.execute("SELECT ynm_unpack(line) FROM records WHERE id = ?",
                                 (obj["id"],)).fetchone()[0]
        assert json.loads(got) == obj
        assert find(cache, obj["content"].split()[0]) == [obj["memoryId"]]


LONG = "quetzalcoatl observes the nightly reindex of a very long and specific sentence here"


def test_rebuild_keeps_texts_packed(log, cache, append):
    objs = [rec(content=f"{w} {LONG}") for w in ("axolotl", "bandicoot", "capybara")]
    append(*objs, own=False)
    assert cache.refresh(log).rebuilt
    _assert_packed(cache, objs)


def test_tail_read_keeps_texts_packed(log, cache, append, git, git_repo, anchor):
    first = rec(content=f"dugong {LONG}")
    append(first, own=False)
    cache.refresh(log)
    later = rec(content=f"echidna {LONG}")
    porcelain_append(git, git_repo, KEY.ref, anchor, line(later))
    assert cache.refresh(log).shards_tail == 1
    _assert_packed(cache, [first, later])


def test_own_append_and_refold_keep_texts_packed(log, cache, append):
    cache.refresh(log)
    a = rec(content=f"fossa {LONG}")
    append(a)
    edit = rec(memoryId=a["id"], op="supersede", content=f"gharial {LONG}",
               recordedAt="2026-01-02T00:00:00.000Z",
               links=[{"rel": "supersedes", "to": a["id"]}])
    append(edit)  # a refold of ``a`` from its packed first record
    lines, _ = _stored(cache)
    assert json.loads(schema.unpack(lines[a["id"]])) == a
    _assert_packed(cache, [edit])
    assert cache.get_state(a["id"])["versions"] == 2


def test_rebuild_inserts_memories_in_chunks(log, cache, append, monkeypatch):
    monkeypatch.setattr(_Folded, "__init__", partialmethod(_Folded.__init__, chunk=2))
    names = ["ibis", "jackal", "kinkajou", "lemur", "manatee"]
    objs = [rec(content=f"{n} {LONG}") for n in names]
    append(*objs, own=False)
    cache.rebuild(log)
    rows = cache.conn.execute("SELECT rowid, memory_id FROM memories ORDER BY rowid").fetchall()
    assert [r[0] for r in rows] == [1, 2, 3, 4, 5]
    for name, obj in zip(names, objs):
        assert find(cache, name) == [obj["id"]]
    assert cache.counts()["memories"] == 5


def test_cache_file_stays_within_three_times_the_raw_jsonl(log, cache):
    """2,000 memories of the benchmark corpus across 16 shards: the cache file (after a
    checkpoint) is at most 3x the raw JSONL bytes (it was ~4.7x when texts were kept in the
    clear three times; 2.7x at 100k, where page overhead weighs less)."""
    if str(ROOT) not in sys.path:  # benchmarks/ is not an installed package
        sys.path.insert(0, str(ROOT))
    from benchmarks.corpus import generate_corpus

    corpus = generate_corpus(seed=1, count=2000, level="distributed", namespaces=("common",))
    shards: dict[ShardKey, list[str]] = defaultdict(list)
    for r in corpus.records:
        shards[ShardKey(r.level, r.namespace, r.type, r.bucket)].append(dumps_record(r))
    raw = 0
    for key, lines in shards.items():
        payload = "".join(x + "\n" for x in lines).encode()
        raw += len(payload)
        log.append({key: (payload, len(lines))})
    cache.rebuild(log)
    cache.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = Path(cache.path).stat().st_size
    assert cache.counts()["memories"] == 2000
    assert size <= 3.0 * raw, (size, raw, size / raw)


def _derived(cache: MountCache) -> dict[str, tuple[Any, ...]]:
    """memory id -> (summary_head, summary, updated_later, updated_at, created_at) as kept."""
    return {r[0]: r[1:] for r in cache.conn.execute(
        "SELECT memory_id, summary_head, summary, updated_later, updated_at, created_at "
        "FROM memories")}


def test_repeated_values_are_kept_once_and_read_back_whole(log, cache, append):
    """A summary the content starts with is kept as its length in characters (any other
    summary as text), an update time equal to the creation time and a memory id equal to
    the record's id as NULL; the generated columns read what folding the records gives, on
    a rebuild and on the cache's own writes alike."""
    prefix = rec(content="Café ☕ déjà vu 🐙 opens here. Then more.",
                 summary="Café ☕ déjà vu 🐙 opens here.")
    other = rec(content="The gateway uses mTLS everywhere.", summary="Gateway: mTLS")
    derived = rec(content="no summary of its own. It is derived.", summary=None)
    append(prefix, other, derived, own=False)
    edit = rec(memoryId=other["id"], op="supersede", content="The gateway dropped mTLS.",
               summary="The gateway dropped mTLS.", recordedAt="2026-01-02T00:00:00.000Z",
               links=[{"rel": "supersedes", "to": other["id"]}])

    def check():
        got = _derived(cache)
        assert got[prefix["id"]][:2] == (len("Café ☕ déjà vu 🐙 opens here."), prefix["summary"])
        auto = summarize(derived["content"])
        assert got[derived["id"]][:2] == (len(auto), auto) and derived["content"].startswith(auto)
        for memory_id, (_, summary, later, updated, created) in got.items():
            state = cache.get_state(memory_id)
            assert (created, updated) == (state["createdAt"], state["updatedAt"])
            assert later == (None if updated == created else schema.instant(updated))
            assert find(cache, summary.split()[0].strip(":")) != []
        ids = dict(cache.conn.execute("SELECT id, memory_of FROM records"))
        assert ids == {prefix["id"]: None, other["id"]: None, derived["id"]: None,
                       **({edit["id"]: other["id"]} if edit["id"] in ids else {})}
        by_memory = cache.conn.execute("SELECT id FROM records WHERE memory_id = ? ORDER BY id",
                                       (other["id"],)).fetchall()
        assert [r[0] for r in by_memory] == sorted({other["id"], edit["id"]} & set(ids))

    cache.rebuild(log)
    assert _derived(cache)[other["id"]][:2] == ("Gateway: mTLS", "Gateway: mTLS")
    check()
    append(edit)  # the own write: refolded, its row updated in place
    assert _derived(cache)[other["id"]] == (len(edit["summary"]), edit["summary"],
                                            schema.instant(edit["recordedAt"]),
                                            edit["recordedAt"],
                                            other["recordedAt"])
    check()
    cache.rebuild(log)
    check()


def test_types_and_levels_are_kept_as_codes_and_read_as_names(log, cache, append):
    """Every memory type is kept as its place in schema.MEMORY_TYPES (the distributed level
    as 0) and read back by name through the generated columns, filters included; a name
    outside the tuples is kept as it is."""
    assert set(schema.MEMORY_TYPES) == set(get_args(MemoryType))
    assert set(schema.LEVELS) == set(get_args(Level))
    space = {t: "session/s1" if t == "working" else "common" for t in schema.MEMORY_TYPES}
    objs = {t: rec(type=t, namespace=space[t], content=f"{t} kinkajou")
            for t in schema.MEMORY_TYPES}
    for t, obj in objs.items():
        append(obj, key=ShardKey("distributed", space[t], t, "2026-01"), own=False)
    cache.rebuild(log)
    rows = cache.conn.execute("SELECT memory_id, type_code, type, level_code, level "
                              "FROM memories").fetchall()
    assert sorted(rows) == sorted((o["id"], schema.MEMORY_TYPES.index(t), t, 0, "distributed")
                                  for t, o in objs.items())
    working = cache.conn.execute("SELECT memory_id FROM memories WHERE type = 'working'")
    assert working.fetchall() == [(objs["working"]["id"],)]
    assert cache.get_state(objs["reference"]["id"])["type"] == "reference"
    assert schema.code("someday", schema.MEMORY_TYPES) == "someday"
    named = f"SELECT {schema._named('x', schema.MEMORY_TYPES)} FROM (SELECT ? AS x)"
    assert cache.conn.execute(named, ("someday",)).fetchone() == ("someday",)


@given(st.integers(min_value=-62_135_596_800_000, max_value=253_402_300_799_999))
def test_an_instant_kept_as_milliseconds_reads_back_as_its_canonical_text(ms):
    """Every millisecond from year 1 to the end of year 9999, before 1970 too: instant() keeps
    the canonical text as its milliseconds, and the generated column's SQL gives the same
    text back."""
    at = datetime(1970, 1, 1, tzinfo=UTC) + timedelta(milliseconds=ms)
    text = at.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    assert schema.instant(text) == ms
    with sqlite3.connect(":memory:") as conn:
        got = conn.execute(f"SELECT {schema._instant_sql('x')} FROM (SELECT ? AS x)", (ms,))
        assert got.fetchone() == (text,)


@pytest.mark.parametrize("text", ["1969-12-31T23:59:59.999Z", "1969-12-31T23:59:59.001Z",
                                  "1969-12-31T23:59:59.000Z", "1970-01-01T00:00:00.000Z",
                                  "0001-01-01T00:00:00.000Z", "1900-02-28T23:59:59.500Z"])
def test_instants_around_and_before_1970_read_back(text):
    """Around the epoch, where SQLite's ``/`` and ``%`` truncate toward zero."""
    ms = schema.instant(text)
    assert isinstance(ms, int)
    with sqlite3.connect(":memory:") as conn:
        got = conn.execute(f"SELECT {schema._instant_sql('x')} FROM (SELECT ? AS x)", (ms,))
        assert got.fetchone() == (text,)


def test_a_text_not_in_the_canonical_form_is_kept_as_text():
    assert schema.instant("2026-05-01") == "2026-05-01"
    assert schema.instant("2026-05-01T00:00:00.000+02:00") == "2026-05-01T00:00:00.000+02:00"


def test_instants_before_1970_are_kept_and_ordered_as_milliseconds(log, cache, append):
    """A time before 1970 is kept as (negative) milliseconds like any other; record, creation
    and update times read back as folded, and the update-time order and the since/until
    filters (``updated_ms``) put it where its instant is."""
    old = rec(content="old wombat", recordedAt="1969-07-20T20:17:40.000Z")
    new = rec(content="new wombat")
    append(old, new, own=False)
    cache.rebuild(log)
    kept = dict(cache.conn.execute("SELECT id, recorded_ms FROM records"))
    assert kept == {old["id"]: -14182940000, new["id"]: schema.instant(new["recordedAt"])}
    for obj in (old, new):
        state = cache.get_state(obj["id"])
        assert state["createdAt"] == obj["recordedAt"]
        assert cache.conn.execute(
            "SELECT r.recorded_at, m.created_at, m.updated_at FROM records r JOIN memories m "
            "ON m.memory_id = r.memory_id WHERE r.id = ?", (obj["id"],)).fetchone() == (
            obj["recordedAt"],) * 3
    order = [mid for (mid,) in cache.conn.execute(
        "SELECT memory_id FROM memories ORDER BY updated_ms DESC")]
    assert order == [new["id"], old["id"]]
    for since, until, want in (("1969-01-01T00:00:00.000Z", "1970-01-01T00:00:00.000Z", [old]),
                               ("1970-01-01T00:00:00.000Z", None, [new]),
                               ("1969-07-20T20:17:40.000Z", None, [new, old])):
        cond, args = filter_sql(SearchQuery(since=since, until=until))
        got = {mid for (mid,) in cache.conn.execute(
            f"SELECT memory_id FROM memories m WHERE {cond}", args)}
        assert got == {o["id"] for o in want}, (since, until)
