"""Hosted stores mounted from the CLI: mounts with provider ``mcp``, their sign-ins, the MCP
calls that reach them, and how their hits join the local ones.

A hosted store is a ``ynm serve --http`` (or the reference's server) reached over streamable
HTTP: one JSON-RPC ``tools/call`` POST sent with ``httpx`` (a core dependency), and the ``mcp``
SDK's client (the ``server`` extra) only for a store that needs the handshake-era protocol
(:func:`_call`). It is configured like any mount, without its token::

    {"id": "team", "level": "distributed", "provider": "mcp", "url": "https://mem.example/mcp"}

The token is kept by ``ynm login team`` in ``$YNM_HOME/auth/team.json`` (folder 0700, file
0600, bound to the url: a token is only ever sent to the url it was saved for) and removed by
``ynm logout``. It is never written to configuration, printed, or put in a message.

Reads fan out (reference/algorithms.md §2.7, §3.4; storage.md §5.3): ``recall`` asks each
selected hosted store for ``memory_recall`` and ranks its hits on the local scale
(:func:`weigh_hosted`), ``context`` gives each a section of at most 40% of the budget with a
3000 ms timeout. A store that cannot be reached, or refuses the token, is left out and named
(:class:`LeftOut`), never dropped silently; the read still answers with the local hits.

``httpx`` and ``anyio`` are imported only when a hosted store is called, and ``mcp`` (seconds
to import, with its ``httpx2``) only for a store that needs it, so a command with a hosted
mount starts nearly as fast as one without, and a ``ynm serve --http`` store is reached on a
machine without the server extra.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ynm.errors import InvalidInput, YnmError

__all__ = [
    "CONTEXT_TIMEOUT_S",
    "RECALL_TIMEOUT_S",
    "LeftOut",
    "RemoteError",
    "RemoteMount",
    "auth_path",
    "call_tools",
    "check_sign_in",
    "delete_sign_in",
    "edit_hosted",
    "hosted_context",
    "hosted_hits",
    "hosted_recall",
    "hosted_status",
    "hosted_target",
    "join_context",
    "read_renewal",
    "read_sign_in",
    "remember_hosted",
    "remote_mounts",
    "save_sign_in",
    "weigh_hosted",
]

CONTEXT_TIMEOUT_S = 3.0  # REMOTE_CONTEXT_TIMEOUT_MS of the reference (algorithms.md §3.4)
RECALL_TIMEOUT_S = 10.0  # the reference sets none for recall; a dead store must not hang it
STATUS_TIMEOUT_S = 5.0
CONTEXT_SHARE = 0.4  # of the budget, split between the hosted stores (algorithms.md §3.4)
AUTH_DIR = "auth"
_MOUNT_FILE_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$")


class RemoteError(YnmError):
    """A hosted store that could not answer: unreachable, no answer in time, the token refused,
    or a tool error. The message says why, never holds the token, and names no mount (callers
    add ``<mount> (<url>)``). ``status``: the HTTP status that refused the call, if any;
    ``answered``: the store ran the tool and answered with an error (``tool_text`` is its
    message), as opposed to not being reached."""

    def __init__(self, reason: str, *, status: int | None = None,
                 tool_text: str | None = None) -> None:
        super().__init__(reason)
        self.status = status
        self.tool_text = tool_text

    @property
    def timed_out(self) -> bool:
        """True when the store gave no answer in time (it may still be working)."""
        return str(self).startswith("no answer")

    @property
    def answered(self) -> bool:
        """True when the store was reached and the tool itself failed."""
        return self.tool_text is not None


@dataclass(frozen=True)
class RemoteMount:
    """A hosted store: mount ``id``, MCP endpoint ``url``, and the token of its sign-in
    (None when not signed in; never shown in ``repr``). Always distributed."""

    id: str
    url: str
    token: str | None = field(default=None, repr=False)
    timeout: float | None = None  # seconds per call, from the mount's ``timeout``
    problem: str | None = None  # what is wrong with its sign-in file (check_sign_in)
    level: str = "distributed"
    # a browser sign-in's renewal data (ynm.service.oauth) and the home keeping it
    oauth: dict[str, Any] | None = field(default=None, repr=False, compare=False, hash=False)
    home: Path | None = field(default=None, repr=False, compare=False)
    provider: str = "mcp"

    @property
    def location(self) -> str:
        """Where the store is: its url (shown by ``ynm status``)."""
        return self.url


@dataclass(frozen=True)
class LeftOut:
    """A hosted store a read could not include: ``mount``, ``url`` and why (``reason``).
    JSON: ``{"mount", "url", "reason"}``."""

    mount: str
    url: str
    reason: str

    def to_obj(self) -> dict[str, str]:
        """The JSON shape ``{"mount", "url", "reason"}``."""
        return {"mount": self.mount, "url": self.url, "reason": self.reason}

    def __str__(self) -> str:
        return f"{self.mount} ({self.url}): {self.reason}"


# -- sign-ins ------------------------------------------------------------------------------


def auth_path(home: Path, mount_id: str) -> Path:
    """``<home>/auth/<mount id>.json``, the sign-in file of a hosted mount (reference/cli.md
    §4.12).

    Raises:
        InvalidInput: a mount id that cannot be a file name (a ``/``, a leading dot, over 128
            characters): it would write outside the folder.
    """
    if not _MOUNT_FILE_ID.match(mount_id):
        raise InvalidInput(f"mount: {mount_id!r} cannot name a sign-in file (use letters, "
                           "digits, '.', '_' and '-')")
    return Path(home) / AUTH_DIR / f"{mount_id}.json"


def save_sign_in(home: Path, mount_id: str, url: str, token: str,
                 oauth: dict[str, Any] | None = None) -> Path:
    """Keep ``token`` for the hosted mount ``mount_id`` at ``url``, replacing any earlier
    sign-in. The folder is made 0700 and the file is created 0600 before a byte is written
    (then renamed into place), so no other user can ever read the token. Content: ``{"v": 1,
    "url", "token"}``, plus ``"oauth"`` (what renewing a browser sign-in needs, see
    :mod:`ynm.service.oauth`) when given. Returns the file's path.

    Source: reference/server.md §3.1 and §6 ("credentials 0600 in a 0700 dir, bound to URL").
    """
    path = auth_path(home, mount_id)
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path.parent, 0o700)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            json.dump({"v": 1, "url": url, "token": token, **({"oauth": oauth} if oauth else {})},
                      f)
            f.write("\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def read_sign_in(home: Path, mount_id: str, url: str) -> str | None:
    """The token kept for ``mount_id``, only if it was saved for this very ``url`` (a mount
    whose url changed is not signed in: its token is never sent elsewhere). None when there is
    no sign-in, or the file cannot be read, is not ynm's, or holds a token that cannot be a
    bearer header (:func:`check_sign_in` says which)."""
    return check_sign_in(home, mount_id, url)[0]


def check_sign_in(home: Path, mount_id: str, url: str) -> tuple[str | None, str | None]:
    """``(token, problem)`` of the sign-in file of ``mount_id`` (see :func:`read_sign_in`
    for when the token is None). ``problem`` names the file and the fix when it is damaged
    (not JSON, not ynm's, a token that cannot be sent) or readable by other users (mode
    ``0644``: the token is still used; reference/server.md §6 keeps credentials 0600); None
    when there is no file or nothing is wrong."""
    try:
        path = auth_path(home, mount_id)
    except YnmError:
        return None, None
    try:
        raw = path.read_text(encoding="utf-8")
        mode = path.stat().st_mode & 0o777
    except FileNotFoundError:
        return None, None
    except (OSError, ValueError) as err:
        return None, (f"sign-in file {path} cannot be read ({type(err).__name__}): fix or "
                      f"remove it and run `ynm login {mount_id}`")
    damaged = (f"sign-in file {path} is damaged ({{why}}), so {mount_id} is not signed in: "
               f"run `ynm login {mount_id}` to replace it")
    try:
        data = json.loads(raw)
    except ValueError:
        return None, damaged.format(why="not JSON")
    if not isinstance(data, dict) or not isinstance(data.get("url"), str):
        return None, damaged.format(why="not a ynm sign-in")
    if data["url"] != url:
        return None, None  # saved for the mount's old url: not signed in, by design
    token = data.get("token")
    # a hand-edited token with a space or control character would be refused by the HTTP
    # client in an error message that quotes the header: not signed in instead
    if not isinstance(token, str) or not token or not token.isprintable() \
            or any(c.isspace() for c in token):
        return None, damaged.format(why="no token that can be sent")
    if mode & 0o077:
        return token, (f"sign-in file {path} can be read by other users (mode {mode:04o}): "
                       f"run `chmod 600 {path}`")
    return token, None


def read_renewal(home: Path, mount_id: str, url: str) -> dict[str, Any] | None:
    """The ``"oauth"`` renewal data of a browser sign-in kept for ``mount_id`` at ``url``
    (see :mod:`ynm.service.oauth`), or None (a token sign-in, none, or not readable)."""
    try:
        data = json.loads(auth_path(home, mount_id).read_text(encoding="utf-8"))
    except (OSError, ValueError, YnmError):
        return None
    if not isinstance(data, dict) or data.get("url") != url:
        return None
    oauth = data.get("oauth")
    return oauth if isinstance(oauth, dict) else None


def delete_sign_in(home: Path, mount_id: str) -> bool:
    """Remove the sign-in of ``mount_id``. Returns whether there was one (False for an id
    that cannot name a sign-in file)."""
    try:
        path = auth_path(home, mount_id)
    except InvalidInput:
        return False
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True


def remote_mounts(loaded: Any) -> list[RemoteMount]:
    """The hosted (``provider: mcp``) mounts of a configuration
    (:class:`ynm.service.config.LoadedConfig`), in configuration order, with their tokens."""
    out = []
    for mc in loaded.config.mounts:
        if mc.provider == "mcp" and mc.url:
            token, problem = check_sign_in(loaded.home, mc.id, mc.url)
            oauth = read_renewal(loaded.home, mc.id, mc.url) if token else None
            out.append(RemoteMount(mc.id, mc.url, token, timeout=mc.timeout, problem=problem,
                                   oauth=oauth, home=loaded.home))
    return out


# -- calls ---------------------------------------------------------------------------------


def call_tools(calls: Sequence[tuple[RemoteMount, str, dict[str, Any]]],
               timeout_s: float) -> list[Any]:
    """Call one MCP tool on each hosted store, all at once, each bounded by its mount's
    ``timeout`` (:attr:`RemoteMount.timeout`), else ``timeout_s`` seconds (connecting
    included). Returns, in the order of ``calls``, the tool's ``data``
    (``structuredContent.data``, else the JSON text before any ``Guidance:``) or the
    :class:`RemoteError` saying why there is none; a store that needs the handshake-era
    protocol, on a machine without the ``mcp`` client (the ``server`` extra), gets an error
    saying which extra to install. Raises nothing for a store's failure, so a read still
    answers with the local hits.
    """
    from ynm.errors import missing_extra

    try:
        import anyio
        import httpx  # noqa: F401
    except ImportError as err:
        why = str(missing_extra(err, "a hosted (mcp) mount", "server"))
        return [RemoteError(why) for _ in calls]
    results: list[Any] = [None] * len(calls)
    default_s = timeout_s

    async def one(i: int, remote: RemoteMount, tool: str, args: dict[str, Any]) -> None:
        timeout_s = remote.timeout or default_s
        try:
            with anyio.fail_after(timeout_s):
                results[i] = await _call_renewing(remote, tool, args, timeout_s)
        except TimeoutError:
            results[i] = RemoteError(f"no answer within {timeout_s:g} s (give a slow store "
                                     f"more with \"timeout\" in its mount's configuration)")
        except RemoteError as err:
            results[i] = err

    async def all_calls() -> None:
        async with anyio.create_task_group() as tg:
            for i, (remote, tool, args) in enumerate(calls):
                tg.start_soon(one, i, remote, tool, args)

    if calls:
        anyio.run(all_calls)
    return results


MODERN_PROTOCOL = "2026-07-28"  # the MCP protocol version a one-request tool call speaks


async def _call_renewing(remote: RemoteMount, tool: str, args: dict[str, Any],
                         timeout_s: float) -> Any:
    """:func:`_call`, for a browser sign-in with a refresh token renewing the access token
    first when it has expired, or once when the store refuses it (401) before its time
    (:func:`ynm.service.oauth.renew`)."""
    from dataclasses import replace

    from ynm.service import oauth

    renewable = bool(remote.oauth and remote.oauth.get("refreshToken") and remote.home)
    if renewable and oauth.expired(remote.oauth):
        token = await oauth.renew(remote.home, remote.id, remote.url, remote.oauth, timeout_s)
        return await _call(replace(remote, token=token), tool, args, timeout_s)
    try:
        return await _call(remote, tool, args, timeout_s)
    except RemoteError as err:
        if not (renewable and err.status == 401):
            raise
    token = await oauth.renew(remote.home, remote.id, remote.url, remote.oauth, timeout_s)
    return await _call(replace(remote, token=token), tool, args, timeout_s)


async def _call(remote: RemoteMount, tool: str, args: dict[str, Any], timeout_s: float) -> Any:
    """One tool call over streamable HTTP; every failure becomes a :class:`RemoteError`.

    The call is one JSON-RPC ``tools/call`` POST of the modern (sessionless) MCP protocol,
    sent with ``httpx``: ``ynm serve --http`` answers it in one JSON (or event-stream)
    response, and importing the ``mcp`` client (about 2.5 s) is spared. A store that does not
    speak that protocol (a handshake-era server: HTTP 400, or the JSON-RPC error -32022 or
    another protocol error) is asked again with the ``mcp`` client, which negotiates."""
    import httpx

    headers = {"Accept": "application/json, text/event-stream",
               "Content-Type": "application/json", "MCP-Protocol-Version": MODERN_PROTOCOL,
               "Mcp-Method": "tools/call", "Mcp-Name": tool}
    if remote.token:
        headers["Authorization"] = f"Bearer {remote.token}"
    meta = {"io.modelcontextprotocol/protocolVersion": MODERN_PROTOCOL,
            "io.modelcontextprotocol/clientInfo": {"name": "ynm", "version": _version()},
            "io.modelcontextprotocol/clientCapabilities": {}}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": tool, "arguments": args, "_meta": meta}}
    try:
        async with httpx.AsyncClient(timeout=httpx.Timeout(timeout_s)) as http:
            response = await http.post(remote.url, json=body, headers=headers)
            await response.aread()
    except Exception as err:  # noqa: BLE001 - translated here, at the one boundary
        raise _translate(err, [], remote) from None
    status = response.status_code
    if status in (401, 403, 404, 421):
        raise _translate(None, [(status, response.headers.get("www-authenticate", ""),
                                 response.text)], remote)
    message = _answer(response) if status < 300 else None
    error = message.get("error") if isinstance(message, dict) else None
    if status == 400 or (isinstance(error, dict) and error.get("code") in _PROTOCOL_ERRORS):
        return await _call_negotiated(remote, tool, args, timeout_s)
    if status >= 300:
        raise RemoteError(f"the hosted store answered HTTP {status}{_said(response.text)}",
                          status=status)
    if isinstance(error, dict):
        text = str(error.get("message") or error)
        raise RemoteError("the hosted store answered with an error: " + text, tool_text=text)
    result = message.get("result") if isinstance(message, dict) else None
    if not isinstance(result, dict):
        raise RemoteError("the hosted store's answer is not an MCP result")
    return _data(result.get("isError"), result.get("structuredContent"),
                 "".join(str(c.get("text", "")) for c in result.get("content") or []
                         if isinstance(c, dict)))


# JSON-RPC errors of a store that wants another protocol: invalid request, method not found,
# unsupported protocol version (-32022), server not initialized (-32002)
_PROTOCOL_ERRORS = (-32600, -32601, -32022, -32002)


def _version() -> str:
    from ynm import __version__

    return __version__


def _answer(response: Any) -> Any:
    """The JSON-RPC response of id 1 in a JSON body or an event stream (None if none)."""
    kind = response.headers.get("content-type", "")
    try:
        if "text/event-stream" in kind:
            for event in response.text.split("\n\n"):
                data = "\n".join(line[5:].lstrip() for line in event.splitlines()
                                 if line.startswith("data:"))
                if data:
                    message = json.loads(data)
                    if isinstance(message, dict) and message.get("id") == 1:
                        return message
            return None
        return json.loads(response.text)
    except ValueError:
        return None


def _data(is_error: Any, structured: Any, text: str) -> Any:
    """A tool result's ``data``: ``structuredContent.data``, else the JSON text before any
    ``Guidance:``; a tool error is a :class:`RemoteError` with the store's text."""
    if is_error:
        raise RemoteError("the hosted store answered with an error: " + text, tool_text=text)
    if isinstance(structured, dict) and "data" in structured:
        return structured["data"]
    body = text.split("\n\nGuidance: ", 1)[0]
    try:
        return json.loads(body)
    except ValueError:
        raise RemoteError("the hosted store's answer is not JSON") from None


