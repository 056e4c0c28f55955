"""Every error ynm raises on purpose, with its exit code. The one place exit codes live.

```
YnmError (exit 1)                      anything that ran and failed
├── InvalidInput (exit 2)              a value that fails validation: ``invalid input: <path>: <msg>``
├── Refused (exit 2)                   the redaction gate or a command-level refusal
├── UnknownMemory (exit 1)             ``unknown memory <id>``
├── UnknownMount (exit 2)              ``no mount "<id>" (have: ...); to add it: ...``
├── MountLevelMismatch (exit 1)        ``mount "<id>" is <level>; cannot take a <level> record``
├── NoMount (exit 1)                   no mount can take a record of that level
├── ShareRequired (exit 1)             a write without a level where no personal mount exists
├── StoreError (exit 1)                a git or filesystem failure underneath the store
│   ├── StoreConflict (exit 1)         compare-and-swap retries exhausted
│   ├── LockTimeout (exit 1)           the repository lock could not be taken in time
│   ├── RefCollision (exit 1)          a new shard ref would be a file where a directory is
│   └── AnchorError (exit 1)           no usable anchor (empty repo, shallow clone, bad config)
├── ConfigError (exit 1)               a configuration file or variable that cannot be used
│   └── InvalidConfig (exit 2)         one that fails validation: ``invalid input: <where>: ...``
│       └── AnchorNotCommit (exit 2)   a write to a mount whose anchor is no commit of its repo
├── MissingExtra (exit 1)              an optional dependency is not installed: names the extra
└── Interrupted (exit 130)             Ctrl-C part way: says what was kept and what to do
```

Messages follow reference/cli.md §2 exactly, so scripts written against either implementation
match the same text. The CLI turns these into ``Error: <message>`` on stderr and the exit code,
followed by ``hint: <what to do>`` when a command set one (the message itself stays the
reference's); the MCP server returns the same text as a tool error.
"""

from __future__ import annotations

import json
import os


class YnmError(Exception):
    """Root of every error ynm raises on purpose. ``exit_code`` is what the CLI exits with."""

    exit_code = 1
    hint: str | None = None  # a next step the CLI prints on a second line (``hint: ...``)
    # What the operation had done when it failed, in the shape of the command's result
    # (``ynm sync``: the mounts synced and the one that failed; ``ynm import``: what was
    # imported before Ctrl-C), or None when it failed before reaching one. A ``--json``
    # command prints it as its JSON document before the error (ynm.cli._common.json_on_failure).
    result: object = None

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class InvalidInput(YnmError):
    """A value failed validation. Message: ``invalid input: <path>: <message>[; ...]`` (cli.md §2).
    ``fields``: the dotted paths of the fields that failed (``links.0.rel``), when the error
    came from a model's validation (empty otherwise), so a command can add the hint that fits
    the field without reading its message."""

    exit_code = 2
    fields: tuple[str, ...] = ()  # also for a subclass that sets its message its own way

    def __init__(self, detail: str, fields: tuple[str, ...] = ()) -> None:
        super().__init__(f"invalid input: {detail}")
        self.detail = detail
        self.fields = fields


class Refused(YnmError):
    """A write or command refused as a matter of policy (redaction gate, purge without --yes)."""

    exit_code = 2


class UnknownMemory(YnmError):
    """No mount holds a memory with this id (an orphan-only id counts as unknown)."""

    def __init__(self, memory_id: str) -> None:
        super().__init__(f"unknown memory {memory_id}")
        self.memory_id = memory_id


class UnknownMount(YnmError):
    """A command or tool named a mount id that is not configured (``--mount``, ``mount``).

    Message: the reference's ``no mount "<id>" (have: <id>, ...|none)`` (cli.md §2), then,
    when ``config_file`` is given, how to add one, in the words of ``ynm login``'s refusal:
    ``; to add it: add {"id":"<id>","level":"distributed","provider":"git-notes",
    "path":"<store>","anchor":"<commit>"} to mounts in <config file> (`ynm init --bare
    <store>` makes a store and prints its anchor)``. Exit 2 on every command, read or write, as any other refused input: the
    reference gives an empty result on reads (exit 0) and exit 1 on writes (cli.md §6), so a
    typo passed for an empty store."""

    exit_code = 2

    def __init__(self, mount_id: str, have: list[str], config_file: str | None = None) -> None:
        message = f'no mount "{mount_id}" (have: {", ".join(have) or "none"})'
        if config_file:
            entry = json.dumps({"id": mount_id, "level": "distributed", "provider": "git-notes",
                                "path": "<store>", "anchor": "<commit>"}, ensure_ascii=False,
                               separators=(",", ":"))
            message += (f"; to add it: add {entry} to mounts in {config_file} "
                        "(`ynm init --bare <store>` makes a store and prints its anchor)")
        super().__init__(message)
        self.mount_id = mount_id


class MemoryElsewhere(YnmError):
    """A command named the mount a memory is in (``--mount``), and another mount holds it.
    Exit 2, as the refused ``--mount`` of an unknown id (:class:`UnknownMount`)."""

    exit_code = 2

    def __init__(self, memory_id: str, holder: str, named: str) -> None:
        super().__init__(f"memory {memory_id} is in mount {holder}, not {named}")
        self.hint = f"pass --mount {holder}, or leave --mount out"


class MountLevelMismatch(YnmError):
    """A record's level differs from the level of the mount (or log) asked to take it."""

    def __init__(self, mount_id: str, mount_level: str, record_level: str) -> None:
        super().__init__(f'mount "{mount_id}" is {mount_level}; cannot take a {record_level} record')


