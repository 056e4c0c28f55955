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
import re
from collections.abc import Callable, Mapping
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError, create_model

from ynm.dream.budget import Metered, TokenBudget, estimate_tokens
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
    "SIMILARITY_REVIEW",
    "TYPESAFE_BASE_URL",
    "MissingAnswer",
    "SimilarityJudge",
    "StateTooLarge",
    "TypesafeJudge",
    "WriterEmulatedJudge",
    "claim_mismatch",
    "numbers_of",
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


class TypesafeJudge(Metered):
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
        if not api_key or not api_key.strip():
            raise ConfigError(f"the typesafe judge needs an API key: set {key_env} (or choose "
                              "another dream.judge)")
        self.api_key = api_key
        self.model = model or DEFAULT_TYPESAFE_MODEL
        self.base_url = (base_url or TYPESAFE_BASE_URL).rstrip("/")
        self.timeout_s = timeout_s
        self._budget = budget

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
    "sameFact": (21.16, -11.06),
    "sameSubject": (18.37, -6.04),
}
"""Logistic maps from the centred cosine ``c`` of two memories to a probability,
``1 / (1 + exp(-(a * c + b)))``, as ``(a, b)``: ``sameFact`` (the two state the same fact,
given that :func:`claim_mismatch` finds no difference; 0.5 at c = 0.52, the reference's review
threshold 0.6 at c = 0.54, :data:`SIMILARITY_REVIEW`'s 0.28 at c = 0.48) and ``sameSubject``
(at least about the same thing; 0.5 at c = 0.33). Fitted by benchmarks/similarity_calibration.py
with all-MiniLM-L6-v2. ``sameFact`` on the population dedupe hands the judge, candidate pairs
that are near neighbours: written pairs (30 close restatements, 20 looser ones with the
sentence turned and an incidental remark, 30 same-subject different claims, 10 changed values;
in a store of 1,000 other memories) and the near pairs of stores from
benchmarks/consolidation.py's generator at seeds 1, 2, 4, 5 and 6 (its table is read at 7, and
at 3, 11, 23: none of them), each memory with its 5 nearest of its type (148 duplicates, 3,450
others); shuffled unrelated pairs, which dedupe never judges, are left out of it.
``sameSubject`` on the written pairs against 120 unrelated ones. At 0.28 ``sameFact`` flags 29
of 30 close and 18 of 20 loose restatements, 132 of 148 generated duplicates, 14 of 30
same-subject different claims and 22 of 3,450 generated non-duplicates; :func:`claim_mismatch`
tells apart all 10 changed values, 411 of 530 generated same-subject pairs and 2,798 of 2,920
others, and wrongly 1 close and 2 loose restatements. Another embedding model needs its own
fit."""

SIMILARITY_REVIEW: dict[str, float] = {"dedupe": 0.28}
"""The similarity judge's own review thresholds, per pass, used while
``dream.thresholds.<pass>`` is left at its default (:meth:`SimilarityJudge.review_threshold`;
the reference's 0.6 stays for every other judge and pass). ``dedupe``: the ``sameFact`` that
90% of the calibration's duplicates reach (benchmarks/similarity_calibration.py, on the pairs
:data:`SIMILARITY_CALIBRATION` is fitted on; those :func:`claim_mismatch` tells apart count as
missed). The judge only flags (reference/algorithms.md §4.3), and a flag costs a person a
look: at the reference's 0.6, set for a calibrated judge's review band below its act band, it
missed a third of the duplicates of the consolidation benchmark."""

MISMATCH_CAP = 0.1  # the same cap as ynm.dream.heuristic.MISMATCH_CAP
"""``sameFact`` at most this when :func:`claim_mismatch` finds a difference (below every
dedupe band: such a pair is never flagged as a duplicate)."""

PAIR_QUESTIONS = ("sameFact", "relation")

# -- claim mismatch: what a cosine cannot see --------------------------------------------------

