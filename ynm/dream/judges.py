"""Judges that call a model or measure: ``typesafe``, ``writer-emulated:<writer>`` and
``similarity``.

- ``typesafe`` (calibrated): TypeSafe's ``/v1/systemone`` answers every question of a set in
  one call with calibrated probabilities. The only calibrated judge, so the only one that
  gates the act band, the recall reranker and the write-path judge.
- ``writer-emulated:<writer>`` (uncalibrated): asks the writer for one small JSON object per
  question; the numbers are the model's say-so, not probabilities, so it can only flag.
- ``similarity`` (ours, uncalibrated): answers the pair questions ``sameFact`` and
  ``relation`` from the centred embedding cosine of the two memories (the measure recall's
  vector search uses), and hands every other question to the heuristic judge.

The ``heuristic`` judge lives in :mod:`ynm.dream.heuristic`. Source:
reference/algorithms.md §4.16, §4.17.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, create_model

from ynm.dream.budget import TokenBudget, estimate_tokens, process_budget
from ynm.dream.seams import (
    Answer,
    Judge,
    JudgeLimits,
    Judgment,
    ModelUnavailable,
    Question,
    Usage,
    Writer,
)
from ynm.dream.writers import ModelRequestError, post_json
from ynm.errors import ConfigError

__all__ = [
    "DEFAULT_TYPESAFE_MODEL",
    "SIMILARITY_CALIBRATION",
    "TYPESAFE_BASE_URL",
    "MissingAnswer",
    "SimilarityJudge",
    "StateTooLarge",
    "TypesafeJudge",
    "WriterEmulatedJudge",
    "same_fact_probability",
]

TYPESAFE_BASE_URL = "https://api.typesafe.ai"
DEFAULT_TYPESAFE_MODEL = "jev-latest"
TYPESAFE_TIMEOUT_S = 30.0
TYPESAFE_LIMITS = JudgeLimits(state_tokens=32_000, request_tokens=64_000, max_choices=255)
EMULATED_LIMITS = JudgeLimits(state_tokens=60_000, request_tokens=100_000, max_choices=50)


class StateTooLarge(ModelUnavailable):
    """The state (or the whole request) is over what the judge accepts, in estimated tokens
    (:func:`ynm.dream.budget.estimate_tokens`); nothing was sent. A pass treats it like any
    unavailable model: it takes its fallback for that question set."""


class MissingAnswer(ModelRequestError):
    """The judge's answer lacks a question id of the set, or holds one of the wrong shape."""


# --------------------------------------------------------------------------------------------
# typesafe
# --------------------------------------------------------------------------------------------


def _question_json(questions: Mapping[str, Question]) -> dict[str, Any]:
    return {qid: q.model_dump(exclude_none=True) for qid, q in questions.items()}


def _parse_answer(qid: str, q: Question, raw: Any) -> Answer:
    """One answer of a TypeSafe response, checked against its question.

    A ``score`` given as a fractional expected level becomes the most probable level when
    ``probabilities`` are given, else the nearest level.
    """
    if not isinstance(raw, dict):
        raise MissingAnswer(f"typesafe judge: no answer for {qid!r}")
    raw = {**raw, "type": q.type}
    score = raw.get("score")
    if q.type == "score" and isinstance(score, float) and not score.is_integer():
        probs = raw.get("probabilities")
        if isinstance(probs, list) and probs:
            raw["score"] = max(range(len(probs)), key=lambda i: probs[i])
        else:
            raw["score"] = round(score)
    try:
        answer = Answer.model_validate(raw)
    except ValidationError as err:
        problem = err.errors()[0]["msg"]
        raise MissingAnswer(f"typesafe judge: the answer for {qid!r} is malformed ({problem})"
                            ) from None
    missing = {"noul": answer.noul, "choice": answer.choice, "score": answer.score}[q.type]
    if missing is None:
        raise MissingAnswer(f"typesafe judge: the answer for {qid!r} has no {q.type}")
    return answer


def _usage_of(raw: Any) -> Usage | None:
    if not isinstance(raw, dict):
        return None
    def pick(*names: str) -> int:
        for name in names:
            value = raw.get(name)
            if isinstance(value, int) and not isinstance(value, bool):
                return max(0, value)
        return 0
    return Usage(input_tokens=pick("inputTokens", "input_tokens"),
                 output_tokens=pick("outputTokens", "output_tokens"))


