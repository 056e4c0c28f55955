"""The service: one method per operation, called by the CLI (and later the MCP server).

Each method takes a validated input from :mod:`ynm.model.inputs` and returns plain JSON-ready
values in the shapes of reference/cli.md §3. Errors are :mod:`ynm.errors` classes.
"""

from __future__ import annotations

import contextlib
import functools
import json
import time
import types
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ynm import __version__
from ynm.errors import (
    InvalidInput,
    Refused,
    ShareRequired,
    UnknownMemory,
    UnknownMount,
    YnmError,
)
from ynm.index.schema import current_sql, state_sql
from ynm.model.durations import DEFAULT_WORKING_TTL
from ynm.model.ids import Clock
from ynm.model.inputs import (
    AnnotateInput,
    ContextQuery,
    ExportQuery,
    ForgetInput,
    ListQuery,
    PurgeInput,
    RecallQuery,
    RememberInput,
    SessionStartInput,
    SupersedeInput,
)
from ynm.model.jsonl import dumps_record, parse_jsonl, parse_obj
from ynm.model.namespaces import (
    COMMON,
    SESSION_PREFIX,
    namespace_matches,
    normalize_session_id,
    write_namespace_problem,
)
from ynm.model.records import PROMOTE_TAG, Link, Record, union_links
from ynm.model.shards import ShardKey
from ynm.model.text import (
    has_no_search_words,
    summarize,
)
from ynm.service import redaction, sessions
from ynm.service.config import LoadedConfig, load_config
from ynm.service.mounts import PERSONAL, PROJECT, Mount, open_mounts, route
from ynm.service.people import Caller, People
from ynm.service.recall import BACKGROUND_MARGIN, entry, hit, is_expired

Progress = Callable[[str, int, int], None]

# One clock per process: ids and recordedAt strictly increase across every write it makes.
_CLOCK = Clock()


@dataclass
class AppendOutcome:
    """What one append to one mount wrote: the records, and the newest shard revision."""

    records: list[Record]
    revision: str


T = TypeVar("T")
C = TypeVar("C", bound=type)
# inspect.CO_GENERATOR, without importing inspect (about 15 ms at every start)
_GENERATOR = 0x20


