"""``ynm validate [dir]`` (reference/cli.md §4.28): the clients a directory uses, each line of
their setup, the JSON shape and the exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ynm.integrations.common import BEGIN, END


@pytest.fixture(autouse=True)
def home(user_home: Path) -> Path:
    """Every test here runs with a user home of its own (``user_home``)."""
    return user_home


@pytest.fixture
def claude_project(git_repo: Path, cli_run) -> Path:
    """A repository with a complete Claude Code setup (server, guidance, hooks)."""
    (git_repo / ".claude").mkdir()
    assert cli_run("client", "install", "claude-code", "--yes", "-C", git_repo).exit_code == 0
    return git_repo


def test_nothing_to_validate_is_exit_1(tmp_path, cli_run):
    folder = tmp_path / "empty"
    folder.mkdir()
    r = cli_run("validate", folder, input="claude-code\n")  # stdin never fills DIR
    assert r.exit_code == 1 and r.stdout == ""
    assert r.stderr == (f"Error: nothing to validate in {folder}: no ynh harness and no agent "
                        "client configured here\n")


def test_a_complete_claude_code_setup_is_valid(claude_project, cli_run, monkeypatch):
    r = cli_run("validate", claude_project)
    assert r.exit_code == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "claude-code: valid"
    entry = json.loads((claude_project / ".mcp.json").read_text())["mcpServers"]["ynm"]
    runs = " ".join([entry["command"], *entry["args"]])
    assert lines[1] == f"  ok    server    {claude_project / '.mcp.json'} runs `{runs}`"
    assert lines[2] == f"  ok    guidance  {claude_project / 'CLAUDE.md'}"
    assert lines[3] == (f"  ok    hooks     SessionStart, UserPromptSubmit, Stop in "
                        f"{claude_project / '.claude' / 'settings.local.json'}")
    assert len(lines) == 4
    # the directory defaults to --cwd, then the current directory
    assert cli_run("validate", "-C", claude_project).stdout == r.stdout
    monkeypatch.chdir(claude_project)
    assert cli_run("validate").stdout == r.stdout


def test_the_json_shape(claude_project, cli_run):
    r = cli_run("validate", claude_project, "--json")
    assert r.exit_code == 0
    out = json.loads(r.stdout)
    assert list(out) == ["ok", "clients"] and out["ok"] is True
    assert [list(c) for c in out["clients"]] == [["client", "ok", "lines"]]
    client = out["clients"][0]
    assert client["client"] == "claude-code" and client["ok"] is True
    assert [line["what"] for line in client["lines"]] == ["server", "guidance", "hooks"]
    assert all(list(line) == ["ok", "what", "detail"] and line["ok"] for line in client["lines"])


def test_without_the_guidance_block_problems_are_found(claude_project, cli_run, tmp_path,
                                                       monkeypatch):
    guide = claude_project / "CLAUDE.md"
    text = guide.read_text()
    guide.write_text(text[:text.index(BEGIN)] + text[text.index(END) + len(END):])
    monkeypatch.chdir(tmp_path)
    r = cli_run("validate", claude_project)
    assert r.exit_code == 1
    lines = r.stdout.splitlines()
    assert lines[0] == "claude-code: problems found"
    assert lines[2] == (f"  FAIL  guidance  missing  fix: ynm -C {claude_project} client "
                        "install claude-code")
    assert lines[1].startswith("  ok    server    ") and lines[3].startswith("  ok    hooks     ")
    out = json.loads(cli_run("validate", claude_project, "--json").stdout)
    assert out["ok"] is False and out["clients"][0]["ok"] is False
    assert out["clients"][0]["lines"][1] == {
        "ok": False, "what": "guidance", "detail": "missing",
        "fix": f"ynm -C {claude_project} client install claude-code"}
    # the fix puts it back
    assert cli_run("client", "install", "claude-code", "-C", claude_project).exit_code == 0
    assert cli_run("validate", claude_project).exit_code == 0


def test_a_project_with_a_client_but_no_ynm_fails_every_line(git_repo, cli_run):
    (git_repo / ".claude").mkdir()
    r = cli_run("validate", "-C", git_repo)
    assert r.exit_code == 1
    assert r.stdout.splitlines() == [
        "claude-code: problems found",
        "  FAIL  server    missing  fix: ynm client install claude-code",
        "  FAIL  guidance  missing  fix: ynm client install claude-code",
        "  FAIL  hooks     missing  fix: ynm client install claude-code",
    ]


def test_a_ynh_harness_is_validated_alone(git_repo, cli_run):
    (git_repo / ".claude").mkdir()  # a client of the project, not of the harness
    manifest = git_repo / ".agents" / "harness" / "plugin.json"
    manifest.parent.mkdir(parents=True)
    manifest.write_text("{}\n")
    out = json.loads(cli_run("validate", git_repo, "--json").stdout)
    assert [c["client"] for c in out["clients"]] == ["ynh"] and out["ok"] is False
    assert [(line["what"], line["ok"]) for line in out["clients"][0]["lines"]] == [
        ("manifest", True), ("server", False), ("guidance", False), ("hooks", False)]
    assert cli_run("client", "install", "ynh", "-C", git_repo).exit_code == 0
    r = cli_run("validate", git_repo)
    assert r.exit_code == 0, r.stdout
    assert r.stdout.splitlines()[0] == "ynh: valid"
