"""The write-path judge inside ``remember`` (reference/algorithms.md §2.11, cli.md §4.20):
a fake TypeSafe ``/v1/systemone`` on 127.0.0.1 judges every write when its key is set."""

from __future__ import annotations

import json

import pytest

from tests.dream.fakes import FakeTypesafeServer, answers_from
from ynm.dream.budget import reset_process_budget
from ynm.dream.seams import Answer, Judgment, Usage
from ynm.dream.write_judge import WRITE_QUESTIONS, judged_fields
from ynm.errors import Refused


@pytest.fixture(autouse=True)
def _budget():
    reset_process_budget()
    yield
    reset_process_budget()


@pytest.fixture
def run_json(cli_run):
    """``run_json(*args)``: a command with ``--json``, exit 0 checked, stdout parsed."""
    def run(*args: str):
        result = cli_run(*args, "--json")
        assert result.exit_code == 0, result.stderr
        return json.loads(result.stdout)
    return run


@pytest.fixture
def typesafe(monkeypatch: pytest.MonkeyPatch):
    """``typesafe(values)``: a fake TypeSafe answering ``values`` (question id -> value), set
    up as the configured judge (key and base URL in the environment)."""
    started = []

    def start(values):
        server = FakeTypesafeServer(answers_from(values)).start()
        started.append(server)
        monkeypatch.setenv("TYPESAFE_API_KEY", "ts-test")
        monkeypatch.setenv("YNM_TYPESAFE_BASE_URL", server.url)
        return server
    yield start
    for s in started:
        s.stop()


def show(run_json, memory_id):
    return run_json("show", memory_id)


def test_judgment_is_stored_and_importance_taken_from_the_score(project, run_json, typesafe):
    server = typesafe({"importance": 3, "sensitive": 0.02})
    out = run_json("remember", "--type", "semantic", "--content", "Deploys go out on Tuesdays.",
                   "--data", '{"ticket": "OPS-1"}')
    (body,) = server.seen
    assert body["state"] == {"memory": {"type": "semantic",
                                        "content": "Deploys go out on Tuesdays.",
                                        "summary": "Deploys go out on Tuesdays."}}
    assert set(body["questions"]) == {"importance", "sensitive"}
    memory = show(run_json, out["memoryId"])
    assert memory["importance"] == 0.75  # score 3 of 0..4, confidence 0.9, caller left 0.5
    data = memory["current"]["data"]
    assert data["ticket"] == "OPS-1"
    (judgment,) = data["judgments"]
    assert judgment["pass"] == "write" and judgment["model"] == "jev-fake"
    assert judgment["calibrated"] is True and judgment["at"].endswith("Z")
    assert judgment["questions"] == {qid: q.model_dump(exclude_none=True)
                                     for qid, q in WRITE_QUESTIONS.items()}
    assert judgment["answers"]["importance"]["score"] == 3
    assert judgment["answers"]["sensitive"] == {"type": "noul", "noul": 0.02}
    assert judgment["usage"] == {"inputTokens": 100, "outputTokens": 0}
    assert "band" not in judgment


def test_explicit_importance_is_kept(project, run_json, typesafe):
    typesafe({"importance": 4, "sensitive": 0.1})
    out = run_json("remember", "--type", "semantic", "--content", "x y z",
                   "--importance", "0.8")
    assert show(run_json, out["memoryId"])["importance"] == 0.8


@pytest.mark.parametrize("level", ["personal", "distributed"])
def test_sensitive_write_is_refused_and_nothing_stored(project, cli_run, run_json, typesafe,
                                                       git, level):
    server = typesafe({"importance": 2, "sensitive": 0.93})
    refs = git(project, "for-each-ref", "refs/notes")
    result = cli_run("remember", "--type", "semantic", "--level", level,
                     "--content", "Dana's home address is 12 Elm Street.")
    assert result.exit_code == 2
    assert "refused: content matches 1 redaction pattern: judge:sensitive" in result.stderr
    assert len(server.seen) == 1
    assert run_json("list") == []
    assert git(project, "for-each-ref", "refs/notes") == refs


