"""``ynm dream``, ``ynm review`` and ``ynm session end`` over the engine (reference/cli.md §4.5,
§4.21; algorithms.md §4.1), and ``memory_consolidate``'s errors, each in its own words."""

from __future__ import annotations

import json

import pytest

from ynm.errors import YnmError
from ynm.server.tools import run_tool
from ynm.service.ynm import Ynm


def ok(result) -> str:
    assert result.exit_code == 0, result.stderr
    return result.stdout


def remember(cli_run, *args: str) -> str:
    return json.loads(ok(cli_run("remember", *args, "--json")))["memoryId"]


@pytest.mark.parametrize("option", ["--passes", "--namespace", "--dry-run", "--judge",
                                    "--max-pairs", "--json"])
def test_dream_help_names_every_option(cli_run, option):
    assert option in ok(cli_run("dream", "--help"))


def test_review_help_says_how_to_decide(cli_run):
    out = ok(cli_run("review", "--help"))
    assert "why" in out and "review clear" in out


@pytest.mark.parametrize("args, message", [
    (("--judge",), "Error: invalid input: --judge: only applies to a dry run; add --dry-run"),
    (("--judge", "--no-dry-run"),
     "Error: invalid input: --judge: only applies to a dry run; add --dry-run"),
    (("--passes", "sleep"), "Invalid value for '--passes': 'sleep' is not one of"),
    (("--passes", "expire,sleep"), "Invalid value for '--passes': 'sleep' is not one of"),
    (("--max-pairs", "0"), "Invalid value for '--max-pairs'"),
])
def test_dream_refuses_bad_input_with_exit_2(project, cli_run, args, message):
    result = cli_run("dream", *args)
    assert result.exit_code == 2 and message in result.stderr


def test_the_cli_and_the_tool_each_name_their_own_flags(project, cli_run):
    """The same refusal: the CLI says ``--judge``/``--dry-run``, the MCP tool ``judge``/
    ``dryRun`` (never the other's spelling)."""
    cli = cli_run("dream", "--judge")
    assert cli.exit_code == 2
    assert "--dry-run" in cli.stderr and "dryRun" not in cli.stderr
    with Ynm.open(project) as y, pytest.raises(YnmError) as caught:
        run_tool(y, "memory_consolidate", {"judge": True})
    assert str(caught.value) == (
        "invalid input: judge: judge only applies to a dry run; add dryRun")
    assert caught.value.exit_code == 2
    with Ynm.open(project) as y, pytest.raises(YnmError, match="invalid input: maxPairs"):
        run_tool(y, "memory_consolidate", {"maxPairs": 0})


def test_passes_repeat_and_take_comma_lists(project, cli_run):
    remember(cli_run, "--type", "semantic", "--content", "a fact")
    out = ok(cli_run("dream", "--dry-run", "--passes", "expire,normalise", "--passes", "dedupe"))
    assert out.splitlines() == ["expire: 0/0 would change", "retention: 0/0 would change",
                                "dedupe: 0/0 would change", "normalise: 0/0 would change"]


def test_dream_text_json_and_review_list_say_what_happened(project, cli_run):
    a = remember(cli_run, "--type", "semantic", "--content",
                 "Deploys go out on Tuesday through the release train")
    b = remember(cli_run, "--type", "semantic", "--content",
                 "Deploys go out on Tuesday through the release train, always")
    dry = ok(cli_run("dream", "--dry-run"))
    assert "dedupe: 1 candidate (not judged; add --judge)" in dry.splitlines()
    judged = ok(cli_run("dream", "--dry-run", "--judge"))
    assert ("dedupe: 0/1 would change, 2 memories would be flagged for review"
            in judged.splitlines())
    assert ok(cli_run("review", "list")) == "nothing to review\n"
    report = json.loads(ok(cli_run("dream", "--json")))
    assert report["full"]["judge"] == {"name": "heuristic", "calibrated": False}
    assert report["full"]["writer"] == "none"
    assert report["full"]["passes"]["dedupe"]["flagged"] == [a, b]
    listed = ok(cli_run("review", "list")).splitlines()
    whys = [line for line in listed if line.startswith("  why: ")]
    assert len(whys) == 2
    assert whys[0].startswith("  why: possible duplicate: sameFact 0.")
    assert whys[0].endswith(f"; pair with {a}") or whys[0].endswith(f"; pair with {b}")
    data = json.loads(ok(cli_run("review", "list", "--json")))
    assert {m["memoryId"] for m in data} == {a, b}
    for m in data:
        assert m["review"]["reason"] == "possible duplicate"
        assert m["review"]["data"]["pair"] == [a, b]
        assert "sameFact" in m["review"]["data"]["judgments"][0]["answers"]
    ok(cli_run("review", "clear", a))
    assert [m["memoryId"] for m in json.loads(ok(cli_run("review", "list", "--json")))] == [b]
    # the next run has nothing new: expiry only
    quiet = ok(cli_run("dream"))
    assert quiet.splitlines() == ["expire: 0/0 changed", "retention: 0/0 changed",
                                  "nothing new since the last run; only expiry ran"]


