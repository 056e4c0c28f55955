"""The consolidation benchmark's labelled store, fake model and scoring
(benchmarks/consolidation.py; reference/algorithms.md §4, reference/benchmarks.md §3.2)."""

from __future__ import annotations

import json
import re
import sys
import urllib.request
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # benchmarks/ is not an installed package
    sys.path.insert(0, str(ROOT))

from benchmarks.consolidation import (
    KIND,
    NOW_MS,
    Fact,
    GroundTruthModel,
    Outcome,
    at_recall,
    dedupe_curve,
    fake_openai,
    generate_set,
    label_pairs,
    precision_recall,
    read_outcome,
    run_judge,
)
from ynm.model.durations import duration_ms
from ynm.model.ranker import iso_to_ms

# the heuristic judge's negation words (reference/algorithms.md §4.17)
NEGATION = re.compile(r"\b(not|never|no longer|isn't|aren't|doesn't|don't|won't|cannot|can't|"
                      r"isnt|dont)\b")


@pytest.fixture(scope="module")
def labelled():
    return generate_set()


def test_the_same_seed_gives_the_same_bytes_and_another_seed_another_store(labelled):
    assert generate_set().jsonl() == labelled.jsonl()
    other = generate_set(seed=8)
    assert other.jsonl() != labelled.jsonl()
    # only the number of episodes per subject (3 to 5) depends on the seed
    roles = [Counter(x.roles.values()) for x in (other, labelled)]
    for counts in roles:
        del counts["episode"]
    assert roles[0] == roles[1]


def test_default_store_size_and_ground_truth_counts(labelled):
    roles = Counter(labelled.roles.values())
    assert roles == {"fact": 96 + 30 + 14 + 12 + 10, "episode": sum(
        len(ids) for ids in labelled.episodes.values()), "working": 20, "distractor": 110}
    assert len(labelled.records) >= 300
    assert len({r.memory_id for r in labelled.records}) == len(labelled.records)
    assert len({r.content for r in labelled.records}) == len(labelled.records)
    # every restatement makes at least one duplicate pair; derived labels may add more
    assert len(labelled.duplicates) >= 30
    sorts = Counter(labelled.contradictions.values())
    assert sorts["negation"] >= 12 and sorts["value"] >= 14
    assert Counter(labelled.promote.values()) == {True: 12, False: 8}
    sizes = sorted(len(ids) for ids in labelled.episodes.values())
    assert sizes.count(2) == 4 and len(labelled.reflect_subjects) == 8
    assert all(3 <= n <= 5 for n in sizes if n != 2)
    assert not labelled.duplicates & set(labelled.contradictions)


def test_duplicates_are_paraphrases_of_one_claim(labelled):
    by_id = {r.memory_id: r for r in labelled.records}
    for pair in labelled.duplicates:
        a, b = (by_id[i] for i in pair)
        fa, fb = (labelled.facts[i] for i in pair)
        assert (fa.kind, fa.service, fa.value, fa.positive) == (
            fb.kind, fb.service, fb.value, fb.positive)
        assert a.subject == b.subject == f"service:{fa.service}"
        assert a.content.split(". ")[0] != b.content.split(". ")[0], "copied, not paraphrased"


def test_contradictions_share_a_subject_with_and_without_negation_words(labelled):
    by_id = {r.memory_id: r for r in labelled.records}
    for pair, sort in labelled.contradictions.items():
        a, b = (by_id[i] for i in pair)
        fa, fb = (labelled.facts[i] for i in pair)
        assert a.subject == b.subject and fa.kind == fb.kind
        negated = [bool(NEGATION.search(r.content)) for r in (a, b)]
        if sort == "negation":
            assert fa.value == fb.value and fa.positive != fb.positive
            assert negated.count(True) == 1
        else:
            assert fa.value != fb.value and fa.positive and fb.positive
            assert KIND[fa.kind].exclusive and negated == [False, False]


def test_working_memories_are_live_session_memories(labelled):
    by_id = {r.memory_id: r for r in labelled.records}
    for memory_id, should in labelled.promote.items():
        r = by_id[memory_id]
        assert r.type == "working" and r.namespace.startswith("session/")
        assert iso_to_ms(r.recorded_at) + duration_ms(r.ttl) > NOW_MS  # not expired yet
        if "promote" in r.tags:
            assert should


