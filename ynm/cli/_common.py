"""What every command shares: the common flags, output, input parsing and progress."""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from ynm.service.ynm import Ynm

F = Callable[..., Any]


CWD_KEY = "ynm.cwd"  # where the group's -C/--cwd leaves its value for the command


def inherit_cwd(ctx: click.Context, _param: click.Parameter, value: Path | None) -> Path | None:
    """A command's ``--cwd``, else the one given before the command name."""
    return value if value is not None else ctx.find_root().meta.get(CWD_KEY)


def cwd_option(**kwargs: Any) -> Callable[[F], F]:
    """``-C``/``--cwd DIR`` (as ``git -C``): behave as if started in DIR, which must exist."""
    return click.option("-C", "--cwd", type=click.Path(exists=True, file_okay=False,
                                                         path_type=Path),
                        default=None, help="Behave as if started in this directory.", **kwargs)


def common_options(fn: F) -> F:
    """Add ``--json`` and ``-C``/``--cwd`` (reference/cli.md §1.2); ``--cwd`` may also stand
    before the command name (``ynm -C ../other recall deploys``)."""
    fn = cwd_option(callback=inherit_cwd)(fn)
    fn = click.option("--json", "as_json", is_flag=True, default=False,
                      help="Print the result as one JSON document.")(fn)
    return fn


def open_ynm(cwd: Path | None) -> Ynm:
    """Open the service for ``cwd`` (default: the current directory). When the command ends,
    each of the service's :attr:`~ynm.service.ynm.Ynm.warnings` is printed on stderr as
    ``warning: <text>`` (a recall that fell back to full text, a cache update that failed
    after a committed write); they never change the exit code."""
    from ynm.service.ynm import Ynm

    ynm = Ynm.open(cwd or Path.cwd())
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.call_on_close(lambda: print_warnings(ynm))
    return ynm


def print_warnings(ynm: Ynm) -> None:
    """Print the service's warnings on stderr, ``warning: <text>`` each, once."""
    for text in ynm.warnings:
        click.echo(f"warning: {text}", err=True)
    ynm.warnings.clear()


def note_unmerged(ynm: Ynm) -> None:
    """When ``git fetch`` brought teammates' shards that ``ynm sync`` has not merged (a fresh
    clone looks empty until then), say so on stderr after the output:
    ``note: <n> shard(s) fetched but not merged into <mount>: run `ynm sync```. Counted now,
    while the service is open; printed when the command ends."""
    lines = [f"note: {n} shard{'' if n == 1 else 's'} fetched but not merged into {mount}: "
             "run `ynm sync`" for mount, n in ynm.unmerged().items()]
    ctx = click.get_current_context(silent=True)
    if lines and ctx is not None:
        ctx.call_on_close(lambda: [click.echo(line, err=True) for line in lines])


def warn_unknown_mount(ynm: Ynm, mount_id: str | None) -> None:
    """Reads with an unknown ``--mount`` give an empty result and exit 0, as the reference
    does (cli.md §8.27); say so on stderr so a typo does not pass for an empty store."""
    if mount_id is not None and ynm.mount(mount_id) is None:
        have = ", ".join(m.id for m in ynm.mounts) or "none"
        click.echo(f'warning: no mount "{mount_id}" (have: {have}); nothing to read', err=True)


def _js_number(x: float | int) -> str:
    from ynm.model.jsonl import js_number

    return js_number(x)


