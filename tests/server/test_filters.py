"""MCP read filters refused with the CLI's words where a write would refuse the value
(see tests/cli/test_filters.py)."""

from __future__ import annotations

import pytest

from tests.cli.test_filters import BAD_NAMESPACES
from tests.server.test_tools import call_tool, err, ok, remember


@pytest.mark.parametrize(("tool", "args"), [
    ("memory_recall", {"text": "x"}),
    ("memory_context", {}),
    ("memory_session", {"action": "start", "sessionId": "t1"}),
    ("memory_consolidate", {"dryRun": True}),
])
@pytest.mark.parametrize(("value", "words"), BAD_NAMESPACES[:4], ids=lambda v: str(v)[:12])
def test_mcp_namespace_filters_refused_like_the_cli(mcp_call, cli_run, tool, args, value, words):
    got = err(call_tool(mcp_call, tool, {**args, "namespace": value}))
    assert got.startswith("invalid input: namespace: ") and words in got


@pytest.mark.parametrize(("args", "message"), [
    ({"tags": ["x" * 65]}, "invalid input: tags: each tag must be 1..64 characters"),
    ({"tags": [""]}, "invalid input: tags: each tag must be 1..64 characters"),
    ({"subject": "s" * 201}, "invalid input: subject: must be at most 200 characters"),
    ({"type": ["note"]}, None), ({"level": ["team"]}, None),
])
def test_mcp_recall_filters_refused(mcp_call, args, message):
    got = err(call_tool(mcp_call, "memory_recall", {"text": "x", **args}))
    assert got.startswith("invalid input: ")
    if message:
        assert got == message


def test_mcp_namespace_filter_is_lower_cased(mcp_call):
    made = remember(mcp_call, content="Ledger deploys on Tuesdays", namespace="team/payments",
                    level="distributed")
    hits = ok(call_tool(mcp_call, "memory_recall", {"text": "ledger",
                                                    "namespace": "Team/Payments/"}))
    assert [h["memoryId"] for h in hits] == [made["memoryId"]]