def test_episodes_are_episodic_memories_on_distinct_dates(labelled):
    by_id = {r.memory_id: r for r in labelled.records}
    for subject, ids in labelled.episodes.items():
        days = [by_id[i].recorded_at[:10] for i in ids]
        assert len(set(days)) == len(days) and days == sorted(days)
        assert {by_id[i].type for i in ids} == {"episodic"}
        assert {by_id[i].subject for i in ids} == {subject}


def test_labels_come_from_claim_identity():
    facts = {
        "a": Fact("timeout", "auth", "30", True), "b": Fact("timeout", "auth", "30", True),
        "c": Fact("timeout", "auth", "90", True), "d": Fact("timeout", "auth", "30", False),
        "e": Fact("timeout", "auth", "90", False), "f": Fact("release", "auth", "x", True),
        "g": Fact("release", "auth", "y", True), "h": Fact("timeout", "search", "90", True),
    }
    duplicates, contradictions = label_pairs(facts)
    assert duplicates == {frozenset("ab")}
    assert contradictions == {
        frozenset("ac"): "value", frozenset("bc"): "value",  # exclusive kind, two values
        frozenset("ad"): "negation", frozenset("bd"): "negation", frozenset("ce"): "negation"}
    # compatible: 30 negated beside 90 (d, c), two release rules (f, g), another service (h)


def test_outcome_is_read_from_records_and_folded_state():
    records = [
        {"memoryId": "a", "op": "annotate", "needsReview": True, "data": {"pair": ["a", "b"]}},
        {"memoryId": "b", "op": "annotate", "needsReview": True, "data": {"pair": ["a", "b"]}},
        {"memoryId": "c", "op": "tombstone", "reason": "duplicate of d"},
        {"memoryId": "f", "op": "annotate", "data": {"pair": ["e", "f"]},
         "links": [{"rel": "contradicts", "to": "e"}]},
        {"memoryId": "e", "op": "annotate", "links": [{"rel": "contradicts", "to": "f"}]},
        {"memoryId": "w1", "op": "tombstone", "reason": "promoted to n1"},
    ]
    states = [
        {"memoryId": "w1", "type": "working", "tombstoned": True},
        {"memoryId": "w2", "type": "working", "needsReview": True},
        {"memoryId": "w3", "type": "working"},
        {"memoryId": "w4", "type": "working", "tombstoned": True},
        {"memoryId": "n4", "type": "semantic", "links": [{"rel": "derives-from", "to": "w4"}]},
        {"memoryId": "r1", "type": "reflective", "subject": "auth-deploy-log"},
        {"memoryId": "r2", "type": "reflective", "subject": "gone", "tombstoned": True},
    ]
    out = read_outcome(records, states)
    assert out.dedupe == {frozenset("ab"), frozenset("cd")}
    assert out.contradict == {frozenset("ef")}
    assert out.promoted == {"w1", "w2", "w4"}
    assert out.reflected == {"auth-deploy-log"}
    assert precision_recall({frozenset("ab"), frozenset("cd")},
                            {frozenset("ab"), frozenset("xy"), frozenset("uv")}) == (0.5, 1 / 3)
    assert precision_recall(set(), {frozenset("ab")}) == (None, 0.0)


def _judged(a: str, b: str, same_fact: float, pass_name: str = "dedupe") -> dict:
    return {"memoryId": a, "op": "annotate", "data": {"pair": [a, b], "judgments": [
        {"pass": pass_name, "answers": {"sameFact": {"type": "noul", "noul": same_fact}}}]}}


def test_dedupe_curve_gives_precision_and_recall_per_same_fact_threshold():
    truth = {frozenset("ab"), frozenset("cd"), frozenset("gh")}
    records = [_judged("a", "b", 0.9), _judged("b", "a", 0.7),  # one pair, its best answer
               _judged("c", "d", 0.5), _judged("e", "f", 0.6),
               _judged("x", "y", 0.95),  # joined by contradicts: no dedupe finding
               _judged("g", "h", 0.99, pass_name="contradict")]  # no dedupe judgment
    outcome = Outcome(dedupe={frozenset("ab"), frozenset("cd"), frozenset("ef"),
                              frozenset("gh")})
    curve = dedupe_curve(records, outcome, truth)
    assert curve == [(0.9, 1.0, 1 / 3), (0.6, 0.5, 1 / 3), (0.5, 2 / 3, 2 / 3)]
    assert at_recall(curve, 0.6) == (0.5, 2 / 3, 2 / 3)
    assert at_recall(curve, 0.3) == (0.9, 1.0, 1 / 3)
    assert at_recall(curve, 0.9) is None


