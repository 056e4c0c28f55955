"""GitHub Copilot CLI: the MCP server and the memory guidance; no hooks.

- Server: ``mcpServers.ynm`` in ``~/.copilot/mcp-config.json``, the only file the CLI reads MCP
  servers from, so both scopes write it: ``{type: "local", command, args, tools: ["*"]}``, or
  hosted ``{type: "http", url, headers, tools: ["*"]}`` (reference/server.md §4.1). Source: GitHub
  docs, "Adding MCP servers for GitHub Copilot CLI"
  (https://docs.github.com/en/copilot/how-tos/copilot-cli/customize-copilot/add-mcp-servers).
- Guidance: the delimited block in the project's ``AGENTS.md`` (project scope) or
  ``~/.copilot/copilot-instructions.md`` (user scope). Source: GitHub docs, "Adding custom
  instructions for GitHub Copilot CLI" (…/copilot-cli/customize-copilot/add-custom-instructions).
- Token: ``~/.copilot/mcp-config.json`` is the user's own file, never in a project, so a
  ``--token`` is written there literally and the file is kept 0600 (owner only).
- Hooks: none; Copilot CLI's hooks do not fire in folders it has not marked trusted
  (reference/server.md §4.1).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ynm.integrations.common import (
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
)

NAME = "copilot-cli"
LOCAL_FILES: tuple[str, ...] = ()


def config_path(t: Target) -> Path:
    return t.home / ".copilot" / "mcp-config.json"


def server_entry(t: Target) -> dict[str, Any]:
    if t.http:
        return {"type": "http", "url": t.url, **({"headers": t.headers} if t.token else {}),
                "tools": ["*"]}
    argv = t.serve_argv()
    return {"type": "local", "command": argv[0], "args": argv[1:], "tools": ["*"]}


def instruction_file(t: Target) -> Path:
    return (t.home / ".copilot" / "copilot-instructions.md" if t.scope == "user"
            else t.work_tree / "AGENTS.md")


def plan(t: Target) -> list[Change]:
    secret = (t.token,) if t.token else ()
    return [merge_change(t, NAME, config_path(t), {"mcpServers": {"ynm": server_entry(t)}},
                         "register the ynm MCP server with Copilot CLI (user level; the CLI "
                         "reads only this file" + ("; holds the token, so kept 0600)" if secret
                                                   else ")"),
                         entry=("mcpServers", "ynm"), secrets=secret,
                         mode=0o600 if secret else None),
            guidance_change(instruction_file(t))]


def detect(t: Target) -> Detection:
    # No project footprint of its own: AGENTS.md is shared by several clients.
    return detect_by(t, bin="copilot", user=[t.home / ".copilot"], project=[])


def status(t: Target) -> ClientStatus:
    d = detect(t)
    entry = json_member(config_path(t), "mcpServers", "ynm")
    guides = [p for p in (t.work_tree / "AGENTS.md", t.home / ".copilot" /
                          "copilot-instructions.md") if has_guidance(p)]
    server = isinstance(entry, dict)
    runs = (entry.get("url") or " ".join(entry_argv(entry))) if server else ""
    problems = [*json_problems("server", config_path(t)),
                *entry_problems(NAME, config_path(t), ("mcpServers", "ynm")),
                *guidance_problems(NAME, t.work_tree / "AGENTS.md",
                                   t.home / ".copilot" / "copilot-instructions.md")]
    checked = [check("server", f"{config_path(t)} runs `{runs}`" if server else "missing"),
               check("guidance", str(guides[0]) if guides else "missing")]
    return ClientStatus(NAME, d.found, d.how, server, bool(guides), None,
                        str(config_path(t)) if server else "ynm not registered", checked,
                        [str(p) for p in ([config_path(t)] if server else []) + guides[:1]],
                        problems)
