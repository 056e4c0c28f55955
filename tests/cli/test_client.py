"""``ynm client`` and ``ynm init``'s client step through the CLI (reference/cli.md §4.2, §4.10)."""

from __future__ import annotations

import json
import os
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


def test_token_needs_http(git_repo, home, cli_run):
    r = cli_run("client", "install", "opencode", "--token", "t", "-C", git_repo)
    assert r.exit_code == 2 and "--token needs --http" in r.stderr
    assert not (git_repo / "opencode.json").exists()


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


def _files(*roots: Path) -> dict[str, bytes]:
    return {str(f): f.read_bytes() for r in roots for f in sorted(r.rglob("*")) if f.is_file()}


@pytest.mark.parametrize("args", [("client", "install", "claude-code"),
                                  ("client", "plan", "claude-code"),
                                  ("client", "install"),
                                  ("init", "--client", "claude-code"),
                                  ("init",)])
def test_invalid_json_is_exit_2_naming_the_file_and_nothing_changes(git_repo, home, cli_run,
                                                                     args):
    (git_repo / "opencode.json").write_text("{}\n")  # another client, valid: not written either
    (git_repo / ".mcp.json").write_text('{"mcpServers": ')
    before = _files(git_repo, home)
    r = cli_run(*args, "-C", git_repo)
    assert r.exit_code == 2
    assert r.stderr == (f"Error: invalid input: {git_repo / '.mcp.json'}: not valid JSON "
                        "(unexpected end of text); fix it and run again\n")
    assert _files(git_repo, home) == before  # no .ynm/config.json, no hook, no exclude line


def test_status_reports_invalid_json(git_repo, home, cli_run):
    (git_repo / ".mcp.json").write_text('{"mcpServers": ')
    [report] = [r for r in json.loads(cli_run("client", "status", "--json", "-C", git_repo).stdout)
                if r["client"] == "claude-code"]
    assert report["level"] == "error"
    assert report["problem"] == (f"{git_repo / '.mcp.json'}: not valid JSON (unexpected end of "
                                 "text)")


def test_http_then_init_keeps_one_hosted_entry_and_no_token_is_printed(git_repo, home, cli_run):
    token = "tok-9f8e7d"
    args = ("--http", "https://mem.example.com/mcp", "--token", token, "-C", git_repo)
    for action in ("plan", "install"):
        for extra in ((), ("--json",)):
            r = cli_run("client", action, "claude-code", *args, *extra)
            assert r.exit_code == 0 and token not in r.stdout + r.stderr
    entry = {"type": "http", "url": "https://mem.example.com/mcp",
             "headers": {"Authorization": "Bearer ${YNM_MCP_TOKEN}"}}
    assert json.loads((git_repo / ".mcp.json").read_text())["mcpServers"]["ynm"] == entry
    out = json.loads(cli_run("init", "--client", "claude-code", "--json", "-C", git_repo).stdout)
    assert json.loads((git_repo / ".mcp.json").read_text())["mcpServers"]["ynm"] == entry
    assert any(n.startswith(f"kept the hosted ynm server in {git_repo / '.mcp.json'}")
               for n in out["notes"])
    text = cli_run("client", "status", "-C", git_repo).stdout
    assert text.startswith("ok   claude-code: server yes")
    # asked for explicitly, the local transport replaces the hosted entry whole
    done = json.loads(cli_run("client", "install", "claude-code", "--json", "-C",
                              git_repo).stdout)["done"]
    assert done[0].endswith("replaces the hosted entry whole")
    local = json.loads((git_repo / ".mcp.json").read_text())["mcpServers"]["ynm"]
    assert set(local) == {"command", "args"}


def test_a_users_own_entry_needs_force(git_repo, home, cli_run):
    (git_repo / ".mcp.json").write_text('{"mcpServers": {"ynm": {"command": "/opt/mem/bin/srv"}}}')
    r = cli_run("client", "install", "claude-code", "-C", git_repo)
    assert r.exit_code == 2
    assert r.stderr == (f"Error: {git_repo / '.mcp.json'}: \"mcpServers.ynm\" runs "
                        "`/opt/mem/bin/srv`, not `ynm serve`; ynm does not overwrite what it did "
                        "not write: fix it by hand, or run `ynm client install claude-code "
                        "--force` to replace it\n")
    assert not (git_repo / "CLAUDE.md").exists()
    r = cli_run("client", "install", "claude-code", "--force", "-C", git_repo)
    assert r.exit_code == 0 and "--force replaces what was not ynm's" in r.stdout
    assert "srv" not in (git_repo / ".mcp.json").read_text()


def test_a_half_written_block_is_refused_by_line(git_repo, home, cli_run):
    (git_repo / ".claude").mkdir()
    (git_repo / "CLAUDE.md").write_text("# Rules\n\n<!-- ynm:begin -->\nmine\n")
    r = cli_run("client", "install", "-C", git_repo)
    assert r.exit_code == 2
    assert r.stderr == (f"Error: invalid input: {git_repo / 'CLAUDE.md'}:3: <!-- ynm:begin --> "
                        "has no <!-- ynm:end --> after it (ynm's memory guidance block is "
                        "half-written); fix or remove ynm's markers and run again\n")
    assert not (git_repo / ".mcp.json").exists()


def test_outside_a_git_repository_install_says_nothing_was_excluded(tmp_path, home, cli_run):
    folder = tmp_path / "plain"
    folder.mkdir()
    r = cli_run("client", "install", "claude-code", "-C", folder)
    assert r.exit_code == 0
    assert r.stdout.splitlines()[-1] == (
        f"note: {folder} is not in a git repository, so nothing was excluded from git; "
        ".claude/settings.local.json is yours only: keep it out of any repository you make here")
    assert "excluded .claude" not in r.stdout


def test_below_the_top_of_a_work_tree_the_exclude_line_is_anchored(git_repo, home, cli_run):
    import pygit2

    sub = git_repo / "svc" / "api"
    sub.mkdir(parents=True)
    r = cli_run("client", "install", "claude-code", "-C", sub)
    assert r.exit_code == 0
    assert f"excluded .claude/settings.local.json from git ({git_repo / '.git' / 'info' / 'exclude'})" \
        in r.stdout
    assert "/svc/api/.claude/settings.local.json" in (git_repo / ".git" / "info" / "exclude").read_text()
    repo = pygit2.Repository(str(git_repo))
    assert repo.path_is_ignored("svc/api/.claude/settings.local.json")
    assert not repo.path_is_ignored(".claude/settings.local.json.other")


def test_install_off_path_warns_before_the_shared_file_is_committed(git_repo, home, cli_run,
                                                                     monkeypatch):
    """With ynm not on PATH the project's .mcp.json names this machine's ynm; install says so
    on stderr, and says nothing once the plan has nothing to write."""
    monkeypatch.setenv("PATH", os.pathsep.join(["/usr/local/bin", "/usr/bin", "/bin"]))
    script = str(Path(sys.executable).parent / "ynm")
    r = cli_run("client", "install", "claude-code", "-C", git_repo)
    assert r.exit_code == 0, r.stderr
    mcp = json.loads((git_repo / ".mcp.json").read_text())
    assert mcp["mcpServers"]["ynm"]["command"] == script
    assert f"note: ynm is not on PATH: hooks and agent clients call {script}" in r.stderr
    assert r.stderr.rstrip().endswith("and do not commit .mcp.json until it does")
    assert cli_run("client", "install", "claude-code", "-C", git_repo).stderr == ""
    user = cli_run("client", "install", "opencode", "--scope", "user", "-C", git_repo)
    assert user.exit_code == 0 and user.stderr == ""
