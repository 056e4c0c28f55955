"""The two ways to reach ynm (seed 003_b7c8dac142c7aed9.txt, Memory, Ynm, YnmHTTP): its CLI,
which writes to whatever store ynm is configured for, and a hosted ``ynm serve --http``'s MCP
endpoint. Both have one method, ``remember(record)``, and sort failures into two kinds:
:class:`Rejected` (ynm refused the record: sending it again cannot help) and
:class:`Unavailable` (ynm could not take it now: try again later)."""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ynm.client.record import Record

# Messages of ynm's refused-input errors (exit code 2; reference/cli.md §2).
_REFUSED_PREFIXES = ("invalid input:", "refused:")

# Messages of ynm's errors (exit code 1; reference/cli.md §2, "Common service errors") that
# sending the same record to the same store again can never change: no mount of the record's
# level (``NoMount``), or no level given where the store has no personal one
# (``ShareRequired``). They are refusals of the record, like exit 2, not outages.
_PERMANENT_PREFIXES = ("no distributed mount:", "no personal mount available:",
                       "nothing stored: this store has no personal level")


def permanent(message: str) -> bool:
    """True when ynm's error ``message`` (without ``Error: ``) refuses the record for good:
    refused input (``invalid input: ...``, ``refused: ...``) or no mount that can ever take
    it (:data:`_PERMANENT_PREFIXES`). Anything else may pass and is an outage."""
    return message.startswith(_REFUSED_PREFIXES + _PERMANENT_PREFIXES)


class Unavailable(Exception):
    """ynm could not take the record now (not installed, not running, unreachable, timed out,
    401/403/5xx, or it ran and failed): keep the record and send it again later."""


class NotYet(Unavailable):
    """ynm is there but cannot take the record until its user sets something up: a
    distributed record sent through the CLI inside a git repository that has no ``.ynm/``
    yet (``no distributed mount: run `ynm init` in the project``). ``ynm init`` there fixes
    it, so the record is kept queued (a :class:`Unavailable`), not refused; a queue logs it as
    a warning, since only a person can end it."""


class Rejected(Exception):
    """ynm refused the record for good: refused input (``invalid input: ...``,
    ``refused: ...``; exit code 2, or the same as an MCP tool error) or no mount of the
    record's level where it writes (``no distributed mount: ...``, ``no personal mount
    available: ...``, ``nothing stored: ...``; see :func:`permanent`). Sending it again
    cannot succeed, so a queue moves it aside, with this message as its reason, instead of
    retrying."""


class Memory(Protocol):
    """The port (seed 003, Memory): anything with ``remember(record)`` that returns ynm's
    WriteResult (reference/cli.md §3.1) and raises :class:`Unavailable` (or its
    :class:`NotYet`) or :class:`Rejected`. A memory may also have ``has_tag(tag) -> bool``
    (``YnmCLI`` and ``YnmHTTP`` do): a queue then looks a record sent before up by its
    :data:`OUTBOX_TAG` before sending it again; without it, no lookup is made."""

    def remember(self, record: Record) -> dict[str, Any]: ...


OUTBOX_TAG = "ynm-outbox:"
"""The tag prefix of a record's idempotency key: a :class:`~ynm.client.queue.Queue` sends
every record with one tag ``ynm-outbox:<ULID>`` (its queue key's ULID), so a record whose
earlier send may have been written (a worker killed mid-send, a timeout) is looked up with
``has_tag`` before it is sent again."""


