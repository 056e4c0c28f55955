"""Auth mode ``jwt``: a bearer token that is a JWT signed by a key of the JWK set at
``YNM_JWKS_URL`` (reference/server.md §2.3). Signatures and claims are checked by joserfc;
the JWK set is fetched with httpx.

Keys: fetched once at start (a set that cannot be fetched stops the start); fetched again
when a token names a ``kid`` the set does not hold (the issuer rotated its keys), at most once
per :attr:`JwtVerifier.refetch_every` seconds however many such tokens arrive, and when the set
is older than :attr:`JwtVerifier.max_age` seconds (keys the issuer dropped stop being
accepted). A failed fetch keeps the keys held. A token without ``kid`` is checked with the only
key of a one-key set.

Claims: ``exp`` is required and checked, ``nbf`` and ``iat`` when present, each with
:data:`LEEWAY` seconds for clock skew; ``iss`` and ``aud`` must match when configured (ynm
requires both unless waived, :mod:`ynm.server.auth.settings`; the reference checks them only if
set). Only asymmetric algorithms (:data:`ALGORITHMS`) are accepted, so a key of the set can
never be used as an HMAC secret.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from ynm.server.auth import AuthError, AuthInfo, scopes_of

ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512",
              "Ed25519")
LEEWAY = 30
FETCH_TIMEOUT_S = 10.0


class JwksError(Exception):
    """The JWK set could not be fetched or holds no usable key; the message says why."""


def fetch_jwks(url: str, timeout: float = FETCH_TIMEOUT_S, client: Any = None) -> Any:
    """The ``KeySet`` at ``url`` (a JSON JWK set, RFC 7517 §5), fetched with ``client`` (an
    ``httpx.Client``; default a new one); keys joserfc cannot use (an unknown ``kty``, an
    encryption-only key) are skipped.

    Raises:
        JwksError: unreachable, a status other than 200, not JSON, no usable key."""
    import httpx
    from joserfc.jwk import KeySet

    get = client.get if client is not None else httpx.get
    try:
        response = get(url, timeout=timeout, follow_redirects=True,
                       headers={"Accept": "application/json"})
    except httpx.HTTPError as err:
        raise JwksError(f"cannot fetch {url}: {type(err).__name__}: {err}") from None
    if response.status_code != 200:
        raise JwksError(f"{url} answered HTTP {response.status_code}")
    try:
        data = response.json()
    except ValueError:
        raise JwksError(f"{url} did not answer JSON (a JWK set)") from None
    keys = data.get("keys") if isinstance(data, dict) else None
    if not isinstance(keys, list):
        raise JwksError(f"{url} answered JSON without a \"keys\" list (not a JWK set)")
    usable = []
    for item in keys:
        if not isinstance(item, dict) or item.get("use", "sig") != "sig":
            continue
        try:
            usable.append(KeySet.import_key_set({"keys": [item]}).keys[0])
        except Exception:  # noqa: BLE001 - a key joserfc cannot read is skipped, not fatal
            continue
    if not usable:
        raise JwksError(f"{url} holds no signing key ynm can use")
    return KeySet(usable)


class JwtVerifier:
    """Verifies JWTs against the JWK set at ``jwks_url``.

    Args:
        jwks_url: the issuer's JWK set (``YNM_JWKS_URL``).
        issuer: the required ``iss`` (None: any, only when waived).
        audience: the required ``aud`` (a token's ``aud`` may be a list holding it; None: any,
            only when waived).
        refetch_every: seconds between two fetches caused by unknown ``kid`` values.
        max_age: seconds after which the set is fetched again before use.

    Call :meth:`load` once before serving."""

    mode = "jwt"

    def __init__(self, jwks_url: str, *, issuer: str | None, audience: str | None,
                 refetch_every: float = 30.0, max_age: float = 600.0) -> None:
        self.jwks_url = jwks_url
        self.issuer = issuer
        self.audience = audience
        self.refetch_every = refetch_every
        self.max_age = max_age
        self.fetches = 0
        self._keys: Any = None
        self._fetched_at = float("-inf")
        self._refetched_at = float("-inf")
        self._lock = threading.Lock()
        self._client: Any = None

    def load(self) -> None:
        """Fetch the JWK set now (on a kept ``httpx.Client``).

        Raises:
            JwksError: it cannot be fetched or holds no usable key."""
        import httpx

        if self._client is None:
            self._client = httpx.Client()
        self._keys = fetch_jwks(self.jwks_url, client=self._client)
        self._fetched_at = time.monotonic()
        self.fetches += 1

    def adopt(self, other: JwtVerifier) -> None:
        """Take the keys ``other`` fetched (same URL), so a start fetches the set once."""
        self._keys, self._fetched_at, self.fetches = other._keys, other._fetched_at, \
            other.fetches
        self._client = other._client

    def _refresh(self, *, unknown_kid: str | None) -> None:
        """Fetch the set again if allowed now (see the module docstring); a failure keeps the
        keys held."""
        with self._lock:
            now = time.monotonic()
            if unknown_kid is not None:
                if unknown_kid in self._kids() or now - self._refetched_at < self.refetch_every:
                    return
                self._refetched_at = now
            elif now - self._fetched_at < self.max_age:
                return
            try:
                self.load()
            except JwksError as err:
                from ynm.server.app import log

                self._fetched_at = now  # retry after max_age, not on every request
                log(f"auth: keeping the JWK set held: {err}")

    def _kids(self) -> set[str]:
        return {k.kid for k in (self._keys.keys if self._keys is not None else []) if k.kid}

    async def verify(self, token: str) -> AuthInfo:
        """The caller of a valid JWT.

        Raises:
            AuthError: ``invalid_token``: malformed, unknown key, bad signature, expired, not
                yet valid, wrong issuer or audience, no ``exp``."""
        import anyio
        from joserfc import jws, jwt
        from joserfc.errors import (
            BadSignatureError,
            ExpiredTokenError,
            InvalidClaimError,
            JoseError,
            MissingClaimError,
        )

        try:
            header = jws.extract_compact(token.encode()).headers()
        except (JoseError, ValueError, UnicodeError):
            raise AuthError("invalid_token", "malformed token (not a signed JWT)") from None
        kid = header.get("kid")
        kid = kid if isinstance(kid, str) else None
        if kid is not None and kid not in self._kids():
            await anyio.to_thread.run_sync(lambda: self._refresh(unknown_kid=kid))
        elif time.monotonic() - self._fetched_at >= self.max_age:
            await anyio.to_thread.run_sync(lambda: self._refresh(unknown_kid=None))
        keys = self._keys
        if keys is None:  # never fetched (not loaded at start, and the fetch failed since)
            raise AuthError("invalid_token", "token signed by an unknown key")
        if kid is not None:
            key = next((k for k in keys.keys if k.kid == kid), None)
        else:
            key = keys.keys[0] if len(keys.keys) == 1 else None
        if key is None:
            raise AuthError("invalid_token", "token signed by an unknown key")
        try:
            claims = jwt.decode(token, key, algorithms=list(ALGORITHMS)).claims
        except BadSignatureError:
            raise AuthError("invalid_token", "token signature is not valid") from None
        except (JoseError, ValueError):
            raise AuthError("invalid_token", "token not accepted (algorithm, key or "
                                             "encoding)") from None
        options: dict[str, Any] = {"exp": {"essential": True}}
        if self.issuer is not None:
            options["iss"] = {"essential": True, "value": self.issuer}
        if self.audience is not None:
            options["aud"] = {"essential": True, "value": self.audience}
        try:
            jwt.JWTClaimsRegistry(leeway=LEEWAY, **options).validate(claims)
        except ExpiredTokenError:
            raise AuthError("invalid_token", "token expired") from None
        except (InvalidClaimError, MissingClaimError) as err:
            name = getattr(err, "claim", None) or _claim_of(str(err))
            what = {"iss": "token issuer not accepted", "aud": "token audience not accepted",
                    "exp": "token has no valid exp", "nbf": "token not valid yet",
                    "iat": "token issued in the future"}.get(name, "token claims not accepted")
            raise AuthError("invalid_token", what) from None
        except JoseError:
            raise AuthError("invalid_token", "token claims not accepted") from None
        return info_from_claims(claims)


def _claim_of(message: str) -> str | None:
    for name in ("iss", "aud", "exp", "nbf", "iat"):
        if f"'{name}'" in message:
            return name
    return None


def info_from_claims(claims: dict[str, Any]) -> AuthInfo:
    """The :class:`AuthInfo` of a verified JWT's claims (reference/server.md §2.3):
    ``client_id`` = ``azp`` ?? ``client_id`` ?? ``sub`` ?? ``jwt``; ``client`` only from
    ``azp``/``client_id``; scopes from ``scope`` (space string) or ``scp``; ``expires_at`` =
    ``exp`` else now + 3600."""
    def text(name: str) -> str | None:
        value = claims.get(name)
        return value if isinstance(value, str) and value else None

    client = text("azp") or text("client_id")
    exp = claims.get("exp")
    scopes = scopes_of(claims["scope"]) if "scope" in claims else scopes_of(claims.get("scp"))
    return AuthInfo(mode="jwt", client_id=client or text("sub") or "jwt", scopes=scopes,
                    expires_at=int(exp) if isinstance(exp, int | float) and not isinstance(
                        exp, bool) else int(time.time()) + 3600,
                    subject=text("sub"), issuer=text("iss"), client=client)
