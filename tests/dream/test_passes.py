"""The passes (reference/algorithms.md §4.6–§4.12, §4.18): what they do with no model, and with
a calibrated judge and a writer that answer known verdicts."""

from __future__ import annotations

import pytest

from tests.dream.conftest import (
    FakeJudge,
    FakeWriter,
    history,
    load,
    rec,
    record_count,
    state,
    tips,
)
from ynm.dream.seams import StructuredOutputError
from ynm.model.inputs import ListQuery

DUP_A = "Deploys go out on Tuesday through the release train"
DUP_B = "Deploys go out on Tuesday through the release train, always"


def links(y, memory_id):
    return {(link["rel"], link["to"]) for link in state(y, memory_id)["links"]}


def annotates(y, memory_id):
    return [r for r in history(y, memory_id) if r["op"] == "annotate"]


# -- no model: heuristic judge, none writer ------------------------------------------------


def test_without_a_model_duplicates_are_flagged_never_merged(y):
    a, b = load(y, rec(10, content=DUP_A), rec(9, content=DUP_B))
    out = y.consolidate()
    dedupe = out["full"]["passes"]["dedupe"]
    assert dedupe["candidates"] == 1 and dedupe["judged"] == 1
    assert dedupe["changed"] == [] and dedupe["flagged"] == [a, b]
    assert dedupe["fallback"] is True and dedupe["uncalibrated"] is True
    for mid, other in ((a, b), (b, a)):
        s = state(y, mid)
        assert s["needsReview"] is True and s["tombstoned"] is False
        flag = annotates(y, mid)[0]
        assert flag["reason"] == "possible duplicate"
        assert flag["data"]["pair"] == [a, b]
        (judgment,) = flag["data"]["judgments"]
        assert judgment["pass"] == "dedupe" and judgment["band"] == "review"
        assert judgment["model"] == "heuristic" and judgment["calibrated"] is False
        assert judgment["answers"]["sameFact"]["noul"] >= 0.6
    assert state(y, b)["current"]["content"] == DUP_B  # not merged
    listed = y.review_list()
    assert {m["memoryId"] for m in listed} == {a, b}
    assert all(m["review"]["reason"] == "possible duplicate" for m in listed)


def test_without_a_model_contradictions_are_linked_both_ways_never_tombstoned(y):
    a, b = load(y, rec(8, subject="db", content="The main database is postgres version 16"),
                rec(7, subject="db", content="The main database is Not postgres version 16"))
    out = y.consolidate()
    contra = out["full"]["passes"]["contradict"]
    assert contra["changed"] == [] and sorted(contra["flagged"]) == sorted([a, b])
    assert ("contradicts", b) in links(y, a) and ("contradicts", a) in links(y, b)
    for mid in (a, b):
        assert state(y, mid)["tombstoned"] is False and state(y, mid)["needsReview"] is True
    flag = next(r for r in annotates(y, b) if r.get("reason") == "contradiction needs review")
    assert flag["data"]["judgments"][0]["answers"]["contradicts"]["noul"] == 0.8


def test_without_a_writer_reflect_counts_and_skips(y):
    ids = load(y, *(rec(10 - i, type="episodic", subject="ci", content=f"CI broke on run {i}")
                    for i in range(3)))
    out = y.consolidate()["full"]["passes"]["reflect"]
    assert out["candidates"] == 1 and out["skipped"] == 1 and out["fallback"] is True
    assert out["changed"] == []
    assert not y.list(ListQuery(type="reflective"))
    assert all(not state(y, i)["tombstoned"] for i in ids)


# -- a calibrated judge and a writer ------------------------------------------------------