_NUMBER = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?(?:[-/:]\d+)*(?:k\b)?", re.IGNORECASE)
_TOKEN = re.compile(r"[#@$]?[^\W_](?:[\w'’./#-]*[^\W_])?|[.!?;]")
_SENTENCE = re.compile(r"(?<=[.!?;])\s+|\n+")
_FUNCTION_WORDS = frozenset((
    "a", "an", "the", "and", "or", "but", "if", "then", "else", "of", "to", "in", "on", "at",
    "by", "for", "with", "from", "into", "onto", "over", "under", "about", "as", "is", "are",
    "was", "were", "be", "been", "being", "am", "do", "does", "did", "has", "have", "had",
    "it", "its", "this", "that", "these", "those", "there", "here", "their", "they", "them",
    "we", "us", "our", "you", "your", "he", "she", "his", "her", "i", "me", "my", "so", "than",
    "too", "very", "can", "could", "should", "would", "may", "might", "must", "will", "shall",
    "just", "also", "only", "any", "some", "all", "each", "every", "both", "either", "per",
    "via", "up", "down", "out", "off", "once", "s", "t",
))
SWAP_SPAN = 4
"""A swapped span is at most this many tokens on each side."""
SWAP_FRAME = 0.6
"""The tokens two sentences share, in order, are at least this share of each."""


