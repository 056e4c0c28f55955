"""``ynm show`` and ``ynm history``: one memory whole, and every record of it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from ynm.cli._common import _js_number, common_options, emit, one_line, open_ynm
from ynm.cli.edit import memory_id_input, one_id


def format_show(m: dict[str, Any]) -> str:
    """The folded memory as a header block, its content in full, then its links. The header's
    stored fields (namespace, subject, tags, author, summary) and the link summaries are
    one line each (:func:`~ynm.cli._common.one_line`); the content keeps its lines."""
    flags = [f for f, on in (("pinned", m.get("pinned")), ("needs review", m.get("needsReview")),
                             ("forgotten", m.get("tombstoned")),
                             ("expired (ttl ran out; the next sweep forgets it)",
                              m.get("expired"))) if on]
    lines = [one_line(f"{m['memoryId']}  {m['type']}  {m['level']}  {m['namespace']}  "
                      f"({m['mount']})")]
    if m.get("subject"):
        lines.append(f"subject     {one_line(m['subject'])}")
    if m.get("tags"):
        lines.append(f"tags        {one_line(', '.join(m['tags']))}")
    lines.append(f"importance  {_js_number(m['importance'])}   "
                 f"confidence {_js_number(m['confidence'])}"
                 + (f"   {', '.join(flags)}" if flags else ""))
    lines.append(f"created     {m['createdAt']}   updated {m['updatedAt']}   "
                 f"versions {m['versions']}")
    current = m.get("current", {})
    if current.get("ttl"):
        lines.append(f"ttl         {current['ttl']}")
    if m.get("author"):
        lines.append(f"author      {one_line(m['author'])}")
    lines.append(f"summary     {one_line(m.get('summary') or current.get('summary') or '')}")
    lines.append("")
    lines.append(current.get("content") or "")
    if current.get("data") is not None:
        lines.append("")
        lines.append("data " + json.dumps(current["data"], ensure_ascii=False))
    if m["linked"]:
        lines.append("")
        for link in m["linked"]:
            lines.append(one_line(f"-> {link['rel']} {link['to']}  "
                                  f"{link['summary'] or '(not found)'}"))
    if m["linkedFrom"]:
        if not m["linked"]:
            lines.append("")
        for link in m["linkedFrom"]:
            lines.append(one_line(f"<- {link['rel']} {link['memoryId']}  {link['summary']}"))
    return "\n".join(lines)


def format_changes(changes: dict[str, Any], width: int = 72) -> str:
    """A history line's ``what changed`` part: ``key=value`` pairs (content is shown through
    its summary), long text cut to ``width`` characters with ``...``; a field a new version
    dropped (null) as ``data=(dropped)``."""
    parts = []
    for key, value in changes.items():
        if key == "content" and "summary" in changes:
            continue
        if value is None:
            text = "(dropped)"
        elif key == "tags":
            text = "+" + ",".join(value)
        elif key == "links":
            text = "+" + ",".join(f"{link['rel']}:{link['to']}" for link in value)
        elif isinstance(value, str):
            text = json.dumps(value if len(value) <= width else value[: width - 3] + "...",
                              ensure_ascii=False)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            text = _js_number(value)
        else:
            text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
        parts.append(f"{key}={text}")
    return " ".join(parts)


def format_history(records: list[dict[str, Any]]) -> str:
    """A header line ``RECORDED AT  OP  ACTOR  CHANGES``, then one aligned line per record:
    time, op, actor, what it changed (see :mod:`ynm.cli._table`)."""
    from ynm.cli._table import table

    rows = [(r["recordedAt"], r["op"], r["actor"], format_changes(r["changes"]))
            for r in records]
    return "\n".join(table(("RECORDED AT", "OP", "ACTOR", "CHANGES"), rows))


@click.command()
@memory_id_input("show")
@common_options
def show(as_json: bool, cwd: Path | None, memory_id: str | None,
         memory_id_flag: str | None) -> None:
    """Show one memory: its folded state, its content in full and its links both ways.

    \b
    Example:
      ynm show 01K...
    """
    mid = one_id(memory_id, memory_id_flag)
    from ynm.cli._common import local_only
    from ynm.errors import UnknownMemory

    with open_ynm(cwd) as ynm:
        try:
            result = ynm.show(mid)
        except UnknownMemory as err:
            raise local_only(ynm, err, "show") from None
    emit(result, as_json, format_show)


@click.command()
@memory_id_input("trace")
@common_options
def history(as_json: bool, cwd: Path | None, memory_id: str | None,
            memory_id_flag: str | None) -> None:
    """Every record of one memory in the order the fold applies them: time, op, actor and
    what each changed (a purged memory shows its purge marker).

    \b
    Example:
      ynm history 01K...
    """
    mid = one_id(memory_id, memory_id_flag)
    from ynm.cli._common import local_only
    from ynm.errors import UnknownMemory

    with open_ynm(cwd) as ynm:
        try:
            result = ynm.history(mid)
        except UnknownMemory as err:
            raise local_only(ynm, err, "history") from None
    emit(result, as_json, format_history)