def _operations(cls: C) -> C:
    """Run every public method of ``cls`` (functions that return their result; not
    generators, properties, class or static methods, ``run`` itself) through
    :meth:`Ynm.run`, so a damaged cache met anywhere in an operation is rebuilt and the
    operation answers: done here once for every command and tool, present and future."""
    def operation(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def run(self: Ynm, *args: Any, **kwargs: Any) -> Any:
            return self.run(lambda y: fn(y, *args, **kwargs))
        return run

    for name, fn in list(vars(cls).items()):
        if (not name.startswith("_") and name not in ("run", "close")
                and isinstance(fn, types.FunctionType)
                and not fn.__code__.co_flags & _GENERATOR):
            setattr(cls, name, operation(fn))
    return cls


@_operations
class Ynm:
    """ynm's operations over the mounts of one configuration.

    Args:
        loaded: the merged configuration (see :func:`ynm.service.config.load_config`).
        personal: open the personal store (False for a hosted, shared-only server).
        clock: stamps ids and ``recordedAt`` (default: the process clock).
        now_ms: the time reads measure recency and working-memory expiry against, in
            milliseconds since the epoch (default: the wall clock).
    """

    def __init__(
        self,
        loaded: LoadedConfig,
        *,
        personal: bool = True,
        clock: Clock | None = None,
        now_ms: Callable[[], int] | None = None,
    ) -> None:
        self.loaded = loaded
        self.config = loaded.config
        self.clock = clock or _CLOCK
        self._now_ms = now_ms or (lambda: time.time_ns() // 1_000_000)
        self.mounts, self.mount_problems = open_mounts(loaded, personal=personal)
        # hosted stores (provider mcp), reached over MCP by reads (ynm.service.remote, imported
        # only when one is configured)
        self.remotes: list[Any] = []
        if any(mc.provider == "mcp" for mc in loaded.config.mounts):
            from ynm.service.remote import remote_mounts

            self.remotes = remote_mounts(loaded)
        # Hosted stores the last read could not include (ynm.service.remote.LeftOut): the CLI
        # names each on stderr, the MCP tools in the guidance, context's JSON as ``leftOut``.
        self.left_out: list[Any] = []
        # The last recall's question words and those no memory holds
        # (ynm.service.recall.QuestionWords; None before a recall with words): the CLI says
        # from them why a recall found nothing.
        self.recall_words: Any = None
        self._embedder: Any = None
        self._embedder_opened = False
        self.embedder_problem: str | None = None
        self._query_vectors: dict[tuple[str, str], bytes] = {}
        # Why vector search fell back to full text in this process (None: it did not).
        self.vector_failure: str | None = None
        # Things that went wrong without failing the operation: a vector search that fell
        # back to full text, a cache update that failed after a committed write. The CLI prints
        # each on stderr (``warning: <text>``), the MCP tools add them to the guidance, and
        # write results carry the ones of their call as ``warnings``.
        self.warnings: list[str] = []
        self.warnings.extend(r.problem for r in self.remotes if r.problem)  # sign-in files
        # a mount whose anchor is no commit of its repository refuses writes: say why, once
        self.warnings.extend(m.anchor_warning for m in self.mounts if m.anchor_warning)
        for m in self.mounts:  # said by the first read that finds it (Mount.stray_warning)
            m.warn = self._warn_once
        # a configured mount that could not be opened is left out of every read: say so, once
        self.warnings.extend(
            f"mount {p.id} is left out: {p.error}; correct its \"path\" in "
            f"{loaded.sources.get('mounts', 'the configuration')} if it is mistyped "
            "(`ynm doctor` checks every mount)"
            for p in self.mount_problems if p.id not in (PERSONAL, PROJECT))
        self._background: dict[str, list[bytes]] = {}  # embedder key -> background vectors
        self._progress: Progress | None = None
        # Told ``notice(text)`` just before work that is slow to start and reports no progress
        # (loading the embedding model); the CLI prints it on a terminal (TerminalProgress.note).
        self.notice: Callable[[str], None] | None = None
        # Who the current call writes as (a request's caller, ynm.service.people.Caller);
        # None: this process's own actor (config ``actor``), no client, the level's default
        # namespace. The MCP server sets it around each tool call.
        self.caller: Caller | None = None
        self._people: People | None = None
        # Whether an operation is running (:meth:`run`: only the outermost one runs again
        # after a damaged cache is rebuilt), and how many times this service moved a shard
        # ref (an append, a purge, a sync): an operation that wrote is never run again.
        self._running = False
        self._writes = 0

    @property
    def progress(self) -> Progress | None:
        """Told of long work as ``progress(phase, done, total)`` (None, the default: nobody
        is). Phases: ``read`` (shards read by a cache rebuild), ``fold``, ``embed`` (memories
        given a vector, in recall, context and reindex), ``append`` (records written, before
        and after), ``sync`` (mounts synced), ``dream`` (passes run), ``expire`` (working
        memory forgotten). The CLI sets its terminal progress bar here
        (ynm.cli._common.TerminalProgress); setting it tells every mount too."""
        return self._progress

    @progress.setter
    def progress(self, value: Progress | None) -> None:
        self._progress = value
        for m in self.mounts:
            m.progress = value

    @classmethod
    def open(
        cls, cwd: str | Path | None = None, env: Mapping[str, str] | None = None, **kwargs: Any
    ) -> Ynm:
        """Load configuration for ``cwd`` and open its mounts."""
        return cls(load_config(cwd, env), **kwargs)

    def close(self) -> None:
        """Close every cache connection."""
        for m in self.mounts:
            m.close()

    def __enter__(self) -> Ynm:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- helpers ---------------------------------------------------------------------------

    def run(self, fn: Callable[[Ynm], T]) -> T:
        """``fn(self)`` as one operation, rebuilding a cache found damaged on the way: when a
        query meets a damaged cache file (ynm.index.schema.CacheDamaged, at open or
        mid-query), the mount says so on stderr in one line, deletes the file and builds it
        again from git (:meth:`Mount.recover`), and ``fn`` runs again from the start on the
        new file, so the caller gets the answer it would have had. Every public method of
        this class runs through here (:func:`_operations`), as do the MCP server's calls;
        inside an operation, the methods it calls run directly, so the outermost one starts
        again.

        Raises:
            CacheDamaged: the same file is found damaged again after its rebuild.
            YnmError: ``the search cache of mount <id> was damaged ...``, when the operation
                had written records before the damage was found: the cache is rebuilt, and
                the operation is not run again (it would write or report twice).
        """
        if self._running:
            return fn(self)
        self._running = True
        rebuilt: set[str] = set()
        try:
            while True:
                writes = self._writes
                try:
                    return fn(self)
                except Exception as err:
                    if getattr(err, "path", None) in rebuilt:
                        raise
                    path = self._recover(err)
                    if path is None or path in rebuilt:
                        raise
                    rebuilt.add(path)
                    if self._writes != writes:
                        raise YnmError(f"the search cache of mount {self._mount_of(path)} was "
                                       f"damaged ({err}) and has been rebuilt from git; what "
                                       "was written before it stays: run the command again "
                                       "to finish") from None
        finally:
            self._running = False

    def _recover(self, err: BaseException) -> str | None:
        """Rebuild the cache ``err`` names, or holds the text it could not read back, when it
        reports a damaged file (:meth:`Mount.recover`); returns the rebuilt file's path, or
        None when it is no damage of a cache."""
        for m in self.mounts:
            if m.recover(err, self._progress):
                return str(m.cache_path)
        return None

    def _mount_of(self, path: str | None) -> str:
        """The id of the mount whose cache file is ``path`` (the path itself when none)."""
        return next((m.id for m in self.mounts if str(m.cache_path) == path), str(path))

    def _warn_once(self, text: str) -> None:
        """Add ``text`` to :attr:`warnings` unless it is there already."""
        if text not in self.warnings:
            self.warnings.append(text)

    def mount(self, mount_id: str) -> Mount | None:
        """The open mount with this id, or None."""
        return next((m for m in self.mounts if m.id == mount_id), None)

    def check_mount(self, mount_id: str | None) -> None:
        """Refuse a ``mount_id`` (``--mount``, a tool's ``mount``) that names no configured
        mount: neither an open local mount, nor a hosted (mcp) one, nor one configured but
        not opened (a read leaves that one out with a warning, a write says why it did not
        open). None passes.

        Raises:
            UnknownMount: (exit 2) ``no mount "<id>" (have: <every configured id>); to add
                it: ...`` naming the configuration file that holds ``mounts`` (else
                ``<YNM_HOME>/config.json``). The reference answers a read with an empty
                result instead (cli.md §6); ynm refuses it on every command alike.
        """
        if mount_id is None:
            return
        have = [*(m.id for m in self.mounts), *(p.id for p in self.mount_problems),
                *(r.id for r in self.remotes)]
        if mount_id not in have:
            where = self.loaded.sources.get("mounts") or str(self.loaded.home / "config.json")
            raise UnknownMount(mount_id, list(dict.fromkeys(have)), where)

    def check_memory_mount(self, memory_id: str, mount_id: str | None) -> None:
        """Refuse an edit of ``memory_id`` told to look in ``mount_id`` when another mount
        holds it: :meth:`check_mount` first (an unknown id is refused before the memory is
        looked up), then the memory's mount. None passes. A memory no local mount holds
        passes when ``mount_id`` names a hosted store (the edit is tried there).

        Raises:
            UnknownMount: (exit 2) as :meth:`check_mount`.
            UnknownMemory: ``mount_id`` names a local mount and no local mount holds it.
            MemoryElsewhere: (exit 2) ``memory <id> is in mount <holder>, not <mount_id>``
                with the hint ``pass --mount <holder>, or leave --mount out``.
        """
        from ynm.errors import MemoryElsewhere

        self.check_mount(mount_id)
        if mount_id is None:
            return
        try:
            holder, _ = self.find(memory_id)
        except UnknownMemory:
            if any(m.id == mount_id for m in self.mounts):
                raise  # named a local mount: the hosted stores are not tried
            return
        if holder.id != mount_id:
            raise MemoryElsewhere(memory_id, holder.id, mount_id)

    def check_local_mount(self, mount_id: str | None, what: str) -> None:
        """:meth:`check_mount`, and refuse a hosted (mcp) store's id for an operation that
        writes to a local mount only (``what``: ``promote``, ``import``).

        Raises:
            UnknownMount: as :meth:`check_mount`.
            Refused: (exit 2) ``mount "<id>" is a hosted store; <what> writes to local
                mounts only (local: <ids>)``.
        """
        from ynm.errors import Refused

        self.check_mount(mount_id)
        if any(r.id == mount_id for r in self.remotes):
            local = ", ".join(m.id for m in self.mounts) or "none"
            raise Refused(f'mount "{mount_id}" is a hosted store; {what} writes to local '
                          f"mounts only (local: {local})")

    def _select(self, mount_id: str | None, levels: list[str] | tuple[str, ...] = ()) -> list[Mount]:
        """The open local mounts a command reads: every one, or the one ``mount_id`` names,
        of ``levels`` (every level when empty).

        Raises:
            UnknownMount: ``mount_id`` is configured nowhere (:meth:`check_mount`).
        """
        self.check_mount(mount_id)
        return [
            m for m in self.mounts
            if (mount_id is None or m.id == mount_id) and (not levels or m.level in levels)
        ]

    def scope_conflict(self, mount_id: str | None, levels: str | list[str] | tuple[str, ...]
                       | None) -> str | None:
        """Why ``--mount`` and ``--level`` together select no mount, or None: the mount
        ``mount_id`` names (open, configured but not opened, or hosted, which is
        distributed) is of a level ``levels`` leaves out: ``mount project is distributed,
        not personal``. A read given that pair reads nothing; the commands say why (the
        reference answers an empty result, cli.md §6).
        """
        if mount_id is None or not levels:
            return None
        asked = [levels] if isinstance(levels, str) else list(levels)
        level = next((m.level for m in [*self.mounts, *self.mount_problems]
                      if m.id == mount_id), None)
        if level is None and any(r.id == mount_id for r in self.remotes):
            level = "distributed"
        if level is None or level in asked:
            return None
        return f"mount {mount_id} is {level}, not {' or '.join(asked)}"

    def _select_remotes(self, mount_id: str | None, levels: list[str] | tuple[str, ...] = ()
                        ) -> list[Any]:
        """The hosted stores a read includes: every one, or the one ``mount_id`` names, when
        ``levels`` is empty or holds ``distributed`` (reference/algorithms.md §2.7)."""
        return [r for r in self.remotes
                if (mount_id is None or r.id == mount_id)
                and (not levels or "distributed" in levels)]

    def _stamp(self, fields: dict[str, Any], *, session: str | None = None,
               source: str | None = None) -> Record:
        record_id, recorded_at = self.clock.stamp()
        caller = self.caller
        provenance = {"actor": caller.actor if caller is not None else self.config.actor}
        if caller is not None and caller.client:
            provenance["client"] = caller.client  # the signed-in person's OAuth client (§2.5)
        if session:
            provenance["session"] = session
        if source:
            provenance["source"] = source
        obj = {"v": 1, "id": record_id, "memoryId": fields.pop("memoryId", record_id), **fields,
               "recordedAt": recorded_at, "provenance": provenance}
        return parse_obj(obj)

    def _append(self, mount: Mount, records: list[Record],
                progress: Progress | None = None, *, locked: bool = False) -> AppendOutcome:
        """Append records to a mount (one commit per shard) and update its cache in the same
        call. Returns the newest shard revision. ``locked``: the caller holds the mount's
        repository lock (:meth:`_write_lock`), so this append does not take it again."""
        self._check_writable(mount)
        groups: dict[ShardKey, list[Record]] = {}
        for r in records:
            groups.setdefault(ShardKey(r.level, r.namespace, r.type, r.bucket), []).append(r)
        lines = {r.id: dumps_record(r) for r in records}
        batches = {
            key: ("".join(lines[r.id] + "\n" for r in recs).encode(), len(recs))
            for key, recs in groups.items()
        }
        if progress:
            progress("append", 0, len(records))
        appended = mount.log.append(batches, locked=locked)
        self._writes += 1
        revision = appended[-1].revision if appended else ""
        # The records are committed: from here on a failure is a warning, never the result,
        # or a caller told "failed" would write them again.
        try:
            if progress:
                progress("append", len(records), len(records))
            try:
                mount.cache.apply_append(mount.log, appended, records, lines)
            except Exception as err:
                if not mount.recover(err, self._progress):  # rebuilt with the new records
                    raise
        except Exception as err:  # noqa: BLE001 (any failure: the write stands)
            self.warnings.append(f"saved, but the search cache of mount {mount.id} was not "
                                 f"updated ({type(err).__name__}: {err}); the next command "
                                 "catches up from git")
        return AppendOutcome(records, revision)

    @contextlib.contextmanager
    def _write_lock(self, mounts: Iterable[Mount]) -> Iterator[None]:
        """Hold the repository lock (``ynm.lock`` in the git common dir) of each of
        ``mounts`` for the block: one acquisition per lock file, in path order, so the appends
        of a loop (``_append(..., locked=True)``) wait out a held lock once, not once each.

        Raises:
            LockTimeout: a lock stayed taken past its timeout; the locks taken before it are
                released and nothing is written. Its hint names the process holding it."""
        locks: dict[str, Any] = {}
        for m in mounts:
            lock = m.log.lock()
            locks.setdefault(str(lock.path), lock)
        with contextlib.ExitStack() as stack:
            for path in sorted(locks):
                stack.enter_context(locks[path])
            yield

    def _check_writable(self, *mounts: Mount) -> None:
        """Refuse a write before it touches any of ``mounts`` when one's anchor is no commit
        of its repository (:meth:`Mount.check_writable`); the read warning about it is then
        dropped, since the error says the same.

        Raises:
            AnchorNotCommit: (exit 2) nothing is written."""
        for m in mounts:
            if m.anchor_problem is not None:
                if m.anchor_warning in self.warnings:
                    self.warnings.remove(m.anchor_warning)
                m.check_writable()

    def _route(self, level: str, mount_id: str | None = None, what: str = "this command"
               ) -> Mount:
        """:func:`ynm.service.mounts.route`, whose ``no distributed mount`` (the reference's
        text) gains a hint when the repository around cwd has no project mount: ynm init was
        never run in this clone, or its ``.ynm/config.json`` was never committed.

        Raises:
            UnknownMount, MountLevelMismatch, NoMount: as route; UnknownMount (exit 2) for
                an id configured nowhere (:meth:`check_mount`).
            Refused: ``mount_id`` names a hosted store, which ``what`` cannot write to
                (:meth:`check_local_mount`).
            StoreError: ``mount "<id>" is configured but cannot be opened: <why>`` for a
                configured mount that did not open (route would call it unknown)."""
        from ynm.errors import NoMount

        try:
            return route(self.mounts, level, mount_id)
        except NoMount as err:
            err.hint = self.no_project_hint()
            raise
        except UnknownMount:
            self.check_local_mount(mount_id, what)
            unopened = self.unopened_mount(mount_id)
            if unopened is None:
                raise
            raise unopened from None

    def unopened_mount(self, mount_id: str | None) -> YnmError | None:
        """The error of a write to a mount that is configured but did not open (``mount
        "<id>" is configured but cannot be opened: <why>``, a StoreError, exit 1, with the
        hint that names the configuration file), or None when ``mount_id`` names no such
        mount. "no mount" would send the user to the wrong fix; the error says it, so the
        read warning about that mount goes."""
        from ynm.errors import StoreError

        problem = next((p for p in self.mount_problems if p.id == mount_id), None)
        if problem is None:
            return None
        self.warnings[:] = [w for w in self.warnings
                            if not w.startswith(f"mount {mount_id} is left out: ")]
        err = StoreError(f'mount "{mount_id}" is configured but cannot be opened: '
                         f"{problem.error}")
        err.hint = (f"correct its \"path\" in "
                    f"{self.loaded.sources.get('mounts', 'the configuration')} if it is "
                    "mistyped; `ynm doctor` checks every mount")
        return err

    def no_project_hint(self) -> str | None:
        """What to do when a distributed record has no mount to go to, in a repository with
        no project mount; None outside one, or when the project's config exists (its mount
        then failed to open, and the warning about it says why)."""
        from ynm.service.config import project_config_path

        repo = self.loaded.repo
        if repo is None or self.loaded.bare or project_config_path(repo).exists():
            return None
        return (f"{repo} has no .ynm/config.json: run `ynm init` there (a clone gets it only "
                "when it is committed where ynm init ran)")

    def _with_warnings(self, result: dict[str, Any], mark: int) -> dict[str, Any]:
        """``result`` plus ``warnings``: what went wrong after ``mark`` (an index into
        :attr:`warnings`) without failing the write; the key is left out when nothing did
        (a WriteResult, reference/cli.md §3.1, with one more optional key)."""
        if len(self.warnings) > mark:
            result["warnings"] = self.warnings[mark:]
        return result

    def unknown_link_targets(self, links: Any) -> list[str]:
        """The ids that ``links`` (``Link`` models or ``{rel, to}`` dicts) point at and no
        local mount holds, once each, in the order given. A link may point at a memory that
        is not here (the reference accepts any ULID, reference/storage.md §1.2: it may arrive
        with the next sync), so the write keeps it; the caller says so."""
        out: list[str] = []
        for link in links:
            to = link["to"] if isinstance(link, dict) else link.to
            if to in out:
                continue
            try:
                self.find(to)
            except UnknownMemory:
                out.append(to)
        return out

    def _name_unknown_links(self, result: dict[str, Any], links: Any) -> dict[str, Any]:
        """``result`` plus ``unknownLinks`` (:meth:`unknown_link_targets` of ``links``) when
        some link points at no memory here. The CLI says so on stderr and the MCP tools in
        the guidance; neither returns the key."""
        if links and not result.get("unchanged"):
            unknown = self.unknown_link_targets(links)
            if unknown:
                result["unknownLinks"] = unknown
        return result

    def _gate(self, record: Record) -> None:
        if record.level == "distributed":
            redaction.check_record(record, self.config.redaction,
                                   self.config.redaction_detectors)

    # -- remember --------------------------------------------------------------------------

    def remember(self, inp: RememberInput) -> dict[str, Any]:
        """Record a new memory (reference/cli.md §4.20). Returns a WriteResult
        ``{memoryId, recordId, mount, revision}``.

        Raises:
            ShareRequired: no level given and no personal mount is open.
            Refused: a distributed write holds a secret (redaction gate).
            UnknownMount, MountLevelMismatch, NoMount: see :func:`route`.
        """
        [out] = self.remember_many([(inp, self.caller)])
        if isinstance(out, BaseException):
            raise out
        return out

    def remember_many(
        self, calls: list[tuple[RememberInput, Caller | None]]
    ) -> list[dict[str, Any] | BaseException]:
        """Several ``remember`` calls as one group commit: each input is checked, stamped and
        gated on its own (as its caller, ``Ynm.caller`` for the duration), then the records
        of all of them are appended with one commit per shard (in input order within the
        shard) under one acquisition of each mount's lock, then each gets its own WriteResult.

        Returns:
            Per input, in order: its WriteResult (``revision``: the commit holding its record,
            shared by the records of that shard), or the exception its call would have
            raised. A refused input, or a shard whose append failed, fails only the inputs
            concerned; the others are stored. A mount whose lock cannot be had fails its
            inputs with the one LockTimeout, after one wait. Source: ``ynm serve``'s single
            write queue (DESIGN.md "Server"), which hands queued remembers here together.
        """
        outs: list[dict[str, Any] | BaseException | None] = [None] * len(calls)
        # What went wrong without failing a write, per input (its own steps and its shard's).
        notes: list[list[str]] = [[] for _ in calls]
        staged: list[tuple[int, Mount, Record, RememberInput]] = []
        saved = self.caller
        try:
            for n, (inp, caller) in enumerate(calls):
                self.caller = caller
                mark = len(self.warnings)
                try:
                    try:
                        prepared = self._prepare_remember(inp)
                    except Exception as err:
                        if self._recover(err) is None:  # a damaged cache is rebuilt: once more
                            raise
                        prepared = self._prepare_remember(inp)
                except Exception as err:  # noqa: BLE001 - reported to this input only
                    outs[n] = err
                    continue
                finally:
                    notes[n] += self.warnings[mark:]
                if isinstance(prepared, dict):  # a hosted store wrote it
                    outs[n] = prepared
                else:
                    staged.append((n, prepared[0], prepared[1], inp))
        finally:
            self.caller = saved
        # One append per (mount, shard): a failure reaches only the records in that shard.
        groups: dict[tuple[str, ShardKey], list[int]] = {}
        for i, (_n, mount, record, _inp) in enumerate(staged):
            key = ShardKey(record.level, record.namespace, record.type, record.bucket)
            groups.setdefault((mount.id, key), []).append(i)
        revisions: dict[int, str] = {}
        by_mount: dict[str, list[list[int]]] = {}
        for (mount_id, _key), members in groups.items():
            by_mount.setdefault(mount_id, []).append(members)
        for shards in by_mount.values():
            mount = staged[shards[0][0]][1]
            try:  # one lock per mount: a held lock is waited out once, not once per shard
                with self._write_lock([mount]):
                    for members in shards:
                        mark = len(self.warnings)
                        try:
                            out = self._append(mount, [staged[i][2] for i in members],
                                               locked=True)
                        except Exception as err:  # noqa: BLE001 - to this shard's inputs only
                            for i in members:
                                outs[staged[i][0]] = err
                            continue
                        for i in members:
                            revisions[i] = out.revision
                            notes[staged[i][0]] += self.warnings[mark:]
            except Exception as err:  # noqa: BLE001 - the lock: this mount's inputs only
                for i in (i for members in shards for i in members if i not in revisions):
                    outs[staged[i][0]] = err
        stored = [i for i in range(len(staged)) if i in revisions]
        guidance = self._guidance_for([(staged[i][2].memory_id, staged[i][3].content)
                                       for i in stored])
        for i, (note, problems) in zip(stored, guidance, strict=True):
            n, mount, record, inp = staged[i]
            result = self._write_result_of(mount, record, revisions[i], note)
            self._name_unknown_links(result, inp.links)
            notes[n] += problems
            if notes[n]:
                result["warnings"] = notes[n]
            outs[n] = result
        return [out if out is not None else RuntimeError("not run") for out in outs]

    def _prepare_remember(self, inp: RememberInput) -> tuple[Mount, Record] | dict[str, Any]:
        """Route, stamp, gate and judge one remember: (mount, record) to append, or the
        result of a hosted store that wrote it itself."""
        level = inp.level
        if level is None:
            if self.mount(PERSONAL) is None:
                raise ShareRequired()
            level = "personal"
        namespace = inp.namespace
        if level == "personal" and namespace in (None, COMMON):
            namespace = f"user/{self.config.user_id}"
        elif namespace is None:
            # a signed-in person's unnamed namespace is user/<person id> (server.md §1.6, §2.5)
            caller_ns = self.caller.namespace if self.caller is not None else None
            namespace = caller_ns or COMMON
        from ynm.service.remote import hosted_target, remember_hosted

        hosted = hosted_target(self.mounts, self.remotes, level, inp.mount)
        if hosted is not None:  # a hosted store stamps, gates and writes it
            return remember_hosted(hosted, inp, level, namespace)
        mount = self._route(level, inp.mount)
        self._check_writable(mount)
        summary = inp.summary if inp.summary is not None else summarize(inp.content)
        fields: dict[str, Any] = {
            "op": "create", "type": inp.type, "level": level, "namespace": namespace,
            "subject": inp.subject, "tags": inp.tags, "content": inp.content, "summary": summary,
            "data": inp.data, "dataSchema": inp.data_schema, "importance": inp.importance,
            "confidence": inp.confidence, "validFrom": inp.valid_from, "validTo": inp.valid_to,
            "ttl": inp.ttl or self._working_ttl(inp.type, namespace),
            "links": [link.model_dump() for link in inp.links],
        }
        fields = {k: v for k, v in fields.items() if v is not None}
        record = self._stamp(fields, session=inp.session, source=inp.source)
        self._gate(record)
        # -- write-path judge (ynm.dream.write_judge; algorithms §2.11): calibrated only --
        from ynm.dream.write_judge import judge_write

        judged = judge_write(self, fields)
        if judged is not None:
            record = self._stamp(judged, session=inp.session, source=inp.source)
        # -- end write-path judge --
        return mount, record

    @staticmethod
    def _write_result_of(mount: Mount, record: Record, revision: str,
                         guidance: str | None) -> dict[str, Any]:
        """The WriteResult of a stored remember, with its similar-memory ``guidance`` when
        there is one (the caller adds ``warnings``)."""
        result = {"memoryId": record.memory_id, "recordId": record.id, "mount": mount.id,
                  "revision": revision}
        if guidance:
            result["guidance"] = guidance
        return result

    def _guidance_for(self, writes: list[tuple[str, str]]
                      ) -> list[tuple[str | None, list[str]]]:
        """:meth:`similar_guidance` of each ``(memory id, content)`` of stored writes, with
        what went wrong looking for it (also added to :attr:`warnings`): the caches are
        refreshed once for all of them (a group commit's writes are all in the cache already;
        nothing else writes in between) and their lookups shared. Runs after the append: a
        failure is a warning and that write gets no guidance (see :meth:`_append`)."""
        def failed(err: Exception) -> list[str]:
            self.warnings.append(f"saved, but looking for similar memories failed "
                                 f"({type(err).__name__}: {err})")
            return self.warnings[-1:]

        if not writes:
            return []
        try:
            caches = [m.fresh_cache() for m in self._select(None)]
        except Exception as err:  # noqa: BLE001 (any failure: the writes stand)
            return [(None, failed(err))] * len(writes)
        out: list[tuple[str | None, list[str]]] = []
        seen: dict[Any, Any] = {}  # the store does not change in between: lookups are shared
        for memory_id, content in writes:
            try:
                try:
                    note = self.similar_guidance(memory_id, content, caches=caches, seen=seen)
                except Exception as err:
                    if self._recover(err) is None:  # a damaged cache is rebuilt: look again
                        raise
                    seen.clear()
                    note = self.similar_guidance(memory_id, content, caches=caches, seen=seen)
                out.append((note, []))
            except Exception as err:  # noqa: BLE001
                out.append((None, failed(err)))
        return out

    def similar_guidance(self, memory_id: str, content: str, *,
                         caches: list[Any] | None = None,
                         seen: dict[Any, Any] | None = None) -> str | None:
        """The note a write gets when similar memories already exist, or None
        (ynm.service.guidance.similar_guidance, which says which memories count as similar
        and which are tested). ``caches``: the local mounts' caches (:meth:`_select`, in
        order), already refreshed; None refreshes them here. ``seen``: lookups shared by the
        writes of one group commit (see there)."""
        from ynm.service.guidance import similar_guidance

        if caches is None:
            caches = [m.fresh_cache() for m in self._select(None)]
        return similar_guidance(caches, memory_id, content, now_ms=self._now_ms(), seen=seen)

    # -- edits (reference/cli.md §4.1, §4.7, §4.15, §4.16, §4.25) ------------------------

    def _edit(self, memory_id: str, fields: dict[str, Any], *, session: str | None = None,
              source: str | None = None,
              found: tuple[Mount, dict[str, Any]] | None = None
              ) -> tuple[Mount, Record, str, int]:
        """Append one record to the memory's own mount, type/level/namespace from its folded
        state unless ``fields`` says otherwise. Returns the mount, the record, the revision
        and the length :attr:`warnings` had before the append (for :meth:`_with_warnings`).

        Raises:
            UnknownMemory: no mount holds the memory.
            Refused: a distributed record holds a secret (redaction gate).
        """
        mount, state = found or self.find(memory_id)
        mark = len(self.warnings)
        base = {"memoryId": memory_id, "type": state["type"], "level": state["level"],
                "namespace": state["namespace"], "tags": [], "links": []}
        base.update({k: v for k, v in fields.items() if v is not None})
        record = self._stamp(base, session=session, source=source)
        self._gate(record)
        out = self._append(mount, [record])
        return mount, record, out.revision, mark

    def _find_or_hosted(self, memory_id: str) -> tuple[Mount, dict[str, Any]] | None:
        """:meth:`find`, or None when no local mount holds the memory and hosted mounts exist
        (the edit is then tried on them, :meth:`_edit_hosted`).

        Raises:
            UnknownMemory: no local mount holds it and no hosted mount is configured.
        """
        try:
            return self.find(memory_id)
        except UnknownMemory:
            if not self.remotes:
                raise
            return None

    def _edit_hosted(self, tool: str, inp: Any) -> dict[str, Any]:
        """An edit of a memory no local mount holds, tried on the hosted stores
        (:func:`ynm.service.remote.edit_hosted`)."""
        from ynm.service.remote import edit_hosted

        return edit_hosted(self.remotes, tool, inp)

    def _write_result(self, mount: Mount, record: Record, revision: str,
                      mark: int) -> dict[str, Any]:
        """A WriteResult (reference/cli.md §3.1), with the ``warnings`` since ``mark``."""
        return self._with_warnings({"memoryId": record.memory_id, "recordId": record.id,
                                    "mount": mount.id, "revision": revision}, mark)

    @staticmethod
    def _unchanged(mount: Mount, memory_id: str, note: str) -> dict[str, Any]:
        """The result of a write that would change nothing, so wrote nothing:
        ``{"memoryId", "mount", "unchanged": true, "note"}``: a WriteResult (reference/cli.md
        §3.1) without ``recordId`` and ``revision``, since no record and no commit was made.
        ``note`` says why, e.g. ``already pinned``. The reference appends a record anyway."""
        return {"memoryId": memory_id, "mount": mount.id, "unchanged": True, "note": note}

    def supersede(self, inp: SupersedeInput) -> dict[str, Any]:
        """A new version of a memory (op ``supersede``): new content, summary (derived when not
        given), data; subject kept unless given; tags and links added; revives a tombstoned
        memory. Returns a WriteResult.

        Unlike the reference (reference/storage.md §7.18), importance, confidence, pinned and
        needsReview are written only when given, so a supersede never resets them, and a
        working memory keeps its ttl unless a new one is given. As in the reference (cli.md
        §4.25, storage.md §2.4: content, summary, data, dataSchema, validFrom and validTo are
        read from the latest version, never merged), a new version holds only the data,
        dataSchema, validFrom and validTo it is given; the WriteResult names those the previous
        version had and this one lacks as ``dropped`` (``["data", "dataSchema"]``,
        :func:`dropped_by_supersede`), so the caller can say so.

        A supersede that would change nothing (a live memory that is not working memory, which
        a supersede renews; the same content, summary, data, dataSchema, validFrom, validTo and
        ttl; every tag and link already there; no subject or scalar that differs) writes
        nothing and returns :meth:`_unchanged`.

        Raises:
            UnknownMemory, Refused.
        """
        found = self._find_or_hosted(inp.memory_id)
        if found is None:
            return self._edit_hosted("memory_supersede", inp)
        state = found[1]
        if inp.ttl is not None and state["type"] != "working":
            raise InvalidInput(f"ttl: only working memory expires; a {state['type']} memory "
                               "takes no ttl")
        ttl = inp.ttl or state["current"].get("ttl")
        if _same_version(state, inp, ttl):
            return self._unchanged(found[0], inp.memory_id, "same content and fields")
        fields = {
            "op": "supersede", "subject": inp.subject or state.get("subject"),
            "tags": inp.tags, "content": inp.content,
            "summary": inp.summary if inp.summary is not None else summarize(inp.content),
            "data": inp.data, "dataSchema": inp.data_schema, "importance": inp.importance,
            "confidence": inp.confidence, "pinned": inp.pinned, "needsReview": inp.needs_review,
            "validFrom": inp.valid_from, "validTo": inp.valid_to, "ttl": ttl,
            # the supersedes link once, even when --links gives it too
            "links": [link.model_dump() for link in union_links(
                [Link(rel="supersedes", to=inp.memory_id)], inp.links)],
        }
        result = self._write_result(*self._edit(inp.memory_id, fields, session=inp.session,
                                                source=inp.source, found=found))
        self._name_unknown_links(result, inp.links)
        dropped = dropped_by_supersede(state["current"], inp)
        if dropped:
            result["dropped"] = dropped
        return result

    def annotate(self, inp: AnnotateInput, *, unchanged: str = "nothing to change"
                 ) -> dict[str, Any]:
        """Add tags and links, set importance/confidence/pinned/needsReview, record a reason
        or data; content never changes (op ``annotate``). Returns a WriteResult.

        An annotate that changes nothing (every tag and link already there, each scalar given
        equal to the folded state, no data; a reason alone changes nothing) writes nothing and
        returns :meth:`_unchanged` with the note ``unchanged``. An annotate carrying ``data``
        (dream bookkeeping included, seed 000) is always written.

        Raises:
            UnknownMemory, Refused.
        """
        found = self._find_or_hosted(inp.memory_id)
        if found is None:
            return self._edit_hosted("memory_annotate", inp)
        if _annotate_changes_nothing(found[1], inp):
            return self._unchanged(found[0], inp.memory_id, unchanged)
        fields = {
            "op": "annotate", "tags": inp.tags,
            "links": [link.model_dump() for link in inp.links], "importance": inp.importance,
            "confidence": inp.confidence, "pinned": inp.pinned, "needsReview": inp.needs_review,
            "reason": inp.reason, "data": inp.data,
        }
        return self._name_unknown_links(
            self._write_result(*self._edit(inp.memory_id, fields, session=inp.session,
                                           found=found)), inp.links)

    def forget(self, inp: ForgetInput) -> dict[str, Any]:
        """Tombstone a memory: hidden from recall, list and context; history kept. A memory
        already forgotten is left as it is (:meth:`_unchanged`, note ``already forgotten``).

        Raises:
            UnknownMemory.
        """
        found = self._find_or_hosted(inp.memory_id)
        if found is None:
            return self._edit_hosted("memory_forget", inp)
        if found[1].get("tombstoned"):
            return self._unchanged(found[0], inp.memory_id, "already forgotten")
        fields = {"op": "tombstone", "reason": inp.reason}
        return self._write_result(*self._edit(inp.memory_id, fields, session=inp.session,
                                              found=found))

    def pin(self, memory_id: str, unpin: bool = False) -> dict[str, Any]:
        """Pin (or unpin) a memory: an annotate with ``pinned`` and reason ``pinned`` or
        ``unpinned`` (reference/cli.md §4.15). Nothing is written when it already is
        (note ``already pinned`` / ``already unpinned``)."""
        word = "unpinned" if unpin else "pinned"
        return self.annotate(AnnotateInput(memory_id=memory_id, pinned=not unpin, reason=word),
                             unchanged=f"already {word}")

    def review_clear(self, memory_id: str, mount_id: str | None = None) -> dict[str, Any]:
        """Clear the review flag: annotate ``needsReview: false``, reason ``reviewed``.
        Nothing is written for a memory not flagged (note ``not flagged for review``).

        ``mount_id`` (``--mount``) names the mount the memory must be in; it is checked
        before the memory (:meth:`check_memory_mount`). The reference ignores ``--mount``
        here (reference/cli.md §4.21), so a typo or the wrong mount cleared the flag anyway.

        Raises:
            UnknownMount: ``mount_id`` is configured nowhere (exit 2).
            MemoryElsewhere: a local mount other than ``mount_id`` holds the memory.
            UnknownMemory: as :meth:`annotate`.
        """
        self.check_memory_mount(memory_id, mount_id)
        return self.annotate(AnnotateInput(memory_id=memory_id, needs_review=False,
                                           reason="reviewed"), unchanged="not flagged for review")

    def review_list(self, mount_id: str | None = None) -> list[dict[str, Any]]:
        """Live memories flagged for review, newest first (reference/algorithms.md §4.15),
        each with ``review: {reason, data, at}`` from its flag (ynm.service.review)."""
        from ynm.service.review import with_reasons

        return with_reasons(self.mounts, self.list(ListQuery(needs_review=True, mount=mount_id)))

    def promote(self, memory_id: str, mount_id: str | None = None) -> dict[str, Any]:
        """Copy a personal memory into a distributed mount as a new memory that
        ``derives-from`` it; ``user/...`` namespaces become ``common``. The original is
        untouched. Returns the new memory's WriteResult (reference/cli.md §4.16). A memory
        whose live promoted copy is already in the target mount is not copied again: the
        result is that copy's ``{"memoryId", "mount", "unchanged": true, "note"}`` (the
        reference makes a second shared copy).

        A working memory is promoted as the dream promote pass does it (seed 001, reference/
        algorithms.md §4.8): the copy is an ``episodic`` memory in ``common``, without the
        ``promote`` tag. The reference copies it as a working memory in ``session/<id>``
        without its ttl, a shared copy that never expires; a working copy would not be worth
        sharing, since it lives only ttl after its last write.

        The target mount is resolved (and checked writable) before the memory is looked up,
        so a ``mount_id`` that is unknown, not distributed or hosted is refused as such even
        for a memory that is already distributed or unknown.

        Raises:
            UnknownMount, MountLevelMismatch, NoMount, Refused (a hosted target); then
            UnknownMemory; YnmError ``memory <id> is already distributed``.
        """
        # the target first: a mistyped --mount is refused as such, whatever the memory is
        target = self._route("distributed", mount_id, "promote")
        self._check_writable(target)
        source_mount, state = self.find(memory_id)
        if state["level"] != "personal":
            raise YnmError(f"memory {memory_id} is already distributed")
        mark = len(self.warnings)
        copy = target.fresh_cache().conn.execute(
            "SELECT m.memory_id FROM memories m, json_each(ynm_unpack(m.extra), '$.links') l "
            "WHERE m.tombstoned = 0 AND json_extract(l.value, '$.rel') = 'derives-from' "
            "AND json_extract(l.value, '$.to') = ? "
            f"AND {current_sql('m', '$.provenance.source')} LIKE 'promoted:%' "
            "ORDER BY m.updated_ms DESC, m.memory_id DESC LIMIT 1", (memory_id,)).fetchone()
        if copy is not None:
            return {"memoryId": copy[0], "mount": target.id, "unchanged": True,
                    "note": f"{memory_id} is already promoted"}
        current = state["current"]
        ns = state["namespace"]
        ns = COMMON if ns == "user" or ns.startswith("user/") else ns
        kind, tags = state["type"], state["tags"]
        if kind == "working":  # out of the session: see the docstring
            kind, ns, tags = "episodic", COMMON, [t for t in tags if t != PROMOTE_TAG]
        problem = write_namespace_problem(ns)
        if problem:
            raise InvalidInput(f"namespace: {problem}")
        fields = {
            "op": "create", "type": kind, "level": "distributed",
            "namespace": ns,
            "subject": state.get("subject"), "tags": tags,
            "content": current.get("content"), "summary": current.get("summary"),
            "data": current.get("data"), "dataSchema": current.get("dataSchema"),
            "importance": state["importance"], "confidence": state["confidence"],
            "links": [{"rel": "derives-from", "to": memory_id}],
        }
        record = self._stamp({k: v for k, v in fields.items() if v is not None},
                             source=f"promoted:{source_mount.id}")
        self._gate(record)
        out = self._append(target, [record])
        return self._write_result(target, record, out.revision, mark)

    def purge(self, inp: PurgeInput) -> dict[str, Any]:
        """Remove a memory's records from every shard of its mount, then append an audited
        ``purge-marker`` (reference/storage.md §3.9). With ``forget_history`` each rewritten
        shard's history restarts, so no ref reaches the purged bytes. The cache drops them in
        the same call (with SQLite's secure delete, so freed pages do not keep them).

        Returns ``{"memoryId", "removed", "mount"}``. A memory already purged (only its
        purge marker is left) is not an error: ``{"memoryId", "removed": 0, "mount",
        "unchanged": true, "note": "already purged"}`` and nothing is written.

        Raises:
            UnknownMemory: no mount holds the memory or a purge marker of it.
        """
        try:
            mount, state = self.find(inp.memory_id)
        except UnknownMemory:
            for mount in self.mounts:
                if mount.fresh_cache().conn.execute(
                        "SELECT 1 FROM records WHERE memory_id = ? AND op = 'purge-marker'",
                        (inp.memory_id,)).fetchone():
                    return {"memoryId": inp.memory_id, "removed": 0,
                            **self._unchanged(mount, inp.memory_id, "already purged")}
            raise
        self._check_writable(mount)
        refs = [row[0] for row in mount.cache.conn.execute(
            "SELECT ref FROM shard_refs WHERE shard IN "
            "(SELECT shard FROM records WHERE memory_id = ?)", (inp.memory_id,))]
        had_snapshot = _has_snapshot(mount)
        removed, _ = mount.log.purge(inp.memory_id, refs, forget_history=inp.forget_history)
        self._writes += 1
        reason = inp.reason + (" (history dropped)" if inp.forget_history else "")
        marker = self._stamp({"op": "purge-marker", "memoryId": inp.memory_id,
                              "type": state["type"], "level": state["level"],
                              "namespace": state["namespace"], "tags": [], "links": [],
                              "reason": reason})
        mark = len(self.warnings)
        try:
            mount.cache.conn.execute("PRAGMA secure_delete = ON")
        except Exception as err:  # noqa: BLE001 (the purge is committed: see _append)
            self.warnings.append(f"purged, but the search cache could not turn on secure "
                                 f"delete ({err})")
        self._append(mount, [marker])
        try:
            mount.cache.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        except Exception as err:  # noqa: BLE001
            self.warnings.append(f"purged, but the search cache's log was not truncated ({err})")
        if had_snapshot and not _has_snapshot(mount):
            # The purge dropped the snapshot (it held the purged text); write it again without
            # it, so the next sync replaces the remote's copy too.
            try:
                self.compact(mount.id)
            except YnmError as err:
                self.warnings.append(f"purged; the snapshot it dropped was not written again "
                                     f"({err}): run `ynm compact`")
        return self._with_warnings({"memoryId": inp.memory_id, "removed": removed,
                                    "mount": mount.id}, mark)

    # -- sessions and context (reference/algorithms.md §3, §6) ------------------------------

    def context(self, q: ContextQuery, session_namespace: str | None = None) -> dict[str, Any]:
        """The context block (see :mod:`ynm.model.context_block`): pinned memories of the
        selected mounts (up to 200 each) by importance then newest, then up to 100 ranked
        candidates per mount in one score order; occurrences and working memory past its ttl
        left out at search time. With ``session_namespace`` (``session/<id>``, the block of a
        session start) working memory of every other session is left out too: a session sees
        its own scratch notes, never another session's (seed 001: working memory is scratch
        state for one session). A personal memory and its promoted copy (which
        ``derives-from`` it) are never both shown: the distributed copy is kept (see
        :func:`ynm.model.context_block.pack`)."""
        from ynm.index.search import SearchQuery
        from ynm.model.context_block import pack
        from ynm.service.remote import hosted_context, join_context

        hosted, self.left_out = hosted_context(self._select_remotes(q.mount, q.level), q)
        pinned: list[tuple[float, str, Any]] = []
        searches = []
        now = self._now_ms()
        for mount in self._select(q.mount, q.level):
            base = dict(types=q.type, levels=q.level, namespace=q.namespace,
                        exclude_tags=["occurrence"], now_ms=now,
                        working_session=session_namespace)
            for _, row in self._ranked(mount, SearchQuery(pinned_only=True, limit=200, **base),
                                       None):
                pinned.append((row["importance"], row["updated_at"], entry(row)))
            searches.append((mount, SearchQuery(limit=100, **base)))
        # a topic with no word to search adds nothing: the block is then unfocused
        topic = None if has_no_search_words(q.text) else q.text
        ranked = [(s, row) for s, row, _ in self._ranked_across(searches, topic)]
        if topic is not None and not ranked:
            # a topic no memory answers (recall would say "no matches") leaves the block
            # unfocused rather than empty: the newest and most important memories still help
            ranked = [(s, row) for s, row, _ in self._ranked_across(searches, None)]
        pinned.sort(key=lambda p: (p[0], p[1]), reverse=True)
        ranked.sort(key=lambda h: h[1]["memory_id"], reverse=True)
        ranked.sort(key=lambda h: h[0].total, reverse=True)
        # the local block gets what the hosted sections left (algorithms.md §3.4)
        used = sum(b["tokens"] for b in hosted)
        block = pack([p[2] for p in pinned], [entry(row) for _, row in ranked],
                     max(q.budget_tokens - used, 0))
        return join_context(block, hosted, self.left_out)

    def session_start(self, inp: SessionStartInput) -> dict[str, Any]:
        """Start a session: its id (given, normalised; or a new lowercase ULID), working
        namespace ``session/<id>``, the ttl to write working memory with, and the context
        block. No memory is written; the namespace and ttl are kept in
        ``$YNM_HOME/sessions/<id>.json`` (:mod:`ynm.service.sessions`) so that later working
        memory of the session gets that ttl by default (:meth:`remember`).

        The block holds no other session's working memory, and no working memory past its
        ttl, swept or not (see :meth:`context`).

        Raises:
            InvalidInput: the id has no usable character (``!!!``, ``...``, empty); see
                :func:`ynm.model.namespaces.normalize_session_id`.
        """
        raw = inp.session_id if inp.session_id is not None else self.clock.stamp()[0]
        session_id = _session_id(raw)
        namespace = SESSION_PREFIX + session_id
        block = self.context(ContextQuery(namespace=inp.namespace,
                                          budget_tokens=inp.budget_tokens),
                             session_namespace=namespace)
        try:
            sessions.keep_settings(self.loaded.home, session_id, namespace, inp.ttl)
        except OSError as err:  # the session still starts; its working memory gets PT8H
            self.warnings.append(f"the session's settings could not be kept ({err}); its "
                                 f"working memory gets the default ttl {DEFAULT_WORKING_TTL}")
        return {"sessionId": session_id, "namespace": namespace, "ttl": inp.ttl,
                "context": block}

    def session_end(self, session_id: str, expire: bool = True, *,
                    keep_settings: bool = False) -> dict[str, Any]:
        """End a session: with ``expire``, tombstone its working memories whose ttl has run
        out (``updatedAt + ttl <= now``, reason ``expired``): the dream engine's expire pass on
        ``session/<id>``, with occurrence retention (reference/algorithms.md §4.1; the stop
        hook, ``keep_settings``, runs the expiry alone); unless ``keep_settings`` (the
        stop hook, which sweeps a session that goes on), remove the settings
        :meth:`session_start` kept. Returns ``{"sessionId"`` as given,
        ``"expired": [memoryId, ...]}``.

        Raises:
            InvalidInput: the id has no usable character."""
        sid = _session_id(session_id)
        expired: list[str] = []
        if expire and keep_settings:  # the stop hook: expiry only (algorithms.md §4.1)
            expired = self.expire(SESSION_PREFIX + sid)
        elif expire:  # the engine's expire pass (and occurrence retention) on the session
            expired = self.consolidate(["expire"], SESSION_PREFIX + sid)["passes"]["expire"][
                "changed"]
        if not keep_settings:
            sessions.drop_settings(self.loaded.home, sid)
        return {"sessionId": session_id, "expired": expired}

    def _working_ttl(self, memory_type: str, namespace: str) -> str | None:
        """The ttl a new ``working`` memory in ``namespace`` gets when none is given: the ttl
        its session was started with (kept by :meth:`session_start` under
        ``$YNM_HOME/sessions/``), else ``PT8H``. None for every other type."""
        if memory_type != "working":
            return None
        kept = None
        if namespace.startswith(SESSION_PREFIX):
            kept = sessions.load_settings(self.loaded.home, namespace[len(SESSION_PREFIX):])
        return kept["ttl"] if kept else DEFAULT_WORKING_TTL

    DREAM_PASSES = ("expire", "promote", "dedupe", "contradict", "reflect", "normalise")

    def consolidate(self, passes: list[str] | None = None, namespace: str | None = None,
                    dry_run: bool = False, *, judge: bool = False, max_pairs: int | None = None,
                    judge_model: Any = None, writer: Any = None) -> dict[str, Any]:
        """A dream run (``ynm dream``, ``memory_consolidate``): see
        :func:`ynm.dream.engine.run_dream`. ``judge`` (only with ``dry_run``) judges without
        writing; ``judge_model``/``writer`` replace what :func:`ynm.dream.resolve.resolve_for`
        picks for ``dream.judge``/``dream.writer`` (``auto``: reference/algorithms.md §4.17;
        a run of expire alone asks no model). Returns the ConsolidateReport
        ``{dryRun, passes: {<pass>: {candidates, changed}}, full}`` (reference/algorithms.md
        §4.14).

        Raises:
            InvalidInput: ``judge`` without ``dry_run``; an unknown pass; no pass named;
                ``max_pairs`` < 1; ``YNM_TOKEN_BUDGET`` not a whole number >= 0 (checked at
                the start of every run: ynm.dream.budget.check_token_budget).
            JudgeNotConfigured: the configured judge cannot be built and a pass needs it
                (ynm.dream.resolve.resolve_for).
            Interrupted: Ctrl-C; what was written before it stays, and the marks of a full
                run are written last (ynm.dream.engine.mark_dreamed), so a run again judges
                what this one did not mark. Its ``result`` is the ConsolidateReport of the
                passes that ended before it, with ``full.stopped`` (None when it stopped
                before the run began)."""
        import os

        from ynm.dream.budget import check_token_budget
        from ynm.dream.engine import DreamInput, run_dream
        from ynm.dream.resolve import resolve_for

        inp = DreamInput(passes, namespace, dry_run, judge, max_pairs).check()
        if not dry_run:
            self._check_writable(*self.mounts)  # a run writes to any mount
        check_token_budget({**os.environ, **(self.loaded.env or {})})
        if judge_model is None or writer is None:
            mount = self.mount("project") or (self.mounts[0] if self.mounts else None)
            resolved = resolve_for(self, mount, passes=inp.passes,
                                   judging=not dry_run or judge)
            judge_model, writer = judge_model or resolved[0], writer or resolved[1]
        try:
            return run_dream(self, inp, judge_model, writer)
        except KeyboardInterrupt as err:
            from ynm.errors import Interrupted

            if dry_run:
                stopped = Interrupted("nothing was written (dry run)",
                                      "run the dry run again for its report")
            else:
                stopped = Interrupted("the changes written before it are kept (each is its "
                                      "own record)", "run `ynm dream` again to finish: the "
                                      "memories this run did not mark as dreamed are judged "
                                      "again")
            stopped.result = getattr(err, "report", None)  # the passes that ended before it
            raise stopped from None

    def expire(self, namespace: str | None = None, dry_run: bool = False,
               failed: list[dict[str, str]] | None = None) -> list[str]:
        """The expire pass: tombstone each live working memory (in ``namespace``, a prefix)
        whose current record has a ttl that has run out, reason ``expired``. Returns the ids
        tombstoned, mount by mount, each mount's in id order (with ``dry_run``, the ids that
        would be, writing nothing).

        The tombstones are the records :meth:`forget` would write, one by one, in that order;
        they are appended with one commit per shard under one acquisition of each mount's
        repository lock, taken for all the mounts before anything is written
        (:meth:`_write_lock`), so a lock held by another process is waited out once, not once
        per memory.

        One shard that cannot be written (a git failure) does not stop the pass: its
        memories are left for the next run, reported in ``failed`` as ``{"memoryId",
        "error"}`` when a list is given, and as a warning: ``expire: <id> not forgotten:
        <error>``, or one warning for the memories that failed with the same error, ``expire:
        <n> memories not forgotten: <error> (<id>, <id>, <id>, ...; left for the next run)``,
        not one each. Source: reference/algorithms.md §4.6.

        Raises:
            AnchorNotCommit: a mount's anchor is unusable (nothing is written).
            LockTimeout: a mount's lock stayed taken past its timeout: nothing is written;
                the hint names the process holding it and how many memories were due.
        """
        from ynm.errors import LockTimeout
        from ynm.index.search import SearchQuery, filter_sql

        if not dry_run:
            self._check_writable(*self.mounts)
        now = self._now_ms()
        due: list[tuple[Mount, list[tuple[str, str, str, str]]]] = []
        for mount in self.mounts:
            cache = mount.fresh_cache()
            cond, args = filter_sql(SearchQuery(types=["working"], namespace=namespace))
            # expires_at is updatedAt + ttl of the current record (ynm.index.cache); without
            # INDEXED BY SQLite walks the tombstoned index instead (~50x slower at 100k)
            rows = sorted(cache.conn.execute(
                f"SELECT memory_id, type, level, namespace FROM memories m "
                f"INDEXED BY memories_expires WHERE {cond} AND m.expires_at <= ?",
                [*args, now]))
            if rows:
                due.append((mount, rows))
        if dry_run:
            return [row[0] for _, rows in due for row in rows]
        total = sum(len(rows) for _, rows in due)
        # stamped in the order forget would stamp them, before the lock is taken
        batches = [(mount, [self._stamp({"memoryId": memory_id, "type": kind, "level": level,
                                         "namespace": ns, "tags": [], "links": [],
                                         "op": "tombstone", "reason": "expired"})
                            for memory_id, kind, level, ns in rows])
                   for mount, rows in due]
        errors: dict[str, list[str]] = {}  # error text -> the memories it left live
        left: set[str] = set()
        done = 0
        try:
            with self._write_lock(mount for mount, _ in batches):
                for mount, records in batches:
                    shards: dict[ShardKey, list[Record]] = {}
                    for r in records:
                        shards.setdefault(ShardKey(r.level, r.namespace, r.type, r.bucket),
                                          []).append(r)
                    for shard in shards.values():
                        try:
                            self._append(mount, shard, locked=True)
                        except YnmError as err:
                            for r in shard:
                                errors.setdefault(str(err), []).append(r.memory_id)
                                left.add(r.memory_id)
                                if failed is not None:
                                    failed.append({"memoryId": r.memory_id, "error": str(err)})
                        done += len(shard)
                        if self._progress:
                            self._progress("expire", done, total)
        except LockTimeout as err:  # from taking the locks, before anything was written
            err.hint = f"no memory was expired ({total} due); {err.hint or 'run this again'}"
            raise
        for error, ids in errors.items():
            ids.sort()
            if len(ids) == 1:
                self.warnings.append(f"expire: {ids[0]} not forgotten: {error}")
            else:
                shown = ", ".join(ids[:3]) + (", ..." if len(ids) > 3 else "")
                self.warnings.append(f"expire: {len(ids)} memories not forgotten: {error} "
                                     f"({shown}; left for the next run)")
        return [r.memory_id for _, records in batches for r in records
                if r.memory_id not in left]

    # -- sync (reference/storage.md §4, cli.md §4.26) --------------------------------------

    def sync(self, mount_id: str | None = None, remote: str | None = None, *, push: bool = True,
             pull: bool = True, dry_run: bool = False) -> dict[str, Any]:
        """Fetch, merge and push memory with git remotes. Without ``mount_id`` every
        distributed mount syncs; the personal store syncs only when named, and only with an
        explicit ``remote`` (personal memory never goes to a project's remote). Returns
        ``{mount id: SyncResult JSON}`` (records and shards that moved; a remote that is not
        configured is ``skipped``: :class:`ynm.store.sync.SyncResult`); the caches catch up on
        the next read, reading only the shards that moved.

        Raises:
            Refused: ``--mount personal`` without a remote.
            StoreError: a git failure other than a rejected push; its ``result`` is this
                method's return value up to the failure: the mounts synced before it and the
                one it failed in, whose ``conflicts`` ends with the error's message.
            Interrupted: Ctrl-C; it names the mounts synced before it and says what the one
                it stopped in kept; its ``result`` holds the mounts synced before it (None
                when there were none).
        """
        from ynm.model.people import PEOPLE_DOCUMENT, merge_people_text
        from ynm.store.sync import SyncResult, sync_log

        if mount_id is not None:
            mounts = self._select(mount_id)
            if any(m.level == "personal" for m in mounts) and not remote:
                raise Refused("syncing the personal store needs an explicit --remote: "
                              "personal memory never goes to a project's remote")
        else:
            mounts = [m for m in self.mounts if m.level == "distributed"]
        self._check_writable(*mounts)  # before any mount moves
        out: dict[str, Any] = {}
        mount = None
        try:
            for i, mount in enumerate(mounts):
                if self._progress:
                    self._progress("sync", i, len(mounts))
                name = remote or mount.remote or self.config.remote
                self._writes += 1  # a sync may merge into the mount's shards
                out[mount.id] = sync_log(
                    mount.log, name, push=push, pull=pull, dry_run=dry_run,
                    after_merge=lambda m=mount: self._reapply_purges(m),
                    merge_documents={PEOPLE_DOCUMENT: merge_people_text},
                ).to_obj()
        except YnmError as err:
            if mount is not None and isinstance(err.result, SyncResult):
                out[mount.id] = err.result.to_obj()
                err.result = out
            raise
        except KeyboardInterrupt:
            from ynm.errors import Interrupted

            done = f"synced: {', '.join(out)}; " if out else ""
            if dry_run:
                kept = "nothing was changed (dry run)"
            elif mount is None:
                kept = "nothing was changed"
            else:
                kept = (f"{done}{mount.id} stopped part way: what it fetched and merged is "
                        "kept (each shard moves with one ref update), and a push that did not "
                        "finish leaves the remote as it was or partly updated")
            stopped = Interrupted(kept, "run `ynm sync` again to finish")
            stopped.result = out or None
            raise stopped from None
        if mounts and not dry_run:
            self._people = None  # a sync may have brought another copy of the document
        if self._progress and mounts:
            self._progress("sync", len(mounts), len(mounts))
        return out

    def unmerged(self) -> dict[str, int]:
        """Per distributed mount, the shards ``git fetch`` brought into the tracking refs of its
        sync remote that ``ynm sync`` has not merged yet (:func:`ynm.store.sync.unmerged_shards`:
        one ref listing). Returns ``{mount id: shard count}``, only mounts with some; a mount
        whose refs cannot be read is left out (this is a hint, never an error)."""
        from ynm.store.sync import unmerged_shards

        out: dict[str, int] = {}
        for mount in self.mounts:
            if mount.level != "distributed":
                continue
            try:
                count = len(unmerged_shards(mount.log, mount.remote or self.config.remote))
            except (YnmError, OSError):
                continue
            if count:
                out[mount.id] = count
        return out

    def _reapply_purges(self, mount: Mount) -> list[str]:
        """Purge again what a merge brought back: a memory with a purge marker here and
        records from a clone that had not purged it yet. Runs under the sync's lock, before its
        push, so the purge travels to the remote as an ordinary purge commit (a remote's own
        history cannot be dropped by a non-forced push). Each memory is purged on its own: one
        that fails is reported and the others (and the sync) go on; every sync that pulls looks
        again. Returns the problems, one ``purge of <id> not re-applied: <error>; the next sync
        tries again`` per memory that failed."""
        problems: list[str] = []
        had_snapshot = _has_snapshot(mount)

        def purged_back(cache: Any) -> dict[str, list[str]]:
            """Memory id -> the refs of its records, for each memory purged here that the
            merge brought records of back."""
            back = [row[0] for row in cache.conn.execute(
                "SELECT DISTINCT memory_id FROM records WHERE op = 'purge-marker' "
                "AND memory_id IN (SELECT memory_id FROM records WHERE op != 'purge-marker')")]
            return {memory_id: [row[0] for row in cache.conn.execute(
                "SELECT ref FROM shard_refs WHERE shard IN (SELECT shard FROM records "
                "WHERE memory_id = ? AND op != 'purge-marker')", (memory_id,))]
                for memory_id in back}

        back = mount.read(purged_back)  # after the merge: a damaged cache is rebuilt here
        for memory_id, refs in back.items():
            try:
                mount.log.purge_locked(memory_id, refs)
            except (YnmError, OSError) as exc:
                problems.append(f"purge of {memory_id} not re-applied: {exc}; the next sync "
                                "tries again")
        if back:
            mount.fresh_cache()
            if had_snapshot and not _has_snapshot(mount):
                from ynm.compact import compact_mount

                try:  # written again without the purged text (see purge); the sync pushes it
                    compact_mount(mount, locked=True)
                except YnmError as err:
                    problems.append(f"the snapshot the purge dropped was not written again "
                                    f"({err}); run `ynm compact`")
        return problems

    # -- recall ----------------------------------------------------------------------------

    def recall(self, q: RecallQuery, *, weigh_words: bool = True,
               hosted: bool = True) -> list[dict[str, Any]]:
        """Ranked recall across the selected mounts (reference/algorithms.md §2).

        Candidates per mount: ``max(4 * limit, 40)`` from FTS5 (text) or newest first (filter
        only); relevance comparable across mounts (:meth:`_ranked_across`); seed 001's ranker;
        ties by memoryId descending within a mount and by ``updatedAt`` descending across
        mounts. A text that is not blank but holds no word to search ("C++", "?!") finds nothing
        (ynm.model.text.has_no_search_words); the reference runs it as a filter-only query with
        the text weights, algorithms.md §8.4, returning every memory at one relevance.
        ``weigh_words=False`` ranks full-text candidates by BM25 alone, without the word share
        (:func:`ynm.service.recall.candidates`); for callers that test the hits themselves.

        Hosted (mcp) mounts are asked too (:func:`ynm.service.remote.hosted_recall`; their
        hits ranked on the same scale, :func:`ynm.service.remote.hosted_hits`); the ones that
        could not answer are in :attr:`left_out`. The question's words, and those no memory of
        the mounts searched holds, are in :attr:`recall_words`
        (:class:`ynm.service.recall.QuestionWords`). ``hosted=False`` asks none: the lookup for
        similar memories after a local write does not wait on the network (the reference's
        does, algorithms.md §8.32).
        """
        found_hosted: list[Any] = []
        self.left_out = []
        remotes = self._select_remotes(q.mount, q.level) if hosted else []
        if remotes and not has_no_search_words(q.text):
            from ynm.service.remote import hosted_recall

            found_hosted, self.left_out = hosted_recall(remotes, q)
        k = max(q.limit * 4, 40)
        searches = [(mount, self._search_query(q, k)) for mount in self._select(q.mount, q.level)]
        report: dict[str, Any] = {}
        ranked = self._ranked_across(searches, q.text, weigh_words,
                                     outside=[e for _, _, e in found_hosted], report=report)
        self.recall_words = report.get("words") if searches else None
        ranked.sort(key=lambda r: r[1]["updated_at"], reverse=True)
        ranked.sort(key=lambda r: r[0].total, reverse=True)
        # only the hits that can be returned (or reranked) are built: a hit parses the state
        keep = max(q.limit, self.config.dream.rerank_top_k)
        top = ranked[:keep]
        hits = self.with_authors([hit(s, row, mount_id, q.explain) for s, row, mount_id in top],
                                 [_actor(row["state"]) for _, row, _ in top])
        if found_hosted:
            from ynm.service.remote import hosted_hits

            hits.extend(hosted_hits(q, found_hosted, report.get("strongest", 0.0),
                                    self._now_ms()))
            hits.sort(key=lambda h: h["updatedAt"], reverse=True)
            hits.sort(key=lambda h: h["score"], reverse=True)
            # a memory a local mount and a hosted store both hold is one hit: the better scored
            seen: set[Any] = set()
            hits = [h for h in hits if not (h["memoryId"] in seen or seen.add(h["memoryId"]))]
            del hits[keep:]
        # -- rerank (ynm.dream.rerank; algorithms §2.8): calibrated judge only; cuts to limit --
        from ynm.dream.rerank import rerank_recall

        return rerank_recall(self, q, hits)
        # -- end rerank --

    def _search_query(self, q: RecallQuery, limit: int) -> Any:
        """The cache query (ynm.index.search.SearchQuery) of recall ``q``'s filters."""
        from ynm.index.search import SearchQuery

        return SearchQuery(
            types=q.type, levels=q.level, namespace=q.namespace,
            subject=q.subject, tags=q.tags, data_key=q.data_key, since=q.since,
            until=q.until, pinned_only=q.pinned_only, include_tombstoned=q.include_tombstoned,
            now_ms=self._now_ms(), limit=limit)

    def recall_exclusions(self, q: RecallQuery) -> set[str]:
        """Which of recall ``q``'s filters left out a memory holding a word of its question,
        after :meth:`recall` found nothing: the :class:`~ynm.model.inputs.RecallQuery` fields
        (``type``, ``namespace``, ``subject``, ``tags``, ``data_key``, ``since``, ``until``,
        ``pinned_only``), ``include_tombstoned`` when a forgotten memory holds one, and
        ``expired`` (no field: ``include_tombstoned`` brings it back too) when working memory
        past its ttl that no expire pass has tombstoned yet holds one. Asked of the local mounts ``q`` selects, one
        ``LIMIT 1`` query per filter and mount (ynm.index.search.excluded_by), never a second
        recall; the words are those of :attr:`recall_words` that some memory holds. ``level``
        and ``mount`` are never in the answer: they choose which mounts are read, and a
        memory they left out lives in a mount this recall did not read (its cache is not
        opened for a hint). Empty when the question had no such word."""
        from ynm.index.search import excluded_by

        asked = self.recall_words
        if asked is None:
            return set()
        held = [w for w in asked.words if w not in asked.unheld]
        sq = self._search_query(q, 1)
        sq.levels = ()  # a mount of the selected levels holds only memories of those levels
        names = {"types": "type", "tombstoned": "include_tombstoned"}
        out: set[str] = set()
        for mount in self._select(q.mount, q.level):
            out |= {names.get(name, name)
                    for name in excluded_by(mount.fresh_cache().conn, held, sq)}
        return out

    def _ranked_across(self, searches: list[tuple[Mount, Any]], text: str | None,
                       weigh_words: bool = True, outside: list[float | None] | None = None,
                       report: dict[str, Any] | None = None
                       ) -> list[tuple[Any, dict[str, Any], str]]:
        """The candidates of every ``(mount, search query)`` for ``text`` on one scale (see
        :func:`ynm.service.recall.ranked_across`)."""
        from ynm.service.recall import ranked_across

        return ranked_across(self, searches, text, weigh_words, outside=outside, report=report)

    def _ranked(self, mount: Mount, sq: Any, text: str | None) -> list[tuple[Any, dict[str, Any]]]:
        """One mount's candidates for ``sq`` (text from ``text``), scored and sorted: score
        descending, then memoryId descending."""
        return [(s, row) for s, row, _ in self._ranked_across([(mount, sq)], text)]

    # -- vectors ---------------------------------------------------------------------------

    @property
    def embedder(self) -> Any:
        """The configured embedder, opened on first use (None when vector search is off or
        cannot run; :attr:`embedder_problem` says why). Before a local model loads,
        :attr:`notice` is told ``loading embedding model <name>…``."""
        if not self._embedder_opened:
            from ynm.index.embedders import local_model_to_load, open_embedder

            self._embedder_opened = True
            loading = local_model_to_load(self.config.embedder) if self.notice else None
            if loading and self.notice:  # seconds with nothing to show otherwise
                self.notice(f"loading embedding model {loading}…")
            self._embedder, self.embedder_problem = open_embedder(
                self.config.embedder, self.loaded.home, self.loaded.env or None,
                self.config.embedder_key_env)
        return self._embedder

    def _query_vector(self, text: str) -> bytes:
        embedder = self.embedder
        vector = self._query_vectors.get((embedder.key, text))
        if vector is None:
            vector = embedder.embed([text])[0].astype("float32").tobytes()
            self._query_vectors[(embedder.key, text)] = vector
        return vector

    def _vector_query(self, mount: Mount, text: str) -> bytes | None:
        """Make the mount's vectors current and embed ``text``; None when vector search is
        off or cannot run here (see :meth:`_vectors_current`)."""
        return self._vectors_current(mount, text)

    # -- vector fallback (begin) -----------------------------------------------------------

    def _vectors_current(self, mount: Mount, text: str | None,
                         progress: Progress | None = None) -> bytes | None:
        """Make ``mount``'s vectors current with the configured embedder and embed ``text``
        (``b""`` without a text); None when recall must fall back to full text.

        An embedder that now returns another dimension (DimensionChanged) is retried once: its
        key changed, so the vectors are re-embedded under the new key. Any other failure of the
        embedder (server down, model missing, timeout, a bad answer) or of the vector tables
        falls back to full text through :meth:`_vector_fallback`, which says so. Never raises
        for those.
        """
        if self.config.embedder == "none":
            return None
        import sqlean

        from ynm.index.embedders import DimensionChanged, EmbedderUnavailable

        cache = mount.cache
        problem = cache.vector_problem()
        embedder = None
        if problem is None:
            embedder = self.embedder
            if embedder is None:
                problem = self.embedder_problem or "the embedder did not open"
        for attempt in (1, 2):
            if problem is not None:
                break
            try:
                cache.vectors_ready(embedder, progress or self._progress)
                vector = self._query_vector(text) if text else b""
            except DimensionChanged as err:
                if attempt == 2:
                    problem = str(err)
                continue
            except (EmbedderUnavailable, sqlean.Error) as err:
                problem = str(err)
                break
            self._vector_ok(mount)
            return vector
        self._vector_fallback(mount, problem or "unknown")
        return None

    def _full_text_by_choice(self) -> bool:
        """True when full-text only is what the configuration asks for: ``embedder: none``, or
        ``auto`` without the vector extra installed. Such a recall says nothing."""
        spec = self.config.embedder
        return spec == "none" or (spec == "auto" and _missing_vector_extra() is not None)

    def _vector_fallback(self, mount: Mount, reason: str) -> None:
        """Recall falls back to full text for ``reason``: unless that is by choice, warn once
        per process (``vector search unavailable (<reason>); full-text results only``) and
        record the reason with the time in the mount cache's meta (``vec_failure``, JSON
        ``{"reason", "at"}``), where ``ynm status``, a new process, finds it."""
        if self._full_text_by_choice():
            return
        self.vector_failure = reason
        message = f"vector search unavailable ({reason}); full-text results only"
        if message not in self.warnings:
            self.warnings.append(message)
        at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self._now_ms() / 1000))
        try:
            from ynm.index.schema import set_meta

            set_meta(mount.cache.conn, "vec_failure", json.dumps({"reason": reason, "at": at}))
        except Exception:  # noqa: BLE001 (a record for status; recall goes on without it)
            pass

    @staticmethod
    def _vector_ok(mount: Mount) -> None:
        """Vector search worked on ``mount``: drop a recorded failure."""
        conn = mount.cache.conn
        try:
            if conn.execute("SELECT 1 FROM meta WHERE key = 'vec_failure'").fetchone():
                conn.execute("DELETE FROM meta WHERE key = 'vec_failure'")
        except Exception:  # noqa: BLE001
            pass

    def _recorded_vector_failure(self) -> dict[str, str] | None:
        """The newest ``vec_failure`` recorded in the mounts' caches (see
        :meth:`_vector_fallback`), or None."""
        from ynm.index.schema import get_meta

        found = []
        for m in self.mounts:
            try:
                raw = get_meta(m.cache.conn, "vec_failure")
                if raw:
                    found.append(json.loads(raw))
            except Exception:  # noqa: BLE001
                continue
        return max(found, key=lambda f: f.get("at", "")) if found else None

    # -- vector fallback (end) -------------------------------------------------------------

    def _vector_floor(self, mount: Mount, query_vector: bytes) -> float | None:
        """The similarity a memory found by its vector must reach to count as an answer: the
        query's mean similarity to its three nearest background sentences
        (ynm.index.background, ynm.index.search.background_similarity) less
        :data:`BACKGROUND_MARGIN`, on the mount's centred scale; None when the background
        cannot be embedded here (then only :data:`SIMILARITY_FLOOR` applies).

        Measured with benchmarks/quality.py (all-MiniLM-L6-v2): the memory a paraphrase asks
        for lies at 0.18 to 0.60 from its question, the nearest memory to an off-topic question
        at 0.15 to 0.42, so no fixed similarity tells them apart, and neither does a margin over
        the mean and spread of the question's similarities to the store's memories (the
        nearest of a thousand unrelated memories is 3 to 4 deviations out by chance alone, as
        far as many true paraphrases). Against the background, an off-topic question finds
        sentences on its own subject nearer than any memory, while an engineering question
        stays far from all of them: every paraphrase of the set whose memory ranks in the top
        five but one reaches the floor. See the table in :func:`fuse`.
        """
        from ynm.index.background import BACKGROUND
        from ynm.index.embedders import EmbedderUnavailable
        from ynm.index.search import background_similarity

        embedder = self.embedder
        if embedder is None:
            return None
        vectors = self._background.get(embedder.key)
        if vectors is None:
            try:
                vectors = mount.cache.embeddings_of(embedder, BACKGROUND)
            except EmbedderUnavailable as err:
                self.embedder_problem = str(err)
                return None
            self._background[embedder.key] = vectors
        near = background_similarity(mount.cache.conn, query_vector, vectors)
        return None if near is None else near - BACKGROUND_MARGIN

    # -- people (reference/server.md §2.4, cli.md §4.14; ynm.service.people) ---------------

    @property
    def people(self) -> People | None:
        """The people document of this store (kept by the distributed mount ``project``, else
        the first distributed mount), or None when no open mount can keep it."""
        if self._people is None:
            from ynm.service.people import people_mount

            mount = people_mount(self.mounts)
            if mount is None:
                return None
            self._people = People(mount.log, now_ms=self._now_ms)
        return self._people

    def _require_people(self) -> People:
        from ynm.service.people import PeopleUnavailable

        people = self.people
        if people is None:
            raise PeopleUnavailable()
        return people

    def people_list(self) -> dict[str, Any]:
        """The whole people document, read fresh: ``{"v": 1, "people": {<person id>:
        {"nickname"?, "logins": [], "updatedAt"}}}``.

        Raises:
            PeopleUnavailable: no distributed mount keeps people."""
        return self._require_people().document(fresh=True)

    def people_nickname(self, person: str, nickname: str | None) -> dict[str, Any]:
        """Set a person's nickname (None: clear it); returns their entry.

        Raises:
            InvalidInput: a bad person id or nickname. PeopleUnavailable, StoreConflict."""
        return self._require_people().set_nickname(person, nickname)

    def people_link(self, person: str, issuer: str, subject: str) -> dict[str, Any]:
        """Link the login ``(issuer, subject)`` to a person (moving it from any other); returns
        their entry. Raises as :meth:`people_nickname`."""
        return self._require_people().link(person, issuer, subject)

    def with_authors(self, items: list[dict[str, Any]],
                     actors: list[str | None] | None = None) -> list[dict[str, Any]]:
        """Give each recall hit or folded memory whose current content a signed-in person
        wrote (``provenance.actor`` ``user:<person id>``) an ``author``: their nickname, else
        their person id (reference/algorithms.md §2.9). In a hit it follows ``updatedAt``, in a
        folded memory it comes last. ``actors`` gives each item's actor (default: read from
        the item's ``current`` record). The people document is read only when some item needs
        it; if it cannot be read the person id is shown and a warning says why. Returns
        ``items``."""
        from ynm.model.people import author_of, empty_people, person_of_actor

        if actors is None:
            actors = [((item.get("current") or {}).get("provenance") or {}).get("actor")
                      for item in items]
        wanted = {i: a for i, a in enumerate(actors) if person_of_actor(a)}
        if not wanted:
            return items
        doc = empty_people()
        if self.people is not None:
            try:
                doc = self.people.document()
            except YnmError as err:
                self.warnings.append(f"authors shown by person id: {err}")
        for i, actor in wanted.items():
            items[i] = _with_author(items[i], author_of(actor, doc))
        return items

    # -- list ------------------------------------------------------------------------------

    def list(self, q: ListQuery) -> list[dict[str, Any]]:
        """Folded memories across mounts, newest ``updatedAt`` first (reference/cli.md §4.11);
        each with its ``mount`` and the ``summary`` shown for it (the current record's, or
        derived from its content when the record has none). A ``mount`` configured nowhere
        raises :class:`~ynm.errors.UnknownMount` (:meth:`check_mount`). Working memory past
        its ttl is left out unless ``include_tombstoned``, which shows it with ``"expired":
        true`` while no sweep has tombstoned it yet."""
        from ynm.index.search import SearchQuery, filter_sql

        out: list[tuple[str, dict[str, Any]]] = []
        levels = [q.level] if q.level else []
        now = self._now_ms()
        for mount in self._select(q.mount, levels):
            cache = mount.fresh_cache()
            cond, args = filter_sql(SearchQuery(
                types=[q.type] if q.type else [], namespace=q.namespace, since=q.since,
                until=q.until, include_tombstoned=q.include_tombstoned,
                needs_review=q.needs_review, now_ms=now,
            ))
            sql = (f"SELECT updated_at, {state_sql('m')}, summary, tombstoned, expires_at "
                   f"FROM memories m "
                   f"WHERE {cond} ORDER BY m.updated_ms DESC, m.memory_id DESC")
            if q.limit:
                sql += f" LIMIT {int(q.limit)}"
            for updated_at, state, summary, tombstoned, expires_at in cache.conn.execute(sql, args):
                obj = json.loads(state)
                obj["mount"] = mount.id
                obj["summary"] = summary
                if is_expired({"tombstoned": tombstoned, "expires_at": expires_at}, now):
                    obj["expired"] = True
                out.append((updated_at, obj))
        # newest first; memories updated in the same millisecond by memory id, descending, as
        # every listing orders them (a build's row order is no order: a rebuilt, refreshed or
        # snapshot-loaded cache would each give its own)
        out.sort(key=lambda pair: (pair[0], pair[1]["memoryId"]), reverse=True)
        memories = [obj for _, obj in out]
        return self.with_authors(memories[: q.limit] if q.limit else memories)

    def show(self, memory_id: str) -> dict[str, Any]:
        """One memory with its links resolved (see :func:`ynm.service.history.show`), and
        ``author`` when a signed-in person wrote its current content (:meth:`with_authors`);
        ``expired: true`` for working memory whose ttl ran out that no sweep has forgotten.

        Raises:
            UnknownMemory."""
        from ynm.service import history

        return self.with_authors([history.show(self.mounts, memory_id, self._now_ms())])[0]

    def history(self, memory_id: str) -> list[dict[str, Any]]:
        """Every record of one memory in fold order (see :func:`ynm.service.history.history`).

        Raises:
            UnknownMemory."""
        from ynm.service import history

        return history.history(self.mounts, memory_id)

    def find(self, memory_id: str) -> tuple[Mount, dict[str, Any]]:
        """The first mount (in mount order) whose records fold to this memory, and its state.

        Raises:
            UnknownMemory: no mount holds it (an orphan-only id counts as unknown).
        """
        for mount in self.mounts:
            state = mount.read(lambda cache: cache.get_state(memory_id))
            if state is not None:
                return mount, state
        raise UnknownMemory(memory_id)

    # -- wiki ------------------------------------------------------------------------------

    def wiki_build(self, mount_id: str | None, target: str, folder: Path | None
                   ) -> list[dict[str, Any]]:
        """Build the wiki of each selected mount (see :func:`ynm.wiki.build.build`); one
        result per mount. An error at a later mount carries the results of the mounts built
        before it (whose pages stay) as its ``result``.

        Raises:
            UnknownMount: ``mount_id`` is configured nowhere (:meth:`check_mount`).
            Interrupted: Ctrl-C; it names the wikis built before it and the mount it stopped
                in (a directory may hold part of that mount's pages; an orphan branch moves
                with one commit); its ``result`` is the wikis built before it (None when
                there were none).
        """
        from ynm.errors import Interrupted
        from ynm.wiki.build import build

        out: list[dict[str, Any]] = []
        m = None
        try:
            for m in self._select(mount_id):
                out.append(build(m, target=target, folder=folder, repo=self.loaded.repo,
                                 home=self.loaded.home))
        except KeyboardInterrupt:
            done = f"built: {', '.join(r['mount'] for r in out)}; " if out else ""
            left = (f"{m.id}'s wiki was not finished (a directory may hold part of its pages; "
                    "an orphan branch is one commit, so it is as it was)" if m is not None
                    else "nothing was built")
            stopped = Interrupted(f"{done}{left}", "run `ynm wiki build` again to build the "
                                  "rest")
            stopped.result = out or None
            raise stopped from None
        except YnmError as err:
            if out and err.result is None:
                err.result = out
            raise
        return out

    def project_absent(self) -> str | None:
        """Why no ``project`` mount is open, as a phrase (``not inside a git repository``,
        ``<repo> has no .ynm/config.json (run `ynm init` there)``), or None when it is open or
        this is a bare repository. Commands over every mount say what they left out."""
        if self.mount(PROJECT) is not None:
            return None
        if self.loaded.repo is None:
            return "not inside a git repository"
        if self.loaded.bare:
            return None
        return f"{self.loaded.repo} has no .ynm/config.json (run `ynm init` there)"

    def wiki_page(self, mount_id: str, path: str) -> str | None:
        """One wiki page of a mount as text, generated on demand; None when the mount or the
        page does not exist (reference algorithms.md §5, the MCP wiki resource)."""
        from ynm.wiki.build import mount_pages

        mount = self.mount(mount_id)
        if mount is None:
            return None
        page = mount_pages(mount).get(path)
        return page.decode("utf-8") if page is not None else None

    def wiki_ingest(self, text: str) -> dict[str, Any]:
        """Apply an edited memory page: ``{"memoryId", "changed"}`` (see
        :mod:`ynm.wiki.ingest`). Raises YnmError for a page without memoryId, UnknownMemory."""
        from ynm.model.inputs import parse_input
        from ynm.wiki.ingest import parse_page, supersede_fields

        page = parse_page(text)
        _mount, state = self.find(page.memory_id)
        fields = supersede_fields(page, state["current"])
        if fields is None:
            return {"memoryId": page.memory_id, "changed": False}
        self.supersede(parse_input(SupersedeInput, fields))
        return {"memoryId": page.memory_id, "changed": True}

    # -- export / import -------------------------------------------------------------------

    def export(self, q: ExportQuery) -> Iterator[str]:
        """Every record line (history, tombstones, purge markers) of the selected mounts, read
        from git (not the cache), normalised, shard by shard in ref order and blob order.
        ``since``/``until`` prune whole month buckets only (reference/storage.md §3.11)."""
        levels = [q.level] if q.level else []
        lo = q.since[:7] if q.since else None
        hi = q.until[:7] if q.until else None
        for mount in self._select(q.mount, levels):
            tips = {
                ref: tip for ref, tip in mount.log.tips().items()
                if (q.type is None or tip.key.type == q.type)
                and (q.namespace is None or namespace_matches(tip.key.namespace, q.namespace))
                and (lo is None or tip.key.bucket >= lo) and (hi is None or tip.key.bucket <= hi)
            }
            for ref in sorted(tips):
                blob = mount.log.read_all({ref: tips[ref]})[ref]
                for r in parse_jsonl(blob.data).records:
                    yield dumps_record(r)

    def import_jsonl(
        self, text: str | bytes, mount_id: str | None = None, progress: Progress | None = None
    ) -> dict[str, Any]:
        """Import records in the on-disk format; ids, times and provenance are kept
        (reference/storage.md §3.11). Each record goes to the mount of its level, or to
        ``mount_id`` (whose level must match). Records already in the target mount (same id)
        are skipped, so importing an export twice adds nothing. A whole text; for a long input
        read in parts see :meth:`import_chunks`, which this calls with one part.

        One bad record never fails the batch: a line that is not a valid record, a record the
        redaction gate refuses, one whose namespace would collide with another namespace's
        shard refs (:func:`ynm.model.namespaces.shard_collision_problem`) and one no open mount
        can take are each skipped and reported as ``line N: message``; the rest are written.
        The reference refuses the whole file for one refused record.

        Text is UTF-8; a byte order mark at its start (or at the start of a line, where files
        were joined with ``cat``) is dropped. Date-times are normalised to canonical UTC
        (``YYYY-MM-DDTHH:MM:SS.sssZ``) and the record is written in that form, so an imported
        line may differ from the source line in its ``recordedAt``, ``validFrom`` and
        ``validTo`` text, never in their instants; its shard month is the UTC month of that
        instant.

        Returns ``{"imported": <records appended>, "problems": [...], "alreadyPresent"?: <k>,
        "repeated"?: <r>, "warnings"?: [...]}``, problems in line order: the reference's two
        keys (reference/cli.md §4.9), then ours, each left out when it would be 0 or empty:
        ``alreadyPresent`` counts valid records skipped because their target mount held their
        id before this import, ``repeated`` the valid lines skipped because an earlier line of
        the input had their record id.

        Raises:
            UnknownMount: ``mount_id`` is configured nowhere (nothing is written).
            Refused: ``mount_id`` names a hosted store (:meth:`check_local_mount`).
            StoreError: ``mount_id`` is configured but did not open (:meth:`unopened_mount`).
            BatchRefused: every record was refused (nothing is written); its message and exit
                code are the first refusal's, and it carries the report. Also for an input
                with lines but not one valid record (``invalid input: input: no valid record
                in it ...``, exit 2): not a record file at all.
        """
        return self.import_chunks([text], mount_id, progress)

    def import_chunks(
        self, chunks: Iterable[str | bytes], mount_id: str | None = None,
        progress: Progress | None = None,
    ) -> dict[str, Any]:
        """:meth:`import_jsonl` of an input given as consecutive parts, each of whole lines,
        read and appended one part at a time (:func:`ynm.service.importing.import_chunks`,
        which documents the rules and errors)."""
        from ynm.service.importing import import_chunks

        return import_chunks(self, chunks, mount_id, progress)

    # -- reindex / status ------------------------------------------------------------------

    def reindex(self, mount_id: str | None = None,
                progress: Progress | None = None) -> dict[str, int]:
        """Rebuild each selected mount's cache from a full read of its log.
        Returns ``{mount id: memories indexed}``; a mount configured nowhere raises
        :class:`~ynm.errors.UnknownMount` (the reference gives ``{}``).

        Raises:
            Interrupted: Ctrl-C; it names the caches rebuilt before it and the state of the
                one it stopped in (a rebuild is one transaction: stopped in it, the cache is
                as it was; stopped while embedding, the cache is rebuilt and the next recall
                embeds the rest); its ``result`` holds the mounts rebuilt before it (None
                when there were none)."""
        from ynm.errors import Interrupted

        out = {}
        progress = progress or self._progress
        mount, embedding = None, False
        try:
            for mount in self._select(mount_id):
                embedding = False
                mount.cache.rebuild(mount.log, progress)
                embedding = True
                self._vectors_current(mount, None, progress)  # a failure is a warning
                out[mount.id] = mount.cache.counts()["memories"]
        except KeyboardInterrupt:
            done = f"rebuilt: {', '.join(out)}; " if out else ""
            left = (f"{mount.id}'s cache is rebuilt, the next recall embeds what is left"
                    if embedding else f"{mount.id}'s cache is as it was before")
            stopped = Interrupted(f"{done}{left}" if mount is not None else "nothing changed",
                                  "run `ynm reindex` again, or let the next command catch up "
                                  "(memories live in git notes: nothing is lost)")
            stopped.result = out or None
            raise stopped from None
        return out

    def compact(self, mount_id: str | None = None) -> list[dict[str, Any]]:
        """Write each selected mount's snapshot, the state a cold cache starts from
        (:mod:`ynm.compact`); vectors are made current first and carried when an embedder is
        configured. Returns one :class:`ynm.compact.CompactResult` JSON per mount.

        Raises:
            UnknownMount: ``mount_id`` names no configured mount (:meth:`check_mount`); a
                hosted one or one that did not open gives no result.
            StoreConflict: another process replaced a snapshot meanwhile.
            StoreError: a git failure.
            Interrupted: Ctrl-C; it names the mounts whose snapshot was written before it (a
                snapshot is one ref update: the one it stopped in was not written).

            An error after some mount's snapshot was written carries those mounts' results
            as its ``result``.
        """
        from ynm.compact import compact_mount
        from ynm.errors import Interrupted

        self.check_mount(mount_id)
        out = []
        mount = None
        try:
            for mount in self._select(mount_id):
                mount.fresh_cache(self._progress)
                embedder = None
                if self._vectors_current(mount, None) is not None:  # a failure is a warning
                    embedder = self.embedder
                out.append(compact_mount(mount, embedder).to_obj())
        except KeyboardInterrupt:
            done = "".join(f"{r['mount']}'s snapshot is done; " for r in out)
            stopped = f"{mount.id}'s was not written" if mount is not None else "nothing changed"
            interrupted = Interrupted(f"{done}{stopped} (the notes are never changed by "
                                      "compact)", "run `ynm compact` again to write the rest")
            interrupted.result = out or None
            raise interrupted from None
        except YnmError as err:  # the snapshots written before it stay
            if out and err.result is None:
                err.result = out
            raise
        return out

    def status(self) -> dict[str, Any]:
        """Mounts, shard counts, cache freshness and bad lines (reference/cli.md §4.24, with
        ``badLines`` and the sync ``remote`` per mount, ``remoteMissing: true`` when git has no
        such remote, ``unmerged: <n>`` when n shards were fetched but not merged
        (:meth:`unmerged`), ``anchorProblem`` when the mount's anchor is no commit of its
        repository (:attr:`Mount.anchor_problem`, then what to do), and ``problems`` as
        ``<ref>:<line> <message>``).

        ``index[].fresh`` says whether the cache was in step with the notes when status
        started (``reason`` says why not); status then brings it up to date, so ``indexed``
        counts what it holds now. A cache never built for a mount with no shards is fresh:
        there is nothing to index (the reference says stale, ``never built``, right after
        ``ynm init``)."""
        from ynm.index.schema import get_meta
        from ynm.store.sync import config_value

        mounts: list[dict[str, Any]] = []
        index: list[dict[str, Any]] = []
        problems: list[str] = []
        unmerged = self.unmerged()
        vectors = self.vector_status()
        for m in self.mounts:
            reason = m.cache.stale_reason(m.log)
            if reason == "never built" and not m.log.tips():
                reason = None  # nothing to index yet: an empty cache is the whole truth
            cache = m.fresh_cache()
            counts = cache.counts()
            entry_m: dict[str, Any] = {"id": m.id, "level": m.level, "provider": m.provider,
                                       "location": m.location, "shards": len(m.log.tips()),
                                       "badLines": counts["badLines"]}
            if m.remote:
                entry_m["remote"] = m.remote
                if not config_value(m.log.repo, f"remote.{m.remote}.url"):
                    entry_m["remoteMissing"] = True  # sync would skip it
            if m.id in unmerged:
                entry_m["unmerged"] = unmerged[m.id]  # fetched, waiting for `ynm sync`
            if m.anchor_problem is not None:  # reads see nothing, writes are refused
                entry_m["anchorProblem"] = f"{m.anchor_problem}; {m.anchor_hint}"
            mounts.append(entry_m)
            entry: dict[str, Any] = {"mount": m.id, "fresh": reason is None,
                                     "indexed": counts["memories"]}
            if cache.has_vectors:
                entry["vectors"] = cache.conn.execute(
                    "SELECT count(*) FROM vectors").fetchone()[0]
                entry["vectorModel"] = get_meta(cache.conn, "vec_model")
            if vectors["enabled"]:
                entry["pendingVectors"] = _pending_vectors(cache, vectors.get("model"),
                                                           counts["memories"])
            if reason is not None:
                entry["reason"] = reason
            index.append(entry)
            problems.extend(f"{ref}:{line} {msg}" for ref, line, msg in cache.problems())
        for p in self.mount_problems:
            mounts.append({"id": p.id, "level": p.level, "provider": p.provider,
                           "location": p.location, "shards": -1, "error": p.error})
        if self.remotes:
            from ynm.service.remote import hosted_status

            mounts.extend(hosted_status(self.remotes))
        return {
            "name": "ynm", "version": __version__, "config": list(self.loaded.files),
            "repo": str(self.loaded.repo) if self.loaded.repo else None,
            "mounts": mounts, "index": index, "problems": problems,
            "vectors": vectors,
        }

    def vector_status(self) -> dict[str, Any]:
        """Whether recall uses vectors, and why not: ``{"enabled", "embedder", "model"?,
        "reason"?, "failedAt"?}`` (``model``: the model the embedder value names, see
        ynm.index.embedders.model_name). Checks what can be checked without loading the model
        or calling a server; then a fallback of this process, or the last one recorded in a mount's cache
        by any process (``failedAt``: its UTC time; cleared by the next recall whose vector
        search works), turns it off with that reason."""
        from ynm.index.embedders import model_name

        spec = self.config.embedder
        out: dict[str, Any] = {"enabled": False, "embedder": spec}
        model = model_name(spec)
        if model is not None:
            out["model"] = model
        if spec == "none":
            out["reason"] = "embedder is none: full-text recall only"
            return out
        from ynm.index.embedders import spec_problem

        problem = spec_problem(spec)
        if problem is None and self.mounts:
            problem = self.mounts[0].cache.vector_problem()
        if problem is None and not spec.startswith("openai-compatible"):
            problem = _missing_vector_extra()
        if problem is None and self._embedder_opened and self._embedder is None:
            problem = self.embedder_problem
        if problem is None and self.vector_failure is not None:
            problem = self.vector_failure
        if problem is None:
            failure = self._recorded_vector_failure()
            if failure is not None:
                problem = (f"the last recall fell back to full text: {failure.get('reason')}; "
                           "the next recall tries the embedder again")
                out["failedAt"] = failure.get("at")
        if problem is not None:
            out["reason"] = problem
        else:
            out["enabled"] = True
        return out


