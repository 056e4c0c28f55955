"""The model-backed judges (reference/algorithms.md §4.17): typesafe against a fake
``/v1/systemone`` on 127.0.0.1, writer-emulated over a writer talking to a fake chat server,
and our similarity judge."""

from __future__ import annotations

import json
import math

import pytest

from tests.dream.fakes import (
    FakeChatServer,
    FakeTypesafeServer,
    answers_from,
    chat_reply,
    typesafe_reply,
)
from ynm.dream.budget import TokenBudget
from ynm.dream.judges import (
    SIMILARITY_REVIEW,
    MissingAnswer,
    SimilarityJudge,
    StateTooLarge,
    TypesafeJudge,
    WriterEmulatedJudge,
    claim_mismatch,
    numbers_of,
    same_fact_probability,
)
from ynm.dream.seams import Answer, Judge, JudgeLimits, Judgment, ModelUnavailable, Question, Usage
from ynm.dream.writers import ModelRequestError, OpenAICompatibleWriter
from ynm.errors import ConfigError

PAIR = {
    "sameFact": Question(type="noul", instructions="Same fact?",
                         criteria={"true": "same", "false": "different"}),
    "relation": Question(type="score", instructions="How related?",
                         criteria=["different things", "same subject, different claims",
                                   "same thing"]),
    "contradicts": Question(type="noul", instructions="Incompatible claims?"),
}
PROMOTE = {
    "usefulLater": Question(type="noul", instructions="Durable beyond the session?"),
    "kind": Question(type="choice", instructions="Which kind?",
                     criteria={"semantic": "a fact", "episodic": "an event",
                               "procedural": "how to", "reference": "where to find"}),
}
STATE = {"a": {"summary": "deploys on Tuesday", "content": "We deploy on Tuesdays."},
         "b": {"summary": "deploys on Tuesdays", "content": "Deploys happen every Tuesday."}}


def typesafe(server, **kw) -> TypesafeJudge:
    kw.setdefault("budget", TokenBudget(10**9))
    return TypesafeJudge("ts-key", base_url=server.url, **kw)


# -- typesafe ------------------------------------------------------------------------------------


def test_typesafe_answers_from_the_service():
    verdict = answers_from({"sameFact": 0.93, "relation": 2, "contradicts": 0.04})
    with FakeTypesafeServer(verdict) as server:
        j = typesafe(server).judge(STATE, PAIR)
    assert j.calibrated is True and j.model == "jev-fake"
    assert j.answers["sameFact"].noul == 0.93
    assert j.answers["relation"].score == 2 and j.answers["relation"].legend == "same thing"
    assert j.answers["contradicts"].noul == 0.04
    assert j.usage == Usage(input_tokens=100, output_tokens=0)
    (body,) = server.seen
    assert server.paths == ["/v1/systemone"]
    assert body == {"state": STATE, "model": "jev-latest",
                    "questions": {qid: q.model_dump(exclude_none=True)
                                  for qid, q in PAIR.items()}}
    assert "criteria" not in body["questions"]["contradicts"]
    assert server.headers[0]["authorization"] == "Bearer ts-key"


def test_typesafe_choice_and_configured_model():
    with FakeTypesafeServer(answers_from({"usefulLater": 0.8, "kind": "procedural"})) as server:
        j = typesafe(server, model="jev-9").judge({"memory": "x"}, PROMOTE)
    assert server.seen[0]["model"] == "jev-9"
    kind = j.answers["kind"]
    assert kind.choice == "procedural" and kind.confidence == 0.9
    assert kind.probabilities["procedural"] == 0.9


def test_typesafe_fractional_score_takes_the_likeliest_level():
    reply = typesafe_reply({"relation": {"type": "score", "score": 1.4,
                                         "probabilities": [0.1, 0.6, 0.3], "confidence": 0.5}})
    with FakeTypesafeServer(lambda req: reply) as server:
        j = typesafe(server).judge(STATE, {"relation": PAIR["relation"]})
    assert j.answers["relation"].score == 1


