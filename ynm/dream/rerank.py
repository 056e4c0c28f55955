"""The recall reranker: a calibrated judge's last word on the top hits.

Runs only when all hold: the query has text; the judge is calibrated; ``dream.rerank`` is true
(default); the query does not say ``rerank: false`` (``--no-rerank``). Then the first
``max(limit, dream.rerankTopK)`` hits (rerankTopK default 15, at most 50) are judged at once,
each with state ``{query, memory: {summary, content[0:2000]}}`` and the one question
``answers`` (noul: the memory helps answer or act on the query); a hit's score becomes
``0.7 * p + 0.3 * score``, or stays as it was when its judgment fails (ours: recall then
warns, ``recall was not reranked for <n> of <m> hits (<reason>)``). The judged hits are
sorted by score, descending (stable), and the first ``limit`` returned. Nothing is stored.

With ``explain``, a reranked hit's ``explain.total`` is its new score and ``explain.rerank``
the judge's ``p`` (ours; the reference updates the total without saying why it moved).

Source: reference/algorithms.md §2.8, reference/cli.md §4.18.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from ynm.model.words import counted

if TYPE_CHECKING:
    from ynm.dream.seams import Judge, Question

__all__ = ["RERANK_WEIGHT", "rerank", "rerank_questions", "rerank_recall"]

RERANK_WEIGHT = 0.7  # of the judge's p; the ranker's score keeps 0.3
CONTENT_CHARS = 2000
MAX_WORKERS = 8


@functools.cache
def rerank_questions() -> dict[str, Question]:
    """The rerank question set (reference/algorithms.md §4.16, set ``rerank``), built on
    first use: defining its models (ynm.dream.seams) cost ~8 ms of every recall, and a
    recall reranks nothing without a calibrated judge (the default)."""
    from ynm.dream.seams import Question

    return {
        "answers": Question(
            type="noul",
            instructions="Does this memory help answer, or act on, the query?",
            criteria={"true": "the memory holds information that answers the query or that "
                              "someone acting on the query needs",
                      "false": "the memory is unrelated to the query or of no use for it"}),
    }



def _judged(judge: Judge, text: str, hit: dict[str, Any]) -> float | str:
    """The judge's ``p`` for one hit, or why there is none."""
    state = {"query": text, "memory": {"summary": hit.get("summary") or "",
                                       "content": (hit.get("content") or "")[:CONTENT_CHARS]}}
    try:
        p = judge.judge(state, rerank_questions()).answers["answers"].noul
    except Exception as err:  # noqa: BLE001 (any failure: the hit keeps its prior score)
        return f"{type(err).__name__}: {err}"
    return "no probability in the answer" if p is None else min(1.0, max(0.0, float(p)))


def rerank(hits: list[dict[str, Any]], text: str, limit: int, judge: Judge,
           top_k: int, problems: list[str] | None = None) -> list[dict[str, Any]]:
    """Rerank recall ``hits`` (sorted best first, RecallHit dicts) for the query ``text``:
    judge the first ``max(limit, top_k)`` in parallel, re-score, sort, return the first
    ``limit`` (see the module docstring). ``hits`` is not modified; the returned hits are
    copies where their score changed. When judgments fail and ``problems`` is given, one
    line is added to it: ``recall was not reranked for <n> of <m> hits (<first reason>)``."""
    top = hits[: max(limit, top_k)]
    if not top:
        return []
    # imported here: it brings logging (~8 ms), and most recalls rerank nothing
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(max_workers=min(MAX_WORKERS, len(top))) as pool:
        verdicts = list(pool.map(lambda h: _judged(judge, text, h), top))
    failed = [v for v in verdicts if isinstance(v, str)]
    if failed and problems is not None:
        problems.append(f"recall was not reranked for {len(failed)} of {counted(len(top), 'hit')} "
                        f"({failed[0]})")
    out = []
    for hit, p in zip(top, verdicts):
        if not isinstance(p, str):
            hit = dict(hit)
            hit["score"] = RERANK_WEIGHT * p + (1 - RERANK_WEIGHT) * hit["score"]
            if isinstance(hit.get("explain"), dict):
                hit["explain"] = {**hit["explain"], "total": hit["score"], "rerank": p}
        out.append(hit)
    out.sort(key=lambda h: h["score"], reverse=True)
    return out[:limit]


def rerank_recall(ynm: Any, q: Any, hits: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The recall hook: ``hits`` (all of them, best first) reranked when the conditions of the
    module docstring hold, else the first ``q.limit`` unchanged. ``ynm`` is the
    :class:`ynm.service.ynm.Ynm`; ``q`` its :class:`ynm.model.inputs.RecallQuery`."""
    dream = ynm.config.dream
    if not (q.text and q.text.strip()) or not dream.rerank or q.rerank is False:
        return hits[: q.limit]
    from ynm.dream.resolve import service_judge

    judge = service_judge(ynm)
    if judge is None or not judge.calibrated:
        return hits[: q.limit]
    return rerank(hits, q.text, q.limit, judge, dream.rerank_top_k, ynm.warnings)
