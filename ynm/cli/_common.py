"""What every command shares: the common flags, output, input parsing and progress."""

from __future__ import annotations

import contextlib
import inspect
import json
import math
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from ynm.errors import YnmError
    from ynm.service.ynm import Ynm

F = Callable[..., Any]


CWD_KEY = "ynm.cwd"  # where the group's -C/--cwd leaves its value for the command
PROGRESS_KEY = "ynm.progress"  # the command's TerminalProgress, finished before its output


def inherit_cwd(ctx: click.Context, _param: click.Parameter, value: Path | None) -> Path | None:
    """A command's ``--cwd``, else the one given before the command name."""
    return value if value is not None else ctx.find_root().meta.get(CWD_KEY)


def cwd_option(**kwargs: Any) -> Callable[[F], F]:
    """``-C``/``--cwd DIR`` (as ``git -C``): behave as if started in DIR, which must exist."""
    return click.option("-C", "--cwd", type=click.Path(exists=True, file_okay=False,
                                                         path_type=Path),
                        default=None, help="Behave as if started in this directory.", **kwargs)


# What a date-time flag takes (ynm.model.records.datetime_ms), for the help of every one;
# here, not imported from the model, so that --help loads no pydantic.
DATETIME_HELP = ("an ISO 8601 date-time with Z or an offset, e.g. 2026-11-30T12:00:00Z or "
                 "2026-11-30T17:30:00+05:30, or a date 2026-11-30 (midnight UTC)")
QUIET_HELP = "Print no progress bar (the result and warnings still print)."
SILENT_HELP = "Print nothing unless it fails (no progress bar, no result; warnings still print)."


def common_options(fn: F | None = None, *, quiet_help: str = QUIET_HELP) -> Any:
    """Add ``--json``, ``-q``/``--quiet`` and ``-C``/``--cwd`` (reference/cli.md §1.2);
    ``--cwd`` may also stand before the command name (``ynm -C ../other recall deploys``).
    ``--quiet`` turns the progress bar off (:class:`TerminalProgress`); a command that also
    reads it itself (``sync``, ``wiki``: print nothing unless it failed) takes it as
    ``quiet`` and says so with ``quiet_help`` (:data:`SILENT_HELP`), the others ignore it.
    Used bare (``@common_options``) or called (``@common_options(quiet_help=...)``)."""
    if fn is None:
        return lambda f: common_options(f, quiet_help=quiet_help)
    fn = cwd_option(callback=inherit_cwd)(fn)
    fn = click.option("-q", "--quiet", is_flag=True, default=False,
                      expose_value="quiet" in inspect.signature(fn).parameters,
                      callback=_keep_quiet, help=quiet_help)(fn)
    fn = click.option("--json", "as_json", is_flag=True, default=False,
                      help="Print the result as one JSON document.")(fn)
    return fn


QUIET_KEY = "ynm.quiet"


def _keep_quiet(ctx: click.Context, _param: click.Parameter, value: bool) -> bool:
    """Leave ``--quiet`` where :func:`command_progress` finds it (also for a command that
    does not take it as a parameter)."""
    ctx.meta[QUIET_KEY] = value
    return value


def open_ynm(cwd: Path | None) -> Ynm:
    """Open the service for ``cwd`` (default: the current directory). When the command ends,
    each of the service's :attr:`~ynm.service.ynm.Ynm.warnings` is printed on stderr as
    ``warning: <text>`` (a recall that fell back to full text, a cache update that failed
    after a committed write); they never change the exit code.

    The service's :attr:`~ynm.service.ynm.Ynm.progress` is the command's
    :class:`TerminalProgress` (see :func:`command_progress`), so every long operation it runs
    (reading shards, folding, embedding, writing, syncing, dreaming) draws one bar on stderr.
    A write that waits more than a second for another process's ``ynm.lock`` says so on
    stderr, once: ``note: waiting for <lock>, held by process <pid> (<command>) for <s> s;
    ...`` (ynm.store.lock.waiting_note)."""
    from ynm.service.ynm import Ynm

    ynm = Ynm.open(cwd or Path.cwd())
    for mount in ynm.mounts:  # a write that waits for another process's lock says so
        mount.log.on_lock_wait = lambda text: say(f"note: {text}", err=True)
    ctx = click.get_current_context(silent=True)
    if ctx is not None:
        ctx.call_on_close(lambda: print_warnings(ynm))
        progress = command_progress()
        ynm.progress = progress
        ynm.notice = progress.note  # "loading embedding model ..." before the seconds it takes
        ctx.call_on_close(progress.finish)  # runs before the warnings (last in, first out)
    return ynm


