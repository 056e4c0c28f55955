"""The folded state is kept as what the ``memories`` columns and the current record's line do
not hold (ynm.index.schema.state_extra) and rebuilt on read (state_text): every way a cache
gets its rows (rebuild, tail read, own append and re-fold, snapshot load) gives every reader
the state JSON, byte for byte, that ynm.model.fold gives from the records in the notes."""

from __future__ import annotations

import json

import pytest

from ynm.index import schema
from ynm.index.cache import MountCache
from ynm.index.snapshot import Attached, dump, load_into
from ynm.model.fold import fold
from ynm.model.jsonl import parse_jsonl

from .conftest import KEY, line, rec, ulid
from .test_cache import porcelain_append

JSON = {"ensure_ascii": False, "separators": (",", ":")}


def folded_from_notes(log) -> dict[str, str]:
    """memoryId -> the state JSON folded from every record in the notes."""
    records = []
    for blob in log.read_all().values():
        records.extend(parse_jsonl(blob.data).records)
    return {mid: json.dumps(m.to_obj(), **JSON) for mid, m in fold(records).memories.items()}


def stored_states(cache: MountCache) -> dict[str, str]:
    """memoryId -> the state JSON as the SQL reader (``ynm_state``) gives it."""
    return dict(cache.conn.execute(
        f"SELECT memory_id, {schema.state_sql('m')} FROM memories m"))


def assert_same_states(cache: MountCache, log) -> dict[str, str]:
    want = folded_from_notes(log)
    assert stored_states(cache) == want
    for mid, text in want.items():
        assert cache.get_state(mid) == json.loads(text)
        # the SQL shortcut for current's fields agrees with the rebuilt state
        got = cache.conn.execute(
            f"SELECT {schema.current_sql('m', '$.content')}, "
            f"{schema.current_sql('m', '$.provenance')} FROM memories m WHERE memory_id = ?",
            (mid,)).fetchone()
        current = json.loads(text)["current"]
        assert got[0] == current.get("content")
        assert (json.loads(got[1]) if got[1] else None) == current.get("provenance")
    return want


def seed(append, git, git_repo, anchor) -> dict[str, str]:
    """Memories of every shape, some written the way ynm writes lines (``append``), some as
    other writers may (``porcelain_append``: ``\\u`` escapes, an offset time, whole numbers
    for importance and confidence)."""
    single = rec(content="a single record about the staging database")
    base = rec(content="the first version of the deploy note", importance=0.25)
    edit = rec(memoryId=base["id"], op="supersede", content="the deploy note, second version",
               recordedAt="2026-01-02T00:00:00.000Z",
               links=[{"rel": "supersedes", "to": base["id"]}])
    noted = rec(content="a memory that gets annotated with data")
    note = rec(id=ulid(), memoryId=noted["id"], op="annotate", content=None, summary=None,
               data={"port": 5432, "dreamed": "x@heuristic"}, pinned=True,
               recordedAt="2026-01-03T00:00:00.000Z")
    gone = rec(content="a memory that is tombstoned later", tags=["tmp", "ops"])
    tomb = rec(id=ulid(), memoryId=gone["id"], op="tombstone", content=None, summary=None,
               reason="wrong", recordedAt="2026-01-04T00:00:00.000Z")
    orphan = rec(id=ulid(), memoryId=ulid(), op="annotate", content=None, summary=None,
                 pinned=True)
    linked = rec(content="derived from the staging note", subject="entity:staging",
                 links=[{"rel": "derives-from", "to": single["id"]}])
    append(single, base, edit, noted, note, gone, tomb, orphan, linked, own=False)
    odd = [rec(content="Zürich 東京 café — unicode text 🚀", summary="Zürich 東京",
               tags=["ünï"], importance=1, confidence=1),
           rec(content="an offset time in the line", recordedAt="2026-01-05T02:00:00+02:00")]
    for obj in odd:
        porcelain_append(git, git_repo, KEY.ref, anchor, line(obj))  # ASCII escapes
    return {"single": single["id"], "superseded": base["id"], "annotated": noted["id"],
            "tombstoned": gone["id"], "unicode": odd[0]["id"], "offset": odd[1]["id"],
            "linked": linked["id"]}


