"""Auth mode ``introspection``: the bearer token is sent to the authorization server's RFC 7662
endpoint (``YNM_OAUTH_INTROSPECTION_URL``), which says whether it is active
(reference/server.md §2.3).

Request: ``POST`` a form body ``token=<token>&token_type_hint=access_token``, HTTP Basic client
authentication with ``YNM_OAUTH_CLIENT_ID`` and ``YNM_OAUTH_CLIENT_SECRET`` (RFC 7662 §2.1),
:data:`TIMEOUT_S` seconds. An inactive token, a non-2xx answer or an endpoint that cannot be
reached gives 401 ``invalid_token``. Positive results are cached for min(:data:`CACHE_S`
seconds, the token's ``exp``), keyed by the token's SHA-256 digest (the token itself is not
kept); negative ones are not cached, so a token activated later is accepted at once.
"""

from __future__ import annotations

import threading
import time
from typing import Any
from urllib.parse import urlsplit

from ynm.server.auth import AuthError, AuthInfo, scopes_of, token_digest

TIMEOUT_S = 10.0
CACHE_S = 60.0
CACHE_MAX = 10_000
PROBE_TOKEN = "ynm-start-probe"


class IntrospectionError(Exception):
    """The endpoint could not be used at start; the message says why and names the
    variable to fix."""


class IntrospectionVerifier:
    """Verifies tokens with an RFC 7662 endpoint.

    Args:
        url: the introspection endpoint.
        client_id, client_secret: ynm's client credentials at the authorization server.

    Attributes:
        calls: requests made to the endpoint (a cache hit makes none)."""

    mode = "introspection"

    def __init__(self, url: str, client_id: str, client_secret: str) -> None:
        self.url = url
        self.client_id = client_id
        self._secret = client_secret
        parts = urlsplit(url)
        self.origin = f"{parts.scheme}://{parts.netloc}"
        self.calls = 0
        self._cache: dict[bytes, tuple[AuthInfo, float]] = {}
        self._lock = threading.Lock()
        self._client: Any = None

    def _post(self, token: str) -> Any:
        """One introspection request, on a kept ``httpx.Client`` (making one costs tens of
        milliseconds, its TLS settings; it keeps the connection alive between requests)."""
        import httpx

        with self._lock:
            if self._client is None:
                self._client = httpx.Client(timeout=TIMEOUT_S,
                                            headers={"Accept": "application/json"})
            client = self._client
        self.calls += 1
        return client.post(self.url, data={"token": token, "token_type_hint": "access_token"},
                           auth=(self.client_id, self._secret))

    def probe(self) -> None:
        """Check at start that the endpoint answers ynm's client credentials (it introspects
        a made-up token, which must come back inactive).

        Raises:
            IntrospectionError: unreachable, credentials refused, or not an RFC 7662 answer."""
        import httpx

        try:
            response = self._post(PROBE_TOKEN)
        except httpx.HTTPError as err:
            raise IntrospectionError(f"YNM_OAUTH_INTROSPECTION_URL: cannot reach {self.url}: "
                                     f"{type(err).__name__}: {err}") from None
        if response.status_code in (401, 403):
            raise IntrospectionError(
                f"YNM_OAUTH_CLIENT_ID, YNM_OAUTH_CLIENT_SECRET: {self.url} refused the client "
                f"credentials (HTTP {response.status_code})")
        try:
            body = response.json() if response.is_success else None
        except ValueError:
            body = None
        if not isinstance(body, dict) or not isinstance(body.get("active"), bool):
            raise IntrospectionError(
                f"YNM_OAUTH_INTROSPECTION_URL: {self.url} is not an RFC 7662 introspection "
                f"endpoint (HTTP {response.status_code}, no \"active\" in the answer)")

    def _cached(self, key: bytes) -> AuthInfo | None:
        with self._lock:
            hit = self._cache.get(key)
            if hit is None:
                return None
            if hit[1] <= time.time():
                del self._cache[key]
                return None
            return hit[0]

    def _remember(self, key: bytes, info: AuthInfo) -> None:
        until = min(time.time() + CACHE_S, float(info.expires_at))
        with self._lock:
            if len(self._cache) >= CACHE_MAX:
                now = time.time()
                for k in [k for k, (_, t) in self._cache.items() if t <= now]:
                    del self._cache[k]
                while len(self._cache) >= CACHE_MAX:
                    del self._cache[next(iter(self._cache))]
            self._cache[key] = (info, until)

    def _introspect(self, token: str) -> AuthInfo:
        import httpx

        from ynm.server.app import log

        try:
            response = self._post(token)
        except httpx.HTTPError as err:
            log(f"auth: introspection failed: {type(err).__name__}: {err}")
            raise AuthError("invalid_token", "token introspection unavailable") from None
        if not response.is_success:
            log(f"auth: introspection answered HTTP {response.status_code}")
            raise AuthError("invalid_token", "token not accepted") from None
        try:
            body = response.json()
        except ValueError:
            body = None
        if not isinstance(body, dict) or body.get("active") is not True:
            raise AuthError("invalid_token", "token is not active")
        exp = body.get("exp")
        if isinstance(exp, int | float) and not isinstance(exp, bool) and exp <= time.time():
            raise AuthError("invalid_token", "token expired")
        return self.info_from(body)

    def info_from(self, body: dict[str, Any]) -> AuthInfo:
        """The :class:`AuthInfo` of an active introspection answer (reference/server.md §2.3):
        ``client_id`` = ``client_id`` ?? ``sub`` ?? ``unknown``; ``issuer`` = ``iss`` ?? the
        origin of the endpoint's URL; scopes from ``scope``; ``expires_at`` = ``exp`` else
        now + 3600."""
        def text(name: str) -> str | None:
            value = body.get(name)
            return value if isinstance(value, str) and value else None

        exp = body.get("exp")
        return AuthInfo(mode=self.mode,
                        client_id=text("client_id") or text("sub") or "unknown",
                        scopes=scopes_of(body.get("scope")),
                        expires_at=int(exp) if isinstance(exp, int | float) and not isinstance(
                            exp, bool) else int(time.time()) + 3600,
                        subject=text("sub"), issuer=text("iss") or self.origin,
                        client=text("client_id"))

    async def verify(self, token: str) -> AuthInfo:
        """The caller of an active token, from the cache or the endpoint.

        Raises:
            AuthError: ``invalid_token``: inactive, expired, endpoint failure."""
        import anyio

        key = token_digest(token)
        info = self._cached(key)
        if info is None:
            info = await anyio.to_thread.run_sync(lambda: self._introspect(token))
            self._remember(key, info)
        return info
