"""Paged browsing and counts of a store (ynm.service.browse): keyset pages that cover every
live memory once, ties on updatedAt broken by memoryId, filters, expired working memory and
tombstones left out."""

from __future__ import annotations

import json

import pytest

from ynm.errors import InvalidInput
from ynm.service import browse
from ynm.service.ynm import Ynm

STAMP = "2026-03-04T05:06:07.000Z"
IDS = [f"01K0000000000000000000{n:04d}" for n in range(10)]


def _record(memory_id: str, *, namespace: str = "common", mtype: str = "semantic",
            tags: list[str] | None = None, subject: str | None = None) -> str:
    rec = {"v": 1, "id": memory_id, "memoryId": memory_id, "op": "create", "type": mtype,
           "level": "distributed", "namespace": namespace, "tags": tags or [],
           "content": f"memory {memory_id}", "importance": 0.5, "confidence": 1,
           "recordedAt": STAMP, "provenance": {"actor": "user:test"}, "links": []}
    if subject:
        rec["subject"] = subject
    return json.dumps(rec)


@pytest.fixture
def ynm(project):
    lines = [_record(i, namespace="team/api" if n % 3 == 0 else "common",
                     mtype="procedural" if n % 2 else "semantic",
                     tags=["ops"] if n < 4 else [], subject="cache" if n == 7 else None)
             for n, i in enumerate(IDS)]
    with Ynm.open(project) as y:
        y.import_jsonl("\n".join(lines) + "\n")
        yield y


def test_pages_cover_every_memory_once_with_ties_broken_by_id(ynm):
    seen, after = [], None
    while True:
        page = browse.page(ynm, browse.Filter(), after=after, limit=3)
        seen.extend(m["memoryId"] for m in page.items)
        if page.next is None:
            break
        assert page.next == f"{STAMP}~{page.items[-1]['memoryId']}"
        after = page.next
    assert seen == sorted(IDS, reverse=True)  # one updatedAt for all: memoryId descending


def test_filters(ynm):
    def ids(**kw):
        return [m["memoryId"] for m in browse.page(ynm, browse.Filter(**kw), limit=50).items]

    assert ids(namespace="team") == [IDS[9], IDS[6], IDS[3], IDS[0]]  # team/api under team
    assert ids(type="procedural", namespace="common") == [IDS[7], IDS[5], IDS[1]]
    assert ids(tag="ops") == [IDS[3], IDS[2], IDS[1], IDS[0]]
    assert ids(subject="cache") == [IDS[7]]
    assert ids(level="personal") == []


def test_facets_count_live_memories_only(ynm):
    from ynm.model.inputs import ForgetInput

    ynm.forget(ForgetInput(memory_id=IDS[0], reason="wrong"))
    assert browse.facets(ynm) == [
        {"level": "distributed", "namespace": "common", "type": "procedural", "count": 3},
        {"level": "distributed", "namespace": "common", "type": "semantic", "count": 3},
        {"level": "distributed", "namespace": "team/api", "type": "procedural", "count": 2},
        {"level": "distributed", "namespace": "team/api", "type": "semantic", "count": 1},
    ]
    assert IDS[0] not in [m["memoryId"] for m in browse.page(ynm, browse.Filter()).items]


@pytest.mark.parametrize("cursor", ["x", "~01K", "2026-01-01T00:00:00Z~"])
def test_bad_cursors_and_sizes_are_refused(ynm, cursor):
    with pytest.raises(InvalidInput, match="cursor"):
        browse.page(ynm, browse.Filter(), after=cursor)
    with pytest.raises(InvalidInput, match="page size"):
        browse.page(ynm, browse.Filter(), limit=browse.PAGE_MAX + 1)


def test_counts_follow_writes_and_working_memory_running_out(ynm):
    from ynm.model.inputs import ForgetInput
    from ynm.model.ranker import iso_to_ms

    def total() -> int:
        return sum(f["count"] for f in browse.facets(ynm))

    assert total() == 10
    assert total() == 10  # counted again from what was kept
    ynm.forget(ForgetInput(memory_id=IDS[5], reason="gone"))
    assert total() == 9

    start = iso_to_ms(STAMP)
    ynm._now_ms = lambda: start + 30 * 60_000
    working = json.loads(_record("01K00000000000000000009999", mtype="working",
                                 namespace="session/s1"))
    working["ttl"] = "PT1H"
    ynm.import_jsonl(json.dumps(working) + "\n")
    assert total() == 10
    ynm._now_ms = lambda: start + 59 * 60_000
    assert total() == 10
    ynm._now_ms = lambda: start + 61 * 60_000  # its ttl ran out: counted no more
    assert total() == 9
