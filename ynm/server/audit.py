"""The audit log and the request log of ``ynm serve --http`` (reference/server.md §2.7, §2.8).

**Audit events** are metadata only: who (the ynm person id, the client id), what (method,
path without query, the tools called with their status, the memory ids they wrote, input
sizes, result counts), the outcome and the duration. Never tool inputs, queries, memory
content, tokens, header values, emails or token subjects. One event per HTTP request that
reached the MCP handler, and one per request the front door refused; ``/health``, the
protected-resource document and ``OPTIONS`` preflights are not audited (unless refused). An
event is written **before** the response is sent (the response is held until then, so every
tool call of the request is in it); a handler that raises still gets a ``500`` event. A sink
that fails says so on stderr and never fails the request.

Event shape (one JSON object per line)::

    {"at": "2026-12-01T06:00:00.000Z", "id": "<ULID>", "person": "p...", "client": "...",
     "method": "POST", "path": "/mcp", "status": 200, "outcome": "ok" | "refused" | "error",
     "reason": "invalid_token", "calls": [{"tool": "memory_recall", "status": "ok",
     "memoryIds": [...], "inputBytes": 42, "resultCount": 3}], "durationMs": 12}

``person`` and ``client``, ``reason`` and the optional call fields are left out when there is
nothing to say. A static token shows ``client: "static"`` and no person. ``client`` is only
ever the token's ``azp``/``client_id``: the reference's ``clientId`` falls back to the token's
``sub``, which would put a subject in the log.

**Sinks**, from ``YNM_AUDIT`` (JSON, keys ``sink`` and ``path``): unset means ``stdout`` when
the server has auth and off without; ``{"sink":"off"}``; ``{"sink":"stdout"}`` (one line per
event on stdout); ``{"sink":"file","path":"/abs/audit.jsonl"}`` (JSONL, created 0600, rotated
to ``<path>.1`` when it would pass 10 MiB). The reference also has ``s3`` and ``otel`` sinks
and, for any setting it cannot use, logs a line and runs with audit off; ynm has neither sink
and refuses to start on any setting it cannot use, naming the key (exit 2).

**The request log** is one line on stderr per request::

    [ynm-mcp] request <METHOD> <path> <status> <ms>ms [rpc=a,b] [tool=x] [auth=k] [client=c]

``auth`` is ``static``, ``signed-in``, ``token`` (a verified token naming no person),
``none`` (a server without auth), ``refused`` or ``public`` (health, discovery, preflight).
rpc and tool names come from the ``Mcp-Method``/``Mcp-Name`` headers, else from the JSON body
(read when it is at most 1 MiB); names not matching ``^[\\w./:@-]{1,64}$`` print as ``?``;
paths lose query strings and control characters and are cut at 200 characters. Never tokens,
header values, queries or bodies.

Tools report their calls with :func:`record_call`, a no-op outside an audited request.
"""

from __future__ import annotations

import contextvars
import json
import os
import re
import sys
import threading
import time
from collections.abc import Awaitable, Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

AUDIT_ENV = "YNM_AUDIT"
ROTATE_BYTES = 10 * 1024 * 1024  # a file sink moves to <path>.1 before it would pass this
SINKS = ("off", "stdout", "file")
UNSUPPORTED_SINKS = ("s3", "otel")  # the reference's, which ynm does not have
S3_KEYS = ("bucket", "prefix", "region")  # the reference's s3 sink settings
BODY_PEEK_BYTES = 1024 * 1024  # request bodies up to this size are read for rpc/tool names
PATH_MAX_CHARS = 200
NAME_RE = re.compile(r"[\w./:@-]{1,64}", re.ASCII)  # JavaScript's \w: ASCII only
PUBLIC_PATHS = ("/health",)
DISCOVERY_PATH = "/.well-known/oauth-protected-resource"
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f]")

