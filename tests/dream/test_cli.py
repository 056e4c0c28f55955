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
    assert "dedupe: 1 candidates (not judged; add --judge)" in dry.splitlines()
    judged = ok(cli_run("dream", "--dry-run", "--judge"))
    assert "dedupe: 0/1 would change" in judged.splitlines()
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
