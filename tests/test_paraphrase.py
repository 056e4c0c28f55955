"""The paraphrase benchmark set keeps its promise: no question shares a content word with its
memory, and the distractors are many, distinct and deterministic (benchmarks/paraphrase.py)."""

from __future__ import annotations

from benchmarks.paraphrase import PAIRS, content_words, distractors


def test_pairs_share_no_content_word():
    assert len(PAIRS) >= 40
    overlapping = [(m, q) for m, q in PAIRS if content_words(m) & content_words(q)]
    assert overlapping == []


def test_distractors_are_many_distinct_and_deterministic():
    d = distractors()
    assert d == distractors() and len(d) >= 1000 and len(set(d)) == len(d)
    memories = {m for m, _ in PAIRS}
    assert not memories & set(d)
