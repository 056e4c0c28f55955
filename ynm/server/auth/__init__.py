"""Who is calling ``ynm serve --http``: the verified caller (reference/server.md §2.3)."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["AuthInfo"]


@dataclass(frozen=True)
class AuthInfo:
    """A verified caller (reference/server.md §2.3, "AuthInfo produced").

    Attributes:
        mode: ``bearer`` | ``jwt`` | ``introspection``.
        client_id: static: ``static``; jwt: ``azp`` ?? ``client_id`` ?? ``sub`` ?? ``jwt``;
            introspection: ``client_id`` ?? ``sub`` ?? ``unknown``.
        scopes: the token's scopes.
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
