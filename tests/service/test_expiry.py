"""Working memory past its ttl is expired for every read, swept or not; a session's context
block holds no other session's working memory; a record without a summary shows one derived
from its content (seed 001: working memory expires ttl after its updatedAt; reference/
algorithms.md §4.6, §6, §1.3). The clock is injected, so expiry is exact to the millisecond."""

from __future__ import annotations

import itertools
import json
import time
from pathlib import Path
from typing import Any

import pytest

from ynm.errors import InvalidInput
from ynm.model.ids import iso_ms, new_ulid
from ynm.model.inputs import (
    AnnotateInput,
    ContextQuery,
    ListQuery,
    RecallQuery,
    SessionStartInput,
)
from ynm.service.ynm import Ynm

HOUR = 3_600_000
NOW = 1_772_323_200_000  # 2026-03-01T00:00:00.000Z
_seq = itertools.count(1)


def rec(at: int, **over: Any) -> dict[str, Any]:
    rid = over.pop("id", None) or new_ulid(at, lambda k: next(_seq).to_bytes(k, "big"))
    obj: dict[str, Any] = {
        "v": 1, "id": rid, "memoryId": rid, "op": "create", "type": "semantic",
        "level": "personal", "namespace": "user/tester", "tags": [], "content": "content",
        "summary": "summary", "recordedAt": iso_ms(at),
        "provenance": {"actor": "user:tester"}, "links": [],
    }
    obj.update(over)
    return {k: v for k, v in obj.items() if v is not None}


def working(at: int, session: str, content: str, ttl: str | None = "PT1H") -> dict[str, Any]:
    return rec(at, type="working", namespace=f"session/{session}", ttl=ttl, content=content,
               summary=content)


class Clock:
    """The service's ``now_ms``, settable."""

    def __init__(self, ms: int) -> None:
        self.ms = ms

    def __call__(self) -> int:
        return self.ms


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """``(ynm, clock)``: a Ynm on a personal store whose reads measure time by ``clock``."""
    monkeypatch.setenv("YNM_USER", "tester")
    where = tmp_path / "outside"
    where.mkdir()
    clock = Clock(NOW)
    y = Ynm.open(where, now_ms=clock)
    yield y, clock
    y.close()


def load(y: Ynm, *objs: dict[str, Any]) -> None:
    out = y.import_jsonl("".join(json.dumps(o) + "\n" for o in objs))
    assert out == {"imported": len(objs), "problems": []}


def recall_ids(y: Ynm, **kw: Any) -> list[str]:
    return [h["memoryId"] for h in y.recall(RecallQuery(**kw))]


def list_ids(y: Ynm, **kw: Any) -> list[str]:
    return [m["memoryId"] for m in y.list(ListQuery(**kw))]


def block_ids(y: Ynm, **kw: Any) -> list[str]:
    return y.context(ContextQuery(**kw))["included"]


def start_ids(y: Ynm, session_id: str | None = None) -> list[str]:
    return y.session_start(SessionStartInput(session_id=session_id))["context"]["included"]


# ------------------------------------------------------------------ expired but not swept


def test_every_read_leaves_out_working_memory_past_its_ttl(env):
    y, clock = env
    # written two hours ago with a one hour ttl: expired an hour ago, never swept
    gone = working(NOW - 2 * HOUR, "run-a", "staging DB is down until the restart")
    live = working(NOW - 30 * 60_000, "run-a", "staging deploy is paused")
    fact = rec(NOW - 3 * HOUR, content="staging runs on host seven", summary=None)
    load(y, gone, live, fact)
    for got in (recall_ids(y, text="staging"), recall_ids(y), recall_ids(y, type=["working"]),
                list_ids(y), list_ids(y, type="working"), block_ids(y),
                block_ids(y, text="staging deploy"), start_ids(y, "run-a")):
        assert gone["id"] not in got
        assert live["id"] in got
    assert fact["id"] in recall_ids(y, text="staging")
    # the same store read at a time before the ttl ran out shows it everywhere
    clock.ms = NOW - 90 * 60_000
    for got in (recall_ids(y, text="staging"), recall_ids(y), list_ids(y), block_ids(y),
                start_ids(y, "run-a")):
        assert gone["id"] in got


def test_expiry_is_at_updated_at_plus_ttl_inclusive(env):
    y, clock = env
    m = working(NOW - HOUR, "s", "boundary note", ttl="PT1H")
    load(y, m)
    clock.ms = NOW - 1
    assert recall_ids(y) == [m["id"]] and list_ids(y) == [m["id"]]
    clock.ms = NOW  # updatedAt + ttl <= now: expired
    assert recall_ids(y) == [] and list_ids(y) == [] and block_ids(y) == []
    assert y.expire(dry_run=True) == [m["id"]]


