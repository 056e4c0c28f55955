"""The dream engine (reference/algorithms.md §1.2, §4.4): freshness and dream marks, runs that
converge, runs that call no model, dry runs and partial runs that write nothing or mark
nothing, the pair cap."""

from __future__ import annotations

import pytest

from tests.dream.conftest import FakeJudge, load, rec, record_count, state, tips
from ynm.errors import InvalidInput


def store(y):
    """Two near duplicates, a contradiction on a subject, a relative date, a plain fact."""
    return load(
        y,
        rec(10, content="Deploys go out on Tuesday through the release train"),
        rec(9, content="Deploys go out on Tuesday through the release train, always"),
        rec(8, subject="db", content="The main database is postgres version sixteen"),
        rec(7, subject="db", content="The main database is not postgres version sixteen"),
        rec(6, type="episodic", content="Deployed yesterday and again 3 days ago"),
        rec(5, content="Coffee machine lives on the third floor kitchen"),
    )


def test_repeated_full_runs_converge_and_a_quiet_run_calls_no_model(y):
    ids = store(y)
    first = y.consolidate()
    full = first["full"]
    assert full["fresh"] == 6 and full["judged"] is True
    (normalised,) = first["passes"]["normalise"]["changed"]
    assert normalised == ids[4]
    # everything fresh at the start but the normalised memory is marked
    assert full["dreamed"] == 5
    assert state(y, ids[0])["dreamed"] == f"{state(y, ids[0])['current']['id']}@heuristic"
    assert "dreamed" not in state(y, normalised) or state(y, normalised)["dreamed"] != (
        state(y, normalised)["current"]["id"] + "@heuristic")
    # the next run judges exactly what the last one changed
    counting = FakeJudge(name="heuristic", calibrated=False)
    second = y.consolidate(judge_model=counting)
    assert second["full"]["fresh"] == 1 and second["full"]["dreamed"] == 1
    assert second["passes"]["normalise"] == {"candidates": 0, "changed": []}
    assert all(normalised in str(call) or ids[4] in str(call) for call in counting.calls)
    # then nothing is fresh: only expire and retention run, nothing is judged or written
    before, records = tips(y), record_count(y)
    quiet = FakeJudge(name="heuristic", calibrated=False)
    third = y.consolidate(judge_model=quiet)
    assert quiet.calls == []
    assert list(third["passes"]) == ["expire", "retention"]
    assert third["full"]["fresh"] == 0 and third["full"]["dreamed"] == 0
    assert tips(y) == before and record_count(y) == records


def test_a_change_of_judge_makes_everything_fresh_again(y):
    store(y)
    y.consolidate()
    other = FakeJudge(name="other", calibrated=False)
    out = y.consolidate(judge_model=other)
    assert out["full"]["fresh"] == 6  # the version names the judge
    assert out["full"]["judge"] == {"name": "other", "calibrated": False}


@pytest.mark.parametrize("judge", [False, True])
def test_a_dry_run_writes_nothing(y, judge):
    ids = store(y)
    y.remember  # noqa: B018 (the service is open)
    load(y, rec(3, type="working", namespace="session/s1", ttl="PT1H", content="scratch"),
         rec(2, type="working", namespace="session/s1", ttl="P30D", tags=["promote"],
             content="Keep: the staging URL is staging.example.com"))
    before, records = tips(y), record_count(y)
    out = y.consolidate(dry_run=True, judge=judge)
    assert tips(y) == before and record_count(y) == records
    full = out["full"]
    assert full["dryRun"] is True and full["judged"] is judge and full["dreamed"] == 0
    # expire, promote (tagged) and normalise say what they would change in every dry run
    assert len(out["passes"]["expire"]["changed"]) == 1
    assert len(out["passes"]["promote"]["changed"]) == 1
    assert out["passes"]["normalise"]["changed"] == [ids[4]]
    dedupe = full["passes"]["dedupe"]
    assert dedupe["candidates"] > 0
    if judge:
        assert dedupe["judged"] > 0 and set(dedupe["flagged"]) >= {ids[0], ids[1]}
        assert full["passes"]["contradict"]["flagged"]
    else:
        assert dedupe["judged"] == 0 and dedupe["flagged"] == [] and dedupe["changed"] == []
    # nothing was marked: the same run is due again
    assert y.consolidate(dry_run=True)["full"]["fresh"] == 8


def test_judge_without_dry_run_is_refused(y):
    with pytest.raises(InvalidInput, match="judge: judge only applies to a dry run; add dryRun"):
        y.consolidate(judge=True)
    with pytest.raises(InvalidInput, match="maxPairs"):
        y.consolidate(max_pairs=0)


@pytest.mark.parametrize("kw", [{"passes": ["expire", "promote", "dedupe", "contradict",
                                            "reflect"]},
                                {"namespace": "user/tester"}])
def test_a_partial_run_judges_but_marks_nothing(y, kw):
    store(y)
    out = y.consolidate(**kw)
    assert out["full"]["dreamed"] == 0 and out["full"]["fresh"] == 6
    assert out["full"]["passes"]["dedupe"]["judged"] > 0
    assert y.consolidate(dry_run=True)["full"]["fresh"] == 6


def test_the_pair_cap_defers_owners_to_the_next_run(y):
    ids = load(y, *(rec(20 - i, content=f"Release checklist item {i}: tag, build, publish, "
                                        "announce in the release channel") for i in range(4)))
    out = y.consolidate(max_pairs=1)["full"]
    dedupe = out["passes"]["dedupe"]
    assert dedupe["judged"] == 1 and dedupe["skipped"] >= 1
    assert dedupe["candidates"] == dedupe["judged"] + dedupe["skipped"]
    assert out["dreamed"] < len(ids)  # the deferred owners stay fresh
    again = y.consolidate(max_pairs=100)["full"]
    assert again["fresh"] == len(ids) - out["dreamed"]
    assert y.consolidate()["full"]["fresh"] == 0


def test_dream_marks_are_one_commit_per_shard(y):
    load(y, *(rec(3, content=f"fact number {i} about topic {i * 7}") for i in range(30)))
    before = tips(y)
    out = y.consolidate(passes=None)
    assert out["full"]["dreamed"] == 30
    moved = [k for k, v in tips(y).items() if before.get(k) != v]
    assert len(moved) == 1  # one namespace, one type, one month: one shard
    repo = y.mounts[0].log.repo
    name = moved[0].split(":", 1)[1]
    commit = repo[repo.references[name].target]
    assert commit.message.startswith("ynm: 30 records "), commit.message
    # on top of the shard's tip (the run's flags may come first; no parent when the marks
    # open this month's shard)
    assert not commit.parents or str(commit.parents[0].id) == before.get(
        moved[0], str(commit.parents[0].id))


def test_what_a_run_creates_is_judged_by_the_next(y):
    (w,) = load(y, rec(1, type="working", namespace="session/s1", ttl="P30D",
                       tags=["promote"], content="The staging URL is staging.example.com"))
    first = y.consolidate()
    assert first["passes"]["promote"]["changed"] == [w]
    new_id = state(y, w)["tombstoneReason"].removeprefix("promoted to ")
    judge = FakeJudge(name="heuristic", calibrated=False)
    second = y.consolidate(judge_model=judge)
    assert second["full"]["fresh"] == 1 and second["full"]["dreamed"] == 1
    assert state(y, new_id)["dreamed"] == f"{state(y, new_id)['current']['id']}@heuristic"
    assert y.consolidate()["full"]["fresh"] == 0