class NoMount(YnmError):
    """No mount of the needed level is open."""


class ShareRequired(YnmError):
    """A write named no level on a store that has no personal level (reference/cli.md §2)."""

    def __init__(self) -> None:
        super().__init__(
            "nothing stored: this store has no personal level, so a memory stored here is shared "
            "with everyone who uses it. To share it, ask the user first, then set level to "
            "distributed. To keep it private, store it in a local ynm instead."
        )


class StoreError(YnmError):
    """A failure in the git store underneath (pygit2 or filesystem), with the cause chained."""


class StoreConflict(StoreError):
    """Compare-and-swap on a shard ref lost every retry."""


class LockTimeout(StoreError):
    """The repository lock (``<git common dir>/ynm.lock``) stayed taken past the timeout."""


class RefCollision(StoreError):
    """A shard ref cannot be created because an existing ref is its directory or lies inside
    it (a namespace equal to another namespace's ``<type>/<yyyy-mm>``, reference/storage.md
    §7.22). Only stores written before ynm refused such namespaces can get here."""

    def __init__(self, ref: str, existing: str) -> None:
        super().__init__(
            f"cannot create {ref}: it collides with the existing ref {existing} (a namespace "
            "must not be another namespace followed by <type>/<yyyy-mm>); write to another "
            "namespace")
        self.ref = ref
        self.existing = existing


class AnchorError(StoreError):
    """No anchor could be chosen: an empty repository, a shallow clone, or a bad configured id."""


class ConfigError(YnmError):
    """A configuration file or ``YNM_*`` variable that cannot be used."""


class InvalidConfig(ConfigError, InvalidInput):
    """A configuration file or variable whose values fail validation. Message: ``invalid
    input: <file or variable>: <key path>: <message>[; ...]``, exit 2, as every schema
    rejection (reference/cli.md §2)."""


class AnchorNotCommit(InvalidConfig):
    """A write to a mount whose configured anchor is not a commit of its repository (an
    object of another kind, or none at all in a clone that is not shallow), so its notes would
    hang off nothing the team's hang off. Message: ``invalid input: anchor <sha> (from
    <where>) is not a commit in <repo>: <why>; <what to do>``, exit 2; nothing is written."""


class BatchRefused(YnmError):
    """Every record of a batch (``ynm import``) was refused, so nothing was written. The message
    and exit code are those of the first refusal; ``result`` is the batch's report
    (``{"imported": 0, "problems": [...]}``), which the CLI prints before the error."""

    def __init__(self, cause: YnmError, result: dict[str, object]) -> None:
        super().__init__(cause.message)
        self.exit_code = cause.exit_code
        self.cause = cause
        self.result = result


def pip_install(extra: str | None = None) -> str:
    """How to install ynm's ``extra`` (None: ynm itself, for a missing required package), in
    one form for an installed ynm and a source checkout alike, without parentheses so that a
    message may put it in its own: ``pip install 'ynm[vector]', or pip install -e '.[vector]'
    in a checkout``. Every message that tells the user to install something of ynm's says it
    through this, after a colon or a semicolon, never inside parentheses (a clause in
    parentheses inside another reads badly), so none drifts from the README (whose Install
    section works from a checkout: ``.venv/bin/pip install -e '.[vector]'``)."""
    if extra is None:
        return "pip install ynm, or pip install -e . in a checkout"
    return f"pip install 'ynm[{extra}]', or pip install -e '.[{extra}]' in a checkout"


class MissingExtra(YnmError):
    """An optional dependency is not installed. Message: ``<what> needs the <extra> extra
    (<module> is not installed): <pip_install(extra)>``, one line, exit 1."""

    def __init__(self, what: str, extra: str, module: str | None = None) -> None:
        missing = f" ({module} is not installed)" if module else ""
        super().__init__(f"{what} needs the {extra} extra{missing}: {pip_install(extra)}")
        self.extra = extra
        self.module = module


class Interrupted(YnmError):
    """Ctrl-C stopped an operation part way. Message: ``interrupted; <what was kept>; <what
    to do>`` (``interrupted; 1200 records were imported and are kept; run the import again
    to add the rest (records already there are skipped)``), exit 130 (128 + SIGINT, as a
    shell reports it). Every write commits with one atomic ref update, so what landed before
    Ctrl-C stays; the operations that run long say so through this (docs/cli.md, exit codes).
    """

    exit_code = 130

    def __init__(self, kept: str, todo: str) -> None:
        super().__init__(f"interrupted; {kept}; {todo}")


def missing_extra(err: ImportError, what: str, extra: str) -> MissingExtra:
    """The :class:`MissingExtra` for an ``ImportError`` met while importing ``extra``'s
    packages, naming the top-level module that is missing."""
    name = (err.name or "").split(".")[0] or None
    return MissingExtra(what, extra, name)


def debugging() -> bool:
    """True when ``YNM_DEBUG`` is set to anything but empty or ``0``: unexpected errors then
    show their traceback (on the CLI and the server's stderr) instead of one line."""
    return os.environ.get("YNM_DEBUG", "") not in ("", "0")


def describe_unexpected(err: BaseException) -> str:
    """An exception ynm did not raise on purpose, on one line: ``<type>: <first line of its
    message>`` (just ``<type>`` when it has no message)."""
    lines = str(err).strip().splitlines()
    return f"{type(err).__name__}: {lines[0]}" if lines else type(err).__name__