def test_a_calibrated_judge_and_a_writer_merge_duplicates(y):
    a, b = load(y, rec(10, content=DUP_A, tags=["ops"]), rec(9, content=DUP_B))
    judge = FakeJudge(nouls={"sameFact": 0.95, "contradicts": 0.05})
    writer = FakeWriter({"content": "Deploys go out every Tuesday on the release train.",
                         "summary": "Tuesday deploys"})
    out = y.consolidate(judge_model=judge, writer=writer)["full"]["passes"]["dedupe"]
    assert out["changed"] == [a] and out["flagged"] == []
    assert out["fallback"] is False and out["uncalibrated"] is False
    sb = state(y, b)
    assert sb["current"]["content"] == "Deploys go out every Tuesday on the release train."
    assert sb["current"]["summary"] == "Tuesday deploys" and "ops" in sb["tags"]
    assert ("derives-from", a) in links(y, b)
    sa = state(y, a)
    assert sa["tombstoned"] is True and sa["tombstoneReason"] == f"duplicate of {b}"
    assert writer.calls[0][1]["older"]["content"] == DUP_A
    assert writer.calls[0][2] == "merged_memory"


def test_a_writer_that_fails_leaves_the_store_unchanged_and_reports_fallback(y):
    load(y, *(rec(10 - i, type="episodic", subject="ci", content=f"CI broke on run {i}")
              for i in range(3)))
    before, records = tips(y), record_count(y)
    writer = FakeWriter(error=StructuredOutputError("no valid reflection after 2 attempts"))
    out = y.consolidate(passes=["reflect"], judge_model=FakeJudge(), writer=writer)
    reflect = out["full"]["passes"]["reflect"]
    assert reflect["fallback"] is True and reflect["skipped"] == 1 and reflect["changed"] == []
    assert reflect["notes"] == ["reflect skipped ci: no valid reflection after 2 attempts"]
    assert tips(y) == before and record_count(y) == records


def test_a_failed_merge_links_and_tombstones_without_new_text(y):
    a, b = load(y, rec(10, content=DUP_A), rec(9, content=DUP_B))
    writer = FakeWriter(error=StructuredOutputError("bad merge"))
    out = y.consolidate(judge_model=FakeJudge(nouls={"sameFact": 0.95}), writer=writer)
    dedupe = out["full"]["passes"]["dedupe"]
    assert dedupe["fallback"] is True and dedupe["notes"] == [
        f"merge text fallback for {b}: bad merge"]
    assert state(y, b)["current"]["content"] == DUP_B
    assert ("derives-from", a) in links(y, b) and state(y, a)["tombstoned"] is True


def test_a_resolved_contradiction_tombstones_the_older_side(y):
    a, b = load(y, rec(8, subject="db", content="The main database is postgres 15"),
                rec(7, subject="db", content="The main database is postgres 16"))
    judge = FakeJudge(nouls={"contradicts": 0.9, "newerSupersedes": 0.9, "sameFact": 0.1})
    out = y.consolidate(judge_model=judge, writer=FakeWriter())["full"]["passes"]["contradict"]
    assert out["changed"] == [a] and out["flagged"] == []
    assert ("contradicts", b) in links(y, a) and ("contradicts", a) in links(y, b)
    sa = state(y, a)
    assert sa["tombstoned"] and sa["tombstoneReason"] == f"superseded by {b} (contradiction resolved)"
    assert not state(y, b)["tombstoned"]


def test_a_contradiction_the_newer_does_not_resolve_is_flagged(y):
    a, b = load(y, rec(8, subject="db", content="The main database is postgres 15"),
                rec(7, subject="db", content="The main database is postgres 16"))
    judge = FakeJudge(nouls={"contradicts": 0.9, "newerSupersedes": 0.3})
    out = y.consolidate(judge_model=judge, writer=FakeWriter())["full"]["passes"]["contradict"]
    assert out["changed"] == [] and sorted(out["flagged"]) == sorted([a, b])
    assert not state(y, a)["tombstoned"] and state(y, a)["needsReview"]


