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


def common_options(fn: F) -> F:
    """Add ``--json`` and ``--cwd`` (reference/cli.md §1.2)."""
    fn = click.option("--cwd", type=click.Path(exists=True, file_okay=False, path_type=Path),
                      default=None, help="Behave as if started in this directory.")(fn)
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