Scope = dict[str, Any]
Message = dict[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
App = Callable[[Scope, Receive, Send], Awaitable[None]]


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


# -- sinks ----------------------------------------------------------------------------------


class StdoutSink:
    """One JSON line per event on stdout (``{"sink":"stdout"}``)."""

    describe = "stdout"

    def write(self, line: str) -> None:
        """Print ``line`` and a newline on stdout, flushed."""
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


class FileSink:
    """Events appended to a JSONL file (``{"sink":"file","path":...}``).

    The file is created with mode 0600 (it names who did what); before a line would take it
    past ``max_bytes`` (10 MiB, reference/server.md §2.7) it is renamed to ``<path>.1``,
    replacing the previous one, and a new file is started. Each write opens the file in
    append mode, so a file moved away by logrotate is re-created.

    Args:
        path: the file (its directory must exist).
        max_bytes: the rotation size in bytes.
    """

    def __init__(self, path: Path, max_bytes: int = ROTATE_BYTES) -> None:
        self.path = Path(path)
        self.max_bytes = max_bytes
        self._lock = threading.Lock()

    @property
    def describe(self) -> str:
        """``file <path>``."""
        return f"file {self.path}"

    def _open(self) -> int:
        return os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | getattr(
            os, "O_CLOEXEC", 0), 0o600)

    def write(self, line: str) -> None:
        """Append ``line`` and a newline, rotating first if needed.

        Raises:
            OSError: the file cannot be opened, renamed or written.
        """
        data = (line + "\n").encode()
        with self._lock:
            fd = self._open()
            try:
                size = os.fstat(fd).st_size
                if size and size + len(data) > self.max_bytes:
                    os.close(fd)
                    fd = -1
                    os.replace(self.path, rotated_path(self.path))
                    fd = self._open()
                view = memoryview(data)
                while view:
                    view = view[os.write(fd, view):]
            finally:
                if fd >= 0:
                    os.close(fd)


AuditSink = StdoutSink | FileSink


def rotated_path(path: Path) -> Path:
    """``<path>.1``: where a file sink's older events go."""
    return path.with_name(path.name + ".1")


@dataclass(frozen=True)
class AuditSetting:
    """A parsed ``YNM_AUDIT``: ``sink`` is one of :data:`SINKS`; ``path`` only for ``file``."""

    sink: str
    path: Path | None = None


def _bad(detail: str) -> Exception:
    from ynm.errors import InvalidConfig

    return InvalidConfig(f"{AUDIT_ENV}: {detail}")


def audit_setting(env: Mapping[str, str]) -> AuditSetting | None:
    """``YNM_AUDIT`` of ``env`` checked, or None when it is unset or blank.

    Accepted: a JSON object with ``sink`` (``off``, ``stdout`` or ``file``) and, for ``file``
    only, ``path``: absolute (or starting with ``~``), in a directory that exists.
    (reference/server.md §2.7; the reference's ``s3`` and ``otel`` sinks and its ``bucket``,
    ``prefix`` and ``region`` keys are refused by name: ynm has no such sink.)

    Raises:
        InvalidConfig: ``invalid input: YNM_AUDIT: <key>: <problem>`` (exit 2) for anything
            else: not JSON, not an object, an unknown key, a missing or unknown sink, a
            ``path`` on another sink, a file sink without a path, a relative path, a
            directory that does not exist.
    """
    raw = (env.get(AUDIT_ENV) or "").strip()
    if not raw:
        return None
    example = '{"sink":"file","path":"/var/log/ynm/audit.jsonl"}'
    try:
        doc = json.loads(raw)
    except ValueError as err:
        raise _bad(f"not valid JSON ({err}); expected e.g. {example}") from None
    if not isinstance(doc, dict):
        raise _bad(f"expected a JSON object such as {example}")
    for key in doc:
        if key not in ("sink", "path", *S3_KEYS):
            raise _bad(f"{key}: unknown key (ynm takes sink and path)")
    sink = doc.get("sink")
    if sink is None:
        raise _bad("sink: missing (off, stdout or file)")
    if sink in UNSUPPORTED_SINKS:
        raise _bad(f'sink: ynm has no "{sink}" audit sink (off, stdout or file)')
    if sink not in SINKS:
        raise _bad(f"sink: {json.dumps(sink)} is not one of off, stdout, file")
    for key in S3_KEYS:
        if key in doc:
            raise _bad(f"{key}: only an s3 sink takes it, and ynm has no s3 sink "
                       "(sinks: off, stdout, file)")
    if sink != "file":
        if "path" in doc:
            raise _bad(f'path: only the file sink takes a path (sink is "{sink}")')
        return AuditSetting(sink)
    path = doc.get("path")
    if not isinstance(path, str) or not path.strip():
        raise _bad("path: the file sink needs the path of its file")
    file = Path(path.strip()).expanduser()
    if not file.is_absolute():
        raise _bad(f"path: {path!r} is relative; give an absolute path (or ~/...)")
    if not file.parent.is_dir():
        raise _bad(f"path: directory {file.parent} does not exist")
    if file.is_dir():
        raise _bad(f"path: {file} is a directory")
    return AuditSetting("file", file)