def test_reflect_writes_one_reflection_from_at_most_twelve_episodes_and_replaces_the_old(y):
    old = load(y, rec(40, type="reflective", subject="ci", content="CI broke a few times",
                      namespace="user/tester"))[0]
    eps = load(y, *(rec(30 - i, type="episodic", subject="ci", tags=["occurrence", f"t{i % 2}"],
                        content=f"CI broke on run {i}") for i in range(14)))
    writer = FakeWriter({"summary": "CI broke 14 times", "content": "CI broke on run 0 to 13."})
    judge = FakeJudge(nouls={"unsupported": 0.1, "lostFact": 0.1, "wrongDate": 0.1})
    out = y.consolidate(passes=["reflect"], judge_model=judge, writer=writer)
    reflect = out["full"]["passes"]["reflect"]
    assert reflect["changed"] == ["personal:ci"]
    assert reflect["notes"] == ["verify ci: unsupported=0.10 lostFact=0.10 wrongDate=0.10"]
    (new,) = [m for m in y.list(ListQuery(type="reflective"))]
    assert new["memoryId"] != old and new["current"]["content"] == "CI broke on run 0 to 13."
    assert set(new["tags"]) == {"t0", "t1"}  # occurrence dropped
    derived = [link["to"] for link in new["links"] if link["rel"] == "derives-from"]
    assert derived == eps[2:]  # the newest twelve, oldest first
    assert len(writer.calls[0][1]["episodes"]) == 12
    so = state(y, old)
    assert so["tombstoned"] and so["tombstoneReason"] == f"replaced by {new['memoryId']}"
    (note,) = annotates(y, new["memoryId"])
    assert note["reason"] == "reflection verified"
    assert note["data"]["judgments"][0]["band"] == "act"


def test_a_draft_the_judge_doubts_is_withheld(y):
    eps = load(y, *(rec(10 - i, type="episodic", subject="ci", content=f"CI broke on run {i}")
                    for i in range(3)))
    writer = FakeWriter({"summary": "s", "content": "CI never broke."})
    judge = FakeJudge(nouls={"unsupported": 0.9})
    reflect = y.consolidate(judge_model=judge, writer=writer)["full"]["passes"]["reflect"]
    assert reflect["changed"] == [] and set(reflect["flagged"]) == set(eps)
    assert "reflection for ci not written: unsupported flagged" in reflect["notes"]
    assert not y.list(ListQuery(type="reflective"))


# -- occurrences --------------------------------------------------------------------------


def test_an_occurrence_is_never_paired(y):
    a, b = load(y, rec(10, content=DUP_A, tags=["occurrence"]),
                rec(9, content=DUP_A, tags=["occurrence"], subject="x"))
    judge = FakeJudge(nouls={"sameFact": 0.99, "contradicts": 0.99, "newerSupersedes": 0.99})
    out = y.consolidate(judge_model=judge, writer=FakeWriter())["full"]["passes"]
    assert out["dedupe"]["candidates"] == 0 and out["contradict"]["candidates"] == 0
    assert judge.calls == []
    assert not state(y, a)["tombstoned"] and not state(y, b)["tombstoned"]


def test_an_old_occurrence_is_kept_while_the_newest_reflection_links_to_it(y):
    kept, dropped, recent = load(
        y, rec(120, type="episodic", subject="ci", tags=["occurrence"], content="CI broke A"),
        rec(110, type="episodic", subject="ci", tags=["occurrence"], content="CI broke B"),
        rec(10, type="episodic", subject="ci", tags=["occurrence"], content="CI broke C"))
    load(y, rec(200, type="reflective", subject="ci", content="older reflection",
                links=[{"rel": "derives-from", "to": dropped}]),
         rec(100, type="reflective", subject="ci", content="newest reflection",
             links=[{"rel": "derives-from", "to": kept}]))
    out = y.consolidate(passes=["expire"])
    retention = out["full"]["passes"]["retention"]
    assert retention["candidates"] == 3 and retention["changed"] == [dropped]
    assert retention["notes"] == ["kept 1 past retention as evidence for a reflection"]
    assert state(y, dropped)["tombstoneReason"] == "occurrence retention (P90D)"
    assert not state(y, kept)["tombstoned"] and not state(y, recent)["tombstoned"]


# -- promote ------------------------------------------------------------------------------


