"""The MCP tools take ``data`` as a JSON object, never as JSON text: a string is refused, so a
key named twice in JSON text (which the CLI's ``--data`` refuses) cannot pass either. An
object's keys are the transport's: its JSON parser has resolved any repeat before ynm sees it."""

from __future__ import annotations

import pytest

from tests.server.conftest import text
from tests.server.test_one_or_many import remember


@pytest.mark.parametrize("tool", ["memory_remember", "memory_supersede", "memory_annotate"])
def test_data_given_as_json_text_is_refused(mcp_call, tool):
    args = {"data": '{"a": 1, "a": 2}'}
    if tool == "memory_remember":
        args.update(type="semantic", content="Refunds wait")
    else:
        args["memoryId"] = remember(mcp_call, "Refunds wait for the ledger")
        if tool == "memory_supersede":
            args["content"] = "Refunds wait for the close"
    result = mcp_call(lambda c: c.call_tool(tool, args))
    assert result.is_error
    assert text(result) == "invalid input: data: must be an object"
