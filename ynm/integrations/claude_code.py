"""Claude Code: the MCP server, the memory guidance and the three hooks.

- Server, project scope: ``mcpServers.ynm`` in ``<project>/.mcp.json`` (the team's file; a
  token is written as ``${YNM_MCP_TOKEN}``); user scope: the top-level ``mcpServers.ynm`` of
  ``~/.claude.json``, where ``claude mcp add --scope user`` keeps user servers. The merge
  changes that one member (every other key and byte of Claude Code's file stays), keeps the
  file's permission bits (0600 when new, no access by others once it holds a token) and writes
  a ``--token`` literally, as ``claude mcp add --header`` would, without putting it on a
  command line. Hosted: ``{type: "http", url, headers}``. Source: Claude Code docs, "Connect
  Claude Code to tools via MCP" (https://docs.anthropic.com/en/docs/claude-code/mcp, "MCP
  installation scopes": user scope in ``~/.claude.json``, and ``.mcp.json``).
- Hooks: ``SessionStart``, ``UserPromptSubmit``, ``Stop`` running ``ynm hook session-start |
  prompt | stop`` in ``.claude/settings.local.json`` (project; yours, excluded from git; the
  tracked ``.claude/settings.json`` is never touched) or ``~/.claude/settings.json`` (user).
  Other hooks are kept; ynm's own are updated, never added twice. Source: Claude Code docs,
  "Hooks reference" (https://docs.anthropic.com/en/docs/claude-code/hooks) and
  reference/server.md §4.2.
- Guidance: the delimited block in an instruction file Claude Code loads: an ``AGENTS.md`` that
  ``CLAUDE.md`` imports (``@AGENTS.md``), else ``CLAUDE.md`` or ``.claude/CLAUDE.md`` when present,
  else a new ``CLAUDE.md`` (the reference creates ``AGENTS.md``, which Claude Code does not read
  unless imported); user scope ``~/.claude/CLAUDE.md``. Source: Claude Code docs, "Manage
  Claude's memory" (https://docs.anthropic.com/en/docs/claude-code/memory).
"""

from __future__ import annotations

import re
import shlex
from pathlib import Path
from typing import Any

from ynm.integrations.common import (
    TOKEN_VAR,
    Change,
    ClientStatus,
    Detection,
    Target,
    check,
    detect_by,
    entry_argv,
    entry_problems,
    guidance_change,
    guidance_problems,
    has_guidance,
    json_member,
    json_problems,
    merge_change,
    read_json,
    read_text,
    token_note,
)

NAME = "claude-code"
HOOKS = {"SessionStart": "session-start", "UserPromptSubmit": "prompt", "Stop": "stop"}
LOCAL_FILES = (".claude/settings.local.json",)


def server_entry(t: Target) -> dict[str, Any]:
    """``mcpServers.ynm`` for the target's transport. The token is written as
    ``${YNM_MCP_TOKEN}``, which Claude Code expands in ``.mcp.json`` headers (Claude Code
    docs, "Environment variable expansion in .mcp.json"), so the team's file holds no secret."""
    if t.http:
        return {"type": "http", "url": t.url,
                **({"headers": t.headers_ref(f"${{{TOKEN_VAR}}}")} if t.token else {})}
    argv = t.serve_argv()
    return {"command": argv[0], "args": argv[1:]}


def is_ynm_hook(command: str, event: str) -> bool:
    """Whether a hook command is ynm's ``hook <event>``, however ynm was called (``ynm``, an
    absolute path to it, or ``python -m ynm``)."""
    try:
        argv = shlex.split(command)
    except ValueError:
        return False
    if argv[-2:] != ["hook", event] or len(argv) < 3:
        return False
    head = argv[:-2]
    return Path(head[0]).name == "ynm" or head[-2:] == ["-m", "ynm"]


def settings_path(t: Target) -> Path:
    return (t.home / ".claude" / "settings.json" if t.scope == "user"
            else t.work_tree / ".claude" / "settings.local.json")


def instruction_file(t: Target) -> Path:
    """The file the guidance block goes into (see the module docstring)."""
    if t.scope == "user":
        return t.home / ".claude" / "CLAUDE.md"
    claude = t.work_tree / "CLAUDE.md"
    text = read_text(claude)
    if text is not None and re.search(r"(?m)^\s*@\.?/?AGENTS\.md\s*$", text) \
            and (t.work_tree / "AGENTS.md").is_file():
        return t.work_tree / "AGENTS.md"
    for candidate in (claude, t.work_tree / ".claude" / "CLAUDE.md"):
        if candidate.is_file():
            return candidate
    return claude


def _hooks_patch(t: Target) -> dict[str, Any] | None:
    settings = read_json(settings_path(t))
    hooks = settings.get("hooks") if isinstance(settings, dict) else None
    hooks = hooks if isinstance(hooks, dict) else {}  # not an object: merge_change refuses
    patch: dict[str, Any] = {}
    for event, name in HOOKS.items():
        line = shlex.join(t.hook_argv(name))
        groups = hooks.get(event)
        groups = [g for g in groups] if isinstance(groups, list) else []
        present, changed = False, False
        new_groups = []
        for g in groups:
            if isinstance(g, dict) and isinstance(g.get("hooks"), list):
                inner = []
                for h in g["hooks"]:
                    if isinstance(h, dict) and is_ynm_hook(str(h.get("command", "")), name):
                        if present:  # a duplicate: dropped
                            changed = True
                            continue
                        present = True
                        if h.get("command") != line:
                            h = {**h, "command": line}
                            changed = True
                    inner.append(h)
                g = {**g, "hooks": inner}
            new_groups.append(g)
        if not present:
            new_groups.append({"hooks": [{"type": "command", "command": line}]})
            changed = True
        if changed:
            patch[event] = new_groups
    return {"hooks": patch} if patch else None


