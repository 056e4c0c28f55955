"""The MCP server: one :class:`MemoryService` per process, an ``MCPServer`` whose tools come
from :data:`ynm.server.tools.TOOL_SPECS` (reference/server.md §1).

One process is the single writer of its store. Every service call runs on one worker thread
that owns the :class:`~ynm.service.ynm.Ynm` (its SQLite connections belong to that thread), so
calls never block the event loop; write tools also take an asyncio lock, so writes are one at a
time even if the worker pool ever grows. ``memory_remember`` calls that queue behind that lock
are run as one group commit (:meth:`MemoryService.call_grouped`, ``Ynm.remember_many``): one
append per shard for all of them, each caller with its own result or error.

Result envelope (§1.3): success is one text item, ``data`` as pretty JSON, plus
``\\n\\nGuidance: <text>`` when there is guidance, and ``structuredContent`` ``{data,
guidance}``; failure is ``isError: true`` with the error message as the only text.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ynm import __version__
from ynm.errors import YnmError
from ynm.server.guidance import PROMPTS, instructions
from ynm.server.tools import TOOL_SPECS, ToolOutput, ToolSpec

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

    from ynm.server.auth import AuthInfo
    from ynm.service.people import Caller
    from ynm.service.ynm import Ynm

T = TypeVar("T")
CallerOf = Callable[["Ynm"], "Caller"]

SERVER_NAME = "ynm"
SERVER_TITLE = "ynm: your named memory"


def log(message: str) -> None:
    """A diagnostic line on stderr (stdout is the protocol in stdio mode)."""
    print(f"[ynm-mcp] {message}", file=sys.stderr, flush=True)


def report_unexpected(what: str, err: BaseException) -> str:
    """Log an exception ynm did not raise on purpose as one stderr line (its traceback too when
    ``YNM_DEBUG`` is set) and return the message the client gets: ``<what> failed: <type>:
    <message>``."""
    import traceback

    from ynm.errors import debugging, describe_unexpected

    message = f"{what} failed: {describe_unexpected(err)}"
    log(message)
    if debugging():
        print("".join(traceback.format_exception(err)), file=sys.stderr, end="", flush=True)
    return message


class MemoryService:
    """The process's one :class:`Ynm`, opened and used on a single worker thread.

    Args:
        cwd: the directory the service opens from.
        personal: mount the personal store (False for ``--no-personal``).
        env: the environment to load configuration from (default ``os.environ``).
    """

    def __init__(self, cwd: str | Path | None = None, *, personal: bool = True,
                 env: Mapping[str, str] | None = None) -> None:
        self.cwd = Path(cwd) if cwd is not None else Path.cwd()
        self.personal = personal
        self.env = env
        self.ynm: Ynm | None = None
        self.open_error: str | None = None
        self._executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ynm-service")
        self._write_lock: asyncio.Lock | None = None
        self._lock_loop: asyncio.AbstractEventLoop | None = None
        # Calls waiting for a group commit: (run_many, input, caller, future).
        self._grouped: list[tuple[Callable[..., Any], Any, CallerOf | None, Any]] = []

    # -- lifecycle ---------------------------------------------------------------------

    def open(self) -> None:
        """Open the store now (on the worker thread), so the instructions can name its levels.
        A failure is kept in :attr:`open_error` and reported by every tool call."""
        self._executor.submit(self._open).result()

    def _open(self) -> None:
        from ynm.service.ynm import Ynm

        try:
            self.ynm = Ynm.open(self.cwd, self.env, personal=self.personal)
            self.open_error = None
        except YnmError as err:
            self.open_error = str(err)
            log(f"cannot open the store: {err}")

    def warm(self) -> None:
        """Load the embedder now, on the worker thread, without waiting: the first
        ``memory_recall`` of an HTTP server would otherwise pay the model load (seconds) and
        outlast a client's timeout (10 s for a hosted recall, :mod:`ynm.service.remote`).
        Calls queue behind it. Logs ``embedder ready (<s> s)``; a failure is the first
        call's to report."""
        def _warm() -> None:
            import time

            start = time.monotonic()
            try:
                embedder = self._ynm().embedder
                if embedder is not None:
                    embedder.embed(["warm up"])
                    log(f"embedder ready ({time.monotonic() - start:.1f} s)")
            except Exception as err:  # noqa: BLE001 - a warm-up never stops the server
                log(f"embedder not warmed: {type(err).__name__}: {err}")

        self._executor.submit(_warm)

    def close(self) -> None:
        """Close the store and stop the worker thread."""
        def _close() -> None:
            if self.ynm is not None:
                self.ynm.close()
                self.ynm = None

        try:
            self._executor.submit(_close).result(timeout=10)
        finally:
            self._executor.shutdown(wait=False)

    def levels(self) -> set[str]:
        """The levels of the open mounts; inferred from ``personal`` if the store failed."""
        if self.ynm is not None:
            return {m.level for m in self.ynm.mounts}
        return {"personal", "distributed"} if self.personal else {"distributed"}

    # -- calls -------------------------------------------------------------------------

    def _ynm(self) -> Ynm:
        if self.ynm is None:
            self._open()
        if self.ynm is None:
            raise YnmError(self.open_error or "the memory store is not open")
        return self.ynm

    def run_sync(self, fn: Callable[[Ynm], T], caller: CallerOf | None = None) -> T:
        """Run ``fn(ynm)`` on the worker thread and wait (for callers without a loop)."""
        return self._executor.submit(self._call, fn, caller).result()

    def _call(self, fn: Callable[[Ynm], T], caller: CallerOf | None) -> T:
        """``fn(ynm)`` as one operation (:meth:`Ynm.run`: a damaged cache met on the way is
        rebuilt and ``fn`` runs again), as ``caller`` when given."""
        ynm = self._ynm()
        if caller is None:
            return ynm.run(fn)
        # Who this call writes as (Ynm.caller: provenance.actor and .client, the unnamed
        # namespace); set for this call only. Safe: this thread is the only one that touches
        # the service.
        ynm.caller = caller(ynm)
        try:
            return ynm.run(fn)
        finally:
            ynm.caller = None

    async def call(self, fn: Callable[[Ynm], T], *, write: bool = False,
                   caller: CallerOf | None = None) -> T:
        """Run ``fn(ynm)`` on the worker thread without blocking the event loop; writes are
        serialised by a lock. ``caller(ynm)`` says who this call is (a
        :class:`~ynm.service.people.Caller`; None: the service's own actor); it runs on the
        worker thread, since resolving a person reads the people document."""
        if not write:
            return await asyncio.wrap_future(self._executor.submit(self._call, fn, caller))
        async with self._lock():
            return await asyncio.wrap_future(self._executor.submit(self._call, fn, caller))

    def _lock(self) -> asyncio.Lock:
        """The write lock of the running event loop."""
        loop = asyncio.get_running_loop()
        if self._write_lock is None or self._lock_loop is not loop:
            self._write_lock, self._lock_loop = asyncio.Lock(), loop
        return self._write_lock

    async def call_grouped(self, run_many: Callable[[Ynm, list[tuple[Any, Any]]], list[Any]],
                           inp: Any, *, caller: CallerOf | None = None) -> Any:
        """A write that may share one group commit with the same kind of writes queued
        behind the write lock: while one batch runs on the worker thread, new calls wait;
        the first of them to get the lock runs all that are waiting as one
        ``run_many(ynm, [(input, caller), ...])`` (one append per shard), and each call gets
        its own result or its own exception. Calls keep their arrival order, so one client's
        sequential writes land in order. Source: DESIGN.md "Server" (single write queue)."""
        loop = asyncio.get_running_loop()
        future = loop.create_future()
        self._grouped.append((run_many, inp, caller, future))
        async with self._lock():
            if not future.done():
                batch = [job for job in self._grouped if job[0] is run_many]
                self._grouped = [job for job in self._grouped if job[0] is not run_many]
                try:
                    outs = await asyncio.wrap_future(
                        self._executor.submit(self._call_many, run_many, batch))
                except Exception as err:  # noqa: BLE001 - the whole batch failed to run
                    outs = [err] * len(batch)
                for (_, _, _, waiting), out in zip(batch, outs, strict=True):
                    if isinstance(out, BaseException):
                        waiting.set_exception(out)
                    else:
                        waiting.set_result(out)
        return await future

    def _call_many(self, run_many: Callable[[Ynm, list[tuple[Any, Any]]], list[Any]],
                   batch: list[tuple[Any, Any, CallerOf | None, Any]]) -> list[Any]:
        """Run one group on the worker thread: each call's caller resolved on its own (a
        failure there fails that call only), then one ``run_many`` for the rest."""
        ynm = self._ynm()
        outs: list[Any] = [None] * len(batch)
        calls: list[tuple[Any, Any]] = []
        placed: list[int] = []
        for n, (_, inp, caller, _) in enumerate(batch):
            try:
                calls.append((inp, caller(ynm) if caller is not None else None))
                placed.append(n)
            except Exception as err:  # noqa: BLE001 - reported to this call only
                outs[n] = err
        if calls:
            for n, out in zip(placed, run_many(ynm, calls), strict=True):
                outs[n] = out
        return outs