def test_a_promote_tagged_working_memory_becomes_episodic(y):
    (w,) = load(y, rec(1, type="working", namespace="session/s1", ttl="P30D",
                       tags=["promote", "infra"], subject="staging", importance=0.8,
                       content="The staging URL is staging.example.com"))
    out = y.consolidate(passes=["promote"])
    assert out["passes"]["promote"] == {"candidates": 1, "changed": [w]}
    sw = state(y, w)
    assert sw["tombstoned"] and sw["tombstoneReason"].startswith("promoted to ")
    new_id = sw["tombstoneReason"].removeprefix("promoted to ")
    new = state(y, new_id)
    assert new["type"] == "episodic" and new["namespace"] == "user/tester"
    assert new["tags"] == ["infra"] and new["subject"] == "staging"
    assert new["importance"] == 0.8 and ("derives-from", w) in links(y, new_id)
    assert new["current"]["content"] == "The staging URL is staging.example.com"
    assert "ttl" not in new["current"]


def test_a_judged_promotion_picks_the_kind_and_stores_the_judgment(y):
    (w,) = load(y, rec(1, type="working", namespace="session/s1", ttl="P30D",
                       content="Run make check before pushing"))
    judge = FakeJudge(nouls={"usefulLater": 0.9}, choices={"kind": "procedural"})
    out = y.consolidate(passes=["promote"], judge_model=judge, writer=FakeWriter())
    assert out["passes"]["promote"]["changed"] == [w]
    new_id = state(y, w)["tombstoneReason"].removeprefix("promoted to ")
    assert state(y, new_id)["type"] == "procedural"
    (note,) = annotates(y, new_id)
    assert note["reason"] == "promotion judgment"
    assert note["data"]["judgments"][0]["answers"]["kind"]["choice"] == "procedural"


def test_an_uncalibrated_promotion_only_flags(y):
    (w,) = load(y, rec(1, type="working", namespace="session/s1", ttl="P30D",
                       content="We always rebase before merging"))
    out = y.consolidate(passes=["promote"])
    assert out["full"]["passes"]["promote"]["flagged"] == [w]
    assert state(y, w)["needsReview"] and not state(y, w)["tombstoned"]


def test_normalise_supersedes_with_absolute_dates_and_keeps_the_summary(y):
    (m,) = load(y, rec(0, content="Deployed yesterday and again 3 days ago; review next week.",
                       summary="deploy log", recordedAt="2026-09-29T12:00:00.000Z"))
    y.consolidate(passes=["normalise"])
    s = state(y, m)
    assert s["current"]["content"] == (
        "Deployed 2026-09-28 and again 2026-09-26; review the week of 2026-10-06.")
    assert s["current"]["summary"] == "deploy log"


def test_contradict_pairs_a_subject_once_and_only_around_fresh_memories(y):
    load(y, *(rec(10 - i, subject="db", content=f"database fact {i}") for i in range(4)))
    first = y.consolidate(passes=["contradict"], judge_model=FakeJudge(calibrated=False))
    assert first["full"]["passes"]["contradict"]["candidates"] == 6  # 4 fresh: every pair once
    capped = y.consolidate(passes=["contradict"], max_pairs=2,
                           judge_model=FakeJudge(calibrated=False))["full"]["passes"]["contradict"]
    # each owner's peers are cut at maxPairs too (§4.10): 2 + 2 + 1 + 0
    assert (capped["candidates"], capped["judged"], capped["skipped"]) == (5, 2, 3)
    y.consolidate(judge_model=FakeJudge(name="j", calibrated=False))  # marks all four
    load(y, rec(1, subject="db", content="database fact new"))
    judge = FakeJudge(name="j", calibrated=False)
    out = y.consolidate(passes=["contradict"], judge_model=judge)
    assert out["full"]["passes"]["contradict"]["candidates"] == 4  # the new one and each old
    assert all("database fact new" in (c["a"]["content"], c["b"]["content"])
               for c in judge.calls)


def test_a_distributed_promotion_lands_in_common_of_the_project(project, monkeypatch):
    from ynm.service.ynm import Ynm

    monkeypatch.setenv("YNM_USER", "tester")
    with Ynm.open(project) as y:
        (w,) = load(y, rec(1, type="working", level="distributed", namespace="session/s9",
                           ttl="P30D", tags=["promote"], content="Ports: api 8080, web 3000"))
        out = y.consolidate(passes=["promote"])
        assert out["passes"]["promote"]["changed"] == [w]
        sw = y.find(w)[1]
        new_id = sw["tombstoneReason"].removeprefix("promoted to ")
        new_mount, new = y.find(new_id)
        assert (new_mount.id, new["level"], new["namespace"], new["type"]) == (
            "project", "distributed", "common", "episodic")
        assert new["tags"] == [] and ("derives-from", w) in links(y, new_id)


