"""What a first-time user of ``ynm dream`` and ``ynm review`` must be told, and must not lose:
an unavailable judge falls back to the no-model floor and says so; passes that need no judge
run whatever the judge configuration; changed values are never listed as duplicates; the text
report names what was deferred, skipped or flagged and what to do next; bad filters and
budgets are refused with exit 2 (reference/algorithms.md §4.4, §4.14, §4.17, §4.18)."""

from __future__ import annotations

import json

import pytest

from tests.dream.conftest import FakeJudge, load, rec, state
from ynm.dream.heuristic import HeuristicJudge
from ynm.dream.judges import SimilarityJudge, claim_mismatch
from ynm.dream.questions import PAIR
from ynm.dream.report import format_report
from ynm.dream.resolve import (
    JudgeNotConfigured,
    calibrated_judge,
    resolve,
    resolve_judge,
    resolve_writer,
)
from ynm.errors import ConfigError, YnmError
from ynm.server.tools import run_tool
from ynm.service.config import DreamConfig
from ynm.service.ynm import Ynm

VALUE_SWAPS = [
    ("Rate limit for the public API is 100 requests per minute",
     "Rate limit for the public API is 500 requests per minute"),
    ("Alice owns the on-call rotation", "Bob owns the on-call rotation"),
    ("The billing service stores its data in Postgres.",
     "The billing service stores its data in MongoDB."),
    ("Deploy windows close at 16:00 on Fridays.", "Deploy windows close at 18:00 on Fridays."),
]
RESTATEMENTS = [
    ("To rotate the database password, run scripts/rotate-db.sh and restart the api pods",
     "Rotating the DB password: run scripts/rotate-db.sh, then restart the api pods"),
    ("Deploys go out on Tuesday through the release train",
     "Deploys go out on Tuesday through the release train, always"),
]


def brief(content: str, subject: str | None = None) -> dict:
    return {"summary": content[:280], "content": content, "type": "semantic",
            "namespace": "common", "subject": subject, "updatedAt": "2026-11-30T10:00:00.000Z"}


def pair(a: str, b: str) -> dict:
    return {"a": brief(a), "b": brief(b)}


def answers(judge, a: str, b: str) -> dict:
    j = judge.judge(pair(a, b), PAIR)
    return {k: v.noul if v.noul is not None else v.score for k, v in j.answers.items()}


# -- the heuristic's sameFact sees changed values (item: wrong reason) --------------------------


@pytest.mark.parametrize("a, b", VALUE_SWAPS)
def test_a_changed_value_is_no_duplicate_but_a_possible_contradiction(a, b):
    got = answers(HeuristicJudge(), a, b)
    assert got["sameFact"] <= 0.1  # below every dedupe review band: never flagged
    assert got["relation"] == 1  # same subject, different claims
    assert got["contradicts"] == 0.8  # handed to contradict, which flags it


@pytest.mark.parametrize("a, b", RESTATEMENTS)
def test_a_restatement_stays_a_possible_duplicate(a, b):
    assert claim_mismatch(brief(a), brief(b)) == []
    got = answers(HeuristicJudge(), a, b)
    assert got["sameFact"] >= 0.6 and got["contradicts"] == 0.1


@pytest.mark.parametrize("a, b", VALUE_SWAPS)
def test_the_similarity_judge_hands_changed_values_to_contradict(a, b):
    """Its vectors say "near"; its ``contradicts`` (the heuristic's) now says "changed"."""
    judge = SimilarityJudge(lambda state: ([1.0, 0.0], [1.0, 0.0]), HeuristicJudge())
    got = answers(judge, a, b)
    assert got["sameFact"] <= 0.1 and got["contradicts"] == 0.8


