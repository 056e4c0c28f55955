"""Signing in to a hosted store through its identity provider, in a browser, and keeping that
sign-in fresh (reference/cli.md §4.12: "runs OAuth (dynamic client registration, PKCE,
loopback redirect, opens a browser)"; reference/server.md §2.3 "Client sign-in flow").

A store that names an authorization server in its protected-resource metadata (RFC 9728; ``ynm
serve --http`` in JWT mode with ``YNM_JWT_ISSUER``) is signed in to with the authorization
code grant and PKCE (RFC 7636), driven by the ``mcp`` SDK's
:class:`mcp.client.auth.OAuthClientProvider`: discovery of the resource and authorization
server metadata (RFC 9728, RFC 8414), dynamic client registration (RFC 7591), the ``state``
and issuer checks, and the token exchange with the ``resource`` indicator (RFC 8707). ynm
supplies the two ends that are its own: the browser (``webbrowser``, so ``$BROWSER`` is
honoured, with the address always printed for a machine without one) and a one-shot
loopback redirect listener on ``127.0.0.1`` (RFC 8252 §7.3).

What is kept (in the sign-in file of :func:`ynm.service.remote.save_sign_in`, 0600): the access
token as the mount's bearer token, and under ``"oauth"`` what renewing it needs:
``{"tokenEndpoint", "clientId", "clientSecret"?, "refreshToken"?, "expiresAt"?, "resource"?,
"scope"?}`` (``expiresAt`` in unix seconds). :func:`renew` trades the refresh token for a new
access token (RFC 6749 §6) with ``httpx`` when the kept one has expired or is refused, so a
sign-in lasts as long as the identity provider lets its refresh token live.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

from ynm.errors import YnmError

__all__ = ["SignIn", "advertised_issuer", "browser_sign_in", "expired", "renew"]

CALLBACK_PATH = "/callback"
SIGN_IN_WAIT_S = 300.0  # how long a person has to finish signing in, in seconds
EARLY_S = 30  # a token this close to its expiry (seconds) is renewed before it is sent


@dataclass(frozen=True)
class SignIn:
    """A finished browser sign-in: the access ``token`` (never shown in ``repr``), the
    ``scopes`` granted, and ``oauth``, the renewal data kept beside it (see the module)."""

    token: str
    scopes: tuple[str, ...]
    oauth: dict[str, Any]

    def __repr__(self) -> str:
        return f"SignIn(scopes={self.scopes!r})"


def advertised_issuer(url: str, timeout_s: float) -> str | None:
    """The authorization server a hosted store names, or None when it names none (a store
    with a static token, or open). Asks the store once without a token: a ``401`` whose
    ``WWW-Authenticate`` challenge names ``resource_metadata`` (RFC 9728 §5.1), whose
    document lists ``authorization_servers``; the first is returned.

    Raises:
        ynm.service.remote.RemoteError: the store or its metadata cannot be reached.
    """
    import re

    import httpx

    from ynm.service.remote import RemoteError

    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}
    try:
        with httpx.Client(timeout=timeout_s) as http:
            response = http.post(url, json=body, headers=headers)
            if response.status_code != 401:
                return None
            found = re.search(r'resource_metadata="([^"]+)"',
                              response.headers.get("www-authenticate", ""))
            if not found:
                return None
            meta = http.get(found.group(1))
    except httpx.HTTPError as err:
        raise RemoteError(f"cannot reach it ({err or type(err).__name__})") from None
    try:
        servers = meta.json().get("authorization_servers") if meta.status_code == 200 else None
    except ValueError:
        servers = None
    if isinstance(servers, list) and servers and isinstance(servers[0], str):
        return servers[0]
    return None


class _Callback:
    """The one-shot loopback listener the identity provider redirects the browser to: it
    keeps the first ``/callback`` query (``code``, ``state``, ``iss``, or ``error``) and
    answers the browser with a line saying to go back to the terminal."""

    def __init__(self) -> None:
        self.query: dict[str, str] | None = None
        self.arrived = threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                if parts.path != CALLBACK_PATH or owner.arrived.is_set():
                    self.send_error(404)
                    return
                owner.query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                failed = "error" in owner.query
                page = ("ynm: the sign-in was refused; see the terminal." if failed else
                        "ynm: signed in. You can close this tab and go back to the terminal.")
                data = page.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                owner.arrived.set()

            def log_message(self, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}{CALLBACK_PATH}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


def browser_sign_in(url: str, *, open_browser: bool = True,
                    say: Callable[[str], None] = lambda _: None,
                    wait_s: float = SIGN_IN_WAIT_S, timeout_s: float = 30.0) -> SignIn:
    """Sign in to the hosted store at ``url`` in a browser (see the module) and prove the
    token on the store with one ``memory_status`` call. ``say`` is given the address to open
    (always, so it can be opened by hand) and what is awaited; ``open_browser`` False only
    prints it. ``wait_s``: seconds a person has to finish; ``timeout_s``: per HTTP request.

    Raises:
        ynm.errors.YnmError: the sign-in did not finish (refused, timed out, the identity
            provider answered with an error, the store refused the new token); the message
            says why and never holds a token or a code.
        ynm.errors.MissingExtra: the ``mcp`` SDK (the ``server`` extra) is not installed.
    """
    try:
        import anyio
        import httpx2
        from mcp.client.auth import OAuthClientProvider
        from mcp.shared.auth import (
            AuthorizationCodeResult,
            OAuthClientInformationFull,
            OAuthClientMetadata,
            OAuthToken,
        )
    except ImportError as err:
        from ynm.errors import missing_extra

        raise missing_extra(err, "signing in in a browser", "server") from None

    import logging

    # the SDK logs a failed flow with its traceback; the reason reaches the user in the
    # error raised below, so nothing is printed unless the caller set up logging
    logging.getLogger("mcp.client.auth").addHandler(logging.NullHandler())
    callback = _Callback()
    kept: dict[str, Any] = {}

    class Storage:
        """The SDK's token storage, in memory: the file is written once the token is
        proven (:func:`ynm.service.remote.save_sign_in`)."""

        async def get_tokens(self) -> OAuthToken | None:
            return kept.get("tokens")

        async def set_tokens(self, tokens: OAuthToken) -> None:
            kept["tokens"], kept["at"] = tokens, time.time()

        async def get_client_info(self) -> OAuthClientInformationFull | None:
            return kept.get("client")

        async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
            kept["client"] = client_info

    async def redirect(address: str) -> None:
        say(f"sign in at: {address}")
        if open_browser:
            import webbrowser

            await anyio.to_thread.run_sync(webbrowser.open, address)
        say(f"waiting up to {wait_s:g} s for the sign-in to finish ...")

    async def arrived() -> AuthorizationCodeResult:
        done = await anyio.to_thread.run_sync(callback.arrived.wait, wait_s)
        if not done:
            raise YnmError(f"the sign-in did not finish within {wait_s:g} s")
        query = callback.query or {}
        if "error" in query:
            why = query.get("error_description") or query["error"]
            raise YnmError("the identity provider refused the sign-in: "
                           + "".join(c for c in why if c.isprintable())[:200])
        return AuthorizationCodeResult(code=query.get("code", ""), state=query.get("state"),
                                       iss=query.get("iss"))

    metadata = OAuthClientMetadata(
        client_name="ynm", redirect_uris=[callback.redirect_uri],
        grant_types=["authorization_code", "refresh_token"], response_types=["code"],
        token_endpoint_auth_method="none")
    provider = OAuthClientProvider(url, metadata, Storage(), redirect_handler=redirect,
                                   callback_handler=arrived)
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "memory_status", "arguments": {}}}
    headers = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json"}

    async def flow() -> int:
        async with httpx2.AsyncClient(auth=provider, timeout=httpx2.Timeout(timeout_s)) as http:
            response = await http.post(url, json=body, headers=headers)
            return response.status_code

    try:
        status = anyio.run(flow)
    except YnmError:
        raise
    except Exception as err:  # noqa: BLE001 - the SDK's and the network's errors, in words
        from ynm.errors import describe_unexpected

        raise YnmError(f"the sign-in failed ({describe_unexpected(err)})") from None
    finally:
        callback.close()
    tokens = kept.get("tokens")
    if tokens is None or status in (401, 403):
        raise YnmError(f"the store refused the token the identity provider gave (HTTP {status})")
    client = kept["client"]
    context = provider.context
    oauth: dict[str, Any] = {"tokenEndpoint": _token_endpoint(context),
                             "clientId": client.client_id}
    if client.client_secret:
        oauth["clientSecret"] = client.client_secret
    if tokens.refresh_token:
        oauth["refreshToken"] = tokens.refresh_token
    if tokens.expires_in:
        oauth["expiresAt"] = int(kept["at"]) + int(tokens.expires_in)
    if context.protected_resource_metadata is not None:
        oauth["resource"] = context.get_resource_url()
    if tokens.scope:
        oauth["scope"] = tokens.scope
    return SignIn(tokens.access_token, tuple((tokens.scope or "").split()), oauth)


def _token_endpoint(context: Any) -> str:
    if context.oauth_metadata is not None and context.oauth_metadata.token_endpoint:
        return str(context.oauth_metadata.token_endpoint)
    parts = urlsplit(context.server_url)
    return f"{parts.scheme}://{parts.netloc}/token"


def expired(oauth: dict[str, Any] | None, now: float | None = None) -> bool:
    """True when a kept sign-in's access token has expired or will within ``EARLY_S``
    seconds and can be renewed (it has a refresh token)."""
    if not oauth or not oauth.get("refreshToken"):
        return False
    at = oauth.get("expiresAt")
    return isinstance(at, int | float) and (now or time.time()) >= at - EARLY_S


async def renew(home: Path, mount_id: str, url: str, oauth: dict[str, Any],
                timeout_s: float) -> str:
    """Trade the kept refresh token for a new access token (RFC 6749 §6, with the
    ``resource`` indicator of RFC 8707 when one was used) and keep both (a rotated refresh
    token replaces the old one). Returns the new access token.

    Raises:
        ynm.service.remote.RemoteError: no refresh token, the identity provider cannot be
            reached or refuses it (status 401); the message says to run ``ynm login``.
    """
    import httpx

    from ynm.service.remote import RemoteError, save_sign_in

    again = f"sign in again: `ynm login {mount_id}`"
    refresh = oauth.get("refreshToken")
    if not refresh or not oauth.get("tokenEndpoint") or not oauth.get("clientId"):
        raise RemoteError(f"the sign-in has expired; {again}", status=401)
    form = {"grant_type": "refresh_token", "refresh_token": refresh,
            "client_id": oauth["clientId"]}
    if oauth.get("resource"):
        form["resource"] = oauth["resource"]
    auth = (oauth["clientId"], oauth["clientSecret"]) if oauth.get("clientSecret") else None
    try:
        async with httpx.AsyncClient(timeout=timeout_s) as http:
            response = await http.post(oauth["tokenEndpoint"], data=form, auth=auth)
    except httpx.HTTPError as err:
        raise RemoteError(f"the sign-in has expired and the identity provider cannot be "
                          f"reached to renew it ({type(err).__name__}); {again}",
                          status=401) from None
    try:
        answer = json.loads(response.text) if response.status_code == 200 else None
    except ValueError:
        answer = None
    token = answer.get("access_token") if isinstance(answer, dict) else None
    if not isinstance(token, str) or not token or any(c.isspace() for c in token):
        said = ""
        if isinstance(answer, dict) or response.status_code != 200:
            try:
                said = str(json.loads(response.text).get("error") or "")
            except (ValueError, AttributeError):
                said = ""
        raise RemoteError(f"the sign-in has expired and the identity provider would not renew "
                          f"it (HTTP {response.status_code}{' ' + said if said else ''}); "
                          f"{again}", status=401)
    fresh = dict(oauth)
    if isinstance(answer.get("refresh_token"), str) and answer["refresh_token"]:
        fresh["refreshToken"] = answer["refresh_token"]
    if isinstance(answer.get("expires_in"), int | float):
        fresh["expiresAt"] = int(time.time()) + int(answer["expires_in"])
    else:
        fresh.pop("expiresAt", None)
    if isinstance(answer.get("scope"), str):
        fresh["scope"] = answer["scope"]
    save_sign_in(home, mount_id, url, token, oauth=fresh)
    return token
