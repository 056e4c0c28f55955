"""Date-times given to the MCP tools become canonical UTC instants at the tool boundary, as
the CLI's flags do (docs/cli.md "Date-times")."""

from __future__ import annotations

import json

from tests.server.conftest import text

from tests.cli.conftest import make_record


def call(mcp_call, name, args):
    result = mcp_call(lambda c: c.call_tool(name, args))
    assert not result.is_error, text(result)
    return result.structured_content["data"]


def refused(mcp_call, name, args):
    result = mcp_call(lambda c: c.call_tool(name, args))
    assert result.is_error
    return text(result)


def test_recall_since_until_with_offsets_and_fractions(mcp_call, cli_run):
    recs = [make_record(level="distributed", namespace="common", content=f"alpha {i}",
                        recordedAt=at)
            for i, at in enumerate(["2026-11-30T11:59:59.999Z", "2026-11-30T12:00:00.500Z",
                                    "2026-11-30T12:00:01.000Z"])]
    out = cli_run("import", "--json", input="".join(json.dumps(r) + "\n" for r in recs))
    assert json.loads(out.stdout) == {"imported": 3, "problems": []}

    def got(**bounds):
        hits = call(mcp_call, "memory_recall", {"text": "alpha", **bounds})
        return sorted(h["memoryId"] for h in hits)

    a, b, c = (r["id"] for r in recs)
    assert got(since="2026-11-30T17:00:00+05:00") == sorted([b, c])
    assert got(until="2026-11-30T04:00:00-08:00") == [a]
    assert got(since="2026-11-30T12:00:00.2Z", until="2026-11-30T12:00:00.7Z") == [b]
    assert got(since="2026-11-30", until="2026-11-30") == []  # both midnight UTC
    assert got(since="2026-11-30", until="2026-12-01") == sorted([a, b, c])


def test_remember_valid_from_with_offset_is_stored_in_utc(mcp_call, cli_run):
    data = call(mcp_call, "memory_remember", {"type": "semantic", "content": "x",
                                              "validFrom": "2026-12-01T01:00:00.000+05:00",
                                              "validTo": "2026-11-30T16:00:00.25-08:00"})
    [state] = json.loads(cli_run("list", "--json").stdout)
    assert state["memoryId"] == data["memoryId"]
    assert state["current"]["validFrom"] == "2026-11-30T20:00:00.000Z"
    assert state["current"]["validTo"] == "2026-12-01T00:00:00.250Z"


def test_a_time_without_offset_is_refused_with_the_cli_message(mcp_call, cli_run):
    got = refused(mcp_call, "memory_recall", {"text": "x", "until": "2026-11-30T12:00:00"})
    assert got == ("invalid input: until: expected an ISO 8601 date-time with Z or an offset, "
                   "got '2026-11-30T12:00:00': add Z for UTC (2026-11-30T12:00:00Z) or an "
                   "offset (2026-11-30T12:00:00+05:00)")
    cli = cli_run("recall", "x", "--until", "2026-11-30T12:00:00")
    assert cli.exit_code == 2 and cli.stderr.strip() == f"Error: {got}"


def test_basic_format_is_accepted_by_the_tools(mcp_call, cli_run):
    data = call(mcp_call, "memory_remember", {"type": "semantic", "content": "basic x",
                                              "validFrom": "20261201T010000+0500",
                                              "validTo": "20261130T160000.25-0800"})
    [state] = json.loads(cli_run("list", "--json").stdout)
    assert state["memoryId"] == data["memoryId"]
    assert state["current"]["validFrom"] == "2026-11-30T20:00:00.000Z"
    assert state["current"]["validTo"] == "2026-12-01T00:00:00.250Z"
    assert call(mcp_call, "memory_recall", {"text": "basic", "until": "20000101T000000Z"}) == []


def test_a_bad_form_is_refused_listing_the_accepted_ones(mcp_call):
    got = refused(mcp_call, "memory_recall", {"text": "x", "since": "next week"})
    assert got == ("invalid input: since: expected an ISO 8601 date-time such as "
                   "2026-11-30T12:00:00Z, 2026-11-30T17:30:00.250+05:30, 20261130T120000Z "
                   "(basic format) or a date 2026-11-30 (midnight UTC), got 'next week'")
