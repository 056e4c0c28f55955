"""opencode: the MCP server and the memory guidance; no hooks (its extension points are
plugins, not command hooks).

- Server: ``mcp.ynm`` in the project's ``opencode.jsonc`` when there is one, else
  ``opencode.json`` (project scope), or ``$XDG_CONFIG_HOME/opencode/opencode.json(c)``
  (``~/.config``; user scope): ``{type: "local", command: ["ynm", "serve"], enabled: true}``, or
  hosted ``{type: "remote", url, enabled: true, headers}``. The token goes into the project's
  file as ``{env:YNM_MCP_TOKEN}``, which opencode substitutes (opencode docs, "Config",
  "Variables": ``{env:VARIABLE_NAME}``), and literally only into the user's own file, kept 0600. A new file also gets opencode's
  ``$schema``. The files are JSONC: comments and trailing commas are kept
  (:mod:`ynm.integrations.jsonc`). Source: opencode docs, "MCP servers" and "Config"
  (https://opencode.ai/docs/mcp-servers/, https://opencode.ai/docs/config/) and
  reference/server.md §4.1.
- Guidance: the delimited block in the project's ``AGENTS.md``, or the global
  ``~/.config/opencode/AGENTS.md`` (user scope). Source: opencode docs, "Rules"
  (https://opencode.ai/docs/rules/).
"""

from __future__ import annotations

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
    token_note,
)

NAME = "opencode"
SCHEMA = "https://opencode.ai/config.json"
LOCAL_FILES: tuple[str, ...] = ()


def _pick(directory: Path) -> Path:
    jsonc = directory / "opencode.jsonc"
    return jsonc if jsonc.is_file() else directory / "opencode.json"


def config_path(t: Target) -> Path:
    return _pick(t.config_home() / "opencode" if t.scope == "user" else t.work_tree)


def server_entry(t: Target) -> dict[str, Any]:
    if t.http:
        headers = t.headers if t.scope == "user" else t.headers_ref(f"{{env:{TOKEN_VAR}}}")
        return {"type": "remote", "url": t.url, "enabled": True,
                **({"headers": headers} if t.token else {})}
    return {"type": "local", "command": t.serve_argv(), "enabled": True}


def instruction_file(t: Target) -> Path:
    return (t.config_home() / "opencode" / "AGENTS.md" if t.scope == "user"
            else t.work_tree / "AGENTS.md")


def plan(t: Target) -> list[Change]:
    path = config_path(t)
    patch: dict[str, Any] = {} if path.is_file() else {"$schema": SCHEMA}
    patch["mcp"] = {"ynm": server_entry(t)}
    literal = bool(t.token) and t.scope == "user"
    changes = [merge_change(t, NAME, path, patch, f"register the ynm MCP server with opencode "
                            f"({t.scope} scope{'; holds the token, so kept 0600' if literal else ''})",
                            entry=("mcp", "ynm"), secrets=(t.token,) if literal else (),
                            mode=0o600 if literal else None),
               guidance_change(instruction_file(t))]
    if t.token and not literal and not changes[0].is_noop():
        changes.append(token_note(t, "opencode"))
    return changes


def detect(t: Target) -> Detection:
    return detect_by(t, bin="opencode", user=[t.config_home() / "opencode"],
                     project=["opencode.json", "opencode.jsonc", ".opencode"])


def status(t: Target) -> ClientStatus:
    d = detect(t)
    server_file = None
    files = ((_pick(t.work_tree), "project"), (_pick(t.config_home() / "opencode"), "user"))
    for path, _ in files:
        entry = json_member(path, "mcp", "ynm")
        if isinstance(entry, dict):
            server_file = path
            runs = entry.get("url") or " ".join(entry_argv(entry))
            break
    problems = [*json_problems("server", *(p for p, _ in files)),
                *(q for p, scope in files
                  for q in entry_problems(NAME, p, ("mcp", "ynm"), scope=scope)),
                *guidance_problems(NAME, t.work_tree / "AGENTS.md",
                                   t.config_home() / "opencode" / "AGENTS.md")]
    guides = [p for p in (t.work_tree / "AGENTS.md", t.config_home() / "opencode" / "AGENTS.md")
              if has_guidance(p)]
    checked = [check("server", f"{server_file} runs `{runs}`" if server_file else "missing"),
               check("guidance", str(guides[0]) if guides else "missing")]
    return ClientStatus(NAME, d.found, d.how, server_file is not None, bool(guides), None,
                        str(server_file) if server_file else "ynm not registered", checked,
                        [str(p) for p in ([server_file] if server_file else []) + guides[:1]],
                        problems)
