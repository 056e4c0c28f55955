"""The OAuth protected-resource metadata of a JWT server with an issuer (RFC 9728,
reference/server.md §2.2): served at ``/.well-known/oauth-protected-resource`` (and any
sub-path of it) and named in every challenge as ``resource_metadata``, so an MCP client can
find the authorization server to sign in with."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

WELL_KNOWN = "/.well-known/oauth-protected-resource"


def http_url(value: str) -> bool:
    """True when ``value`` is an absolute ``http``/``https`` URL with a host."""
    try:
        parts = urlsplit(value)
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and bool(parts.hostname)


@dataclass(frozen=True)
class ProtectedResource:
    """What the metadata document says.

    Attributes:
        issuer: the authorization server (``YNM_JWT_ISSUER``).
        resource: the resource URL: ``YNM_PUBLIC_URL`` else ``YNM_JWT_AUDIENCE`` when it is an
            http(s) URL; None: ``<request origin>/mcp``.
        scopes: ``scopes_supported``: ``memory:read``, ``memory:write`` and the required
            scopes.
    """

    issuer: str
    resource: str | None = None
    scopes: tuple[str, ...] = field(default_factory=tuple)

    def resource_for(self, scheme: str, host: str | None) -> str:
        """The resource URL for a request that came in on ``scheme://host``."""
        if self.resource:
            return self.resource.strip()
        return f"{scheme}://{host or 'localhost'}/mcp"

    def metadata_url(self, scheme: str, host: str | None) -> str:
        """``<resource origin>/.well-known/oauth-protected-resource<resource path>``."""
        parts = urlsplit(self.resource_for(scheme, host))
        path = parts.path.rstrip("/")
        return f"{parts.scheme}://{parts.netloc}{WELL_KNOWN}{path}"

    def document(self, scheme: str, host: str | None) -> dict[str, Any]:
        """``{resource, authorization_servers, scopes_supported, bearer_methods_supported}``."""
        doc: dict[str, Any] = {"resource": self.resource_for(scheme, host),
                               "authorization_servers": [self.issuer]}
        if self.scopes:
            doc["scopes_supported"] = list(self.scopes)
        doc["bearer_methods_supported"] = ["header"]
        return doc


def is_metadata_path(path: str) -> bool:
    """``/.well-known/oauth-protected-resource`` or a sub-path of it."""
    return path == WELL_KNOWN or path.startswith(WELL_KNOWN + "/")
