"""Streamable HTTP for ``ynm serve --http``: the front door in front of the SDK's handler
(reference/server.md §2.2, §2.3, §2.5).

Order of checks: CORS headers prepared → Host header → the protected-resource metadata
(``/.well-known/oauth-protected-resource``, JWT mode with an issuer; no auth) → Origin header
→ ``GET /health`` (no auth) → ``OPTIONS`` answered 204 → the web view at ``/ui/``
(:mod:`ynm.web`, which checks the caller itself, by the same verifier) → bearer token (the auth mode's
verifier, :mod:`ynm.server.auth`) → ``YNM_REQUIRED_SCOPES`` → per-tool scopes → with
``--modern-only``, legacy protocol versions refused → the MCP handler at ``/mcp`` (stateless:
no server-side sessions; one service per process). The reference answers ``/health``, the
metadata and ``OPTIONS`` before the Host and Origin checks (reference/server.md §2.2), which
lets a page on a DNS-rebound name probe for the server; ynm checks Host first, and Origin
before everything but the metadata document, which is public and meant for any origin
(reference/server.md §6, "DNS rebinding").

A verified request carries its caller in the ASGI scope as ``scope["ynm.auth"]``
(:class:`~ynm.server.auth.AuthInfo`, None in auth mode ``none``); a refused one carries
``scope["ynm.refusal"]``: ``invalid_token``, ``insufficient_scope``, ``host`` or ``origin``
(one refused for ``insufficient_scope`` carries its verified caller in ``scope["ynm.auth"]``
too).
Refusals of a token are 401 ``invalid_token`` or 403 ``insufficient_scope`` with a
``WWW-Authenticate: Bearer`` challenge (RFC 6750 §3) naming ``resource_metadata`` when the
metadata document is served (RFC 9728 §5.1). A write made with a static token carries
``provenance.actor`` ``token:static``; the tools derive who a request writes as from its
caller (ynm.server.identity, reference/server.md §2.5).
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ynm.errors import InvalidInput, Refused
from ynm.server.app import MemoryService, build_server
from ynm.server.auth import (
    READ_SCOPE,
    AuthError,
    AuthInfo,
    Verifier,
    missing_scopes,
    tool_scope,
)
from ynm.server.auth.discovery import ProtectedResource, is_metadata_path
from ynm.server.auth.settings import split_list
from ynm.server.auth.static import StaticVerifier

if TYPE_CHECKING:
    from ynm.server.audit import AuditSink
    from ynm.server.scheduler import Scheduler

ALLOW_METHODS = "GET, POST, DELETE, OPTIONS"
ALLOW_HEADERS = ("Content-Type, Authorization, MCP-Protocol-Version, Mcp-Method, Mcp-Name, "
                 "Mcp-Session-Id")
DEFAULT_PORTS = {"http": 80, "https": 443, "ws": 80, "wss": 443}
WILDCARD_BINDS = ("0.0.0.0", "::")

LEGACY_METHODS = ("GET", "DELETE")  # the legacy transport's SSE stream and session end


def _bearer(authorization: str | None) -> str | None:
    """The token of an ``Authorization: Bearer <token>`` header (scheme case-insensitive),
    else None."""
    if not authorization or authorization[:7].lower() != "bearer ":
        return None
    return authorization[7:].strip() or None


def _quoted(text: str) -> str:
    return text.replace("\\", "").replace('"', "'")


def _host_name(name: str) -> str:
    """A host name in the form it is compared in: lowercase, without the brackets of an IPv6
    literal or one trailing dot (``LocalHost.`` -> ``localhost``), an IP address in its
    canonical text (``0:0:0:0:0:0:0:1`` -> ``::1``). RFC 9110 §4.2.3: host names compare
    case-insensitively."""
    name = name.strip().lower()
    if name.startswith("[") and name.endswith("]"):
        name = name[1:-1]
    if name.endswith(".") and not name.endswith(".."):
        name = name[:-1]
    try:
        return str(ipaddress.ip_address(name))
    except ValueError:
        return name


def is_loopback(name: str) -> bool:
    """True for ``localhost`` and loopback IP literals (``127.0.0.0/8``, ``::1``, also written
    in brackets, upper case or with a trailing dot). Any other name, a wildcard (``0.0.0.0``,
    ``::``) or a LAN address is not loopback; names are not resolved."""
    host = _host_name(name)
    if host == "localhost":
        return True
    try:
        addr = ipaddress.ip_address(host)
    except ValueError:
        return False
    mapped = getattr(addr, "ipv4_mapped", None)
    return bool(addr.is_loopback or (mapped is not None and mapped.is_loopback))


def split_host(value: str) -> tuple[str, int | None] | None:
    """``(name, port or None)`` of a Host header value or an ``--allow-host`` entry: ``name``,
    ``name:port``, ``[v6]``, ``[v6]:port`` (a bare IPv6 literal such as ``::1`` has no port).
    The name is normalised by :func:`_host_name`; the port is digits. None when malformed
    (empty name, a port that is not 0..65535, a scheme or path)."""
    value = value.strip()
    if not value or any(c in value for c in "/@?#") or any(c.isspace() for c in value):
        return None
    port_text: str | None = None
    if value.startswith("["):
        end = value.find("]")
        if end < 0:
            return None
        name, rest = value[: end + 1], value[end + 1:]
        if rest:
            if not rest.startswith(":"):
                return None
            port_text = rest[1:]
    elif value.count(":") == 1:
        name, port_text = value.split(":")
    else:
        name = value  # a name, or a bare IPv6 literal
    if port_text is not None and not (port_text.isascii() and port_text.isdigit()
                                      and int(port_text) <= 65535):
        return None
    host = _host_name(name)
    if not host:
        return None
    return host, int(port_text) if port_text is not None else None


def split_origin(value: str) -> tuple[str, str, int | None] | None:
    """``(scheme, name, port)`` of an Origin header value or an ``--allow-origin`` entry; the
    scheme and name lowercase (RFC 9110 §4.2.3, RFC 6454 §4), the port explicit or the scheme's
    default (``https://x`` = ``https://x:443``). A path, query or fragment is ignored. None when
    it is not ``scheme://host[:port]`` (``null``, a bare host name, a bad port)."""
    from urllib.parse import urlsplit

    try:
        parts = urlsplit(value.strip())
        port = parts.port
    except ValueError:
        return None
    if not parts.scheme or not parts.hostname:
        return None
    scheme = parts.scheme.lower()
    return scheme, _host_name(parts.hostname), port if port is not None else DEFAULT_PORTS.get(
        scheme)


@dataclass
class FrontDoor:
    """Settings of the checks before the MCP handler.

    Host names and schemes compare case-insensitively, ports exactly (RFC 9110 §4.2.3);
    see :func:`split_host` and :func:`split_origin` for the forms accepted.

    Attributes:
        tokens: accepted static bearer tokens (a :class:`StaticVerifier` is made of them
            when no ``verifier`` is given; none and no verifier: auth mode ``none``).
        allowed_hosts: Host header values allowed besides loopback names (any port): ``name``
            (any port) or ``name:port`` (that port only; a Host without a port means the
            request scheme's default port); ``*`` turns the check off.
        allowed_origins: browser Origins allowed besides loopback ones (``scheme://host[:port]``,
            any path ignored); ``*`` allows every Origin.
        verifier: the auth mode's verifier (:mod:`ynm.server.auth`), or None.
        required_scopes: scopes every request's token must carry (``YNM_REQUIRED_SCOPES``).
        resource: the protected-resource metadata to serve and name in challenges, or None.
        modern_only: refuse legacy (handshake-era) MCP protocol versions (``--modern-only``).

    Raises:
        InvalidInput: an allowed host or origin that cannot match anything.
    """

    tokens: list[str] = field(default_factory=list)
    allowed_hosts: list[str] = field(default_factory=list)
    allowed_origins: list[str] = field(default_factory=list)
    verifier: Verifier | None = None
    required_scopes: tuple[str, ...] = ()
    resource: ProtectedResource | None = None
    modern_only: bool = False

    def __post_init__(self) -> None:
        if self.verifier is None and any(self.tokens):
            self.verifier = StaticVerifier(self.tokens)
        self._any_host = "*" in self.allowed_hosts
        self._hosts: list[tuple[str, int | None]] = []
        for entry in self.allowed_hosts:
            if entry == "*":
                continue
            parsed = split_host(entry)
            if parsed is None:
                raise InvalidInput(f"--allow-host: {entry!r} is not a host name "
                                   "(name or name:port)")
            self._hosts.append(parsed)
        self._any_origin = "*" in self.allowed_origins
        self._origins: set[tuple[str, str, int | None]] = set()
        for entry in self.allowed_origins:
            if entry == "*":
                continue
            origin = split_origin(entry)
            if origin is None:
                raise InvalidInput(f"--allow-origin: {entry!r} is not an origin "
                                   "(scheme://host[:port])")
            self._origins.add(origin)

    @property
    def auth_mode(self) -> str:
        """``bearer`` | ``jwt`` | ``introspection`` | ``none`` (reference/server.md §2.2)."""
        return self.verifier.mode if self.verifier is not None else "none"

    def token_ok(self, authorization: str | None) -> bool:
        """True when no token is required or the header carries an accepted static token
        (auth mode ``bearer``; other modes verify with :meth:`authenticate`)."""
        if self.verifier is None:
            return True
        token = _bearer(authorization)
        return isinstance(self.verifier, StaticVerifier) and token is not None and \
            self.verifier.accepts(token)

    async def authenticate(self, authorization: str | None) -> AuthInfo | None:
        """The verified caller of a request's ``Authorization`` header, with
        ``YNM_REQUIRED_SCOPES`` checked; None in auth mode ``none``.

        Raises:
            AuthError: ``invalid_token`` (no bearer token, or one the verifier refuses);
                ``insufficient_scope`` (a required scope missing)."""
        if self.verifier is None:
            return None
        token = _bearer(authorization)
        if token is None:
            raise AuthError("invalid_token", "Missing or invalid bearer token")
        info = await self.verifier.verify(token)
        missing = missing_scopes(info.scopes, self.required_scopes)
        if missing:
            raise AuthError("insufficient_scope", f"token lacks the scope {' '.join(missing)} "
                            "this server requires (YNM_REQUIRED_SCOPES)", " ".join(missing),
                            info)
        return info

    @staticmethod
    def scopes_needed(body: bytes) -> list[str]:
        """The per-tool scopes a JSON-RPC body needs (one message or a batch): a
        ``tools/call`` needs :func:`~ynm.server.auth.tool_scope` of its tool, every other
        message ``memory:read``. A body that is not JSON-RPC needs ``memory:read`` (the
        handler answers it with a parse error)."""
        try:
            parsed = json.loads(body)
        except (ValueError, UnicodeDecodeError):
            return [READ_SCOPE]
        needed: list[str] = []
        for message in parsed if isinstance(parsed, list) else [parsed]:
            scope = READ_SCOPE
            if isinstance(message, dict) and message.get("method") == "tools/call":
                params = message.get("params")
                name = params.get("name") if isinstance(params, dict) else None
                scope = tool_scope(name if isinstance(name, str) else "")
            if scope not in needed:
                needed.append(scope)
        return needed or [READ_SCOPE]

    def challenge(self, err: AuthError, scheme: str, host: str | None) -> bytes:
        """The ``WWW-Authenticate`` value of a refusal (RFC 6750 §3, RFC 9728 §5.1)."""
        parts = [f'error="{err.error}"', f'error_description="{_quoted(err.description)}"']
        if err.scope:
            parts.append(f'scope="{_quoted(err.scope)}"')
        if self.resource is not None:
            parts.append(f'resource_metadata="{self.resource.metadata_url(scheme, host)}"')
        return ("Bearer " + ", ".join(parts)).encode("latin-1", "replace")

    def host_ok(self, host: str | None, scheme: str = "http") -> bool:
        """The Host header names loopback (any port) or an allowed host. A Host without a
        port stands for ``scheme``'s default port."""
        if self._any_host:
            return True
        parsed = split_host(host) if host else None
        if parsed is None:
            return False
        name, port = parsed
        if is_loopback(name):
            return True
        port = port if port is not None else DEFAULT_PORTS.get(scheme.lower())
        return any(name == a_name and (a_port is None or a_port == port)
                   for a_name, a_port in self._hosts)

    def origin_ok(self, origin: str | None) -> bool:
        """No Origin (not a browser), a loopback ``http``/``https`` origin (any port), or an
        allowed one (same scheme, name and port)."""
        if not origin:
            return True
        if self._any_origin:
            return True
        parsed = split_origin(origin)
        if parsed is None:
            return False
        scheme, name, _ = parsed
        if scheme in ("http", "https") and is_loopback(name):
            return True
        return parsed in self._origins


@dataclass
class HttpSettings:
    """What ``ynm serve --http`` runs with, decided by :func:`http_settings`.

    Attributes:
        host: the bind address (IPv6 without brackets).
        port: the TCP port.
        door: the front door's settings.
        personal: whether the personal store is mounted.
        notes: lines to log at start (why the personal store is not mounted, ...).
    """

    host: str
    port: int
    door: FrontDoor
    personal: bool
    notes: list[str] = field(default_factory=list)


def http_settings(*, host: str | None = None, port: int | None = None,
                  token: str | None = None, allow_origin: list[str] | None = None,
                  allow_host: list[str] | None = None, allow_open: bool = False,
                  personal: bool = True, modern_only: bool = False,
                  env: Mapping[str, str], check_auth: bool = True) -> HttpSettings:
    """Decide the HTTP server's settings from the flags and the environment, refusing the
    ones that would leave it more open than asked (reference/server.md §2.1, §2.3, §6).

    Rules:
        - bind address: ``host`` else ``$YNM_HTTP_HOST`` else ``localhost``; port: ``port``
          else ``$PORT`` else 3000.
        - auth: :func:`ynm.server.auth.settings.auth_settings` (``--token``, then the
          environment's JWT, introspection and static-token settings, in the reference's
          order; a set auth variable that is not supported or cannot be used is refused by
          name; ``check_auth`` fetches the JWK set or probes the introspection endpoint now).
        - a bind address that is not loopback (:func:`is_loopback`): no auth is refused unless
          ``allow_open``; the personal store is not mounted (a hosted server serves no
          personal memory, server.md §6; the reference mounts it unless ``--no-personal``).
        - allowed hosts: ``allow_host`` else ``$YNM_ALLOWED_HOSTS``, plus the bind address
          unless it is a wildcard (``0.0.0.0``, ``::``); the check stays on for every bind
          (the reference turns it off for a wildcard bind) unless ``*`` is listed.

    Raises:
        Refused: an auth variable that is not supported or cannot be used; no auth on a
            non-loopback address.
        InvalidInput: an empty token list, a bad port, an allowed host or origin that is not
            one.
    """
    def value(name: str) -> str:
        return (env.get(name) or "").strip()

    bind = host if host is not None else value("YNM_HTTP_HOST") or "localhost"
    bind = bind.strip()
    if bind.startswith("[") and bind.endswith("]"):
        bind = bind[1:-1]
    if not bind:
        raise InvalidInput("--host: empty bind address")
    if port is None:
        text = value("PORT")
        if text and not (text.isascii() and text.isdigit()):
            raise InvalidInput(f"PORT: {text!r} is not a port number")
        port = int(text) if text else 3000
    if not 0 <= port <= 65535:
        raise InvalidInput(f"--port: {port} is not a port number (0..65535)")

    hosts = list(allow_host) if allow_host else split_list(value("YNM_ALLOWED_HOSTS"))
    if _host_name(bind) not in WILDCARD_BINDS:
        hosts.append(bind if ":" not in bind else f"[{bind}]")
    # the host and origin lists are checked before the auth settings reach the network
    FrontDoor(allowed_hosts=hosts, allowed_origins=list(allow_origin or []))

    from ynm.server.auth.settings import auth_settings

    auth = auth_settings(token=token, env=env, check=check_auth)
    door = FrontDoor(allowed_hosts=hosts, allowed_origins=list(allow_origin or []),
                     verifier=auth.verifier, required_scopes=auth.required_scopes,
                     resource=auth.resource, modern_only=modern_only)
    secured = auth.verifier is not None

    notes: list[str] = list(auth.notes)
    if not is_loopback(bind):
        if not secured and not allow_open:
            raise Refused(
                f"refusing to serve {bind} without auth: it is not a loopback address, so "
                "anyone who can reach it could read and change the store; set a token "
                "(--token or YNM_MCP_TOKEN), JWT auth (YNM_JWKS_URL) or token introspection "
                "(YNM_OAUTH_INTROSPECTION_URL), or pass --allow-open")
        if personal:
            notes.append(f"personal store not mounted: {bind} is not a loopback address "
                         "(a shared server serves no personal memory)")
        personal = False
        if not secured:
            notes.append(f"auth is off on {bind} (--allow-open): anyone who can reach it can "
                         "read and change the store")
    return HttpSettings(host=bind, port=port, door=door, personal=personal, notes=notes)


async def _send_json(send: Any, status: int, body: Any,
                     headers: list[tuple[bytes, bytes]] | None = None) -> None:
    data = json.dumps(body).encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"application/json"),
                            (b"content-length", str(len(data)).encode()), *(headers or [])]})
    await send({"type": "http.response.body", "body": data})


