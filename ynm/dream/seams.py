"""The judge and writer seams of consolidation, and the types that cross them.

A **judge** answers questions about a state (a pair of memories, a draft against its sources):
yes/no questions as a probability (``noul``), a pick among named options (``choice``) or a level
on an ordered scale (``score``). A **writer** turns instructions and a state into a value that
validates against a pydantic model (merged text, a reflection). Passes depend on these two
protocols only; the implementations (heuristic, similarity, writer-emulated, typesafe; none,
claude-cli, openai-compatible) live in their own modules.

Everything here is synchronous: a pass asks one question set at a time and the CLI has no event
loop. Source: reference/algorithms.md §4.3, §4.13, §4.16 and §4.17.
"""

from __future__ import annotations

from typing import Any, Generic, Literal, Protocol, TypeVar, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from ynm.errors import YnmError

__all__ = [
    "Answer",
    "Band",
    "Judge",
    "JudgeLimits",
    "Judgment",
    "ModelUnavailable",
    "Question",
    "StructuredOutputError",
    "Usage",
    "Writer",
    "Written",
    "band",
]

Band = Literal["act", "review", "ignore"]


class ModelUnavailable(YnmError):
    """A judge or writer cannot answer now: the ``none`` writer, a missing key, HTTP 429/529, a
    network error, a timeout or a spent token budget. Passes catch it and take their no-model
    fallback (reported as ``fallback: true``); it never fails a dream run."""


class StructuredOutputError(YnmError):
    """A writer's answer failed validation twice (the first try and the one retry that carries
    the validation issues). ``issues`` holds the last attempt's ``path: message`` lines."""

    def __init__(self, message: str, issues: list[str] | None = None) -> None:
        super().__init__(message)
        self.issues = issues or []


class Usage(BaseModel):
    """Tokens a model call consumed (``inputTokens``, ``outputTokens``), summed over retries."""

    model_config = ConfigDict(populate_by_name=True)

    input_tokens: int = Field(default=0, alias="inputTokens")
    output_tokens: int = Field(default=0, alias="outputTokens")

    def __add__(self, other: Usage) -> Usage:
        return Usage(input_tokens=self.input_tokens + other.input_tokens,
                     output_tokens=self.output_tokens + other.output_tokens)


class Question(BaseModel):
    """One question put to a judge, keyed by its catalogue id (§4.16) in a question set.

    - ``noul``: ``criteria`` is ``{"true": str, "false": str}`` or None; answered by ``noul``.
    - ``choice``: ``criteria`` maps each option key to its description; answered by ``choice``.
    - ``score``: ``criteria`` lists the levels' descriptions, level ``i`` = index ``i``.
    """

    type: Literal["noul", "choice", "score"]
    instructions: str
    criteria: Any = None


class Answer(BaseModel):
    """A judge's answer to one question. ``noul`` is P(true) in 0..1; ``choice`` is the chosen
    key with ``probabilities`` per key; ``score`` is the chosen level with ``probabilities`` per
    level (a list) and ``legend`` (the level's text); ``confidence`` is 0..1."""

    type: Literal["noul", "choice", "score"]
    noul: float | None = None
    choice: str | None = None
    score: int | None = None
    legend: str | None = None
    probabilities: dict[str, float] | list[float] | None = None
    confidence: float | None = None


class Judgment(BaseModel):
    """A judge's answers to one question set: ``answers`` by question id, the ``model`` that
    answered, whether the answers are ``calibrated`` probabilities, and ``usage`` if known."""

    answers: dict[str, Answer]
    model: str
    calibrated: bool
    usage: Usage | None = None


class JudgeLimits(BaseModel):
    """What a judge accepts, in estimated tokens (``ceil(len(json) / 4)``): the state alone,
    the whole request, and the most options a ``choice`` question may offer."""

    state_tokens: int
    request_tokens: int
    max_choices: int


@runtime_checkable
class Judge(Protocol):
    """The judge seam (§4.17). ``name`` identifies the judge in reports and in the dream mark's
    version (so a change of judge re-judges everything); ``calibrated`` is a property of the
    implementation (only ``typesafe`` is) and gates the act band, the recall reranker and the
    write-path judge.

    ``judge`` answers every question in ``questions`` about ``state`` (JSON-shaped) or raises
    :class:`ModelUnavailable`; an answer missing for any id is an error of the implementation.
    """

    name: str
    calibrated: bool

    def judge(self, state: Any, questions: dict[str, Question]) -> Judgment: ...

    def limits(self) -> JudgeLimits: ...


T = TypeVar("T", bound=BaseModel)


class Written(BaseModel, Generic[T]):
    """A writer's validated ``value``, the ``model`` that wrote it and ``usage`` if known."""

    value: T
    model: str
    usage: Usage | None = None


@runtime_checkable
class Writer(Protocol):
    """The writer seam (§4.17): produce a value of ``schema`` from ``instructions`` and a JSON
    ``state``. Raises :class:`ModelUnavailable` when it cannot call a model (the ``none``
    writer always does) and :class:`StructuredOutputError` after two invalid answers."""

    name: str

    def write(self, instructions: str, state: Any, schema: type[T],
              schema_name: str | None = None) -> Written[T]: ...


def band(p: float, act: float, review: float, calibrated: bool) -> Band:
    """Which band a probability ``p`` falls in: ``act`` at or above ``act`` (only for a
    calibrated judge; an uncalibrated one gets ``review`` there, so it can only flag),
    ``review`` at or above ``review``, else ``ignore``. Source: reference/algorithms.md §4.3."""
    if p >= act:
        return "act" if calibrated else "review"
    if p >= review:
        return "review"
    return "ignore"
