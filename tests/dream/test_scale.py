"""What keeps a dream run's cost bounded on a large store (reference/algorithms.md §4.4, §4.5,
§4.9, §4.10): dedupe looks up neighbours only while the pair cap allows a judgment and defers
the owners it did not reach; contradict counts the pairs past the cap without listing them;
memories are listed from the cache's columns, their state parsed only when read."""

from __future__ import annotations

import pytest

import ynm.dream.candidates as C
from tests.dream.conftest import FakeJudge, load, rec
from ynm.dream.engine import DreamInput, Mem, Run
from ynm.dream.passes import DEDUPE_BLOCK, DEDUPE_TYPES, _is_occurrence
from ynm.dream.writers_none import NoneWriter

WORDS = ["zanzibar", "quokka", "marmot", "ocelot", "pangolin", "axolotl", "narwhal", "okapi",
         "tapir", "wombat", "capybara", "dugong", "gharial", "kinkajou", "numbat", "quoll"]


def pairs_store(y, n: int) -> list[str]:
    """``n`` pairs of paraphrases, each pair sharing two words no other pair holds."""
    objs = []
    for i in range(n):
        w1, w2 = WORDS[i % len(WORDS)], f"tok{i}x{i * 7}"
        objs.append(rec(100 - i * 0.5, content=f"The {w1} {w2} service restarts every night"))
        objs.append(rec(100 - i * 0.5 - 0.25, content=f"Every night the {w2} {w1} restarts"))
    return load(y, *objs)


def spy_owners(monkeypatch) -> list[str]:
    """Record every owner whose lexical neighbours are looked up."""
    looked: list[str] = []
    real = C._lexical

    def spy(run, owners, pool, k, cache=None):
        looked.extend(m.id for m in owners)
        return real(run, owners, pool, k, cache)

    monkeypatch.setattr(C, "_lexical", spy)
    return looked


def eager_pairs(y, cap: int = 2000) -> list[tuple[str, str]]:
    """Every dedupe pair in the reference's order (§4.9 ``candidatePairs``), listed eagerly
    (``min(candidatesPerMemory, maxPairs)`` neighbours each)."""
    run = Run(ynm=y, judge=FakeJudge(calibrated=False), writer=NoneWriter(), inp=DreamInput(),
              now_ms=y._now_ms())
    before = run.versions()
    run.fresh = {i: v[0] for i, v in before.items() if v[2] != v[0]}
    ranked = sorted(before, key=lambda i: (before[i][1], i), reverse=True)
    run.order = {memory_id: rank for rank, memory_id in enumerate(ranked)}
    pool = {i: m for i, m in run.memories().items()
            if m.type in DEDUPE_TYPES and not _is_occurrence(m)}
    owners = run.by_order(m for m in pool.values() if run.is_fresh(m.id))
    near = C.neighbours(run, owners, pool, min(5, cap))
    seen, out = set(), []
    for m in owners:
        for other in near.get(m.id, []):
            key = (min(m.id, other), max(m.id, other))
            if other != m.id and key not in seen:
                seen.add(key)
                a, b = sorted((m, pool[other]), key=lambda x: (x.updated_at, x is not m))
                out.append((a.id, b.id))
    return out


def test_dedupe_past_the_cap_looks_up_no_more_owners_and_defers_them(y, monkeypatch):
    n = 3 * DEDUPE_BLOCK
    ids = pairs_store(y, n)
    looked = spy_owners(monkeypatch)
    judge = FakeJudge(name="heuristic", calibrated=False)  # judges, never acts: nothing changes
    out = y.consolidate(passes=None, max_pairs=3, judge_model=judge)["full"]
    dedupe = out["passes"]["dedupe"]
    assert dedupe["judged"] == 3
    # one block of owners was looked up (of 2n fresh owners), the rest deferred unreached
    assert len(looked) == DEDUPE_BLOCK
    assert dedupe["candidates"] == dedupe["judged"] + dedupe["skipped"]
    # the block's pairs past the cap, then one skip per owner not reached
    assert dedupe["skipped"] > 2 * n - DEDUPE_BLOCK
    # marked: only owners whose every pair was judged (3 pairs: at most 3 owners)
    assert out["fresh"] == 2 * n and 1 <= out["dreamed"] <= 3
    # the next runs pick the deferred owners up until every memory is marked
    again = y.consolidate(max_pairs=10**6)["full"]
    left = 2 * n - out["dreamed"]
    assert again["fresh"] == left and again["dreamed"] == left
    assert again["passes"]["dedupe"]["skipped"] == 0
    assert y.consolidate()["full"]["fresh"] == 0
    assert len(ids) == 2 * n