def envelope(output: ToolOutput) -> Any:
    """A successful ``CallToolResult``: pretty JSON text (plus guidance) and
    ``structuredContent {data, guidance}``."""
    from mcp_types import CallToolResult, TextContent

    from ynm.cli._common import dumps_pretty

    text = dumps_pretty(output.data)
    if output.guidance:
        text += f"\n\nGuidance: {output.guidance}"
    structured = json.loads(json.dumps({"data": output.data, "guidance": output.guidance}))
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=structured)


def tool_error(message: str) -> Any:
    """A failed ``CallToolResult``: ``isError`` and the message as the only text."""
    from mcp_types import CallToolResult, TextContent

    return CallToolResult(content=[TextContent(type="text", text=message)], is_error=True)


def caller_of(auth: AuthInfo | None) -> CallerOf:
    """``caller(ynm)`` for a request verified as ``auth`` (None: no auth, stdio): the table of
    reference/server.md §2.5 (:func:`ynm.server.identity.caller_for`) with the server's own
    actor and the store's people document."""
    from ynm.server.identity import caller_for

    return lambda ynm: caller_for(auth, ynm.config.actor, ynm.people)


def request_auth(ctx: Any) -> AuthInfo | None:
    """The verified caller the HTTP front door left in the request's ASGI scope
    (``scope["ynm.auth"]``); None in auth mode ``none``, over stdio and outside a request."""
    try:
        request = ctx.request_context.request
    except Exception:  # noqa: BLE001 - no request context (stdio, in-process calls)
        return None
    scope = getattr(request, "scope", None)
    return scope.get("ynm.auth") if isinstance(scope, dict) else None


