"""One status per client behind ``ynm client status``, ``ynm doctor`` and ``ynm validate``: an
unreadable config file, a malformed guidance block in any instruction file the client reads and
an unusable server entry are problems in all three, and the fix each prints works in that state
(reference/cli.md §4.2, §4.4 item 7, §4.28)."""

from __future__ import annotations

import json
import stat
from pathlib import Path

import pytest

from ynm.integrations.common import BEGIN, END


@pytest.fixture(autouse=True)
def home(user_home: Path) -> Path:
    """Every test here runs with a user home of its own (``user_home``)."""
    return user_home


def _status(cli_run, repo: Path, name: str) -> tuple[int, dict, str]:
    r = cli_run("client", "status", "--json", "-C", repo)
    [report] = [x for x in json.loads(r.stdout) if x["client"] == name]
    line = next(x for x in cli_run("client", "status", "-C", repo).stdout.splitlines()
                if f" {name}: " in x)
    return r.exit_code, report, line


def _doctor(cli_run, repo: Path, name: str) -> tuple[int, dict]:
    r = cli_run("doctor", "--json", "-C", repo)
    return r.exit_code, next(c for c in json.loads(r.stdout)["checks"]
                             if c["name"] == f"client {name}")


# client, the file, where it is (project or home), whether `ynm validate` sees the client
JSON_FILES = [("claude-code", ".mcp.json", "project", True),
              ("claude-code", ".claude.json", "home", True),
              ("claude-code", ".claude/settings.local.json", "project", True),
              ("copilot-cli", ".copilot/mcp-config.json", "home", False),
              ("opencode", "opencode.json", "project", True),
              ("opencode", ".config/opencode/opencode.json", "home", True),
              ("ynh", ".agents/harness/plugin.json", "project", True)]


@pytest.mark.parametrize(("name", "rel", "base", "validated"), JSON_FILES)
def test_a_config_file_that_is_not_json_is_an_error_everywhere_and_its_fix_works(
        git_repo, home, cli_run, name, rel, base, validated):
    if name == "opencode":
        (git_repo / "opencode.json").write_text("{}\n")
    if name == "ynh":
        (git_repo / ".agents" / "harness").mkdir(parents=True)
        (git_repo / ".agents" / "harness" / "plugin.json").write_text('{"name": "h"}\n')
    if name == "claude-code":
        (git_repo / ".claude").mkdir()
    assert cli_run("client", "install", name, "-C", git_repo).exit_code == 0
    path = (git_repo if base == "project" else home) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"mcpServers": {"ynm": ')
    why = f"{path}: not valid JSON (unexpected end of text)"
    fix = f"fix the JSON in {path}"

    code, report, line = _status(cli_run, git_repo, name)
    assert code == 1
    assert report["level"] == "error" and report["problem"] == why
    assert line == f"err  {name}: {why}; fix: {fix}"
    code, check = _doctor(cli_run, git_repo, name)
    assert code == 1
    assert check == {"name": f"client {name}", "ok": False, "level": "error",
                     "detail": f"{why}; fix: {fix}", "fix": fix}
    if validated:
        r = cli_run("validate", git_repo, "--json")
        assert r.exit_code == 1
        [client] = [c for c in json.loads(r.stdout)["clients"] if c["client"] == name]
        assert {"ok": False, "what": report["problems"][0]["what"], "detail": why,
                "fix": fix} in client["lines"]

    path.write_text("{}\n")  # the fix, done by hand
    assert cli_run("client", "install", name, "-C", git_repo).exit_code == 0
    code, report, _ = _status(cli_run, git_repo, name)
    assert code == 0 and report["problems"] == [] and report["level"] in ("ok", "off")
    if validated and base == "project":
        assert cli_run("validate", git_repo).exit_code == 0


GUIDES = [("claude-code", "CLAUDE.md", "project"), ("claude-code", ".claude/CLAUDE.md", "project"),
          ("claude-code", "AGENTS.md", "project"), ("claude-code", ".claude/CLAUDE.md", "home"),
          ("copilot-cli", "AGENTS.md", "project"),
          ("copilot-cli", ".copilot/copilot-instructions.md", "home"),
          ("opencode", "AGENTS.md", "project"), ("opencode", ".config/opencode/AGENTS.md", "home"),
          ("pi", "AGENTS.md", "project"), ("pi", ".pi/agent/AGENTS.md", "home")]


@pytest.mark.parametrize(("name", "rel", "base"), GUIDES)
def test_a_half_guidance_block_in_any_file_the_client_reads_is_a_problem(
        git_repo, home, cli_run, name, rel, base):
    if name == "claude-code":
        (git_repo / ".claude").mkdir()
    if name == "opencode":
        (git_repo / "opencode.json").write_text("{}\n")
    if name == "copilot-cli":
        (home / ".copilot").mkdir()
    if name == "pi":
        (git_repo / ".pi").mkdir()
    assert cli_run("client", "install", name, "-C", git_repo).exit_code == 0
    path = (git_repo if base == "project" else home) / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    good = path.exists() and BEGIN in path.read_text()
    path.write_text("# Mine\n" + (f"{BEGIN}\nx\n{END}\n" if good else "") + f"{BEGIN}\nhalf\n")
    line_no = 5 if good else 2
    why = (f"{path}:{line_no}: " + ("a second ynm block" if good else f"{BEGIN} has no {END} "
           "after it") + " (ynm's memory guidance block is half-written)")
    fix = f"remove or complete ynm's markers in {path}, then run `ynm client install {name}`"

    code, report, line = _status(cli_run, git_repo, name)
    assert code == 0  # a warning: the server still works
    assert report["level"] == "warn" and report["problems"] == [
        {"what": "guidance", "level": "warn", "detail": why, "fix": fix}]
    assert line == f"warn {name}: {why}; fix: {fix}"
    code, check = _doctor(cli_run, git_repo, name)
    assert code == 0
    assert check == {"name": f"client {name}", "ok": False, "level": "warn",
                     "detail": f"{why}; fix: {fix}", "fix": fix}
    if name != "copilot-cli":
        r = cli_run("validate", git_repo)
        assert r.exit_code == 1
        assert f"  FAIL  guidance  {why}  fix: {fix}" in r.stdout.splitlines()
    # an install does not mend it: it refuses the file it writes, and never touches another
    before = path.read_bytes()
    assert cli_run("client", "install", name, "-C", git_repo).exit_code in (0, 2)
    assert path.read_bytes() == before and _status(cli_run, git_repo, name)[1]["problems"]
    path.write_text("# Mine\n")  # the fix: the markers removed
    assert cli_run("client", "install", name, "-C", git_repo).exit_code == 0
    code, report, _ = _status(cli_run, git_repo, name)
    assert report["problems"] == [] and report["level"] == "ok"
    if name != "copilot-cli":
        assert cli_run("validate", git_repo).exit_code == 0


@pytest.mark.parametrize(("entry", "fix_args"), [
    ({"command": "ynm", "args": ["serve"], "url": "https://m/mcp"}, ()),
    ({"args": ["serve"]}, ()),
    ({"command": "/opt/other/srv"}, ("--force",)),
    ("ynm serve", ("--force",))])
def test_an_unusable_server_entry_names_the_install_that_replaces_it(git_repo, cli_run, entry,
                                                                      fix_args):
    (git_repo / ".claude").mkdir()
    assert cli_run("client", "install", "claude-code", "-C", git_repo).exit_code == 0
    (git_repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"ynm": entry}}))
    fix = " ".join(("ynm", "client", "install", "claude-code", *fix_args))
    code, report, _ = _status(cli_run, git_repo, "claude-code")
    assert code == 1 and report["level"] == "error"
    assert report["problems"][0]["fix"] == fix
    assert report["problem"].startswith(f'{git_repo / ".mcp.json"}: "mcpServers.ynm" ')
    r = cli_run("validate", "-C", git_repo, "--json")
    assert r.exit_code == 1
    failing = [line for line in json.loads(r.stdout)["clients"][0]["lines"] if not line["ok"]]
    assert failing == [{"ok": False, "what": "server", "detail": report["problem"], "fix": fix}]
    assert _doctor(cli_run, git_repo, "claude-code")[1]["fix"] == fix
    assert cli_run("client", "install", "claude-code", *fix_args, "-C", git_repo).exit_code == 0
    assert cli_run("validate", git_repo).exit_code == 0