async def _call_negotiated(remote: RemoteMount, tool: str, args: dict[str, Any],
                           timeout_s: float) -> Any:
    """The tool call through the ``mcp`` SDK's client, which negotiates the protocol with
    the store; for stores that do not take the one-request call."""
    try:
        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client
    except ImportError as err:
        from ynm.errors import missing_extra

        raise RemoteError(str(missing_extra(err, "a hosted (mcp) mount", "server"))) from None

    refused: list[tuple[int, str, str]] = []

    async def watch(response: Any) -> None:
        if response.status_code in (401, 403, 404, 421):
            await response.aread()
            refused.append((response.status_code,
                            response.headers.get("www-authenticate", ""), response.text))

    headers = {"Authorization": f"Bearer {remote.token}"} if remote.token else {}
    try:
        async with (
            httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(timeout_s),
                               event_hooks={"response": [watch]}) as http,
            Client(streamable_http_client(remote.url, http_client=http)) as client,
        ):
            result = await client.call_tool(tool, args)
    except Exception as err:  # noqa: BLE001 - translated here, at the one boundary
        raise _translate(err, refused, remote) from None
    return _data(getattr(result, "is_error", False), getattr(result, "structured_content", None),
                 _text(result))


def _text(result: Any) -> str:
    return "".join(getattr(c, "text", "") for c in getattr(result, "content", []) or [])