def test_only_working_memory_with_a_ttl_expires(env):
    y, clock = env
    old_fact = rec(NOW - 5000 * HOUR, content="an old fact", ttl="PT1H")  # not working
    no_ttl = working(NOW - 5000 * HOUR, "s", "a superseded-style note", ttl=None)
    load(y, old_fact, no_ttl)
    assert set(list_ids(y)) == {old_fact["id"], no_ttl["id"]}
    assert y.expire(dry_run=True) == []


def test_an_annotation_pushes_updated_at_and_so_extends_life(env):
    y, clock = env
    m = working(NOW - 2 * HOUR, "s", "note to extend")
    load(y, m)
    assert list_ids(y) == []
    y.annotate(AnnotateInput(memory_id=m["id"], tags=["keep"]))  # stamped by the wall clock
    clock.ms = time.time_ns() // 1_000_000
    assert list_ids(y) == [m["id"]]
    clock.ms += HOUR
    assert list_ids(y) == []


def test_include_tombstoned_shows_expired_memory_marked(env):
    y, _ = env
    gone = working(NOW - 2 * HOUR, "run-a", "staging DB is down")
    live = working(NOW - 60_000, "run-a", "staging deploy paused")
    forgot = rec(NOW - HOUR, content="staging forgotten fact")
    load(y, gone, live, forgot,
         rec(NOW - HOUR + 1, op="tombstone", memoryId=forgot["id"], reason="wrong",
             content=None, summary=None))
    hits = {h["memoryId"]: h for h in y.recall(RecallQuery(text="staging",
                                                           include_tombstoned=True))}
    assert set(hits) == {gone["id"], live["id"], forgot["id"]}
    assert hits[gone["id"]]["expired"] is True
    assert "expired" not in hits[live["id"]] and "expired" not in hits[forgot["id"]]
    listed = {m["memoryId"]: m for m in y.list(ListQuery(include_tombstoned=True))}
    assert listed[gone["id"]]["expired"] is True and listed[gone["id"]]["tombstoned"] is False
    assert "expired" not in listed[live["id"]] and "expired" not in listed[forgot["id"]]
    # once swept it is an ordinary tombstoned memory
    assert y.expire() == [gone["id"]]
    listed = {m["memoryId"]: m for m in y.list(ListQuery(include_tombstoned=True))}
    assert listed[gone["id"]]["tombstoned"] is True and "expired" not in listed[gone["id"]]
    assert listed[gone["id"]]["tombstoneReason"] == "expired"


