"""``ynm client`` and ``ynm init``'s client step through the CLI (reference/cli.md §4.2, §4.10)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    h = tmp_path / "home"
    h.mkdir()
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("PATH", str(Path(sys.executable).parent))
    return h


def test_no_client_is_exit_2(git_repo, home, cli_run):
    r = cli_run("client", "install", "-C", git_repo)
    assert r.exit_code == 2
    assert r.stderr == (f"Error: no agent client is configured in {git_repo}; name one: ynm "
                        "client install <claude-code|copilot-cli|opencode|pi|ynh>\n")


def test_plan_install_status_claude_code(git_repo, home, cli_run):
    (git_repo / ".claude").mkdir()
    r = cli_run("client", "plan", "claude-code", "--json", "-C", git_repo)
    changes = json.loads(r.stdout)
    assert [c["kind"] for c in changes] == ["merge-json", "write", "merge-json"]
    assert changes[0]["path"] == str(git_repo / ".mcp.json")
    assert not (git_repo / ".mcp.json").exists()
    human = cli_run("client", "plan", "-C", git_repo).stdout.splitlines()
    assert human[0] == "claude-code:"
    assert human[1].startswith(f"merge-json {git_repo / '.mcp.json'}  (register the ynm MCP server")
    out = json.loads(cli_run("client", "install", "claude-code", "--json", "-C", git_repo).stdout)
    assert out["client"] == "claude-code" and len(out["done"]) == 4
    assert out["done"][0].startswith(f"merged {git_repo / '.mcp.json'}: ")
    assert out["done"][3] == (f"excluded .claude/settings.local.json from git "
                              f"({git_repo / '.git' / 'info' / 'exclude'})")
    assert ".claude/settings.local.json" in (git_repo / ".git" / "info" / "exclude").read_text()
    again = cli_run("client", "install", "claude-code", "--json", "-C", git_repo)
    assert json.loads(again.stdout) == {"client": "claude-code", "done": []}
    lines = cli_run("client", "install", "claude-code", "-C", git_repo).stdout.splitlines()
    assert lines[0] == "already in place, nothing changed:"
    assert lines[1].startswith("  server    ") and lines[3].startswith("  hooks     ")
    reports = json.loads(cli_run("client", "status", "--json", "-C", git_repo).stdout)
    assert [r["client"] for r in reports] == ["claude-code", "copilot-cli", "opencode", "pi", "ynh"]
    assert reports[0]["level"] == "ok" and reports[1]["level"] == "off"
    text = cli_run("client", "status", "-C", git_repo).stdout
    assert text.startswith("ok   claude-code: server yes, guidance yes, hooks yes")


def test_token_needs_http_and_commands_need_yes(git_repo, home, cli_run):
    r = cli_run("client", "install", "opencode", "--token", "t", "-C", git_repo)
    assert r.exit_code == 2 and "--token needs --http" in r.stderr
    r = cli_run("client", "install", "claude-code", "--scope", "user", "--http", "https://m/mcp",
                "-C", git_repo)
    assert r.exit_code == 0
    assert "run: claude mcp add --scope user --transport http ynm https://m/mcp" in r.stdout
    r = cli_run("client", "install", "claude-code", "--scope", "user", "--http", "https://m/mcp",
                "--yes", "-C", git_repo)
    assert r.exit_code == 1 and r.stderr.startswith("Error: cannot run claude")


def test_init_sets_up_the_clients_the_project_uses(git_repo, home, cli_run, monkeypatch):
    monkeypatch.chdir(git_repo)
    (git_repo / "opencode.json").write_text('{"theme": "dark"}\n')
    (home / ".copilot").mkdir()
    out = json.loads(cli_run("init", "--json").stdout)
    assert out["clients"] == [{"client": "opencode", "detected": "opencode.json",
                               "applied": ["opencode.json", "AGENTS.md"], "run": []}]
    assert out["also"] == ["copilot-cli"]
    assert "AGENTS.md" in out["commit"] and "opencode.json" in out["commit"]
    assert json.loads((git_repo / "opencode.json").read_text())["theme"] == "dark"
    text = cli_run("init").stdout
    assert "  client    opencode: unchanged" in text
    assert "  also      copilot-cli on this machine but not used here" in text
