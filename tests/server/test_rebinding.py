"""Every endpoint of ``ynm serve --http`` honours the Host and Origin checks, health and
preflights included (reference/server.md §6, DNS rebinding; ynm checks them before answering
``/health`` and ``OPTIONS``, unlike the reference's §2.2 order). Driven in-process through the
ASGI app, no server started."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.server.conftest import run
from ynm.server.app import MemoryService
from ynm.server.http import FrontDoor, build_http_app


def _request(app: Any, method: str, path: str, headers: dict[str, str]) -> tuple[int, dict]:
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    scope = {"type": "http", "method": method, "path": path, "scheme": "http",
             "headers": [(k.lower().encode(), v.encode()) for k, v in headers.items()]}
    run(lambda: app(scope, receive, send))
    start = sent[0]
    body = b"".join(m.get("body", b"") for m in sent[1:])
    return start["status"], json.loads(body) if body else {}


@pytest.fixture
def app(project):
    svc = MemoryService(project)
    yield build_http_app(svc, FrontDoor(tokens=["t0ken"], allowed_hosts=["devbox"],
                                        allowed_origins=["https://app.example.com"]))
    svc.close()


@pytest.mark.parametrize("method,path", [("GET", "/health"), ("OPTIONS", "/mcp"),
                                         ("OPTIONS", "/health"), ("POST", "/mcp"),
                                         ("GET", "/elsewhere")])
@pytest.mark.parametrize("host", ["evil.example", "evil.example:3000", "", "localhost.evil.com"])
def test_a_host_not_allowed_is_refused_on_every_endpoint(app, method, path, host):
    status, body = _request(app, method, path, {"Host": host} if host else {})
    assert (status, body["error"]) == (421, "invalid_host")


@pytest.mark.parametrize("method,path", [("GET", "/health"), ("OPTIONS", "/mcp"),
                                         ("POST", "/mcp")])
@pytest.mark.parametrize("origin", ["https://evil.example", "http://localhost.evil.com:80"])
def test_an_origin_not_allowed_is_refused_on_every_endpoint(app, method, path, origin):
    status, body = _request(app, method, path, {"Host": "localhost:3000", "Origin": origin})
    assert (status, body["error"]) == (403, "invalid_origin")


@pytest.mark.parametrize("headers", [
    {"Host": "localhost:3000"}, {"Host": "127.0.0.1:9"}, {"Host": "devbox:1"},
    {"Host": "localhost:3000", "Origin": "https://app.example.com"},
    {"Host": "[::1]:3000", "Origin": "http://localhost:5173"},
])
def test_health_answers_allowed_hosts_and_origins_without_a_token(app, headers):
    assert _request(app, "GET", "/health", headers) == (
        200, {"status": "ok", "name": "ynm", "auth": "bearer", "scheduler": None})
    assert _request(app, "OPTIONS", "/mcp", headers)[0] == 204
    assert _request(app, "POST", "/mcp", headers)[0] == 401  # the token is still needed


def test_a_port_in_use_is_refused_before_listening(project, cli_run):
    import socket

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        result = cli_run("serve", "--http", "--host", "127.0.0.1", "--port", port,
                         "--token", "t")
    assert result.exit_code == 1
    assert "listening" not in result.stderr
    assert result.stdout == ""
    assert result.stderr.endswith(f"Error: cannot listen on 127.0.0.1:{port}: address in use; "
                                  "pass another --port, or stop what is using it\n")
