"""``ynm session``, ``ynm context`` and ``ynm review`` (reference/cli.md §4.3, §4.21, §4.23)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ynm.cli._common import (
    check_mount,
    common_options,
    drop_none,
    emit,
    note_left_out,
    open_ynm,
    say,
    scope_hint,
)
from ynm.model.words import counted

TYPES = ("working", "episodic", "semantic", "procedural", "reflective", "reference")
LEVELS = ("personal", "distributed")


def block_text(block: dict[str, Any]) -> str:
    """The markdown as is, or why there is none."""
    if block["markdown"]:
        return block["markdown"]
    if block["truncated"]:
        return "no memory fits the token budget; raise --budget-tokens"
    return "no memory yet"


@click.command()
@click.option("--namespace", help="Namespace prefix.")
@click.option("--level", multiple=True, type=click.Choice(LEVELS), help="Levels (repeatable).")
@click.option("--type", "type_", multiple=True, type=click.Choice(TYPES),
              help="Types (repeatable).")
@click.option("--text", help="Focus text for the ranked part.")
@click.option("--budget-tokens", type=int, default=1500, show_default=True,
              help="Approximate budget (1..50000).")
@click.option("--mount", help="Only this mount.")
@common_options
def context(as_json: bool, cwd: Path | None, level: tuple[str, ...], type_: tuple[str, ...],
            **rest: Any) -> None:
    """Print the memory block an agent gets at session start: pinned first, then ranked.

    \b
    Example:
      ynm context --namespace team/payments --budget-tokens 800
    """
    from ynm.model.inputs import ContextQuery, parse_input

    q = parse_input(ContextQuery, drop_none(level=list(level), type=list(type_), **rest))
    with open_ynm(cwd) as ynm:
        check_mount(ynm, q.mount, hosted=True)
        block = ynm.context(q)
        conflict = None if block["included"] else scope_hint(ynm, q.mount, q.level)
    emit(block, as_json, block_text)
    if conflict is not None:
        say(conflict, err=True)
    note_left_out(ynm.left_out)


@click.command()
@click.argument("action", type=click.Choice(["start", "end"]))
@click.argument("session_id", required=False)
@click.option("--namespace", help="Namespace prefix for the context block.")
@click.option("--budget-tokens", type=int, default=1500, show_default=True,
              help="Context budget (1..50000).")
@click.option("--ttl", default="PT8H", show_default=True,
              help="The ttl the session's working memory gets by default (ISO 8601 "
              "duration longer than zero).")
@click.option("--expire/--no-expire", default=True, show_default=True,
              help="On end, forget the session's working memory whose ttl ran out.")
@common_options
def session(as_json: bool, cwd: Path | None, action: str, session_id: str | None,
            namespace: str | None, budget_tokens: int, ttl: str, expire: bool) -> None:
    """Start a session (working namespace and context block) or end one.

    A started session's namespace and ttl are kept (in $YNM_HOME/sessions/<id>.json) as the
    defaults of `remember --type working --session <id>`; `session end` removes them.

    \b
    Examples:
      ynm session start            # a new id
      ynm session start my-task --ttl PT1H
      ynm remember --type working --session my-task --content "..."
      ynm session end my-task
    """
    from ynm.errors import Refused
    from ynm.model.inputs import SessionStartInput, parse_input

    if action == "end":
        if not session_id:
            raise Refused("session end needs a sessionId")
        with open_ynm(cwd) as ynm:
            result = ynm.session_end(session_id, expire)
        n = len(result["expired"])
        emit(result, as_json, lambda r: (
            f"ended {r['sessionId']}; expired {counted(n, 'working memory', 'working memories')}"))
        return
    inp = parse_input(SessionStartInput, drop_none(
        session_id=session_id, namespace=namespace, budget_tokens=budget_tokens, ttl=ttl))
    with open_ynm(cwd) as ynm:
        result = ynm.session_start(inp)
    emit(result, as_json, lambda r: (
        f"session {r['sessionId']}\nworking namespace {r['namespace']} (ttl {r['ttl']})\n\n"
        + block_text(r["context"])))


def format_review(memories: list[dict[str, Any]]) -> str:
    """A header line ``ID  TYPE  MOUNT  NAMESPACE  SUMMARY`` then one aligned row per memory
    (see :mod:`ynm.cli._table`), each followed by ``  why: <reason>: <answers>; pair with
    <id>`` when its flag says why (ynm.service.review.why_line), or ``nothing to review``."""
    from ynm.cli._table import by_author, marks, table
    from ynm.service.review import why_line

    if not memories:
        return "nothing to review"
    rows = [(m["memoryId"], m["type"], m["mount"], m["namespace"],
             marks(m) + (m.get("summary") or m["current"].get("summary", "")) + by_author(m))
            for m in memories]
    lines = table(("ID", "TYPE", "MOUNT", "NAMESPACE", "SUMMARY"), rows)
    out = [lines[0]]
    for line, m in zip(lines[1:], memories, strict=True):
        out.append(line)
        why = why_line(m)
        if why:
            out.append(f"  why: {why}")
    return "\n".join(out)


@click.command()
@click.argument("action", type=click.Choice(["list", "clear"]))
@click.argument("memory_id", required=False)
@click.option("--memory-id", "memory_id_flag", metavar="ID",
              help="The memory to clear (or give it as the argument).")
@click.option("--mount", help="list: only this mount; clear: the mount the memory is in "
                               "(refused when another mount holds it).")
@common_options
def review(as_json: bool, cwd: Path | None, action: str, memory_id: str | None,
           memory_id_flag: str | None, mount: str | None) -> None:
    """List memories flagged for review, or clear one's flag.

    The list says why each is flagged: the flag's reason, the judge's answers (e.g.
    sameFact 0.72) and the other memory of the pair; --json gives the whole flag under
    "review". Decide, then `ynm supersede`, `ynm forget` or `ynm review clear`.

    \b
    Examples:
      ynm review list
      ynm review clear 01K...
    """
    from ynm.model.inputs import check_memory_id

    if action == "clear":
        from ynm.cli.edit import one_id

        memory_id = check_memory_id(one_id(memory_id, memory_id_flag))
        with open_ynm(cwd) as ynm:
            result = ynm.review_clear(memory_id, mount)
        from ynm.cli.edit import or_unchanged

        emit(result, as_json, or_unchanged(lambda r: f"cleared review flag on {r['memoryId']}"))
        return
    if memory_id or memory_id_flag:
        raise click.UsageError("review list takes no memory id (to clear a flag: "
                               "ynm review clear <id>)")
    with open_ynm(cwd) as ynm:
        check_mount(ynm, mount)
        memories = ynm.review_list(mount)
    emit(memories, as_json, format_review)