def test_a_reworded_word_is_no_swapped_value():
    """``to rotate the database`` / ``rotating the db``: forms of one word; ``Alice`` /
    ``Bob``, ``100`` / ``500``: two values."""
    from ynm.dream.judges import _variant

    assert _variant("rotate", "rotating") and _variant("db", "database")
    assert _variant("cfg", "config") and _variant("deploy", "deployed")
    assert not _variant("alice", "bob") and not _variant("100", "1000")
    assert not _variant("postgres", "mongodb")


def test_dream_flags_value_swaps_as_contradictions_not_duplicates(y):
    """Subject-less pairs reach contradict through dedupe's hand-off (§4.10)."""
    ids = load(y, *(rec(2 - i * 0.1, content=c) for i, c in enumerate(VALUE_SWAPS[1])))
    out = y.consolidate(judge_model=HeuristicJudge())
    passes = out["full"]["passes"]
    assert passes["dedupe"]["flagged"] == []
    assert sorted(passes["contradict"]["flagged"]) == sorted(ids)
    assert state(y, ids[0])["needsReview"] is True


# -- an unavailable judge falls back and says so --------------------------------------------


def test_an_unavailable_judge_falls_back_to_the_heuristic_and_says_so(y):
    ids = load(y, rec(3, content="Deploys go out on Tuesday through the release train"),
               rec(2, content="Deploys go out on Tuesday through the release train, always"),
               *(rec(1 - i * 0.1, content=c) for i, c in enumerate(VALUE_SWAPS[1])))
    down = FakeJudge(name="typesafe", unavailable=True)
    out = y.consolidate(judge_model=down)
    dedupe, contradict = out["full"]["passes"]["dedupe"], out["full"]["passes"]["contradict"]
    assert sorted(dedupe["flagged"]) == sorted(ids[:2])
    assert sorted(contradict["flagged"]) == sorted(ids[2:])
    assert dedupe["fallback"] and contradict["fallback"]
    assert len(down.calls) == 1  # once down, not asked again in this run
    note = dedupe["notes"][0]
    assert note.startswith("judge unavailable: fake judge is down; the heuristic judge answered")
    # the configured judge never judged them: nothing marked, all fresh next run
    assert out["full"]["dreamed"] == 0
    text = format_report(out)
    assert f"  note: {note}" in text.splitlines()
    assert "next: see them with `ynm review list`" in text


def test_a_similarity_judge_without_vectors_marks_nothing_under_its_name(y):
    """A pair answered only by the heuristic floor is not marked ``@similarity``."""
    load(y, rec(3, content="Deploys go out on Tuesday through the release train"),
         rec(2, content="Deploys go out on Tuesday through the release train, always"))
    judge = SimilarityJudge(lambda state: None, HeuristicJudge())
    assert y.consolidate(judge_model=judge)["full"]["dreamed"] == 0
    assert resolve_judge(DreamConfig(judge="similarity"), resolve_writer(
        DreamConfig(writer="none"), {}), {}).name == "heuristic"


# -- keys: blanks are none; a missing key stops only the passes that need it ------------------


@pytest.mark.parametrize("blank", ["", "   ", "\t\n"])
def test_a_blank_key_is_no_key(blank):
    env = {"TYPESAFE_API_KEY": blank, "OPENAI_API_KEY": blank}
    judge, writer = resolve(DreamConfig(), env, probe=lambda env: False)
    assert (judge.name, writer.name) == ("heuristic", "none")
    assert calibrated_judge(DreamConfig(), env) is None
    with pytest.raises(ConfigError, match="needs an API key"):
        resolve(DreamConfig(judge="typesafe"), env, probe=lambda env: False)


@pytest.fixture
def typesafe_project(project, monkeypatch):
    monkeypatch.delenv("TYPESAFE_API_KEY", raising=False)
    config = project / ".ynm" / "config.json"
    obj = json.loads(config.read_text())
    obj["dream"] = {"judge": "typesafe"}
    config.write_text(json.dumps(obj))
    return project


