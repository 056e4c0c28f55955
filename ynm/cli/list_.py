"""``ynm list``: folded memories, newest first (reference/cli.md §4.11)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ynm.cli._common import (
    DATETIME_HELP,
    check_mount,
    common_options,
    drop_none,
    emit,
    note_unmerged,
    open_ynm,
    say,
    scope_hint,
)

TYPES = ("working", "episodic", "semantic", "procedural", "reflective", "reference")
LEVELS = ("personal", "distributed")
DEFAULT_LIMIT = 50  # memories shown when neither --limit nor --all is given


def format_memories(memories: list[dict[str, Any]]) -> str:
    """A header line ``ID  TYPE  LEVEL  NAMESPACE  SUMMARY`` then one aligned row per memory
    (see :mod:`ynm.cli._table`; the summary prefixed ``* `` when pinned, ``[tombstoned] `` when
    forgotten, ``[expired] `` for working memory past its ttl), or ``no memories``. The
    reference pads fixed widths with no header (reference/cli.md §4.11); docs/cli.md says so."""
    from ynm.cli._table import by_author, marks, table

    if not memories:
        return "no memories"
    rows = [(m["memoryId"], m["type"], m["level"], m["namespace"],
             marks(m) + (m.get("summary") or m["current"].get("summary", "")) + by_author(m))
            for m in memories]
    return "\n".join(table(("ID", "TYPE", "LEVEL", "NAMESPACE", "SUMMARY"), rows))


@click.command("list")
@click.option("--level", type=click.Choice(LEVELS), help="Only mounts of this level.")
@click.option("--type", "type_", type=click.Choice(TYPES), help="Only this type.")
@click.option("--namespace", help="Namespace prefix (whole segments).")
@click.option("--since", help=f"updatedAt at or after this: {DATETIME_HELP}.")
@click.option("--until", help=f"updatedAt at or before this: {DATETIME_HELP}.")
@click.option("--include-tombstoned/--no-include-tombstoned", default=False,
              help="Include forgotten memories.")
@click.option("--needs-review/--no-needs-review", default=None,
              help="Only flagged (or, negated, only unflagged) memories.")
@click.option("--limit", type=int,
              help=f"At most this many (1..10000; default {DEFAULT_LIMIT}).")
@click.option("--all", "all_", is_flag=True, default=False, help="Every match, no limit.")
@click.option("--mount", help="Only this mount.")
@common_options
def list_(as_json: bool, cwd: Path | None, type_: str | None, limit: int | None, all_: bool,
          **rest: Any) -> None:
    """List folded memories across mounts, newest first.

    Shows the newest 50 unless --limit or --all says otherwise, and says on stderr when more
    exist.

    \b
    Example:
      ynm list --namespace team/payments --limit 20
    """
    from ynm.model.inputs import ListQuery, parse_input

    if all_ and limit is not None:
        raise click.UsageError("give --limit or --all, not both")
    q = parse_input(ListQuery, drop_none(type=type_, limit=limit, **rest))
    default = limit is None and not all_
    if default:
        q.limit = DEFAULT_LIMIT + 1  # one more, to know whether more exist
    with open_ynm(cwd) as ynm:
        check_mount(ynm, q.mount)
        memories = ynm.list(q)
        note_unmerged(ynm)
        conflict = None if memories else scope_hint(ynm, q.mount, q.level)
    more = default and len(memories) > DEFAULT_LIMIT
    if more:
        memories = memories[:DEFAULT_LIMIT]
    emit(memories, as_json, format_memories)
    if conflict is not None:
        say(conflict, err=True)
    if more:
        say(f"note: showing the newest {DEFAULT_LIMIT}; more exist (use --limit N or "
                   "--all)", err=True)