def audit_sink(env: Mapping[str, str], auth_mode: str) -> AuditSink | None:
    """The sink ``ynm serve --http`` writes events to: from ``YNM_AUDIT``
    (:func:`audit_setting`), else ``stdout`` when ``auth_mode`` is not ``none``, else None
    (audit off). Source: reference/server.md §2.7.

    Raises:
        InvalidConfig: a ``YNM_AUDIT`` ynm cannot use (exit 2).
    """
    setting = audit_setting(env)
    if setting is None:
        return StdoutSink() if auth_mode != "none" else None
    if setting.sink == "stdout":
        return StdoutSink()
    if setting.sink == "file":
        assert setting.path is not None
        return FileSink(setting.path)
    return None


# -- tool calls -----------------------------------------------------------------------------

_CALLS: contextvars.ContextVar[list[dict[str, Any]] | None] = contextvars.ContextVar(
    "ynm_audit_calls", default=None)


def record_call(tool: str, status: str, memory_ids: list[str] | None = None,
                input_bytes: int | None = None, result_count: int | None = None) -> None:
    """Add a call to the audit event of the HTTP request being served: ``{tool, status,
    memoryIds?, inputBytes?, resultCount?}`` (reference/server.md §2.7). A no-op outside
    one (stdio, CLI, scheduler, in-process clients).

    Args:
        tool: the tool name (``memory_recall``) or ``resource:<template>``.
        status: ``ok`` or ``error``.
        memory_ids: ids of the memories the call wrote or read one by one.
        input_bytes: size of the call's arguments as JSON, in bytes.
        result_count: how many results a read returned.
    """
    calls = _CALLS.get()
    if calls is None:
        return
    call: dict[str, Any] = {"tool": tool, "status": status}
    if memory_ids:
        call["memoryIds"] = list(memory_ids)
    if input_bytes is not None:
        call["inputBytes"] = input_bytes
    if result_count is not None:
        call["resultCount"] = result_count
    calls.append(call)


def input_size(arguments: Any) -> int:
    """Bytes of ``arguments`` as compact JSON (UTF-8): the ``inputBytes`` of a call."""
    try:
        return len(json.dumps(arguments, separators=(",", ":"), ensure_ascii=False,
                              default=str).encode())
    except (TypeError, ValueError):
        return 0


def call_counts(data: Any) -> dict[str, Any]:
    """The ``memory_ids`` and ``result_count`` of a tool's result data, for
    :func:`record_call`: a write's ``memoryId`` (or ``memoryIds``), the length of a list
    result (recall, list) or of a context block's ``included``. Ids only, never content."""
    from ynm.model.ids import is_ulid

    out: dict[str, Any] = {}
    if isinstance(data, list):
        out["result_count"] = len(data)
    elif isinstance(data, dict):
        ids = [data.get("memoryId")] if "memoryId" in data else data.get("memoryIds")
        if isinstance(ids, list):
            ids = [i for i in ids if is_ulid(i)]
            if ids:
                out["memory_ids"] = ids
        if isinstance(data.get("included"), list):
            out["result_count"] = len(data["included"])
    return out


