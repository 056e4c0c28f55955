"""Streamable HTTP for ``ynm serve --http``: the front door in front of the SDK's handler
(reference/server.md §2.2, §2.3, §2.5).

Order of checks, as the reference: ``GET /health`` (no auth) → CORS headers prepared →
``OPTIONS`` answered 204 → Host header → Origin header → bearer token → the MCP handler at
``/mcp`` (stateless: no server-side sessions; one service per process).

Auth modes here: ``bearer`` (a static token from ``--token`` or ``YNM_MCP_TOKEN``, a comma
list for rotation; compared by SHA-256) and ``none``. A write made with the static token
carries ``provenance.actor`` ``token:static``. The front door's two questions, whether a
request may pass (``token_ok``) and who it writes as (``actor_for``), are the seam a JWT/OIDC
mode plugs into later (a verifier answering them from a validated token's claims:
``user:<person id>`` or ``client:<client id>``, reference/server.md §2.3-§2.5).
"""

from __future__ import annotations

import hashlib
import hmac
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ynm.server.app import MemoryService, build_server

STATIC_ACTOR = "token:static"
LOCAL_HOSTS = ("localhost", "127.0.0.1", "[::1]")
ALLOW_METHODS = "GET, POST, DELETE, OPTIONS"
ALLOW_HEADERS = ("Content-Type, Authorization, MCP-Protocol-Version, Mcp-Method, Mcp-Name, "
                 "Mcp-Session-Id")


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


@dataclass
class FrontDoor:
    """Settings of the checks before the MCP handler.

    Attributes:
        tokens: accepted static bearer tokens (empty: auth mode ``none``).
        allowed_hosts: Host header names (with or without port); ``*`` turns the check off.
        allowed_origins: browser Origins allowed besides loopback ones.
    """

    tokens: list[str] = field(default_factory=list)
    allowed_hosts: list[str] = field(default_factory=list)
    allowed_origins: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._hashes = {_digest(t) for t in self.tokens if t}

    @property
    def auth_mode(self) -> str:
        """``bearer`` with a static token, else ``none``."""
        return "bearer" if self._hashes else "none"

    def token_ok(self, authorization: str | None) -> bool:
        """True when no token is required or the header carries an accepted one."""
        if not self._hashes:
            return True
        if not authorization or not authorization[:7].lower() == "bearer ":
            return False
        presented = _digest(authorization[7:].strip())
        return any(hmac.compare_digest(presented, h) for h in self._hashes)

    def actor_for(self, headers: Mapping[str, str] | None) -> str | None:
        """``token:static`` for a request that presented the static token, else None (the
        service's own actor)."""
        if headers is None or not self._hashes:
            return None
        auth = headers.get("authorization") or headers.get("Authorization")
        return STATIC_ACTOR if self.token_ok(auth) else None

    def host_ok(self, host: str | None) -> bool:
        """The Host header names loopback or an allowed host (any port)."""
        if "*" in self.allowed_hosts:
            return True
        if not host:
            return False
        name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
        allowed = {*LOCAL_HOSTS, *self.allowed_hosts}
        return host in allowed or name in allowed

    def origin_ok(self, origin: str | None) -> bool:
        """No Origin (not a browser), a loopback origin, or an allowed one."""
        if not origin:
            return True
        if origin in self.allowed_origins or "*" in self.allowed_origins:
            return True
        from urllib.parse import urlsplit

        parts = urlsplit(origin)
        host = parts.hostname or ""
        return parts.scheme in ("http", "https") and (
            host in ("localhost", "127.0.0.1", "::1"))


async def _send_json(send: Any, status: int, body: Any,
                     headers: list[tuple[bytes, bytes]] | None = None) -> None:
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(data)).encode()), *(headers or [])]})
    await send({"type": "http.response.body", "body": data})


def build_http_app(service: MemoryService, door: FrontDoor) -> Any:
    """The ASGI app: the front door around the SDK's streamable HTTP app (path ``/mcp``)."""
    from mcp.server.transport_security import TransportSecuritySettings

    server = build_server(service, door.actor_for)
    inner = server.streamable_http_app(
        streamable_http_path="/mcp", stateless_http=True, json_response=True,
        # Host and Origin are checked below, with ynm's rules (--allow-host, --allow-origin)
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await inner(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope.get("headers", [])}
        method, path = scope["method"], scope["path"]
        if method == "GET" and path == "/health":
            await _send_json(send, 200, {"status": "ok", "name": "ynm", "auth": door.auth_mode})
            return
        cors = [(b"access-control-allow-methods", ALLOW_METHODS.encode()),
                (b"access-control-allow-headers", ALLOW_HEADERS.encode())]
        origin = headers.get("origin")
        if origin and door.origin_ok(origin):
            cors += [(b"access-control-allow-origin", origin.encode()), (b"vary", b"Origin")]
        if method == "OPTIONS":
            await send({"type": "http.response.start", "status": 204, "headers": cors})
            await send({"type": "http.response.body", "body": b""})
            return
        if not door.host_ok(headers.get("host")):
            await _send_json(send, 421, {"error": "invalid_host",
                                         "error_description": "Host header not allowed"}, cors)
            return
        if not door.origin_ok(origin):
            await _send_json(send, 403, {"error": "invalid_origin",
                                         "error_description": "Origin not allowed"}, cors)
            return
        if not door.token_ok(headers.get("authorization")):
            await _send_json(send, 401, {"error": "invalid_token",
                                         "error_description": "Missing or invalid bearer token"},
                             [*cors, (b"www-authenticate",
                                      b'Bearer error="invalid_token", '
                                      b'error_description="Missing or invalid bearer token"')])
            return

        async def send_with_cors(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *cors]}
            await send(message)

        await inner(scope, receive, send_with_cors)

    return app


def serve_http(service: MemoryService, door: FrontDoor, host: str, port: int) -> None:
    """Run uvicorn until SIGINT/SIGTERM; logs go to stderr."""
    import uvicorn

    from ynm.server.app import log

    app = build_http_app(service, door)
    shown = f"[{host}]" if ":" in host else host
    log(f"ynm-mcp listening on http://{shown}:{port}/mcp (health: http://{shown}:{port}/health)")
    log(f"ynm-mcp auth: {door.auth_mode}")
    uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning",
                                  lifespan="on")).run()