def _leaves(err: BaseException) -> list[BaseException]:
    if isinstance(err, BaseExceptionGroup):
        return [leaf for sub in err.exceptions for leaf in _leaves(sub)]
    return [err]


def _params(challenge: str, body: str) -> dict[str, str]:
    """The ``error``, ``error_description`` and ``scope`` of a refusal: the
    ``WWW-Authenticate`` challenge's parameters (RFC 6750 §3), else the JSON body's."""
    found = {k.lower(): v for k, v in re.findall(r'([A-Za-z_]+)="([^"]*)"', challenge)}
    try:
        data = json.loads(body) if body else None
    except ValueError:
        data = None
    if isinstance(data, dict):
        for key in ("error", "error_description", "scope"):
            if isinstance(data.get(key), str):
                found.setdefault(key, data[key])
    # the store's words are shown: printable, one line, bounded
    return {k: "".join(c for c in v if c.isprintable())[:200] for k, v in found.items()}


def _refusal(status: int, challenge: str, body: str, remote: RemoteMount) -> RemoteError:
    """A refused call in words, with the store's reason (``error_description``) and what can
    help: a new token for a token refused (401), one with the missing scope for 403
    ``insufficient_scope`` (RFC 6750 §3.1)."""
    p = _params(challenge, body)
    code, why = p.get("error"), p.get("error_description")
    said = f"{code}: {why}" if code and why else (code or why or "")
    if status == 401:
        if remote.token is None:
            return RemoteError(f"not signed in; run `ynm login {remote.id}`", status=401)
        return RemoteError(
            f"the hosted store refused the sign-in (401 {said or 'invalid_token'}); get a new "
            f"token (from the store's operator or your identity provider) and sign in with it: "
            f"`ynm login {remote.id}`", status=401)
    if status == 403:
        text = f"the hosted store refused access (403{' ' + said if said else ''})"
        if code == "insufficient_scope" and p.get("scope"):
            text += (f"; the token lacks the scope {p['scope']}: sign in with a token that "
                     f"has it: `ynm login {remote.id}`")
        return RemoteError(text, status=403)
    if status == 421:
        return RemoteError(f"the hosted store refused the url's host name (421"
                           f"{' ' + said if said else ''})", status=421)
    return RemoteError("no MCP endpoint at this url (404)", status=404)


