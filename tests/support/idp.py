"""A small identity provider on 127.0.0.1 for tests: a JWK set at ``/jwks`` (keys that can be
rotated), an RFC 7662 introspection endpoint at ``/introspect`` (HTTP Basic client
credentials, answers set per token) and tokens minted with joserfc. No pytest needed here."""

from __future__ import annotations

import base64
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs

ISSUER = "https://idp.example"
AUDIENCE = "https://mem.example/mcp"
CLIENT_ID = "ynm-server"
CLIENT_SECRET = "s3cret-client"


def new_key(kid: str) -> Any:
    """A fresh RSA signing key with ``kid``."""
    from joserfc.jwk import RSAKey

    return RSAKey.generate_key(2048, parameters={"kid": kid, "use": "sig"})


class Idp:
    """The provider. Attributes:

    Attributes:
        keys: the signing keys the JWK set publishes (newest last).
        introspection: token -> the introspection answer (absent: ``{"active": false}``).
        jwks_requests, introspection_requests: how often each endpoint was asked.
        jwks_status: the status ``/jwks`` answers with (200: the set).
    """

    def __init__(self) -> None:
        self.keys = [new_key("k1")]
        self.introspection: dict[str, dict[str, Any]] = {}
        self.jwks_requests = 0
        self.introspection_requests = 0
        self.jwks_status = 200
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self, code: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                if self.path != "/jwks":
                    return self._answer(404, {"error": "not found"})
                owner.jwks_requests += 1
                if owner.jwks_status != 200:
                    return self._answer(owner.jwks_status, {"error": "down"})
                self._answer(200, {"keys": [k.as_dict(private=False) for k in owner.keys]})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if self.path != "/introspect":
                    return self._answer(404, {"error": "not found"})
                owner.introspection_requests += 1
                want = base64.b64encode(f"{CLIENT_ID}:{CLIENT_SECRET}".encode()).decode()
                if self.headers.get("Authorization") != f"Basic {want}":
                    return self._answer(401, {"error": "invalid_client"})
                form = parse_qs(raw.decode())
                token = (form.get("token") or [""])[0]
                self._answer(200, owner.introspection.get(token, {"active": False}))

            def log_message(self, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

        self._server = Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def jwks_url(self) -> str:
        return self.url + "/jwks"

    @property
    def introspection_url(self) -> str:
        return self.url + "/introspect"

    def jwt_env(self, **extra: str) -> dict[str, str]:
        """The variables of JWT mode against this provider."""
        return {"YNM_JWKS_URL": self.jwks_url, "YNM_JWT_ISSUER": ISSUER,
                "YNM_JWT_AUDIENCE": AUDIENCE, **extra}

    def introspection_env(self, **extra: str) -> dict[str, str]:
        """The variables of introspection mode against this provider."""
        return {"YNM_OAUTH_INTROSPECTION_URL": self.introspection_url,
                "YNM_OAUTH_CLIENT_ID": CLIENT_ID, "YNM_OAUTH_CLIENT_SECRET": CLIENT_SECRET,
                **extra}

    def rotate(self, kid: str, *, keep_old: bool = False) -> Any:
        """Publish a new key ``kid`` (dropping the old ones unless ``keep_old``)."""
        key = new_key(kid)
        self.keys = [*self.keys, key] if keep_old else [key]
        return key

    def mint(self, key: Any = None, *, alg: str = "RS256", header: dict[str, Any] | None = None,
             drop: tuple[str, ...] = (), **claims: Any) -> str:
        """A signed JWT: ``iss``, ``aud``, ``sub`` (``alice``), ``exp`` (in 5 minutes) and
        ``iat`` by default, overridden by ``claims``, minus the names in ``drop``; signed with
        ``key`` (default: the newest published key) and its ``kid``."""
        from joserfc import jwt

        key = key if key is not None else self.keys[-1]
        now = int(time.time())
        body = {"iss": ISSUER, "aud": AUDIENCE, "sub": "alice", "exp": now + 300, "iat": now,
                **claims}
        for name in drop:
            body.pop(name, None)
        head = {"alg": alg, "kid": key.kid, **(header or {})}
        head = {k: v for k, v in head.items() if v is not None}  # {"kid": None}: no kid
        return jwt.encode(head, body, key, algorithms=[alg])

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
