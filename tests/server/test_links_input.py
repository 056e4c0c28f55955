"""The MCP tools' ``links``: a list of links, or one link object (docs/cli.md, MCP); nothing
else. A string is not split into links as a tag string is (``"links": ""`` was once taken as
no links), and an exact repeat of a link is dropped without an error, as on the CLI."""

from __future__ import annotations

import pytest

from tests.server.conftest import text
from tests.server.test_one_or_many import call, remember, state

TOOLS = ("memory_remember", "memory_supersede", "memory_annotate")


def args_of(mcp_call, tool: str, links) -> dict:
    if tool == "memory_remember":
        return {"type": "semantic", "content": "linked", "links": links}
    mid = remember(mcp_call, "to be linked")
    more = {"content": "now linked"} if tool == "memory_supersede" else {}
    return {"memoryId": mid, "links": links, **more}


@pytest.mark.parametrize("tool", TOOLS)
@pytest.mark.parametrize("links", ["", "about:01JZ8Q6W3N5V2R4T7Y9B1C3D5E", 5, None])
def test_links_that_are_no_list_nor_object_are_refused(mcp_call, tool, links):
    args = args_of(mcp_call, tool, links)
    result = mcp_call(lambda c: c.call_tool(tool, args))
    assert result.is_error
    assert text(result) == "invalid input: links: must be a list"


@pytest.mark.parametrize("tool", TOOLS)
def test_an_exact_repeat_is_dropped(mcp_call, service, tool):
    target = remember(mcp_call, "link target")
    links = [{"rel": "about", "to": target}, {"rel": "about", "to": target.lower()},
             {"rel": "supports", "to": target}]
    got = call(mcp_call, tool, args_of(mcp_call, tool, links))
    memory = state(service, got["memoryId"])
    assert [(lk["rel"], lk["to"]) for lk in memory["links"] if lk["rel"] != "supersedes"] == [
        ("about", target), ("supports", target)]
    assert [lk for lk in memory["current"]["links"] if lk["rel"] != "supersedes"] in (
        [], [{"rel": "about", "to": target}, {"rel": "supports", "to": target}])