def _linux_pdeathsig() -> Callable[[], None] | None:
    """A ``preexec_fn`` that makes the child get SIGKILL when the process that started it
    dies (Linux ``prctl(PR_SET_PDEATHSIG)``), or None elsewhere. A ``ynm remember`` whose
    parent was killed must not finish a write the parent will never learn of: its record is
    still claimed, and after the claim's TTL another worker sends it again. The libc call is
    resolved here, before any fork, so the child runs no import."""
    import sys

    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        prctl = ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError):
        return None
    import signal

    parent = os.getpid()
    pr_set_pdeathsig, sigkill = 1, int(signal.SIGKILL)

    def arm() -> None:
        prctl(pr_set_pdeathsig, sigkill, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the signal was armed
            os._exit(1)

    return arm


def _error_text(stderr: str) -> str:
    text = stderr.strip()
    for line in text.splitlines():
        if line.startswith("Error: "):
            return line[len("Error: "):]
    return text.splitlines()[-1] if text else ""


class YnmCLI:
    """ynm through its CLI: ``ynm remember --json`` with the record's flags, the content on
    standard input (seed 003, Ynm).

    Args:
        bin: the executable (default ``ynm``, looked up on ``PATH``).
        cwd: the directory ynm runs from, which picks the store (default the process's).
        timeout: seconds one write may take before it counts as unavailable (default 120).
        env: the environment for ynm (default the process's).
    """

    def __init__(self, bin: str = "ynm", cwd: str | os.PathLike[str] | None = None,
                 timeout: float = 120.0, env: dict[str, str] | None = None) -> None:
        self.bin = bin
        self.cwd = cwd
        self.timeout = timeout
        self.env = env

    def __repr__(self) -> str:
        return f"YnmCLI(bin={self.bin!r}, cwd={self.cwd!r})"

    @property
    def target(self) -> str:
        """Where this memory writes, as a queued record remembers it: ``repo:<root>`` for the
        git repository ``cwd`` is in (its main work tree), else ``user`` (the user's store).
        A queue shared by several repositories sends each record only through a memory of
        the same target (:meth:`ynm.client.queue.Queue.flush`)."""
        from ynm.client.detect import repository_root

        root = repository_root(self.cwd if self.cwd is not None else os.getcwd())
        return f"repo:{root}" if root is not None else "user"

    def remember(self, record: Record) -> dict[str, Any]:
        """Write ``record``; return ynm's WriteResult (``memoryId``, ``recordId``, ``mount``...).

        Raises:
            Rejected: ynm exited 2 (refused input), or 1 with an error that can never pass
                (no mount for the record's level, :func:`permanent`); the message is ynm's,
                without ``Error: ``.
            Unavailable: the executable is missing or cannot run, timed out, exited otherwise
                (any other error), or printed no JSON.
        """
        # ynm drops the one line break that ends standard input; this one, so the content
        # arrives exactly as given
        proc = self._run(["remember", "--json", *record.cli_args()],
                         record.content.encode("utf-8") + b"\n", "remember")
        stderr = proc.stderr.decode("utf-8", "replace")
        if proc.returncode == 2:
            raise Rejected(_error_text(stderr) or "ynm refused the record (exit 2)")
        if proc.returncode != 0:
            message = _error_text(stderr)
            if proc.returncode == 1 and message.startswith("no distributed mount:") \
                    and self.target.startswith("repo:"):
                root = self.target[len("repo:"):]
                raise NotYet(f"{message} (the repository {root} has no .ynm/ yet: after "
                             "`ynm init` there, `ynm outbox flush` sends what waits)")
            if proc.returncode == 1 and permanent(message):
                raise Rejected(message)
            raise Unavailable(f"ynm remember exited {proc.returncode}: "
                              f"{message or 'no message'}")
        try:
            return json.loads(proc.stdout)
        except ValueError:
            raise Unavailable("ynm remember printed no JSON result") from None

    def _run(self, args: list[str], stdin: bytes, what: str) -> subprocess.CompletedProcess:
        """Run ``ynm <args>`` from ``cwd``; on Linux the child dies with this process
        (:func:`_linux_pdeathsig`), and on a timeout it is killed.

        Raises:
            Unavailable: the executable cannot run, or it timed out.
        """
        try:
            return subprocess.run([self.bin, *args], input=stdin, capture_output=True,
                                  cwd=self.cwd, env=self.env, timeout=self.timeout,
                                  check=False, preexec_fn=_linux_pdeathsig())
        except subprocess.TimeoutExpired:
            raise Unavailable(f"ynm {what} timed out after {self.timeout:g} s") from None
        except OSError as err:
            raise Unavailable(f"cannot run {self.bin}: {err.strerror or err}") from None

    def has_tag(self, tag: str) -> bool:
        """Whether a memory with ``tag`` is in the store ynm writes to from ``cwd``
        (``ynm recall --tags <tag> --limit 1 --json``): how a queue finds out that a record
        whose earlier send was cut short was written after all (:data:`OUTBOX_TAG`).

        Raises:
            Unavailable: ynm could not answer (it cannot run, timed out, or failed).
        """
        proc = self._run(["recall", "--tags", tag, "--limit", "1", "--json"], b"", "recall")
        if proc.returncode != 0:
            message = _error_text(proc.stderr.decode("utf-8", "replace"))
            raise Unavailable(f"ynm recall exited {proc.returncode}: {message or 'no message'}")
        try:
            hits = json.loads(proc.stdout)
        except ValueError:
            raise Unavailable("ynm recall printed no JSON result") from None
        return any(tag in (hit.get("tags") or []) for hit in hits if isinstance(hit, dict))


class YnmHTTP:
    """A hosted ynm over its MCP HTTP endpoint (seed 003, YnmHTTP): the ``memory_remember``
    tool of ``ynm serve --http``, with a bearer token whose subject is the writer in ynm's
    audit log (reference/server.md §2.3, §2.5). One connection per call, through the ``mcp``
    SDK's streamable HTTP client (the ``server`` extra).

    Args:
        endpoint: the MCP URL, e.g. ``https://memory.example.com/mcp``.
        token: the bearer token (None sends none).
        transport: for tests, a function returning what ``mcp.Client`` connects to (a
            transport, or an in-process server) instead of the HTTP endpoint.
        timeout: seconds one write may take, connection included (default 30).

    Raises:
        ValueError: without ``transport``, an ``endpoint`` that is not an ``http(s)://`` URL
            (:func:`normalize_endpoint`).
    """

    def __init__(self, endpoint: str, token: str | None = None,
                 transport: Callable[[], Any] | None = None, timeout: float = 30.0) -> None:
        # with a transport the endpoint only names the server (tests); else it is the URL
        self.endpoint = endpoint if transport is not None else normalize_endpoint(endpoint)
        self.token = token
        self.transport = transport
        self.timeout = timeout
        self.target = f"http:{self.endpoint}"
        """Where this memory writes (see :attr:`YnmCLI.target`): ``http:<endpoint>``, the
        endpoint normalised (:func:`normalize_endpoint`), so ``.../mcp/`` and ``.../mcp``
        are one target."""

    def __repr__(self) -> str:
        return f"YnmHTTP(endpoint={self.endpoint!r})"

    def remember(self, record: Record) -> dict[str, Any]:
        """Write ``record`` with ``memory_remember``; return the tool's ``data`` (WriteResult).
        Blocking: it runs its own event loop (in a helper thread when called from a running
        one), so an async caller should call it through ``anyio.to_thread.run_sync``.

        Raises:
            Rejected: a tool error for refused input (``invalid input: ...``, ``refused: ...``,
                reference/server.md §1.3) or for no mount that can take the record
                (:func:`permanent`), or a JSON-RPC invalid-params error.
            Unavailable: connection errors, 401/403, 5xx, timeouts, any other tool error, and
                a missing ``mcp`` package.
        """
        data = self._blocking("memory_remember", record.to_json())
        if not isinstance(data, dict):
            raise Unavailable(f"{self.endpoint}: memory_remember answered without data")
        return data

    def has_tag(self, tag: str) -> bool:
        """Whether a memory with ``tag`` is in the server's store (``memory_recall`` with
        ``tags=[tag]``, one hit): see :meth:`YnmCLI.has_tag`.

        Raises:
            Unavailable: the server could not answer (as for :meth:`remember`; a refusal of
                the query counts too).
        """
        try:
            hits = self._blocking("memory_recall", {"tags": [tag], "limit": 1})
        except Rejected as err:
            raise Unavailable(f"{self.endpoint}: memory_recall: {err}") from None
        return isinstance(hits, list) and any(
            tag in (hit.get("tags") or []) for hit in hits if isinstance(hit, dict))

    def _blocking(self, tool: str, arguments: dict[str, Any]) -> Any:
        """Call ``tool`` and return its ``data``, failures sorted as :meth:`remember` says."""
        import anyio

        statuses: list[int] = []  # HTTP error statuses seen, to name them in the message
        try:
            if _in_event_loop():
                # called from async code: its loop is busy in this thread, so use another
                from concurrent.futures import ThreadPoolExecutor

                with ThreadPoolExecutor(1) as pool:
                    return pool.submit(anyio.run, self._call, tool, arguments,
                                       statuses).result()
            return anyio.run(self._call, tool, arguments, statuses)
        except (Rejected, Unavailable):
            raise
        except ImportError as err:
            from ynm.errors import pip_install

            raise Unavailable(f"the mcp package is missing ({err.name}): "
                              f"{pip_install('server')}") from None
        except TimeoutError:
            raise Unavailable(f"{self.endpoint}: no answer within {self.timeout:g} s") from None
        except BaseException as err:
            if isinstance(err, KeyboardInterrupt | SystemExit):
                raise
            status = f"HTTP {statuses[-1]}: " if statuses else ""
            raise Unavailable(f"{self.endpoint}: {status}{_describe(err)}") from None

    async def _call(self, tool: str, arguments: dict[str, Any], statuses: list[int]) -> Any:
        import anyio
        from mcp import Client
        from mcp.shared.exceptions import MCPError

        with anyio.fail_after(self.timeout):
            if self.transport is not None:
                target, http = self.transport(), None
            else:
                import httpx2
                from mcp.client.streamable_http import streamable_http_client

                async def note_status(response: Any) -> None:
                    if response.status_code >= 400:
                        statuses.append(response.status_code)

                headers = {"Authorization": f"Bearer {self.token}"} if self.token else {}
                http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(self.timeout),
                                          event_hooks={"response": [note_status]})
                target = streamable_http_client(self.endpoint, http_client=http)
            refused: str | None = None
            try:
                async with Client(target) as client:
                    try:
                        result = await client.call_tool(tool, arguments)
                    except MCPError as err:
                        if getattr(err, "code", None) != -32602:  # invalid params
                            raise
                        refused = str(err)
            finally:
                if http is not None:
                    await http.aclose()
        # raised outside the client's task group, which would wrap it in an exception group
        if refused is not None:
            raise Rejected(refused)
        if result.is_error:
            message = " ".join(getattr(c, "text", "") for c in result.content).strip()
            if permanent(message):
                raise Rejected(message)
            raise Unavailable(f"{self.endpoint}: {message or 'tool error'}")
        return (result.structured_content or {}).get("data")


