"""What every client integration refuses or keeps: invalid JSON, values that are not ynm's,
mixed transports, tokens, malformed guidance markers and byte order marks, for each client."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ynm.errors import InvalidInput, Refused
from ynm.integrations import configure_for_init, install, plan, status
from ynm.integrations.common import BEGIN, END, Target, guidance_span, with_guidance

URL = "https://mem.example.com/mcp"
TOKEN = "s3cret-T0KEN"


@pytest.fixture
def where(tmp_path: Path) -> tuple[Path, Path]:
    (tmp_path / "p").mkdir()
    (tmp_path / "h").mkdir()
    return tmp_path / "p", tmp_path / "h"


def target(where, **kw) -> Target:
    return Target(where[0], where[1], env={"PATH": "/nonexistent"}, **kw)


def harness(p: Path) -> Path:
    manifest = p / ".agents" / "harness" / "plugin.json"
    manifest.parent.mkdir(parents=True, exist_ok=True)
    if not manifest.exists():
        manifest.write_text('{"name": "h"}\n')
    return manifest


# client -> (server file, key path of ynm's entry), as functions of (project, home)
SERVER = {
    "claude-code": (lambda p, h: p / ".mcp.json", ("mcpServers", "ynm")),
    "copilot-cli": (lambda p, h: h / ".copilot" / "mcp-config.json", ("mcpServers", "ynm")),
    "opencode": (lambda p, h: p / "opencode.json", ("mcp", "ynm")),
    "ynh": (lambda p, h: harness(p), ("mcp_servers", "ynm")),
}


def dig(value, keys):
    for k in keys:
        value = value[k]
    return value


def snapshot(*roots: Path) -> dict[str, bytes]:
    return {str(f): f.read_bytes() for r in roots for f in sorted(r.rglob("*")) if f.is_file()}


# 1. One transport per entry -------------------------------------------------------------------

@pytest.mark.parametrize("name", list(SERVER))
def test_switching_transport_replaces_the_entry_whole(where, name):
    p, h = where
    path, keys = SERVER[name][0](p, h), SERVER[name][1]
    install(target(where), [name])
    assert "command" in dig(json.loads(path.read_text()), keys)
    install(target(where, url=URL), [name])
    hosted = dig(json.loads(path.read_text()), keys)
    assert hosted["url"] == URL
    assert not {"command", "args"} & set(hosted)
    install(target(where), [name])
    local = dig(json.loads(path.read_text()), keys)
    assert "url" not in local and "headers" not in local and "command" in local
    assert status(p, h, name)[0].problem is None


@pytest.mark.parametrize("name", list(SERVER))
def test_a_mixed_entry_is_a_problem_and_install_repairs_it(where, name):
    p, h = where
    path, keys = SERVER[name][0](p, h), SERVER[name][1]
    value = json.loads(path.read_text()) if path.exists() else {}
    node = value
    for k in keys[:-1]:
        node = node.setdefault(k, {})
    node[keys[-1]] = {"type": "http", "url": URL, "command": "ynm", "args": ["serve"]}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))
    report = status(p, h, name)[0]
    assert report.level == "error"
    assert report.problem == (f'{path}: "{".".join(keys)}" mixes a local command and a hosted '
                              "url (one entry is one transport)")
    assert report.line().startswith(f"err  {name}: {path}: ")
    done = install(target(where), [name])[0].done
    assert any("replaces the broken entry whole" in line for line in done)
    entry = dig(json.loads(path.read_text()), keys)
    assert "url" not in entry and "command" in entry
    assert status(p, h, name)[0].problem is None


def test_init_keeps_a_hosted_entry(where):
    p, h = where
    install(target(where, url=URL, token=TOKEN), ["claude-code"])
    before = (p / ".mcp.json").read_bytes()
    [setup] = configure_for_init(p, h, ["claude-code"], env={"PATH": "/nonexistent"})
    assert (p / ".mcp.json").read_bytes() == before
    assert setup["notes"] == [(f"kept the hosted ynm server in {p / '.mcp.json'} ({URL}); to run "
                              "a local `ynm serve` instead: ynm client install claude-code")]
    assert ".mcp.json" not in setup["applied"]


# 2. Tokens ------------------------------------------------------------------------------------

@pytest.mark.parametrize(("name", "scope"), [("claude-code", "project"), ("claude-code", "user"),
                                             ("copilot-cli", "project"), ("opencode", "project"),
                                             ("opencode", "user"), ("pi", "project")])
def test_a_token_is_never_shown(where, name, scope):
    t = target(where, url=URL, token=TOKEN, scope=scope)
    [result] = plan(t, [name])
    shown = json.dumps([c.to_obj() for c in result.plan]) + "".join(
        f"{c.target} {c.reason}" for c in result.plan)
    assert TOKEN not in shown
    [done] = install(t, [name])
    assert TOKEN not in "\n".join(done.done)


@pytest.mark.parametrize(("name", "header"), [("claude-code", "Bearer ${YNM_MCP_TOKEN}"),
                                              ("opencode", "Bearer {env:YNM_MCP_TOKEN}")])
def test_a_shared_project_file_names_the_variable_not_the_token(where, name, header):
    p, h = where
    path, keys = SERVER[name][0](p, h), SERVER[name][1]
    [result] = install(target(where, url=URL, token=TOKEN), [name])
    assert TOKEN not in path.read_text()
    assert dig(json.loads(path.read_text()), keys)["headers"] == {"Authorization": header}
    assert any(line.startswith("next: set YNM_MCP_TOKEN to your ynm token") for line in result.done)
    again = plan(target(where, url=URL, token=TOKEN), [name])[0]
    assert again.plan == []  # the note is not repeated once the entry is in place


@pytest.mark.parametrize(("name", "where_to"), [
    ("copilot-cli", lambda p, h: h / ".copilot" / "mcp-config.json"),
    ("opencode", lambda p, h: h / ".config" / "opencode" / "opencode.json")])
def test_a_users_own_file_gets_the_token_and_owner_only_access(where, name, where_to):
    p, h = where
    path = where_to(p, h)
    path.parent.mkdir(parents=True)
    path.write_text('{"theme": "dark"}\n')
    path.chmod(0o644)
    [result] = plan(target(where, url=URL, token=TOKEN, scope="user"), [name])
    assert "Bearer ***" in json.dumps(result.plan[0].to_obj())
    install(target(where, url=URL, token=TOKEN, scope="user"), [name])
    assert f"Bearer {TOKEN}" in path.read_text()
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert json.loads(path.read_text())["theme"] == "dark"


def test_ynh_refuses_a_token(where):
    p, h = where
    harness(p)
    before = snapshot(p, h)
    with pytest.raises(Refused, match=r"plugin\.json is shared with everyone who uses the "
                                      "harness .* without --token"):
        install(target(where, url=URL, token=TOKEN), ["ynh"])
    assert snapshot(p, h) == before


# 3. Invalid JSON ------------------------------------------------------------------------------

BROKEN = '{"mcpServers": '


@pytest.mark.parametrize("name", list(SERVER))
def test_invalid_json_is_refused_by_name_and_nothing_is_written(where, name):
    p, h = where
    path = SERVER[name][0](p, h)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(BROKEN)
    before = snapshot(p, h)
    with pytest.raises(InvalidInput) as err:
        install(target(where), [name])
    assert str(err.value) == (f"invalid input: {path}: not valid JSON (unexpected end of text); "
                              "fix it and run again")
    assert snapshot(p, h) == before
    assert status(p, h, name)[0].level == "error"


def test_invalid_hook_settings_stop_the_server_file_too(where):
    p, _h = where
    settings_file = p / ".claude" / "settings.local.json"
    settings_file.parent.mkdir()
    settings_file.write_text("{,}")
    with pytest.raises(InvalidInput, match="settings.local.json: not valid JSON"):
        install(target(where), ["claude-code"])
    assert not (p / ".mcp.json").exists() and not (p / "CLAUDE.md").exists()


def test_several_clients_write_nothing_when_one_file_is_invalid(where):
    p, h = where
    (p / "opencode.json").write_text("{}\n")
    (p / ".mcp.json").write_text(BROKEN)
    before = snapshot(p, h)
    with pytest.raises(InvalidInput):
        install(target(where), ["opencode", "claude-code"])
    assert snapshot(p, h) == before


# 4. Values that are not ynm's -----------------------------------------------------------------

FOREIGN = [
    ("opencode", "opencode.json", {"mcp": [1, 2]}, '"mcp" holds [1, 2] where ynm needs an object'),
    ("claude-code", ".mcp.json", {"mcpServers": "none"},
     '"mcpServers" holds "none" where ynm needs an object'),
    ("claude-code", ".mcp.json", {"mcpServers": {"ynm": {"command": "docker", "args": ["run", "m"]}}},
     '"mcpServers.ynm" runs `docker run m`, not `ynm serve`'),
    ("claude-code", ".claude/settings.local.json", {"hooks": {"Stop": "echo"}},
     '"hooks.Stop" holds "echo" where ynm needs an array'),
    ("opencode", "opencode.json", {"mcp": {"ynm": 7}}, '"mcp.ynm" holds 7, not a server entry'),
    ("ynh", ".agents/harness/plugin.json", {"mcp_servers": {"ynm": {"command": "other-mem"}}},
     '"mcp_servers.ynm" runs `other-mem`, not `ynm serve`'),
]


@pytest.mark.parametrize(("name", "rel", "value", "why"), FOREIGN)
def test_a_value_that_is_not_ynms_is_refused_then_replaced_with_force(where, name, rel, value,
                                                                      why):
    p, h = where
    path = p / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(value))
    before = snapshot(p, h)
    with pytest.raises(Refused) as err:
        install(target(where), [name])
    assert str(err.value) == (f"{path}: {why}; ynm does not overwrite what it did not write: fix "
                              f"it by hand, or run `ynm client install {name} --force` to "
                              "replace it")
    assert snapshot(p, h) == before
    done = install(target(where, force=True), [name])[0].done
    assert any(f"--force replaces what was not ynm's: {why}" in line for line in done)
    assert plan(target(where), [name])[0].plan == []


def test_init_leaves_a_foreign_entry_alone_with_a_note(where):
    p, h = where
    (p / ".mcp.json").write_text(json.dumps({"mcpServers": {"ynm": {"command": "mine"}}}))
    before = (p / ".mcp.json").read_bytes()
    [setup] = configure_for_init(p, h, ["claude-code"], env={"PATH": "/nonexistent"})
    assert (p / ".mcp.json").read_bytes() == before
    assert setup["notes"] == [(f'left {p / ".mcp.json"} alone: "mcpServers.ynm" runs `mine`, not '
                              "`ynm serve`; to replace it: ynm client install claude-code --force")]
    assert "CLAUDE.md" in setup["applied"]  # the rest of the setup goes on


# 5. Guidance markers --------------------------------------------------------------------------

MALFORMED = [
    (f"# Rules\n{BEGIN}\nold\n", 2, f"{BEGIN} has no {END} after it"),
    (f"# Rules\n{END}\nmine\n{BEGIN}\n", 2, f"{END} comes before any {BEGIN}"),
    (f"{BEGIN}\n{BEGIN}\nx\n{END}\nmine\n", 2, f"a second {BEGIN}"),
    (f"{BEGIN}\nx\n{END}\n\n{BEGIN}\ny\n{END}\n", 5, "a second ynm block"),
    (f"{BEGIN}\nx\n{END}\nmine\n{END}\n", 5, f"a second {END}"),
]


@pytest.mark.parametrize(("name", "rel"), [("claude-code", "CLAUDE.md"),
                                           ("copilot-cli", "AGENTS.md"),
                                           ("opencode", "AGENTS.md"), ("pi", "AGENTS.md")])
@pytest.mark.parametrize(("text", "line", "why"), MALFORMED)
def test_a_half_written_guidance_block_is_refused(where, name, rel, text, line, why):
    p, h = where
    (p / rel).write_text(text)
    before = snapshot(p, h)
    with pytest.raises(InvalidInput) as err:
        install(target(where), [name])
    assert str(err.value) == (f"invalid input: {p / rel}:{line}: {why} (ynm's memory guidance "
                              "block is half-written); fix or remove ynm's markers and run again")
    assert snapshot(p, h) == before
    report = status(p, h, name)[0]
    assert report.level == "warn"  # the server still works: a guidance fault is a warning
    assert [(q.what, q.detail, q.fix) for q in report.problems] == [(
        "guidance", f"{p / rel}:{line}: {why} (ynm's memory guidance block is half-written)",
        f"remove or complete ynm's markers in {p / rel}, then run `ynm client install {name}`")]


TEXT = st.text(st.characters(blacklist_categories=("Cs",)), max_size=200).map(
    lambda t: t.replace(BEGIN, "").replace(END, ""))


@settings(max_examples=200, deadline=None)
@given(TEXT, TEXT)
def test_install_and_reinstall_keep_every_byte_outside_the_block(text, added):
    first = with_guidance(text)
    start, end = guidance_span(first, "f")
    assert first.startswith(text)
    assert first[len(text):start] in (("", "\n", "\n\n", "\r\n", "\r\n\r\n") if text else ("",))
    assert with_guidance(first) == first  # idempotent
    # the user writes after the block and edits inside it: a reinstall restores the block only
    edited = first[:start] + first[start:end].replace("memory", "MEMORY") + first[end:] + added
    again = with_guidance(edited)
    assert again == first + added
    assert again[:start] == edited[:start] and again[end:] == first[end:] + added


# Byte order marks -----------------------------------------------------------------------------

@pytest.mark.parametrize("name", list(SERVER))
def test_json_files_lose_a_byte_order_mark_and_keep_everything_else(where, name):
    p, h = where
    path = SERVER[name][0](p, h)
    path.parent.mkdir(parents=True, exist_ok=True)
    body = '{\n  "keep": {"a": [1, 2]} // mine\n}\n' if name == "opencode" else \
        '{\n  "keep": {"a": [1, 2]}\n}\n'
    path.write_bytes(b"\xef\xbb\xbf" + body.encode())
    install(target(where), [name])
    data = path.read_bytes()
    assert not data.startswith(b"\xef\xbb\xbf")
    text = data.decode("utf-8")
    assert text.startswith('{\n  "keep": {"a": [1, 2]}')
    if name == "opencode":
        assert "// mine" in text
    else:
        assert json.loads(text)["keep"] == {"a": [1, 2]}