def test_the_text_counts_what_each_pass_flags_as_the_json_lists_it(project, cli_run):
    """A dry run with --judge says per pass how many memories it would flag (dedupe's pair,
    contradict's pair it would link, promote's working memory), the real run how many it
    flagged: the same memories the JSON's ``full.passes.<pass>.flagged`` holds."""
    for content in ("Deploys go out on Tuesday through the release train",
                    "Deploys go out on Tuesday through the release train, always"):
        remember(cli_run, "--type", "semantic", "--content", content)
    for content in ("The main database is postgres version sixteen",
                    "The main database is not postgres version sixteen"):
        remember(cli_run, "--type", "semantic", "--subject", "db", "--content", content)
    remember(cli_run, "--type", "working", "--session", "s1", "--content",
             "Decision: we always pin the postgres major version in the compose file")
    dry = json.loads(ok(cli_run("dream", "--dry-run", "--judge", "--json")))
    flagged = {name: len(set(p["flagged"])) for name, p in dry["full"]["passes"].items()}
    assert flagged["dedupe"] >= 2 and flagged["contradict"] == 2
    text = ok(cli_run("dream", "--dry-run", "--judge")).splitlines()
    for line in text:
        name = line.split(":")[0]
        n = flagged.get(name, 0)
        if n:
            noun = "memory" if n == 1 else "memories"
            assert line.endswith(f", {n} {noun} would be flagged for review"), line
        else:
            assert "flagged" not in line, line
    assert "contradict: 0/1 would change, 2 memories would be flagged for review" in text
    assert "promote: 0/1 would change, 1 memory would be flagged for review" in text
    assert ok(cli_run("review", "list")) == "nothing to review\n"
    real = ok(cli_run("dream")).splitlines()
    assert "contradict: 0/1 changed, 2 memories flagged for review" in real
    candidates = dry["passes"]["dedupe"]["candidates"]
    assert [line for line in real if line.startswith("dedupe: ")] == [
        f"dedupe: 0/{candidates} changed, {flagged['dedupe']} memories flagged for review"]


@pytest.mark.parametrize("dry_run, expected", [
    (True, ["dedupe: 0/3 would change, 3 memories would be flagged for review",
            "contradict: 1/2 would change, 1 memory would be flagged for review",
            "reflect: 0/1 would change"]),
    (False, ["dedupe: 0/3 changed, 3 memories flagged for review",
             "contradict: 1/2 changed, 1 memory flagged for review",
             "reflect: 0/1 changed",
             "next: see them with `ynm review list`, decide, then `ynm review clear <id>`"]),
])
def test_format_report_counts_each_flagged_memory_once(dry_run, expected):
    from ynm.dream.report import format_report

    full = {"dryRun": dry_run, "judged": True, "fresh": 3, "passes": {
        "dedupe": {"candidates": 3, "changed": [], "flagged": ["a", "b", "a", "c"]},
        "contradict": {"candidates": 2, "changed": ["d"], "flagged": ["e"]},
        "reflect": {"candidates": 1, "changed": [], "flagged": []}}}
    report = {"dryRun": dry_run, "full": full, "passes": {
        name: {"candidates": p["candidates"], "changed": p["changed"]}
        for name, p in full["passes"].items()}}
    assert format_report(report).splitlines() == expected


def test_session_end_runs_expire_with_retention_on_the_session_only(project, cli_run):
    with Ynm.open(project) as y:
        seen = []
        real = y.consolidate

        def spy(*args, **kw):
            seen.append((args, kw))
            return real(*args, **kw)

        y.consolidate = spy
        out = y.session_end("Task One")
    assert seen == [((["expire"], "session/task-one"), {})]
    assert out == {"sessionId": "Task One", "expired": []}