def resource_call(uri: str) -> tuple[str, list[str] | None]:
    """``(call name, memory ids)`` of a resource read for :func:`record_call`: the name is
    ``resource:<template>`` (``resource:memory://context``, ``resource:memory://status``,
    ``resource:memory://{mount}/{memoryId}``, ``resource:memory://{mount}/wiki/{+path}``, else
    ``resource:?``), the ids the memory id of
    a memory read (reference/server.md §1.5, §2.7)."""
    from ynm.model.ids import is_ulid

    if uri in ("memory://context", "memory://status"):
        return f"resource:{uri}", None
    rest = uri.removeprefix("memory://")
    if rest != uri and rest.count("/") >= 2 and rest.split("/")[1] == "wiki":
        return "resource:memory://{mount}/wiki/{+path}", None
    if rest != uri and rest.count("/") == 1:
        memory_id = rest.split("/")[1]
        return "resource:memory://{mount}/{memoryId}", [memory_id] if is_ulid(memory_id) else None
    return "resource:?", None


# -- events and log lines -------------------------------------------------------------------


def safe_name(value: Any) -> str:
    """``value`` when it matches ``^[\\w./:@-]{1,64}$`` (ASCII word characters), else ``?``
    (reference/server.md §2.8)."""
    return value if isinstance(value, str) and NAME_RE.fullmatch(value) else "?"


def safe_path(path: str) -> str:
    """A request path fit for a log: no query string, no control characters, at most 200
    characters (reference/server.md §2.8)."""
    path = path.split("?", 1)[0]
    return _CONTROL_RE.sub("", path)[:PATH_MAX_CHARS]


def is_public(method: str, path: str) -> bool:
    """True for what anyone may ask without auth and is not audited: ``GET /health``, the
    protected-resource document (and its sub-paths), and ``OPTIONS`` preflights
    (reference/server.md §2.2, §2.7)."""
    if method == "OPTIONS":
        return True
    if path == DISCOVERY_PATH or path.startswith(DISCOVERY_PATH + "/"):
        return True
    return method == "GET" and path in PUBLIC_PATHS


def outcome_of(status: int, refused: bool = False) -> str:
    """``refused`` for 401/403 or a front-door refusal, ``error`` for any other status from
    400, else ``ok``."""
    if refused or status in (401, 403):
        return "refused"
    return "error" if status >= 400 else "ok"


def person_of(auth: Any) -> str | None:
    """The ynm person id of a verified caller: ``ynm.service.people.person_id(issuer,
    subject)`` when the token carried both and is not the static token (reference/server.md
    §2.4); None otherwise, or when person ids are not available."""
    if auth is None or getattr(auth, "static", False):
        return None
    issuer, subject = getattr(auth, "issuer", None), getattr(auth, "subject", None)
    if not issuer or not subject:
        return None
    try:
        from ynm.service.people import person_id  # type: ignore[attr-defined]
    except ImportError:
        return None
    return person_id(issuer, subject)


def client_of(auth: Any) -> str | None:
    """``static`` for the static token, else the token's client (``azp``/``client_id``), else
    None; never the token's subject."""
    if auth is None:
        return None
    if getattr(auth, "static", False):
        return "static"
    client = getattr(auth, "client", None)
    return client if isinstance(client, str) and client else None


def auth_kind(auth: Any, *, public: bool, refused: bool) -> str:
    """The ``auth=`` of a request log line: ``refused``, ``public``, ``none``, ``static``,
    ``signed-in`` (issuer and subject) or ``token``."""
    if refused:
        return "refused"
    if public:
        return "public"
    if auth is None:
        return "none"
    if getattr(auth, "static", False):
        return "static"
    if getattr(auth, "issuer", None) and getattr(auth, "subject", None):
        return "signed-in"
    return "token"


def build_event(*, at_ms: int, method: str, path: str, status: int, auth: Any,
                refusal: str | None, calls: list[dict[str, Any]],
                duration_ms: int) -> dict[str, Any]:
    """One audit event, keys in the order of reference/server.md §2.7 (see the module
    docstring); ``at`` is ``at_ms`` (ms since the epoch) as ISO 8601 UTC, ``id`` a new ULID
    of that instant."""
    from ynm.model.ids import iso_ms, new_ulid

    refused = refusal is not None or status in (401, 403)
    event: dict[str, Any] = {"at": iso_ms(at_ms), "id": new_ulid(at_ms)}
    person, client = person_of(auth), client_of(auth)
    if person:
        event["person"] = person
    if client:
        event["client"] = client
    event.update(method=safe_name(method), path=safe_path(path), status=status,
                 outcome=outcome_of(status, refusal is not None))
    if refused:
        event["reason"] = safe_name(refusal) if refusal else (
            "invalid_token" if status == 401 else "insufficient_scope")
    event["calls"] = calls
    event["durationMs"] = duration_ms
    return event


