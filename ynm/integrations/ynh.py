"""ynh (agent harnesses): ynm's server, hooks, skill and environment in a harness manifest.

- Manifest: ``.agents/harness/plugin.json`` in the harness directory; a harness still on the
  deprecated ``.ynh-plugin/plugin.json`` is migrated (its manifest, with ynm merged in, is
  written to the new place and a note says to remove the old one).
- ``mcp_servers.ynm``: ``{command, args}``, or hosted ``{url, headers}``; ``hooks`` in ynh's
  canonical event names ``on_session_start``, ``before_prompt``, ``on_stop``, each
  ``[{command: "ynm hook <event>"}]`` (ynh maps them to each vendor's hooks); ``env_passthrough``
  gains ynm's variables; the guidance is a ``skills/ynm-memory/SKILL.md`` beside the manifest.
- Outside a harness there is nothing to install into: the plan is a note.
- ``--token`` is refused: the manifest is shared with everyone who uses the harness, and ynh
  documents no variable syntax it expands there, so ynm has nowhere safe to put the token.
Source: reference/cli.md §4.2 (last item) and reference/server.md §4.1 (the ynh row).
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

from ynm.errors import Refused
from ynm.integrations.common import (
    Change,
    ClientStatus,
    Detection,
    Target,
    check,
    detect_by,
    entry_argv,
    entry_problems,
    invalid_json,
    json_member,
    json_problems,
    merge_change,
    read_json,
    read_text,
)
from ynm.model.guidance import skill

NAME = "ynh"
LOCAL_FILES: tuple[str, ...] = ()
MANIFEST = Path(".agents") / "harness" / "plugin.json"
LEGACY = Path(".ynh-plugin") / "plugin.json"
HOOKS = {"on_session_start": "session-start", "before_prompt": "prompt", "on_stop": "stop"}
ENV = ("YNM_HOME", "YNM_USER", "YNM_PERSONAL_STORE", "YNM_MOUNTS", "YNM_URL")


def is_harness(work_tree: Path) -> bool:
    """Whether ``work_tree`` holds a ynh harness manifest (current or deprecated place)."""
    return (work_tree / MANIFEST).is_file() or (work_tree / LEGACY).is_file()


def server_entry(t: Target) -> dict[str, Any]:
    if t.http:
        return {"url": t.url}
    argv = t.serve_argv()
    return {"command": argv[0], "args": argv[1:]}


def skill_path(t: Target) -> Path:
    return t.work_tree / "skills" / "ynm-memory" / "SKILL.md"


def _patch(t: Target, manifest: dict[str, Any]) -> dict[str, Any]:
    manifest = manifest if isinstance(manifest, dict) else {}  # merge_change refuses it
    patch: dict[str, Any] = {"mcp_servers": {"ynm": server_entry(t)}}
    if t.hooks:
        hooks = manifest.get("hooks") if isinstance(manifest.get("hooks"), dict) else {}
        for event, name in HOOKS.items():
            line = shlex.join(t.hook_argv(name))
            entries = hooks.get(event) if isinstance(hooks.get(event), list) else []
            if not any(isinstance(h, dict) and h.get("command") == line for h in entries):
                patch.setdefault("hooks", {})[event] = [*entries, {"command": line}]
    env = manifest.get("env_passthrough")
    env = env if isinstance(env, list) else []
    missing = [v for v in ENV if v not in env]
    if missing:
        patch["env_passthrough"] = [*env, *missing]
    return patch


def plan(t: Target) -> list[Change]:
    path, legacy = t.work_tree / MANIFEST, t.work_tree / LEGACY
    if not path.is_file() and not legacy.is_file():
        return [Change("note", "no ynh harness here", text=f"{t.work_tree} is not a ynh harness "
                       f"(no {MANIFEST}); run `ynm client install ynh` in the harness directory")]
    if t.token:
        raise Refused(f"{path if path.is_file() else legacy} is shared with everyone who uses "
                      "the harness and ynh expands no variable there, so ynm does not write a "
                      "token into it: run `ynm client install ynh --http <url>` without "
                      "--token, and give each agent client the token itself (e.g. `ynm client "
                      "install claude-code --http <url> --token <t>`)")
    changes: list[Change] = []
    if not path.is_file():
        from ynm.integrations import jsonc

        manifest = read_json(legacy)
        checked = merge_change(t, NAME, legacy, _patch(t, manifest), "",
                               entry=("mcp_servers", "ynm"))
        try:
            merged = jsonc.merge(read_text(legacy) or "{}", _patch(t, manifest),
                                 replace=checked.replace)
        except jsonc.JsoncError as err:
            raise invalid_json(legacy, err) from None
        changes.append(Change("write", f"harness manifest moved from {LEGACY} (deprecated), "
                              "with ynm's server, hooks and environment", path=path,
                              content=merged))
        changes.append(Change("note", "the deprecated manifest is no longer read",
                              text=f"remove {legacy.parent} once {MANIFEST} is committed"))
    else:
        changes.append(merge_change(t, NAME, path, _patch(t, read_json(path)),
                                    "harness manifest: ynm's server, hooks and environment",
                                    entry=("mcp_servers", "ynm")))
    changes.append(Change("write", "ynm-memory skill for the harness", path=skill_path(t),
                          content=skill()))
    return changes


def detect(t: Target) -> Detection:
    return detect_by(t, bin="ynh", user=[t.home / ".ynh"], project=[str(MANIFEST), str(LEGACY)])


def status(t: Target) -> ClientStatus:
    d = detect(t)
    path = t.work_tree / MANIFEST
    if not path.is_file():
        return ClientStatus(NAME, d.found, d.how, False, False, None, "no ynh harness here",
                            [check("manifest", "missing")])
    server = json_member(path, "mcp_servers", "ynm")
    hooks = json_member(path, "hooks")
    hooks = hooks if isinstance(hooks, dict) else {}
    hooked = [e for e, name in HOOKS.items()
              if any(isinstance(h, dict) and str(h.get("command", "")).split()[-2:] ==
                     ["hook", name] for h in hooks.get(e) or [])]
    guided = skill_path(t).is_file()
    runs = ("" if not isinstance(server, dict) else server.get("url") or
            " ".join(entry_argv(server)))
    problems = [*json_problems("manifest", path),
                *entry_problems(NAME, path, ("mcp_servers", "ynm"))]
    checked = [check("manifest", str(path)),
               check("server", f"mcp_servers.ynm runs `{runs}`" if runs else "missing"),
               check("guidance", str(skill_path(t)) if guided else "missing"),
               check("hooks", ", ".join(hooked) if hooked else "missing")]
    return ClientStatus(NAME, d.found, d.how, isinstance(server, dict), guided,
                        len(hooked) == len(HOOKS), f"harness {path}", checked,
                        [str(path)] + ([str(skill_path(t))] if guided else []), problems)