def user_config(t: Target) -> Path:
    """``~/.claude.json``: Claude Code's own file, whose top-level ``mcpServers`` holds the
    user-scope servers (the place ``claude mcp add --scope user`` writes)."""
    return t.home / ".claude.json"


def _mode(path: Path) -> int:
    """The permission bits ``path`` has (0600 for a new file: it may hold a token); a merge
    keeps them, less any access by others when the entry holds a token."""
    try:
        return path.stat().st_mode & 0o777
    except FileNotFoundError:
        return 0o600


def plan(t: Target) -> list[Change]:
    """Claude Code's changes for ``t`` (see the module docstring)."""
    changes: list[Change] = []
    if t.scope == "user":
        path = user_config(t)
        entry = (server_entry(t) | ({"headers": t.headers} if t.token else {})) if t.http \
            else server_entry(t)
        changes.append(merge_change(
            t, NAME, path, {"mcpServers": {"ynm": entry}},
            "register the ynm MCP server with Claude Code (user scope, your own file"
            + ("; holds the token, so only you can read it)" if t.token else ")"),
            entry=("mcpServers", "ynm"), secrets=(t.token,) if t.token else (),
            mode=_mode(path) & (0o700 if t.token else 0o777)))
    else:
        server = merge_change(
            t, NAME, t.work_tree / ".mcp.json", {"mcpServers": {"ynm": server_entry(t)}},
            "register the ynm MCP server with Claude Code (project scope, shared with the team)",
            entry=("mcpServers", "ynm"))
        changes.append(server)
        if t.token and server.kind == "merge-json" and not server.is_noop():
            changes.append(token_note(t, "Claude Code"))
    changes.append(guidance_change(instruction_file(t)))
    if t.hooks:
        patch = _hooks_patch(t)
        if patch:
            changes.append(merge_change(t, NAME, settings_path(t), patch,
                                        "agent hooks SessionStart, UserPromptSubmit, Stop run "
                                        "`ynm hook`"))
    return changes


def detect(t: Target) -> Detection:
    return detect_by(t, bin="claude", user=[t.home / ".claude"], project=[".mcp.json", ".claude"])


def status(t: Target) -> ClientStatus:
    """Server in ``.mcp.json`` or ``~/.claude.json``; guidance in any instruction file Claude
    Code loads; hooks: all three events in the project's or the user's settings. Problems: any
    of these files that is not valid JSON, an unusable ``mcpServers.ynm``, a malformed guidance
    block in any of the instruction files."""
    d = detect(t)
    checked: list[str] = []
    server_file = None
    servers = ((t.work_tree / ".mcp.json", "project"), (user_config(t), "user"))
    for path, _ in servers:
        entry = json_member(path, "mcpServers", "ynm")
        if isinstance(entry, dict):
            server_file = path
            runs = entry.get("url") or " ".join(entry_argv(entry))
            checked.append(check("server", f"{path} runs `{runs}`"))
            break
    else:
        checked.append(check("server", "missing"))
    guide_paths = (t.work_tree / "CLAUDE.md", t.work_tree / ".claude" / "CLAUDE.md",
                   t.work_tree / "AGENTS.md", t.home / ".claude" / "CLAUDE.md")
    guides = [p for p in guide_paths if has_guidance(p)]
    checked.append(check("guidance", str(guides[0]) if guides else "missing"))
    hooked: list[str] = []
    hook_file = None
    settings = (t.work_tree / ".claude" / "settings.local.json",
                t.work_tree / ".claude" / "settings.json", t.home / ".claude" / "settings.json")
    for path in settings:
        hooks = json_member(path, "hooks")
        if not isinstance(hooks, dict):
            continue
        found = [e for e, name in HOOKS.items()
                 if any(isinstance(h, dict) and is_ynm_hook(str(h.get("command", "")), name)
                        for g in hooks.get(e) or [] if isinstance(g, dict)
                        for h in g.get("hooks") or [])]
        if len(found) > len(hooked):
            hooked, hook_file = found, path
    checked.append(check("hooks", f"{', '.join(hooked)} in {hook_file}" if hooked else "missing"))
    problems = [*json_problems("server", *(p for p, _ in servers)),
                *(q for p, scope in servers
                  for q in entry_problems(NAME, p, ("mcpServers", "ynm"), scope=scope)),
                *guidance_problems(NAME, *guide_paths), *json_problems("hooks", *settings)]
    return ClientStatus(
        NAME, d.found, d.how, server_file is not None, bool(guides), len(hooked) == len(HOOKS),
        str(server_file) if server_file else "ynm not registered", checked,
        [str(p) for p in (server_file, *guides[:1], hook_file) if p is not None], problems)
