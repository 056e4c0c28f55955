"""``ynm init``: set up a project repository, a bare memory store or the personal store
(reference/cli.md §4.10)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ynm.cli._common import common_options, emit, say
from ynm.model.words import counted


def ynm_command() -> tuple[list[str], str | None]:
    """The argv that runs this ynm from a hook or an agent client, and a note when that is not
    a plain ``ynm`` found on PATH.

    The ``ynm`` script beside the running Python (a virtualenv's or pipx's ``bin/``), else
    ``python -m ynm`` with this interpreter. When ``ynm`` on PATH is that same script the plain
    name is used, so the team's ``.mcp.json`` holds no path of one person's machine.
    """
    import os
    import shutil
    import sys

    script = Path(sys.executable).parent / "ynm"
    command = [str(script)] if os.access(script, os.X_OK) else [sys.executable, "-m", "ynm"]
    found = shutil.which("ynm")
    if found and os.access(script, os.X_OK):
        try:
            if os.path.samefile(found, script):
                return ["ynm"], None
        except OSError:
            pass
    where = "another ynm is first on PATH" if found else "ynm is not on PATH"
    return command, (f"{where}: hooks and agent clients call {' '.join(command)}; .mcp.json is "
                     "shared with the team, so put ynm on PATH (activate the virtualenv or "
                     "`pipx install`) and run `ynm init` again to write a plain `ynm`")


def format_init(r: dict[str, Any]) -> str:
    """The human block of cli.md §4.10 (labels in a 10-character column)."""
    waiting = r.get("configWaiting")
    state = ("" if r["configWritten"]
             else f" (not written: {waiting['branch']} has it; run `{waiting['run']}`)"
             if waiting else " (unchanged)" if r.get("configExists", True) else " (not written)")
    lines = [f"initialised {r['repo']}",
             f"  {'anchor':<10}{r['anchor']} ({r['anchorSource']})",
             f"  {'config':<10}{r['configFile']}{state}"]
    for i, spec in enumerate(r["refspecs"]):
        lines.append(f"  {'refspecs' if i == 0 else '':<10}{spec}")
    fetched = r.get("fetched")
    if fetched is not None:
        got = (f"{counted(fetched['shards'], 'shard')}, "
               f"{counted(fetched['records'], 'record')} from "
               f"{fetched['remote']}, merged" if fetched["records"]
               else f"no new memory on {fetched['remote']}"
               + (f" ({counted(fetched['shards'], 'shard')} took its commits, no record new "
                  "here)" if fetched["shards"] else ""))
        if fetched["records"] and waiting:
            got += f" (shown once `{waiting['run']}` brings .ynm/config.json)"
        lines.append(f"  {'fetched':<10}{got}")
    if r["hooksInstalled"]:
        lines.append(f"  {'hooks':<10}{', '.join(r['hooksInstalled'])}")
    for note in r["notes"]:
        lines.append(f"  {'note':<10}{note}")
    for c in r["clients"]:
        lines.append(f"  {'client':<10}{c['client']}: {', '.join(c['applied']) or 'unchanged'}")
    for c in r["clients"]:
        lines += [f"  {'run:':<10}{line}" for line in c.get("run", [])]
    if r.get("also"):
        names = ", ".join(r["also"])
        lines.append(f"  {'also':<10}{names} on this machine but not used here; add one with "
                     "`ynm client install <name>`")
    if r["commit"]:
        lines.append(f"  {'commit':<10}{' '.join(r['commit'])}")
        lines.append(f"  {'':<10}the team shares these; commit and push them so every clone gets "
                     "the same setup")
    if r["local"]:
        lines.append(f"  {'local':<10}{' '.join(r['local'])} (yours only; excluded from git)")
    lines.append(f"  {'memory':<10}lives in git notes, not in files; `ynm sync` and the pre-push "
                 "hook share it")
    if waiting:  # no project mount until the committed config is in the work tree
        lines.append(f"next: `{waiting['run']}`, then `ynm list` and `ynm status`")
    elif any(n.startswith("no remote ") for n in r["notes"]) or r.get("fetched") is not None:
        lines.append('next: `ynm remember --type semantic --content "..."` and `ynm status`')
    else:  # a clone: teammates may have pushed memory already
        lines.append("next: `ynm sync` to bring in the memory teammates already pushed, then "
                     '`ynm remember --type semantic --content "..."` and `ynm status`')
    return "\n".join(lines)


@click.command()
@click.option("--personal", is_flag=True, default=False, help="Create or check the personal store only.")
@click.option("--bare", "bare_path", type=click.Path(path_type=Path),
              help="Create or adopt a dedicated bare memory repository at this path.")
@click.option("--remote", help="Remote to share memory with (default origin); kept in "
              ".ynm/config.json for sync.")
@click.option("--hooks/--no-hooks", default=None, help="Install the pre-push hook that runs `ynm sync` (default: config hooks, true).")
@click.option("--anchor", help="Anchor commit id (needed on shallow clones).")
@click.option("--clients/--no-clients", default=True,
              help="Set up the agent clients this repository already uses (.claude/ or "
                   ".mcp.json, opencode.json(c), .pi/).")
@click.option("--client", multiple=True,
              type=click.Choice(["claude-code", "copilot-cli", "opencode", "pi"]),
              help="Set up exactly these agent clients, detected or not.")
@common_options
def init(as_json: bool, cwd: Path | None, personal: bool, bare_path: Path | None,
         remote: str | None, hooks: bool | None, anchor: str | None, clients: bool,
         client: tuple[str, ...]) -> None:
    """Set up ynm in this repository.

    Fetches the memory the remote already holds (fetch and merge, no push), chooses the
    anchor (the team's, else the root commit), writes .ynm/config.json and keeps the cache
    out of git. Changes no branch, tag or tracked file; a repository with no commits gets an
    empty root commit "ynm: root" on its current branch to serve as the anchor.

    \b
    Examples:
      ynm init                      # project memory in this repository
      ynm init --bare ~/.ynm/org.git
      ynm init --personal
    """
    from ynm.service.config import load_config
    from ynm.service.setup import init_project, init_store

    where = cwd or Path.cwd()
    if bare_path is not None:
        result = init_store(bare_path if bare_path.is_absolute() else where / bare_path)
        emit(result, as_json, lambda r: (
            f"{'created' if r['created'] else 'adopted'} bare memory repo {r['repo']} "
            f"(anchor {r['anchor'][:12]})"))
        return
    # --anchor replaces an unusable anchor in .ynm/config.json, so it must not refuse to load
    loaded = load_config(where, replacing_anchor=anchor is not None and not personal)
    if personal:
        result = init_store(loaded.config.personal_store)
        emit(result, as_json, lambda r: (
            f"personal store {'created' if r['created'] else 'ready'} at {r['repo']}"))
        return
    command, note = ynm_command()
    result = init_project(loaded, where, anchor=anchor, remote=remote, hooks=hooks,
                          clients=clients, client_names=client, command=command,
                          command_note=note)
    emit(result, as_json, format_init)
    for text in result["warnings"]:  # a fetch that failed: init itself succeeded
        say(f"warning: {text}", err=True)