def command_progress() -> TerminalProgress:
    """The running command's :class:`TerminalProgress`, made on first use: enabled only when
    stderr is a terminal and neither ``--json`` nor ``--quiet`` was given. :func:`emit`
    finishes it before printing the result. Outside a command: a disabled one."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return TerminalProgress(enabled=False)
    progress = ctx.meta.get(PROGRESS_KEY)
    if progress is None:
        quiet = bool(ctx.params.get("as_json")) or bool(ctx.meta.get(QUIET_KEY))
        progress = TerminalProgress(enabled=False if quiet else None)
        ctx.meta[PROGRESS_KEY] = progress
    return progress


def print_warnings(ynm: Ynm) -> None:
    """Print the service's warnings on stderr, ``warning: <text>`` each, once."""
    for text in ynm.warnings:
        say(f"warning: {text}", err=True)
    ynm.warnings.clear()


def note_unmerged(ynm: Ynm) -> bool:
    """When ``git fetch`` brought teammates' shards that ``ynm sync`` has not merged (a fresh
    clone looks empty until then), say so on stderr after the output:
    ``note: <n> shard[s] fetched but not merged into <mount>: run `ynm sync```. Counted now,
    while the service is open; printed when the command ends. Returns whether it said so."""
    from ynm.model.words import counted

    lines = [f"note: {counted(n, 'shard')} fetched but not merged into {mount}: "
             "run `ynm sync`" for mount, n in ynm.unmerged().items()]
    ctx = click.get_current_context(silent=True)
    if lines and ctx is not None:
        ctx.call_on_close(lambda: [say(line, err=True) for line in lines])
    return bool(lines)


def check_mount(ynm: Ynm, mount_id: str | None, hosted: bool = False) -> None:
    """Refuse a ``--mount`` that names no configured mount, before the command reads or
    writes anything (:meth:`ynm.service.ynm.Ynm.check_mount`: exit 2, naming the mounts
    there are and how to add one; the reference reads nothing and exits 0). ``hosted``: the
    command also reaches hosted (mcp) mounts; else a hosted mount's id is named on stderr as
    one this command cannot reach (and the command reads nothing).

    Raises:
        UnknownMount: the id is configured nowhere.
    """
    ynm.check_mount(mount_id)
    if not hosted and any(r.id == mount_id for r in ynm.remotes):
        say(f'warning: "{mount_id}" is a hosted store; this command reads local mounts '
                   f"only: `ynm recall --mount {mount_id}` shows its memories", err=True)


def scope_hint(ynm: Ynm, mount_id: str | None, levels: Any) -> str | None:
    """The ``hint:`` line of a read given ``--mount`` and ``--level`` together when the
    mount is of a level ``--level`` leaves out, so nothing was read
    (:meth:`Ynm.scope_conflict`): ``hint: --mount and --level select no mount: mount
    project is distributed, not personal; drop one of them``, as ``--level`` or ``--mount``
    alone say which mounts they searched. None otherwise."""
    why = ynm.scope_conflict(mount_id, levels)
    return None if why is None else (f"hint: --mount and --level select no mount: {why}; "
                                     "drop one of them")


