"""Who a verified HTTP request comes from (reference/server.md §2.3, "AuthInfo produced")."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class AuthInfo:
    """A verified caller, as the front door stores it in the ASGI scope (``scope["ynm.auth"]``).

    Attributes:
        mode: ``bearer`` | ``jwt`` | ``introspection``.
        client_id: static: ``static``; jwt: ``azp`` ?? ``client_id`` ?? ``sub`` ?? ``jwt``;
            introspection: ``client_id`` ?? ``sub`` ?? ``unknown``.
        scopes: the token's scopes.
        expires_at: unix seconds.
        subject: the token's ``sub``.
        issuer: the token's ``iss`` (introspection: ``iss`` ?? origin of the URL).
        client: only from ``azp`` / ``client_id``.
        static: True for the static bearer token.
    """

    mode: str
    client_id: str
    scopes: tuple[str, ...]
    expires_at: int
    subject: str | None = None
    issuer: str | None = None
    client: str | None = None
    static: bool = False
