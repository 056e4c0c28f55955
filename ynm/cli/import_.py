"""``ynm import``: records from a JSONL file or stdin (reference/cli.md §4.9)."""

from __future__ import annotations

import io
import itertools
import shlex
import sys
from collections.abc import Iterator
from contextlib import nullcontext
from pathlib import Path
from typing import Any, BinaryIO

import click

from ynm.cli._common import common_options, emit, json_on_failure, open_ynm

SHOWN_PROBLEMS = 10  # problems listed in the human line; --json lists them all
CHUNK_LINES = 50_000  # lines read and appended at a time (about 50,000 records)


def format_import(r: dict[str, Any]) -> str:
    """``imported <n> record(s)[; <a> already present][; <r> repeated in the input]
    [; skipped <k>: <problem>; <problem>[; ... and <m> more]]``: the reference's line
    (reference/cli.md §4.9) with what was left out because the store had it, or an earlier
    line of the input had its id; at most :data:`SHOWN_PROBLEMS` problems, each cut to 200
    characters."""
    text = f"imported {r['imported']} record(s)"
    if r.get("alreadyPresent"):
        text += f"; {r['alreadyPresent']} already present"
    if r.get("repeated"):
        text += f"; {r['repeated']} repeated in the input"
    problems = r["problems"]
    if problems:
        shown = [p if len(p) <= 200 else p[:197] + "..." for p in problems[:SHOWN_PROBLEMS]]
        more = len(problems) - len(shown)
        text += f"; skipped {len(problems)}: " + "; ".join(shown)
        if more:
            text += f"; ... and {more} more (--json lists them all)"
    return text


@click.command("import")
@click.argument("file", required=False,
                type=click.Path(exists=True, dir_okay=False, allow_dash=True, path_type=Path))
@click.option("--mount", help="Put every record in this mount (its level must match).")
@common_options
def import_(as_json: bool, cwd: Path | None, file: Path | None, mount: str | None) -> None:
    """Import records in the export format from FILE or stdin (no FILE, or -).

    FILE (or stdin) may be gzip-compressed (told by its first bytes, whatever its name);
    zstd, bzip2, xz or zip input is refused at once with the command that decompresses it.
    Ids are kept; records already present are skipped. A bad line, or a record that is refused
    (redaction, a namespace that would collide with another's shard refs, no mount of its
    level), is skipped and reported with its line number; the rest are imported. When every
    record is refused, nothing is written and the command fails with the first refusal.
    Records the store already holds are counted in the result (``; <n> already present``).
    An input with no line to read (empty, blank lines, a byte order mark) imports nothing and
    says so on stderr; one with lines but no record in them fails (exit 2). Ctrl-C keeps what
    was imported and says how much (exit 130); running the import again adds the rest.

    \b
    Example:
      ynm import team.jsonl
      ynm export | ssh other-host ynm import
    """
    from ynm.cli._common import say
    from ynm.errors import BatchRefused

    if file is not None and str(file) == "-":
        file = None  # standard input, as with no FILE
    where = str(file or "standard input")
    # opened before a line is read: a store that cannot take the records fails first
    with open_ynm(cwd) as ynm, (file.open("rb") if file is not None
                                else nullcontext(sys.stdin.buffer)) as raw:
        stream = uncompressed(raw, where, str(file) if file is not None else None)
        seen = SeenInput(where)
        try:
            # --json: the result so far also when it fails part way (Ctrl-C, a lock kept)
            with json_on_failure(as_json):
                result = ynm.import_chunks(seen.chunks(gzip_checked(
                    line_chunks(stream, CHUNK_LINES), where)), mount)
        except BatchRefused as err:
            # Nothing was written: print what was skipped, then fail with the first refusal.
            if not as_json:
                emit(err.result, as_json, format_import)
            seen.name_binary(err)
            raise
    emit(result, as_json, format_import)
    if seen.nothing is not None:
        say(f"nothing to import ({where}: {seen.nothing})", err=True)


class SeenInput:
    """What an import's input held, seen as its parts pass to the service: it refuses UTF-16
    and UTF-32 text before the first part is parsed, tells an input with no line to read
    from one whose lines held no record, and names an input that is not text at all.
    ``where``: the file's path, or ``standard input``."""

    def __init__(self, where: str) -> None:
        self.where = where
        self.size = 0  # bytes read
        self.text = False  # whether any byte other than a BOM and whitespace was read
        self.first = b""  # the first part's first 4 KiB, to name a binary input

    def chunks(self, parts: Iterator[bytes]) -> Iterator[bytes]:
        """``parts``, unchanged, noting what they hold.

        Raises:
            InvalidInput: (exit 2) the input starts with a UTF-16 or UTF-32 byte order mark:
                it would read as one bad line of mojibake, so say what it is instead."""
        from ynm.cli._common import not_utf8_problem
        from ynm.errors import InvalidInput

        for part in parts:
            if not self.size:
                self.first = part[:4096]
                if part[:4].startswith((b"\xff\xfe", b"\xfe\xff", b"\x00\x00\xfe\xff")):
                    raise InvalidInput(f"input: {not_utf8_problem(part, self.where)}")
            self.size += len(part)
            self.text = self.text or bool(part.replace(BOM_BYTES, b"").strip())
            yield part

    @property
    def nothing(self) -> str | None:
        """Why there was nothing to import (``empty``, ``only a byte order mark``, ``only
        blank lines``), or None when the input had something other than blank lines."""
        if self.text:
            return None
        if not self.size:
            return "empty"
        if not self.first.replace(BOM_BYTES, b""):
            return "only a byte order mark"
        return "only blank lines"

    def name_binary(self, err: Any) -> None:
        """Give the refusal ``err`` (BatchRefused) of an input with no valid record the hint
        that the input is not UTF-8 text, when its start says so (a binary file reads as
        lines of invalid JSON): ``<file> is not UTF-8 text (invalid start byte at byte 24);
        ynm imports the JSONL ynm export writes``."""
        from ynm.cli._common import not_utf8_problem

        problem = not_utf8_problem(self.first, self.where)
        if problem is not None and str(err).startswith("invalid input: input: no valid record"):
            err.hint = f"{problem}; ynm imports the JSONL ynm export writes"