def note_left_out(left_out: list[Any]) -> None:
    """Name on stderr each hosted store a read could not include (``Ynm.left_out``), after
    the result (reference/cli.md §1): ``shared memory left out: <mount> (<url>): <why>``.
    The output and the exit code (0) stay the local result's."""
    for left in left_out:
        say(f"shared memory left out: {left}", err=True)


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
    """Print ``value`` as pretty JSON, or its human text, with a trailing newline (after
    ending the command's progress bar, if one was drawn). The human text goes through
    :func:`say` (control characters made visible); JSON is printed exact (JSON escapes them).
    Empty human text (a result of no lines: ``wiki build`` of a mount that did not open,
    whose warning on stderr says why) prints nothing, not an empty line."""
    ctx = click.get_current_context(silent=True)
    if ctx is not None and ctx.meta.get(PROGRESS_KEY) is not None:
        ctx.meta[PROGRESS_KEY].finish()
    if as_json:
        click.echo(dumps_pretty(value))
        return
    text = human(value)
    if text:
        say(text)


@contextlib.contextmanager
def json_on_failure(as_json: bool) -> Iterator[None]:
    """With ``--json``, a command prints its JSON document in every outcome that reaches a
    result, failures included: when the block raises a :class:`~ynm.errors.YnmError` that
    carries ``result`` (what was done before it failed, in the command's own shape: a sync
    whose push the remote refused, an import or a reindex stopped by Ctrl-C), that result is
    printed on stdout first; the error then goes on unchanged (``Error: <message>`` on
    stderr, its exit code). Without ``--json``, or for an error raised before any result (bad
    input, a configuration that cannot be read), nothing is printed here."""
    from ynm.errors import YnmError

    try:
        yield
    except YnmError as err:
        if as_json and err.result is not None:
            emit(err.result, True, str)
        raise


def unknown_links_note(result: dict[str, Any]) -> str | None:
    """Take ``unknownLinks`` out of a write's result (ynm.service.ynm.Ynm.unknown_link_targets:
    ids that ``--links`` points at and no memory here has) and return the ``note:`` line that
    names them, for stderr, or None when every link points at a memory here:
    ``note: --links points at <id>[, <id>], which no memory here has; the link is kept (a
    memory with that id may arrive with `ynm sync`; check the id with `ynm show <id>`)``.
    Taken out so that ``--json`` prints the WriteResult alone (reference/cli.md §3.1)."""
    unknown = result.pop("unknownLinks", None)
    if not unknown:
        return None
    many = len(unknown) > 1
    return (f"note: --links points at {', '.join(unknown)}, which no memory here has; the "
            f"link{'s are' if many else ' is'} kept (a memory with "
            f"{'those ids' if many else 'that id'} may arrive with `ynm sync`; check "
            f"{'each' if many else 'the'} id with `ynm show <id>`)")


def say(text: str, err: bool = False) -> None:
    """Print human text (a result, a note, a warning, an error) on stdout, or stderr with
    ``err``, with a trailing newline: the one way the CLI prints text that may hold stored text
    (content, summary, tags, subject, namespace, actor, reasons, file names, a server's answer).
    Control characters are written out (ESC as ``\\x1b``, :func:`ynm.model.controls.visible`),
    keeping tab and line breaks, so a memory cannot drive the reader's terminal. A one-line
    field inside a line (a table cell, a summary) goes through :func:`one_line` first."""
    from ynm.model.controls import visible

    click.echo(visible(text, lines=True), err=err)


def one_line(text: str) -> str:
    """Stored text shown inside one line (a table cell, ``key: value``): every control
    character written out, tab and line breaks too (``\\n``), so it cannot break the line."""
    from ynm.model.controls import visible

    return visible(text)


def split_tags(values: tuple[str, ...] | list[str]) -> list[str]:
    """Repeatable string flags also split on commas, trimmed, empties dropped (cli.md §1.3)."""
    out = []
    for v in values:
        out.extend(part.strip() for part in v.split(",") if part.strip())
    return out