def build_http_app(service: MemoryService, door: FrontDoor,
                   scheduler: Scheduler | None = None, audit: AuditSink | None = None, *,
                   mcp: bool = True) -> Any:
    """The ASGI app: the front door (:func:`front_door_app`) around the SDK's streamable HTTP
    app (path ``/mcp``). ``mcp=False`` (``ynm ui``) serves no ``/mcp``: only the read-only web
    view at ``/ui/`` and ``/health``; any other path answers 404 (``{"error": "not_found"}``),
    so no process of the machine can write through the view's port.

    With a ``scheduler`` (:mod:`ynm.server.scheduler`), its timers start when the server has
    started (ASGI lifespan startup) and stop, waiting for a run in progress, when it shuts
    down; ``/health`` carries its stats under ``scheduler`` (null without one).

    The front door runs inside :class:`ynm.server.audit.AuditMiddleware`: every request gets a
    line in the request log, and audited ones an event in ``audit`` (None: audit off). The
    door leaves the verified caller in ``scope["ynm.auth"]`` (None without auth) and the reason
    of a refusal in ``scope["ynm.refusal"]`` for it."""
    from mcp.server.transport_security import TransportSecuritySettings

    from ynm.server.audit import AuditMiddleware
    from ynm.web import build_ui_app

    if mcp:
        server = build_server(service)
        inner = server.streamable_http_app(
            streamable_http_path="/mcp", stateless_http=True, json_response=True,
            # Host and Origin are checked below, with ynm's rules (--allow-host, --allow-origin)
            transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        )
    else:
        inner = _not_found_app
    return AuditMiddleware(front_door_app(door, inner, scheduler,
                                          ui=build_ui_app(service, door), mcp=mcp), audit)