def _make_tool(spec: ToolSpec, service: MemoryService) -> Any:
    """An SDK ``Tool`` whose schema is the spec's input model and whose arguments reach the
    handler untouched, so validation (and its message) is ynm's own."""
    from mcp.server.mcpserver import Context
    from mcp.server.mcpserver.tools.base import Tool
    from mcp.server.mcpserver.utilities.func_metadata import ArgModelBase, FuncMetadata
    from mcp_types import ToolAnnotations
    from pydantic import ConfigDict

    class RawArguments(ArgModelBase):
        model_config = ConfigDict(extra="allow", arbitrary_types_allowed=True)

        def model_dump_one_level(self) -> dict[str, Any]:
            return {"arguments": dict(self.model_extra or {})}

    async def handler(arguments: dict[str, Any], ctx: Context) -> Any:
        try:
            inp = spec.parse(arguments)
            if spec.run_many is not None:
                output = await service.call_grouped(spec.run_many, inp,
                                                    caller=caller_of(request_auth(ctx)))
            else:
                output = await service.call(lambda ynm: spec.run(ynm, inp),
                                            write=not spec.read_only,
                                            caller=caller_of(request_auth(ctx)))
        except YnmError as err:
            return tool_error(str(err))
        except Exception as err:  # noqa: BLE001 - a tool call never crashes the server
            from ynm.model.inputs import invalid_input_from

            invalid = invalid_input_from(err)  # a model validated past spec.parse
            if invalid is not None:
                return tool_error(str(invalid))
            return tool_error(report_unexpected(spec.name, err))
        return envelope(output)

    return Tool(
        fn=_audited(spec.name, handler), name=spec.name, title=None, description=spec.description,
        parameters=spec.input_schema(), fn_metadata=FuncMetadata(arg_model=RawArguments),
        is_async=True, context_kwarg="ctx",
        annotations=ToolAnnotations(read_only_hint=spec.read_only,
                                    idempotent_hint=spec.read_only,
                                    destructive_hint=spec.destructive),
    )


def _audited(name: str, handler: Callable[..., Any]) -> Callable[..., Any]:
    """``handler`` reporting each call to the request's audit event
    (:func:`ynm.server.audit.record_call`): the tool, ok or error, the size of its arguments
    and, from its result, memory ids and the result count; never the arguments themselves."""
    from ynm.server.audit import call_counts, input_size, record_call

    async def audited(arguments: dict[str, Any], ctx: Any) -> Any:
        result = await handler(arguments, ctx)
        size = input_size(arguments)
        if getattr(result, "is_error", False):
            record_call(name, "error", input_bytes=size)
        else:
            data = (getattr(result, "structured_content", None) or {}).get("data")
            record_call(name, "ok", input_bytes=size, **call_counts(data))
        return result

    return audited