@pytest.mark.parametrize(("summary", "expected"), [
    ("Yesterday we decided to pin Node", "2026-09-28 we decided to pin Node"),
    ("Review next week", "Review the week of 2026-10-06"),
    ("Pinned Node 20", "Pinned Node 20"),  # nothing relative: kept as it is
])
def test_normalise_absolutises_a_relative_summary_too(y, summary, expected):
    (m,) = load(y, rec(0, content="Yesterday we decided to pin Node 20 in CI.", summary=summary,
                       recordedAt="2026-09-29T12:00:00.000Z"))
    y.consolidate(passes=["normalise"])
    s = state(y, m)
    assert s["current"]["content"] == "2026-09-28 we decided to pin Node 20 in CI."
    assert s["current"]["summary"] == expected


# -- the similarity judge's own dedupe review threshold ------------------------------------


def _similarity(cosine: float | None, fallback=None):
    """A similarity judge whose two vectors are ``cosine`` apart (None: no vectors, the
    fallback answers), its other questions from ``fallback`` (default: contradicts 0)."""
    import math

    from ynm.dream.judges import SimilarityJudge

    if cosine is None:
        vectors = None
    else:
        s = math.sqrt(1 - cosine * cosine)
        vectors = ([1.0, 0.0, 0.0], [cosine, s, 0.0])
    return SimilarityJudge(lambda state: vectors,
                           fallback or FakeJudge("heuristic", calibrated=False))


def _dedupe_flags(y, judge, dedupe_band=None) -> list[str]:
    from ynm.dream.writers_none import NoneWriter
    from ynm.service.config import DreamConfig

    if dedupe_band is not None:
        y.config = y.config.model_copy(update={"dream": DreamConfig.model_validate(
            {"thresholds": {"dedupe": dedupe_band}})})
    out = y.consolidate(passes=["dedupe"], judge_model=judge, writer=NoneWriter())
    return out["full"]["passes"]["dedupe"]["flagged"]


@pytest.mark.parametrize("cosine, flagged", [
    (0.70, True),   # sameFact 0.98
    (0.53, True),   # 0.54: under the reference's 0.6, over the judge's own 0.28
    (0.49, True),   # 0.33
    (0.46, False),  # 0.21
    (0.30, False),  # 0.01
])
def test_similarity_flags_duplicates_at_its_own_review_threshold(y, cosine, flagged):
    from ynm.dream.judges import SIMILARITY_REVIEW, same_fact_probability

    a, b = load(y, rec(10, content=DUP_A), rec(9, content=DUP_B))
    assert (same_fact_probability(cosine) >= SIMILARITY_REVIEW["dedupe"]) is flagged
    assert _dedupe_flags(y, _similarity(cosine)) == ([a, b] if flagged else [])
    assert all(not state(y, m)["tombstoned"] for m in (a, b))  # it only flags


@pytest.mark.parametrize("cosine", [0.49, 0.53])
def test_a_configured_dedupe_band_overrides_the_similarity_judges_own(y, cosine):
    load(y, rec(10, content=DUP_A), rec(9, content=DUP_B))
    assert _dedupe_flags(y, _similarity(cosine), {"act": 0.85, "review": 0.6}) == []


@pytest.mark.parametrize("judge", [
    FakeJudge("other", calibrated=False, nouls={"sameFact": 0.5}),   # another judge
    _similarity(None, FakeJudge("heuristic", calibrated=False,       # no vectors: the
                                nouls={"sameFact": 0.5})),           # heuristic answered
])
def test_every_other_answer_is_banded_with_the_shared_default(y, judge):
    load(y, rec(10, content=DUP_A), rec(9, content=DUP_B))
    assert _dedupe_flags(y, judge) == []
