"""Auth mode ``bearer``: static tokens from ``--token`` or ``YNM_MCP_TOKEN`` (a comma list, so a
token can be rotated without locking clients out), kept and compared as SHA-256 digests
(reference/server.md §2.3)."""

from __future__ import annotations

import hmac
import time
from collections.abc import Iterable

from ynm.server.auth import AuthError, AuthInfo, token_digest


class StaticVerifier:
    """Accepts any of ``tokens``; every holder is one identity (``client_id`` ``static``,
    ``static=True``: writes carry ``token:static``, reference/server.md §2.5).

    Raises:
        ValueError: no token given."""

    mode = "bearer"

    def __init__(self, tokens: Iterable[str]) -> None:
        self._hashes = {token_digest(t) for t in tokens if t}
        if not self._hashes:
            raise ValueError("no static token given")

    def accepts(self, token: str) -> bool:
        """True when ``token`` is one of the static tokens (constant-time per digest)."""
        presented = token_digest(token)
        return any(hmac.compare_digest(presented, h) for h in self._hashes)

    async def verify(self, token: str) -> AuthInfo:
        """The static caller; expires an hour from now (static tokens carry no ``exp``).

        Raises:
            AuthError: ``invalid_token`` for any other token."""
        if not self.accepts(token):
            raise AuthError("invalid_token", "Missing or invalid bearer token")
        return AuthInfo(mode=self.mode, client_id="static", scopes=(),
                        expires_at=int(time.time()) + 3600, static=True)