def _body(labelled, question: str, state: dict) -> dict:
    prompt = (f"You judge a state.\n\nQuestion ({question}): ...\n\nState (JSON):\n"
              f"{json.dumps(state, indent=2)}\n\nAnswer with a single JSON value ...")
    return {"model": "x", "messages": [{"role": "user", "content": prompt}],
            "response_format": {"type": "json_schema", "json_schema": {
                "name": f"{question}_answer", "schema": {"type": "object"}}}}


def _brief(labelled, memory_id: str) -> dict:
    r = next(r for r in labelled.records if r.memory_id == memory_id)
    return {"summary": r.summary, "content": r.content, "type": r.type}


def test_fake_model_answers_from_the_labels_and_noise_flips_answers(labelled):
    dup = sorted(next(iter(sorted(labelled.duplicates, key=sorted))))
    contra = sorted(next(iter(sorted(labelled.contradictions, key=sorted))))
    exact = GroundTruthModel(labelled, noise=0.0)
    state = {"a": _brief(labelled, dup[0]), "b": _brief(labelled, dup[1])}
    assert json.loads(exact.answer(_body(labelled, "sameFact", state))) == {"noul": 0.95}
    assert json.loads(exact.answer(_body(labelled, "contradicts", state))) == {"noul": 0.05}
    assert json.loads(exact.answer(_body(labelled, "relation", state)))["score"] == 2
    state = {"a": _brief(labelled, contra[0]), "b": _brief(labelled, contra[1])}
    assert json.loads(exact.answer(_body(labelled, "contradicts", state))) == {"noul": 0.95}
    working = {True: [], False: []}
    for memory_id, should in labelled.promote.items():
        working[should].append(memory_id)
    for should, ids in working.items():
        got = json.loads(exact.answer(_body(labelled, "usefulLater",
                                            {"memory": _brief(labelled, ids[0])})))
        assert got == {"noul": 0.95 if should else 0.05}
    wrong = GroundTruthModel(labelled, noise=1.0)
    state = {"a": _brief(labelled, dup[0]), "b": _brief(labelled, dup[1])}
    assert json.loads(wrong.answer(_body(labelled, "sameFact", state))) == {"noul": 0.05}
    # noise is a fixed draw per question: the same request always gets the same answer
    some = GroundTruthModel(labelled, noise=0.5)
    body = _body(labelled, "sameFact", state)
    assert len({some.answer(body) for _ in range(5)}) == 1
    assert exact.calls == 6


def test_fake_model_serves_chat_completions_and_writes_reflections(labelled):
    model = GroundTruthModel(labelled, noise=0.0)
    subject = min(labelled.reflect_subjects)
    state = {"subject": subject, "episodes": [
        {"date": "2026-09-02", "summary": "s", "content": "went out cleanly"},
        {"date": "2026-09-05", "summary": "t", "content": "rolled back"}]}
    body = _body(labelled, "x", state)
    body["response_format"]["json_schema"]["name"] = "reflection"
    with fake_openai(model) as base:
        req = urllib.request.Request(base + "/chat/completions", data=json.dumps(body).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=10) as resp:
            answer = json.loads(resp.read())
    written = json.loads(answer["choices"][0]["message"]["content"])
    assert written["summary"] == f"{subject}: 2 episodes"
    assert written["content"] == "On 2026-09-02: went out cleanly\nOn 2026-09-05: rolled back"
    assert answer["usage"]["prompt_tokens"] > 0


def test_a_judge_row_is_measured_or_says_why(tmp_path, monkeypatch):
    """One real row on a small set: each figure is a number in 0..1 or is explained (until
    the dream engine lands, the model passes are reported as not available)."""
    small = generate_set(seed=3, facts=20, duplicates=4, value_contradictions=3, negations=3,
                         compatible=2, episode_subjects=2, short_subjects=1, tagged=2,
                         durable=2, chatter=2, distractor_count=10)
    row = run_judge(small, "heuristic")
    assert row.memories == len(small.records)
    for name in ("dedupe", "contradict"):
        value = getattr(row, name)
        if value is None:
            assert any(name in why.split(": ")[0] for why in row.why)
        else:
            assert all(v is None or 0 <= v <= 1 for v in value)
    if row.promote is None:
        assert any("promote" in why.split(": ")[0] for why in row.why)
    else:
        assert 0 <= row.promote <= 1