def test_rebuild_and_tail_give_the_folded_state_byte_for_byte(log, cache, append, git,
                                                              git_repo, anchor):
    ids = seed(append, git, git_repo, anchor)
    assert cache.refresh(log).rebuilt
    want = assert_same_states(cache, log)
    assert set(ids.values()) <= set(want)
    # extra holds only what the columns and the line do not
    extras = dict(cache.conn.execute("SELECT memory_id, ynm_unpack(extra) FROM memories"))
    assert extras[ids["single"]] is None
    assert set(json.loads(extras[ids["annotated"]])) == {"dreamed"}
    assert set(json.loads(extras[ids["tombstoned"]])) == {"tombstoneReason"}
    assert set(json.loads(extras[ids["linked"]])) == {"links"}
    assert set(json.loads(extras[ids["unicode"]])) == {"current"}
    assert set(json.loads(extras[ids["offset"]])) == {"current"}
    later = rec(content="a tail read after the rebuild, naïve")
    porcelain_append(git, git_repo, KEY.ref, anchor, line(later))
    assert cache.refresh(log).shards_tail == 1
    assert_same_states(cache, log)


def test_own_appends_and_refolds_give_the_folded_state(log, cache, append):
    cache.refresh(log)
    a = rec(content="written by this process")
    append(a)
    edit = rec(memoryId=a["id"], op="supersede", content="and superseded by it",
               recordedAt="2026-01-02T00:00:00.000Z", links=[{"rel": "supersedes", "to": a["id"]}])
    append(edit)
    append(rec(id=ulid(), memoryId=a["id"], op="annotate", content=None, summary=None,
               needsReview=True, recordedAt="2026-01-03T00:00:00.000Z"))
    state = json.loads(assert_same_states(cache, log)[a["id"]])
    assert state["current"]["id"] == edit["id"] and state["needsReview"] is True


def test_snapshot_load_gives_the_folded_state(log, cache, append, git, git_repo, anchor,
                                              tmp_path):
    seed(append, git, git_repo, anchor)
    cache.refresh(log)
    dumped = dump(cache.conn, anchor=log.anchor, level="distributed", read_blob=log.read_blob)
    cold = MountCache(tmp_path / "cold.sqlite", "project")
    try:
        with Attached(cold.conn, dumped.state):
            cold.conn.execute("BEGIN IMMEDIATE")
            load_into(cold.conn, dumped.meta, log.read_blob)
            cold.conn.execute("COMMIT")
        assert_same_states(cold, log)
    finally:
        cold.close()


def test_recall_hits_show_and_list_read_the_same_state(project):
    """Through the service: recall hits carry the current record's data and source, show and
    list the folded state, as they did when the state was kept whole."""
    from ynm.model.inputs import ListQuery, RecallQuery, RememberInput
    from ynm.service.ynm import Ynm

    with Ynm.open(project) as y:
        out = y.remember(RememberInput(type="semantic", level="distributed",
                                       content="the staging database listens on port 5432",
                                       data={"port": "5432"}))
        mount = y.mount("project")
        want = json.loads(folded_from_notes(mount.log)[out["memoryId"]])
        hit = y.recall(RecallQuery(text="staging database", limit=5))[0]
        assert hit["memoryId"] == out["memoryId"] and hit["data"] == {"port": "5432"}
        shown = y.show(out["memoryId"])
        assert {k: shown[k] for k in want} == want
        listed = [m for m in y.list(ListQuery()) if m["memoryId"] == out["memoryId"]]
        assert {k: listed[0][k] for k in want} == want
        assert mount.fresh_cache().get_state(out["memoryId"]) == want


CURRENT = {"v": 1, "id": "01JABCDEFGHJKMNPQRSTVWXYZ0", "content": "Zürich", "importance": 0.5,
           "confidence": 1.0, "recordedAt": "2026-01-01T00:00:00.000Z"}
# CURRENT as ynm writes it: whole numbers without a fraction
LINE = ('{"v":1,"id":"01JABCDEFGHJKMNPQRSTVWXYZ0","content":"Zürich","importance":0.5,'
        '"confidence":1,"recordedAt":"2026-01-01T00:00:00.000Z"}')


@pytest.mark.parametrize("line, current, same", [
    (LINE, CURRENT, True),
    # \u escapes and a float written 1.0: parsed, still the same
    (LINE.replace("ü", "\\u00fc").replace('"confidence":1,', '"confidence":1.0,'), CURRENT, True),
    # another key order, another form of the time: not the same
    (LINE.replace('"v":1,', "").replace("}", ',"v":1}'), CURRENT, False),
    (LINE.replace("00:00:00.000Z", "02:00:00+02:00"), CURRENT, False),
    # a state holding an integer, or -0.0, is never what the line reads back as
    (LINE, {**CURRENT, "confidence": 1}, False),
    (LINE.replace(":0.5,", ":0,"), {**CURRENT, "importance": -0.0}, False),
])
def test_a_line_is_its_current_record_exactly_when_current_text_says_so(line, current, same):
    """The shortcut of state_extra (no parse for a line written as ynm writes it) agrees with
    its definition: current_text of the line is the state's ``current`` JSON."""
    assert schema._is_current_text(line, current) is same
    assert (schema.current_text(line) == json.dumps(current, **JSON)) is same