def _has_snapshot(mount: Mount) -> bool:
    """Whether ``mount`` has a snapshot ref of its cache's schema (``ynm compact``)."""
    from ynm.index.snapshot import NAME
    from ynm.store.snapshots import snapshot_ref

    return mount.log.repo.references.get(snapshot_ref(mount.level, NAME)) is not None


def _actor(state: str | bytes) -> str | None:
    """``provenance.actor`` of the current content record in a folded state's JSON (packed or
    not, ynm.index.schema.unpack); None without parsing when no ``user:`` actor appears in it
    (only those name an author)."""
    from ynm.index.schema import unpack

    state = unpack(state)
    if '"user:' not in state:
        return None
    current = json.loads(state).get("current") or {}
    return (current.get("provenance") or {}).get("actor")


def _with_author(item: dict[str, Any], author: str | None) -> dict[str, Any]:
    """``item`` with ``author`` after ``updatedAt`` in a recall hit (reference/cli.md §3.2),
    else last."""
    if author is None:
        return item
    if "current" in item or "updatedAt" not in item:
        return {**item, "author": author}
    out: dict[str, Any] = {}
    for key, value in item.items():
        out[key] = value
        if key == "updatedAt":
            out["author"] = author
    return out


def _pending_vectors(cache: Any, model: str | None, indexed: int) -> int:
    """How many of a cache's memories have no vector of ``model`` yet: all of them when the
    cache holds none or another model's, else those missing from its vector table. The next
    recall (or ``ynm reindex``) embeds them."""
    from ynm.index.schema import get_meta

    kept = get_meta(cache.conn, "vec_model") if cache.has_vectors else None
    if kept is None or model is None or not (kept.startswith(model + " (")
                                             or kept.startswith(model + "@")):
        return indexed
    return cache.conn.execute("SELECT count(*) FROM memories WHERE rowid NOT IN "
                              "(SELECT rowid FROM vectors)").fetchone()[0]


