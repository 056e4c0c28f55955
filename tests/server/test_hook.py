"""``ynm hook session-start | prompt | stop`` on sample Claude Code payloads
(reference/server.md §4.3): one compact JSON line, exit 0, ``{}`` on anything odd."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.support.expired import import_expired_working
from ynm.cli.hook import SESSION_PREFIX_LINE
from ynm.server.intent import NUDGE, has_remember_intent


def hook(*args: str, stdin: str | bytes = "", cwd: Path | None = None) -> tuple[dict, str]:
    data = stdin.encode() if isinstance(stdin, str) else stdin
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "ynm", "hook", *args], input=data,
                          capture_output=True, env=dict(os.environ), cwd=cwd, timeout=10)
    assert time.monotonic() - start < 2.0  # a hook answers within 2 s (issue promise)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.decode().splitlines()
    assert len(lines) == 1, proc.stdout
    assert lines[0] == json.dumps(json.loads(lines[0]), separators=(",", ":"),
                                  ensure_ascii=False)
    return json.loads(lines[0]), proc.stderr.decode()


def payload(project: Path, event: str, **extra) -> str:
    return json.dumps({"session_id": "9f1c2d3e-ABCD", "transcript_path": "/tmp/t.jsonl",
                       "cwd": str(project), "hook_event_name": event, **extra})


SESSION_LINE = ("This session's working namespace is session/9f1c2d3e-abcd (ttl PT8H): write "
                "scratch notes there with memory_remember, type working, session 9f1c2d3e-abcd.")


def test_session_start_with_and_without_memory(project, cli_run):
    out, _ = hook("session-start", stdin=payload(project, "SessionStart", source="startup"))
    assert out == {"hookSpecificOutput": {
        "hookEventName": "SessionStart",
        "additionalContext": SESSION_PREFIX_LINE + "\n\n" + SESSION_LINE}}
    assert cli_run("remember", "--type", "semantic", "--content", "We ship on Fridays",
                   "--cwd", project).exit_code == 0
    out, _ = hook("session-start", stdin=payload(project, "SessionStart", source="resume"))
    ctx = out["hookSpecificOutput"]["additionalContext"]
    assert ctx.startswith(SESSION_PREFIX_LINE + "\n\n" + SESSION_LINE + "\n\n## Memory")
    assert "We ship on Fridays" in ctx


def test_session_start_keeps_the_session_for_working_writes(project, cli_run, ynm_home):
    # the agent is told its namespace, and a working write with the client's session id
    # lands there with the session's ttl; the stop hook's sweep keeps the settings
    hook("session-start", stdin=payload(project, "SessionStart", source="startup"))
    kept = json.loads((ynm_home / "sessions" / "9f1c2d3e-abcd.json").read_text())
    assert kept == {"sessionId": "9f1c2d3e-abcd", "namespace": "session/9f1c2d3e-abcd",
                    "ttl": "PT8H"}
    made = cli_run("remember", "--type", "working", "--session", "9f1c2d3e-ABCD", "--content",
                   "scratch", "--json", "--cwd", project)
    assert made.exit_code == 0, made.stderr
    (memory,) = json.loads(cli_run("list", "--json", "--cwd", project).stdout)
    assert memory["namespace"] == "session/9f1c2d3e-abcd" and memory["current"]["ttl"] == "PT8H"
    hook("stop", stdin=payload(project, "Stop"))
    assert (ynm_home / "sessions" / "9f1c2d3e-abcd.json").exists()


@pytest.mark.parametrize("prompt, nudged", [
    ("Remember that the staging DB is read-only", True),
    ("from now on, use pnpm", True),
    ("ok please don’t forget to run the linter", True),
    ("Call me Sam", True),
    ("fix the failing test in ledger.py", False),
    ("I never use that flag", False),
])
def test_prompt_nudges_on_remember_intent(project, prompt, nudged):
    out, _ = hook("prompt", stdin=payload(project, "UserPromptSubmit", prompt=prompt))
    if nudged:
        assert out == {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                              "additionalContext": NUDGE}}
    else:
        assert out == {}
    assert has_remember_intent(prompt) is nudged


def test_session_start_block_has_no_expired_or_other_sessions_working_memory(project, cli_run,
                                                                             tmp_path):
    def working(session, content, ttl):
        assert cli_run("remember", "--type", "working", "--namespace", f"session/{session}",
                       "--ttl", ttl, "--content", content, "--cwd", project).exit_code == 0

    working("9f1c2d3e-abcd", "own live scratch", "PT8H")
    import_expired_working(cli_run, tmp_path, "9f1c2d3e-abcd", "own expired scratch", "--cwd",
                           project)
    working("other-session", "other live scratch", "PT8H")
    out, _ = hook("session-start", stdin=payload(project, "SessionStart", source="startup"))
    context = out["hookSpecificOutput"]["additionalContext"]
    assert "- (working) own live scratch" in context
    assert "own expired scratch" not in context and "other live scratch" not in context


@pytest.mark.parametrize("session_id, namespace", [
    ("a..b", None), ("x.lock", None), ("..x", None), (".hidden", None), ("-lead", None),
    ("!!!", "refused"), ("...", "refused"),
])
def test_session_start_with_odd_session_ids_still_answers(project, cli_run, session_id,
                                                          namespace):
    assert cli_run("remember", "--type", "semantic", "--content", "a project fact",
                   "--cwd", project).exit_code == 0
    stdin = json.dumps({"session_id": session_id, "cwd": str(project)})
    out, err = hook("session-start", stdin=stdin)
    context = out["hookSpecificOutput"]["additionalContext"]
    assert context.startswith(SESSION_PREFIX_LINE) and "- (semantic) a project fact" in context
    if namespace == "refused":
        assert "the client's session id was refused" in context
        assert "has no letter or digit" in context and "working namespace is session/" in context
        assert "has no letter or digit" in err
    else:
        assert "refused" not in context and err == ""


def test_stop_with_a_session_id_of_no_letter_or_digit_says_why(project, ynm_home):
    out, err = hook("stop", stdin=json.dumps({"session_id": "!!!", "cwd": str(project)}))
    assert out == {}
    assert err == ("ynm hook: session id '!!!' has no letter or digit [a-z0-9] to name a "
                   "session namespace; use letters, digits, '.', '_' or '-'\n")
    assert not list((ynm_home / "hooks").glob("stop-*"))


def test_stop_expires_the_session_once_per_five_minutes(project, cli_run, ynm_home, tmp_path):
    import_expired_working(cli_run, tmp_path, "9f1c2d3e-abcd", "scratch", "--cwd", project)
    out, _ = hook("stop", stdin=payload(project, "Stop"))
    assert out == {}
    assert (ynm_home / "hooks" / "stop-9f1c2d3e-abcd").exists()
    listed = cli_run("list", "--json", "--include-tombstoned", "--cwd", project)
    (swept,) = json.loads(listed.stdout)  # the working memory was forgotten
    assert swept["tombstoned"] is True and swept["tombstoneReason"] == "expired"
    # throttled: a second stop within 5 minutes does nothing (and still answers {})
    import_expired_working(cli_run, tmp_path, "9f1c2d3e-abcd", "more", "--cwd", project)
    hook("stop", stdin=payload(project, "Stop"))
    listed = json.loads(cli_run("list", "--json", "--include-tombstoned", "--cwd",
                                project).stdout)
    unswept = [m for m in listed if m["current"]["content"] == "more"]
    assert unswept[0]["tombstoned"] is False and unswept[0]["expired"] is True
    # expired but not swept: reads leave it out all the same
    assert json.loads(cli_run("list", "--json", "--cwd", project).stdout) == []


@pytest.mark.parametrize("args, stdin", [
    (("prompt",), "not json"),
    (("prompt",), ""),
    (("prompt",), "[1, 2]"),
    (("prompt",), b"\xff\xfe garbage"),
    (("stop",), "{}"),
    (("bogus-event",), "{}"),
    ((), "{}"),
    (("prompt", "--what"), "{}"),
])
def test_garbage_gives_empty_object_and_exit_0(project, args, stdin):
    out, _ = hook(*args, stdin=stdin)
    assert out == {}


def test_session_start_reads_garbage_as_an_empty_payload(project):
    out, _ = hook("session-start", stdin=b"\xff\xfe garbage", cwd=project)
    context = out["hookSpecificOutput"]["additionalContext"]
    assert re.fullmatch(re.escape(SESSION_PREFIX_LINE) + r"\n\nThis session's working namespace "
                        r"is session/([0-9a-z]{26}) \(ttl PT8H\): write scratch notes there "
                        r"with memory_remember, type working, session \1\.", context)


def test_session_start_outside_a_repo_is_still_a_json_line(tmp_path):
    out, err = hook("session-start", stdin=json.dumps({"session_id": "x", "cwd": str(tmp_path)}),
                    cwd=tmp_path)
    assert isinstance(out, dict)
