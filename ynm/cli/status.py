"""``ynm status``: mounts, shard counts, cache freshness, bad lines (reference/cli.md §4.24)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import click

from ynm.cli._common import common_options, emit, open_ynm
from ynm.model.words import counted


def format_status(s: dict[str, Any]) -> str:
    """The human block of cli.md §4.24 (mount columns as wide as their longest value), then
    ``vectors: on (<model>)`` or ``vectors: off (<why>)``, then any bad lines, one per line.
    A cache that was stale when status started reads ``index fresh (<n>), caught up now
    (<why it was behind>)``: status brought it up to date before counting (Ynm.status), so
    ``<n>`` is what it holds now and the line says that one thing (the reference's ``index
    stale (<n>)``, next to a count taken after catching up, would say two: see
    :func:`behind_words`)."""
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
                        f"index fresh ({e['indexed']}), caught up now "
                        f"({behind_words(e.get('reason'))})")
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
            cols.append("anchor unusable: refuses writes (see the warning)")
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


_SHARD_COUNTS = re.compile(r"(\d+) shards in log, (\d+) indexed")


def behind_words(reason: str | None) -> str:
    """Why a cache was behind its notes before status caught it up, in the past tense, from
    the JSON ``reason`` (reference/cli.md §7.7's words, which describe the cache as status found
    it): ``only <m> of the log's <n> shards were indexed`` (``<n> shards in log, <m> indexed``,
    e.g. after an import stopped between writing its notes and indexing them; a bare ``<m>
    indexed`` beside the memories now counted would read as a second count), ``it held <m>
    shards, the log <n>``, ``shard <id> had changed``, ``it had never been built``, ``the
    anchor had changed``; any other reason as it is."""
    if not reason:
        return "it was behind the notes"
    counts = _SHARD_COUNTS.fullmatch(reason)
    if counts is not None:
        log, indexed = int(counts.group(1)), int(counts.group(2))
        if indexed < log:
            verb = "was" if indexed == 1 else "were"
            return f"only {indexed} of the log's {counted(log, 'shard')} {verb} indexed"
        return f"it held {counted(indexed, 'shard')}, the log {log}"
    if reason.startswith("shard ") and reason.endswith(" changed"):
        return reason.removesuffix(" changed") + " had changed"
    return {"never built": "it had never been built",
            "anchor changed": "the anchor had changed"}.get(reason, reason)


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