def _missing_vector_extra() -> str | None:
    """Which packages of the ``vector`` extra are missing, as a status reason, or None."""
    import importlib.util

    from ynm.errors import pip_install

    missing = [m for m in ("numpy", "onnxruntime", "tokenizers", "sqlite_vec")
               if importlib.util.find_spec(m) is None]
    if not missing:
        return None
    return (f"{', '.join(missing)} not installed: full-text recall only; "
            f"{pip_install('vector')}")


def _session_id(raw: str) -> str:
    """The normalised session id (:func:`normalize_session_id`).

    Raises:
        InvalidInput: ``sessionId: <why>`` when nothing usable is left."""
    try:
        return normalize_session_id(raw)
    except ValueError as err:
        raise InvalidInput(f"sessionId: {err}") from err


# -- no-op writes: a write that would change nothing writes nothing ---------------------------

_SCALAR_KEYS = (("importance", "importance"), ("confidence", "confidence"),
                ("pinned", "pinned"), ("needs_review", "needsReview"))


def _adds_nothing(state: dict[str, Any], inp: AnnotateInput | SupersedeInput,
                  skip_links: tuple[tuple[str, str], ...] = ()) -> bool:
    """True when every tag and link of ``inp`` is already on the folded ``state`` (cli.md §3.3
    shape) and each scalar it gives (importance, confidence, pinned, needsReview) equals the
    state's; links in ``skip_links`` (``(rel, to)``) are not counted."""
    links = {(link["rel"], link["to"]) for link in state.get("links", [])}
    return (
        set(inp.tags) <= set(state.get("tags", []))
        and all((link.rel, link.to) in links or (link.rel, link.to) in skip_links
                for link in inp.links)
        and all(getattr(inp, attr) is None or getattr(inp, attr) == state.get(key)
                for attr, key in _SCALAR_KEYS)
    )