async def _not_found_app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """The app behind the front door of ``ynm ui`` (no MCP endpoint): every request answers
    404 ``{"error": "not_found"}``; the ASGI lifespan is acknowledged."""
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["type"] == "http":
        await _send_json(send, 404, {"error": "not_found",
                                     "error_description": "ynm ui serves the web view at /ui/ "
                                     "only; the MCP endpoint is ynm serve --http"})


def front_door_app(door: FrontDoor, inner: Any, scheduler: Scheduler | None = None, *,
                   ui: Any = None, mcp: bool = True) -> Any:
    """The front door's ASGI app in front of ``inner`` (see the module docstring for the order
    of checks); lifespan and non-HTTP scopes go to ``inner`` unchanged. ``ui``: the web view's
    app (:mod:`ynm.web`), given ``/ui`` and ``/ui/...`` once Host and Origin have passed; it
    checks the caller itself (a bearer header as here, or its sign-in cookie). ``mcp=False``
    (``ynm ui``): every other path answers 404 before any token check, as a path that does not
    exist."""

    async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan" and scheduler is not None:
            await inner(scope, *_with_scheduler(scheduler, receive, send))
            return
        if scope["type"] != "http":
            await inner(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                   for k, v in scope.get("headers", [])}
        method, path = scope["method"], scope["path"]
        scheme, host = scope.get("scheme", "http"), headers.get("host")
        cors = [(b"access-control-allow-methods", ALLOW_METHODS.encode()),
                (b"access-control-allow-headers", ALLOW_HEADERS.encode())]
        origin = headers.get("origin")
        if origin and door.origin_ok(origin):
            cors += [(b"access-control-allow-origin", origin.encode()), (b"vary", b"Origin")]
        # Host first, for every path and method (health and preflights too): a page on a
        # rebound name must not learn even that a ynm server is listening.
        if not door.host_ok(host, scheme):
            scope["ynm.refusal"] = "host"
            await _send_json(send, 421, {"error": "invalid_host",
                                         "error_description": "Host header not allowed "
                                         "(name it with ynm serve --allow-host)"}, cors)
            return
        if door.resource is not None and is_metadata_path(path) and method in ("GET", "OPTIONS"):
            # public, for any origin (RFC 9728 §3): how a client finds where to sign in
            public = [(b"access-control-allow-origin", b"*"),
                      (b"access-control-allow-methods", b"GET, OPTIONS"),
                      (b"access-control-allow-headers", ALLOW_HEADERS.encode())]
            if method == "OPTIONS":
                await send({"type": "http.response.start", "status": 204, "headers": public})
                await send({"type": "http.response.body", "body": b""})
            else:
                await _send_json(send, 200, door.resource.document(scheme, host), public)
            return
        if not door.origin_ok(origin):
            scope["ynm.refusal"] = "origin"
            await _send_json(send, 403, {"error": "invalid_origin",
                                         "error_description": "Origin not allowed "
                                         "(name it with ynm serve --allow-origin)"}, cors)
            return
        if method == "GET" and path == "/health":
            await _send_json(send, 200, {
                "status": "ok", "name": "ynm", "auth": door.auth_mode,
                "scheduler": scheduler.health() if scheduler is not None else None}, cors)
            return
        if method == "OPTIONS":
            await send({"type": "http.response.start", "status": 204, "headers": cors})
            await send({"type": "http.response.body", "body": b""})
            return
        if ui is not None and (path == "/ui" or path.startswith("/ui/")):
            await ui(scope, receive, send)  # no CORS: the view is for its own pages only
            return
        if not mcp:
            await _not_found_app(scope, receive, send)
            return

        async def refuse(err: AuthError) -> None:
            scope["ynm.refusal"] = err.error
            if err.info is not None:  # verified, but without the scope: who was refused
                scope["ynm.auth"] = err.info
            await _send_json(send, err.status, {"error": err.error,
                                                "error_description": err.description},
                             [*cors, (b"www-authenticate", door.challenge(err, scheme, host))])

        try:
            info = await door.authenticate(headers.get("authorization"))
        except AuthError as err:
            await refuse(err)
            return
        body: bytes | None = None
        if info is not None and info.scopes:
            # the token carries scopes: each tool call needs its own (memory:read/write)
            needed = [READ_SCOPE]
            if method == "POST":
                try:
                    body, receive = await _buffered(receive)
                except _TooLarge:
                    await _send_json(send, 413, {"error": "request body too large"}, cors)
                    return
                needed = door.scopes_needed(body)
            missing = missing_scopes(info.scopes, needed)
            if missing:
                await refuse(AuthError("insufficient_scope",
                                       f"token lacks the scope {' '.join(missing)} this call "
                                       "needs", " ".join(missing), info))
                return
        scope["ynm.auth"] = info
        if door.modern_only and _legacy(method, headers):
            if body is None:
                try:
                    body, receive = await _buffered(receive)
                except _TooLarge:
                    body = b""
            await _send_json(send, 400, _legacy_refusal(body, headers), cors)
            return

        async def send_with_cors(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *cors]}
            await send(message)

        await inner(scope, receive, send_with_cors)

    return app


