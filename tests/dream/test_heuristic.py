"""The no-model floor: the heuristic judge's rules (reference/algorithms.md §4.17, with
negation matched in any case and with curly apostrophes), the none writer, and normalise's
relative dates (§4.12)."""

from __future__ import annotations

import pytest
from pydantic import BaseModel

from ynm.dream.heuristic import HeuristicJudge, jaccard, negated, text_of
from ynm.dream.passes import absolutise
from ynm.dream.questions import PAIR, PROMOTE, SUPERSEDE, VERIFY
from ynm.dream.seams import Judge, ModelUnavailable, Question, Writer
from ynm.dream.writers_none import NoneWriter


def brief(text: str) -> dict:
    return {"summary": "", "content": text, "type": "semantic", "namespace": "common",
            "subject": None, "updatedAt": "2026-01-01T00:00:00.000Z"}


def test_the_example_of_the_normalise_pass_gives_exactly_its_text():
    assert absolutise("Deployed yesterday and again 3 days ago; review next week.",
                      "2026-09-29T12:00:00Z") == (
        "Deployed 2026-09-28 and again 2026-09-26; review the week of 2026-10-06.")


@pytest.mark.parametrize("text, expected", [
    ("today", "2026-09-29"), ("Tomorrow", "2026-09-30"),
    ("TODAY and today", "2026-09-29 and 2026-09-29"),
    ("last week", "the week of 2026-09-22"), ("this week", "the week of 2026-09-29"),
    ("last month", "around 2026-08-30"), ("next month", "around 2026-10-29"),
    ("1 day ago", "2026-09-28"), ("30 days ago", "2026-08-30"),
    ("yesterdays", "yesterdays"), ("the day before", "the day before"),
])
def test_each_relative_date_counts_from_the_recording_day_in_utc(text, expected):
    assert absolutise(text, "2026-09-29T23:30:00Z") == expected


def test_a_recording_time_with_an_offset_counts_in_utc():
    # 23:30 at -02:00 is 01:30 UTC the next day
    assert absolutise("today", "2026-09-29T23:30:00-02:00") == "2026-09-30"


def test_heuristic_pair_answers_follow_word_overlap():
    j = HeuristicJudge()
    assert isinstance(j, Judge) and j.calibrated is False and j.name == "heuristic"
    a, b = brief("deploys happen on tuesday mornings"), brief("deploys happen on tuesday mornings")
    out = j.judge({"a": a, "b": b}, PAIR)
    assert out.answers["sameFact"].noul == 1.0
    assert out.answers["relation"].score == 2
    assert out.answers["relation"].probabilities == [0.1, 0.1, 0.8]
    assert out.answers["relation"].confidence == 0.6
    assert out.answers["contradicts"].noul == 0.1
    assert out.calibrated is False and out.model == "heuristic"
    assert out.usage.input_tokens > 0 and out.usage.output_tokens == 0
    # the brief's type, namespace and date count as words too
    far = j.judge({"a": brief("alpha beta gamma"), "b": brief("delta epsilon zeta")}, PAIR)
    sim = jaccard(text_of(brief("alpha beta gamma")), text_of(brief("delta epsilon zeta")))
    assert far.answers["sameFact"].noul == pytest.approx(sim) and 0 < sim < 0.6


@pytest.mark.parametrize("negative", [
    "we do not deploy on fridays", "We Never deploy on fridays", "NEVER deploy on fridays",
    "we don't deploy on fridays", "we don’t deploy on fridays", "we DON’T deploy on fridays",
    "we no longer deploy on fridays", "we can’t deploy on fridays", "we cannot deploy on fridays",
])
def test_a_contradiction_is_found_whatever_the_case_and_apostrophe(negative):
    j = HeuristicJudge()
    out = j.judge({"a": brief("we deploy on fridays"), "b": brief(negative)}, SUPERSEDE)
    assert out.answers["contradicts"].noul == 0.8
    assert out.answers["newerSupersedes"].noul == 0.5


@pytest.mark.parametrize("text, expected", [
    ("knot tying", False), ("nothing here", False), ("Notably", False), ("it is NOT", True),
    ("isnt", True), ("Won’t", True), ("no  longer", True),
])
def test_negation_words_are_whole_words(text, expected):
    assert negated(text) is expected


def test_both_sides_negated_or_little_overlap_is_no_contradiction():
    j = HeuristicJudge()
    both = j.judge({"a": brief("we never deploy on fridays"),
                    "b": brief("we never deploy on fridays at all")}, SUPERSEDE)
    assert both.answers["contradicts"].noul == 0.1
    # the brief's metadata counts as words: two short texts of one type and day share 5
    short = j.judge({"a": brief("postgres database"), "b": brief("never page oncall")},
                    SUPERSEDE)
    assert short.answers["contradicts"].noul == 0.8
    other = {**brief("never page the on-call engineer at night"), "type": "procedural",
             "namespace": "team/ops", "updatedAt": "2025-05-05T10:11:12.000Z"}
    apart = j.judge({"a": brief("postgres is the database"), "b": other}, SUPERSEDE)
    assert apart.answers["contradicts"].noul == 0.1


def test_promote_and_verify_and_unknown_questions():
    j = HeuristicJudge()
    useful = j.judge({"memory": brief("We always rebase before merging")}, PROMOTE)
    assert useful.answers["usefulLater"].noul == 0.7
    assert useful.answers["kind"].choice == "semantic"
    assert useful.answers["kind"].probabilities == {k: 0.25 for k in PROMOTE["kind"].criteria}
    assert useful.answers["kind"].confidence == 0.0
    # decid is a literal fragment in the reference: "decided" does not count, "deploys" neither
    assert j.judge({"memory": brief("we decided; it deploys")}, PROMOTE).answers[
        "usefulLater"].noul == 0.3
    same = j.judge({"summary": "the build broke twice", "sources": "the build broke twice"},
                   VERIFY)
    assert [same.answers[q].noul for q in ("unsupported", "lostFact", "wrongDate")] == [
        0.15, 0.2, 0.15]
    apart = j.judge({"summary": "alpha beta", "sources": "gamma delta"}, VERIFY)
    assert [apart.answers[q].noul for q in ("unsupported", "lostFact", "wrongDate")] == [
        0.7, 0.7, 0.7]
    extra = j.judge({"memory": brief("my password is hunter2")}, {
        "sensitive": Question(type="noul", instructions="secret?"),
        "other": Question(type="noul", instructions="?"),
        "importance": Question(type="score", instructions="?",
                               criteria=["trivial", "minor", "normal", "major", "critical"]),
        "size": Question(type="score", instructions="?", criteria=["s", "m", "l"]),
    })
    assert extra.answers["sensitive"].noul == 0.9 and extra.answers["other"].noul == 0.5
    assert extra.answers["importance"].score == 2  # round(0.4 * 4) = 2 without a keyword
    assert extra.answers["size"].score == 1 and extra.answers["size"].confidence == 0.0
    must = j.judge({"memory": brief("you must sign commits")}, {
        "importance": Question(type="score", instructions="?",
                               criteria=["trivial", "minor", "normal", "major", "critical"])})
    assert must.answers["importance"].score == 3  # round(0.7 * 4) = 3


def test_the_none_writer_always_raises_unavailable():
    class Value(BaseModel):
        content: str

    w = NoneWriter()
    assert isinstance(w, Writer) and w.name == "none"
    with pytest.raises(ModelUnavailable):
        w.write("merge", {"a": 1}, Value, "merged_memory")