def dumps_pretty(value: Any, indent: int = 0) -> str:
    """JSON as JavaScript's ``JSON.stringify(value, null, 2)`` writes it (cli.md §1.5)."""
    pad = "  " * (indent + 1)
    end = "  " * indent
    if isinstance(value, dict):
        if not value:
            return "{}"
        items = [f"{pad}{json.dumps(str(k), ensure_ascii=False)}: {dumps_pretty(v, indent + 1)}"
                 for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + end + "}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[]"
        return "[\n" + ",\n".join(pad + dumps_pretty(v, indent + 1) for v in value) + "\n" + end + "]"
    if value is None or value is True or value is False:
        return json.dumps(value)
    if isinstance(value, (int, float)):
        if isinstance(value, float) and not math.isfinite(value):
            return "null"
        return _js_number(value)
    return json.dumps(value, ensure_ascii=False)


def emit(value: Any, as_json: bool, human: Callable[[Any], str]) -> None:
    """Print ``value`` as pretty JSON, or its human text, with a trailing newline."""
    if as_json:
        click.echo(dumps_pretty(value))
    else:
        text = human(value)
        click.echo(text)


def split_tags(values: tuple[str, ...] | list[str]) -> list[str]:
    """Repeatable string flags also split on commas, trimmed, empties dropped (cli.md §1.3)."""
    out = []
    for v in values:
        out.extend(part.strip() for part in v.split(",") if part.strip())
    return out


def json_flag(name: str, raw: str | None) -> Any:
    """Parse a JSON-valued flag.

    Raises:
        InvalidInput: ``invalid input: --<name>: not valid JSON (<detail>)``.
    """
    from ynm.errors import InvalidInput

    if raw is None:
        return None
    try:
        return json.loads(raw)
    except ValueError as err:
        raise InvalidInput(f"--{name}: not valid JSON ({err})") from None


def number_flag(name: str, raw: str | None) -> float | None:
    """A numeric flag (cli.md §1.3).

    Raises:
        InvalidInput: ``invalid input: <name>: expected a number`` for anything that is not a
            finite number.
    """
    from ynm.errors import InvalidInput

    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise InvalidInput(f"{name}: expected a number, got {raw!r}")
    return value


def content_input(content: str | None, content_file: Path | None,
                  required: bool = True) -> str | None:
    """The content of a write: ``--content TEXT``, ``--content -`` (standard input) or
    ``--content-file PATH``, read as UTF-8 (a leading byte-order mark dropped), so long and
    non-ASCII text need not pass through a shell argument.

    Raises:
        click.UsageError: both or (when ``required``) neither given (exit 2).
        InvalidInput: the bytes are not UTF-8 (exit 2).
    """
    from ynm.errors import InvalidInput

    if content is not None and content_file is not None:
        raise click.UsageError("give --content or --content-file, not both")
    if content_file is not None:
        raw, where = content_file.read_bytes(), "--content-file"
    elif content == "-":
        raw, where = sys.stdin.buffer.read(), "--content -"
    elif content is None and required:
        raise click.UsageError("missing --content (text, or - for standard input) or "
                               "--content-file")
    else:
        return content
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as err:
        raise InvalidInput(f"content: {where} is not UTF-8 text ({err.reason} at byte "
                           f"{err.start})") from None


def content_options(fn: F) -> F:
    """``--content`` (text, or ``-`` for standard input) and ``--content-file``."""
    fn = click.option("--content-file", type=click.Path(exists=True, dir_okay=False,
                                                         path_type=Path),
                      help="Read the content from this file (UTF-8).")(fn)
    return click.option("--content", help="The memory (markdown); - reads standard input.")(fn)


def drop_none(**kwargs: Any) -> dict[str, Any]:
    """Keyword arguments without the ones left unset (None)."""
    return {k: v for k, v in kwargs.items() if v is not None}


class TerminalProgress:
    """Progress for long work, written to stderr only when stderr is a terminal."""

    def __init__(self) -> None:
        self.enabled = sys.stderr.isatty()
        self._last = ""

    def __call__(self, phase: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        line = f"\r{phase}: {done}/{total}"
        if line != self._last:
            sys.stderr.write(line)
            sys.stderr.flush()
            self._last = line

    def finish(self) -> None:
        """End the progress line."""
        if self.enabled and self._last:
            sys.stderr.write("\n")
            sys.stderr.flush()
