"""The question catalogue of consolidation: the question sets each pass puts to a judge.

Ids are code-facing and fixed (reference/algorithms.md §4.16); the instructions are ours. Each
set is a ``dict[id, Question]`` ready for :meth:`ynm.dream.seams.Judge.judge`.
"""

from __future__ import annotations

from ynm.dream.seams import Question

__all__ = ["KIND_CHOICES", "PAIR", "PROMOTE", "SUPERSEDE", "VERIFY"]

PAIR: dict[str, Question] = {
    "sameFact": Question(
        type="noul",
        instructions="Do memories a and b state the same underlying fact?",
        criteria={"true": "the same fact, perhaps worded differently",
                  "false": "a material difference in what they state"}),
    "relation": Question(
        type="score",
        instructions="How are memories a and b related?",
        criteria=["different things", "same subject, different claims", "the same thing"]),
    "contradicts": Question(
        type="noul",
        instructions="Do memories a and b make incompatible claims about the same thing?",
        criteria={"true": "both cannot be true at once",
                  "false": "compatible, or about different things"}),
}

SUPERSEDE: dict[str, Question] = {
    "contradicts": PAIR["contradicts"],
    "newerSupersedes": Question(
        type="noul",
        instructions="Is the newer memory b an update or correction of the older memory a?",
        criteria={"true": "b replaces a", "false": "b does not replace a"}),
}

KIND_CHOICES = ("semantic", "episodic", "procedural", "reference")

PROMOTE: dict[str, Question] = {
    "usefulLater": Question(
        type="noul",
        instructions="Is this session note useful beyond the session that wrote it?",
        criteria={"true": "durable: a fact, decision, procedure or pointer worth keeping",
                  "false": "scratch state of this session only"}),
    "kind": Question(
        type="choice",
        instructions="What kind of lasting memory would it be?",
        criteria={"semantic": "a fact, decision or preference",
                  "episodic": "what happened, and when",
                  "procedural": "how to do something",
                  "reference": "where to find something"}),
}

VERIFY: dict[str, Question] = {
    "unsupported": Question(
        type="noul",
        instructions="Does the summary claim something the sources do not support?",
        criteria={"true": "it claims something unsupported",
                  "false": "every claim is in the sources"}),
    "lostFact": Question(
        type="noul",
        instructions="Does the summary omit a material fact of the sources?",
        criteria={"true": "a material fact is missing", "false": "nothing material is lost"}),
    "wrongDate": Question(
        type="noul",
        instructions="Does a date, order or duration in the summary disagree with the sources?"),
}