BOM_BYTES = "\ufeff".encode()
GZIP_MAGIC = b"\x1f\x8b"
# Compressed formats told by their first bytes that import does not read, with the command
# that writes their content to standard output (``{file}`` is the file named, if any).
OTHER_COMPRESSION = (
    (b"\x28\xb5\x2f\xfd", "zstd", "unzstd -c"),
    (b"\xfd7zXZ\x00", "xz", "unxz -c"),
    (b"BZh", "bzip2", "bunzip2 -c"),
    (b"PK\x03\x04", "zip", "unzip -p"),
)
MAGIC_BYTES = 6  # the longest of the magic numbers above


class _Prefixed(io.RawIOBase):
    """``head`` (bytes already read from ``rest``), then the rest of ``rest``: a stream read
    from its start again after its first bytes were looked at (standard input cannot seek)."""

    def __init__(self, head: bytes, rest: BinaryIO) -> None:
        self.head, self.rest = head, rest

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        if self.head:
            n = min(len(buffer), len(self.head))
            buffer[:n] = self.head[:n]
            self.head = self.head[n:]
            return n
        data = self.rest.read1(len(buffer)) if hasattr(self.rest, "read1") else \
            self.rest.read(len(buffer))
        buffer[:len(data)] = data
        return len(data)


def uncompressed(raw: BinaryIO, where: str, file: str | None) -> BinaryIO:
    """The bytes of ``raw`` to import, told by its first bytes, not by its name: gzip is
    decompressed as it is read (concatenated members too); plain input passes as it is.
    ``where``: the file's path or ``standard input``; ``file``: the path given, if any.

    Raises:
        InvalidInput: (exit 2, before a record is read) the input is zstd, xz, bzip2 or zip:
            ``input: <where> is zstd-compressed; ynm import reads JSONL, plain or gzip``
            with a hint giving the command, ``unzstd -c <file> | ynm import -``."""
    import gzip

    from ynm.errors import InvalidInput

    head = b""
    while len(head) < MAGIC_BYTES:
        more = raw.read(MAGIC_BYTES - len(head))
        if not more:
            break
        head += more
    for magic, name, command in OTHER_COMPRESSION:
        if head.startswith(magic):
            err = InvalidInput(f"input: {where} is {name}-compressed; ynm import reads "
                               "JSONL, plain or gzip")
            err.hint = ("decompress it first: " + (
                f"{command} {shlex.quote(file)} | ynm import -" if file is not None
                else f"<command> | {command} | ynm import -") + "; nothing was imported")
            raise err
    stream = io.BufferedReader(_Prefixed(head, raw))
    if head.startswith(GZIP_MAGIC):
        return gzip.GzipFile(fileobj=stream, mode="rb")  # type: ignore[return-value]
    return stream


def gzip_checked(parts: Iterator[bytes], where: str) -> Iterator[bytes]:
    """``parts``, with a gzip input that is cut short or damaged said in one line.

    Raises:
        InvalidInput: (exit 2) the gzip data ends early or is damaged: ``input: <where>: the
            gzip data is damaged or cut short (<why>)``; the parts before it were imported,
            and the hint says which lines (``lines 1 to <n> were imported``, or ``nothing was
            imported``) and that a run on a whole copy adds the rest."""
    import gzip
    import zlib

    from ynm.errors import InvalidInput

    lines = 0  # lines of the parts handed on, each imported before the next is read
    try:
        for part in parts:
            yield part
            lines += part.count(b"\n")
    except (EOFError, gzip.BadGzipFile, zlib.error) as exc:
        err = InvalidInput(f"input: {where}: the gzip data is damaged or cut short ({exc})")
        done = (f"lines 1 to {lines} were imported; " if lines
                else "nothing was imported; ")
        err.hint = done + ("import a whole copy to add the rest (records already there are "
                           "skipped)" if lines else "import a whole copy")
        raise err from None


def line_chunks(stream: BinaryIO, lines: int) -> Iterator[bytes]:
    """The bytes of ``stream`` in parts of ``lines`` whole lines (the last part may be
    shorter and lack a final newline), so an import holds one part at a time."""
    while True:
        part = b"".join(itertools.islice(stream, lines))
        if not part:
            return
        yield part