def build_server(service: MemoryService) -> MCPServer:
    """The ``MCPServer``: instructions from the open levels, every tool of ``TOOL_SPECS``, the
    resources ``memory://context`` and ``memory://status``, the templates
    ``memory://{mount}/{memoryId}`` and ``memory://{mount}/wiki/{+path}``, and the three guidance prompts.

    Each tool call runs as its request's caller (:func:`caller_of`: ``provenance.actor`` and
    ``.client``, the unnamed namespace, ``memory_people``), from the verified caller the HTTP
    front door leaves in ``scope["ynm.auth"]``.

    Args:
        service: the process's memory service (opened or not).
    """
    server = _server_class()(
        SERVER_NAME, title=SERVER_TITLE, version=__version__,
        instructions=instructions(service.levels()),
        tools=[_make_tool(spec, service) for spec in TOOL_SPECS.values()],
        log_level="WARNING",
    )

    @server.resource("memory://context", name="context", mime_type="text/markdown",
                     description="The memory block with default settings (1500 tokens).")
    async def context_resource() -> str:
        from ynm.model.inputs import ContextQuery

        block = await service.call(lambda ynm: ynm.context(ContextQuery()))
        return block["markdown"]

    @server.resource("memory://status", name="status", mime_type="application/json",
                     description="The same payload as memory_status.")
    async def status_resource() -> str:
        from ynm.cli._common import dumps_pretty

        return dumps_pretty(await service.call(lambda ynm: ynm.status()))

    @server.resource("memory://{mount}/{memoryId}", name="memory", mime_type="application/json",
                     description="One memory, folded, with its mount.")
    async def memory_resource(mount: str, memoryId: str) -> str:  # noqa: N803 - URI variable
        from mcp.server.mcpserver.exceptions import ResourceNotFoundError

        from ynm.cli._common import dumps_pretty

        def find(ynm: Ynm) -> dict[str, Any] | None:
            from ynm.errors import UnknownMemory
            from ynm.model.inputs import input_ulid

            try:
                found, state = ynm.find(input_ulid(memoryId))
            except UnknownMemory:
                found, state = None, None
            if found is None or found.id != mount:
                return None
            return {**state, "mount": found.id}

        memory = await service.call(find)
        if memory is None:
            raise ResourceNotFoundError(f"no memory {memoryId} in mount {mount}")
        return dumps_pretty(memory)

    @server.resource("memory://{mount}/wiki/{+path}", name="wiki", mime_type="text/markdown",
                     description="A page of the mount's wiki (index.md, log.md, memories/<id>.md, "
                                 "entities/<slug>.md, topics/<slug>.md), generated on demand.")
    async def wiki_resource(mount: str, path: str) -> str:
        from mcp.server.mcpserver.exceptions import ResourceNotFoundError

        page = await service.call(lambda ynm: ynm.wiki_page(mount, path))
        if page is None:
            raise ResourceNotFoundError(f"no wiki page {path} in mount {mount}")
        return page

    for name, text in PROMPTS.items():
        _add_prompt(server, name, text)
    return server


def _add_prompt(server: MCPServer, name: str, text: str) -> None:
    @server.prompt(name=name, description=f"ynm guidance: {name.replace('-', ' ')}")
    def prompt() -> str:
        return text


def _server_class() -> type[MCPServer]:
    """``MCPServer`` whose resource reads and prompts fail with ynm's own message: a ynm error
    becomes the protocol error's message as it is; anything else is logged on one stderr line
    (a traceback only with ``YNM_DEBUG``) and reported as ``<what> failed: <type>: <message>``,
    where the SDK would log a traceback and tell the client only "Error creating resource"."""
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ResourceError, UnexpectedResourceError
    from mcp.shared.exceptions import MCPError
    from mcp_types import INTERNAL_ERROR, INVALID_PARAMS

    class YnmMCPServer(MCPServer):
        async def read_resource(self, uri: Any, context: Any = None) -> Any:
            from ynm.server.audit import record_call, resource_call

            tool, ids = resource_call(str(uri))  # the read, in the request's audit event
            try:
                result = await self._read_resource(uri, context)
            except BaseException:
                record_call(tool, "error", memory_ids=ids)
                raise
            record_call(tool, "ok", memory_ids=ids)
            return result

        async def _read_resource(self, uri: Any, context: Any = None) -> Any:
            try:
                return await super().read_resource(uri, context)
            except UnexpectedResourceError as err:
                cause = err.__cause__ or err
                if isinstance(cause, YnmError):
                    raise ResourceError(str(cause)) from None
                raise ResourceError(report_unexpected(f"reading {uri}", cause)) from None

        async def get_prompt(self, name: str, arguments: dict[str, Any] | None = None,
                             context: Any = None) -> Any:
            if self._prompt_manager.get_prompt(name) is None:
                have = ", ".join(sorted(PROMPTS))
                raise MCPError(code=INVALID_PARAMS,
                               message=f'unknown prompt "{name}" (have: {have})')
            try:
                return await super().get_prompt(name, arguments, context)
            except MCPError:
                raise
            except Exception as err:  # noqa: BLE001 - the SDK would log a traceback
                cause = err.__cause__ or err
                if isinstance(cause, YnmError):
                    raise MCPError(code=INVALID_PARAMS, message=str(cause)) from None
                raise MCPError(code=INTERNAL_ERROR,
                               message=report_unexpected(f"prompt {name}", cause)) from None

    return YnmMCPServer
