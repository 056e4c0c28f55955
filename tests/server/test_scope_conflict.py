"""memory_recall and memory_context given a mount and a level that leaves it out read
nothing, and the guidance says why, naming the mount's level (the CLI's hint,
tests/cli/test_scope_conflict.py)."""

from __future__ import annotations

import pytest

from tests.server.test_one_or_many import remember

SAID = ("mount and level select no mount: mount project is distributed, not personal; drop "
        "one of them.")


@pytest.mark.parametrize(("tool", "args"), [("memory_recall", {"text": "deploys"}),
                                            ("memory_context", {})])
def test_the_guidance_names_the_mount_level(mcp_call, tool, args):
    remember(mcp_call, "the deploys go out on Tuesdays", level="distributed")
    result = mcp_call(lambda c: c.call_tool(tool, {**args, "mount": "project",
                                                   "level": ["personal"]}))
    assert not result.is_error
    assert result.structured_content["guidance"] == SAID
    agreed = mcp_call(lambda c: c.call_tool(tool, {**args, "mount": "project",
                                                   "level": ["distributed"]}))
    assert agreed.structured_content.get("guidance") != SAID
