"""``ynm audit tail|search``: read the audit events a ``ynm serve --http`` wrote to its file
sink, for operators (the events: reference/server.md §2.7; the sink: ``YNM_AUDIT``,
:mod:`ynm.server.audit`). The reference has no such command (its ADR-017 proposed one)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click

from ynm.cli._common import DATETIME_HELP, common_options, emit, say
from ynm.model.words import counted

OUTCOMES = ("ok", "refused", "error")
DEFAULT_TAIL = 20  # events `ynm audit tail` shows without -n


def format_events(events: list[dict[str, Any]]) -> str:
    """A header ``AT  OUTCOME  STATUS  PERSON  CLIENT  REQUEST  CALLS  MS`` and one aligned
    row per event (oldest first; ``-`` for no person or client; a refusal's reason after its
    outcome; calls as ``tool:status`` with ``(n)`` for a result count), or ``no audit
    events``."""
    from ynm.cli._table import table

    if not events:
        return "no audit events"
    rows = []
    for e in events:
        outcome = str(e.get("outcome", "?"))
        if e.get("reason"):
            outcome += f" ({e['reason']})"
        calls = []
        for c in e.get("calls") or []:
            if not isinstance(c, dict):
                continue
            call = f"{c.get('tool', '?')}:{c.get('status', '?')}"
            if c.get("resultCount") is not None:
                call += f"({c['resultCount']})"
            calls.append(call)
        rows.append((str(e.get("at", "")), outcome, str(e.get("status", "")),
                     str(e.get("person") or "-"), str(e.get("client") or "-"),
                     f"{e.get('method', '?')} {e.get('path', '')}", ",".join(calls) or "-",
                     str(e.get("durationMs", ""))))
    return "\n".join(table(("AT", "OUTCOME", "STATUS", "PERSON", "CLIENT", "REQUEST", "CALLS",
                            "MS"), rows))


def _audit_file(file: Path | None, cwd: Path | None) -> Path:
    """``--file``, else the file sink ``YNM_AUDIT`` names (read as every command reads its
    variables: the environment, ``$YNM_HOME/env``, the repository's ``.env``).

    Raises:
        InvalidInput: no ``--file`` and ``YNM_AUDIT`` names no file sink (exit 2).
        InvalidConfig: a ``YNM_AUDIT`` ynm cannot use (exit 2).
    """
    from ynm.errors import ConfigError, InvalidInput
    from ynm.server.audit import audit_setting

    if file is not None:
        return file.expanduser()
    from ynm.service.config import load_config

    try:
        env = load_config(cwd).env
    except ConfigError:  # a problem elsewhere in the configuration: the environment alone
        env = dict(os.environ)
    setting = audit_setting(env)
    if setting is None or setting.path is None:
        said = f'sink is "{setting.sink}"' if setting is not None else "it is not set"
        raise InvalidInput(f"--file: no audit file: YNM_AUDIT names no file sink ({said}); "
                           "give --file or set YNM_AUDIT='{\"sink\":\"file\",\"path\":...}'")
    return setting.path


def _instant(flag: str, value: str | None, *, lower: bool) -> str | None:
    """``value`` as a canonical instant (:func:`ynm.model.records.normalize_datetime`; a lower
    bound rounds sub-millisecond digits up).

    Raises:
        InvalidInput: ``invalid input: --since: expected an ISO 8601 date-time ...``.
    """
    from ynm.errors import InvalidInput
    from ynm.model.records import normalize_datetime

    if value is None:
        return None
    try:
        return normalize_datetime(value, round_up=lower)
    except ValueError as err:
        raise InvalidInput(f"{flag}: {err}") from None


def _where(filters: dict[str, Any]) -> Any:
    """The :class:`ynm.server.audit.EventFilter` of the command's filters.

    Raises:
        InvalidInput: (exit 2) a ``--since``/``--until`` that is no ISO 8601 date-time, or a
            ``--since`` later than ``--until`` (:func:`ynm.model.inputs.bounds_problem`:
            ``--since: <since> is later than --until <until>, so nothing can match; ...``).
    """
    from ynm.errors import InvalidInput
    from ynm.model.inputs import bounds_problem
    from ynm.server.audit import EventFilter

    since = _instant("--since", filters["since"], lower=True)
    until = _instant("--until", filters["until"], lower=False)
    problem = bounds_problem(since, until, since_name="--since", until_name="--until")
    if problem:
        raise InvalidInput(problem)
    return EventFilter(
        person=filters["person"], client=filters["client"], tool=filters["tool"],
        outcome=filters["outcome"], since=since, until=until)


def _warn_bad(bad: list[Any]) -> None:
    if bad:
        first = bad[0]
        say(f"warning: skipped {counted(len(bad), 'line')} that "
                   f"{'are' if len(bad) != 1 else 'is'} not an audit event (first: "
                   f"{first.file}:{first.line})", err=True)
        bad.clear()


def _follow(path: Path, where: Any, as_json: bool, last: int) -> None:
    """Print the newest ``last`` matching events of ``path``, then every matching event
    written to it until interrupted: JSON lines with ``--json``, else the table's rows (the
    header once)."""
    import json
    from collections import deque

    from ynm.server.audit import BadLine, follow_events

    header = True

    def show(event: dict[str, Any]) -> None:
        nonlocal header
        if as_json:
            click.echo(json.dumps(event, separators=(",", ":")))
            return
        lines = format_events([event]).splitlines()
        say("\n".join(lines if header else lines[1:]))
        header = False

    bad: list[BadLine] = []
    events = follow_events(path, bad=bad)
    kept: deque[dict[str, Any]] = deque(maxlen=last or None)
    try:
        for event in events:
            if event is None:  # caught up: the tail, then what comes
                break
            if last and where.matches(event):
                kept.append(event)
        _warn_bad(bad)
        for event in kept:
            show(event)
        if not kept:
            say("no matching audit events yet; waiting for them (Ctrl-C stops)", err=True)
        for event in events:
            _warn_bad(bad)
            if event is not None and where.matches(event):
                show(event)
    except KeyboardInterrupt:
        pass


@click.command()
@click.argument("action", type=click.Choice(["tail", "search"]))
@click.option("--file", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="The audit file (default: the file sink of $YNM_AUDIT); its rotated "
                   "<file>.1 is read first.")
@click.option("--person", help="Only events of this person id (p...).")
@click.option("--client", help="Only events of this client (static for the static token).")
@click.option("--tool", help="Only events with a call of this tool (memory_remember).")
@click.option("--outcome", type=click.Choice(OUTCOMES), help="Only this outcome.")
@click.option("--since", help=f"At or after this instant: {DATETIME_HELP}.")
@click.option("--until", help=f"At or before this instant: {DATETIME_HELP}.")
@click.option("-n", "--lines", "lines", type=click.IntRange(min=0), default=None,
              help=f"tail: how many of the newest matching events (default {DEFAULT_TAIL}).")
@click.option("-f", "--follow", is_flag=True, default=False,
              help="tail: then print matching events as they are written, until Ctrl-C "
                   "(with --json, one JSON line per event).")
@common_options
def audit(as_json: bool, cwd: Path | None, action: str, file: Path | None, lines: int | None,
          follow: bool, **filters: Any) -> None:
    """Read the audit events of ynm serve --http from its file sink (YNM_AUDIT): the newest
    matching ones (tail) or every matching one (search), oldest first.

    \b
    Examples:
      ynm audit tail -n 50 --outcome refused
      ynm audit tail -f --client static
      ynm audit search --person pabcdefghijklmnop --since 2026-12-01 --json
    """
    from ynm.server.audit import BadLine, read_events, select_events

    if action == "search" and (lines is not None or follow):
        raise click.UsageError(f"{'-n/--lines' if lines is not None else '-f/--follow'} "
                               "is for tail")
    path = _audit_file(file, cwd)
    where = _where(filters)
    last = (DEFAULT_TAIL if lines is None else lines) if action == "tail" else None
    if follow:
        _follow(path, where, as_json, last or 0)
        return
    bad: list[BadLine] = []
    events = select_events(read_events(path, bad), where, last)
    _warn_bad(bad)
    emit(events, as_json, format_events)
