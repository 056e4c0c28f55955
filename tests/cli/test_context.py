"""``ynm context`` (reference/cli.md §4.3, §3.4; algorithms.md §3)."""

from __future__ import annotations

import json

from tests.support.expired import import_expired_working


def remember(cli_run, *args: str) -> str:
    r = cli_run("remember", "--type", "semantic", "--json", *args)
    assert r.exit_code == 0, r.stderr
    return json.loads(r.stdout)["memoryId"]


def test_empty_store_says_no_memory_yet(project, cli_run):
    r = cli_run("context")
    assert r.exit_code == 0 and r.stdout == "no memory yet\n"
    assert json.loads(cli_run("context", "--json").stdout) == {
        "markdown": "", "included": [], "tokens": 0, "truncated": False}


def test_pinned_first_then_ranked_and_occurrences_left_out(project, cli_run):
    low = remember(cli_run, "--content", "Low pinned fact", "--importance", "0.2")
    high = remember(cli_run, "--content", "High pinned fact", "--importance", "0.9")
    plain = remember(cli_run, "--content", "Plain fact", "--tags", "misc")
    occ = remember(cli_run, "--content", "Build failed again", "--tags", "occurrence")
    for mid in (low, high, occ):
        assert cli_run("pin", mid).exit_code == 0
    block = json.loads(cli_run("context", "--json").stdout)
    assert block["included"][:2] == [high, low] and plain in block["included"]
    assert occ not in block["included"]
    assert block["markdown"].startswith(
        "## Memory\n- (semantic, pinned) High pinned fact\n- (semantic, pinned) Low pinned fact\n")
    assert "- (semantic) Plain fact [misc]" in block["markdown"]
    assert cli_run("context").stdout == block["markdown"] + "\n"


def test_nothing_fits_the_budget(project, cli_run):
    remember(cli_run, "--content", "A fact that needs more than one token")
    r = cli_run("context", "--budget-tokens", "4")
    assert r.exit_code == 0
    assert r.stdout == "no memory fits the token budget; raise --budget-tokens\n"
    block = json.loads(cli_run("context", "--budget-tokens", "4", "--json").stdout)
    assert block == {"markdown": "", "included": [], "tokens": 0, "truncated": True}
    assert cli_run("context", "--budget-tokens", "0").exit_code == 2


def working(cli_run, session: str, content: str, ttl: str = "PT8H") -> str:
    r = cli_run("remember", "--type", "working", "--namespace", f"session/{session}",
                "--ttl", ttl, "--content", content, "--json")
    assert r.exit_code == 0, r.stderr
    return json.loads(r.stdout)["memoryId"]


def test_expired_working_memory_is_left_out_of_every_read_before_any_sweep(project, cli_run,
                                                                            tmp_path):
    # its ttl ran out long ago (updatedAt + ttl <= now); nothing swept it
    gone = import_expired_working(cli_run, tmp_path, "run-a",
                                  "staging DB is down until the restart")
    live = working(cli_run, "run-a", "staging deploy is paused")
    reads = {
        "recall text": ("recall", "staging", "--json"),
        "recall filter only": ("recall", "--type", "working", "--json"),
        "list": ("list", "--json"),
        "context": ("context", "--json"),
        "context with text": ("context", "--text", "staging DB", "--json"),
        "session start": ("session", "start", "run-a", "--json"),
    }
    for name, args in reads.items():
        out = cli_run(*args).stdout
        assert gone not in out, name
        assert live in out, name
    shown = cli_run("recall", "staging", "--include-tombstoned").stdout
    assert "[expired] staging DB is down until the restart" in shown
    listed = cli_run("list", "--include-tombstoned").stdout
    assert "[expired] staging DB is down until the restart" in listed
    assert "[expired] staging deploy" not in listed


def test_a_session_block_holds_its_own_working_memory_and_no_other_sessions(project, cli_run):
    other = working(cli_run, "run-a", "run-a scratch: staging is down")
    own = working(cli_run, "run-b", "run-b scratch: retry the deploy")
    assert cli_run("remember", "--type", "semantic", "--content",
                   "deploys go through staging").exit_code == 0
    r = cli_run("session", "start", "Run-B")
    assert r.exit_code == 0
    assert "- (working) run-b scratch: retry the deploy" in r.stdout
    assert "run-a scratch" not in r.stdout and "deploys go through staging" in r.stdout
    included = json.loads(cli_run("session", "start", "run-c", "--json").stdout)
    assert own not in included["context"]["included"]
    assert other not in included["context"]["included"]


def test_a_focus_text_without_search_words_is_no_focus(project, cli_run):
    # recall finds nothing for such a text; the context block stays the unfocused overview
    plain = remember(cli_run, "--content", "Plain fact", "--tags", "misc")
    other = remember(cli_run, "--content", "Another fact")
    unfocused = json.loads(cli_run("context", "--json").stdout)
    assert set(unfocused["included"]) == {plain, other}
    for text in ("C++", "?!", "--"):
        assert json.loads(cli_run("context", "--text", text, "--json").stdout) == unfocused
    # a focus no memory answers (recall: no matches) leaves the overview too, not an empty block
    for text in ("what is the capital of Australia", "zzzqqq"):
        assert cli_run("recall", text).stdout.strip() == "no matches"
        assert json.loads(cli_run("context", "--text", text, "--json").stdout) == unfocused


def test_a_promoted_copy_and_its_original_are_not_both_in_the_block(project, cli_run):
    """``ynm promote`` leaves the personal original; the block shows the distributed copy only
    (and the original again when the copy is out of the selection)."""
    orig = remember(cli_run, "--content", "The ledger deploys on Tuesdays")
    other = remember(cli_run, "--content", "The ledger runbook lives in ops")
    promoted = cli_run("promote", orig, "--json")
    assert promoted.exit_code == 0, promoted.stderr
    copy = json.loads(promoted.stdout)["memoryId"]
    for args in ((), ("--text", "ledger deploys")):
        block = json.loads(cli_run("context", "--json", *args).stdout)
        assert sorted(block["included"]) == sorted([copy, other]), args
        assert block["markdown"].count("The ledger deploys on Tuesdays") == 1
    assert cli_run("pin", orig).exit_code == 0
    assert copy in json.loads(cli_run("context", "--json").stdout)["included"]
    assert orig not in json.loads(cli_run("context", "--json").stdout)["included"]
    personal = json.loads(cli_run("context", "--json", "--level", "personal").stdout)
    assert orig in personal["included"]
    start = json.loads(cli_run("session", "start", "--json").stdout)["context"]
    assert copy in start["included"] and orig not in start["included"]