@pytest.mark.parametrize("args", [
    ("--passes", "expire,normalise"), ("--passes", "expire,normalise", "--dry-run"),
    ("--passes", "normalise"), ("--dry-run",),
])
def test_passes_that_need_no_judge_run_without_its_key(typesafe_project, cli_run, args):
    assert cli_run("remember", "--type", "semantic", "--content",
                   "We moved the cron job yesterday").exit_code == 0
    result = cli_run("dream", *args)
    assert result.exit_code == 0, result.stderr
    verb = "would change" if "--dry-run" in args else "changed"
    assert f"normalise: 1/1 {verb}" in result.stdout.splitlines()


@pytest.mark.parametrize("args, needing", [
    ((), "the promote, dedupe, contradict, reflect passes need the judge"),
    (("--dry-run", "--judge"), "the promote, dedupe, contradict, reflect passes need"),
    (("--passes", "expire,dedupe"), "the dedupe pass needs the judge"),
])
def test_a_missing_key_refuses_the_passes_that_need_it_with_exit_2(typesafe_project, cli_run,
                                                                   args, needing):
    result = cli_run("dream", *args)
    assert result.exit_code == 2
    assert "the typesafe judge needs an API key: set TYPESAFE_API_KEY" in result.stderr
    assert needing in result.stderr and result.stdout == ""
    with Ynm.open(typesafe_project) as y, pytest.raises(JudgeNotConfigured):
        run_tool(y, "memory_consolidate", {})


# -- refusals and the text report -----------------------------------------------------------


@pytest.mark.parametrize("args, message", [
    (("--passes", ""), "names no pass"),
    (("--passes", ","), "names no pass"),
    (("--passes", " , "), "names no pass"),
    (("--namespace", ""), "--namespace: '' names no namespace"),
    (("--namespace", "/"), "--namespace: '/' names no namespace"),
    (("--judge", "typesafe", "--dry-run"),
     ("--judge takes no value (it asks the configured judge in a dry run); the judge is chosen "
     "by the config key dream.judge")),
    (("--dry-run", "everything"), "unexpected extra argument (everything)"),
])
def test_dream_refuses_empty_filters_and_stray_values(project, cli_run, args, message):
    result = cli_run("dream", *args)
    assert result.exit_code == 2 and message in result.stderr, result.stderr


@pytest.mark.parametrize("value", ["abc", "-5", "1.5", "2e6"])
def test_a_bad_token_budget_is_refused_at_the_start_of_every_run(project, cli_run,
                                                                   monkeypatch, value):
    monkeypatch.setenv("YNM_TOKEN_BUDGET", value)
    for args in (("--dry-run", "--judge"), ("--dry-run",), ("--passes", "expire")):
        result = cli_run("dream", *args)
        assert result.exit_code == 2, (args, result.stderr)
        assert f"YNM_TOKEN_BUDGET must be a whole number of tokens >= 0, got {value!r}" \
            in result.stderr
    with Ynm.open(project) as y, pytest.raises(YnmError) as caught:
        run_tool(y, "memory_consolidate", {"dryRun": True})
    assert caught.value.exit_code == 2


@pytest.mark.parametrize("inp", [{"passes": []}, {"namespace": ""}, {"namespace": "/"}])
def test_the_tool_refuses_empty_filters_too(project, inp):
    with Ynm.open(project) as y, pytest.raises(YnmError) as caught:
        run_tool(y, "memory_consolidate", {"dryRun": True, **inp})
    assert caught.value.exit_code == 2


def test_a_namespace_with_no_memory_says_so(project, cli_run):
    out = cli_run("dream", "--dry-run", "--namespace", "does/not/exist")
    assert out.exit_code == 0
    assert "note: no memory is in namespace 'does/not/exist' (nor under it)" in out.stdout