class _TooLarge(Exception):
    """A request body over the SDK's limit (``DEFAULT_MAX_REQUEST_BODY_SIZE``, 4 MiB)."""


async def _buffered(receive: Any) -> tuple[bytes, Any]:
    """The whole request body, and a ``receive`` that hands the same body to the app.

    Raises:
        _TooLarge: the body passes the limit the SDK would answer 413 for."""
    from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE

    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            break  # the client went away: the app sees the body it sent so far
        chunks.append(message.get("body", b""))
        size += len(chunks[-1])
        if size > DEFAULT_MAX_REQUEST_BODY_SIZE:
            raise _TooLarge
        if not message.get("more_body", False):
            break
    body = b"".join(chunks)
    sent = False

    async def replay() -> Any:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return await receive()

    return body, replay


def _legacy(method: str, headers: Mapping[str, str]) -> bool:
    """A request of a handshake-era MCP protocol version: ``GET``/``DELETE`` (the legacy
    transport's stream and session end), or no ``MCP-Protocol-Version`` header or one of
    ``HANDSHAKE_PROTOCOL_VERSIONS`` (the SDK routes requests by that header)."""
    from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

    version = headers.get("mcp-protocol-version")
    return method in LEGACY_METHODS or version is None or \
        version.strip() in HANDSHAKE_PROTOCOL_VERSIONS


