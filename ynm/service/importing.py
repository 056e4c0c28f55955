"""Importing records in the on-disk format (``ynm import``, reference/cli.md §4.9): an input
read in parts, each part's records routed to the mount of their level, checked (namespace,
redaction gate) and appended; what an interrupted import kept is said in its error.

:meth:`ynm.service.ynm.Ynm.import_jsonl` and :meth:`~ynm.service.ynm.Ynm.import_chunks`
delegate here; this module owns the rules they document.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ynm.errors import BatchRefused, InvalidInput, Refused, YnmError
from ynm.model.jsonl import parse_jsonl
from ynm.model.namespaces import write_namespace_problem
from ynm.model.records import Record
from ynm.model.words import counted

if TYPE_CHECKING:
    from ynm.service.mounts import Mount
    from ynm.service.ynm import Progress, Ynm

__all__ = ["BOM", "import_chunks"]

BOM = "\ufeff"  # a UTF-8 byte order mark, once decoded; dropped from text ynm reads


_AGAIN = "run the import again to add the rest (records already there are skipped)"


def _kept(imported: int) -> str:
    """``<n> record[s] was|were imported and is|are kept``: what an import that stopped keeps."""
    return (f"{counted(imported, 'record')} "
            f"{'was imported and is' if imported == 1 else 'were imported and are'} kept")


def _read_to(read: int) -> str:
    """How far an import that stopped had read its input (``read``: lines of whole parts)."""
    return (f"the input was read to line {read}" if read
            else "it came while the first part of the input was read")


SHOWN_IDS = 3  # ids a warning names before "and <n> more"


def conflicting_ids_warning(ids: list[str]) -> str:
    """The warning for record ids the input holds more than once with different records
    (:attr:`ynm.model.jsonl.ParseResult.conflicting`), said once per import whatever their
    number: ``<n> record id[s] appear[s] more than once in the input with different content
    (<id>, <id>, <id>[, and <m> more]): only the first line with each id was read, the later
    ones were skipped; a record id names one record, so give each changed record a new id
    (`ynm show <id>` shows what the store holds)``. What is written does not change: the
    first line wins, as for any repeated id (reference/storage.md §1.4)."""
    shown = ", ".join(ids[:SHOWN_IDS])
    more = len(ids) - SHOWN_IDS
    if more > 0:
        shown += f", and {more} more"
    one = len(ids) == 1
    return (f"{counted(len(ids), 'record id')} {'appears' if one else 'appear'} more than once "
            f"in the input with different content ({shown}): only the first line with "
            f"{'that' if one else 'each'} id was read, the later ones were skipped; a record id "
            "names one record, so give each changed record a new id (`ynm show <id>` shows "
            "what the store holds)")


def _report(imported: int, problems: list[tuple[int, str]], present: int,
            repeated: int) -> dict[str, Any]:
    """An import's result (reference/cli.md §4.9): ``{"imported": <n>, "problems": ["line
    <N>: <message>", ...]}``, problems in line order, then ours, only when there is something
    to say (as ``warnings`` is, so an import with nothing skipped prints the reference's
    shape): ``alreadyPresent`` (records the store had) and ``repeated`` (records whose id an
    earlier line of the input had)."""
    out: dict[str, Any] = {"imported": imported,
                           "problems": [f"line {n}: {m}" for n, m in sorted(problems,
                                                                              key=lambda p: p[0])]}
    if present:
        out["alreadyPresent"] = present
    if repeated:
        out["repeated"] = repeated
    return out


def import_chunks(
    ynm: Ynm, chunks: Iterable[str | bytes], mount_id: str | None = None,
    progress: Progress | None = None,
) -> dict[str, Any]:
    """:meth:`Ynm.import_jsonl <ynm.service.ynm.Ynm.import_jsonl>` of an input given as
    consecutive parts, each of whole lines (every part but the last ends with a newline), read
    and appended one part at a time, so memory holds one part's records, not the input's. The
    result equals one ``import_jsonl`` of the joined text: line numbers count from the start
    of the input, a record id met earlier in the input is dropped (only the ids and a
    fingerprint of their lines are kept across parts; when the dropped line held another
    record, one warning after the import names how many ids and the first
    :data:`SHOWN_IDS`: :func:`conflicting_ids_warning`), and when every record of the whole input is refused nothing is
    written and :class:`BatchRefused` is raised at the end. Parts already appended stay
    appended if a later part raises something else.

    A refusal that depends only on a record's level (no mount of that level, ``--mount``
    of another level, a mount whose anchor is unusable) is one problem, on the first line
    it met, ending ``(and <k> more <level> record[s], the last on line <n>)``, not one per
    line. In a repository with no distributed mount (ynm init never run in this clone,
    or its ``.ynm/config.json`` never committed), an import without ``mount_id`` fails
    before reading any line: records of such a repository's export could go nowhere.

    Raises:
        UnknownMount, BatchRefused: as :meth:`~ynm.service.ynm.Ynm.import_jsonl`.
        NoMount: in a repository with no distributed mount, without ``mount_id``; with
            the hint of :meth:`~ynm.service.ynm.Ynm._route`.
        Interrupted: Ctrl-C; the parts appended before it stay, and the message says how
            many records they held and how far the input was read; when some were, or a
            part was being written, its ``result`` is the import's result so far, with
            ``maybeImported``: the records of the part being written, any number of which
            may have landed.
        LockTimeout: another process kept a mount's lock (one wait, at the part that met
            it); the parts appended before it stay, and the hint says how many records they
            held, how far the input was read and who holds the lock; when some were, its
            ``result`` is the import's result so far.
    """
    from ynm.errors import Interrupted, LockTimeout, MountLevelMismatch, NoMount

    ynm.check_local_mount(mount_id, "import")  # records are imported into a local mount
    if mount_id is not None and ynm.mount(mount_id) is None:
        unopened = ynm.unopened_mount(mount_id)
        if unopened is not None:
            raise unopened
    hint = ynm.no_project_hint()
    if (mount_id is None and hint is not None
            and not any(m.level == "distributed" for m in ynm.mounts)):
        try:
            ynm._route("distributed")  # raises NoMount with the hint
        except NoMount as err:
            err.hint = (f"{err.hint}; an export of personal records alone imports with "
                        "--mount personal")
            raise
    routes: dict[str, Mount | YnmError] = {}  # level -> its mount, or why none takes it
    refused: dict[str, tuple[int, list[int]]] = {}  # level -> (its problem's index, lines)
    problems: list[tuple[int, str]] = []
    first_refusal: YnmError | None = None
    routed = valid = False
    seen: dict[str, int] = {}  # record id -> fingerprint of the line kept (parse_jsonl)
    conflicting: dict[str, None] = {}  # ids met again with another record, in order met
    imported = writing = present = repeated = 0
    line_no = 1
    mark = len(ynm.warnings)
    try:
        for i, text in enumerate(chunks):
            if isinstance(text, bytes):
                text = text.decode("utf-8-sig" if i == 0 else "utf-8", errors="replace")
            text = text.removeprefix(BOM).replace("\n" + BOM, "\n")
            parsed = parse_jsonl(text, first_line=line_no, seen=seen)
            line_no += text.count("\n")
            repeated += parsed.repeated
            conflicting.update(dict.fromkeys(parsed.conflicting))
            problems.extend((p.line, p.message) for p in parsed.problems)
            valid = valid or bool(parsed.records)
            by_mount: dict[str, list[Record]] = {}
            targets: dict[str, Mount] = {}
            for line, r in zip(parsed.numbers, parsed.records):
                if r.level not in routes:
                    try:
                        routes[r.level] = ynm._route(r.level, mount_id, "import")
                        ynm._check_writable(routes[r.level])
                    except (InvalidInput, MountLevelMismatch, NoMount) as err:
                        routes[r.level] = err
                try:
                    problem = write_namespace_problem(r.namespace)
                    if problem:
                        raise InvalidInput(f"namespace: {problem}")
                    mount = routes[r.level]
                    if isinstance(mount, YnmError):
                        if r.level in refused:  # said once, on the first line it met
                            refused[r.level][1].append(line)
                            continue
                        refused[r.level] = (len(problems), [])
                        raise mount
                    ynm._gate(r)
                except (InvalidInput, Refused, MountLevelMismatch, NoMount) as err:
                    problems.append((line, str(err)))
                    first_refusal = first_refusal or err
                    continue
                targets[mount.id] = mount
                by_mount.setdefault(mount.id, []).append(r)
            del parsed
            for mid, records in by_mount.items():
                routed = True
                mount = targets[mid]
                # which records the store lacks is asked under the lock the append takes:
                # imports of one file running at once then write each record once (the
                # second finds the first's records present), not once each
                with ynm._write_lock([mount]):
                    new = mount.read(lambda cache, rs=records: cache.missing(rs))
                    present += len(records) - len(new)
                    writing = len(new)
                    if new:
                        ynm._append(mount, new, progress or ynm._progress, locked=True)
                imported += len(new)
                writing = 0
    except LockTimeout as err:  # another process kept a mount's lock: the parts before stay
        if imported:
            kept = f"{_kept(imported)} ({_read_to(line_no - 1)}); {_AGAIN}"
            err.hint = f"{kept}; {err.hint}" if err.hint else kept
            err.result = _report(imported, problems, present, repeated)
        raise
    except KeyboardInterrupt:
        # every shard's append is one atomic ref update: what landed before Ctrl-C stays;
        # of the part being written when it came, any number of shards may have landed
        kept = _kept(imported) if imported else ""
        if writing:
            part = ("the record being written when it came may be imported too"
                    if writing == 1 else f"some or all of the {counted(writing, 'record')} "
                    "being written when it came may be imported too")
            kept += (", and " if kept else "") + part
        where = _read_to(line_no - 1)  # the lines of the parts read whole
        if not kept:
            raise Interrupted(f"no record was imported ({where})",
                              "run the import again") from None
        stopped = Interrupted(f"{kept} ({where})", _AGAIN)
        stopped.result = _report(imported, problems, present, repeated)
        if writing:  # landed or not: a count the JSON must not pass off as none
            stopped.result["maybeImported"] = writing
        raise stopped from None
    for level, (at, more) in refused.items():
        if more:
            line, message = problems[at]
            message += (f" (and {counted(len(more), f'more {level} record')}, the last on "
                        f"line {more[-1]})")
            problems[at] = (line, message)
    problems.sort(key=lambda p: p[0])
    if conflicting:
        ynm.warnings.append(conflicting_ids_warning(list(conflicting)))
    out = _report(imported, problems, present, repeated)
    if first_refusal is not None and not routed:
        raise BatchRefused(first_refusal, out)
    if problems and not valid:  # not one line of it is a record
        raise BatchRefused(InvalidInput(
            f"input: no valid record in it ({counted(len(problems), 'line')} skipped; the "
            f"first: line {problems[0][0]}: {problems[0][1]})"), out)
    return ynm._with_warnings(out, mark)
