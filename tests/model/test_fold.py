"""The fold: storage.md §2 (worked examples E1-E8 of §2.10), §7.3-§7.8, §7.12 and the §8 "Fold"
vectors and property suite."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ynm.model.fold import (
    Folder,
    apply_record,
    fold,
    fold_with_snapshot,
    is_dream_mark,
    snapshot_data,
    sort_records,
)
from ynm.model.ids import iso_ms
from ynm.model.jsonl import dumps_record, parse_jsonl, parse_line, parse_obj
from ynm.model.records import Link, Record

try:
    from tests.support.records import BASE_MS, at, ulid
except ImportError:
    from support.records import BASE_MS, at, ulid


def rec(op: str, mid: str, t: float, rid: str | None = None, **fields) -> Record:
    """A record of ``op`` for memory ``mid`` at ``t`` seconds (ids sort with times).

    A create's id is its memoryId; content ops get content; a supersede gets its supersedes
    link unless ``links`` is given. ``fields`` use the on-disk camelCase names.
    """
    if rid is None:
        rid = mid if op == "create" else ulid(BASE_MS + round(t * 1000))
    obj = {"v": 1, "id": rid, "memoryId": mid, "op": op, "type": "semantic",
           "level": "personal", "namespace": "user/david", "recordedAt": at(t),
           "provenance": {"actor": "test"}}
    if op in ("create", "supersede"):
        obj["content"] = "content"
    if op == "supersede":
        obj["links"] = [{"rel": "supersedes", "to": mid}]
    if op == "snapshot":
        obj["data"] = {}
    obj.update(fields)
    return parse_obj(obj)


def mid_at(t: float) -> str:
    """A memory id whose create is at ``t`` seconds."""
    return ulid(BASE_MS + round(t * 1000))


def link(rel: str, to: str) -> Link:
    return Link(rel=rel, to=to)


def only(result):
    assert len(result.memories) == 1
    return next(iter(result.memories.values()))


# --- §2.10 worked examples ----------------------------------------------------------------


def test_e1_latest_supersede_wins():
    M = mid_at(1)
    c = rec("create", M, 1, tags=["a"], content="v1", importance=0.4)
    s = rec("supersede", M, 2, tags=["b"], content="v2")
    result = fold([s, c])
    m = only(result)
    assert m.current is s or m.current == s
    assert m.current.content == "v2"
    assert m.tags == ["a", "b"]
    assert m.links == [link("supersedes", M)]
    assert m.versions == 2
    assert m.created_at == at(1)
    assert m.updated_at == at(2)
    assert m.importance == 0.4
    assert m.confidence == 1
    assert m.pinned is False and m.needs_review is False and m.tombstoned is False
    assert result.orphans == []


def test_e2_tombstone_and_revive():
    M = mid_at(1)
    c = rec("create", M, 1)
    x = rec("tombstone", M, 2, reason="wrong")
    m = only(fold([c, x]))
    assert m.tombstoned is True
    assert m.tombstone_reason == "wrong"
    s = rec("supersede", M, 3, content="again")
    m = only(fold([x, s, c]))
    assert m.tombstoned is False
    assert m.tombstone_reason == "wrong"  # not cleared on revive (§7.6)
    assert m.versions == 3
    assert m.current == s


def test_e3_annotate_before_its_create():
    M = mid_at(1)
    a = rec("annotate", M, 0, pinned=True, tags=["early"], importance=0.8,
            subject="entity:early")
    c = rec("create", M, 1, tags=["base"])
    result = fold([c, a])
    m = only(result)
    assert m.pinned is True
    assert m.importance == 0.8
    assert m.subject == "entity:early"
    assert m.tags == ["early", "base"]
    assert m.created_at == at(0)
    assert m.updated_at == at(1)
    assert m.versions == 2
    assert result.orphans == []
    assert m.current == c


def test_e3_base_wins_on_fields_it_sets():
    M = mid_at(1)
    a = rec("annotate", M, 0, pinned=True, tags=["early"], importance=0.8,
            subject="entity:early")
    c = rec("create", M, 1, tags=["base"], importance=0.2, subject="entity:base", pinned=False)
    m = only(fold([a, c]))
    assert m.importance == 0.2
    assert m.subject == "entity:base"
    assert m.pinned is False
    assert m.tags == ["early", "base"]


def test_early_annotate_fills_against_the_base_record_not_the_defaults():
    # §7.5: the base's fallback defaults (importance .5, confidence 1) do not count as "set".
    M = mid_at(1)
    a = rec("annotate", M, 0, confidence=0.3, needsReview=True, importance=0.5)
    c = rec("create", M, 1, confidence=0.9)
    m = only(fold([a, c]))
    assert m.confidence == 0.9
    assert m.needs_review is True
    assert m.importance == 0.5


def test_e4_early_tombstone_hides_a_create_based_memory():
    M = mid_at(1)
    x = rec("tombstone", M, 0, reason="early")
    c = rec("create", M, 1)
    m = only(fold([c, x]))
    assert m.tombstoned is True
    assert m.versions == 2
    assert m.created_at == at(0)
    assert m.updated_at == at(1)


def test_e4_early_tombstone_ignored_before_a_supersede_base():
    M = mid_at(0.5)  # no create anywhere
    x = rec("tombstone", M, 1.9)
    s = rec("supersede", M, 2)
    result = fold([s, x])
    m = only(result)
    assert m.current == s
    assert m.tombstoned is False
    assert m.versions == 2
    assert m.created_at == at(1.9)
    assert result.orphans == []


def test_e5_tie_on_recorded_at_broken_by_id():
    M = mid_at(1)
    c = rec("create", M, 1, tags=["a"])
    a = rec("annotate", M, 1, rid="00000000000000000000000000", tags=["tie"])
    assert sort_records([c, a]) == [a, c]
    m = only(fold([c, a]))
    assert m.tags == ["tie", "a"]
    assert m.created_at == at(1)
    assert m.updated_at == at(1)
    assert m.versions == 2
    assert m.current == c


def test_e6_dream_mark():
    M = mid_at(1)
    c = rec("create", M, 1)
    d = rec("annotate", M, 2, data={"dreamed": M})
    assert is_dream_mark(d)
    m = only(fold([c, d]))
    assert m.dreamed == M
    assert m.updated_at == at(1)
    assert m.versions == 2

    f = rec("annotate", M, 3, needsReview=True, data={"dreamed": "later"})
    assert not is_dream_mark(f)
    m = only(fold([c, d, f]))
    assert m.dreamed == "later"
    assert m.updated_at == at(3)
    assert m.needs_review is True
    assert m.versions == 3

    o = rec("annotate", M, 4, data={"judgments": []})
    m = only(fold([o, f, d, c]))
    assert m.dreamed == "later"
    assert m.updated_at == at(4)
    assert m.versions == 4


def test_e7_duplicate_create_and_purge_marker():
    M = mid_at(1)
    c = rec("create", M, 1, content="v1", tags=["a"])
    # A duplicate create (merge artefact) can only be built by skipping validation: create
    # requires memoryId == id.
    dup = c.model_copy(update={"id": ulid(BASE_MS + 2000), "recorded_at": at(2),
                               "content": "dup", "tags": ["a", "d"]})
    p = rec("purge-marker", M, 3, reason="gdpr")
    m = only(fold([p, dup, c]))
    assert m.current == c
    assert m.current.content == "v1"
    assert m.versions == 3
    assert m.tags == ["a", "d"]  # a duplicate create adds its tags
    assert m.tombstoned is False
    assert m.tombstone_reason is None
    assert m.created_at == at(1)


def test_e8_orphan():
    M = mid_at(0)
    g = rec("annotate", M, 1, tags=["x"])
    result = fold([g])
    assert result.memories == {}
    assert result.orphans == [g]


# --- §8 "Fold" vectors --------------------------------------------------------------------


def test_supersede_replaces_fields_and_dedupes_links():
    M, X = mid_at(1), mid_at(0)
    c = rec("create", M, 1, subject="entity:old", importance=0.4, confidence=0.7,
            links=[{"rel": "about", "to": X}])
    s = rec("supersede", M, 2, type="procedural", namespace="user/x", subject="entity:new",
            importance=0.9, confidence=0.6, pinned=True, needsReview=True,
            links=[{"rel": "supersedes", "to": M}, {"rel": "about", "to": X}])
    m = only(fold([c, s]))
    assert m.type == "procedural"
    assert m.namespace == "user/x"
    assert m.subject == "entity:new"
    assert m.importance == 0.9
    assert m.confidence == 0.6
    assert m.pinned is True
    assert m.needs_review is True
    assert m.links == [link("about", X), link("supersedes", M)]
    assert m.level == "personal"


def test_supersede_without_fields_keeps_them():
    M = mid_at(1)
    c = rec("create", M, 1, subject="entity:keep", importance=0.4, confidence=0.7, pinned=True,
            needsReview=True)
    s = rec("supersede", M, 2, content="v2")
    m = only(fold([c, s]))
    assert m.subject == "entity:keep"
    assert m.importance == 0.4
    assert m.confidence == 0.7
    assert m.pinned is True
    assert m.needs_review is True
    assert m.current.content == "v2"


def test_supersede_never_changes_level():
    M = mid_at(1)
    c = rec("create", M, 1)
    s = rec("supersede", M, 2, level="distributed", namespace="common")
    m = only(fold([c, s]))
    assert m.level == "personal"
    assert m.namespace == "common"


def test_annotate_sets_subject_confidence_and_unpins():
    M = mid_at(1)
    c = rec("create", M, 1, pinned=True, content="keep me")
    a = rec("annotate", M, 2, subject="entity:x", confidence=0.3, pinned=False,
            content="ignored")
    m = only(fold([c, a]))
    assert m.subject == "entity:x"
    assert m.confidence == 0.3
    assert m.pinned is False
    assert m.current == c
    assert m.current.content == "keep me"
    assert m.updated_at == at(2)


def test_fieldless_annotate_only_adds_a_version():
    M = mid_at(1)
    c = rec("create", M, 1, tags=["a"], subject="s", importance=0.3, pinned=True)
    before = only(fold([c])).to_obj()
    a = rec("annotate", M, 2)
    after = only(fold([c, a])).to_obj()
    assert after["versions"] == 2
    assert after["updatedAt"] == at(2)
    del before["versions"], after["versions"], before["updatedAt"], after["updatedAt"]
    assert after == before


def test_apply_record_of_a_snapshot_changes_only_versions_and_updated_at():
    M = mid_at(1)
    m = only(fold([rec("create", M, 1, tags=["a"])]))
    before = m.to_obj()
    snap = rec("snapshot", M, 5, rid=ulid(BASE_MS + 5000), data={"memories": []}, tags=["z"])
    apply_record(m, snap)
    after = m.to_obj()
    assert after["versions"] == 2
    assert after["updatedAt"] == at(5)
    del before["versions"], after["versions"], before["updatedAt"], after["updatedAt"]
    assert after == before


def test_plain_fold_skips_snapshot_records():
    M = mid_at(1)
    c = rec("create", M, 1)
    snap = rec("snapshot", mid_at(0), 2, data=snapshot_data(fold([c])))
    result = fold([snap, c])
    assert list(result.memories) == [M]
    assert result.memories[M].versions == 1
    assert result.orphans == []
    # even a snapshot of the same memory is not a version
    snap2 = rec("snapshot", M, 3, data={})
    assert only(fold([c, snap2])).versions == 1


def test_compare_records_ties_broken_by_id():
    a = rec("annotate", mid_at(0), 1, rid="01ARZ3NDEKTSV4RRFFQ69G5FAA")
    b = rec("annotate", mid_at(0), 1, rid="01ARZ3NDEKTSV4RRFFQ69G5FAB")
    assert sort_records([b, a]) == [a, b]
    assert sort_records([a, b]) == [a, b]
    assert a.sort_key < b.sort_key
    assert a.sort_key == rec("annotate", mid_at(0), 1, rid="01ARZ3NDEKTSV4RRFFQ69G5FAA").sort_key


def test_records_sort_by_recorded_at_first():
    early = rec("annotate", mid_at(0), 1, rid="7ZZZZZZZZZZZZZZZZZZZZZZZZZ")
    late = rec("annotate", mid_at(0), 2, rid="00000000000000000000000000")
    assert sort_records([late, early]) == [early, late]


# --- order by instant, not by text (ynm differs from storage.md §7.1 deliberately) ----------


def test_offset_supersede_loses_to_a_later_instant():
    # 2026-12-01T01:00+05:00 is 20:00Z on 11-30: an hour before the Z supersede.
    M = mid_at(0)
    c = rec("create", M, 0, content="base")
    offset = rec("supersede", M, 1, content="offset, 20:00Z",
                 recordedAt="2026-12-01T01:00:00.000+05:00")
    zulu = rec("supersede", M, 2, content="zulu, 21:00Z", recordedAt="2026-11-30T21:00:00.000Z")
    for order in ([c, offset, zulu], [zulu, offset, c], [offset, zulu, c]):
        m = fold(order).memories[M]
        assert m.current.content == "zulu, 21:00Z"
        assert m.updated_at == "2026-11-30T21:00:00.000Z"
    assert offset.bucket == "2026-11"  # the UTC month, not the local 2026-12


def test_negative_offset_sorts_by_instant():
    # 2026-11-30T16:00-08:00 is 00:00Z on 12-01: after a 23:00Z supersede.
    M = mid_at(0)
    c = rec("create", M, 0, recordedAt="2026-11-30T10:00:00Z")
    west = rec("supersede", M, 1, content="west", recordedAt="2026-11-30T16:00:00-08:00")
    late = rec("supersede", M, 2, content="23:00Z", recordedAt="2026-11-30T23:00:00.000Z")
    m = fold([west, late, c]).memories[M]
    assert m.current.content == "west"
    assert m.updated_at == "2026-12-01T00:00:00.000Z"
    assert m.created_at == "2026-11-30T10:00:00.000Z"
    assert west.bucket == "2026-12"


def test_fractional_seconds_within_one_second_sort_by_instant():
    # As text, "...:00Z" sorts after "...:00.500Z" ('Z' > '.'); as instants it is before.
    M = mid_at(0)
    whole = rec("create", M, 0, content="at :00", recordedAt="2026-11-30T12:00:00Z")
    half = rec("supersede", M, 1, content="at :00.5", recordedAt="2026-11-30T12:00:00.5Z")
    tenth = rec("annotate", M, 2, tags=["t"], recordedAt="2026-11-30T12:00:00.1+00:00")
    assert sort_records([half, whole, tenth]) == [whole, tenth, half]
    m = fold([half, tenth, whole]).memories[M]
    assert m.current.content == "at :00.5" and m.versions == 3
    assert (m.created_at, m.updated_at) == ("2026-11-30T12:00:00.000Z",
                                            "2026-11-30T12:00:00.500Z")


def test_record_with_offset_before_its_base_is_applied_before():
    # An annotate at 11:59Z written as 17:29+05:30 sorts before a 12:00Z create (storage.md §2.5).
    M = mid_at(0)
    c = rec("create", M, 0, tags=["base"], recordedAt="2026-11-30T12:00:00.000Z")
    early = rec("annotate", M, 1, tags=["early"], recordedAt="2026-11-30T17:29:00+05:30")
    m = fold([c, early]).memories[M]
    assert m.tags == ["early", "base"]
    assert m.created_at == "2026-11-30T11:59:00.000Z"
    assert m.updated_at == "2026-11-30T12:00:00.000Z"


def test_snapshot_memory_times_are_canonical():
    M = mid_at(0)
    obj = snapshot_data(fold([rec("create", M, 0)]))["memories"][0]
    obj.update(createdAt="2026-12-01T01:00:00+05:00", updatedAt="2026-12-01T01:00:00.5+05:00")
    m = fold_with_snapshot(rec("snapshot", mid_at(9), 9, data={"memories": [obj]}), []).memories[M]
    assert (m.created_at, m.updated_at) == ("2026-11-30T20:00:00.000Z",
                                            "2026-11-30T20:00:00.500Z")


def test_early_purge_marker_counts_and_moves_created_at():
    M = mid_at(1)
    p = rec("purge-marker", M, 0, reason="gdpr")
    c = rec("create", M, 1, tags=["a"])
    m = only(fold([c, p]))
    assert m.versions == 2
    assert m.created_at == at(0)
    assert m.updated_at == at(1)
    assert m.tags == ["a"]
    assert m.tombstoned is False


def test_snapshot_without_data_is_empty_state():
    c1 = rec("create", mid_at(1), 1)
    c2 = rec("create", mid_at(6), 6)
    valid = rec("snapshot", mid_at(0), 5, data={})
    no_data = valid.model_copy(update={"data": None})
    for snap in (valid, no_data):
        result = fold_with_snapshot(snap, [c1, c2, snap])
        assert list(result.memories) == [c2.memory_id]
        assert result.orphans == []


def test_snapshot_tail_at_or_before_snapshot_is_ignored():
    M = mid_at(1)
    c = rec("create", M, 1)
    snap = rec("snapshot", mid_at(0), 2, data=snapshot_data(fold([c])))
    late_annotate = rec("annotate", M, 1.5, tags=["missed"])  # sorts before the snapshot
    result = fold_with_snapshot(snap, [c, late_annotate])
    assert result.memories[M].tags == []
    assert result.memories[M].versions == 1


def test_two_carried_orphans_resolve_when_their_base_arrives():
    M = mid_at(4)
    a1 = rec("annotate", M, 1, tags=["x"])
    a2 = rec("annotate", M, 2, tags=["y"])
    head = fold([a1, a2])
    assert head.memories == {} and head.orphans == [a1, a2]
    snap = parse_line(dumps_record(rec("snapshot", mid_at(0), 3, data=snapshot_data(head))))
    c = rec("create", M, 4, tags=["base"])
    result = fold_with_snapshot(snap, [a1, a2, c])
    m = result.memories[M]
    assert m.versions == 3
    assert m.tags == ["y", "x", "base"]
    assert m.created_at == at(1)
    assert m.updated_at == at(4)
    assert result.orphans == []
    full = fold([a1, a2, c, snap])
    assert m.to_obj() == full.memories[M].to_obj()


def test_folder_equals_full_fold_for_batches():
    M1, M2 = mid_at(1), mid_at(4)
    c1 = rec("create", M1, 1, tags=["a"])
    s = rec("supersede", M1, 2, content="v2", tags=["b"])
    tomb = rec("tombstone", M1, 3, reason="r")
    c2 = rec("create", M2, 4)
    a = rec("annotate", M2, 5, tags=["t"], pinned=True)
    folder = Folder()
    seen: list[Record] = []
    expected_returns = [[M1], [M1], [M2], []]
    for batch, expected in zip([[c1], [s, tomb], [c2, a], [a]], expected_returns, strict=True):
        assert folder.add(batch) == expected
        seen.extend(batch)
        full = fold(seen)
        assert {k: m.to_obj() for k, m in folder.memories.items()} == {
            k: m.to_obj() for k, m in full.memories.items()}
        assert folder.orphans == full.orphans == []
    assert folder.memories[M1].tombstoned is True
    assert folder.memories[M2].versions == 2


def test_folder_keeps_orphans_until_the_base_arrives():
    M = mid_at(3)
    a = rec("annotate", M, 1, tags=["x"])
    b = rec("annotate", M, 2, tags=["y"])
    c = rec("create", M, 3)
    folder = Folder()
    assert folder.add([a]) == []
    assert folder.orphans == [a]
    assert folder.add([b]) == []
    assert folder.orphans == [a, b]
    assert folder.memories == {}
    assert folder.add([c]) == [M]
    assert folder.orphans == []
    assert folder.memories[M].versions == 3
    assert folder.memories[M].to_obj() == fold([a, b, c]).memories[M].to_obj()


# --- §2.4/§2.5/§7.6 details ---------------------------------------------------------------


def test_early_tags_and_links_latest_applied_first():
    M = mid_at(1)
    X, Y, Z = mid_at(0.1), mid_at(0.2), mid_at(0.3)
    e1 = rec("annotate", M, 0.2, tags=["one"], links=[{"rel": "about", "to": X}])
    e2 = rec("annotate", M, 0.5, tags=["two"], links=[{"rel": "supports", "to": Y}])
    c = rec("create", M, 1, tags=["a"], links=[{"rel": "about", "to": Z}])
    m = only(fold([c, e2, e1]))
    assert m.tags == ["two", "one", "a"]
    assert m.links == [link("supports", Y), link("about", X), link("about", Z)]


def test_tag_union_keeps_order_and_exact_strings():
    M = mid_at(1)
    c = rec("create", M, 1, tags=["b", "a"])
    a1 = rec("annotate", M, 2, tags=["A", "a", "c"])
    a2 = rec("annotate", M, 3, tags=["c", "b", "d"])
    assert only(fold([a2, c, a1])).tags == ["b", "a", "A", "c", "d"]


def test_tombstone_reason_overwritten_and_not_cleared_on_revive():
    M = mid_at(1)
    c = rec("create", M, 1)
    x1 = rec("tombstone", M, 2, reason="first")
    s = rec("supersede", M, 3)
    m = only(fold([c, x1, s]))
    assert (m.tombstoned, m.tombstone_reason) == (False, "first")
    x2 = rec("tombstone", M, 4)
    m = only(fold([c, x1, s, x2]))
    assert (m.tombstoned, m.tombstone_reason) == (True, None)


def test_supersede_then_tombstone_stays_tombstoned():
    M = mid_at(1)
    m = only(fold([rec("create", M, 1), rec("supersede", M, 2), rec("tombstone", M, 3)]))
    assert m.tombstoned is True


def test_annotate_and_duplicate_create_never_revive():
    M = mid_at(1)
    c = rec("create", M, 1)
    x = rec("tombstone", M, 2)
    a = rec("annotate", M, 3, tags=["t"], pinned=True)
    dup = c.model_copy(update={"id": ulid(BASE_MS + 4000), "recorded_at": at(4)})
    m = only(fold([c, x, a, dup]))
    assert m.tombstoned is True
    assert m.versions == 4


def test_supersede_before_create_becomes_base():
    M = mid_at(2)
    s = rec("supersede", M, 1, content="skewed", tags=["s"], type="procedural")
    c = rec("create", M, 2, content="original", tags=["c"])
    m = only(fold([c, s]))
    assert m.current == s
    assert m.type == "procedural"
    assert m.tags == ["s", "c"]
    assert m.versions == 2
    assert m.created_at == at(1)
    assert m.updated_at == at(2)


def test_early_dreamed_fills_only_when_unset():
    M = mid_at(1)
    e1 = rec("annotate", M, 0.1, data={"dreamed": "first"})
    e2 = rec("annotate", M, 0.2, data={"dreamed": "second"})
    c = rec("create", M, 1)
    m = only(fold([c, e1, e2]))
    assert m.dreamed == "first"  # dreamed ??= dreamedOf(p), applied in sort order
    assert m.updated_at == at(1)
    assert m.versions == 3


# --- dream mark rules (§2.6, §7.8) --------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "expected"),
    [
        ({"data": {"dreamed": "v"}}, True),
        ({"data": {"dreamed": "v"}, "reason": "why"}, True),
        ({"data": {"dreamed": "v"}, "provenance": {"actor": "agent:dream", "tool": "x"}}, True),
        ({"data": {"dreamed": "v"}, "content": "ignored"}, True),
        ({"data": {"dreamed": "v", "other": 1}}, False),
        ({"data": {"dreamed": 5}}, False),
        ({"data": {"dreamed": None}}, False),
        ({"data": {"judgments": []}}, False),
        ({"data": {}}, False),
        ({}, False),
        ({"data": {"dreamed": "v"}, "tags": ["t"]}, False),
        ({"data": {"dreamed": "v"}, "links": [{"rel": "about", "to": "01ARZ3NDEKTSV4RRFFQ69G5FAV"}]},
         False),
        ({"data": {"dreamed": "v"}, "subject": "s"}, False),
        ({"data": {"dreamed": "v"}, "importance": 0.5}, False),
        ({"data": {"dreamed": "v"}, "confidence": 1}, False),
        ({"data": {"dreamed": "v"}, "pinned": False}, False),
        ({"data": {"dreamed": "v"}, "needsReview": False}, False),
    ],
)
def test_is_dream_mark(fields, expected):
    r = rec("annotate", mid_at(0), 1, **fields)
    assert is_dream_mark(r) is expected


@pytest.mark.parametrize("op", ["tombstone", "purge-marker", "supersede", "create"])
def test_only_annotates_are_dream_marks(op):
    M = mid_at(1)
    r = rec(op, M, 1, data={"dreamed": "v"})
    assert is_dream_mark(r) is False


def test_non_string_dreamed_is_an_ordinary_annotate():
    M = mid_at(1)
    c = rec("create", M, 1)
    a = rec("annotate", M, 2, data={"dreamed": 7})
    m = only(fold([c, a]))
    assert m.dreamed is None
    assert m.updated_at == at(2)


def test_dream_mark_with_reason_keeps_updated_at():
    M = mid_at(1)
    c = rec("create", M, 1)
    d = rec("annotate", M, 2, data={"dreamed": "x"}, reason="dream")
    m = only(fold([c, d]))
    assert m.updated_at == at(1)
    assert m.dreamed == "x"


# --- property suite (§8) ------------------------------------------------------------------

MIDS = [ulid(BASE_MS + 10 * k, 10_000 + k) for k in range(5)]
SLOTS = 12  # recordedAt slots one second apart: ties are common


@st.composite
def histories(draw):
    n = draw(st.integers(0, 40))
    records: list[Record] = []
    created: set[int] = set()
    for i in range(n):
        k = draw(st.integers(0, 4))
        mid = MIDS[k]
        op = draw(st.sampled_from(["create", "supersede", "annotate", "tombstone",
                                   "purge-marker"]))
        if op == "create" and k in created:
            op = "annotate"  # a create's id is its memoryId: one create per memory
        if op == "create":
            created.add(k)
        t = draw(st.integers(0, SLOTS - 1))
        rid = mid if op == "create" else ulid(BASE_MS + draw(st.integers(0, 60)), i + 1)
        fields: dict = {"tags": draw(st.lists(st.sampled_from("abc"), max_size=3, unique=True))}
        if draw(st.booleans()):
            fields["importance"] = draw(st.sampled_from([0, 0.2, 0.5, 0.9, 1]))
        if draw(st.booleans()):
            fields["pinned"] = draw(st.booleans())
        if op in ("create", "supersede"):
            fields["content"] = f"content {i}"
            if draw(st.booleans()):
                fields["type"] = draw(st.sampled_from(["semantic", "procedural"]))
        if op == "supersede" and draw(st.booleans()):
            fields["namespace"] = "user/x"
        if op == "annotate" and draw(st.integers(0, 3)) == 0:
            fields["data"] = {"dreamed": f"d{i}"}
            if draw(st.booleans()):
                fields = {"data": fields["data"]}  # a pure dream mark
        if op == "annotate" and draw(st.integers(0, 3)) == 0:
            fields["subject"] = draw(st.sampled_from(["entity:x", "entity:y"]))
        if op in ("tombstone", "purge-marker") and draw(st.booleans()):
            fields["reason"] = f"r{i}"
        records.append(rec(op, mid, t, rid=rid, **fields))
    return records


def state(result) -> tuple[dict, list[str]]:
    return ({k: m.to_obj() for k, m in result.memories.items()}, [r.id for r in result.orphans])


PROPS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@PROPS
@given(st.data())
def test_property_order_independence(data):
    records = data.draw(histories())
    shuffled = data.draw(st.permutations(records))
    assert state(fold(shuffled)) == state(fold(records))
    assert list(fold(shuffled).memories) == list(fold(records).memories)


@PROPS
@given(histories())
def test_property_oracle(records):
    result = fold(records)
    orphan_ids = {r.id for r in result.orphans}
    for mid in MIDS:
        mine = sort_records(r for r in records if r.memory_id == mid)
        content_ops = [r for r in mine if r.op in ("create", "supersede")]
        if not content_ops:
            assert mid not in result.memories
            assert all(r.id in orphan_ids for r in mine)
            continue
        m = result.memories[mid]
        assert not any(r.id in orphan_ids for r in mine)
        base = content_ops[0]
        supersedes = [r for r in content_ops if r.op == "supersede"]
        # current = last supersede, else the first content op (the create)
        assert m.current.id == (supersedes[-1].id if supersedes else base.id)
        # tombstoned iff some effective tombstone has no supersede after it; a tombstone before
        # a supersede base is ignored (§2.5)
        effective = [x for x in mine if x.op == "tombstone"
                     and not (x.sort_key < base.sort_key and base.op == "supersede")]
        assert m.tombstoned == any(
            not any(s.sort_key > x.sort_key for s in supersedes) for x in effective)
        assert m.versions == len(mine)
        # tombstones and purge-markers carry no tags into the fold
        assert set(m.tags) == {t for r in mine for t in r.tags
                               if r.op in ("create", "supersede", "annotate")}
        assert len(m.tags) == len(set(m.tags))
        assert m.created_at == mine[0].recorded_at
        after = [r for r in mine if r.sort_key > base.sort_key and not is_dream_mark(r)]
        assert m.updated_at == (after[-1].recorded_at if after else base.recorded_at)
        assert m.level == base.level
        last_type = [r for r in content_ops if r.sort_key >= base.sort_key and r.op == "supersede"]
        assert m.type == (last_type[-1].type if last_type else base.type)


@PROPS
@given(st.data())
def test_property_cat_sort_uniq(data):
    records = data.draw(histories())
    lines = [dumps_record(r) for r in records]
    duplicated = lines + data.draw(st.lists(st.sampled_from(lines), max_size=10) if lines
                                   else st.just([]))
    merged: list[str] = []
    for line in sorted(duplicated, key=lambda s: s.encode("utf-8")):
        if not merged or merged[-1] != line:
            merged.append(line)
    text = "\n".join(merged) + ("\n" if merged else "")
    parsed = parse_jsonl(text)
    assert parsed.problems == []
    assert len(parsed.records) == len(records)
    assert state(fold(parsed.records)) == state(fold(records))


@PROPS
@given(st.data())
def test_property_snapshot_at_any_cut(data):
    records = data.draw(histories())
    ordered = sort_records(records)
    cuts = [k for k in range(len(ordered) + 1)
            if k in (0, len(ordered)) or ordered[k - 1].recorded_at != ordered[k].recorded_at]
    k = data.draw(st.sampled_from(cuts))
    head, tail = ordered[:k], ordered[k:]
    last_ms = parse_ms(head[-1].recorded_at) if head else BASE_MS - 1000
    snap_ms = last_ms + 1  # snapshot recordedAt = last head time + 1 ms
    snap_obj = {"v": 1, "id": ulid(snap_ms, 999_999), "memoryId": ulid(snap_ms, 999_998),
                "op": "snapshot", "type": "semantic", "level": "personal",
                "namespace": "user/david", "recordedAt": iso_ms(snap_ms),
                "provenance": {"actor": "test"}, "data": snapshot_data(fold(head))}
    snap = parse_line(dumps_record(parse_obj(snap_obj)))  # through the line format
    assert all(r.sort_key < snap.sort_key for r in head)
    assert all(r.sort_key > snap.sort_key for r in tail)
    full = state(fold(records + [snap]))
    assert full == state(fold(records))
    assert state(fold_with_snapshot(snap, tail)) == full
    assert state(fold_with_snapshot(snap, data.draw(st.permutations(records + [snap])))) == full


def parse_ms(iso: str) -> int:
    from ynm.model.ranker import iso_to_ms

    return iso_to_ms(iso)


@PROPS
@given(st.data())
def test_property_folder_random_batches(data):
    records = data.draw(histories())
    shuffled = data.draw(st.permutations(records))
    cuts = sorted(data.draw(st.lists(st.integers(0, len(shuffled)), max_size=6)))
    bounds = [0, *cuts, len(shuffled)]
    batches = [shuffled[a:b] for a, b in zip(bounds, bounds[1:], strict=False)]
    # re-add some already-seen records: they must be ignored
    if shuffled:
        batches.append(data.draw(st.lists(st.sampled_from(shuffled), max_size=5)))
    folder = Folder()
    added: list[Record] = []
    for batch in batches:
        touched = {r.memory_id for r in batch if r.id not in {x.id for x in added}}
        returned = folder.add(batch)
        added.extend(r for r in batch if r.id not in {x.id for x in added})
        assert set(returned) <= touched
        assert len(returned) == len(set(returned))
        assert all(mid in folder.memories for mid in returned)
        assert {mid for mid in touched if mid in folder.memories} == set(returned)
        full = fold(added)
        assert {k: m.to_obj() for k, m in folder.memories.items()} == {
            k: m.to_obj() for k, m in full.memories.items()}
        assert sorted(r.id for r in folder.orphans) == sorted(r.id for r in full.orphans)
