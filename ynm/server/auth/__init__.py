"""Who is calling ``ynm serve --http``: the verified caller (:class:`AuthInfo`), the verifiers
of the four auth modes and the scope rules (reference/server.md §2.3, §2.6).

Modes (chosen once at start by :func:`ynm.server.auth.settings.auth_settings`, in the
reference's order: ``--token``, ``YNM_JWKS_URL``, ``YNM_OAUTH_INTROSPECTION_URL``,
``YNM_MCP_TOKEN``, none):

- ``bearer``: static tokens compared by SHA-256 (:mod:`ynm.server.auth.static`);
- ``jwt``: a signed JWT checked against a JWK set fetched from a URL, with key rotation by
  ``kid`` (:mod:`ynm.server.auth.jwt`);
- ``introspection``: RFC 7662 token introspection with client credentials
  (:mod:`ynm.server.auth.introspection`);
- ``none``: no check, no :class:`AuthInfo`.

Scopes (ynm's own rule, ADR-017's proposal built; the reference has no per-tool split):
``YNM_REQUIRED_SCOPES`` must all be carried by every request's token; and when a token carries
any scope at all, a request needs :data:`READ_SCOPE` (``memory:read``) and a call of a tool that
changes the store needs :data:`WRITE_SCOPE` (``memory:write``, which grants reading too). The
tools marked read-only (``memory_recall``, ``memory_context``, ``memory_status``) are reads;
every other tool, and a tool name ynm does not know, is a write. A token without scopes (static
tokens, identity providers that issue none) is not limited by tool.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

READ_SCOPE = "memory:read"
WRITE_SCOPE = "memory:write"

__all__ = ["READ_SCOPE", "WRITE_SCOPE", "AuthError", "AuthInfo", "Verifier", "missing_scopes",
           "scopes_of", "token_digest", "tool_scope"]


@dataclass(frozen=True)
class AuthInfo:
    """A verified caller (reference/server.md §2.3, "AuthInfo produced").

    Attributes:
        mode: ``bearer`` | ``jwt`` | ``introspection``.
        client_id: static: ``static``; jwt: ``azp`` ?? ``client_id`` ?? ``sub`` ?? ``jwt``;
            introspection: ``client_id`` ?? ``sub`` ?? ``unknown``.
        scopes: the token's scopes (``scope`` space string or ``scp`` array); static: none.
        expires_at: unix seconds: the token's ``exp``, else now + 3600.
        subject: the token's ``sub`` (None without one).
        issuer: the token's ``iss``; introspection: ``iss`` ?? the origin of the URL.
        client: ``azp`` ?? ``client_id`` only (never ``sub``), else None.
        static: True for a static bearer token.
    """

    mode: str
    client_id: str
    scopes: tuple[str, ...]
    expires_at: int
    subject: str | None = None
    issuer: str | None = None
    client: str | None = None
    static: bool = False


class AuthError(Exception):
    """A request the front door refuses (RFC 6750 §3.1): ``error`` is ``invalid_token`` (401)
    or ``insufficient_scope`` (403, ``scope`` names what is missing, space separated).
    ``description`` is safe to show the caller: it never holds the token. ``info`` is the
    verified caller of an ``insufficient_scope`` refusal (None for ``invalid_token``)."""

    def __init__(self, error: str, description: str, scope: str | None = None,
                 info: AuthInfo | None = None) -> None:
        super().__init__(description)
        self.error = error
        self.description = description
        self.scope = scope
        self.info = info

    @property
    def status(self) -> int:
        """401 for ``invalid_token``, 403 for ``insufficient_scope``."""
        return 403 if self.error == "insufficient_scope" else 401


class Verifier(Protocol):
    """One auth mode's check of a presented bearer token."""

    mode: str

    async def verify(self, token: str) -> AuthInfo:
        """The verified caller of ``token``.

        Raises:
            AuthError: ``invalid_token`` when the token is not accepted."""
        ...


def token_digest(token: str) -> bytes:
    """SHA-256 of a token: how static tokens are kept and introspection results are cached,
    so no token is held in memory longer than its request (reference/server.md §6)."""
    return hashlib.sha256(token.encode()).digest()


def scopes_of(value: object) -> tuple[str, ...]:
    """The scopes of a ``scope`` claim (a space-separated string, RFC 8693 §4.2) or an ``scp``
    claim (an array of strings, or a string); anything else gives none."""
    if isinstance(value, str):
        return tuple(s for s in value.split() if s)
    if isinstance(value, list | tuple):
        return tuple(s for s in value if isinstance(s, str) and s)
    return ()


def tool_scope(name: str) -> str:
    """The scope a call of tool ``name`` needs: :data:`READ_SCOPE` for the tools marked
    read-only in ``ynm.server.tools.TOOL_SPECS``, :data:`WRITE_SCOPE` for every other one and
    for a name ynm does not know (fail closed)."""
    from ynm.server.tools import TOOL_SPECS

    spec = TOOL_SPECS.get(name)
    return READ_SCOPE if spec is not None and spec.read_only else WRITE_SCOPE


def missing_scopes(carried: Iterable[str], needed: Iterable[str]) -> list[str]:
    """The scopes of ``needed`` that ``carried`` lacks, in order; :data:`WRITE_SCOPE` grants
    :data:`READ_SCOPE` too."""
    have = set(carried)
    if WRITE_SCOPE in have:
        have.add(READ_SCOPE)
    out: list[str] = []
    for scope in needed:
        if scope not in have and scope not in out:
            out.append(scope)
    return out