def normalize_endpoint(endpoint: str) -> str:
    """An MCP endpoint in one spelling: scheme and host lower-cased, trailing ``/`` of the
    path removed (``HTTPS://Memory.example.com/mcp/`` -> ``https://memory.example.com/mcp``).

    Raises:
        ValueError: not an ``http://`` or ``https://`` URL with a host (``invalid input:
            --endpoint: ...`` in ``ynm outbox``).
    """
    from urllib.parse import urlsplit, urlunsplit

    text = endpoint.strip() if isinstance(endpoint, str) else ""
    try:
        parts = urlsplit(text)
        host = parts.hostname
    except ValueError:
        host = None
        parts = None
    if parts is None or parts.scheme.lower() not in ("http", "https") or not host:
        raise ValueError(f"{endpoint!r} is not an http(s) URL of a ynm MCP endpoint "
                         "(e.g. https://memory.example.com/mcp)")
    netloc = parts.netloc.rpartition("@")
    where = netloc[0] + netloc[1] + netloc[2].lower()
    return urlunsplit((parts.scheme.lower(), where, parts.path.rstrip("/"), parts.query, ""))


def _in_event_loop() -> bool:
    import asyncio

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


def _describe(err: BaseException) -> str:
    """One line for a failure that may be an exception group (anyio task groups)."""
    while isinstance(err, BaseExceptionGroup) and err.exceptions:
        err = err.exceptions[0]
    text = str(err) or type(err).__name__
    return f"{type(err).__name__}: {text}" if str(err) else text