def test_typesafe_missing_answer_is_an_error():
    with FakeTypesafeServer(answers_from({"sameFact": 0.9, "relation": 2})) as server:
        with pytest.raises(MissingAnswer, match="no answer for 'contradicts'"):
            typesafe(server).judge(STATE, PAIR)
    wrong = typesafe_reply({"sameFact": {"type": "noul"}})
    with FakeTypesafeServer(lambda req: wrong) as server:
        with pytest.raises(MissingAnswer, match="'sameFact' has no noul"):
            typesafe(server).judge(STATE, {"sameFact": PAIR["sameFact"]})
    with FakeTypesafeServer(lambda req: {"model": "m"}) as server:
        with pytest.raises(MissingAnswer, match="no answers"):
            typesafe(server).judge(STATE, PAIR)


@pytest.mark.parametrize("status", [429, 529, 502])
def test_typesafe_busy_is_unavailable(status):
    with FakeTypesafeServer(lambda req: (status, {"error": "busy"})) as server:
        with pytest.raises(ModelUnavailable, match=f"HTTP {status}"):
            typesafe(server).judge(STATE, PAIR)


def test_typesafe_bad_key_is_a_request_error_and_network_down_unavailable():
    with FakeTypesafeServer(lambda req: (401, {"error": "bad key"})) as server:
        with pytest.raises(ModelRequestError, match="HTTP 401"):
            typesafe(server).judge(STATE, PAIR)
        url = server.url
    with pytest.raises(ModelUnavailable, match="cannot reach"):
        TypesafeJudge("k", base_url=url, budget=TokenBudget(10**6)).judge(STATE, PAIR)


def test_typesafe_refuses_a_state_over_its_limit_without_a_call():
    big = {"content": "x" * (32_000 * 4)}  # ~32,003 tokens with the JSON around it
    with FakeTypesafeServer(answers_from({"sameFact": 0.5})) as server:
        j = typesafe(server)
        with pytest.raises(StateTooLarge, match="over the 32000"):
            j.judge(big, {"sameFact": PAIR["sameFact"]})
        j.judge({"content": "x" * (31_990 * 4)}, {"sameFact": PAIR["sameFact"]})
    assert len(server.seen) == 1
    assert j.limits() == JudgeLimits(state_tokens=32000, request_tokens=64000, max_choices=255)


def test_typesafe_is_metered():
    budget = TokenBudget(150)
    with FakeTypesafeServer(answers_from({"sameFact": 0.5, "relation": 1, "contradicts": 0.1})
                            ) as server:
        j = typesafe(server, budget=budget)
        j.judge(STATE, PAIR)  # estimate ~110 tokens: fits; the service reports 100
        assert budget.spent == 100
        with pytest.raises(ModelUnavailable, match="token budget spent"):
            j.judge(STATE, PAIR)
    assert len(server.seen) == 1


def test_typesafe_needs_a_key():
    with pytest.raises(ConfigError, match="needs an API key: set MY_TS_KEY"):
        TypesafeJudge(None, key_env="MY_TS_KEY")
    assert TypesafeJudge("k").base_url == "https://api.typesafe.ai"


# -- writer-emulated -----------------------------------------------------------------------------


def emulating(answer_for):
    """A chat verdict answering by the question id in the schema name (``<id>_answer``)."""
    def verdict(req):
        qid = req["response_format"]["json_schema"]["name"].removesuffix("_answer")
        return chat_reply(json.dumps(answer_for(qid)))
    return verdict


def emulated(server) -> WriterEmulatedJudge:
    return WriterEmulatedJudge(OpenAICompatibleWriter(server.url + "/v1", "m",
                                                      budget=TokenBudget(10**6)))


def test_writer_emulated_answers_one_question_per_call():
    values = {"usefulLater": {"noul": 0.8}, "kind": {"choice": "procedural", "confidence": 0.7}}
    with FakeChatServer(emulating(values.get)) as server:
        j = emulated(server).judge({"memory": "m"}, PROMOTE)
    assert len(server.seen) == 2
    assert j.calibrated is False and j.model == "fake-chat"
    assert j.answers["usefulLater"] == Answer(type="noul", noul=0.8)
    kind = j.answers["kind"]
    assert kind.choice == "procedural" and kind.confidence == 0.7
    assert kind.probabilities == pytest.approx(
        {"semantic": 0.1, "episodic": 0.1, "procedural": 0.7, "reference": 0.1})
    assert j.usage == Usage(input_tokens=20, output_tokens=10)
    assert "Question (kind): Which kind?" in server.prompts[1]
    assert "- procedural: how to" in server.prompts[1]