def _said(body: str) -> str:
    p = _params("", body)
    said = p.get("error_description") or p.get("error")
    return f": {said}" if said else ""


def _translate(err: BaseException | None, refused: list[tuple[int, str, str]],
               remote: RemoteMount) -> RemoteError:
    """Why a call failed, in words (httpx's habit of mapping foreign errors at one boundary):
    the HTTP refusal seen if any (``(status, WWW-Authenticate, body)``), else the first
    underlying error, from ``httpx`` (the one-request call) or ``httpx2`` (the ``mcp``
    client's). Never the token."""
    import httpx

    timeouts: tuple[type[BaseException], ...] = (TimeoutError, httpx.TimeoutException)
    transports: tuple[type[BaseException], ...] = (httpx.TransportError,)
    statuses: tuple[type[BaseException], ...] = (httpx.HTTPStatusError,)
    try:
        import httpx2
    except ImportError:
        pass
    else:
        timeouts += (httpx2.TimeoutException,)
        transports += (httpx2.TransportError,)
        statuses += (httpx2.HTTPStatusError,)
    if refused:
        return _refusal(*refused[-1], remote)
    assert err is not None
    leaves = _leaves(err)
    for leaf in leaves:
        if isinstance(leaf, timeouts):
            return RemoteError("no answer in time")
        if isinstance(leaf, transports):
            return RemoteError(f"cannot reach it ({leaf or type(leaf).__name__})")
        if isinstance(leaf, statuses):
            status = leaf.response.status_code  # type: ignore[attr-defined]
            return RemoteError(f"the hosted store answered HTTP {status}", status=status)
    from ynm.errors import describe_unexpected

    return RemoteError(f"the call failed ({describe_unexpected(leaves[0])})")


