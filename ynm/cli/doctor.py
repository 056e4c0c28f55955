"""``ynm doctor``: offline health checks (reference/cli.md §4.4)."""

from __future__ import annotations

from pathlib import Path

import click

from ynm.cli._common import common_options, emit


@click.command()
@common_options
def doctor(as_json: bool, cwd: Path | None) -> None:
    """Check git, configuration, stores, refspecs, hooks, sign-ins, agent clients and caches.

    Offline and read-only: nothing is fetched, written or rebuilt. One line per check, `ok`,
    `warn` or `FAIL`, with the command that fixes a failing one. Exits 1 only when an
    error-level check fails.

    \b
    Examples:
      ynm doctor
      ynm doctor --json
    """
    from ynm.doctor import format_report
    from ynm.service.doctor import doctor as run

    result = run(cwd or Path.cwd())
    emit(result, as_json, format_report)
    if not result["ok"]:
        click.get_current_context().exit(1)
