"""A JSON-over-HTTP server on 127.0.0.1 for tests and benchmarks (no pytest needed here): the
shared scaffolding of the fake model endpoints (tests/dream/fakes.py) and the fake embeddings
server (tests/support/embeddings_server.py)."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Verdict = Callable[[dict[str, Any]], "dict[str, Any] | tuple[int, Any]"]

__all__ = ["FakeServer", "Verdict"]


class FakeServer:
    """A JSON-over-HTTP server on a free port of 127.0.0.1 answering POSTs to paths ending in
    ``path`` with ``verdict(body)``; other paths get 404.

    Attributes:
        seen: request bodies (parsed JSON), in order.
        headers: request headers (lower-cased names), in order.
        paths: request paths, in order.
    """

    path = "/"

    def __init__(self, verdict: Verdict) -> None:
        self.verdict = verdict
        self.seen: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.paths: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                body = json.loads(raw or b"null")
                owner.seen.append(body)
                owner.headers.append({k.lower(): v for k, v in self.headers.items()})
                owner.paths.append(self.path)
                if not self.path.endswith(owner.path):
                    code, payload = 404, {"error": {"message": f"no route {self.path}"}}
                else:
                    try:
                        out = owner.verdict(body)
                    except Exception as err:  # noqa: BLE001 (a broken verdict answers 500)
                        out = (500, {"error": {"message": f"{type(err).__name__}: {err}"}})
                    code, payload = out if isinstance(out, tuple) else (200, out)
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass

        self._server = Server(("127.0.0.1", 0), Handler)
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>``."""
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def start(self) -> FakeServer:
        """Serve in a daemon thread; returns self."""
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving and free the port."""
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
