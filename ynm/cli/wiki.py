"""``ynm wiki build|ingest``: the markdown projection of a mount (reference/cli.md §4.29)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ynm.cli._common import (
    SILENT_HELP,
    check_mount,
    common_options,
    emit,
    json_on_failure,
    open_ynm,
    say,
)


@click.group()
def wiki() -> None:
    """Build the markdown wiki of a store, or ingest an edited memory page."""


def format_build(results: list[dict[str, Any]]) -> str:
    """One line per mount (reference/cli.md §4.29): ``<mount>: <written> pages -> <location>``,
    plus `` in <repo>`` for the orphan-branch target, whose location is a ref."""
    return "\n".join(f"{r['mount']}: {r['written']} pages -> {r['location']}"
                     + (f" in {r['repo']}" if "repo" in r else "") for r in results)


@wiki.command()
@click.option("--mount", help="Only this mount.")
@click.option("--target", type=click.Choice(("directory", "orphan-branch")), default="directory",
              show_default=True, help="Write to a folder or to the branch ynm/wiki.")
@click.option("--dir", "folder", type=click.Path(path_type=Path, file_okay=False),
              help="Folder for the directory target (default <repo>/.ynm/wiki for the project "
                   "mount, $YNM_HOME/wiki/<mount> for others).")
@common_options(quiet_help=SILENT_HELP)
def build(as_json: bool, quiet: bool, cwd: Path | None, mount: str | None, target: str,
          folder: Path | None) -> None:
    """Write index, log, memory, entity and topic pages for each mount.

    \b
    Example:
      ynm wiki build --mount project --target orphan-branch

    Each line names where the pages went: the folder, or the ynm/wiki branch and the
    repository it is in (the personal store's is $YNM_HOME/store.git). Without --mount,
    a note says when the project was left out, and why.
    """
    with open_ynm(cwd) as ynm:
        check_mount(ynm, mount)
        with json_on_failure(as_json):  # a later mount failed: the wikis built before it
            results = ynm.wiki_build(mount, target, folder)
        absent = ynm.project_absent() if mount is None else None
    if quiet:
        return
    emit(results, as_json, format_build)
    if absent is not None:
        built = ", ".join(r["mount"] for r in results) or "no mount"
        say(f"note: no project wiki ({absent}); built the wiki of {built} only", err=True)


@wiki.command()
@click.argument("file", required=False, type=click.Path(path_type=Path, dir_okay=False))
@common_options(quiet_help=SILENT_HELP)
def ingest(as_json: bool, quiet: bool, cwd: Path | None, file: Path | None) -> None:
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
    if quiet:
        return
    emit(result, as_json, lambda r: f"superseded {r['memoryId']} from the edited page"
         if r["changed"] else f"no change for {r['memoryId']}")
