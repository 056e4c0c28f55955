"""The ``heuristic`` judge: the no-model floor of the judge seam (reference/algorithms.md §4.17).

Uncalibrated, so through the bands (§4.3) it can only flag for review, never act. It answers
from word overlap and a few word lists:

- ``text(x)``: every string value of ``x``, recursively, joined by spaces (so a memory brief's
  type, namespace and timestamp count too). Words: lowercase, every run of characters that are
  not letters or digits becomes a space, words longer than two characters. ``jaccard`` is the
  Jaccard index of two texts' word sets.
- On a pair state ``{a, b}``, with ``sim = jaccard(text(a), text(b))``: ``sameFact = sim``;
  ``sameSubject = 0.8 if sim > 0.15 else 0.2``; ``contradicts = 0.8`` when ``sim > 0.4`` and
  exactly one side holds a negation word, else ``0.1``; ``newerSupersedes = 0.5``;
  ``relation`` (a score) is level 2 above 0.6, 1 above 0.2, else 0 (probability 0.8 on the
  level, 0.1 on the others, confidence 0.6).
- ``usefulLater = 0.7`` when the text holds one of the whole words always, never, prefer, decid,
  convention, rule, because, deploy, release (any case; ``decid`` is the literal fragment, so
  ``decided`` does not count, as in the reference), else 0.3.
- On a verification state ``{summary, sources}``, with ``o = jaccard(summary, sources)``:
  ``lostFact = 0.7 if o < 0.2 else 0.2``; ``unsupported`` and ``wrongDate`` are
  ``0.7 if o < 0.1 else 0.15``.
- ``sensitive = 0.9`` on the whole words password, secret, token, api key (``api[_ -]?key``),
  ssn, credit card (any case), else 0.05.
- ``importance`` (a score of n levels): ``min(n-1, round((0.7 if keyword else 0.4) * (n-1)))``
  with the keywords always, never, must, critical, decid, convention; confidence 0.3.
- Any other noul question: 0.5. A choice: uniform probabilities, the first key, confidence 0.
  Any other score: the middle level, confidence 0.
- Usage: the state's estimated tokens (``ceil(len(json) / 4)``) in, 0 out.

**Deviation from the reference: claims that differ.** Word overlap cannot tell a restatement
from a changed value ("the rate limit is 100 requests" / "... 500 requests"; "Alice owns the
on-call rotation" / "Bob owns ..."), so the reference listed such pairs as possible
duplicates, inviting a person to forget one of two conflicting claims. Here, on a pair of
memory briefs, :func:`ynm.dream.judges.claim_mismatch` (subject, numbers, negation, names,
a swapped value) is asked too: when it finds a difference ``sameFact`` is at most
:data:`MISMATCH_CAP` and ``relation`` at most level 1 (same subject, different claims); when
one sentence of each is the same frame with a value swapped (``swap``; only when both name the
same subject or neither names one) ``contradicts`` is 0.8 under the same overlap condition (``sim > 0.4``) as a negation,
so contradict flags the pair as a possible contradiction. A number or name found on one side
only is not enough for that: memories about one subject state many compatible values (its
port and its timeout), which benchmarks/consolidation.py showed flagged by the hundred.

**Deviation from the reference.** The reference finds negation words case-sensitively with
straight apostrophes only, so "Never deploy on Fridays" against "deploy on Fridays" was no
contradiction, nor was "doesn’t" typed with a curly apostrophe. Here the negation words (not,
never, no longer, isn't, aren't, doesn't, don't, won't, cannot, can't, isnt, dont) match as
whole words in any case, with a straight (') or curly (’) apostrophe.
"""

from __future__ import annotations

import json
import math
import re
from functools import lru_cache
from typing import Any

from ynm.dream.seams import Answer, JudgeLimits, Judgment, Question, Usage

MISMATCH_CAP = 0.1
"""``sameFact`` at most this when :func:`ynm.dream.judges.claim_mismatch` finds the two claims
differ (below every dedupe band; the similarity judge caps at the same value)."""

__all__ = ["HeuristicJudge", "jaccard", "negated", "text_of", "words"]

_NON_WORD = re.compile(r"[^a-z0-9]+")
_NEGATION = re.compile(
    r"\b(?:not|never|no\s+longer|isn['’]t|aren['’]t|doesn['’]t|don['’]t|won['’]t|cannot|"
    r"can['’]t|isnt|dont)\b", re.IGNORECASE)
_USEFUL = re.compile(r"\b(?:always|never|prefer|decid|convention|rule|because|deploy|release)\b",
                     re.IGNORECASE)
_SENSITIVE = re.compile(r"\b(?:password|secret|token|api[_ -]?key|ssn|credit card)\b",
                        re.IGNORECASE)
_IMPORTANT = re.compile(r"\b(?:always|never|must|critical|decid|convention)\b", re.IGNORECASE)


def text_of(x: Any) -> str:
    """Every string value in ``x`` (dicts and lists walked recursively), joined by spaces."""
    if isinstance(x, str):
        return x
    if isinstance(x, dict):
        return " ".join(t for t in (text_of(v) for v in x.values()) if t)
    if isinstance(x, (list, tuple)):
        return " ".join(t for t in (text_of(v) for v in x) if t)
    return ""


