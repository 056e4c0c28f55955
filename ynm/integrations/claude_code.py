"""Claude Code: the MCP server, the memory guidance and the three hooks.

- Server, project scope: ``mcpServers.ynm`` in ``<project>/.mcp.json`` (the team's file); user
  scope: ``claude mcp add --scope user ynm -- ynm serve`` (Claude Code keeps user servers in
  ``~/.claude.json``, which ynm only reads). Hosted: ``{type: "http", url, headers}``; the user
  scope command does not pass the token (reference/server.md §4.1). Source: Claude Code docs,
  "Connect Claude Code to tools via MCP" (https://docs.anthropic.com/en/docs/claude-code/mcp,
  scopes and ``.mcp.json``).
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
    entry_problem,
    guidance_change,
    guidance_problem,
    has_guidance,
    json_member,
    json_problem,
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


def _user_registered(t: Target) -> bool:
    return json_member(t.home / ".claude.json", "mcpServers", "ynm") is not None


def plan(t: Target) -> list[Change]:
    """Claude Code's changes for ``t`` (see the module docstring)."""
    changes: list[Change] = []
    if t.scope == "user":
        if not _user_registered(t):
            argv = (["claude", "mcp", "add", "--scope", "user", "--transport", "http", "ynm",
                     t.url] if t.http else
                    ["claude", "mcp", "add", "--scope", "user", "ynm", "--", *t.serve_argv()])
            changes.append(Change("command", "register the ynm MCP server with Claude Code "
                                  "(user scope)", argv=argv))
            if t.token:
                changes.append(Change(
                    "note", "the token is not passed on a command line",
                    text="add the bearer token to ynm's entry in ~/.claude.json: "
                         '"headers": {"Authorization": "Bearer <token>"}'))
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
    Code loads; hooks: all three events in the project's or the user's settings."""
    d = detect(t)
    checked: list[str] = []
    server_file = None
    problem = None
    for path in (t.work_tree / ".mcp.json", t.home / ".claude.json"):
        entry = json_member(path, "mcpServers", "ynm")
        problem = problem or json_problem(path)
        if entry is not None and entry_problem(entry, ("mcpServers", "ynm")):
            problem = problem or f"{path}: {entry_problem(entry, ('mcpServers', 'ynm'))}"
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
    for path in (t.work_tree / ".claude" / "settings.local.json",
                 t.work_tree / ".claude" / "settings.json", t.home / ".claude" / "settings.json"):
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
    problem = (problem or guidance_problem(*guide_paths)
               or json_problem(t.work_tree / ".claude" / "settings.local.json"))
    return ClientStatus(
        NAME, d.found, d.how, server_file is not None, bool(guides), len(hooked) == len(HOOKS),
        str(server_file) if server_file else "ynm not registered", checked,
        [str(p) for p in (server_file, *guides[:1], hook_file) if p is not None], problem)