def rpc_names(headers: Mapping[str, str], body: bytes | None) -> tuple[list[str], list[str]]:
    """``(rpc methods, tool names)`` of a request, each filtered by :func:`safe_name`: from
    the ``Mcp-Method``/``Mcp-Name`` headers, else from the JSON-RPC body (one message or a
    batch; a tool name only for ``tools/call``). ``body`` is None when it was not read."""
    method, name = headers.get("mcp-method"), headers.get("mcp-name")
    if method:
        return [safe_name(method)], ([safe_name(name)] if name else [])
    if not body:
        return [], []
    try:
        doc = json.loads(body)
    except ValueError:
        return [], []
    messages = doc if isinstance(doc, list) else [doc]
    rpcs: list[str] = []
    tools: list[str] = []
    for msg in messages:
        if not isinstance(msg, dict) or "method" not in msg:
            continue
        rpcs.append(safe_name(msg["method"]))
        params = msg.get("params")
        if msg["method"] == "tools/call" and isinstance(params, dict):
            tools.append(safe_name(params.get("name")))
    return list(dict.fromkeys(rpcs)), list(dict.fromkeys(tools))


def request_line(*, method: str, path: str, status: int, duration_ms: int, rpcs: list[str],
                 tools: list[str], auth: str, client: str | None) -> str:
    """The request log line (reference/server.md §2.8), without the ``[ynm-mcp]`` prefix."""
    parts = ["request", safe_name(method), safe_path(path) or "/", str(status),
             f"{duration_ms}ms"]
    if rpcs:
        parts.append("rpc=" + ",".join(rpcs))
    if tools:
        parts.append("tool=" + ",".join(tools))
    parts.append(f"auth={auth}")
    if client:
        parts.append(f"client={safe_name(client)}")
    return " ".join(parts)


