"""pi (the pi coding agent): pi has no MCP client by design, so ynm installs a one-file pi
extension whose ``memory_*`` tools run the ynm CLI with ``--json``, a skill, and the guidance.

- Extension: ``.pi/extensions/ynm.ts`` (project) or ``~/.pi/agent/extensions/ynm.ts`` (user);
  skill: ``.pi/skills/ynm-memory/SKILL.md`` or ``~/.pi/agent/skills/ynm-memory/SKILL.md``;
  guidance: the delimited block in the project's ``AGENTS.md`` (project scope). ``--http`` has
  nothing to register: the extension runs the local CLI (a ``note`` says so). No hooks.
  Source: reference/server.md §4.1 (the pi row), pi's README ("Extensions", "Skills",
  "Project Context Files": ``~/.pi/agent/`` and ``.pi/``, ``AGENTS.md``), and pi's extension
  contract ``pi.registerTool({name, label, description, parameters, execute})``.
"""

from __future__ import annotations

import json
from pathlib import Path

from ynm.errors import InvalidInput
from ynm.integrations.common import (
    Change,
    ClientStatus,
    Detection,
    Target,
    check,
    detect_by,
    guidance_change,
    guidance_problems,
    has_guidance,
    read_text,
)
from ynm.model.guidance import skill

NAME = "pi"
LOCAL_FILES: tuple[str, ...] = ()
HEADER = "// Written by `ynm client install pi`; it is replaced on reinstall, so do not edit."


def base(t: Target) -> Path:
    return t.home / ".pi" / "agent" if t.scope == "user" else t.work_tree / ".pi"


def extension_path(t: Target) -> Path:
    return base(t) / "extensions" / "ynm.ts"


def skill_path(t: Target) -> Path:
    return base(t) / "skills" / "ynm-memory" / "SKILL.md"


# name -> (ynm command, description, TypeBox parameters, how params become argv)
_TOOLS = {
    "memory_recall": ("recall", "Search long-term memory (ynm) for what is known about a topic.",
                      'Type.Object({ query: Type.String(), limit: Type.Optional(Type.Integer()) })'),
    "memory_context": ("context", ("The context block: pinned and relevant memories to read "
                       "before starting a task."), "Type.Object({})"),
    "memory_remember": ("remember", "Store one fact in long-term memory (ynm); never a secret.",
                        ('Type.Object({ type: Type.Union(["working", "episodic", "semantic", '
                        '"procedural", "reflective", "reference"].map((t) => Type.Literal(t))), '
                        'content: Type.String(), level: Type.Optional(Type.Union(['
                        'Type.Literal("personal"), Type.Literal("distributed")])), '
                        'namespace: Type.Optional(Type.String()), '
                        'tags: Type.Optional(Type.Array(Type.String())) })')),
    "memory_supersede": ("supersede", "Replace an existing memory (by id) with new content.",
                         'Type.Object({ memoryId: Type.String(), content: Type.String() })'),
}


def extension_source(command: tuple[str, ...] = ("ynm",)) -> str:
    """The TypeScript source of the pi extension; each tool runs ``<command> <cmd> ... --json``
    (``YNM_BIN`` overrides the program)."""
    tools = "\n".join(
        f"  pi.registerTool({{\n    name: {json.dumps(name)},\n    label: "
        f"{json.dumps('Memory: ' + name.removeprefix('memory_'))},\n    description: "
        f"{json.dumps(desc)},\n    parameters: {params},\n    execute: async (_id: string, "
        f"params: any) => run({json.dumps(cmd)}, params ?? {{}}),\n  }});"
        for name, (cmd, desc, params) in _TOOLS.items())
    return f"""{HEADER}
// pi has no MCP client, so each memory_* tool runs the ynm CLI with --json.
import {{ spawn }} from "node:child_process";
import {{ Type }} from "@earendil-works/pi-ai";

const YNM: string[] = process.env.YNM_BIN ? [process.env.YNM_BIN] : {json.dumps(list(command))};

function argv(command: string, p: Record<string, any>): string[] {{
  const out = [command];
  if (command === "recall") out.push(String(p.query ?? ""));
  if (command === "supersede") out.push(String(p.memoryId ?? ""));
  for (const [key, value] of Object.entries(p)) {{
    if (value === undefined || value === null || key === "query" || key === "memoryId") continue;
    const flag = "--" + key.replace(/([a-z0-9])([A-Z])/g, "$1-$2").toLowerCase();
    for (const v of Array.isArray(value) ? value : [value]) out.push(flag, String(v));
  }}
  out.push("--json");
  return out;
}}

function run(command: string, params: Record<string, any>): Promise<any> {{
  return new Promise((resolve) => {{
    const child = spawn(YNM[0], [...YNM.slice(1), ...argv(command, params)],
                        {{ stdio: ["ignore", "pipe", "pipe"] }});
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => (err += d));
    const text = (t: string) => ({{ content: [{{ type: "text", text: t }}], details: undefined }});
    child.on("error", (e) => resolve(text(`ynm could not start: ${{e.message}}`)));
    child.on("close", (code) =>
      resolve(text(code === 0 ? out.trim() : `ynm ${{command}} exited ${{code}}: ${{err.trim() || out.trim()}}`)));
  }});
}}

export default function ynm(pi: any): void {{
{tools}
}}
"""


def plan(t: Target) -> list[Change]:
    changes = [Change("write", "pi extension exposing the memory_* tools over the ynm CLI",
                      path=extension_path(t), content=extension_source(t.command)),
               Change("write", "ynm-memory skill (when to recall, remember, supersede)",
                      path=skill_path(t), content=skill())]
    if t.scope == "project":
        changes.append(guidance_change(t.work_tree / "AGENTS.md"))
    if t.http:
        changes.append(Change("note", "pi has no MCP client", text="pi's ynm extension runs the "
                              "local ynm CLI; the --http server is not registered with pi"))
    return changes


def detect(t: Target) -> Detection:
    return detect_by(t, bin="pi", user=[t.home / ".pi" / "agent"], project=[".pi"])


def status(t: Target) -> ClientStatus:
    d = detect(t)
    found = None
    for scope in ("project", "user"):
        st = Target(t.work_tree, t.home, scope, env=t.env)
        try:
            text = read_text(extension_path(st))
        except InvalidInput:  # not UTF-8: not the file ynm wrote
            text = None
        if text is not None and text.startswith(HEADER):
            found = st
            break
    guides = [p for p in ((skill_path(found),) if found else ()) + (t.work_tree / "AGENTS.md",)
              if p.is_file() and (p.name == "SKILL.md" or has_guidance(p))]
    checked = [check("server", f"extension {extension_path(found)}" if found else "missing"),
               check("guidance", str(guides[0]) if guides else "missing")]
    return ClientStatus(NAME, d.found, d.how, found is not None, bool(guides), None,
                        str(extension_path(found)) if found else
                        "extension not installed", checked,
                        [str(p) for p in ([extension_path(found)] if found else []) + guides],
                        guidance_problems(NAME, t.work_tree / "AGENTS.md",
                                          t.home / ".pi" / "agent" / "AGENTS.md"))
