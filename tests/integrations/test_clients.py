"""Each client installed into a scratch project and home holding foreign settings."""

from __future__ import annotations

import json
from pathlib import Path

import json5
import pytest

from ynm.integrations import install, plan, status
from ynm.integrations.common import BEGIN, END, Target, guidance_block, with_guidance


@pytest.fixture
def where(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "p").mkdir()
    (tmp_path / "h").mkdir()
    return tmp_path / "p", tmp_path / "h"


def target(where, **kw) -> Target:
    return Target(where[0], where[1], env={"PATH": "/nonexistent"}, **kw)


def twice(t: Target, name: str) -> None:
    assert install(t, [name])[0].done
    again = plan(t, [name])[0]
    assert again.plan == [] and again.in_place


def test_claude_code(where):
    p, h = where
    (p / ".claude").mkdir()
    (p / ".mcp.json").write_text('{\n    "mcpServers": {"other": {"command": "x"}},\n    "foo": 1\n}\n')
    (p / ".claude" / "settings.local.json").write_text(json.dumps({
        "permissions": {"allow": ["Bash(ls)"]},
        "hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": "echo hi"}]}]}}))
    (p / "CLAUDE.md").write_text("# Rules\n")
    twice(target(where), "claude-code")
    mcp = json.loads((p / ".mcp.json").read_text())
    assert mcp["mcpServers"] == {"other": {"command": "x"}, "ynm": {"command": "ynm", "args": ["serve"]}}
    assert mcp["foo"] == 1
    s = json.loads((p / ".claude" / "settings.local.json").read_text())
    assert s["permissions"] == {"allow": ["Bash(ls)"]}
    cmds = [h["command"] for g in s["hooks"]["SessionStart"] for h in g["hooks"]]
    assert cmds == ["echo hi", "ynm hook session-start"]
    assert s["hooks"]["Stop"][0]["hooks"][0]["command"] == "ynm hook stop"
    assert (p / "CLAUDE.md").read_text().startswith("# Rules\n")
    st = status(p, h, "claude-code")[0]
    assert (st.server, st.guidance, st.hooks, st.level) == (True, True, True, "ok")


def test_claude_code_http_and_user_scope(where):
    p, h = where
    install(target(where, url="https://mem.example.com/mcp", token="tok"), ["claude-code"])
    assert json.loads((p / ".mcp.json").read_text())["mcpServers"]["ynm"] == {
        "type": "http", "url": "https://mem.example.com/mcp",
        "headers": {"Authorization": "Bearer ${YNM_MCP_TOKEN}"}}
    changes = plan(target(where, scope="user"), ["claude-code"])[0].plan
    assert [(c.kind, c.path) for c in changes] == [
        ("merge-json", h / ".claude.json"), ("write", h / ".claude" / "CLAUDE.md"),
        ("merge-json", h / ".claude" / "settings.json")]
    assert changes[0].patch == {"mcpServers": {"ynm": {"command": "ynm", "args": ["serve"]}}}


def test_copilot_cli(where):
    p, h = where
    (h / ".copilot").mkdir()
    (h / ".copilot" / "mcp-config.json").write_text(json.dumps(
        {"mcpServers": {"github": {"type": "http", "url": "https://x"}}, "theme": "dark"}))
    twice(target(where), "copilot-cli")
    cfg = json.loads((h / ".copilot" / "mcp-config.json").read_text())
    assert cfg["theme"] == "dark" and cfg["mcpServers"]["github"] == {"type": "http", "url": "https://x"}
    assert cfg["mcpServers"]["ynm"] == {"type": "local", "command": "ynm", "args": ["serve"], "tools": ["*"]}
    assert BEGIN in (p / "AGENTS.md").read_text()
    st = status(p, h, "copilot-cli")[0]
    assert (st.server, st.guidance, st.hooks) == (True, True, None)


JSONC = """{
  // team settings
  "theme": "tokyonight", /* dark */
  "mcp": {
    "github": {"type": "remote", "url": "https://x"}, // proxy
  },
}
"""