# -- ranking hosted hits beside local ones ---------------------------------------------------


def weigh_hosted(hits: list[dict[str, Any]], text: str | None) -> float | None:
    """The evidence of one hosted store's hits for ``text`` (None for a filter-only recall):
    the most, over its hits, of ``relevance x share**3``, where ``relevance`` is the hit's own
    (asked with ``explain``: best 1 in that store) and ``share`` the part of the query's words
    (function words aside) the hit holds, matched by FTS5 with the cache's tokenizer (porter
    stemming, so ``deploys`` holds ``deploy``). This is the measure
    :func:`ynm.service.recall.ranked_across` weighs local mounts with, except that each word
    counts the same (the hosted store's IDF is not known here); see that function."""
    from ynm.model.text import FUNCTION_WORDS, is_word_phrase, phrase_words, query_phrases

    if not text:
        return None
    words = [p for p in query_phrases(text) if is_word_phrase(p)
             and phrase_words(p)[0] not in FUNCTION_WORDS]
    if not hits:
        return 0.0
    if not words:
        return max(_relevance(h) for h in hits)
    held = _shares(hits, words)
    return max(_relevance(h) * held[i] ** 3 for i, h in enumerate(hits))


def _relevance(hit: dict[str, Any]) -> float:
    explain = hit.get("explain")
    if isinstance(explain, dict) and isinstance(explain.get("relevance"), int | float):
        return max(0.0, min(1.0, float(explain["relevance"])))
    return 1.0  # a store that gives no parts: its hits count as full matches