def test_writer_emulated_defaults():
    values = {"sameFact": {}, "relation": {"score": 1}, "contradicts": {"noul": 0.2}}
    with FakeChatServer(emulating(values.get)) as server:
        j = emulated(server).judge(STATE, PAIR)
    assert j.answers["sameFact"].noul == 0.5  # missing noul
    rel = j.answers["relation"]
    assert rel.score == 1 and rel.confidence == 0.5
    assert rel.legend == "same subject, different claims"
    assert rel.probabilities == pytest.approx([0.25, 0.5, 0.25])


def test_writer_emulated_retries_an_option_outside_the_choices():
    seen = []

    def answer(qid):
        seen.append(qid)
        return {"choice": "poem"} if len(seen) == 1 else {"choice": "semantic"}
    with FakeChatServer(emulating(answer)) as server:
        j = emulated(server).judge({"m": 1}, {"kind": PROMOTE["kind"]})
    assert j.answers["kind"].choice == "semantic"
    assert "choice: Input should be 'semantic', 'episodic', 'procedural' or 'reference'" \
        in server.prompts[1]


def test_writer_emulated_name_limits_and_unavailable_writer():
    with FakeChatServer(lambda req: (429, {})) as server:
        j = emulated(server)
        assert j.name == "writer-emulated:openai-compatible"
        assert j.limits() == JudgeLimits(state_tokens=60000, request_tokens=100000,
                                         max_choices=50)
        with pytest.raises(ModelUnavailable):
            j.judge(STATE, PAIR)


# -- similarity ----------------------------------------------------------------------------------


