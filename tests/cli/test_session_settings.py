"""A started session carries its settings: ``ynm session start <id> --ttl`` keeps the working
namespace and ttl in ``$YNM_HOME/sessions/<id>.json``; ``remember --type working --session
<id>`` writes to ``session/<id>`` with that ttl unless ``--ttl`` is given; ``session end``
removes the settings."""

from __future__ import annotations

import json

import pytest


def working(run_json, *args: str) -> dict:
    """Remember a working memory and return its folded state from ``list``."""
    made = run_json("remember", "--type", "working", "--content", f"scratch {args}", *args)
    (memory,) = [m for m in run_json("list", "--namespace", "session")
                 if m["memoryId"] == made["memoryId"]]
    return memory


def test_a_started_session_gives_its_working_writes_namespace_and_ttl(project, run_json,
                                                                     ynm_home):
    started = run_json("session", "start", "My Task", "--ttl", "PT1M")
    assert (started["sessionId"], started["namespace"], started["ttl"]) == (
        "my-task", "session/my-task", "PT1M")
    kept = ynm_home / "sessions" / "my-task.json"
    assert json.loads(kept.read_text()) == {"sessionId": "my-task",
                                            "namespace": "session/my-task", "ttl": "PT1M"}
    # the id as given (normalised the same way), or the namespace itself
    for args in (("--session", "My Task"), ("--session", "my-task"),
                 ("--namespace", "session/my-task")):
        memory = working(run_json, *args)
        assert memory["namespace"] == "session/my-task", args
        assert memory["current"]["ttl"] == "PT1M", args
    # --ttl still overrides
    assert working(run_json, "--session", "my-task", "--ttl", "PT2H")["current"]["ttl"] == "PT2H"
    # another session, never started: its own namespace, the default ttl
    other = working(run_json, "--session", "Other")
    assert (other["namespace"], other["current"]["ttl"]) == ("session/other", "PT8H")
    # ending removes the settings: later working memory gets the default ttl
    assert run_json("session", "end", "My Task")["sessionId"] == "My Task"
    assert not kept.exists()
    assert working(run_json, "--session", "my-task")["current"]["ttl"] == "PT8H"


def test_session_without_type_working_only_marks_provenance(project, run_json):
    run_json("session", "start", "t2", "--ttl", "PT1M")
    made = run_json("remember", "--type", "semantic", "--session", "t2", "--content", "a fact")
    (memory,) = run_json("list", "--type", "semantic")
    assert memory["memoryId"] == made["memoryId"]
    assert memory["namespace"] == "user/tester" and "ttl" not in memory["current"]


def test_restarting_a_session_replaces_its_ttl_and_a_damaged_file_is_ignored(
        project, run_json, ynm_home):
    run_json("session", "start", "t3", "--ttl", "PT1M")
    run_json("session", "start", "t3", "--ttl", "PT3H")
    assert working(run_json, "--session", "t3")["current"]["ttl"] == "PT3H"
    (ynm_home / "sessions" / "t3.json").write_text("not json")
    assert working(run_json, "--session", "t3")["current"]["ttl"] == "PT8H"
    # a kept ttl that session start would refuse (edited by hand, or kept by an older ynm
    # that took PT0S) is no ttl to give: working memory gets the default instead
    for ttl in ("PT0S", "8 hours"):
        (ynm_home / "sessions" / "t3.json").write_text(json.dumps(
            {"sessionId": "t3", "namespace": "session/t3", "ttl": ttl}))
        assert working(run_json, "--session", "t3")["current"]["ttl"] == "PT8H", ttl


@pytest.mark.parametrize(("args", "message"), [
    (("--session", "!!!"), "invalid input: session: session id '!!!' has no letter or digit"),
    (("--session", "..."), "invalid input: session: session id '...' has no letter or digit"),
    ((), "invalid input: namespace: working memory must live in session/<id>"),
    (("--namespace", "team/x", "--session", "t4"),
     "invalid input: namespace: working memory must live in session/<id>"),
])
def test_working_memory_without_a_usable_session_is_refused(project, cli_run, args, message):
    result = cli_run("remember", "--type", "working", "--content", "x", *args)
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(f"Error: {message}")


def test_session_start_without_an_id_keeps_a_new_one(project, run_json, ynm_home):
    started = run_json("session", "start", "--ttl", "PT5M")
    kept = json.loads((ynm_home / "sessions" / f"{started['sessionId']}.json").read_text())
    assert kept["namespace"] == started["namespace"] and kept["ttl"] == "PT5M"
    memory = working(run_json, "--session", started["sessionId"])
    assert memory["current"]["ttl"] == "PT5M"


def test_settings_that_cannot_be_kept_warn_and_the_session_still_starts(project, cli_run,
                                                                         ynm_home):
    (ynm_home / "sessions").parent.mkdir(parents=True, exist_ok=True)
    (ynm_home / "sessions").write_text("a file where the folder should be")
    result = cli_run("session", "start", "t5", "--ttl", "PT1M", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["namespace"] == "session/t5"
    assert "warning: the session's settings could not be kept" in result.stderr
    assert "default ttl PT8H" in result.stderr
