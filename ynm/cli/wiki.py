"""``ynm wiki build|ingest``: the markdown projection of a mount (reference/cli.md §4.29)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ynm.cli._common import common_options, emit, open_ynm, warn_unknown_mount


@click.group()
def wiki() -> None:
    """Build the markdown wiki of a store, or ingest an edited memory page."""


@wiki.command()
@click.option("--mount", help="Only this mount.")
@click.option("--target", type=click.Choice(("directory", "orphan-branch")), default="directory",
              show_default=True, help="Write to a folder or to the branch ynm/wiki.")
@click.option("--dir", "folder", type=click.Path(path_type=Path, file_okay=False),
              help="Folder for the directory target (default <repo>/.ynm/wiki for the project "
                   "mount, $YNM_HOME/wiki/<mount> for others).")
@common_options
def build(as_json: bool, cwd: Path | None, mount: str | None, target: str,
          folder: Path | None) -> None:
    """Write index, log, memory, entity and topic pages for each mount.

    \b
    Example:
      ynm wiki build --mount project --target orphan-branch
    """
    with open_ynm(cwd) as ynm:
        warn_unknown_mount(ynm, mount)
        results = ynm.wiki_build(mount, target, folder)
    emit(results, as_json, lambda rs: "\n".join(
        f"{r['mount']}: {r['written']} pages -> {r['location']}" for r in rs))


@wiki.command()
@click.argument("file", required=False, type=click.Path(path_type=Path, dir_okay=False))
@common_options
def ingest(as_json: bool, cwd: Path | None, file: Path | None) -> None:
    """Turn an edited memory page into a new version of that memory.

    \b
    Example:
      ynm wiki ingest .ynm/wiki/memories/01K....md
    """
    from ynm.errors import InvalidInput, YnmError

    if file is None:
        raise InvalidInput("file required")
    try:
        text = file.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise YnmError(f"cannot read {file}: {err}") from None
    with open_ynm(cwd) as ynm:
        result: dict[str, Any] = ynm.wiki_ingest(text)
    emit(result, as_json, lambda r: f"superseded {r['memoryId']} from the edited page"
         if r["changed"] else f"no change for {r['memoryId']}")
