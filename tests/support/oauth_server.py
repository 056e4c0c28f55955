"""An OAuth authorization server on 127.0.0.1 for tests of the browser sign-in: RFC 8414
metadata, dynamic client registration (RFC 7591), the authorization endpoint (redirects at
once to the client's loopback ``redirect_uri``, as a person who approves would), the token
endpoint (authorization code with PKCE S256 checked, RFC 7636; refresh tokens, rotated) and
the JWK set its access tokens (JWTs, joserfc) verify against. No pytest needed here."""

from __future__ import annotations

import base64
import hashlib
import json
import secrets
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from tests.support.idp import new_key


class AuthorizationServer:
    """The server. Attributes a test may set or read:

    Attributes:
        subject: the ``sub`` of the tokens it issues.
        scope: the scope it grants (space separated).
        lifetime: ``expires_in`` of its access tokens, seconds.
        deny: when set, the authorization endpoint redirects with this ``error``.
        refresh_ok: False: every refresh token is refused (``invalid_grant``).
        audience: the ``aud`` of its tokens (the ynm server's resource url).
        clients, codes, refresh_tokens: what it registered and issued.
        grants: ``grant_type`` of each token request, in order.
    """

    def __init__(self, audience: str) -> None:
        self.audience = audience
        self.key = new_key("as1")
        self.subject = "alice"
        self.scope = "memory:read memory:write"
        self.lifetime = 3600
        self.deny: str | None = None
        self.refresh_ok = True
        self.clients: dict[str, dict[str, Any]] = {}
        self.codes: dict[str, dict[str, Any]] = {}
        self.refresh_tokens: set[str] = set()
        self.grants: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def _json(self, code: int, body: Any) -> None:
                data = json.dumps(body).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                if parts.path == "/.well-known/oauth-authorization-server":
                    return self._json(200, owner.metadata())
                if parts.path == "/jwks":
                    return self._json(200, {"keys": [owner.key.as_dict(private=False)]})
                if parts.path == "/authorize":
                    return owner._authorize(self, {k: v[0] for k, v in
                                                   parse_qs(parts.query).items()})
                self._json(404, {"error": "not found"})

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
                if self.path == "/register":
                    return self._json(*owner._register(json.loads(raw)))
                if self.path == "/token":
                    return self._json(*owner._token({k: v[0] for k, v in
                                                     parse_qs(raw).items()}))
                self._json(404, {"error": "not found"})

            def log_message(self, *args: Any) -> None:
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True

        self._server = Server(("127.0.0.1", 0), Handler)
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    @property
    def issuer(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def jwt_env(self) -> dict[str, str]:
        """``ynm serve --http`` JWT mode against this server, advertising it as the
        authorization server of the resource ``audience``."""
        return {"YNM_JWKS_URL": self.issuer + "/jwks", "YNM_JWT_ISSUER": self.issuer,
                "YNM_JWT_AUDIENCE": self.audience}

    def metadata(self) -> dict[str, Any]:
        return {"issuer": self.issuer, "authorization_endpoint": self.issuer + "/authorize",
                "token_endpoint": self.issuer + "/token",
                "registration_endpoint": self.issuer + "/register",
                "jwks_uri": self.issuer + "/jwks", "response_types_supported": ["code"],
                "grant_types_supported": ["authorization_code", "refresh_token"],
                "code_challenge_methods_supported": ["S256"],
                "token_endpoint_auth_methods_supported": ["none"],
                "scopes_supported": self.scope.split()}

    def _register(self, meta: dict[str, Any]) -> tuple[int, dict[str, Any]]:
        client_id = "c-" + secrets.token_hex(4)
        self.clients[client_id] = meta
        return 201, {**meta, "client_id": client_id, "token_endpoint_auth_method": "none"}

    def _authorize(self, handler: BaseHTTPRequestHandler, q: dict[str, str]) -> None:
        client = self.clients.get(q.get("client_id", ""))
        redirect = q.get("redirect_uri", "")
        if client is None or redirect not in client.get("redirect_uris", []):
            handler.send_error(400, "unknown client or redirect_uri")
            return
        if q.get("code_challenge_method") != "S256" or not q.get("code_challenge"):
            answer = {"error": "invalid_request", "state": q.get("state", "")}
        elif self.deny:
            answer = {"error": self.deny, "state": q.get("state", "")}
        else:
            code = secrets.token_urlsafe(16)
            self.codes[code] = {"client_id": q["client_id"], "redirect_uri": redirect,
                                "challenge": q["code_challenge"],
                                "resource": q.get("resource")}
            answer = {"code": code, "state": q.get("state", ""), "iss": self.issuer}
        handler.send_response(302)
        handler.send_header("Location", redirect + "?" + urlencode(answer))
        handler.send_header("Content-Length", "0")
        handler.end_headers()

    def _token(self, form: dict[str, str]) -> tuple[int, dict[str, Any]]:
        grant = form.get("grant_type", "")
        self.grants.append(grant)
        if grant == "authorization_code":
            issued = self.codes.pop(form.get("code", ""), None)
            if issued is None or issued["client_id"] != form.get("client_id"):
                return 400, {"error": "invalid_grant"}
            verifier = form.get("code_verifier", "").encode()
            challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier).digest())
            if challenge.rstrip(b"=").decode() != issued["challenge"]:
                return 400, {"error": "invalid_grant", "error_description": "PKCE failed"}
        elif grant == "refresh_token":
            if not self.refresh_ok or form.get("refresh_token") not in self.refresh_tokens:
                return 400, {"error": "invalid_grant"}
            self.refresh_tokens.discard(form["refresh_token"])
        else:
            return 400, {"error": "unsupported_grant_type"}
        return 200, self._issue()

    def _issue(self) -> dict[str, Any]:
        from joserfc import jwt

        now = int(time.time())
        claims = {"iss": self.issuer, "aud": self.audience, "sub": self.subject,
                  "scope": self.scope, "iat": now, "exp": now + self.lifetime,
                  "jti": secrets.token_hex(8)}  # two tokens in one second still differ
        token = jwt.encode({"alg": "RS256", "kid": self.key.kid}, claims, self.key,
                           algorithms=["RS256"])
        refresh = "r-" + secrets.token_urlsafe(16)
        self.refresh_tokens.add(refresh)
        return {"access_token": token, "token_type": "Bearer", "expires_in": self.lifetime,
                "refresh_token": refresh, "scope": self.scope}

    def rotate(self) -> None:
        """A new signing key: tokens issued before no longer verify."""
        self.key = new_key(f"as{secrets.token_hex(2)}")

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
