"""``ynm context`` (reference/cli.md §4.3, §3.4; algorithms.md §3)."""

from __future__ import annotations

import json


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


def test_a_focus_text_without_search_words_is_no_focus(project, cli_run):
    # recall finds nothing for such a text; the context block stays the unfocused overview
    plain = remember(cli_run, "--content", "Plain fact", "--tags", "misc")
    other = remember(cli_run, "--content", "Another fact")
    unfocused = json.loads(cli_run("context", "--json").stdout)
    assert set(unfocused["included"]) == {plain, other}
    for text in ("C++", "?!", "--"):
        assert json.loads(cli_run("context", "--text", text, "--json").stdout) == unfocused
