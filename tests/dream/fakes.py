"""Fake model endpoints on 127.0.0.1 for tests and benchmarks (no pytest needed here).

- :class:`FakeChatServer`: an OpenAI-compatible ``POST <base>/chat/completions`` (any path
  ending so; use ``server.url + "/v1"`` as the base URL).
- :class:`FakeTypesafeServer`: TypeSafe's ``POST /v1/systemone``.

Each takes a *verdict* function called with the request's JSON body, returning either the
response JSON (HTTP 200) or ``(status, response JSON)``. Every request is logged in ``seen``
(bodies) and ``headers`` (lower-cased names). Use as a context manager, or ``start()`` /
``stop()``::

    with FakeChatServer(lambda req: chat_reply('{"text": "ok"}')) as server:
        writer = OpenAICompatibleWriter(server.url + "/v1", "m")

Helpers build common answers: :func:`chat_reply`, :func:`typesafe_reply`, and
:func:`answers_from` (a typesafe verdict answering from fixed values per question id).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tests.support.http_fake import FakeServer, Verdict

__all__ = [
    "FakeChatServer",
    "FakeServer",
    "FakeTypesafeServer",
    "answers_from",
    "chat_reply",
    "typesafe_reply",
]


class FakeChatServer(FakeServer):
    """OpenAI-compatible chat completions: the verdict gets ``{model, messages, temperature,
    response_format}``; answer with :func:`chat_reply`. ``prompts`` lists the user messages."""

    path = "/chat/completions"

    @property
    def prompts(self) -> list[str]:
        """The user message of every request, in order."""
        return [b["messages"][-1]["content"] for b in self.seen]


class FakeTypesafeServer(FakeServer):
    """TypeSafe ``/v1/systemone``: the verdict gets ``{state, model, questions}``; answer
    with :func:`typesafe_reply` or use :func:`answers_from`."""

    path = "/v1/systemone"


def chat_reply(content: str, *, model: str = "fake-chat", prompt_tokens: int | None = 10,
               completion_tokens: int = 5) -> dict[str, Any]:
    """A chat completion whose message is ``content`` (usage left out when
    ``prompt_tokens`` is None)."""
    out: dict[str, Any] = {
        "id": "chatcmpl-fake", "object": "chat.completion", "model": model,
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": content}}],
    }
    if prompt_tokens is not None:
        out["usage"] = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                        "total_tokens": prompt_tokens + completion_tokens}
    return out


def typesafe_reply(answers: dict[str, Any], *, model: str = "jev-fake",
                   input_tokens: int = 100) -> dict[str, Any]:
    """A ``/v1/systemone`` response: ``{model, answers, usage}``."""
    return {"model": model, "answers": answers,
            "usage": {"input_tokens": input_tokens, "output_tokens": 0}}


def _answer(question: dict[str, Any], value: Any) -> dict[str, Any]:
    kind = question["type"]
    if kind == "noul":
        return {"type": "noul", "noul": float(value)}
    if kind == "choice":
        keys = list(question.get("criteria") or {})
        return {"type": "choice", "choice": value, "confidence": 0.9,
                "probabilities": {k: (0.9 if k == value else 0.1 / max(1, len(keys) - 1))
                                  for k in keys}}
    levels = list(question.get("criteria") or [])
    probs = [0.9 if i == value else 0.1 / max(1, len(levels) - 1) for i in range(len(levels))]
    return {"type": "score", "score": int(value), "legend": str(levels[int(value)]),
            "probabilities": probs, "confidence": 0.9}


def answers_from(values: dict[str, Any] | Callable[[dict[str, Any], str], Any], *,
                 model: str = "jev-fake") -> Verdict:
    """A typesafe verdict answering each asked question id from ``values`` (a mapping id ->
    value, or a function ``(request, id) -> value``): a probability for a noul, the key for a
    choice, the level for a score. An id without a value is left out of the answers."""
    def verdict(request: dict[str, Any]) -> dict[str, Any]:
        out = {}
        for qid, question in request["questions"].items():
            value = values(request, qid) if callable(values) else values.get(qid)
            if value is not None:
                out[qid] = _answer(question, value)
        return typesafe_reply(out, model=model)
    return verdict