def _legacy_refusal(body: bytes, headers: Mapping[str, str]) -> dict[str, Any]:
    """The JSON-RPC error of ``--modern-only`` for a legacy request: code
    ``UNSUPPORTED_PROTOCOL_VERSION`` (-32022) with ``{supported, requested}``, the request's
    id when it has one."""
    from mcp_types import UNSUPPORTED_PROTOCOL_VERSION
    from mcp_types.version import MODERN_PROTOCOL_VERSIONS

    request_id = None
    requested = headers.get("mcp-protocol-version")
    try:
        message = json.loads(body) if body else None
    except (ValueError, UnicodeDecodeError):
        message = None
    if isinstance(message, dict):
        request_id = message.get("id")
        params = message.get("params")
        if requested is None and isinstance(params, dict) and \
                isinstance(params.get("protocolVersion"), str):
            requested = params["protocolVersion"]
    data: dict[str, Any] = {"supported": list(MODERN_PROTOCOL_VERSIONS)}
    if requested:
        data["requested"] = requested
    return {"jsonrpc": "2.0", "id": request_id, "error": {
        "code": UNSUPPORTED_PROTOCOL_VERSION,
        "message": "this server serves only the modern MCP protocol ("
                   + ", ".join(MODERN_PROTOCOL_VERSIONS) + "; ynm serve --modern-only); "
                   "handshake-era versions are refused", "data": data}}


