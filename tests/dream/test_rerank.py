"""The recall reranker (reference/algorithms.md §2.8, cli.md §4.18): a calibrated judge's
``answers`` probability reorders the top hits; nothing is stored."""

from __future__ import annotations

import json

import pytest

from tests.dream.fakes import FakeTypesafeServer, answers_from
from ynm.dream.budget import reset_process_budget
from ynm.dream.rerank import rerank, rerank_questions
from ynm.dream.seams import Answer, JudgeLimits, Judgment, ModelUnavailable


@pytest.fixture(autouse=True)
def _budget():
    reset_process_budget()
    yield
    reset_process_budget()


class Judge:
    """A calibrated stand-in answering ``answers`` from ``p[summary]`` (missing: unavailable)."""

    name = "typesafe"
    calibrated = True

    def __init__(self, p):
        self.p = p
        self.states = []

    def limits(self):
        return JudgeLimits(state_tokens=32000, request_tokens=64000, max_choices=255)

    def judge(self, state, questions):
        assert questions == rerank_questions()
        self.states.append(state)
        summary = state["memory"]["summary"]
        if summary not in self.p:
            raise ModelUnavailable("busy")
        return Judgment(answers={"answers": Answer(type="noul", noul=self.p[summary])},
                        model="m", calibrated=True)


def hit(summary, score, **kw):
    return {"memoryId": summary, "summary": summary, "content": f"content of {summary}",
            "score": score, **kw}


def test_rerank_orders_by_the_judges_answers():
    hits = [hit("a", 0.9), hit("b", 0.8), hit("c", 0.7), hit("d", 0.6)]
    judge = Judge({"a": 0.1, "b": 0.2, "c": 0.95, "d": 0.5})
    out = rerank(hits, "query", limit=3, judge=judge, top_k=4)
    assert [h["memoryId"] for h in out] == ["c", "d", "b"]  # a: 0.34, b: 0.38
    assert out[0]["score"] == pytest.approx(0.7 * 0.95 + 0.3 * 0.7)
    assert out[2]["score"] == pytest.approx(0.7 * 0.2 + 0.3 * 0.8)
    assert [h["score"] for h in hits] == [0.9, 0.8, 0.7, 0.6]  # the input is untouched
    assert judge.states[0] == {"query": "query",
                               "memory": {"summary": "a", "content": "content of a"}}


def test_rerank_judges_max_of_limit_and_top_k_and_keeps_failures_at_their_score():
    hits = [hit(str(i), 1 - i / 100) for i in range(30)]
    judge = Judge({str(i): 0.0 for i in range(1, 30)})  # "0" fails: keeps 1.0
    out = rerank(hits, "q", limit=2, judge=judge, top_k=15)
    assert len(judge.states) == 15
    assert [h["memoryId"] for h in out] == ["0", "1"]
    assert out[0]["score"] == 1.0
    judge = Judge({str(i): 0.5 for i in range(30)})
    assert len(rerank(hits, "q", limit=20, judge=judge, top_k=15)) == 20
    assert len(judge.states) == 20


def test_rerank_cuts_content_and_updates_explain():
    long = hit("a", 0.5, explain={"relevance": 1, "total": 0.5})
    long["content"] = "x" * 5000
    judge = Judge({"a": 1.0})
    (out,) = rerank([long], "q", limit=1, judge=judge, top_k=15)
    assert len(judge.states[0]["memory"]["content"]) == 2000
    assert out["explain"] == {"relevance": 1, "total": pytest.approx(0.85), "rerank": 1.0}


# -- through recall ------------------------------------------------------------------------------


def same(hits, other):
    """The same hits in the same order with the same scores (recency moves by the clock)."""
    return ([h["memoryId"] for h in hits] == [h["memoryId"] for h in other]
            and all(abs(h["score"] - o["score"]) < 1e-6 for h, o in zip(hits, other)))


@pytest.fixture
def store(project, cli_run, monkeypatch):
    """A project with four deploy memories and a fake TypeSafe judging them: the memory about
    Friday freezes answers the query (p 0.97), the others do not (0.05); write-path questions
    get low importance and sensitivity."""
    def run(*args):
        result = cli_run(*args, "--json")
        assert result.exit_code == 0, result.stderr
        return json.loads(result.stdout)

    ids = {}
    for key, text in [("tuesday", "Deploy the payments service on Tuesday mornings."),
                      ("canary", "Deploy canaries first, then the full deploy fleet."),
                      ("friday", "No deploy on Friday: the freeze starts at noon."),
                      ("rollback", "A deploy rollback uses the previous image tag.")]:
        ids[key] = run("remember", "--type", "semantic", "--content", text)["memoryId"]

    def verdict(request, qid):
        if qid == "answers":
            return 0.97 if "Friday" in request["state"]["memory"]["content"] else 0.05
        return {"importance": 2, "sensitive": 0.01}[qid]
    server = FakeTypesafeServer(answers_from(verdict)).start()
    monkeypatch.setenv("TYPESAFE_API_KEY", "ts")
    monkeypatch.setenv("YNM_TYPESAFE_BASE_URL", server.url)
    yield run, ids, server
    server.stop()


def test_recall_reranks_with_a_calibrated_judge(store):
    run, ids, server = store
    plain = run("recall", "deploy", "--no-rerank")
    assert server.seen == []
    assert plain[0]["memoryId"] != ids["friday"]
    hits = run("recall", "deploy", "--explain")
    assert hits[0]["memoryId"] == ids["friday"]
    assert hits[0]["explain"]["rerank"] == 0.97
    asked = [b for b in server.seen if "answers" in b["questions"]]
    assert len(asked) == 4 and {b["state"]["query"] for b in asked} == {"deploy"}
    by_id = {h["memoryId"]: h for h in plain}
    friday = by_id[ids["friday"]]
    assert hits[0]["score"] == pytest.approx(0.7 * 0.97 + 0.3 * friday["score"])
    # nothing is stored: the store still recalls the same without the judge
    assert same(run("recall", "deploy", "--no-rerank"), plain)


def test_recall_without_text_or_with_rerank_off_asks_nothing(store, ynm_home):
    run, _, server = store
    run("recall", "--type", "semantic")
    ynm_home.mkdir(exist_ok=True)
    (ynm_home / "config.json").write_text(json.dumps({"dream": {"rerank": False}}))
    run("recall", "deploy")
    (ynm_home / "config.json").write_text(json.dumps({"dream": {"judge": "heuristic"}}))
    run("recall", "deploy")
    assert server.seen == []


def test_recall_goes_on_when_the_judge_fails(store, cli_run):
    run, _, server = store
    plain = run("recall", "deploy", "--no-rerank")
    server.verdict = lambda req: (429, {"error": "slow down"})
    result = cli_run("recall", "deploy", "--json")
    assert result.exit_code == 0
    assert same(json.loads(result.stdout), plain)
    assert len(server.seen) == 4
    assert "warning: recall was not reranked for 4 of 4 hits (ModelUnavailable: " \
        in result.stderr and "HTTP 429" in result.stderr


def test_failed_judgments_are_reported():
    problems: list[str] = []
    hits = [hit("a", 0.9), hit("b", 0.8)]
    out = rerank(hits, "q", limit=2, judge=Judge({"b": 1.0}), top_k=15, problems=problems)
    assert [h["memoryId"] for h in out] == ["b", "a"] and out[1]["score"] == 0.9
    assert problems == ["recall was not reranked for 1 of 2 hits (ModelUnavailable: busy)"]
