"""Commands that change an existing memory: supersede, annotate, forget, pin, promote, purge
(reference/cli.md §4.1, §4.7, §4.15, §4.16, §4.17, §4.25)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

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


def _id(memory_id: str) -> str:
    from ynm.model.inputs import check_memory_id

    return check_memory_id(memory_id)


def or_unchanged(text: Any) -> Any:
    """The human line of a write result: ``text(result)``, or ``unchanged: <id> <note>`` for
    a write that changed nothing and wrote nothing (``"unchanged": true``)."""
    return lambda r: (f"unchanged: {r['memoryId']} {r['note']}" if r.get("unchanged")
                      else text(r))


def memory_id_input(verb: str) -> Any:
    """The memory id of a command, as its first argument or as ``--memory-id`` (either, not
    both); read with :func:`one_id`. Every command that acts on one memory takes both forms."""
    def decorate(f: Any) -> Any:
        f = click.option("--memory-id", "memory_id_flag", metavar="ID",
                         help=f"The memory to {verb} (or give it as the argument).")(f)
        return click.argument("memory_id", required=False, metavar="[ID]")(f)
    return decorate


def one_id(memory_id: str | None, memory_id_flag: str | None) -> str:
    """The id given positionally or with ``--memory-id``, in upper case.

    Raises:
        click.UsageError: neither given, or two different ids (exit 2).
        InvalidInput: not a ULID.
    """
    if memory_id and memory_id_flag and memory_id.upper() != memory_id_flag.upper():
        raise click.UsageError(f"two memory ids given: {memory_id} and --memory-id "
                               f"{memory_id_flag}")
    value = memory_id or memory_id_flag
    if not value:
        raise click.UsageError("missing the memory id: give it as the argument or --memory-id")
    return _id(value)


@click.command()
@memory_id_input("replace")
@content_options
@click.option("--summary", help="One line; derived from the content when omitted.")
@click.option("--subject", help="New subject (kept when omitted).")
@click.option("--tags", multiple=True, help="Tags to add (repeatable, comma-separated).")
@click.option("--data", help="Structured payload (JSON object, e.g. "
              """'{"ticket": "ABC-1"}') of the new version; the previous version's is not """
              "carried over: omitted means none (said in a note).")
@click.option("--data-schema", help="Name of the shape of --data (not carried over either).")
@click.option("--importance", help="0..1; kept when omitted.")
@click.option("--confidence", help="0..1; kept when omitted.")
@click.option("--pinned/--no-pinned", default=None, help="Pin or unpin; kept when omitted.")
@click.option("--needs-review/--no-needs-review", default=None,
              help="Flag or clear review; kept when omitted.")
@click.option("--valid-from", help=f"When it became true, not carried over: {DATETIME_HELP}.")
@click.option("--valid-to", help="When it stopped being true, not carried over: "
              f"{DATETIME_HELP}.")
@click.option("--ttl", help="New ttl, an ISO 8601 duration longer than zero; a working "
              "memory keeps its own.")
@click.option("--session", help="Session id for provenance.")
@click.option("--source", help="Source reference: URL, file, ticket.")
@click.option("--links", multiple=True, help="More links (the memory's own are kept), "
              f"{LINKS_FORM}; e.g. '{LINKS_EXAMPLE}'; repeatable: the arrays are joined.")
@common_options
def supersede(as_json: bool, cwd: Path | None, memory_id: str | None,
              memory_id_flag: str | None, tags: tuple[str, ...], data: str | None,
              links: tuple[str, ...], importance: str | None, confidence: str | None,
              content: str | None, content_file: Path | None, **rest: Any) -> None:
    """Write a new version of a memory.

    The new version keeps the memory's type, namespace, subject, tags, links,
    importance, confidence, pin and review flag unless told otherwise; its content,
    summary, data, data schema and valid-from/-to are only what you give (as in the
    reference): a note names what the previous version had and this one drops.

    \b
    Example:
      ynm supersede 01K... --content "Deploys moved to Wednesdays"
    """
    from ynm.model.inputs import SupersedeInput, parse_input

    mid = one_id(memory_id, memory_id_flag)
    with flag_hints_on_error():
        inp = parse_input(SupersedeInput, drop_none(
            memory_id=mid, content=content_input(content, content_file),
            tags=split_tags(tags), data=data_flag(data), links=links_flag(links),
            importance=number_flag("importance", importance),
            confidence=number_flag("confidence", confidence), **rest))
    with open_ynm(cwd) as ynm:
        result = ynm.supersede(inp)
    note = unknown_links_note(result)
    emit(result, as_json,
         or_unchanged(lambda r: f"superseded {r['memoryId']} (record {r['recordId']})"
                      + (f"\nnote: {dropped_note(r['dropped'])}" if r.get("dropped") else "")))
    if note is not None:
        say(note, err=True)


# The flag that keeps each field a supersede does not carry over.
_KEEP_FLAGS = {"data": "--data", "dataSchema": "--data-schema", "validFrom": "--valid-from",
               "validTo": "--valid-to"}


def dropped_note(dropped: list[str]) -> str:
    """The note of a supersede that dropped fields of the previous version (the WriteResult's
    ``dropped``): ``data dropped (pass --data to keep it)``; ``data, dataSchema dropped (pass
    --data, --data-schema to keep them)``."""
    flags = ", ".join(_KEEP_FLAGS.get(key, key) for key in dropped)
    return (f"{', '.join(dropped)} dropped (pass {flags} to keep "
            f"{'it' if len(dropped) == 1 else 'them'})")