def test_expire_pass_uses_the_injected_clock(env):
    y, clock = env
    a = working(NOW - 2 * HOUR, "a", "a note")
    b = working(NOW - HOUR // 2, "b", "b note")
    load(y, a, b)
    assert y.expire(dry_run=True) == [a["id"]]
    clock.ms = NOW + HOUR
    assert y.expire("session/b") == [b["id"]]
    assert y.expire() == [a["id"]]


def test_one_memory_that_cannot_be_forgotten_does_not_stop_the_pass(env, monkeypatch):
    """The expire pass (dream's first write path) reports a memory it could not tombstone (its
    shard's append failed) and tombstones the others; the failed one is due again on the
    next run."""
    from ynm.errors import StoreError

    y, clock = env
    notes = [working(NOW - 2 * HOUR, s, f"{s} note") for s in ("a", "b", "c")]
    load(y, *notes)
    real = y._append

    def flaky(mount, records, *args, **kwargs):
        if any(r.memory_id == notes[1]["id"] for r in records):
            raise StoreError("cannot append: disk full")
        return real(mount, records, *args, **kwargs)

    monkeypatch.setattr(y, "_append", flaky)
    out = y.consolidate(["expire"])["passes"]["expire"]
    assert out["changed"] == [notes[0]["id"], notes[2]["id"]]
    assert out["failed"] == [{"memoryId": notes[1]["id"], "error": "cannot append: disk full"}]
    assert out["candidates"] == 3
    assert any(w.startswith(f"expire: {notes[1]['id']} not forgotten") for w in y.warnings)
    monkeypatch.setattr(y, "_append", real)
    assert y.expire() == [notes[1]["id"]]


# ------------------------------------------------------------------ sessions' working memory


def test_a_new_session_block_holds_no_other_sessions_working_memory(env):
    y, _ = env
    other = working(NOW - 60_000, "run-a", "run-a scratch: staging DB is down")
    nested = working(NOW - 60_000, "run-b/sub", "run-b sub-task scratch")
    own = working(NOW - 60_000, "run-b", "run-b scratch: retry the deploy")
    prefix = working(NOW - 60_000, "run-bb", "run-bb scratch: prefix but not the session")
    fact = rec(NOW - HOUR, content="deploys go through the staging host")
    load(y, other, nested, own, prefix, fact)
    got = start_ids(y, "run-b")
    assert own["id"] in got and nested["id"] in got and fact["id"] in got
    assert other["id"] not in got and prefix["id"] not in got
    fresh = start_ids(y)  # a new generated id: no working memory at all
    assert fact["id"] in fresh
    assert not {other["id"], own["id"], nested["id"], prefix["id"]} & set(fresh)
    # recall and list are not session-scoped: every live working memory is found
    assert {other["id"], own["id"]} <= set(recall_ids(y, type=["working"]))


def test_own_pinned_working_memory_only(env):
    y, _ = env
    mine = working(NOW - 60_000, "me", "my pinned scratch")
    theirs = working(NOW - 60_000, "them", "their pinned scratch")
    load(y, mine, theirs)
    for m in (mine, theirs):
        y.pin(m["id"])
    block = y.session_start(SessionStartInput(session_id="ME"))["context"]
    assert block["included"] == [mine["id"]]
    assert "(working, pinned) my pinned scratch" in block["markdown"]


@pytest.mark.parametrize("bad", ["!!!", "", "...", "-_-", "✓"])
def test_session_ids_with_nothing_usable_are_invalid_input(env, bad):
    y, _ = env
    with pytest.raises(InvalidInput, match="sessionId: session id .* has no letter or digit"):
        y.session_start(SessionStartInput(session_id=bad))
    with pytest.raises(InvalidInput):
        y.session_end(bad)


@pytest.mark.parametrize("raw, sid", [("a..b", "a.b"), ("x.lock", "x-lock"),
                                      ("-lead", "lead"), (".hidden", "hidden"),
                                      ("Run A", "run-a"), ("q" * 300, "q" * 100)])
def test_session_ids_that_normalise_to_odd_segments_start(env, raw, sid):
    y, _ = env
    out = y.session_start(SessionStartInput(session_id=raw))
    assert (out["sessionId"], out["namespace"]) == (sid, f"session/{sid}")
    assert y.session_end(raw) == {"sessionId": raw, "expired": []}


# ------------------------------------------------------------------ derived summaries


def test_a_record_without_summary_shows_one_derived_from_content(env):
    y, _ = env
    m = rec(NOW - HOUR, content="# Deploy window\nFridays are frozen.", summary=None)
    long = rec(NOW - HOUR, content="word " * 100, summary=None)
    blank = rec(NOW - HOUR, content="\n\n  Second line leads\nthird", summary="")
    load(y, m, long, blank)
    expect = {m["id"]: "Deploy window", long["id"]: ("word " * 100).strip()[:277] + "...",
              blank["id"]: "Second line leads"}
    hits = {h["memoryId"]: h["summary"] for text in ("deploy window", "word", "second line")
            for h in y.recall(RecallQuery(text=text))}
    assert hits == expect
    listed = {x["memoryId"]: x for x in y.list(ListQuery())}
    assert {k: v["summary"] for k, v in listed.items()} == expect
    assert "summary" not in listed[m["id"]]["current"]  # the record itself is as stored
    markdown = y.context(ContextQuery())["markdown"]
    assert "- (semantic) Deploy window\n" in markdown
    assert "- (semantic) Second line leads\n" in markdown
    exported = [json.loads(line) for line in y.export(_export_all())]
    assert [r.get("summary") for r in exported if r["id"] == m["id"]] == [None]


def _export_all() -> Any:
    from ynm.model.inputs import ExportQuery

    return ExportQuery()


def test_memories_that_fail_alike_are_one_warning(env, monkeypatch):
    """A failure every tombstone meets (a store that cannot be written) is one warning
    naming how many memories it left, not one warning per memory."""
    from ynm.errors import StoreError

    y, _clock = env
    notes = [working(NOW - 2 * HOUR, s, f"{s} note") for s in ("a", "b", "c", "d", "e")]
    load(y, *notes)

    def broken(mount, records, *args, **kwargs):
        raise StoreError("cannot append: disk full")

    monkeypatch.setattr(y, "_append", broken)
    out = y.consolidate(["expire"])["passes"]["expire"]
    assert out["changed"] == [] and len(out["failed"]) == 5
    ids = sorted(n["id"] for n in notes)
    assert [w for w in y.warnings if w.startswith("expire:")] == [
        (f"expire: 5 memories not forgotten: cannot append: disk full ({ids[0]}, {ids[1]}, "
         f"{ids[2]}, ...; left for the next run)")]