def test_a_secret_the_gate_refuses_never_reaches_the_judge(project, cli_run, typesafe):
    server = typesafe({"importance": 2, "sensitive": 0.0})
    result = cli_run("remember", "--type", "semantic", "--level", "distributed",
                     "--content", "token ghp_" + "a1B2" * 9)
    assert result.exit_code == 2 and "secret detector" in result.stderr
    assert server.seen == []


def test_a_failing_judge_lets_the_write_through_with_a_warning(project, cli_run, run_json,
                                                               monkeypatch):
    from tests.dream.fakes import FakeTypesafeServer

    with FakeTypesafeServer(lambda req: (529, {"error": "overloaded"})) as server:
        monkeypatch.setenv("TYPESAFE_API_KEY", "k")
        monkeypatch.setenv("YNM_TYPESAFE_BASE_URL", server.url)
        result = cli_run("remember", "--type", "semantic", "--content", "kept anyway")
    assert result.exit_code == 0, result.stderr
    assert "write-path judge did not answer" in result.stderr and "HTTP 529" in result.stderr
    (hit,) = run_json("list")
    assert "data" not in hit and hit["importance"] == 0.5


def test_no_key_or_judge_on_write_off_asks_nothing(project, run_json, typesafe, monkeypatch,
                                                   ynm_home):
    server = typesafe({"importance": 4, "sensitive": 0.99})
    monkeypatch.delenv("TYPESAFE_API_KEY")
    run_json("remember", "--type", "semantic", "--content", "no key here")
    monkeypatch.setenv("TYPESAFE_API_KEY", "k")
    ynm_home.mkdir(exist_ok=True)
    (ynm_home / "config.json").write_text(json.dumps({"dream": {"judgeOnWrite": False}}))
    run_json("remember", "--type", "semantic", "--content", "judging is off")
    (ynm_home / "config.json").write_text(json.dumps({"dream": {"judge": "heuristic"}}))
    run_json("remember", "--type", "semantic", "--content", "an uncalibrated judge")
    assert server.seen == []
    assert len(run_json("list")) == 3


def judgment(importance=None, confidence=0.9, sensitive=0.1) -> Judgment:
    answers = {"sensitive": Answer(type="noul", noul=sensitive)}
    if importance is not None:
        answers["importance"] = Answer(type="score", score=importance, confidence=confidence)
    return Judgment(answers=answers, model="m", calibrated=True, usage=Usage(input_tokens=5))


@pytest.mark.parametrize("fields, j, importance", [
    ({"importance": 0.5}, judgment(4), 1.0),
    ({"importance": 0.5}, judgment(1, confidence=0.49), 0.5),  # not confident enough
    ({"importance": 0.5}, judgment(None), 0.5),
    ({"importance": 0.3}, judgment(0), 0.3),
    ({"importance": 0.5}, judgment(0), 0.0),
])
def test_importance_rule(fields, j, importance):
    out = judged_fields({"type": "semantic", **fields}, j, "2026-01-01T00:00:00.000Z")
    assert out["importance"] == importance


def test_judgments_merge_with_caller_data():
    j = judgment(2)
    prior = {"pass": "import"}
    out = judged_fields({"importance": 0.5, "data": {"judgments": [prior], "k": 1}}, j, "T")
    assert out["data"]["k"] == 1 and out["data"]["judgments"][0] == prior
    assert out["data"]["judgments"][1]["pass"] == "write"
    out = judged_fields({"importance": 0.5, "data": {"judgments": "mine"}}, j, "T")
    assert out["data"] == {"judgments": "mine"}  # a caller's non-list is kept as given
    with pytest.raises(Refused) as caught:
        judged_fields({"importance": 0.5}, judgment(2, sensitive=0.9), "T")
    assert caught.value.exit_code == 2 and caught.value.sample == "p=0.90"