class AuditMiddleware:
    """ASGI middleware around the front door: the audit event and the request log line of
    every HTTP request (see the module docstring).

    It reads what the front door left in the scope once it has answered:
    ``scope["ynm.auth"]`` (an :class:`ynm.server.auth.AuthInfo`, or None without auth) and
    ``scope["ynm.refusal"]`` (``invalid_token``, ``insufficient_scope``, ``host``,
    ``origin``). The response is held until its last body part, the event written, then
    sent (for an event stream only the last part is held).

    Args:
        app: the front door (an ASGI app).
        sink: where events go (None: audit off; the request log still runs).
        log: prints one request log line (default: stderr, prefixed ``[ynm-mcp]``).
    """

    def __init__(self, app: App, sink: AuditSink | None,
                 log: Callable[[str], None] | None = None) -> None:
        self.app = app
        self.sink = sink
        self.log = log or (lambda line: _stderr(f"[ynm-mcp] {line}"))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        calls: list[dict[str, Any]] = []
        body = bytearray()
        body_state = {"too_big": False}
        held: list[Message] = []
        state: dict[str, Any] = {"status": None, "done": False, "stream": False}

        async def peek_receive() -> Message:
            message = await receive()
            if message["type"] == "http.request" and not body_state["too_big"]:
                body.extend(message.get("body", b""))
                if len(body) > BODY_PEEK_BYTES:
                    body_state["too_big"] = True
                    body.clear()
            return message

        async def holding_send(message: Message) -> None:
            if state["done"]:
                await send(message)
                return
            if message["type"] == "http.response.start":
                state["status"] = int(message["status"])
                headers = dict(message.get("headers") or [])
                state["stream"] = headers.get(b"content-type", b"").startswith(
                    b"text/event-stream")
            final = message["type"] == "http.response.body" and not message.get("more_body")
            if not final:
                if state["stream"]:
                    await send(message)
                else:
                    held.append(message)
                return
            self._finish(scope, state["status"] or 500, calls, started,
                         None if body_state["too_big"] else bytes(body))
            state["done"] = True
            for m in held:
                await send(m)
            held.clear()
            await send(message)

        token = _CALLS.set(calls)
        try:
            await self.app(scope, peek_receive, holding_send)
        except Exception:
            if not state["done"]:
                state["done"] = True
                self._finish(scope, 500, calls, started, None)
            raise
        finally:
            _CALLS.reset(token)
        if not state["done"]:  # the app returned without finishing its response
            state["done"] = True
            self._finish(scope, state["status"] or 500, calls, started, None)
            for m in held:
                await send(m)

    def _finish(self, scope: Scope, status: int, calls: list[dict[str, Any]], started: float,
                body: bytes | None) -> None:
        """Write the event (when audited) and the request log line; never raises."""
        duration_ms = round((time.perf_counter() - started) * 1000)
        method, path = scope.get("method", "?"), scope.get("path", "")
        auth = scope.get("ynm.auth")
        refusal = scope.get("ynm.refusal")
        refused = refusal is not None or status in (401, 403)
        public = is_public(method, path)
        if self.sink is not None and (refused or not public):
            event: dict[str, Any] | None = None
            try:
                event = build_event(at_ms=time.time_ns() // 1_000_000, method=method,
                                    path=path, status=status, auth=auth, refusal=refusal,
                                    calls=calls, duration_ms=duration_ms)
                self.sink.write(json.dumps(event, separators=(",", ":")))
            except Exception as err:  # noqa: BLE001 - a sink never fails the request
                what = f"event {event['id']}" if event else "an event"
                _stderr(f"[ynm-mcp audit] cannot write {what} to {self.sink.describe}: "
                        f"{type(err).__name__}: {err}")
        try:
            headers = {k.decode("latin-1").lower(): v.decode("latin-1")
                       for k, v in scope.get("headers", [])}
            rpcs, tools = rpc_names(headers, body) if not public else ([], [])
            self.log(request_line(
                method=method, path=path, status=status, duration_ms=duration_ms, rpcs=rpcs,
                tools=tools, auth=auth_kind(auth, public=public, refused=refused),
                client=client_of(auth)))
        except Exception as err:  # noqa: BLE001 - nor does the log
            _stderr(f"[ynm-mcp] cannot log a request: {type(err).__name__}")


# -- reading a file sink (ynm audit) ------------------------------------------------------


@dataclass
class EventFilter:
    """What ``ynm audit tail|search`` keeps; every given field must match.

    Attributes:
        person: the event's person id.
        client: the event's client.
        tool: a call of the event has this tool name.
        outcome: ``ok``, ``refused`` or ``error``.
        since: ``at`` at or after this instant (canonical ISO 8601 UTC, ms).
        until: ``at`` at or before this instant (canonical ISO 8601 UTC, ms).
    """

    person: str | None = None
    client: str | None = None
    tool: str | None = None
    outcome: str | None = None
    since: str | None = None
    until: str | None = None

    def matches(self, event: Mapping[str, Any]) -> bool:
        """True when ``event`` passes every given filter (``at`` compared as canonical text,
        which sorts as instants do)."""
        if self.person is not None and event.get("person") != self.person:
            return False
        if self.client is not None and event.get("client") != self.client:
            return False
        if self.outcome is not None and event.get("outcome") != self.outcome:
            return False
        if self.tool is not None and not any(
                isinstance(c, dict) and c.get("tool") == self.tool
                for c in event.get("calls") or []):
            return False
        at = event.get("at")
        if (self.since is not None or self.until is not None) and not isinstance(at, str):
            return False
        if self.since is not None and at < self.since:
            return False
        return not (self.until is not None and at > self.until)


@dataclass
class BadLine:
    """A line of an audit file that is not an event: its file, 1-based line number and why."""

    file: Path
    line: int
    problem: str


