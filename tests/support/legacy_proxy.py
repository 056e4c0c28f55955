"""A handshake-era MCP store for tests: an HTTP proxy on 127.0.0.1 in front of a real ``ynm
serve --http`` that refuses every request of the modern (sessionless) protocol the way a
server that predates it does (HTTP 400, JSON-RPC ``-32600`` "no valid session"), and forwards
everything else - the ``initialize`` handshake and the calls after it - unchanged."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx

MODERN = ("2026-07-28",)
HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "host",
              "content-encoding"}


@contextmanager
def legacy_proxy(upstream: str) -> Iterator[tuple[str, list[str]]]:
    """Serve the proxy for ``upstream`` (a base url such as ``http://127.0.0.1:PORT``).
    Yields ``(base url of the proxy, log)``, the log holding one ``"<method> <verdict>"`` line
    per request (``refused`` or the upstream's status), so a test sees which protocol was
    spoken."""
    log: list[str] = []
    client = httpx.Client(timeout=30)

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args: object) -> None:  # quiet
            pass

        def _relay(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            version = self.headers.get("mcp-protocol-version", "")
            if version in MODERN:
                payload = json.dumps({"jsonrpc": "2.0", "id": None, "error": {
                    "code": -32600, "message": "Bad Request: No valid session ID provided"}})
                log.append(f"{self.command} refused")
                self._answer(400, {"content-type": "application/json"}, payload.encode())
                return
            headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
            response = client.request(self.command, upstream + self.path, content=body,
                                      headers=headers)
            log.append(f"{self.command} {response.status_code}")
            kept = {k: v for k, v in response.headers.items() if k.lower() not in HOP_BY_HOP}
            self._answer(response.status_code, kept, response.content)

        def _answer(self, status: int, headers: dict[str, str], body: bytes) -> None:
            self.send_response(status)
            for key, value in headers.items():
                self.send_header(key, value)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_GET = do_POST = do_DELETE = _relay

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", log
    finally:
        server.shutdown()
        server.server_close()
        client.close()