def _shares(hits: list[dict[str, Any]], words: list[str]) -> list[float]:
    """For each hit, the part of ``words`` (quoted FTS5 phrases) it holds in its summary,
    content, subject or tags."""
    import sqlean as sqlite3

    from ynm.index.schema import fts_values

    conn = sqlite3.connect(":memory:")
    try:
        conn.execute("CREATE VIRTUAL TABLE h USING fts5(summary, content, subject, tags, "
                     "tokenize = 'porter unicode61')")
        conn.executemany("INSERT INTO h(rowid, summary, content, subject, tags) "
                         "VALUES (?, ?, ?, ?, ?)",
                         [(i, *fts_values(str(h.get("summary") or ""),
                                          str(h.get("content") or ""),
                                          h.get("subject"), [str(t) for t in h.get("tags") or []]))
                          for i, h in enumerate(hits)])
        held = [0] * len(hits)
        for word in words:
            for (rowid,) in conn.execute("SELECT rowid FROM h WHERE h MATCH ?", (word,)):
                held[rowid] += 1
    finally:
        conn.close()
    return [n / len(words) for n in held]


# -- the operations on hosted stores (called by ynm.service.ynm.Ynm) -----------------------


def hosted_recall(remotes: Sequence[RemoteMount], q: Any
                  ) -> tuple[list[tuple[RemoteMount, list[dict[str, Any]], float | None]],
                             list[LeftOut]]:
    """Ask each of ``remotes`` for ``memory_recall`` with the query ``q``
    (:class:`ynm.model.inputs.RecallQuery`) less ``mount`` and ``level``, with ``explain``
    (each hit's relevance weighs it: :func:`weigh_hosted`), all at once, 10 s each. Returns
    ``(store, hits, evidence)`` per store that answered, and the stores left out
    (reference/algorithms.md §2.7)."""
    if not remotes:
        return [], []
    args = q.model_dump(by_alias=True, exclude_none=True, exclude_defaults=True,
                        exclude={"mount", "level"})
    args.update(limit=q.limit, explain=True)
    answered, left_out = [], []
    results = call_tools([(r, "memory_recall", args) for r in remotes], RECALL_TIMEOUT_S)
    for r, hits in zip(remotes, results):
        if not isinstance(hits, list) or not all(isinstance(h, dict) for h in hits):
            why = str(hits) if isinstance(hits, Exception) else "its answer is not a list of hits"
            left_out.append(LeftOut(r.id, r.url, why))
            continue
        answered.append((r, hits, weigh_hosted(hits, q.text)))
    return answered, left_out