def read_events(path: Path, bad: list[BadLine] | None = None) -> Iterator[dict[str, Any]]:
    """The events of a file sink, oldest first: ``<path>.1`` (the rotated file) then
    ``<path>``. A line that is not a JSON object with an ``at`` string is skipped and, when
    ``bad`` is given, added to it (never raised).

    Raises:
        YnmError: neither file exists (``no audit events at <path>``), or one cannot be read.
    """
    from ynm.errors import YnmError

    files = [f for f in (rotated_path(path), path) if f.exists()]
    if not files:
        raise YnmError(f"no audit events at {path} (the file is created by the first "
                       "audited request of ynm serve --http)")
    for file in files:
        try:
            handle = file.open("rb")
        except OSError as err:
            raise YnmError(f"cannot read {file}: {err.strerror or err}") from None
        with handle:
            for n, raw in enumerate(handle, 1):
                if not raw.strip():
                    continue
                try:
                    event = json.loads(raw)
                except ValueError:
                    event = None
                if not isinstance(event, dict) or not isinstance(event.get("at"), str):
                    if bad is not None:
                        bad.append(BadLine(file, n, "not an audit event"))
                    continue
                yield event


def _lines(file: Path, offset: int, bad: list[BadLine] | None) -> tuple[list[dict[str, Any]],
                                                                        int]:
    """The events of the complete lines of ``file`` from byte ``offset``, and the offset after
    the last complete line (a line still being written waits for the next look)."""
    with file.open("rb") as handle:
        handle.seek(offset)
        data = handle.read()
    end = data.rfind(b"\n") + 1
    events = []
    for raw in data[:end].splitlines():
        if not raw.strip():
            continue
        try:
            event = json.loads(raw)
        except ValueError:
            event = None
        if isinstance(event, dict) and isinstance(event.get("at"), str):
            events.append(event)
        elif bad is not None:
            bad.append(BadLine(file, 0, "not an audit event"))
    return events, offset + end


def follow_events(path: Path, poll_s: float = 0.5, bad: list[BadLine] | None = None,
                  stop: Callable[[], bool] | None = None) -> Iterator[dict[str, Any] | None]:
    """Every event of a file sink, then the events appended to it as they are written
    (``tail -f``): first the events already there (``<path>.1``, then ``<path>``), then one
    None (caught up), then each new event. Looks every ``poll_s`` seconds; when the file was
    rotated to ``<path>.1`` meanwhile, the rest of the old file is read before the new one, so
    no event is missed or repeated. Lines that are not events go to ``bad`` (line number 0:
    unknown). Runs until ``stop()`` is true (or forever).

    Raises:
        YnmError: a file cannot be read.
    """
    from ynm.errors import YnmError

    def state(file: Path) -> tuple[tuple[int, int], int] | None:
        try:
            st = os.stat(file)
        except FileNotFoundError:
            return None
        return (st.st_dev, st.st_ino), st.st_size

    inode: tuple[int, int] | None = None
    offset = 0
    try:
        if rotated_path(path).exists():
            yield from _lines(rotated_path(path), 0, bad)[0]
        seen = state(path)
        if seen is not None:
            inode = seen[0]
            events, offset = _lines(path, 0, bad)
            yield from events
    except OSError as err:
        raise YnmError(f"cannot read {path}: {err.strerror or err}") from None
    yield None
    while stop is None or not stop():
        time.sleep(poll_s)
        try:
            now = state(path)
            if inode is not None and (now is None or now[0] != inode):
                old = state(rotated_path(path))
                if old is not None and old[0] == inode:  # rotated: finish the old file first
                    events, _ = _lines(rotated_path(path), offset, bad)
                    yield from events
                inode, offset = (now[0] if now else None), 0
            elif now is not None:
                inode = now[0]
                if now[1] < offset:  # truncated in place
                    offset = 0
            if now is not None and now[1] > offset:
                events, offset = _lines(path, offset, bad)
                yield from events
        except OSError as err:
            raise YnmError(f"cannot read {path}: {err.strerror or err}") from None


def select_events(events: Iterable[dict[str, Any]], where: EventFilter,
                  last: int | None = None) -> list[dict[str, Any]]:
    """The events passing ``where``, oldest first; with ``last``, only the newest ``last``
    of them."""
    from collections import deque

    kept = (e for e in events if where.matches(e))
    if last is None:
        return list(kept)
    return list(deque(kept, maxlen=last)) if last > 0 else []
