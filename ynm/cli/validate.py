"""``ynm validate [dir]``: ynm's setup in the agent clients of a directory (reference/cli.md
§4.28)."""

from __future__ import annotations

from pathlib import Path

import click

from ynm.cli._common import common_options, emit


@click.command()
@click.argument("folder", metavar="[DIR]", required=False,
                type=click.Path(exists=True, file_okay=False, path_type=Path))
@common_options
def validate(as_json: bool, cwd: Path | None, folder: Path | None) -> None:
    """Check ynm's server, guidance and hooks in the agent clients a directory uses.

    DIR (default: --cwd or the current directory) is a ynh harness or a project; the
    clients are those whose files are there. Exits 1 when a client has a problem, or when
    there is nothing to validate.

    \b
    Examples:
      ynm validate
      ynm validate ../my-harness --json
    """
    from ynm.doctor.clients import format_validation
    from ynm.service.doctor import validate as run

    here = cwd or Path.cwd()
    result = run(folder or here, here)
    emit(result, as_json, format_validation)
    if not result["ok"]:
        click.get_current_context().exit(1)