class StandIn:
    """A stand-in for the heuristic judge: 0.5 for a noul, the middle level, the first key."""

    name = "heuristic"
    calibrated = False

    def __init__(self):
        self.asked: list[set[str]] = []

    def limits(self) -> JudgeLimits:
        return JudgeLimits(state_tokens=1, request_tokens=2, max_choices=3)

    def judge(self, state, questions):
        self.asked.append(set(questions))
        out = {}
        for qid, q in questions.items():
            if q.type == "noul":
                out[qid] = Answer(type="noul", noul=0.5)
            elif q.type == "choice":
                out[qid] = Answer(type="choice", choice=next(iter(q.criteria)), confidence=0)
            else:
                out[qid] = Answer(type="score", score=len(q.criteria) // 2, confidence=0)
        return Judgment(answers=out, model="heuristic", calibrated=False,
                        usage=Usage(input_tokens=3))


def unit(deg: float) -> list[float]:
    return [math.cos(math.radians(deg)), math.sin(math.radians(deg)), 0.0]


@pytest.mark.parametrize("deg, same_fact, level", [
    (0, 0.99, 2),     # cosine 1: the same fact
    (60, 0.38, 1),    # cosine 0.5: more likely the same subject with another claim
    (90, 0.0, 0),     # cosine 0: different things
])
def test_similarity_answers_pair_questions_from_the_cosine(deg, same_fact, level):
    fallback = StandIn()
    j = SimilarityJudge(lambda state: (unit(0), unit(deg)), fallback)
    out = j.judge(STATE, PAIR)
    assert out.answers["sameFact"].noul == pytest.approx(same_fact, abs=0.01)
    assert out.answers["relation"].score == level
    assert sum(out.answers["relation"].probabilities) == pytest.approx(1.0)
    assert out.answers["contradicts"].noul == 0.5  # from the fallback
    assert fallback.asked == [{"contradicts"}]
    assert out.calibrated is False and out.model == "similarity+heuristic"
    assert list(out.answers) == list(PAIR)
    assert isinstance(j, Judge)


def test_similarity_calibration_is_monotone_and_centred():
    ps = [same_fact_probability(c / 20) for c in range(-20, 21)]
    assert ps == sorted(ps) and ps[0] < 0.01 and ps[-1] > 0.99
    assert same_fact_probability(0.9) > 0.99
    # the reference's review threshold (0.6) is crossed at a centred cosine of 0.54, the
    # judge's own for dedupe (0.28) at 0.48
    assert same_fact_probability(0.53) < 0.6 <= same_fact_probability(0.55)
    assert same_fact_probability(0.47) < SIMILARITY_REVIEW["dedupe"] \
        <= same_fact_probability(0.49)
    assert same_fact_probability(0.45) == pytest.approx(0.18, abs=0.01)
    # two vectors near a shared centre are not similar once it is taken away
    center = [1.0, 0.0, 0.0]
    a, b = [1.0, 0.1, 0.0], [1.0, 0.0, 0.1]
    assert SimilarityJudge(lambda s: (a, b), StandIn()).cosine(a, b) > 0.99
    assert SimilarityJudge(lambda s: (a, b), StandIn(), center=center).cosine(a, b) \
        == pytest.approx(0.0, abs=1e-6)


def test_similarity_has_its_own_review_threshold_for_dedupe_only():
    judge = SimilarityJudge(lambda state: (unit(0), unit(60)), StandIn())
    answered = judge.judge(STATE, PAIR)
    assert judge.review_threshold("dedupe", answered) == SIMILARITY_REVIEW["dedupe"] == 0.28
    for other in ("contradict", "promote", "reflect"):
        assert judge.review_threshold(other, answered) is None
    # an answer of the fallback (no vectors) is banded as the fallback's
    fell_back = SimilarityJudge(lambda state: None, StandIn()).judge(STATE, PAIR)
    assert judge.review_threshold("dedupe", fell_back) is None


def test_similarity_without_vectors_is_the_fallback():
    fallback = StandIn()
    j = SimilarityJudge(lambda state: None, fallback)
    out = j.judge(STATE, PAIR)
    assert out.answers["sameFact"].noul == 0.5 and out.model == "heuristic"
    assert fallback.asked == [set(PAIR)]
    # questions that are no pair question never ask for vectors
    asked = []
    SimilarityJudge(lambda s: asked.append(s), fallback).judge({"memory": "m"}, PROMOTE)
    assert asked == []
    assert j.limits() == fallback.limits()


def test_similarity_from_embedder_embeds_each_text_once():
    np = pytest.importorskip("numpy")

    class Embedder:
        name = "fake-embedder"

        def __init__(self):
            self.calls: list[list[str]] = []

        def embed(self, texts):
            self.calls.append(list(texts))
            return np.array([unit(0) if "Tuesday" in t else unit(90) for t in texts],
                            dtype=np.float32)

    e = Embedder()
    j = SimilarityJudge.from_embedder(e, StandIn())
    assert j.judge(STATE, {"sameFact": PAIR["sameFact"]}).answers["sameFact"].noul > 0.99
    j.judge(STATE, {"sameFact": PAIR["sameFact"]})
    assert e.calls == [["deploys on Tuesday\nWe deploy on Tuesdays.",
                        "deploys on Tuesdays\nDeploys happen every Tuesday."]]
    other = {"a": STATE["a"], "b": {"summary": "", "content": "Lunch is at noon."}}
    out = j.judge(other, {"sameFact": PAIR["sameFact"]})
    assert out.answers["sameFact"].noul < 0.01 and out.model == "similarity:fake-embedder"
    assert e.calls[-1] == ["Lunch is at noon."]


def brief(content: str, subject: str | None = None) -> dict:
    return {"summary": "", "content": content, "subject": subject}


@pytest.mark.parametrize("a, b, why", [
    # a changed number, a date, a time of day
    ("The ledger client timeout is 30 seconds.", "Requests to ledger give up after 90s.",
     ["numbers"]),
    ("The billing deploy on 2026-09-07 ran long.", "The billing deploy on 2026-09-09 ran long.",
     ["numbers", "swap"]),
    # one side negated (any case, curly apostrophe)
    ("Media deploys to the red-kite cluster.",
     "Media doesn’t deploy to the red-kite cluster any more; its pods were moved.",
     ["negation"]),
    ("Media deploys to the red-kite cluster.", "Media DOESN'T deploy to the red-kite cluster.",
     ["negation", "swap"]),
    # names on both sides that the other lacks
    ("The analytics backend persists everything to Cassandra.",
     "Analytics stores its data in DynamoDB.", ["names"]),
    # one frame, another value in it (no number, no name)
    ("The magpie scheduler reads its settings from config/magpie.toml at startup.",
     "The magpie cli reads its settings from config/magpie.toml at startup.", ["swap"]),
    ("Step one of every media release: update the changelog.",
     "Step one of every media release: get two approvals.", ["swap"]),
    ("Records written by identity end up in Cassandra. Seen in the incident channel.",
     "Records written by identity end up in MongoDB.", ["names", "swap"]),
])
def test_claim_mismatch_finds_what_a_cosine_cannot_see(a, b, why):
    assert claim_mismatch(brief(a), brief(b)) == why
    assert claim_mismatch(brief(b), brief(a)) == why


def test_claim_mismatch_on_different_subjects():
    same = "Omar owns the imports service."
    assert claim_mismatch(brief(same, "service:imports"), brief(same, "service:billing")) \
        == ["subject"]
    assert claim_mismatch(brief(same, "service:imports"), brief(same, " Service:Imports")) == []
    assert claim_mismatch(brief(same, "service:imports"), brief(same)) == []


@pytest.mark.parametrize("a, b", [
    ("Omar owns the imports service. Noted during the retro.",
     "The imports service is maintained by Omar. Double-checked against the docs."),
    ("The staging database is reset every night at 02:00 UTC.",
     "Every night at 2am UTC the staging DB gets wiped and reseeded."),
    ("The CSV export is limited to 50,000 rows.", "Exports to CSV stop at 50k rows."),
    # more detail on one side is a fuller restatement, not another claim
    ("Search listens on port 8081.", "In dev, search comes up on :8081 behind the proxy on 443."),
    ("Use pnpm, not npm, in the web repository.", "In the web repository we use pnpm; never npm."),
    ("Questions about payouts should go to Priya, its owner.",
     "Priya is the code owner for everything under payouts/."),
])
def test_claim_mismatch_lets_restatements_through(a, b):
    assert claim_mismatch(brief(a), brief(b)) == []
    assert claim_mismatch(brief(b), brief(a)) == []


@pytest.mark.parametrize("text, numbers", [
    ("after 45s, then 50,000 rows or 50k", {45.0, 50000.0}),
    ("on 2026-09-07 at 02:00 and 14:30", {"2026-9-7", 2.0, "14-30"}),
    ("Python 3.12 on port :8081", {3.12, 8081.0}),
    ("S3 in eu-west-1, MySQL 8", {1.0, 8.0}),
    ("no numbers here", set()),
])
def test_numbers_of_normalises(text, numbers):
    assert numbers_of(text) == numbers


@pytest.mark.parametrize("a, b", [
    ("The ledger client timeout is 30 seconds.", "The ledger client timeout is 90 seconds."),
    ("Our storage service runs in the copper-wren cluster.",
     "Our storage service runs in the silver-crane cluster."),
    ("Media deploys to the red-kite cluster.", "Media no longer deploys to the red-kite cluster."),
])
def test_similarity_caps_same_fact_when_the_claims_differ(a, b):
    fallback = StandIn()
    state = {"a": brief(a), "b": brief(b)}
    out = SimilarityJudge(lambda s: (unit(0), unit(0)), fallback).judge(state, PAIR)
    assert out.answers["sameFact"].noul == pytest.approx(0.1)  # cosine 1, claims differ
    assert out.answers["relation"].score == 1  # same subject, different claims
    assert out.answers["relation"].probabilities[2] == pytest.approx(0.1)
    # the same vectors on a restatement: the same fact
    same = {"a": brief(a), "b": brief(a.replace("The ", "Our ", 1) if a.startswith("The ")
                                       else "Indeed: " + a)}
    out = SimilarityJudge(lambda s: (unit(0), unit(0)), fallback).judge(same, PAIR)
    assert out.answers["sameFact"].noul > 0.99 and out.answers["relation"].score == 2