class TypesafeJudge:
    """TypeSafe's calibrated judge: POST ``<base_url>/v1/systemone`` with ``{state, model,
    questions}`` and a bearer key; 30 s timeout.

    A state over 32,000 estimated tokens, or a request over 64,000, raises
    :class:`StateTooLarge` without a call. Every call is metered on the spend guard (estimate:
    state plus questions tokens). HTTP 408/429/529/5xx, network errors and timeouts raise
    :class:`~ynm.dream.seams.ModelUnavailable`; another 4xx raises
    :class:`~ynm.dream.writers.ModelRequestError`; an answer missing for any question id (or
    of the wrong shape) raises :class:`MissingAnswer`. Usage is read from ``usage``
    (``inputTokens``/``outputTokens`` or ``input_tokens``/``output_tokens``).

    Args:
        api_key: the key (``dream.typesafe.apiKeyEnv``, default ``TYPESAFE_API_KEY``).
        model: ``dream.typesafe.model`` (None: ``jev-latest``).
        base_url: ``YNM_TYPESAFE_BASE_URL`` or ``dream.typesafe.baseUrl`` (default
            ``https://api.typesafe.ai``).
        key_env: the variable the key came from, for the error message.

    Raises:
        ConfigError: no key. Source: reference/algorithms.md §4.17.
    """

    name = "typesafe"
    calibrated = True

    def __init__(self, api_key: str | None, model: str | None = None,
                 base_url: str | None = None, *, key_env: str = "TYPESAFE_API_KEY",
                 budget: TokenBudget | None = None,
                 timeout_s: float = TYPESAFE_TIMEOUT_S) -> None:
        if not api_key:
            raise ConfigError(f"the typesafe judge needs an API key: set {key_env} (or choose "
                              "another dream.judge)")
        self.api_key = api_key
        self.model = model or DEFAULT_TYPESAFE_MODEL
        self.base_url = (base_url or TYPESAFE_BASE_URL).rstrip("/")
        self.timeout_s = timeout_s
        self._budget = budget

    @property
    def budget(self) -> TokenBudget:
        """The spend guard this judge books its calls on."""
        if self._budget is None:
            self._budget = process_budget()
        return self._budget

    def limits(self) -> JudgeLimits:
        """32,000 state tokens, 64,000 request tokens, 255 choices."""
        return TYPESAFE_LIMITS

    def judge(self, state: Any, questions: dict[str, Question]) -> Judgment:
        """Answer ``questions`` about ``state`` in one call (see the class docstring)."""
        limits = self.limits()
        state_tokens = estimate_tokens(state)
        if state_tokens > limits.state_tokens:
            raise StateTooLarge(f"typesafe judge: the state is about {state_tokens} tokens, "
                                f"over the {limits.state_tokens} it accepts")
        asked = _question_json(questions)
        estimate = state_tokens + estimate_tokens(asked)
        if estimate > limits.request_tokens:
            raise StateTooLarge(f"typesafe judge: the request is about {estimate} tokens, "
                                f"over the {limits.request_tokens} it accepts")
        self.budget.reserve(estimate)
        try:
            response = post_json(f"{self.base_url}/v1/systemone",
                                 {"state": state, "model": self.model, "questions": asked},
                                 {"Content-Type": "application/json",
                                  "Authorization": f"Bearer {self.api_key}"},
                                 self.timeout_s, "typesafe judge")
        except BaseException:
            self.budget.release(estimate)
            raise
        usage = _usage_of(response.get("usage"))
        self.budget.charge(estimate, usage.input_tokens if usage else None)
        raw = response.get("answers")
        if not isinstance(raw, dict):
            raise MissingAnswer("typesafe judge: the response has no answers")
        answers = {qid: _parse_answer(qid, q, raw.get(qid)) for qid, q in questions.items()}
        model = response.get("model") if isinstance(response.get("model"), str) else self.model
        return Judgment(answers=answers, model=model, calibrated=True, usage=usage)


# --------------------------------------------------------------------------------------------
# writer-emulated
# --------------------------------------------------------------------------------------------


