"""Fixtures for the MCP server tests: an opened service on the test project, an in-process
client, and a ``call`` helper that runs one coroutine to completion."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from typing import Any

import anyio
import pytest

pytest.importorskip("mcp")

from ynm.server.app import MemoryService, build_server  # noqa: E402

USER = "tester"


@pytest.fixture(autouse=True)
def _user(monkeypatch: pytest.MonkeyPatch) -> None:
    """``YNM_USER=tester`` so the personal namespace is ``user/tester``."""
    monkeypatch.setenv("YNM_USER", USER)


@pytest.fixture
def service(project) -> Iterator[MemoryService]:
    """The memory service of the test project, opened (personal and project mounts)."""
    svc = MemoryService(project)
    svc.open()
    yield svc
    svc.close()


def run(fn: Callable[[], Awaitable[Any]], timeout: float = 20) -> Any:
    """Run ``fn()`` on a fresh event loop, bounded by ``timeout`` seconds."""
    async def bounded() -> Any:
        with anyio.fail_after(timeout):
            return await fn()

    return anyio.run(bounded)


@pytest.fixture
def mcp_call(service: MemoryService) -> Callable[..., Any]:
    """``mcp_call(lambda client: ...)``: run against an in-process client of a fresh server."""
    from mcp import Client

    server = build_server(service)

    def call(body: Callable[[Any], Awaitable[Any]]) -> Any:
        async def go() -> Any:
            async with Client(server) as client:
                return await body(client)

        return run(go)

    return call


def text(result: Any) -> str:
    """The only text item of a tool result."""
    assert len(result.content) == 1
    return result.content[0].text
