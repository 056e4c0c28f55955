"""memory_session start keeps the session's namespace and ttl for memory_remember of type
working with that session (see tests/cli/test_session_settings.py); end removes them."""

from __future__ import annotations

import json

import pytest

from tests.server.test_tools import call_tool, err, ok, remember


def test_mcp_session_settings_are_the_defaults_of_its_working_writes(mcp_call, ynm_home,
                                                                    run_json):
    start = call_tool(mcp_call, "memory_session",
                      {"action": "start", "sessionId": "Fix Parser", "ttl": "PT1M"})
    data = ok(start)
    assert (data["namespace"], data["ttl"]) == ("session/fix-parser", "PT1M")
    guidance = start.structured_content["guidance"]
    assert "type working, session fix-parser" in guidance
    assert "namespace session/fix-parser with ttl PT1M" in guidance
    assert (ynm_home / "sessions" / "fix-parser.json").exists()
    made = remember(mcp_call, type="working", session="Fix Parser", content="try v2 first")
    shown = ok(call_tool(mcp_call, "memory_recall", {"text": "try v2 first",
                                                     "namespace": "session/fix-parser"}))
    assert [h["memoryId"] for h in shown] == [made["memoryId"]]
    (hit,) = shown
    assert hit["namespace"] == "session/fix-parser"
    overridden = remember(mcp_call, type="working", session="fix-parser", ttl="PT3H",
                          content="second scratch note")
    ttls = {m["memoryId"]: m["current"]["ttl"] for m in run_json("list", "--type", "working")}
    assert ttls == {made["memoryId"]: "PT1M", overridden["memoryId"]: "PT3H"}
    ok(call_tool(mcp_call, "memory_session", {"action": "end", "sessionId": "Fix Parser"}))
    assert not (ynm_home / "sessions" / "fix-parser.json").exists()
    assert err(call_tool(mcp_call, "memory_remember",
                         {"type": "working", "session": "!!!", "content": "x"})).startswith(
        "invalid input: session: session id '!!!' has no letter or digit")


@pytest.fixture
def run_json(cli_run):
    def _run(*args):
        result = cli_run(*args, "--json")
        assert result.exit_code == 0, result.stderr
        return json.loads(result.stdout)
    return _run