def _with_scheduler(scheduler: Scheduler, receive: Any, send: Any) -> tuple[Any, Any]:
    """``(receive, send)`` of an ASGI lifespan that start the scheduler once startup is
    complete and stop it when shutdown begins (before the MCP handler shuts down)."""
    async def lifespan_receive() -> Any:
        message = await receive()
        if message["type"] == "lifespan.shutdown":
            await scheduler.stop()
        return message

    async def lifespan_send(message: dict[str, Any]) -> None:
        if message["type"] == "lifespan.startup.complete":
            scheduler.start()
        await send(message)

    return lifespan_receive, lifespan_send


def listen_sockets(host: str, port: int) -> list[Any]:
    """Bind and listen on ``host:port`` before anything says "listening": one socket per
    address the name resolves to (``localhost`` may be both 127.0.0.1 and ::1), as asyncio's
    ``create_server`` would bind them; uvicorn then serves these very sockets, so no other
    process can take the port between the check and the start (uvicorn binding on its own
    would log the error after our banner and exit 3, a code ynm does not document). Port 0
    lets the system choose a free port, the same for every address (the first one's).

    Returns:
        The listening sockets (``socket.socket``), at least one.

    Raises:
        YnmError: (exit 1) ``cannot listen on <host>:<port>: address in use; pass another
            --port, or stop what is using it`` for a port taken; ``cannot listen on
            <host>:<port>: <reason>`` for an address that does not resolve or is not on this
            machine. Sockets already bound are closed first."""
    import errno
    import socket

    from ynm.errors import YnmError

    shown = f"[{host}]" if ":" in host else host
    try:
        infos = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM,
                                   flags=socket.AI_PASSIVE)
    except OSError as err:
        raise YnmError(f"cannot listen on {shown}:{port}: {err}") from None
    sockets: list[socket.socket] = []
    seen: set[tuple[int, Any]] = set()
    try:
        for family, kind, proto, _, address in infos:
            if (family, address) in seen:
                continue
            seen.add((family, address))
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6 and hasattr(socket, "IPPROTO_IPV6"):
                # as asyncio does: a v6 socket takes v6 only, the v4 address gets its own
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            if sockets[1:] and address[1] == 0:
                # port 0: every address on the port the system chose for the first one
                address = (address[0], sockets[0].getsockname()[1], *address[2:])
            try:
                sock.bind(address)
                sock.listen(2048)  # uvicorn's default backlog
            except OSError as err:
                if err.errno == errno.EADDRINUSE:
                    reason = "address in use; pass another --port, or stop what is using it"
                else:
                    reason = err.strerror or str(err)
                raise YnmError(f"cannot listen on {shown}:{port}: {reason}") from None
            sock.set_inheritable(True)
    except BaseException:
        for sock in sockets:
            sock.close()
        raise
    return sockets