class _NoulOut(BaseModel):
    noul: float | None = Field(default=None, ge=0, le=1,
                               description="probability from 0 to 1 that the answer is yes")


def _describe(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    import json

    return json.dumps(value, ensure_ascii=False)


def _emulation(qid: str, q: Question) -> tuple[str, type[BaseModel], list[str]]:
    """``(instructions, schema, option keys)`` for asking a writer one question."""
    lines = [f"Question ({qid}): {q.instructions}"]
    if q.type == "noul":
        if isinstance(q.criteria, dict):
            lines.append(f"Yes means: {_describe(q.criteria.get('true'))}")
            lines.append(f"No means: {_describe(q.criteria.get('false'))}")
        lines.append('Answer {"noul": <probability from 0 to 1 that the answer is yes>}.')
        return "\n".join(lines), _NoulOut, []
    if q.type == "choice":
        keys = [str(k) for k in (q.criteria or {})]
        if not keys:
            raise ValueError(f"choice question {qid!r} has no options")
        lines.append("Options:")
        lines += [f"- {k}: {_describe(q.criteria[k])}".rstrip(": ") for k in keys]
        lines.append('Answer {"choice": <one option key>, "confidence": <0 to 1>}.')
        schema = create_model(
            f"{qid}_choice",
            choice=(Literal[tuple(keys)], ...),  # type: ignore[valid-type]
            confidence=(float, Field(default=0.5, ge=0, le=1)))
        return "\n".join(lines), schema, keys
    levels = list(q.criteria or [])
    if not levels:
        raise ValueError(f"score question {qid!r} has no levels")
    lines.append("Levels:")
    lines += [f"{i}: {_describe(level)}" for i, level in enumerate(levels)]
    lines.append('Answer {"score": <the level number>, "confidence": <0 to 1>}.')
    schema = create_model(
        f"{qid}_score",
        score=(int, Field(ge=0, le=len(levels) - 1)),
        confidence=(float, Field(default=0.5, ge=0, le=1)))
    return "\n".join(lines), schema, [str(i) for i in range(len(levels))]


def _spread(chosen: int, n: int, confidence: float) -> list[float]:
    """``confidence`` on the chosen option and ``(1 - confidence) / (n - 1)`` on each other."""
    if n == 1:
        return [1.0]
    rest = (1.0 - confidence) / (n - 1)
    return [confidence if i == chosen else rest for i in range(n)]


class WriterEmulatedJudge:
    """A judge emulated over a writer (uncalibrated): one ``write`` per question, asking for
    ``{noul}`` (0..1; a missing value becomes 0.5), ``{choice, confidence}`` or ``{score,
    confidence}`` (confidence default 0.5). A choice's probabilities are the confidence on the
    chosen key and ``(1 - confidence) / (n - 1)`` on each other; a score's likewise over its
    levels, with ``legend`` the chosen level's text. Limits 60,000 state / 100,000 request
    tokens / 50 choices. The writer's errors (ModelUnavailable, StructuredOutputError, ...)
    pass through. Source: reference/algorithms.md §4.17.
    """

    calibrated = False

    def __init__(self, writer: Writer) -> None:
        self.writer = writer
        self.name = f"writer-emulated:{writer.name}"

    def limits(self) -> JudgeLimits:
        """60,000 state tokens, 100,000 request tokens, 50 choices."""
        return EMULATED_LIMITS

    def judge(self, state: Any, questions: dict[str, Question]) -> Judgment:
        """Answer each question with one writer call."""
        answers: dict[str, Answer] = {}
        usage: Usage | None = None
        model = self.writer.name
        for qid, q in questions.items():
            instructions, schema, keys = _emulation(qid, q)
            written = self.writer.write(
                "You judge a state. Read the state, then answer the question.\n\n"
                + instructions, state, schema, schema_name=f"{qid}_answer")
            model = written.model
            if written.usage is not None:
                usage = written.usage if usage is None else usage + written.usage
            v = written.value
            if q.type == "noul":
                p = v.noul  # type: ignore[attr-defined]
                answers[qid] = Answer(type="noul", noul=0.5 if p is None else p)
            elif q.type == "choice":
                conf = v.confidence  # type: ignore[attr-defined]
                chosen = keys.index(v.choice)  # type: ignore[attr-defined]
                spread = _spread(chosen, len(keys), conf)
                answers[qid] = Answer(type="choice", choice=v.choice,  # type: ignore[attr-defined]
                                      probabilities=dict(zip(keys, spread)), confidence=conf)
            else:
                conf = v.confidence  # type: ignore[attr-defined]
                level = v.score  # type: ignore[attr-defined]
                answers[qid] = Answer(type="score", score=level,
                                      legend=_describe(list(q.criteria)[level]),
                                      probabilities=_spread(level, len(keys), conf),
                                      confidence=conf)
        return Judgment(answers=answers, model=model, calibrated=False, usage=usage)


# --------------------------------------------------------------------------------------------
# similarity
# --------------------------------------------------------------------------------------------

SIMILARITY_CALIBRATION: dict[str, tuple[float, float]] = {
    "sameFact": (21.81, -16.97),
    "sameSubject": (29.18, -9.36),
}
"""Logistic maps from the centred cosine ``c`` of two memories to a probability,
``1 / (1 + exp(-(a * c + b)))``, as ``(a, b)``: ``sameFact`` (the two state the same fact;
0.5 at c = 0.78) and ``sameSubject`` (they are at least about the same thing; 0.5 at
c = 0.32). Fitted by benchmarks/similarity_calibration.py with all-MiniLM-L6-v2 on 30 pairs
stating one fact twice (centred cosine 0.74..0.96, median 0.89), 30 pairs of one subject with
different or opposite claims (0.26..0.94, median 0.57) and 120 unrelated pairs (-0.13..0.42,
median 0.05), in a store of 1,000 other memories. At dedupe's review threshold (0.6) it flags
28 of the 30 restatements, 4 of the 30 different claims (an opposite claim worded alike, such
as "prefers squash merges" / "prefers rebase merges", is as near as a restatement: cosine
cannot see a negation, which is why this judge only flags) and none of the unrelated pairs.
Another embedding model needs its own fit."""

PAIR_QUESTIONS = ("sameFact", "relation")


def _logistic(c: float, ab: tuple[float, float]) -> float:
    a, b = ab
    return 1.0 / (1.0 + math.exp(-(a * c + b)))


def same_fact_probability(cosine: float) -> float:
    """P(same fact) for a centred cosine, by :data:`SIMILARITY_CALIBRATION`."""
    return _logistic(cosine, SIMILARITY_CALIBRATION["sameFact"])


def _relation(cosine: float) -> Answer:
    """The 3-level ``relation`` answer (0 different things, 1 same subject with different
    claims, 2 the same thing) from the two calibrated curves."""
    same = same_fact_probability(cosine)
    subject = max(same, _logistic(cosine, SIMILARITY_CALIBRATION["sameSubject"]))
    probs = [1.0 - subject, subject - same, same]
    level = max(range(3), key=lambda i: probs[i])
    return Answer(type="score", score=level, probabilities=probs, confidence=probs[level])


Vectors = Callable[[Any], "tuple[Any, Any] | None"]


class SimilarityJudge:
    """Our embedding judge (uncalibrated: it flags, never acts).

    For a pair state ``{"a": brief, "b": brief}`` (reference/algorithms.md §4.5; a brief
    holds ``summary`` and ``content`` and no memory id) it answers ``sameFact`` and
    ``relation`` from the cosine of the two memories' vectors after both are moved by the
    mount's centroid (as recall's vector search moves them, ynm.index.search.centroid), mapped
    to probabilities by :data:`SIMILARITY_CALIBRATION`. Every other question, and every
    question when there are no vectors (another state shape, vectors off, the embedder
    failing), goes to ``fallback`` (the heuristic judge).

    The two vectors come from ``vectors_for(state) -> (va, vb) | None``;
    :meth:`from_embedder` builds that hook from the configured embedder: it embeds each side's
    ``summary`` and ``content`` as the index embeds a memory (ynm.index.cache.embedding_text),
    remembering vectors by text, so the engine needs to pass nothing but the briefs.

    Args:
        vectors_for: the hook above.
        fallback: the judge for everything else (default: the heuristic judge).
        center: the centroid to subtract (float32 bytes or an array), or None.
        model: the name reported as the judgment's ``model`` when vectors answered.
    """

    name = "similarity"
    calibrated = False

    def __init__(self, vectors_for: Vectors, fallback: Judge | None = None, *,
                 center: Any = None, model: str = "similarity") -> None:
        self.vectors_for = vectors_for
        if fallback is None:
            from ynm.dream.heuristic import HeuristicJudge

            fallback = HeuristicJudge()
        self.fallback = fallback
        self.center = center
        self.model = model

    @classmethod
    def from_embedder(cls, embedder: Any, fallback: Judge | None = None, *,
                      center: Any = None,
                      lookup: Callable[[list[str]], list[bytes]] | None = None
                      ) -> SimilarityJudge:
        """A judge whose vectors are ``embedder``'s (an :class:`ynm.index.embedders.Embedder`)
        of each brief's summary and content. ``lookup`` (texts -> float32 bytes each), when
        given, is asked instead of ``embedder.embed``: a mount cache's embeddings store
        (``MountCache.embeddings_of``) already holds every memory's vector under the same
        text, so a dream over a large store embeds nothing again."""
        import numpy as np

        memo: dict[str, Any] = {}

        def embed(texts: list[str]) -> list[Any]:
            if lookup is not None:
                return [np.frombuffer(v, dtype=np.float32) for v in lookup(texts)]
            return list(embedder.embed(texts))

        def vectors_for(state: Any) -> tuple[Any, Any] | None:
            from ynm.index.cache import embedding_text
            from ynm.index.embedders import EmbedderUnavailable

            texts = []
            for side in ("a", "b"):
                brief = state.get(side) if isinstance(state, dict) else None
                if not isinstance(brief, dict) or not isinstance(brief.get("content"), str):
                    return None
                texts.append(embedding_text(brief.get("summary") or "", brief["content"]))
            todo = [t for t in dict.fromkeys(texts) if t not in memo]
            if todo:
                try:
                    for text, vector in zip(todo, embed(todo)):
                        memo[text] = vector
                except EmbedderUnavailable:
                    return None
            return memo[texts[0]], memo[texts[1]]

        return cls(vectors_for, fallback, center=center, model=f"similarity:{embedder.name}")

    def limits(self) -> JudgeLimits:
        """The fallback's limits (a pair of briefs is far below any of them)."""
        return self.fallback.limits()

    def cosine(self, va: Any, vb: Any) -> float:
        """The cosine of ``va`` and ``vb`` after subtracting :attr:`center` (0 for a zero
        vector)."""
        import numpy as np

        a = np.asarray(va, dtype=np.float32)
        b = np.asarray(vb, dtype=np.float32)
        if self.center is not None:
            shift = (np.frombuffer(self.center, dtype=np.float32)
                     if isinstance(self.center, bytes | bytearray)
                     else np.asarray(self.center, dtype=np.float32))
            a, b = a - shift, b - shift
        norm = float(np.linalg.norm(a) * np.linalg.norm(b))
        return float(a @ b / norm) if norm > 0 else 0.0

    def judge(self, state: Any, questions: dict[str, Question]) -> Judgment:
        """``sameFact``/``relation`` from the vectors, the rest from the fallback."""
        ours = [qid for qid in PAIR_QUESTIONS if qid in questions]
        vectors = self.vectors_for(state) if ours else None
        if vectors is None:
            judged = self.fallback.judge(state, questions)
            return judged.model_copy(update={"calibrated": False})
        c = self.cosine(*vectors)
        answers: dict[str, Answer] = {}
        if "sameFact" in questions:
            answers["sameFact"] = Answer(type="noul", noul=same_fact_probability(c))
        if "relation" in questions:
            answers["relation"] = _relation(c)
        rest = {qid: q for qid, q in questions.items() if qid not in answers}
        usage = Usage(input_tokens=estimate_tokens(state))
        model = self.model
        if rest:
            judged = self.fallback.judge(state, rest)
            answers.update(judged.answers)
            model = f"{self.model}+{judged.model}"
            usage = judged.usage or usage  # the fallback read the same state
        return Judgment(answers={qid: answers[qid] for qid in questions}, model=model,
                        calibrated=False, usage=usage)
