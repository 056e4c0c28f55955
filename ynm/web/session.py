"""Who may read the web view: the same auth as ``/mcp`` (reference/server.md §2.3), plus a
sign-in cookie for browsers.

A request is let in when the server runs without auth (auth mode ``none``, which
``ynm serve --http`` allows only on loopback unless ``--allow-open``), when it carries an
``Authorization: Bearer`` header the front door's verifier accepts (as for ``/mcp``), or when
it carries the cookie of a browser sign-in. Signing in posts the token to ``/ui/login``; it is
checked by the same verifier (a static token is compared by digest), and the browser gets a
cookie holding a random server-side session id (32 bytes, URL-safe base64) — never the token
or anything derived from it. The cookie is ``HttpOnly``, ``SameSite=Strict``, ``Path=/ui``,
and ``Secure`` when the request came over https. Sessions live in the server's memory: a
restart signs every browser out. A session ends at the token's own expiry (``exp`` for a JWT,
an hour for a static token, see :class:`~ynm.server.auth.AuthInfo`) or after
:data:`SESSION_SECONDS`, whichever is first, and at sign-out; the cookie's ``Max-Age`` is that
same lifetime, so a browser never keeps a cookie the server no longer honours.

A token that carries scopes needs ``memory:read`` (the view only reads); the server's
``YNM_REQUIRED_SCOPES`` apply as for ``/mcp``.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ynm.server.auth import READ_SCOPE, AuthError, AuthInfo, missing_scopes

if TYPE_CHECKING:
    from ynm.server.http import FrontDoor

__all__ = ["COOKIE", "SESSION_SECONDS", "Sessions", "cookie_header"]

COOKIE = "ynm_ui"
SESSION_SECONDS = 12 * 3600
"""The longest a browser sign-in lasts (seconds): a JWT valid for a day still signs the
browser out after 12 hours. A static token's sign-in ends after its hour."""
MAX_SESSIONS = 1000  # the oldest are dropped past this many


@dataclass
class Sessions:
    """Browser sign-ins of one server process: session id -> (caller, expiry in unix
    seconds)."""

    door: FrontDoor
    _live: dict[str, tuple[AuthInfo | None, float]] = field(default_factory=dict)

    @property
    def open(self) -> bool:
        """True in auth mode ``none``: every request is let in."""
        return self.door.verifier is None

    async def verify(self, authorization: str | None) -> AuthInfo | None:
        """The caller of an ``Authorization`` header (see :meth:`FrontDoor.authenticate`),
        with ``memory:read`` required of a token that carries scopes.

        Raises:
            AuthError: ``invalid_token`` or ``insufficient_scope``."""
        info = await self.door.authenticate(authorization)
        if info is not None and info.scopes:
            missing = missing_scopes(info.scopes, [READ_SCOPE])
            if missing:
                raise AuthError("insufficient_scope", "token lacks the scope memory:read "
                                "the web view needs", READ_SCOPE, info)
        return info

    async def sign_in(self, token: str) -> tuple[str, int]:
        """A new session for ``token``; returns its id (the cookie's value) and its lifetime
        in whole seconds (the cookie's ``Max-Age``): until the token expires (an hour for a
        static token), at most :data:`SESSION_SECONDS`.

        Raises:
            AuthError: the token is refused (as a bearer header with it would be)."""
        info = await self.verify(f"Bearer {token.strip()}")
        now = time.time()
        until = now + SESSION_SECONDS
        if info is not None:
            until = min(until, float(info.expires_at))
        self._drop_expired(now)
        while len(self._live) >= MAX_SESSIONS:
            self._live.pop(next(iter(self._live)))
        sid = secrets.token_urlsafe(32)
        self._live[sid] = (info, until)
        return sid, max(0, int(until - now))

    def caller(self, sid: str | None) -> tuple[bool, AuthInfo | None]:
        """``(signed in, caller)`` for a cookie value (None: no cookie)."""
        if not sid:
            return False, None
        entry = self._live.get(sid)
        if entry is None:
            return False, None
        if entry[1] <= time.time():
            self._live.pop(sid, None)
            return False, None
        return True, entry[0]

    def sign_out(self, sid: str | None) -> None:
        """End the session of a cookie value (nothing for an unknown one)."""
        if sid:
            self._live.pop(sid, None)

    def _drop_expired(self, now: float) -> None:
        for sid in [s for s, (_, until) in self._live.items() if until <= now]:
            del self._live[sid]


def cookie_header(value: str, *, secure: bool, max_age: int) -> str:
    """A ``Set-Cookie`` value for the session cookie (``max_age`` 0 clears it)."""
    parts = [f"{COOKIE}={value}", "Path=/ui", "HttpOnly", "SameSite=Strict",
             f"Max-Age={max_age}"]
    if secure:
        parts.append("Secure")
    return "; ".join(parts)
