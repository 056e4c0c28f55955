"""``ynm status``: mounts, shard counts, cache freshness, bad lines (reference/cli.md §4.24)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ynm.cli._common import common_options, emit, open_ynm
from ynm.model.words import counted


def format_status(s: dict[str, Any]) -> str:
    """The human block of cli.md §4.24 (mount columns as wide as their longest value), then
    ``vectors: on (<model>)`` or ``vectors: off (<why>)``, then any bad lines, one per line.
    A cache that was stale reads ``index stale (<n>), caught up now (<reason>)``: status
    brought it up to date (Ynm.status), which the reference's bare ``stale`` leaves unsaid."""
    lines = [f"ynm {s['version']}", f"config: {', '.join(s['config']) or 'defaults'}"]
    index = {e["mount"]: e for e in s["index"]}
    if not s["mounts"]:
        lines.append("  no mounts")
    # at least the reference's widths (10, 12, 10), wider when a value is: columns stay aligned
    wid, wlev, wpro = (max([n, *(len(m[k]) + 1 for m in s["mounts"])])
                       for k, n in (("id", 10), ("level", 12), ("provider", 10)))
    for m in s["mounts"]:
        head = f"  {m['id']:<{wid}} {m['level']:<{wlev}} {m['provider']:<{wpro}} "
        if "error" in m:
            err = m["error"]
            if err.startswith(f"{m['id']}: "):
                err = err[len(m["id"]) + 2:]
            lines.append(head + f"{m['location']}  ({err})")
            continue
        cols = [f"{m['shards']} shard(s)"]
        e = index.get(m["id"])
        if e is not None:
            cols.append(f"index fresh ({e['indexed']})" if e["fresh"] else
                        f"index stale ({e['indexed']}), caught up now ({e.get('reason')})")
        cols.append(m["location"])
        if m["provider"] == "mcp":
            cols.append("signed in" if m.get("signedIn") else "not signed in")
        if m.get("remote"):
            missing = " (not a git remote here: sync skips it)" if m.get("remoteMissing") else ""
            cols.append(f"remote {m['remote']}{missing}")
        if m.get("unmerged"):
            cols.append(f"{counted(m['unmerged'], 'shard')} fetched but not merged: run `ynm sync`")
        if m.get("badLines"):
            cols.append(counted(m["badLines"], "bad line"))
        if m.get("anchorProblem"):
            cols.append("anchor unusable: shows no memory, refuses writes (see the warning)")
        if e is not None and "vectors" in e:
            cols.append(counted(e["vectors"], "vector"))
        if e is not None and e.get("pendingVectors"):
            cols.append(f"{e['pendingVectors']} waiting to be embedded (by the next recall)")
        lines.append(head + "  ".join(cols))
    vec = s.get("vectors")
    if vec is not None:
        lines.append(f"vectors: on ({vec.get('model') or vec['embedder']})" if vec["enabled"]
                     else f"vectors: off ({vec.get('reason', 'unavailable')})")
    if s.get("problems"):
        lines.append("bad lines (skipped; every other record is read):")
        lines.extend(f"  {p}" for p in s["problems"])
    return "\n".join(lines)


@click.command()
@common_options
def status(as_json: bool, cwd: Path | None) -> None:
    """Show mounts, shard counts, cache freshness and bad lines.

    \b
    Example:
      ynm status
      ynm status --json
    """
    with open_ynm(cwd) as ynm:
        result = ynm.status()
    emit(result, as_json, format_status)