def test_an_unusable_embedder_is_warned_about(project, cli_run, monkeypatch):
    monkeypatch.setenv("YNM_EMBEDDER", "bogus")
    result = cli_run("dream", "--dry-run")
    assert result.exit_code == 0
    assert "warning: vector search is off (unknown embedder 'bogus'" in result.stderr
    assert "dream judges with the heuristic judge" in result.stderr


def _report(dry: bool, passes: dict, writer: str = "none", judged: bool = True) -> dict:
    full = {"dryRun": dry, "judged": judged, "fresh": 3, "writer": writer,
            "judge": {"name": "heuristic", "calibrated": False}, "passes": {
                name: {"candidates": 0, "changed": [], "flagged": [], "skipped": 0,
                       "fallback": False, "judged": 0, "notes": [], **p}
                for name, p in passes.items()}}
    return {"dryRun": dry, "full": full, "passes": {
        n: {"candidates": p["candidates"], "changed": p["changed"]}
        for n, p in full["passes"].items()}}


def test_the_report_says_what_was_deferred_skipped_and_what_to_do():
    text = format_report(_report(False, {
        "dedupe": {"candidates": 5, "skipped": 4, "judged": 1, "fallback": True},
        "contradict": {"candidates": 5, "skipped": 4, "judged": 1, "flagged": ["a", "b"],
                       "notes": ["judge unavailable: down; the heuristic judge answered"]},
        "reflect": {"candidates": 1, "skipped": 1, "fallback": True}})).splitlines()
    assert text == [
        ("dedupe: 0/5 changed, 4 left for the next run by the pair cap (--max-pairs, "
        "dream.maxPairsPerRun)"),
        ("  fallback: the heuristic judge (no model) answered: it only flags for review, never "
        "merges or forgets"),
        ("contradict: 0/5 changed, 2 memories flagged for review, 4 left for the next run by the "
        "pair cap (--max-pairs, dream.maxPairsPerRun)"),
        "  note: judge unavailable: down; the heuristic judge answered",
        ("reflect: 0/1 changed, 1 subject skipped: no writer configured: set dream.writer to "
        "claude-cli or openai-compatible (or install the claude CLI, or set OPENAI_API_KEY or "
        "YNM_OPENAI_BASE_URL, for dream.writer auto)"),
        "next: see them with `ynm review list`, decide, then `ynm review clear <id>`"]


@pytest.mark.parametrize("n, line", [(1, "reflect: 1 candidate (not judged; add --judge)"),
                                     (2, "reflect: 2 candidates (not judged; add --judge)")])
def test_candidates_are_counted_in_the_right_number(n, line):
    assert format_report(_report(True, {"reflect": {"candidates": n}}, judged=False)) == line


def test_a_dry_run_does_not_promote_what_expire_would_forget(y):
    load(y, rec(3, type="working", namespace="session/s1", ttl="P1D", tags=["promote"],
                content="expired before the run"),
         rec(0.5, type="working", namespace="session/s1", ttl="P30D", tags=["promote"],
             content="still live"))
    dry = y.consolidate(dry_run=True)["passes"]
    assert len(dry["expire"]["changed"]) == 1
    assert dry["promote"]["candidates"] == 1 and len(dry["promote"]["changed"]) == 1
    real = y.consolidate()["passes"]
    assert (real["promote"]["candidates"], len(real["promote"]["changed"])) == (1, 1)


def test_review_says_what_a_relation_level_means():
    from ynm.service.review import why_line

    j = HeuristicJudge().judge(pair(*RESTATEMENTS[1]), PAIR)
    stored = {"model": j.model, "questions": {k: q.model_dump(exclude_none=True)
                                              for k, q in PAIR.items()},
              "answers": {k: a.model_dump(exclude_none=True) for k, a in j.answers.items()}}
    line = why_line({"memoryId": "m1", "review": {"reason": "possible duplicate", "data": {
        "judgments": [stored], "pair": ["m1", "m2"]}}})
    assert "relation 2 (the same thing)" in line and line.endswith("; pair with m2")
