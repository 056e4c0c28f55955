"""``ynm import``: records from a JSONL file or stdin (reference/cli.md §4.9)."""

from __future__ import annotations

import itertools
import sys
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import Any, BinaryIO

import click

from ynm.cli._common import common_options, emit, open_ynm

SHOWN_PROBLEMS = 10  # problems listed in the human line; --json lists them all
CHUNK_LINES = 50_000  # lines read and appended at a time (about 50,000 records)


def format_import(r: dict[str, Any]) -> str:
    """``imported <n> record(s)[; skipped <k>: <problem>; <problem>[; ... and <m> more]]``:
    at most :data:`SHOWN_PROBLEMS` problems, each cut to 200 characters."""
    text = f"imported {r['imported']} record(s)"
    problems = r["problems"]
    if problems:
        shown = [p if len(p) <= 200 else p[:197] + "..." for p in problems[:SHOWN_PROBLEMS]]
        more = len(problems) - len(shown)
        text += f"; skipped {len(problems)}: " + "; ".join(shown)
        if more:
            text += f"; ... and {more} more (--json lists them all)"
    return text


@click.command("import")
@click.argument("file", required=False, type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--mount", help="Put every record in this mount (its level must match).")
@common_options
def import_(as_json: bool, cwd: Path | None, file: Path | None, mount: str | None) -> None:
    """Import records in the export format from FILE or stdin.

    Ids are kept; records already present are skipped. A bad line, or a record that is refused
    (redaction, a namespace that would collide with another's shard refs, no mount of its
    level), is skipped and reported with its line number; the rest are imported. When every
    record is refused, nothing is written and the command fails with the first refusal.

    \b
    Example:
      ynm import team.jsonl
      ynm export | ssh other-host ynm import
    """
    from ynm.cli._common import not_utf8_problem
    from ynm.errors import BatchRefused, InvalidInput

    with (file.open("rb") if file is not None else nullcontext(sys.stdin.buffer)) as stream:
        chunks = line_chunks(stream, CHUNK_LINES)
        first = next(chunks, b"")
        if first[:4].startswith((b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")):
            # UTF-16/32 would read as one bad line of mojibake: say what the file is instead
            raise InvalidInput(f"input: {not_utf8_problem(first, str(file or 'standard input'))}")
        with open_ynm(cwd) as ynm:
            try:
                result = ynm.import_chunks(itertools.chain([first], chunks), mount)
            except BatchRefused as err:
                # Nothing was written: print what was skipped, then fail with the first refusal.
                emit(err.result, as_json, format_import)
                raise
    emit(result, as_json, format_import)


def line_chunks(stream: BinaryIO, lines: int) -> Iterator[bytes]:
    """The bytes of ``stream`` in parts of ``lines`` whole lines (the last part may be
    shorter and lack a final newline), so an import holds one part at a time."""
    while True:
        part = b"".join(itertools.islice(stream, lines))
        if not part:
            return
        yield part
