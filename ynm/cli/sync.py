"""``ynm sync``: fetch, merge and push memory through git remotes (reference/cli.md §4.26)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ynm.cli._common import common_options, emit, open_ynm, warn_unknown_mount


def format_sync(results: dict[str, Any]) -> str:
    """One line per mount: the skip reason, or ``fetched, merged, pushed, retries[, conflicts]``."""
    if not results:
        return "nothing to sync (no replicating distributed mount)"
    lines = []
    for mount, r in results.items():
        if r.get("skipped"):
            lines.append(f"{mount}: {r['skipped']}")
            continue
        line = (f"{mount}: fetched {r['fetched']}, merged {len(r['merged'])}, "
                f"pushed {len(r['pushed'])}, retries {r['retries']}")
        if r["conflicts"]:
            line += ", conflicts: " + "; ".join(r["conflicts"])
        lines.append(line)
    return "\n".join(lines)


@click.command()
@click.option("--remote", help="Remote name (default: the mount's, else config remote, origin).")
@click.option("--push/--no-push", default=True, show_default=True, help="Push after merging.")
@click.option("--pull/--no-pull", default=True, show_default=True, help="Fetch and merge first.")
@click.option("--dry-run", is_flag=True, default=False, help="Report what would change only.")
@click.option("--mount", help="Only this mount; needed (with --remote) for the personal store.")
@common_options
def sync(as_json: bool, cwd: Path | None, remote: str | None, push: bool, pull: bool,
         dry_run: bool, mount: str | None, quiet: bool) -> None:
    """Share memory: fetch, merge (cat_sort_uniq) and push the notes of each distributed mount.

    \b
    Examples:
      ynm sync
      ynm sync --no-push
      ynm sync --mount personal --remote backup

    --quiet prints nothing (no progress bar, no report) unless the sync failed.
    """
    from ynm.errors import Refused

    if mount == "personal" and not remote:
        raise Refused("syncing the personal store needs an explicit --remote: personal memory "
                      "never goes to a project's remote")
    with open_ynm(cwd) as ynm:
        warn_unknown_mount(ynm, mount)
        results = ynm.sync(mount, remote, push=push, pull=pull, dry_run=dry_run)
    failed = any(r["conflicts"] and not r.get("skipped") for r in results.values())
    if not (quiet and not failed):
        emit(results, as_json, format_sync)
    if failed:
        sys.exit(1)
