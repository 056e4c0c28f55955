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


class Rejected(Exception):
    """ynm refused the record for good: refused input (``invalid input: ...``,
    ``refused: ...``; exit code 2, or the same as an MCP tool error) or no mount of the
    record's level where it writes (``no distributed mount: ...``, ``no personal mount
    available: ...``, ``nothing stored: ...``; see :func:`permanent`). Sending it again
    cannot succeed, so a queue moves it aside, with this message as its reason, instead of
    retrying."""


class Memory(Protocol):
    """The port (seed 003, Memory): anything with ``remember(record)`` that returns ynm's
    WriteResult (reference/cli.md §3.1) and raises :class:`Unavailable` or
    :class:`Rejected`."""

    def remember(self, record: Record) -> dict[str, Any]: ...


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
        argv = [self.bin, "remember", "--json", *record.cli_args()]
        try:
            proc = subprocess.run(argv, input=record.content.encode("utf-8"),
                                  capture_output=True, cwd=self.cwd, env=self.env,
                                  timeout=self.timeout, check=False)
        except subprocess.TimeoutExpired:
            raise Unavailable(f"ynm remember timed out after {self.timeout:g} s") from None
        except OSError as err:
            raise Unavailable(f"cannot run {self.bin}: {err.strerror or err}") from None
        stderr = proc.stderr.decode("utf-8", "replace")
        if proc.returncode == 2:
            raise Rejected(_error_text(stderr) or "ynm refused the record (exit 2)")
        if proc.returncode != 0:
            message = _error_text(stderr)
            if proc.returncode == 1 and permanent(message):
                raise Rejected(message)
            raise Unavailable(f"ynm remember exited {proc.returncode}: "
                              f"{message or 'no message'}")
        try:
            return json.loads(proc.stdout)
        except ValueError:
            raise Unavailable("ynm remember printed no JSON result") from None


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
    """

    def __init__(self, endpoint: str, token: str | None = None,
                 transport: Callable[[], Any] | None = None, timeout: float = 30.0) -> None:
        self.endpoint = endpoint
        self.token = token
        self.transport = transport
        self.timeout = timeout
        self.target = f"http:{endpoint}"
        """Where this memory writes (see :attr:`YnmCLI.target`): ``http:<endpoint>``."""

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
        import anyio

        statuses: list[int] = []  # HTTP error statuses seen, to name them in the message
        try:
            if _in_event_loop():
                # called from async code: its loop is busy in this thread, so use another
                from concurrent.futures import ThreadPoolExecutor

                with ThreadPoolExecutor(1) as pool:
                    return pool.submit(anyio.run, self._call, record.to_json(),
                                       statuses).result()
            return anyio.run(self._call, record.to_json(), statuses)
        except (Rejected, Unavailable):
            raise
        except ImportError as err:
            raise Unavailable(f"the mcp package is missing ({err.name}): pip install "
                              "'ynm[server]'") from None
        except TimeoutError:
            raise Unavailable(f"{self.endpoint}: no answer within {self.timeout:g} s") from None
        except BaseException as err:
            if isinstance(err, KeyboardInterrupt | SystemExit):
                raise
            status = f"HTTP {statuses[-1]}: " if statuses else ""
            raise Unavailable(f"{self.endpoint}: {status}{_describe(err)}") from None

    async def _call(self, arguments: dict[str, Any], statuses: list[int]) -> dict[str, Any]:
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
                        result = await client.call_tool("memory_remember", arguments)
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
        data = (result.structured_content or {}).get("data")
        if not isinstance(data, dict):
            raise Unavailable(f"{self.endpoint}: memory_remember answered without data")
        return data


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
