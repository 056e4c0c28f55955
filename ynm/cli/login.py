"""``ynm login`` and ``ynm logout``: the sign-in of a hosted store mounted with provider
``mcp`` (reference/cli.md §4.12, §4.13).

Two ways in, as the store allows:

- in a browser, through the identity provider the store names (OAuth with PKCE and a loopback
  redirect, :mod:`ynm.service.oauth`): on a terminal when no token is given and the store names
  one, or always with ``--browser``; the token is renewed with its refresh token as it expires;
- with the bearer token the store accepts (its static token, or one from the team's identity
  provider): ``--token``, else standard input when it is not a terminal, else a prompt that
  does not echo.

The token is checked against the store before it is kept, kept only in
``$YNM_HOME/auth/<mount>.json`` (0600, see :mod:`ynm.service.remote`) and never printed.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

import click

from ynm.cli._common import common_options, emit, json_on_failure, say


def _hosted_mounts(cwd: Path | None) -> tuple[Any, list[Any]]:
    from ynm.service.config import load_config

    loaded = load_config(cwd)
    return loaded, [m for m in loaded.config.mounts if m.provider == "mcp" and m.url]


GENERIC_LABELS = frozenset({"www", "api", "mcp", "memory", "mem", "ynm"})
"""Host name labels that say nothing about whose store it is (``mcp.acme.io`` is acme's)."""
DEFAULT_MOUNT_ID = "team"


def suggested_mount_id(url: str) -> str:
    """A readable mount id for the hosted store at ``url``, for the entry ``ynm login``
    suggests: the host name's most telling label, lower case, ``[a-z0-9_-]`` only.

    The last label (the top-level domain) and generic ones (:data:`GENERIC_LABELS`) are
    skipped while another is left: ``https://memory.example.com/mcp`` -> ``example``,
    ``https://mcp.acme.io`` -> ``acme``, ``http://devbox:9/mcp`` -> ``devbox``. A host that
    names no one (an IP address, ``localhost``), a url without a host, and a label that is
    the id of a built-in mount (``personal``, ``project``) give ``team``. No dot and no port
    ever appears (``127.0.0.1`` is no id anyone would type)."""
    import ipaddress
    from urllib.parse import urlsplit

    try:
        host = (urlsplit(url).hostname or "").lower().rstrip(".")
    except ValueError:
        host = ""
    try:
        ipaddress.ip_address(host)
        return DEFAULT_MOUNT_ID
    except ValueError:
        pass
    labels = [re.sub(r"[^a-z0-9_-]+", "-", label).strip("-") for label in host.split(".")]
    labels = [label for label in labels if label]
    if len(labels) > 1:
        labels = labels[:-1]  # the top-level domain
    telling = [label for label in labels if label not in GENERIC_LABELS] or labels
    chosen = telling[0] if telling else ""
    if chosen in ("", "localhost", "personal", "project"):
        return DEFAULT_MOUNT_ID
    return chosen


def no_remote(name: str) -> str:
    """The refusal for a ``ynm login`` of no configured hosted mount, with the mount entry to
    add: for a url, that url and a readable id from its host (:func:`suggested_mount_id`; a url
    is no mount id), else the id given and a url to fill in. Source: reference/cli.md §2
    (the message), §4.12."""
    url = "…"
    mount_id = name
    if "://" in name:
        mount_id = suggested_mount_id(name)
        url = name
    return (f'no remote mount "{name}": add {{"id":"{mount_id}","level":"distributed",'
            f'"provider":"mcp","url":"{url}"}} to mounts in ~/.ynm/config.json')


def _pick(mounts: list[Any], name: str) -> list[Any]:
    """The mounts ``name`` means: the one with that id, else every one with that url."""
    by_id = [m for m in mounts if m.id == name]
    return by_id or [m for m in mounts if m.url.rstrip("/") == name.rstrip("/")]


def _read_token(token: str | None) -> str:
    from ynm.errors import InvalidInput

    if token is None:
        if sys.stdin is not None and not sys.stdin.isatty():
            token = sys.stdin.readline()
        else:
            token = click.prompt("token", hide_input=True, err=True)
    token = (token or "").strip()
    if not token:
        raise InvalidInput("token: empty; give the hosted store's bearer token with --token, "
                           "on standard input, or at the prompt")
    if any(c.isspace() for c in token):
        raise InvalidInput("token: a bearer token holds no spaces or line breaks")
    return token


@click.command()
@click.argument("mount")
@click.option("--token", help="The bearer token (default: read from standard input, or asked "
                              "for without echo). Shown in the process list while it runs.")
@click.option("--browser", is_flag=True,
              help="Sign in through the identity provider the store names, in a browser "
                   "(the default on a terminal when no token is given and the store names one).")
@click.option("--no-open", is_flag=True,
              help="With a browser sign-in, print the address to open instead of opening a "
                   "browser (e.g. over SSH, where the redirect must still reach this machine).")
@common_options
def login(as_json: bool, cwd: Path | None, mount: str, token: str | None, browser: bool,
          no_open: bool) -> None:
    """Sign in to a hosted store mounted with provider mcp (by mount id or url).

    In a browser through the store's identity provider (OAuth with PKCE), or with a bearer
    token. The token is checked against the store, then kept in $YNM_HOME/auth/<mount>.json
    (readable only by you), never in configuration.

    \b
    Example:
      ynm login team
      ynm login team < token.txt
      ynm login https://memory.example.com/mcp --token "$TEAM_TOKEN"
    """
    from ynm.errors import Refused, YnmError
    from ynm.service.remote import (
        STATUS_TIMEOUT_S,
        RemoteError,
        RemoteMount,
        auth_path,
        call_tools,
        save_sign_in,
    )

    loaded, mounts = _hosted_mounts(cwd)
    chosen = _pick(mounts, mount)
    if not chosen:
        raise Refused(no_remote(mount))
    for m in chosen:
        auth_path(loaded.home, m.id)  # a bad id fails before the token is read
    if token is not None and browser:
        raise Refused("--token and --browser: give one way of signing in")
    on_terminal = sys.stdin is None or sys.stdin.isatty()
    if browser or (token is None and on_terminal):
        with json_on_failure(as_json):  # a later store failed: the ones signed in before it
            signed = _browser_sign_in(loaded.home, chosen, required=browser,
                                      open_browser=not no_open)
        if signed is not None:
            emit(signed[0] if len(signed) == 1 else signed, as_json,
                 lambda _: "\n".join(f"signed in to {o['mount']} ({o['url']})" for o in signed))
            return
    secret = _read_token(token)
    results = call_tools([(RemoteMount(m.id, m.url, secret, timeout=m.timeout), "memory_status", {})
                          for m in chosen], STATUS_TIMEOUT_S)
    for m, result in zip(chosen, results):
        if isinstance(result, RemoteError):
            raise YnmError(f"could not sign in to {m.id} ({m.url}): {result}")
    for m in chosen:
        save_sign_in(loaded.home, m.id, m.url, secret)
    out = [{"mount": m.id, "url": m.url, "signedIn": True, "scopes": []} for m in chosen]
    emit(out[0] if len(out) == 1 else out, as_json,
         lambda _: "\n".join(f"signed in to {m.id} ({m.url})" for m in chosen))


def _browser_sign_in(home: Path, chosen: list[Any], *, required: bool,
                     open_browser: bool) -> list[dict[str, Any]] | None:
    """Sign in to each chosen mount in a browser when its store names an identity provider;
    None (read a token instead) when none does and ``required`` is False.

    Raises:
        YnmError: ``could not sign in to <mount> (<url>): <why>``; when it failed at a later
            mount, its ``result`` lists the sign-ins made (and kept) before it.
        Interrupted: Ctrl-C while a mount's sign-in was waited for; its ``result`` lists the
            sign-ins made (and kept) before it, as the failure's does.
        Refused: ``required`` and a store names no identity provider."""
    from ynm.errors import Interrupted, Refused, YnmError
    from ynm.service.oauth import advertised_issuer, browser_sign_in
    from ynm.service.remote import STATUS_TIMEOUT_S, RemoteError, save_sign_in

    issuers = []
    for m in chosen:
        try:
            issuers.append(advertised_issuer(m.url, m.timeout or STATUS_TIMEOUT_S))
        except RemoteError as err:
            raise YnmError(f"could not sign in to {m.id} ({m.url}): {err}") from None
    if not all(issuers):
        if required:
            m = chosen[issuers.index(None)]
            raise Refused(f"{m.id} ({m.url}) names no identity provider to sign in with in a "
                          f"browser; give the store's token instead: ynm login {m.id} --token ...")
        return None
    out = []
    for m in chosen:
        def tell(line: str, m: Any = m) -> None:
            say(f"{m.id}: {line}", err=True)
        try:
            signed = browser_sign_in(m.url, open_browser=open_browser, say=tell)
        except YnmError as err:
            failed = YnmError(f"could not sign in to {m.id} ({m.url}): {err}")
            failed.result = out or None  # the sign-ins kept before it, for --json
            raise failed from None
        except KeyboardInterrupt:  # Ctrl-C while waiting for the browser
            done = f"signed in to {', '.join(o['mount'] for o in out)} and kept; " if out else ""
            stopped = Interrupted(f"{done}{m.id} was not signed in",
                                  f"run `ynm login {m.id}` to sign in to it")
            stopped.result = out or None  # the sign-ins kept before it, for --json
            raise stopped from None
        save_sign_in(home, m.id, m.url, signed.token, oauth=signed.oauth)
        out.append({"mount": m.id, "url": m.url, "signedIn": True,
                    "scopes": list(signed.scopes)})
    return out


@click.command()
@click.argument("mount", required=False)
@common_options
def logout(as_json: bool, cwd: Path | None, mount: str | None) -> None:
    """Forget this machine's sign-in to a hosted store (by mount id or url; every one when
    none is named). Works for mounts no longer configured; always exits 0.

    \b
    Example:
      ynm logout team
    """
    from ynm.service.config import load_config
    from ynm.service.remote import AUTH_DIR, delete_sign_in

    loaded = load_config(cwd)
    if mount is None:
        folder = loaded.home / AUTH_DIR
        names = sorted(p.stem for p in folder.glob("*.json")) if folder.is_dir() else []
    else:
        configured = [m for m in loaded.config.mounts if m.provider == "mcp" and m.url]
        names = [m.id for m in _pick(configured, mount)] or [mount]
    out = [{"mount": name, "signedOut": delete_sign_in(loaded.home, name)} for name in names]

    def human(_: Any) -> str:
        if not out:
            return "not signed in to any hosted store"
        return "\n".join(f"signed out of {o['mount']}" if o["signedOut"]
                         else f"not signed in to {o['mount']}" for o in out)

    emit(out[0] if len(out) == 1 else out, as_json, human)
