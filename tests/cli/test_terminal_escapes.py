"""Stored text never drives the reader's terminal: human output writes control characters out
(ESC as ``\\x1b``), JSON stays exact, and writes refuse NUL, ESC and other control characters."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import make_record, ulid

ESC_CONTENT = "deploy x \x1b]0;pwned\x07 \x1b[2J y\nsecond\tline \x9b31m"
ESC_SUMMARY = "deploy x \x1b]0;pwned\x07 \x1b[2J y"
SHOWN_SUMMARY = "deploy x \\x1b]0;pwned\\x07 \\x1b[2J y"


@pytest.fixture
def escaped(project: Path, load) -> str:
    """A memory written by another tool whose text holds terminal escapes: its memory id."""
    rid = ulid()
    load(make_record(id=rid, content=ESC_CONTENT, summary=ESC_SUMMARY,
                     tags=["t\x1b[31m"], subject="s\x07u\nbj",
                     provenance={"actor": "user:\x1b[2Jmallory"}))
    return rid


def _no_controls(out: str) -> None:
    # tab and newline are the only control characters a human output may hold
    assert not [c for c in out if (ord(c) < 32 and c not in "\t\n") or 0x7f <= ord(c) <= 0x9f]


@pytest.mark.parametrize("args", [("list",), ("recall", "deploy"), ("show", "{id}"),
                                  ("history", "{id}"), ("review", "list"), ("status",),
                                  ("people", "list")])
def test_human_output_writes_escapes_out(escaped: str, cli_run, args) -> None:
    result = cli_run(*(a.format(id=escaped) for a in args))
    assert result.exit_code == 0, result.stderr
    _no_controls(result.stdout)
    _no_controls(result.stderr)


def test_list_recall_and_show_show_the_escape_visibly(escaped: str, cli_run) -> None:
    for args in (("list",), ("recall", "deploy")):
        out = cli_run(*args).stdout
        assert SHOWN_SUMMARY in out
    show = cli_run("show", escaped).stdout
    # the body keeps its line break and tab, every other control character is written out
    assert "deploy x \\x1b]0;pwned\\x07 \\x1b[2J y\nsecond\tline \\x9b31m" in show
    assert "t\\x1b[31m" in show
    assert "subject     s\\x07u\\nbj\n" in show
    assert "\\x1b[2Jmallory" in cli_run("history", escaped).stdout


def test_json_output_stays_exact(escaped: str, run_json) -> None:
    shown = run_json("show", escaped)
    assert shown["current"]["content"] == ESC_CONTENT
    assert shown["summary"] == ESC_SUMMARY
    assert run_json("recall", "deploy")[0]["summary"] == ESC_SUMMARY
    assert run_json("list")[0]["summary"] == ESC_SUMMARY


@pytest.mark.parametrize("content", ["a\x00b", "x \x1b]0;pwned\x07 y", "bell\x07", "c1\x9b"])
def test_remember_refuses_control_characters(project: Path, cli_run, run_json,
                                             content: str) -> None:
    result = cli_run("remember", "--type", "semantic", "--level", "distributed", "--content", "-",
                     input=content.encode("utf-8"))
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: invalid input: content: must not hold control")
    assert "\n" not in result.stderr.rstrip("\n")
    _no_controls(result.stderr)
    assert run_json("list") == [] or run_json("list").get("memories", []) == []


def test_remember_keeps_tab_and_line_breaks(project: Path, cli_run, run_json) -> None:
    result = cli_run("remember", "--type", "semantic", "--content", "-", "--json", input=b"a\tb\r\nc\nd")
    assert result.exit_code == 0, result.stderr
    mid = json.loads(result.stdout)["memoryId"]
    assert run_json("show", mid)["current"]["content"] == "a\tb\r\nc\nd"


@pytest.mark.parametrize("args", [("--tags", "a\x1bb"), ("--summary", "s\x00"),
                                  ("--subject", "x\ny")])
def test_remember_refuses_control_characters_in_one_line_fields(project: Path, cli_run,
                                                                args) -> None:
    result = cli_run("remember", "--type", "semantic", "--content", "fine", *args)
    assert result.exit_code == 2, result.stdout
    assert "must not hold control characters" in result.stderr


def test_hook_context_block_writes_escapes_out(escaped: str, cli_run, project: Path) -> None:
    payload = json.dumps({"session_id": "s1", "cwd": str(project)})
    result = cli_run("hook", "session-start", input=payload)
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    text = json.dumps(out, ensure_ascii=False)
    assert "\\\\x1b]0;pwned" in text  # the summary is in the block, written out
    assert "\\u001b" not in text and "\x1b" not in result.stdout


def test_a_nickname_with_an_escape_is_refused(project: Path, cli_run) -> None:
    result = cli_run("people", "nickname", "p" + "a" * 16, "--nickname", "ana\x1b[2J")
    assert result.exit_code == 2, result.stderr
    assert result.stderr == ("Error: invalid input: nickname: must not hold control characters "
                             "(found \\x1b at character 4)\n")
