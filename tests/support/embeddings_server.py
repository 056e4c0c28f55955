"""A real OpenAI-compatible embeddings server on 127.0.0.1 for tests.

``POST /v1/embeddings`` with ``{"model", "input": [...]}`` answers ``{"data": [{"index",
"embedding"}], "model"}``. Each vector is derived from the sha256 of the text, so the same text
always gets the same vector for a given dimension. The test can switch the dimension (``dim``),
make the server answer 500 or 404 (``fail``), answer late (``delay``) or stop it; every request
is logged in ``seen``.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


def hash_vector(text: str, dim: int) -> list[float]:
    """A deterministic, non-negative vector of ``dim`` floats for ``text`` (not normalised)."""
    digest = b""
    counter = 0
    while len(digest) < dim:
        digest += hashlib.sha256(f"{counter}:{text}".encode()).digest()
        counter += 1
    return [b + 1.0 for b in digest[:dim]]


class EmbeddingsServer:
    """The server, started on a free port of 127.0.0.1 by :meth:`start`.

    Attributes:
        dim: the length of the vectors it returns (switch it at any time).
        fail: None to answer, or an HTTP status (e.g. 404 "model not found") to fail with.
        delay: seconds to wait before answering (a client with a shorter timeout gives up).
        seen: the JSON bodies of the requests, in order.
    """

    def __init__(self, dim: int = 8) -> None:
        self.dim = dim
        self.fail: int | None = None
        self.delay = 0.0
        self.seen: list[dict[str, Any]] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                owner.seen.append(body)
                if owner.delay:
                    time.sleep(owner.delay)
                if self.path != "/v1/embeddings" or owner.fail is not None:
                    code = 404 if self.path != "/v1/embeddings" else owner.fail
                    payload = json.dumps({"error": {"message": "model not found"}}).encode()
                else:
                    code = 200
                    data = [{"index": i, "embedding": hash_vector(text, owner.dim)}
                            for i, text in enumerate(body["input"])]
                    payload = json.dumps({"data": data, "model": body["model"]}).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that gave up (timeout) closed the socket: nothing to report

        self._server = Server(("127.0.0.1", 0), Handler)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> EmbeddingsServer:
        """Serve in a daemon thread; returns self."""
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and free the port (a later request is refused)."""
        self._server.shutdown()
        self._server.server_close()


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
