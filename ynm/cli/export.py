"""``ynm export``: every record as JSONL on stdout (reference/cli.md §4.6)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ynm.cli._common import (
    DATETIME_HELP,
    check_mount,
    common_options,
    drop_none,
    open_ynm,
    say,
    scope_hint,
)

TYPES = ("working", "episodic", "semantic", "procedural", "reflective", "reference")
LEVELS = ("personal", "distributed")


@click.command()
@click.option("--level", type=click.Choice(LEVELS), help="Only mounts of this level.")
@click.option("--type", "type_", type=click.Choice(TYPES), help="Only shards of this type.")
@click.option("--namespace", help="Namespace prefix (whole segments).")
@click.option("--since", help="From this month on (whole month buckets): a month YYYY-MM, "
              f"e.g. 2026-11, or the month of {DATETIME_HELP}.")
@click.option("--until", help="Up to this month (whole month buckets): a month YYYY-MM, "
              f"e.g. 2026-11, or the month of {DATETIME_HELP}.")
@click.option("--needs-review/--no-needs-review", default=None,
              help="Accepted for compatibility; records are exported whole.")
@click.option("--mount", help="Only this mount.")
@common_options
def export(as_json: bool, cwd: Path | None, type_: str | None, needs_review: bool | None,
           **rest: Any) -> None:
    """Write every record, history and tombstones included, as JSONL.

    --json is accepted and ignored: the output is always JSONL.

    \b
    Example:
      ynm export --level distributed > team.jsonl
    """
    from ynm.model.inputs import ExportQuery, parse_input

    q = parse_input(ExportQuery, drop_none(type=type_, **rest))
    with open_ynm(cwd) as ynm:
        check_mount(ynm, q.mount)
        for line in ynm.export(q):
            sys.stdout.write(line + "\n")
        conflict = scope_hint(ynm, q.mount, q.level)
    if conflict is not None:  # nothing was read
        say(conflict, err=True)
