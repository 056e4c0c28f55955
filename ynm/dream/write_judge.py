"""The write-path judge: a calibrated judge reads a new memory before it is stored.

Runs inside ``remember`` when the resolved judge is calibrated (``typesafe``) and
``dream.judgeOnWrite`` is true (default), after the redaction gate passed (a secret the gate
refuses never leaves the machine). State ``{memory: {type, content[0:4000], summary or ""}}``;
questions ``importance`` (score, 5 levels 0..4, trivial to critical) and ``sensitive`` (noul:
a secret, credential, private key or personal data).

- ``sensitive >= 0.9``: the write is refused like a redaction hit, pattern ``judge:sensitive``
  (``refused: content matches 1 redaction pattern: judge:sensitive``, exit 2); nothing is
  written.
- ``importance`` becomes ``score / 4`` only when the caller's importance is 0.5 (the default or
  an explicit 0.5) and the score's ``confidence >= 0.5``.
- The judgment ``{pass: "write", model, calibrated, at, questions, answers, usage?}`` is added
  to the create record's ``data.judgments`` (a list), next to the caller's data. A caller's
  ``judgments`` that is not a list is kept as given and the judgment is not stored.
- Any other failure of the judge is swallowed: the write goes on unjudged (ours: with a
  warning saying so).

Source: reference/algorithms.md §2.11, §4.13; reference/cli.md §2, §4.20.
"""

from __future__ import annotations

from typing import Any

from ynm.dream.seams import Judge, Judgment, Question
from ynm.errors import Refused

__all__ = ["SENSITIVE_AT", "WRITE_QUESTIONS", "judge_write", "judged_fields", "stored_judgment"]

SENSITIVE_AT = 0.9
DEFAULT_IMPORTANCE = 0.5
CONTENT_CHARS = 4000
SENSITIVE_PATTERN = "judge:sensitive"

WRITE_QUESTIONS: dict[str, Question] = {
    "importance": Question(
        type="score",
        instructions="How important is this memory for the people and agents who will read "
                     "it later?",
        criteria=["trivial: not worth keeping", "minor: occasionally useful",
                  "moderate: useful context", "important: shapes future work",
                  "critical: must never be forgotten"]),
    "sensitive": Question(
        type="noul",
        instructions="Does this memory contain a secret, a credential, a private key or "
                     "personal data?",
        criteria={"true": "it holds a secret, password, token, API key, private key or "
                          "personal data about someone",
                  "false": "it holds none of these"}),
}
"""The write question set (reference/algorithms.md §4.16, set ``write``)."""


def stored_judgment(judgment: Judgment, questions: dict[str, Question], at: str,
                    pass_name: str = "write") -> dict[str, Any]:
    """A StoredJudgment (reference/algorithms.md §4.13): ``{pass, model, calibrated, at,
    questions, answers, usage?}`` as JSON; ``band`` is left to the caller."""
    out: dict[str, Any] = {
        "pass": pass_name, "model": judgment.model, "calibrated": judgment.calibrated,
        "at": at,
        "questions": {qid: q.model_dump(exclude_none=True) for qid, q in questions.items()},
        "answers": {qid: a.model_dump(exclude_none=True)
                    for qid, a in judgment.answers.items()},
    }
    if judgment.usage is not None:
        out["usage"] = judgment.usage.model_dump(by_alias=True)
    return out


def judged_fields(fields: dict[str, Any], judgment: Judgment, at: str) -> dict[str, Any]:
    """The create record's ``fields`` after the judgment: refused when sensitive, importance
    from the score when the caller left it at 0.5, the judgment added to ``data.judgments``.
    ``fields`` is not modified.

    Raises:
        Refused: ``sensitive >= 0.9``.
    """
    from ynm.service.redaction import Findings

    sensitive = judgment.answers.get("sensitive")
    if sensitive is not None and sensitive.noul is not None and sensitive.noul >= SENSITIVE_AT:
        err = Refused(Findings([], [SENSITIVE_PATTERN]).message())
        err.sample = f"p={sensitive.noul:.2f}"  # type: ignore[attr-defined]
        raise err
    out = dict(fields)
    importance = judgment.answers.get("importance")
    if (out.get("importance", DEFAULT_IMPORTANCE) == DEFAULT_IMPORTANCE
            and importance is not None and importance.score is not None
            and (importance.confidence or 0.0) >= 0.5):
        levels = len(WRITE_QUESTIONS["importance"].criteria) - 1
        out["importance"] = min(1.0, max(0.0, importance.score / levels))
    data = dict(out.get("data") or {})
    previous = data.get("judgments", [])
    if isinstance(previous, list):
        data["judgments"] = [*previous, stored_judgment(judgment, WRITE_QUESTIONS, at)]
        out["data"] = data
    return out


def judge_write(ynm: Any, fields: dict[str, Any], judge: Judge | None = None
                ) -> dict[str, Any] | None:
    """The remember hook: the create record's ``fields`` judged (see :func:`judged_fields`),
    or None when no judge ran (not calibrated, ``judgeOnWrite`` off, or the judge failed; a
    failure adds a warning to ``ynm.warnings``). ``ynm`` is the
    :class:`ynm.service.ynm.Ynm`; ``judge`` defaults to its calibrated judge.

    Raises:
        Refused: the judge finds the memory sensitive (``sensitive >= 0.9``).
    """
    if not ynm.config.dream.judge_on_write:
        return None
    if judge is None:
        from ynm.dream.resolve import service_judge

        try:
            judge = service_judge(ynm)
        except Exception as err:  # noqa: BLE001 (a bad setting must not stop a write)
            ynm.warnings.append(f"the write-path judge did not run ({err}); stored unjudged")
            return None
    if judge is None or not judge.calibrated:
        return None
    from ynm.model.ids import iso_ms

    state = {"memory": {"type": fields["type"],
                        "content": (fields.get("content") or "")[:CONTENT_CHARS],
                        "summary": fields.get("summary") or ""}}
    try:
        judgment = judge.judge(state, WRITE_QUESTIONS)
    except Exception as err:  # noqa: BLE001 (any judge error: the write goes on unjudged)
        ynm.warnings.append(f"the write-path judge did not answer ({err}); stored unjudged")
        return None
    return judged_fields(fields, judgment, iso_ms(ynm._now_ms()))
