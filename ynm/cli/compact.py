"""``ynm compact``: write each mount's snapshot, the state a cold cache starts from."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ynm.cli._common import check_mount, common_options, emit, json_on_failure, open_ynm
from ynm.model.words import counted


def format_compact(results: list[dict[str, Any]]) -> str:
    """One line per mount (docs/cli.md "ynm compact"): ``<mount>: snapshot <commit[:12]>
    written (<m> memories, <r> records, <s> shards, <bytes> bytes)``, or ``<mount>: snapshot
    <commit[:12]> unchanged (nothing new since it was written)``, or ``<mount>: nothing to
    compact (no records)``."""
    if not results:
        return "no mount to compact"
    lines = []
    for r in results:
        if r["commit"] is None:
            lines.append(f"{r['mount']}: nothing to compact (no records)")
            continue
        head = f"{r['mount']}: snapshot {r['commit'][:12]}"
        if r["written"]:
            lines.append(f"{head} written ({counted(r['memories'], 'memory', 'memories')}, "
                         f"{counted(r['records'], 'record')}, {counted(r['shards'], 'shard')}, "
                         f"{counted(r['bytes'], 'byte')})")
        else:
            lines.append(f"{head} unchanged (nothing new since it was written)")
    return "\n".join(lines)


@click.command()
@click.option("--mount", help="Only this mount.")
@common_options
def compact(as_json: bool, cwd: Path | None, mount: str | None, quiet: bool) -> None:
    """Write each mount's folded state as a snapshot a fresh cache starts from.

    The snapshot lives in refs/ynm/<level>/snapshots/; the notes are not changed.
    `ynm sync` shares it, so a new clone's first recall reads only what came after it.

    \b
    Examples:
      ynm compact
      ynm compact --mount project --json

    --quiet prints nothing unless it fails.
    """
    with open_ynm(cwd) as ynm:
        check_mount(ynm, mount)
        with json_on_failure(as_json):  # the snapshots written before a failure
            results = ynm.compact(mount)
    if not quiet or as_json:
        emit(results, as_json, format_compact)
