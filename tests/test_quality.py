"""Retrieval quality holds its targets (benchmarks/quality.py, real stores, the real local
model): full text on the seeded corpus at or above the reference's tier-1 figures
(reference/benchmarks.md §3.1), hybrid recall never below full text there, and hybrid recall
finding at least 0.7 of the paraphrases at rank 5, three times full text or more, and answering
at least 0.9 of the off-topic questions of benchmarks/offtopic.py with nothing on either
store."""

from __future__ import annotations

import pytest

from benchmarks.quality import evaluate

REFERENCE = {"recall@1": 0.88, "recall@5": 0.98, "recall@10": 1.0, "mrr": 0.92}
METRICS = tuple(REFERENCE)


@pytest.fixture(scope="module")
def fts():
    return evaluate("fts")


@pytest.fixture(scope="module")
def hybrid():
    pytest.importorskip("onnxruntime")
    pytest.importorskip("sqlite_vec")
    return evaluate("hybrid")


def test_full_text_on_the_seeded_corpus_meets_the_reference(fts):
    got = fts["corpus"]
    assert got["queries"] == 50
    assert {m: got[m] for m in METRICS if got[m] < REFERENCE[m]} == {}


def test_hybrid_recall_keeps_every_corpus_figure_of_full_text(fts, hybrid):
    lower = {m: (hybrid["corpus"][m], fts["corpus"][m]) for m in METRICS
             if hybrid["corpus"][m] < fts["corpus"][m]}
    assert lower == {}


def test_hybrid_recall_finds_paraphrases(fts, hybrid):
    assert hybrid["paraphrase"]["queries"] >= 40
    assert hybrid["paraphrase"]["recall@5"] >= 0.7
    assert hybrid["paraphrase"]["recall@5"] >= 3 * fts["paraphrase"]["recall@5"]


def test_hybrid_recall_answers_off_topic_questions_with_nothing(hybrid):
    assert {name: got["no answer"] for name, got in hybrid.items()
            if got["no answer"] < 0.9} == {}


def test_the_table_prints_a_data_set_that_asks_no_off_topic_questions():
    from benchmarks.quality import table

    rare = {"recall@1": 0.75, "recall@5": 1.0, "recall@10": 1.0, "mrr": 0.85, "queries": 20}
    corpus = {**rare, "no answer": 0.96, "no answer, other languages": 0.9}
    lines = table({"fts": {"rare": rare, "corpus": corpus}}).splitlines()
    assert "| rare | fts | 0.750 | 1.000 | 1.000 | 0.8500 | 20 |" in lines
    assert "| corpus | fts | 0.96 | 50 |" in lines
    assert not any(line.startswith("| rare | fts | 0.") and line.count("|") == 5 for line in lines)
    assert "off-topic" not in table({"fts": {"rare": rare}})
