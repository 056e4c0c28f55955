"""``ynm reindex``: rebuild the caches from a full read of the logs (reference/cli.md §4.19)."""

from __future__ import annotations

from pathlib import Path

import click

from ynm.cli._common import check_mount, common_options, emit, json_on_failure, open_ynm


@click.command()
@click.option("--mount", help="Only this mount.")
@common_options
def reindex(as_json: bool, cwd: Path | None, mount: str | None) -> None:
    """Rebuild each mount's search cache from its git notes.

    \b
    Example:
      ynm reindex --mount project
    """
    with open_ynm(cwd) as ynm:
        check_mount(ynm, mount)
        with json_on_failure(as_json):  # Ctrl-C: the mounts rebuilt before it
            result = ynm.reindex(mount)
    emit(result, as_json,
         lambda r: "\n".join(f"{m}: {n} memories indexed" for m, n in r.items())
         or "no mount to reindex")
