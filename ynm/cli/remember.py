"""``ynm remember``: record a new memory (reference/cli.md §4.20)."""

from __future__ import annotations

from pathlib import Path

import click

from ynm.cli._common import (
    DATETIME_HELP,
    common_options,
    content_input,
    content_options,
    data_flag,
    drop_none,
    emit,
    flag_hints_on_error,
    links_flag,
    number_flag,
    open_ynm,
    say,
    split_tags,
    unknown_links_note,
)
from ynm.model.links import LINKS_EXAMPLE, LINKS_FORM

TYPES = ("working", "episodic", "semantic", "procedural", "reflective", "reference")
LEVELS = ("personal", "distributed")


@click.command()
@click.option("--type", "type_", type=click.Choice(TYPES), required=True, help="Memory type.")
@click.option("--level", type=click.Choice(LEVELS), help="personal (default) or distributed.")
@click.option("--namespace", help="Namespace, e.g. common, team/payments, session/<id>.")
@content_options
@click.option("--summary", help="One line; derived from the content when omitted.")
@click.option("--subject", help="Entity or topic key, e.g. entity:ledger.")
@click.option("--tags", multiple=True, help="Tags (repeatable, comma-separated).")
@click.option("--data", help="Structured payload as a JSON object, e.g. "
                              """'{"ticket": "ABC-1"}'.""")
@click.option("--data-schema", help="Name of the shape of --data.")
@click.option("--importance", help="0..1 (default 0.5).")
@click.option("--confidence", help="0..1 (default 1).")
@click.option("--valid-from", help=f"When it became true: {DATETIME_HELP}.")
@click.option("--valid-to", help=f"When it stopped being true: {DATETIME_HELP}.")
@click.option("--ttl", help="ISO 8601 duration longer than zero, e.g. PT8H; working memory "
              "defaults to its session's ttl (ynm session start --ttl), else PT8H.")
@click.option("--session", help="Session id for provenance; working memory without "
              "--namespace goes to session/<id>.")
@click.option("--source", help="Source reference: URL, file, ticket.")
@click.option("--links", multiple=True,
              help=f"Links to other memories, {LINKS_FORM}; e.g. '{LINKS_EXAMPLE}'; "
                   "repeatable: the arrays are joined.")
@click.option("--mount", help="Target mount id (default: by level).")
@common_options
def remember(as_json: bool, cwd: Path | None, type_: str, tags: tuple[str, ...], data: str | None,
             links: tuple[str, ...], importance: str | None, confidence: str | None,
             content: str | None, content_file: Path | None, **rest: str | None) -> None:
    """Record a new memory.

    \b
    Example:
      ynm remember --type semantic --level distributed --namespace team/payments \\
        --content "Ledger deploys go out on Tuesdays" --tags deploy,ledger
      git log -1 --format=%B | ynm remember --type episodic --content -
      ynm remember --type working --session my-task --content "try the v2 parser next"
    """
    from ynm.errors import InvalidInput
    from ynm.model.inputs import RememberInput, parse_input

    try:
        with flag_hints_on_error():
            inp = parse_input(RememberInput, drop_none(
                type=type_, content=content_input(content, content_file),
                tags=split_tags(tags), data=data_flag(data), links=links_flag(links),
                importance=number_flag("importance", importance),
                confidence=number_flag("confidence", confidence), **rest,
            ))
    except InvalidInput as err:
        # only for the error it answers: a working memory outside session/<id>
        if (type_ == "working" and rest.get("namespace") is None
                and rest.get("session") is None and err.hint is None
                and "working memory must live in session/" in err.detail):
            err.hint = ("give the session with --session <id>: the memory then lives in "
                        "session/<id> (`ynm session start` makes one)")
        raise
    with open_ynm(cwd) as ynm:
        result = ynm.remember(inp)
    note = unknown_links_note(result)
    emit(result, as_json, lambda r: f"remembered {r['memoryId']} in {r['mount']}"
         + (f"\nnote: {r['guidance']}" if "guidance" in r else ""))
    if note is not None:
        say(note, err=True)