def _sigterm(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def start_lines(door: FrontDoor, host: str, port: int,
                audit: AuditSink | None = None, path: str = "/mcp") -> list[str]:
    """The start-up lines of ``ynm serve --http`` (each logged once, with the ``[ynm-mcp]``
    prefix of every server line): ``listening on <url> (health: <url>)`` (the reference's
    ``ynm-mcp listening on ...``, reference/server.md §2.1, less the repeated name),
    ``auth: <mode>``, ``audit: <sink>``; then, on a wildcard bind (``0.0.0.0``, ``::``),
    which Host names are served and that ``--allow-host`` names the one clients use (the
    wildcard itself is no name a client can use); and a warning for each JWT check waived
    (``YNM_JWT_ALLOW_ANY_ISSUER``/``_AUDIENCE``). ``port`` is the one bound (never 0);
    ``path`` the endpoint served (``/ui/`` for ``ynm ui``)."""
    shown = f"[{host}]" if ":" in host else host
    lines = [f"listening on http://{shown}:{port}{path} (health: http://{shown}:{port}/health)",
             f"auth: {door.auth_mode}",
             f"audit: {audit.describe if audit is not None else 'off'}"]
    if host in ("0.0.0.0", "::", ""):
        names = [e for e in door.allowed_hosts if e not in (host, f"[{host}]")]
        if "*" in names:
            lines.append("Host names: any (--allow-host '*')")
        else:
            lines.append(f"listening on every interface, but only these Host names are served: "
                         f"{', '.join(['loopback', *names])}; name the one clients use with "
                         f"--allow-host (e.g. --allow-host memory.example.com), and give them "
                         f"http://<that name>:{port}{path}")
    verifier = door.verifier
    if getattr(verifier, "mode", None) == "jwt":
        for claim, attr, waiver in (("iss", "issuer", "YNM_JWT_ALLOW_ANY_ISSUER"),
                                    ("aud", "audience", "YNM_JWT_ALLOW_ANY_AUDIENCE")):
            if getattr(verifier, attr, "") is None:
                lines.append(f"warning: the token's {claim} claim is not checked ({waiver}): "
                             f"any {attr} that signs with these keys is accepted")
    return lines


def serve_http(service: MemoryService, door: FrontDoor, host: str, port: int,
               scheduler: Scheduler | None = None, audit: AuditSink | None = None, *,
               on_listening: Callable[[int], None] | None = None, mcp: bool = True) -> None:
    """Run uvicorn until SIGINT/SIGTERM; logs go to stderr (one request log line per request,
    :mod:`ynm.server.audit`), audit events to ``audit`` (None: off; the start-up lines say
    which).

    The port is bound and listening (:func:`listen_sockets`) before the start-up lines are
    logged and ``on_listening(port)`` is called with the port bound (the one the system chose
    for ``port`` 0; ``ynm ui`` prints its address there), so nothing
    claims to serve a port another process holds: that fails first, with
    :class:`~ynm.errors.YnmError` (exit 1).

    Both signals stop the server the same way: uvicorn shuts down (the scheduler stops first,
    see :func:`build_http_app`), then ``KeyboardInterrupt`` reaches the caller, which closes
    the service and exits 0 (reference/server.md §2.1). uvicorn raises a signal it caught
    again once it has stopped, so SIGTERM would otherwise end the process by the signal,
    without closing the store. ``mcp=False``: no ``/mcp`` (:func:`build_http_app`)."""
    import signal

    import uvicorn

    from ynm.server.app import log

    sockets = listen_sockets(host, port)
    port = sockets[0].getsockname()[1]  # the one chosen for port 0
    app = build_http_app(service, door, scheduler, audit, mcp=mcp)
    for line in start_lines(door, host, port, audit, "/mcp" if mcp else "/ui/"):
        log(line)
    if on_listening is not None:
        on_listening(port)
    # the request log is ynm's own (ynm.server.audit), so uvicorn's access log stays off
    server = uvicorn.Server(uvicorn.Config(app, host=host, port=port, log_level="warning",
                                           lifespan="on", access_log=False))
    previous = signal.signal(signal.SIGTERM, _sigterm)
    try:
        server.run(sockets=sockets)
    finally:
        signal.signal(signal.SIGTERM, previous)
        for sock in sockets:
            sock.close()