def test_user_scope_http_writes_the_token_into_claude_json_only(git_repo, home, cli_run):
    token = "tok-5a4b3c"
    config = home / ".claude.json"
    text = '{\n  "numStartups": 7,\n  "projects": {"/x": {"allowedTools": []}}\n}\n'
    config.write_text(text)
    config.chmod(0o600)
    args = ("client", "install", "claude-code", "--scope", "user", "--http", "https://m/mcp",
            "--token", token, "-C", git_repo)
    plan = cli_run("client", "plan", *args[2:], "--json")
    assert plan.exit_code == 0 and token not in plan.stdout + plan.stderr
    assert config.read_text() == text
    r = cli_run(*args)
    assert r.exit_code == 0 and token not in r.stdout + r.stderr
    assert r.stdout.splitlines()[0].startswith(f"merged {config}: register the ynm MCP server")
    assert "claude mcp add" not in r.stdout
    data = json.loads(config.read_text())
    assert data == {"numStartups": 7, "projects": {"/x": {"allowedTools": []}},
                    "mcpServers": {"ynm": {"type": "http", "url": "https://m/mcp", "headers": {
                        "Authorization": f"Bearer {token}"}}}}
    assert config.read_text().startswith('{\n  "numStartups": 7,\n  "projects"')
    assert stat.S_IMODE(config.stat().st_mode) == 0o600
    _, report, line = _status(cli_run, git_repo, "claude-code")
    assert report["configured"] and token not in line
    assert json.loads(cli_run(*args, "--json").stdout)["done"] == []  # a second time: nothing


def test_user_scope_creates_claude_json_owner_only(git_repo, home, cli_run):
    r = cli_run("client", "install", "claude-code", "--scope", "user", "-C", git_repo)
    assert r.exit_code == 0
    config = home / ".claude.json"
    entry = json.loads(config.read_text())["mcpServers"]["ynm"]
    assert set(entry) == {"command", "args"} and entry["args"][-1] == "serve"
    assert stat.S_IMODE(config.stat().st_mode) == 0o600


@pytest.mark.parametrize(("token", "after"), [(None, 0o644), ("tok-1", 0o600)])
def test_claude_json_keeps_its_mode_unless_a_token_needs_owner_only(git_repo, home, cli_run,
                                                                    token, after):
    config = home / ".claude.json"
    config.write_text('{"theme": "dark"}\n')
    config.chmod(0o644)
    http = ("--http", "https://m/mcp", "--token", token) if token else ()
    r = cli_run("client", "install", "claude-code", "--scope", "user", *http, "-C", git_repo)
    assert r.exit_code == 0, r.stderr
    assert stat.S_IMODE(config.stat().st_mode) == after
    assert json.loads(config.read_text())["theme"] == "dark"