def hosted_hits(q: Any, hosted: Sequence[tuple[RemoteMount, list[dict[str, Any]], float | None]],
                strongest: float, now_ms: int) -> list[dict[str, Any]]:
    """The hosted stores' hits (:func:`hosted_recall`) scored on the local scale, as
    RecallHits with ``mount`` the hosted mount's id and ``explain`` only when ``q`` asks:
    seed 001's ranker (ynm.model.ranker) over the hit's own relevance times its store's
    evidence over ``strongest``, the strongest evidence of every store searched, local or
    hosted, as :func:`ynm.service.recall.ranked_across` weighs local mounts. A hit without a
    type or ``updatedAt`` is dropped (nothing to rank it by), and so is one whose relevance
    comes to 0 with text, as a local hit would be (its store gave it none, or the store's
    evidence is 0 beside a stronger one's): recency and importance alone would rank it.

    The reference instead fuses the local list and each hosted list by reciprocal rank
    (k = 60) and replaces every score by the fused one (algorithms.md §2.7, §8.8): the first
    hit of each list then ties, a one-word match with a full one, which is what the weighing
    across local mounts exists to avoid."""
    from ynm.model.ranker import iso_to_ms, score

    has_text = bool(q.text and q.text.strip())
    out = []
    for remote, hits, evidence in hosted:
        factor = 1.0
        if evidence is not None and strongest > 0:
            factor = min(1.0, evidence / strongest)
        for h in hits:
            if has_text and _relevance(h) * factor <= 0:
                continue
            try:
                s = score(relevance=_relevance(h) * factor, memory_type=str(h["type"]),
                          updated_at_ms=iso_to_ms(str(h["updatedAt"])),
                          importance=float(h.get("importance", 0.5)),
                          pinned=bool(h.get("pinned")), has_text=has_text, now_ms=now_ms)
            except (KeyError, TypeError, ValueError):
                continue
            rebuilt: dict[str, Any] = {"memoryId": h.get("memoryId"), "mount": remote.id,
                                       "score": s.total}
            if q.explain:
                rebuilt["explain"] = s.explain()
            rebuilt.update((k, v) for k, v in h.items()
                           if k not in ("memoryId", "mount", "score", "explain"))
            out.append(rebuilt)
    return out


