"""A long-running server whose cache file is damaged on disk rebuilds it from git at the first
tool call that meets the damage, says so once on stderr, and answers that call."""

from __future__ import annotations

import random
from contextlib import closing

import pytest
import sqlean

from tests.server.test_tools import call_tool, ok

PAGE = 4096


def _damage(path, page: int) -> None:
    with open(path, "r+b") as f:
        f.seek((page - 1) * PAGE)
        f.write(random.Random(page).randbytes(PAGE))


@pytest.mark.parametrize("where", ["header", "inside"])
@pytest.mark.parametrize("tool,args,tree", [  # tree: one the tool reads whole (dbstat)
    ("memory_recall", {"text": "ledger deploys", "limit": 100}, "memories"),
    ("memory_status", {}, "memories_memory_id"),
    ("memory_context", {"budgetTokens": 4000}, "memories"),
])
def test_a_tool_call_rebuilds_a_damaged_cache_and_answers(service, mcp_call, ynm_home, capfd,
                                                          tool, args, tree, where):
    for n in range(60):
        ok(call_tool(mcp_call, "memory_remember", {
            "type": "semantic", "content": f"ledger deploys {n} " + "filler " * 40}))
    before = ok(call_tool(mcp_call, tool, args))
    service.run_sync(lambda y: y.close())  # the next call opens the file as it is on disk
    path = ynm_home / "index" / "ynm-cache" / "personal.sqlite"
    with closing(sqlean.connect(str(path))) as conn:
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages = sorted(n for (n,) in conn.execute(
            "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf'", (tree,)))
    _damage(path, 1 if where == "header" else pages[len(pages) // 2])
    capfd.readouterr()
    after = ok(call_tool(mcp_call, tool, args))
    if tool == "memory_recall":  # a score's recency part moves with the clock
        assert all(abs(a["score"] - b["score"]) < 1e-6 for a, b in zip(after, before))
        before = [{**h, "score": None} for h in before]
        after = [{**h, "score": None} for h in after]
    assert after == before
    err = capfd.readouterr().err
    assert err.count("warning: the search cache of mount personal (") == 1, err
    assert "rebuilding it from git" in err