@click.command()
@memory_id_input("annotate")
@click.option("--tags", multiple=True, help="Tags to add (repeatable, comma-separated).")
@click.option("--links", multiple=True,
              help=f"Links to add, {LINKS_FORM}; e.g. '{LINKS_EXAMPLE}'; repeatable: the "
                   "arrays are joined.")
@click.option("--importance", help="New importance, 0..1.")
@click.option("--confidence", help="New confidence, 0..1.")
@click.option("--pinned/--no-pinned", default=None, help="Pin or unpin.")
@click.option("--needs-review/--no-needs-review", default=None, help="Flag or clear review.")
@click.option("--reason", help="Why.")
@click.option("--session", help="Session id for provenance.")
@click.option("--data", help="Structured annotation data (JSON object, e.g. "
                              """'{"ticket": "ABC-1"}').""")
@common_options
def annotate(as_json: bool, cwd: Path | None, memory_id: str | None,
             memory_id_flag: str | None, tags: tuple[str, ...], links: tuple[str, ...],
             data: str | None, importance: str | None, confidence: str | None,
             **rest: Any) -> None:
    """Add tags or links, or set importance, confidence, pin or review; content stays.

    \b
    Example:
      ynm annotate 01K... --tags ledger --importance 0.9
    """
    from ynm.model.inputs import AnnotateInput, parse_input

    with flag_hints_on_error():
        inp = parse_input(AnnotateInput, drop_none(
            memory_id=one_id(memory_id, memory_id_flag),
            tags=split_tags(tags), links=links_flag(links), data=data_flag(data),
            importance=number_flag("importance", importance),
            confidence=number_flag("confidence", confidence), **rest))
    with open_ynm(cwd) as ynm:
        result = ynm.annotate(inp)
    note = unknown_links_note(result)
    emit(result, as_json,
         or_unchanged(lambda r: f"annotated {r['memoryId']} (record {r['recordId']})"))
    if note is not None:
        say(note, err=True)


@click.command()
@memory_id_input("forget")
@click.option("--reason", help="Why.")
@click.option("--session", help="Session id for provenance.")
@common_options
def forget(as_json: bool, cwd: Path | None, memory_id: str | None, memory_id_flag: str | None,
           **rest: Any) -> None:
    """Forget a memory (a tombstone): hidden from recall, list and context; history kept.

    \b
    Example:
      ynm forget 01K... --reason "wrong"
    """
    from ynm.model.inputs import ForgetInput, parse_input

    inp = parse_input(ForgetInput, drop_none(memory_id=one_id(memory_id, memory_id_flag),
                                             **rest))
    with open_ynm(cwd) as ynm:
        result = ynm.forget(inp)
    emit(result, as_json,
         or_unchanged(lambda r: f"forgot {r['memoryId']} (record {r['recordId']})"))


@click.command()
@memory_id_input("pin")
@click.option("--unpin", is_flag=True, default=False, help="Unpin instead.")
@common_options
def pin(as_json: bool, cwd: Path | None, memory_id: str | None, memory_id_flag: str | None,
        unpin: bool) -> None:
    """Pin a memory: always in the context block (unless tagged occurrence).

    \b
    Example:
      ynm pin 01K...
      ynm pin 01K... --unpin
    """
    with open_ynm(cwd) as ynm:
        result = ynm.pin(one_id(memory_id, memory_id_flag), unpin)
    emit(result, as_json,
         or_unchanged(lambda r: f"{'unpinned' if unpin else 'pinned'} {r['memoryId']}"))


@click.command()
@memory_id_input("promote")
@click.option("--mount", help="Target distributed mount (default: project).")
@common_options
def promote(as_json: bool, cwd: Path | None, memory_id: str | None,
            memory_id_flag: str | None, mount: str | None) -> None:
    """Copy a personal memory into shared (distributed) memory; the original stays.

    \b
    Example:
      ynm promote 01K...
    """
    source = one_id(memory_id, memory_id_flag)
    with open_ynm(cwd) as ynm:
        result = ynm.promote(source, mount)
    emit(result, as_json, lambda r: (
        f"unchanged: {source} is already promoted: {r['memoryId']} in {r['mount']}"
        if r.get("unchanged") else f"promoted {source} -> {r['memoryId']} in {r['mount']}"))


@click.command()
@memory_id_input("purge")
@click.option("--reason", required=True, help="Why (kept in the purge marker).")
@click.option("--forget-history", is_flag=True, default=False,
              help="Restart the history of every rewritten shard, so no ref reaches the bytes.")
@click.option("--yes", is_flag=True, default=False, help="Confirm: purge is irreversible.")
@common_options
def purge(as_json: bool, cwd: Path | None, memory_id: str | None, memory_id_flag: str | None,
          reason: str, forget_history: bool, yes: bool) -> None:
    """Physically remove a memory's records and append an audited purge marker.

    \b
    Example:
      ynm purge 01K... --reason "customer data" --forget-history --yes
    """
    from ynm.errors import Refused
    from ynm.model.inputs import PurgeInput, parse_input

    if not yes:
        raise Refused("purge is irreversible; re-run with --yes to confirm")
    inp = parse_input(PurgeInput, {"memory_id": one_id(memory_id, memory_id_flag),
                                   "reason": reason,
                                   "forget_history": forget_history})
    with open_ynm(cwd) as ynm:
        result = ynm.purge(inp)
    emit(result, as_json, or_unchanged(lambda r: (
        f"purged {r['memoryId']}: {r['removed']} record(s) removed from {r['mount']}")))
