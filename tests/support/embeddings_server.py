"""A real OpenAI-compatible embeddings server on 127.0.0.1 for tests.

``POST /v1/embeddings`` with ``{"model", "input": [...]}`` answers ``{"data": [{"index",
"embedding"}], "model"}``. Each vector is derived from the sha256 of the text, so the same text
always gets the same vector for a given dimension. The test can switch the dimension (``dim``),
make the server answer 500 or 404 (``fail``), answer late (``delay``) or stop it; every request
is logged in ``seen``.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

import pytest

from tests.support.http_fake import FakeServer


def hash_vector(text: str, dim: int) -> list[float]:
    """A deterministic, non-negative vector of ``dim`` floats for ``text`` (not normalised)."""
    digest = b""
    counter = 0
    while len(digest) < dim:
        digest += hashlib.sha256(f"{counter}:{text}".encode()).digest()
        counter += 1
    return [b + 1.0 for b in digest[:dim]]


class EmbeddingsServer(FakeServer):
    """The server, started on a free port of 127.0.0.1 by :meth:`start`
    (tests.support.http_fake.FakeServer answering ``POST /v1/embeddings``).

    Attributes:
        dim: the length of the vectors it returns (switch it at any time).
        fail: None to answer, or an HTTP status (e.g. 404 "model not found") to fail with.
        delay: seconds to wait before answering (a client with a shorter timeout gives up).
        seen: the JSON bodies of the requests, in order.
    """

    path = "/v1/embeddings"

    def __init__(self, dim: int = 8) -> None:
        self.dim = dim
        self.fail: int | None = None
        self.delay = 0.0
        super().__init__(self._answer)

    def _answer(self, body: dict[str, Any]) -> dict[str, Any] | tuple[int, Any]:
        if self.delay:
            time.sleep(self.delay)
        if self.fail is not None:
            return self.fail, {"error": {"message": "model not found"}}
        return {"data": [{"index": i, "embedding": hash_vector(text, self.dim)}
                         for i, text in enumerate(body["input"])],
                "model": body["model"]}


@pytest.fixture
def server(monkeypatch: pytest.MonkeyPatch):
    """An :class:`EmbeddingsServer` answering 8 dimensions, set as the embedder
    (``openai-compatible:m@<url>``) for the test; skipped without the vector extra."""
    pytest.importorskip("numpy")
    pytest.importorskip("sqlite_vec")
    s = EmbeddingsServer(dim=8).start()
    monkeypatch.setenv("YNM_EMBEDDER", f"openai-compatible:m@{s.url}")
    yield s
    s.stop()