@pytest.mark.parametrize("cap", [1, 4, 7, 40])
def test_the_pairs_judged_under_the_cap_are_the_first_of_the_full_listing(y, cap):
    pairs_store(y, 12)
    load(y, rec(1, content="The zanzibar service restarts every night at two"),
         rec(0.5, content="The quokka service restarts every night at three"))
    expected = eager_pairs(y, cap)
    assert len(expected) > 7
    judge = FakeJudge(calibrated=False)
    out = y.consolidate(passes=["dedupe"], max_pairs=cap, judge_model=judge)["full"]
    by_content = {m: s["current"]["content"] for m, s in
                  ((i, y.find(i)[1]) for p in expected for i in p)}
    want = [(by_content[a], by_content[b]) for a, b in expected[:cap]]
    assert [(c["a"]["content"], c["b"]["content"]) for c in judge.calls] == want
    assert out["passes"]["dedupe"]["judged"] == min(cap, len(expected))


def test_a_dry_run_without_judging_counts_every_pair(y):
    pairs_store(y, 10)
    out = y.consolidate(dry_run=True, max_pairs=1)["full"]
    assert out["passes"]["dedupe"]["candidates"] == len(eager_pairs(y, 1)) >= 10


def test_contradict_past_the_cap_counts_each_owners_pairs_and_defers_it(y):
    ids = load(y, *(rec(10 - i, subject="db", content=f"The database is version {i}")
                    for i in range(6)))
    judge = FakeJudge(calibrated=False)
    out = y.consolidate(passes=["contradict"], max_pairs=2, judge_model=judge)["full"]
    c = out["passes"]["contradict"]
    # owners newest first, each paired with every later memory (cut at 2): 2+2+2+2+1+0
    assert (c["candidates"], c["judged"], c["skipped"]) == (9, 2, 7)
    assert len(judge.calls) == 2
    assert len(ids) == 6


def test_memories_are_listed_from_columns_and_agree_with_their_state(y):
    ids = load(
        y,
        rec(5, content="Plain fact about the build", tags=["ci", "build"]),
        rec(4, content="Ünïcödé text: 東京 deploys ☃", subject="tokyo"),
        rec(3, content="No summary here at all", summary=None),
        rec(2, content="Holds data", data={"ticket": "OPS-12", "n": 3}),
        rec(1, type="episodic", content="x" * 3000, subject="long", tags=["occurrence"]),
    )
    run = Run(ynm=y, judge=FakeJudge(calibrated=False), writer=NoneWriter(), inp=DreamInput(),
              now_ms=y._now_ms())
    live = run.memories()
    assert sorted(live) == sorted(ids)
    assert all(m._state is None for m in live.values())  # nothing parsed by listing
    for memory_id, m in live.items():
        s = y.find(memory_id)[1]
        whole = Mem(m.mount, m.rowid, s, m.shown)  # built from the parsed state
        for attr in ("id", "type", "subject", "tags", "updated_at", "content", "raw_summary"):
            assert getattr(m, attr) == getattr(whole, attr), attr
        assert m.brief() == whole.brief()
        assert m.raw_summary == (s["current"].get("summary") or "")
        assert m.content == s["current"]["content"]
        assert m.state["memoryId"] == memory_id  # parsed when read