@lru_cache(maxsize=65536)
def words(text: str) -> frozenset[str]:
    """The word set of ``text``: lowercase, non-alphanumeric runs as spaces, length > 2.
    Cached: a dream run shows one memory to the judge in several pairs."""
    return frozenset(w for w in _NON_WORD.sub(" ", text.lower()).split() if len(w) > 2)


def jaccard(a: str, b: str) -> float:
    """The Jaccard index of the word sets of ``a`` and ``b`` (0 when both are empty)."""
    wa, wb = words(a), words(b)
    union = wa | wb
    return len(wa & wb) / len(union) if union else 0.0


def negated(text: str) -> bool:
    """Whether ``text`` holds a negation word (any case, straight or curly apostrophe)."""
    return _NEGATION.search(text) is not None


def _same_subject(a: Any, b: Any) -> bool:
    """Whether two briefs are about the same subject: both name it (case aside) or neither
    does (a memory with a subject beside one without is about two things)."""
    sa = (a.get("subject") or "").strip().lower() if isinstance(a, dict) else ""
    sb = (b.get("subject") or "").strip().lower() if isinstance(b, dict) else ""
    return sa == sb


def _score(question: Question, level: int, confidence: float, spread: bool) -> Answer:
    levels = list(question.criteria or [])
    n = max(len(levels), 1)
    level = max(0, min(level, n - 1))
    if spread:
        probabilities = [0.8 if i == level else 0.1 for i in range(n)]
    else:
        probabilities = [1.0 if i == level else 0.0 for i in range(n)]
    legend = str(levels[level]) if levels else None
    return Answer(type="score", score=level, legend=legend, probabilities=probabilities,
                  confidence=confidence)


class HeuristicJudge:
    """The ``heuristic`` :class:`ynm.dream.seams.Judge` (uncalibrated, model ``heuristic``).
    See the module docstring for its rules. Never raises ModelUnavailable."""

    name = "heuristic"
    calibrated = False

    def limits(self) -> JudgeLimits:
        """No model behind it: generous limits (1,000,000 tokens; 255 choices)."""
        return JudgeLimits(state_tokens=1_000_000, request_tokens=1_000_000, max_choices=255)

    def judge(self, state: Any, questions: dict[str, Question]) -> Judgment:
        """Answer every question of ``questions`` about ``state`` by the rules above."""
        is_pair = isinstance(state, dict) and "a" in state and "b" in state
        text_a = text_of(state.get("a")) if is_pair else ""
        text_b = text_of(state.get("b")) if is_pair else ""
        sim = jaccard(text_a, text_b) if is_pair else 0.0
        mismatch: list[str] = []
        if is_pair:
            from ynm.dream.judges import claim_mismatch

            mismatch = claim_mismatch(state.get("a"), state.get("b"))
        # one sentence frame with a value swapped ("... is 100 requests" / "... is 500 ...",
        # "Alice owns ..." / "Bob owns ..."): one claim changed, so possibly a contradiction
        swapped = "swap" in mismatch and _same_subject(state.get("a"), state.get("b"))
        whole = text_of(state)
        overlap = None
        if isinstance(state, dict) and "summary" in state and "sources" in state:
            overlap = jaccard(text_of(state["summary"]), text_of(state["sources"]))
        o = overlap if overlap is not None else 0.0
        nouls = {
            "sameFact": min(sim, MISMATCH_CAP) if mismatch else sim,
            "sameSubject": 0.8 if sim > 0.15 else 0.2,
            "contradicts": 0.8 if sim > 0.4 and (negated(text_a) != negated(text_b)
                                                 or swapped) else 0.1,
            "newerSupersedes": 0.5,
            "usefulLater": 0.7 if _USEFUL.search(whole) else 0.3,
            "lostFact": 0.7 if o < 0.2 else 0.2,
            "unsupported": 0.7 if o < 0.1 else 0.15,
            "wrongDate": 0.7 if o < 0.1 else 0.15,
            "sensitive": 0.9 if _SENSITIVE.search(whole) else 0.05,
        }
        answers: dict[str, Answer] = {}
        for qid, q in questions.items():
            if q.type == "noul":
                answers[qid] = Answer(type="noul", noul=nouls.get(qid, 0.5))
            elif q.type == "choice":
                keys = list((q.criteria or {}).keys())
                answers[qid] = Answer(
                    type="choice", choice=keys[0] if keys else None,
                    probabilities={k: 1 / len(keys) for k in keys}, confidence=0.0)
            elif qid == "relation":
                level = 2 if sim > 0.6 else 1 if sim > 0.2 else 0
                if mismatch:
                    level = min(level, 1)
                answers[qid] = _score(q, level, 0.6, spread=True)
            elif qid == "importance":
                top = max(len(q.criteria or []) - 1, 0)
                weight = 0.7 if _IMPORTANT.search(whole) else 0.4
                answers[qid] = _score(q, min(top, math.floor(weight * top + 0.5)), 0.3, spread=False)
            else:
                answers[qid] = _score(q, (len(q.criteria or []) - 1) // 2, 0.0, spread=False)
        tokens = math.ceil(len(json.dumps(state, ensure_ascii=False)) / 4)
        return Judgment(answers=answers, model="heuristic", calibrated=False,
                        usage=Usage(input_tokens=tokens, output_tokens=0))