def numbers_of(text: str) -> set[float | str]:
    """The numbers ``text`` states, normalised: ``50,000`` and ``50k`` are 50000.0, ``45s``
    is 45.0, ``3.12`` is 3.12; a date or version joined by ``-``, ``/`` or ``:`` is one value
    (``2026-09-07`` is ``"2026-9-7"``), except a whole hour (``02:00`` is 2.0, as ``2am``).
    Digits that follow a letter or a dot inside a word are no number (``S3``, ``r6g``), digits
    after a hyphen are (``eu-west-1`` states 1)."""
    out: set[float | str] = set()
    for match in _NUMBER.finditer(text):
        token = match.group(0).lower()
        scale = 1000.0 if token.endswith("k") else 1.0
        token = token.rstrip("k")
        if re.search(r"\d[-/:]\d", token):
            parts = [int(x) for x in re.split(r"[-/:]", token)]
            if len(parts) == 2 and ":" in token and parts[1] == 0:
                out.add(float(parts[0]))
            else:
                out.add("-".join(map(str, parts)))
            continue
        if re.fullmatch(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?", token):
            token = token.replace(",", "")
        else:
            token = token.split(",")[0]
        out.add(float(token) * scale)
    return out


def _sentences(text: str) -> list[list[str]]:
    return [[t.lower() for t in _TOKEN.findall(s)] for s in _SENTENCE.split(text) if s.strip()]


def _names(text: str) -> set[str]:
    """Words capitalised inside a sentence (not its first word): names such as ``Priya``,
    ``DynamoDB``, ``Kubernetes``, lowercased."""
    out: set[str] = set()
    for sentence in _SENTENCE.split(text):
        words = sentence.split()
        for word in words[1:]:
            word = word.strip("\"'`()[]{},;:!?.")
            if any(c.isupper() for c in word) and any(c.isalpha() for c in word):
                out.add(word.lower())
    return out


def _swapped(a: list[str], b: list[str]) -> bool:
    """Whether sentences ``a`` and ``b`` (tokens) are one frame with a value swapped: the
    tokens they share in order (difflib) are at least :data:`SWAP_FRAME` of each, and one
    replaced span of at most :data:`SWAP_SPAN` tokens on each side holds a word that is no
    function word on both sides, and is not the same words reworded (every such word a form
    of one on the other side, :func:`_variant`: ``to rotate the database`` / ``rotating the
    db`` is a restatement) (``the magpie scheduler reads ...`` / ``the magpie cli reads
    ...``; ``... end up in Cassandra.`` / ``... end up in MongoDB.``)."""
    from difflib import SequenceMatcher

    if not a or not b or a == b:
        return False
    ops = SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
    shared = sum(i2 - i1 for op, i1, i2, _, _ in ops if op == "equal")
    if shared < SWAP_FRAME * len(a) or shared < SWAP_FRAME * len(b):
        return False

    def meaningful(span: list[str]) -> bool:
        return any(t[0].isalnum() and t not in _FUNCTION_WORDS for t in span)

    def reworded(x: list[str], y: list[str]) -> bool:
        # every word that carries meaning on each side is a form of a word on the other
        def covered(p: list[str], q: list[str]) -> bool:
            return all(any(_variant(s, t) for t in q)
                       for s in p if s[0].isalnum() and s not in _FUNCTION_WORDS)
        return covered(x, y) and covered(y, x)

    return any(op == "replace" and i2 - i1 <= SWAP_SPAN and j2 - j1 <= SWAP_SPAN
               and meaningful(a[i1:i2]) and meaningful(b[j1:j2])
               and not reworded(a[i1:i2], b[j1:j2])
               for op, i1, i2, j1, j2 in ops)


VARIANT_STEM = 4
"""Two words sharing their first this many letters are one word reworded (``rotate`` /
``rotating``), not a swapped value."""


def _variant(x: str, y: str) -> bool:
    """Whether words ``x`` and ``y`` (lowercase) are forms of one word rather than two
    values: the same first :data:`VARIANT_STEM` letters (``rotate``/``rotating``,
    ``deploy``/``deployed``), or the shorter, of at most 4 letters, an abbreviation of the
    longer (same first letter, its letters in order: ``db``/``database``, ``cfg``/``config``).
    Numbers are never variants (``100``/``1000`` differ)."""
    if x == y:
        return True
    if any(c.isdigit() for c in x + y):
        return False
    if len(x) >= VARIANT_STEM and len(y) >= VARIANT_STEM and x[:VARIANT_STEM] == y[:VARIANT_STEM]:
        return True
    short, long_ = sorted((x, y), key=len)
    if len(short) > 4 or len(short) < 2 or short[0] != long_[0] or len(long_) <= len(short):
        return False
    rest = iter(long_)
    return all(c in rest for c in short)


def claim_mismatch(a: Any, b: Any) -> list[str]:
    """Why two memory briefs (``{summary, content, subject, ...}``) cannot state the same
    fact however near their vectors are, as reasons (empty: nothing found). An embedding
    cosine sees topic and wording, not the values a claim turns on, so "the timeout is 30
    seconds" and "the timeout is 90 seconds" are nearer than most restatements. In order:

    - ``subject``: both have a subject and they differ (case aside);
    - ``numbers``: each states a number the other does not (:func:`numbers_of`; one side
      holding more numbers than the other is a more detailed restatement, not a mismatch);
    - ``negation``: exactly one is negated (the heuristic judge's negation words,
      :func:`ynm.dream.heuristic.negated`): a negated restatement is a contradiction;
    - ``names``: each holds a capitalised name inside a sentence that the other does not hold
      in any case (``... persists to Cassandra`` / ``... stores its data in DynamoDB``);
    - ``swap``: a sentence of each is one frame with a value swapped (:func:`_swapped`).

    Known misses: a paraphrase that swaps a verb inside an otherwise equal sentence ("built
    with Vite and deployed to" / "build ... with Vite and host it on") counts as a swap, and a
    negation paraphrased without a negation word ("avoid Fridays" / "don't deploy on
    Fridays") as a mismatch; a changed value with no number, name or shared frame is not
    seen. Source: ours (the similarity judge), measured by benchmarks/consolidation.py.
    """
    from ynm.dream.heuristic import negated

    if not isinstance(a, dict) or not isinstance(b, dict):
        return []
    ta = f"{a.get('content') or ''}"
    tb = f"{b.get('content') or ''}"
    why: list[str] = []
    sa, sb = a.get("subject"), b.get("subject")
    if isinstance(sa, str) and isinstance(sb, str) and sa.strip() and sb.strip() \
            and sa.strip().lower() != sb.strip().lower():
        why.append("subject")
    na, nb = numbers_of(ta), numbers_of(tb)
    if na - nb and nb - na:
        why.append("numbers")
    if negated(ta) != negated(tb):
        why.append("negation")
    la, lb = ta.lower(), tb.lower()
    if any(n not in lb for n in _names(ta)) and any(n not in la for n in _names(tb)):
        why.append("names")
    if any(_swapped(x, y) for x in _sentences(ta) for y in _sentences(tb)):
        why.append("swap")
    return why




def _logistic(c: float, ab: tuple[float, float]) -> float:
    a, b = ab
    return 1.0 / (1.0 + math.exp(-(a * c + b)))


def same_fact_probability(cosine: float) -> float:
    """P(same fact) for a centred cosine, by :data:`SIMILARITY_CALIBRATION`."""
    return _logistic(cosine, SIMILARITY_CALIBRATION["sameFact"])


def _relation(cosine: float, mismatch: bool = False) -> Answer:
    """The 3-level ``relation`` answer (0 different things, 1 same subject with different
    claims, 2 the same thing) from the two calibrated curves; with a claim mismatch the
    "same thing" share (capped at :data:`MISMATCH_CAP`) goes to level 1."""
    same = same_fact_probability(cosine)
    subject = max(same, _logistic(cosine, SIMILARITY_CALIBRATION["sameSubject"]))
    if mismatch:
        same = min(same, MISMATCH_CAP)
    probs = [1.0 - subject, subject - same, same]
    level = max(range(3), key=lambda i: probs[i])
    return Answer(type="score", score=level, probabilities=probs, confidence=probs[level])


Vectors = Callable[[Any], "tuple[Any, Any] | None"]


class SimilarityJudge:
    """Our embedding judge (uncalibrated: it flags, never acts; dedupe flags at its own review
    threshold, :data:`SIMILARITY_REVIEW`, unless ``dream.thresholds.dedupe`` is configured).

    For a pair state ``{"a": brief, "b": brief}`` (reference/algorithms.md §4.5; a brief
    holds ``summary`` and ``content`` and no memory id) it answers ``sameFact`` and
    ``relation`` from the cosine of the two memories' vectors after both are moved by the
    mount's centroid (as recall's vector search moves them, ynm.index.search.centroid), mapped
    to probabilities by :data:`SIMILARITY_CALIBRATION`. When :func:`claim_mismatch` finds
    that the two claims differ (subject, numbers, negation, names or a swapped value),
    ``sameFact`` is at most :data:`MISMATCH_CAP` and ``relation`` at most "same subject,
    different claims". Every other question, and every
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

    def review_threshold(self, pass_name: str, judgment: Judgment) -> float | None:
        """This judge's review threshold for ``pass_name`` (:data:`SIMILARITY_REVIEW`) when
        ``judgment`` was answered from the vectors, else None (the configured band applies;
        an answer of the fallback is the heuristic's word overlap, banded as the heuristic's).
        The dream engine asks it while ``dream.thresholds.<pass>`` is left at its default
        (ynm.dream.engine.Run.thresholds)."""
        if not judgment.model.startswith(self.model):
            return None
        return SIMILARITY_REVIEW.get(pass_name)

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
        mismatch = bool(claim_mismatch(state.get("a"), state.get("b")))
        answers: dict[str, Answer] = {}
        if "sameFact" in questions:
            p = same_fact_probability(c)
            answers["sameFact"] = Answer(type="noul",
                                         noul=min(p, MISMATCH_CAP) if mismatch else p)
        if "relation" in questions:
            answers["relation"] = _relation(c, mismatch)
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