def _annotate_changes_nothing(state: dict[str, Any], inp: AnnotateInput) -> bool:
    """An annotate that would leave the folded state as it is: no data (data is always
    recorded, dream bookkeeping included) and nothing :func:`_adds_nothing` would add. A
    reason alone changes nothing."""
    return inp.data is None and _adds_nothing(state, inp)


# The version fields a supersede replaces, not carries over: (record key, input attribute).
SUPERSEDE_REPLACES = (("data", "data"), ("dataSchema", "data_schema"),
                      ("validFrom", "valid_from"), ("validTo", "valid_to"))


def dropped_by_supersede(current: dict[str, Any], inp: SupersedeInput) -> list[str]:
    """The record keys of :data:`SUPERSEDE_REPLACES` that ``current`` (the previous version's
    record, JSON keys) holds and the supersede ``inp`` does not give, in that order: what the
    new version drops (reference/cli.md §4.25 copies none of them)."""
    return [key for key, attr in SUPERSEDE_REPLACES
            if current.get(key) is not None and getattr(inp, attr) is None]


def _same_version(state: dict[str, Any], inp: SupersedeInput, ttl: str | None) -> bool:
    """A supersede that would change nothing: the memory is live and not working memory
    (a supersede renews working memory, which expires ttl after its updatedAt: seed 001),
    content, summary (the derived one when none is given), data, dataSchema, validFrom,
    validTo and ``ttl`` equal the current record's, the subject is not given or the same, and
    :func:`_adds_nothing` (its own ``supersedes`` link to the memory aside)."""
    current = state["current"]
    summary = inp.summary if inp.summary is not None else summarize(inp.content)
    return (
        not state.get("tombstoned")
        and state["type"] != "working"
        and inp.content == current.get("content")
        and summary == current.get("summary")
        and inp.data == current.get("data")
        and inp.data_schema == current.get("dataSchema")
        and inp.valid_from == current.get("validFrom")
        and inp.valid_to == current.get("validTo")
        and ttl == current.get("ttl")
        and (inp.subject is None or inp.subject == state.get("subject"))
        and _adds_nothing(state, inp, skip_links=(("supersedes", inp.memory_id),))
    )