def hosted_context(remotes: Sequence[RemoteMount], q: Any
                   ) -> tuple[list[dict[str, Any]], list[LeftOut]]:
    """The hosted stores' sections of a context block for ``q``
    (:class:`ynm.model.inputs.ContextQuery`; reference/algorithms.md §3.4): each store gets
    ``floor(budget x 0.4 / stores)`` tokens and 3 s; a non-empty block's ``## Memory``
    heading becomes ``## Shared memory (<mount>)``; empty blocks are dropped. Returns the
    blocks ``{markdown, included, tokens, truncated}`` in mount order, and the stores left
    out."""
    if not remotes:
        return [], []
    share = int(q.budget_tokens * CONTEXT_SHARE // len(remotes))
    if share < 1:
        return [], [LeftOut(r.id, r.url, f"a budget of {q.budget_tokens} tokens leaves it none")
                    for r in remotes]
    args = q.model_dump(by_alias=True, exclude_none=True, exclude_defaults=True,
                        exclude={"mount", "level", "budget_tokens"})
    args["budgetTokens"] = share
    blocks, left_out = [], []
    results = call_tools([(r, "memory_context", args) for r in remotes], CONTEXT_TIMEOUT_S)
    for r, block in zip(remotes, results):
        if not isinstance(block, dict) or not isinstance(block.get("markdown"), str):
            why = str(block) if isinstance(block, Exception) else "its answer is not a block"
            left_out.append(LeftOut(r.id, r.url, why))
            continue
        markdown = block["markdown"]
        if not markdown:
            continue
        if markdown.startswith("## Memory\n"):
            markdown = f"## Shared memory ({r.id})\n" + markdown[len("## Memory\n"):]
        blocks.append({"markdown": markdown, "included": list(block.get("included") or []),
                       "tokens": _int(block.get("tokens")),
                       "truncated": bool(block.get("truncated"))})
    return blocks, left_out


def join_context(local: dict[str, Any], hosted: Sequence[dict[str, Any]],
                 left_out: Sequence[LeftOut]) -> dict[str, Any]:
    """The context block: the non-empty local block, then the hosted sections, joined by a
    newline; ``included`` concatenated, ``tokens`` summed, ``truncated`` OR-ed
    (reference/algorithms.md §3.4); plus ``leftOut: [{mount, url, reason}]`` when a hosted
    store was left out (ours: the reference only notes it)."""
    block = dict(local)
    if hosted:
        block = {
            "markdown": "\n".join(b["markdown"] for b in [local, *hosted] if b["markdown"]),
            "included": [*local["included"], *(i for b in hosted for i in b["included"])],
            "tokens": local["tokens"] + sum(b["tokens"] for b in hosted),
            "truncated": bool(local["truncated"] or any(b["truncated"] for b in hosted)),
        }
    if left_out:
        block["leftOut"] = [x.to_obj() for x in left_out]
    return block


def hosted_status(remotes: Sequence[RemoteMount]) -> list[dict[str, Any]]:
    """One ``ynm status`` mount entry per hosted store, each asked for ``memory_status`` (5 s,
    all at once): ``{id, level, provider: "mcp", location: <url>, signedIn, shards}``, shards
    being the store's own count, or ``shards: -1`` and ``error: <why>`` when it cannot be
    reached or refuses the sign-in, as a local mount that cannot be opened."""
    results = call_tools([(r, "memory_status", {}) for r in remotes], STATUS_TIMEOUT_S)
    out = []
    for r, result in zip(remotes, results):
        entry: dict[str, Any] = {"id": r.id, "level": r.level, "provider": r.provider,
                                 "location": r.location, "signedIn": r.token is not None}
        if isinstance(result, RemoteError):
            entry.update(shards=-1, error=str(result))
        else:
            mounts = result.get("mounts") if isinstance(result, dict) else None
            entry["shards"] = sum(max(_int(m.get("shards")), 0) for m in mounts
                                  if isinstance(m, dict)) if isinstance(mounts, list) else 0
        out.append(entry)
    return out


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def hosted_target(mounts: Sequence[Any], remotes: Sequence[RemoteMount], level: str,
                  mount_id: str | None) -> RemoteMount | None:
    """The hosted store a new record goes to, or None for a local mount (``mounts``): the one
    ``mount_id`` names, else, for a distributed record, the first hosted store when no local
    distributed mount is open (reference/storage.md §5.3).

    Raises:
        MountLevelMismatch: a personal record named a hosted (always distributed) store.
    """
    from ynm.errors import MountLevelMismatch

    if mount_id is not None:
        if any(m.id == mount_id for m in mounts):
            return None
        for r in remotes:
            if r.id == mount_id:
                if level != r.level:
                    raise MountLevelMismatch(r.id, r.level, level)
                return r
        return None
    if level == "distributed" and remotes and not any(m.level == "distributed"
                                                      for m in mounts):
        return remotes[0]
    return None


def remember_hosted(remote: RemoteMount, inp: Any, level: str,
                    namespace: str) -> dict[str, Any]:
    """Forward a remember (:class:`ynm.model.inputs.RememberInput`) to a hosted store as
    ``memory_remember`` without ``mount``; the store stamps, gates and writes it. Returns its
    WriteResult with ``mount`` the hosted mount's id. A store that cannot take it fails the
    write, which never lands elsewhere (reference/storage.md §5.3).

    Raises:
        YnmError: ``mount <id> (<url>): <why>; nothing was written``.
    """
    args = inp.model_dump(by_alias=True, exclude_none=True, exclude={"mount"})
    args["level"] = level
    if inp.namespace is not None:
        args["namespace"] = namespace
    (result,) = call_tools([(remote, "memory_remember", args)], RECALL_TIMEOUT_S)
    if isinstance(result, RemoteError) and result.timed_out:
        # the store may have taken it and still be writing: never claim it did not
        raise YnmError(f"mount {remote.id} ({remote.url}): {result}; it may or may not have "
                       "been written: check with `ynm recall --mount "
                       f"{remote.id}` before writing it again")
    return _write_result(remote, result, "; nothing was written")


def edit_hosted(remotes: Sequence[RemoteMount], tool: str, inp: Any) -> dict[str, Any]:
    """An edit (``tool``: ``memory_supersede``, ``memory_annotate``, ``memory_forget``; ``inp``
    its input) of a memory no local mount holds, tried on each hosted store in order until
    one does not answer ``unknown memory`` (reference/cli.md §4.1, storage.md §5.3: the
    reference matches that text too, as MCP carries no error type). Returns that store's
    WriteResult with ``mount`` its mount id.

    Raises:
        UnknownMemory: every hosted store answered ``unknown memory``.
        YnmError: ``unknown memory <id> in the mounts that answered; not asked: <mount>
            (<url>): <why>`` when a store that may hold it could not be asked; the store's
            own refusal as ``mount <id> (<url>): <why>``.
    """
    from ynm.errors import UnknownMemory

    args = inp.model_dump(by_alias=True, exclude_none=True)
    not_asked = []
    for remote in remotes:
        (result,) = call_tools([(remote, tool, args)], RECALL_TIMEOUT_S)
        if isinstance(result, RemoteError) and result.answered \
                and "unknown memory" in (result.tool_text or ""):
            continue
        if isinstance(result, RemoteError) and not result.answered:
            not_asked.append(f"{remote.id} ({remote.url}): {result}")
            continue
        return _write_result(remote, result)
    if not_asked:
        raise YnmError(f"unknown memory {inp.memory_id} in the mounts that answered; not "
                       f"asked: {'; '.join(not_asked)}")
    raise UnknownMemory(inp.memory_id)


def _write_result(remote: RemoteMount, result: Any, failed: str = "") -> dict[str, Any]:
    if isinstance(result, RemoteError):
        raise YnmError(f"mount {remote.id} ({remote.url}): {result}{failed}")
    if not isinstance(result, dict):
        raise YnmError(f"mount {remote.id} ({remote.url}): the hosted store's answer is not a "
                       "write result; it may or may not have written")
    return {**result, "mount": remote.id}
