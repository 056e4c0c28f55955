"""Every error an MCP client gets carries ynm's own message (tools, resources, prompts), and
the server's stderr gets one line for an unexpected failure, not a traceback, unless
``YNM_DEBUG`` is set."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest
from mcp.shared.exceptions import MCPError

from tests.server.conftest import run, text
from ynm.service.ynm import Ynm

UNKNOWN = "01ARZ3NDEKTSV4RRFFQ69G5FAV"


def _serve_stdio(project: Path, errlog: Path, body, env: dict[str, str] | None = None):
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=sys.executable,
                                   args=["-m", "ynm", "serve", "--cwd", str(project)],
                                   env={**os.environ, **(env or {})}, cwd=str(project))

    async def go():
        with errlog.open("w") as log:
            async with Client(stdio_client(params, errlog=log)) as client:
                return await body(client)

    return run(go, timeout=60)


async def _failure(awaitable) -> MCPError:
    try:
        await awaitable
    except MCPError as err:
        return err
    raise AssertionError("no error")


def test_stdio_unknown_resources_and_prompt_carry_ynm_messages(project, tmp_path):
    errlog = tmp_path / "stderr.txt"

    async def body(client):
        return [
            await _failure(client.read_resource(f"memory://project/{UNKNOWN}")),
            await _failure(client.read_resource(f"memory://personal/{UNKNOWN.lower()}")),
            await _failure(client.read_resource("memory://nowhere/not-an-id")),
            await _failure(client.get_prompt("memory-no-such-prompt")),
        ]

    errors = _serve_stdio(project, errlog, body)
    assert [e.error.message for e in errors] == [
        f"no memory {UNKNOWN} in mount project",
        f"no memory {UNKNOWN.lower()} in mount personal",
        "no memory not-an-id in mount nowhere",
        'unknown prompt "memory-no-such-prompt" (have: memory-session-start, '
        'memory-when-to-promote, memory-when-to-remember)',
    ]
    assert all(e.error.code == -32602 for e in errors)  # invalid params: the caller's mistake
    stderr = errlog.read_text()
    assert "Traceback" not in stderr
    assert "ERROR" not in stderr


def _boom(*_a, **_k):
    raise RuntimeError("the disk caught fire\nmore detail")


@pytest.mark.parametrize("debug", [False, True])
def test_unexpected_failures_of_resources_tools_are_one_line(mcp_call, monkeypatch, capfd,
                                                             debug):
    if debug:
        monkeypatch.setenv("YNM_DEBUG", "1")
    monkeypatch.setattr(Ynm, "status", _boom)
    monkeypatch.setattr(Ynm, "recall", _boom)
    monkeypatch.setattr(Ynm, "context", _boom)

    async def body(client):
        return [
            (await _failure(client.read_resource("memory://status"))).error.message,
            (await _failure(client.read_resource("memory://context"))).error.message,
            text(await client.call_tool("memory_recall", {"text": "x"})),
            text(await client.call_tool("memory_status", {})),
        ]

    messages = mcp_call(body)
    assert messages == [
        "reading memory://status failed: RuntimeError: the disk caught fire",
        "reading memory://context failed: RuntimeError: the disk caught fire",
        "memory_recall failed: RuntimeError: the disk caught fire",
        "memory_status failed: RuntimeError: the disk caught fire",
    ]
    stderr = capfd.readouterr().err
    ours = [line for line in stderr.splitlines() if line.startswith("[ynm-mcp] ")]
    assert ours == [f"[ynm-mcp] {m}" for m in messages]
    assert stderr.count("Traceback (most recent call last)") == (4 if debug else 0)


def test_ynm_errors_of_resources_reach_the_client(mcp_call, monkeypatch, capfd):
    from ynm.errors import StoreError

    def fails(*_a, **_k):
        raise StoreError("cannot read refs/notes/ynm: permission denied")

    monkeypatch.setattr(Ynm, "status", fails)

    async def body(client):
        return (await _failure(client.read_resource("memory://status"))).error.message

    assert mcp_call(body) == "cannot read refs/notes/ynm: permission denied"
    assert "Traceback" not in capfd.readouterr().err


@pytest.mark.parametrize(("tool", "args", "message"), [
    ("memory_remember", {"type": "facts", "content": "x"},
     "type: must be one of working, episodic, semantic, procedural, reflective, reference"),
    ("memory_remember", {"type": "semantic", "content": ["x"]}, "content: must be text (a string)"),
    ("memory_remember", {"type": "semantic", "content": "x", "memory_id": "y"},
     "memory_id: unknown field"),
    ("memory_recall", {"text": "x", "limit": "many"}, "limit: must be a whole number"),
    ("memory_context", {"budgetTokens": 0}, "budgetTokens: must be at least 1"),
])
def test_tool_input_errors_are_plain_and_one_line(mcp_call, tool, args, message):
    result = mcp_call(lambda c: c.call_tool(tool, args))
    assert result.is_error
    got = result.content[0].text
    assert got == f"invalid input: {message}"
    assert "Input should" not in got and "type=" not in got and "\n" not in got