def test_opencode_jsonc_keeps_comments(where):
    p, h = where
    (p / "opencode.jsonc").write_text(JSONC)
    twice(target(where), "opencode")
    text = (p / "opencode.jsonc").read_text()
    value = json5.loads(text)
    assert value["theme"] == "tokyonight" and value["mcp"]["github"]["url"] == "https://x"
    assert value["mcp"]["ynm"] == {"type": "local", "command": ["ynm", "serve"], "enabled": True}
    assert "// team settings" in text and "/* dark */" in text and "// proxy" in text
    assert not (p / "opencode.json").exists()
    install(target(where, scope="user", url="https://m/mcp", token="t"), ["opencode"])
    user = json.loads((h / ".config" / "opencode" / "opencode.json").read_text())
    assert user["$schema"] == "https://opencode.ai/config.json"
    assert user["mcp"]["ynm"] == {"type": "remote", "url": "https://m/mcp", "enabled": True,
                                  "headers": {"Authorization": "Bearer t"}}


def test_pi(where):
    p, h = where
    (p / ".pi").mkdir()
    (p / ".pi" / "settings.json").write_text('{"theme": "x"}')
    twice(target(where), "pi")
    ext = (p / ".pi" / "extensions" / "ynm.ts").read_text()
    for tool in ("memory_recall", "memory_remember", "memory_supersede", "memory_context"):
        assert f'name: "{tool}"' in ext
    assert (p / ".pi" / "skills" / "ynm-memory" / "SKILL.md").read_text().startswith(
        "---\nname: ynm-memory\n")
    assert (p / ".pi" / "settings.json").read_text() == '{"theme": "x"}'
    assert status(p, h, "pi")[0].level == "ok"
    kinds = [c.kind for c in plan(target(where, url="https://m"), ["pi"])[0].plan]
    assert kinds == ["note"]


def test_ynh(where):
    p, h = where
    manifest = p / ".agents" / "harness" / "plugin.json"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(json.dumps({"name": "mine", "hooks": {"on_stop": [{"command": "echo bye"}]},
                                    "env_passthrough": ["GITHUB_TOKEN"]}, indent=2))
    twice(target(where), "ynh")
    m = json.loads(manifest.read_text())
    assert m["name"] == "mine"
    assert m["mcp_servers"]["ynm"] == {"command": "ynm", "args": ["serve"]}
    assert m["hooks"]["on_stop"] == [{"command": "echo bye"}, {"command": "ynm hook stop"}]
    assert m["env_passthrough"][:2] == ["GITHUB_TOKEN", "YNM_HOME"]
    st = status(p, h, "ynh")[0]
    assert (st.server, st.guidance, st.hooks) == (True, True, True)


def test_ynh_legacy_manifest_is_moved_and_no_harness_is_a_note(where, tmp_path):
    p, _ = where
    assert [c.kind for c in plan(target(where), ["ynh"])[0].plan] == ["note"]
    legacy = p / ".ynh-plugin" / "plugin.json"
    legacy.parent.mkdir()
    legacy.write_text('{"name": "old"}')
    install(target(where), ["ynh"])
    m = json.loads((p / ".agents" / "harness" / "plugin.json").read_text())
    assert m["name"] == "old" and "ynm" in m["mcp_servers"]


def test_status_reports_every_client(where):
    assert [s.client for s in status(*where)] == ["claude-code", "copilot-cli", "opencode", "pi", "ynh"]


@pytest.mark.parametrize("original", ["# T\n\nbody\n", "# T\n\nbody", "a\r\nb\r\n", "a\r\nb"])
def test_guidance_block_changes_no_byte_outside_it(original):
    first = with_guidance(original)
    assert first.startswith(original) and first.count(BEGIN) == 1
    nl = "\r\n" if "\r\n" in original else "\n"
    assert guidance_block(nl) in first
    if nl == "\r\n":
        assert "\n" not in first.replace("\r\n", "")
    # the user edits inside the block and adds text after it
    b, e = first.index(BEGIN), first.index(END) + len(END)
    edited = first[:b] + BEGIN + nl + "stale words" + nl + END + first[e:] + "tail" + nl
    again = with_guidance(edited)
    assert again == first[:b] + guidance_block(nl) + first[e:] + "tail" + nl
    assert with_guidance(again) == again