class _DuplicateKey(ValueError):
    """A JSON object of a flag names a key twice (:func:`_unique_keys`)."""

    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


def _unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """``json.loads``' ``object_pairs_hook``: the object, or :class:`_DuplicateKey` for a key
    given twice (Python's json, like JavaScript's JSON.parse, keeps the last silently)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _DuplicateKey(key)
        out[key] = value
    return out


def json_flag(name: str, raw: str | None, hint: str | None = None) -> Any:
    """Parse a JSON-valued flag (``--data``, ``--links``). An object that names a key twice,
    at any depth, is refused: which value was meant cannot be told (``{"a": 1, "a": 2}``
    was once read as ``{"a": 2}``).

    Raises:
        InvalidInput: (exit 2) with ``hint`` (what the flag takes) when given:
            ``invalid input: --<name>: not valid JSON (<detail>)`` (reference/cli.md §1.3),
            or ``invalid input: --<name>: duplicate key "<key>"; give each key once``.
    """
    from ynm.errors import InvalidInput

    if raw is None:
        return None
    try:
        return json.loads(raw, object_pairs_hook=_unique_keys)
    except _DuplicateKey as err:
        key = json.dumps(err.key, ensure_ascii=False)
        refused = InvalidInput(f"--{name}: duplicate key {key}; give each key once")
        refused.hint = hint
        raise refused from None
    except ValueError as err:
        refused = InvalidInput(f"--{name}: not valid JSON ({err})")
        refused.hint = hint
        raise refused from None


def links_flag(raws: tuple[str, ...] | list[str]) -> list[Any] | None:
    """Every ``--links`` given (the option repeats), each parsed as a JSON array
    (:func:`json_flag`) and joined in order: ``--links A --links B`` is A's links then B's
    (the reference says nothing of a repeated ``--links``; its parser kept the last one
    alone). None when none is given. Exact repeats are dropped later, by the input model
    (:func:`ynm.model.records.union_links`).

    Raises:
        InvalidInput: (exit 2) with the hint of what ``--links`` takes
            (:func:`ynm.model.links.links_hint`: the form, the rels and an example):
            ``invalid input: --links: not valid JSON (<detail>)``, or for JSON that is no
            array ``invalid input: links: must be an array, got an object`` (``a string``,
            ``a number``, ``true``, ``false``, ``null``: docs/cli.md; a single object, ``null``
            and ``""`` were once taken as a one-link array or as no links).
    """
    from ynm.errors import InvalidInput
    from ynm.model.links import links_hint
    from ynm.model.words import json_kind

    if not raws:
        return None
    out: list[Any] = []
    for raw in raws:
        value = json_flag("links", raw, hint=links_hint())
        if not isinstance(value, list):
            refused = InvalidInput(f"links: must be an array, got {json_kind(value)}",
                                   fields=("links",))
            refused.hint = links_hint()
            raise refused
        out.extend(value)
    return out


DATA_EXAMPLE = '{"ticket": "ABC-1"}'
DATA_HINT = (f"--data takes a JSON object of keys and values, quoted for the shell; e.g. "
             f"--data '{DATA_EXAMPLE}'")
"""The hint of a ``--data`` that is not a JSON object (remember, supersede, annotate)."""


def data_flag(raw: str | None) -> dict[str, Any] | None:
    """``--data`` parsed as a JSON object, or None when not given.

    Raises:
        InvalidInput: (exit 2) with the hint :data:`DATA_HINT` (what ``--data`` takes and a
            working example): ``invalid input: --data: not valid JSON (<detail>)``
            (reference/cli.md §1.3), ``invalid input: --data: duplicate key "<key>"; give
            each key once`` (:func:`json_flag`), or, for JSON that is no object, the schema's
            ``invalid input: data: must be an object`` (the reference's words) followed by
            what was given: ``, got an array`` (``a string``, ``a number``, ``true``,
            ``false``, ``null``; ``--data null`` was once taken as no data).
    """
    from ynm.errors import InvalidInput
    from ynm.model.words import json_kind

    value = json_flag("data", raw, hint=DATA_HINT)
    if raw is not None and not isinstance(value, dict):
        refused = InvalidInput(f"data: must be an object, got {json_kind(value)}",
                               fields=("data",))
        refused.hint = DATA_HINT
        raise refused
    return value


@contextlib.contextmanager
def flag_hints_on_error() -> Iterator[None]:
    """Give an :class:`~ynm.errors.InvalidInput` raised inside that concerns a JSON-valued
    flag the hint of what that flag takes, unless it has a hint already: a failing field
    ``links`` or ``links.<n>[.<key>]`` (``invalid input: links.0.rel: must be one of ...``)
    gets ``--links``' (:func:`ynm.model.links.links_hint`), ``data`` or ``data.<key>`` gets
    :data:`DATA_HINT`. Every command with ``--links`` or ``--data`` validates its input
    inside this."""
    from ynm.errors import InvalidInput
    from ynm.model.links import links_hint

    try:
        yield
    except InvalidInput as err:
        if err.hint is None and any(f == "links" or f.startswith("links.") for f in err.fields):
            err.hint = links_hint()
        elif err.hint is None and any(f == "data" or f.startswith("data.")
                                      for f in err.fields):
            err.hint = DATA_HINT
        raise


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
    non-ASCII text need not pass through a shell argument. Text read from standard input or a
    file loses exactly one trailing line break (``\n`` or ``\r\n``): the one ``echo``, a
    heredoc or an editor ends the last line with, which is no part of the memory; a second one
    stays (send ``text + "\n"`` to keep text that ends in a line break).

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
    problem = not_utf8_problem(raw, where)
    if problem is not None:
        raise InvalidInput(f"content: {problem}")
    return strip_final_newline(raw.decode("utf-8-sig"))


def strip_final_newline(text: str) -> str:
    """``text`` without one trailing ``\r\n`` or ``\n`` (the last line's terminator)."""
    if text.endswith("\r\n"):
        return text[:-2]
    return text.removesuffix("\n")


# Byte order marks of the encodings an editor may save text in that are not UTF-8; UTF-32's
# come first (UTF-32-LE's begins with UTF-16-LE's).
_OTHER_BOMS = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"),
               (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"))


def not_utf8_problem(raw: bytes, where: str) -> str | None:
    """Why ``raw`` (a file or standard input) is not UTF-8 text, naming the encoding when a
    byte order mark gives it away (``--content-file is UTF-16 text (it starts with a byte order
    mark); ynm reads UTF-8: convert it, e.g. iconv -f UTF-16 -t UTF-8``); None when it is
    UTF-8 (a UTF-8 byte order mark is fine)."""
    for bom, name in _OTHER_BOMS:
        if raw.startswith(bom):
            return (f"{where} is {name} text (it starts with a byte order mark); ynm reads "
                    f"UTF-8: convert it, e.g. iconv -f {name} -t UTF-8")
    try:
        raw.decode("utf-8")
    except UnicodeDecodeError as err:
        return f"{where} is not UTF-8 text ({err.reason} at byte {err.start})"
    return None


def content_options(fn: F) -> F:
    """``--content`` (text, or ``-`` for standard input) and ``--content-file``."""
    fn = click.option("--content-file", type=click.Path(exists=True, dir_okay=False,
                                                         path_type=Path),
                      help="Read the content from this file (UTF-8).")(fn)
    return click.option("--content", help="The memory (markdown); - reads standard input.")(fn)


def drop_none(**kwargs: Any) -> dict[str, Any]:
    """Keyword arguments without the ones left unset (None)."""
    return {k: v for k, v in kwargs.items() if v is not None}


def stderr_is_terminal() -> bool:
    """Whether stderr is a terminal (where a progress bar may be drawn)."""
    return bool(sys.stderr.isatty())


class TerminalProgress:
    """The progress of long work as one bar on stderr (click's ``progressbar``), callable as
    the service's ``progress(phase, done, total)`` (``done`` of ``total`` steps).

    Drawn only when ``enabled``: by default when the stream (stderr) is a terminal, so a pipe,
    a log file, an agent's captured stderr and ``--json``/``--quiet`` (which pass ``False``)
    get none. A new phase (or a new total) ends the bar before it and starts its own, labelled
    from :data:`LABELS`. Only work that lasts is shown: a phase's bar appears at its first
    report ``delay`` seconds (default :data:`DELAY`) or more after the phase began and before
    it is complete, so quick work (one remember, a recall on a current cache) prints nothing;
    the phases of :data:`AT_ONCE` (a network round trip per step) show from their first
    report. Phases in use: ``read`` (shards read into the
    cache), ``fold``, ``embed`` (memories given a vector), ``append`` (records written),
    ``sync`` (mounts synced), ``dream`` (passes run), ``expire`` (memories expired).
    """

    DELAY = 0.5
    AT_ONCE = frozenset({"sync"})
    LABELS = {"read": "reading shards", "fold": "folding records", "embed": "embedding",
              "append": "writing records", "sync": "syncing", "dream": "dreaming",
              "expire": "expiring working memory"}

    def __init__(self, enabled: bool | None = None, stream: Any = None,
                 delay: float | None = None) -> None:
        self.stream = stream if stream is not None else sys.stderr
        if enabled is None:
            enabled = bool(self.stream.isatty()) if stream is not None else stderr_is_terminal()
        self.enabled = enabled
        self.delay = self.DELAY if delay is None else delay
        self._bar: Any = None
        self._key: tuple[str, int] | None = None
        self._began = 0.0
        self._done = 0
        self.drawn: list[str] = []  # the phases a bar was drawn for, in order
        self.noted: list[str] = []  # the lines note() printed

    def __call__(self, phase: str, done: int, total: int) -> None:
        import time

        if not self.enabled or total <= 0:
            return
        if (phase, total) != self._key:
            self.finish()
            self._key = (phase, total)
            self._began = time.monotonic()
        if self._bar is None:
            if done >= total or (phase not in self.AT_ONCE
                                 and time.monotonic() - self._began < self.delay):
                return
            self._bar = click.progressbar(length=total, label=self.LABELS.get(phase, phase),
                                          file=self.stream, show_pos=True)
            self._bar.__enter__()
            self._done = 0
            self.drawn.append(phase)
        if done > self._done:
            self._bar.update(done - self._done)
            self._done = done

    def note(self, text: str) -> None:
        """Print ``text`` as a line of its own, when enabled (a terminal, no ``--json`` or
        ``--quiet``): work that is slow to start and has no steps to count, such as loading
        the embedding model (``loading embedding model <name>…``), so the terminal is not
        silent meanwhile. A bar being drawn is ended first."""
        if not self.enabled:
            return
        self.finish()
        self.stream.write(text + "\n")
        self.stream.flush()
        self.noted.append(text)

    def finish(self) -> None:
        """End the bar, if one is drawn (its line is kept, with a newline)."""
        if self._bar is not None:
            self._bar.__exit__(None, None, None)
            self.stream.flush()
        self._bar = None
        self._key = None


def local_only(ynm: Ynm, err: YnmError, command: str) -> YnmError:
    """``err`` (an :class:`~ynm.errors.UnknownMemory` of ``ynm show``/``history``) with, when
    hosted mounts are configured, that ``command`` reads local mounts only and how to see a
    hosted hit: the same error type and exit code."""
    if ynm.remotes:
        ids = ", ".join(r.id for r in ynm.remotes)
        err.message = (f"{err}; ynm {command} reads local mounts only: a memory of a hosted "
                       f"store ({ids}) is shown in full by `ynm recall --mount <id> --json`")
    return err
