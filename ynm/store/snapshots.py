"""Snapshot refs: a mount's folded state, kept beside its shard logs so a cold cache can start
from it (``ynm compact``).

Layout (this module is byte-level like the shard log; what the bytes mean is
:mod:`ynm.index.snapshot`'s business):

- Ref ``refs/ynm/<level>/snapshots/<name>``, ``<name>`` = ``cache-v<cache schema version>``
  (a cache of another schema never reads it). The reference implementation lists only
  ``refs/notes/ynm/*`` and ``refs/ynm/<level>/documents/*``, so it never sees these refs, and
  the shard logs themselves are never touched: every record stays where it was, readable by
  any implementation, with its whole history.
- The ref points at a parentless commit ``ynm: snapshot <level> <name>`` whose tree holds
  ``meta.json`` (what the snapshot covers: per shard the notes commit, the last record and the
  record count; see :class:`SnapshotMeta`; and ``stateSha256``, the SHA-256 of ``state.bin``)
  and ``state.bin`` (the folded state, compressed).
  Each compaction replaces the previous commit (compare-and-swap on the old one), so old
  snapshots become garbage instead of piling up in history.
- Sync carries the refs: fetched into ``refs/ynm-remote/<remote>/<level>/snapshots/*``, the
  newer snapshot wins if it fits the local history, pushed with a lease on what was fetched
  (:mod:`ynm.store.sync`). Only a snapshot :func:`check_snapshot` finds usable is taken or
  pushed: a ref that is no snapshot commit, a damaged ``meta.json`` or ``state.bin``, an
  unknown format, or one that does not fit the shard tips never travels.
- A purge drops the level's snapshots (:func:`drop_snapshots`): they hold the purged text.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any

from ynm.store.libgit import pygit2

from ynm.errors import StoreError
from ynm.model.shards import DOCUMENTS_PREFIX, DOCUMENTS_REMOTE_PREFIX
from ynm.store.objects import write_blob
from ynm.store.repo import refs_under, repo_common_dir, signature

META_FILE = "meta.json"
STATE_FILE = "state.bin"
FORMAT = 2  # the ``format`` of meta.json this ynm writes (ynm.index.snapshot.FORMAT)
READS = (1, 2)  # the formats it reads (ynm.index.snapshot.READS)
STATE_HASH = "stateSha256"  # meta.json key: SHA-256 (hex) of state.bin, set by write_snapshot
SQLITE_HEADER = b"SQLite format 3\x00"  # what state.bin decompresses to starts with this
NAME_PREFIX = "cache-v"  # a snapshot's name: cache-v<cache schema version>
BLOB_MODE = 0o100644  # pygit2.enums.FileMode.BLOB, without importing pygit2


class SnapshotDamaged(StoreError):
    """A snapshot ref that cannot be used (:func:`check_snapshot`); ``ref`` names it and the
    message says why in plain words (``snapshot <ref> ...``)."""

    def __init__(self, ref: str, message: str) -> None:
        super().__init__(message)
        self.ref = ref


def snapshots_prefix(level: str) -> str:
    """``refs/ynm/<level>/snapshots/``."""
    return f"{DOCUMENTS_PREFIX}/{level}/snapshots/"


def snapshots_tracking_prefix(remote: str, level: str) -> str:
    """``refs/ynm-remote/<remote>/<level>/snapshots/``: where sync fetches a remote's."""
    return f"{DOCUMENTS_REMOTE_PREFIX}/{remote}/{level}/snapshots/"


def snapshot_ref(level: str, name: str) -> str:
    """``refs/ynm/<level>/snapshots/<name>``."""
    return snapshots_prefix(level) + name


@dataclass(slots=True)
class SnapshotMeta:
    """``meta.json`` of a snapshot commit.

    Attributes:
        shards: shard ref -> ``{"commit": <notes commit hex>, "records": <count>,
            "last": {"recordedAt", "id"} | None}``: the shard state the snapshot holds.
        created_at: when it was written (UTC ISO 8601, ``YYYY-MM-DDTHH:MM:SS.sssZ``); of two
            snapshots that both fit, the newer wins (sync).
        extra: every other key (format, cache schema, anchor, embedder, counts), kept as is.
    """

    shards: dict[str, dict[str, Any]]
    created_at: str
    extra: dict[str, Any] = field(default_factory=dict)

    def to_bytes(self) -> bytes:
        """The JSON text written as ``meta.json`` (keys sorted, two-space indent)."""
        obj = {**self.extra, "createdAt": self.created_at, "shards": self.shards}
        return (json.dumps(obj, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()

    @classmethod
    def from_bytes(cls, data: bytes) -> SnapshotMeta:
        """Parse ``meta.json``.

        Raises:
            ValueError: not JSON, or ``shards``/``createdAt`` missing or of the wrong type.
            TypeError: not a JSON object.
        """
        obj = json.loads(data)
        if not isinstance(obj, dict):
            raise TypeError("meta.json is not an object")
        shards, created = obj.pop("shards", None), obj.pop("createdAt", None)
        if not isinstance(shards, dict) or not isinstance(created, str) or not all(
                isinstance(v, dict) and isinstance(v.get("commit"), str)
                for v in shards.values()):
            raise ValueError("meta.json lacks shards or createdAt")
        return cls(shards, created, obj)


@dataclass(frozen=True, slots=True)
class Snapshot:
    """A snapshot as read from its ref: ``commit`` (hex), ``meta`` and ``state`` (the raw
    ``state.bin`` bytes)."""

    ref: str
    commit: str
    meta: SnapshotMeta
    state: bytes


def read_snapshot(repo: pygit2.Repository, ref: str, *, with_state: bool = True
                  ) -> Snapshot | None:
    """The snapshot at ``ref``, or None when the ref does not exist.

    Args:
        with_state: False reads ``meta.json`` only (``state`` is then ``b""``).

    Raises:
        StoreError: the ref exists but is no snapshot commit (it points at another object, or
            at a commit without ``meta.json`` or ``state.bin``) or its ``meta.json`` cannot be
            parsed; the message says so in plain words, ``snapshot <ref> ...`` (the caller
            ignores such a snapshot and says so).
    """
    found = repo.references.get(ref)
    if found is None:
        return None
    try:
        target = repo.get(found.resolve().target)
    except (KeyError, ValueError, pygit2.GitError):
        target = None
    if target is None:
        raise StoreError(f"snapshot {ref} is not a snapshot commit (it points at an object "
                         "missing from this repository)")
    if not isinstance(target, pygit2.Commit):
        kind = target.type_str
        article = "an" if kind[0] in "aeiou" else "a"
        raise StoreError(f"snapshot {ref} is not a snapshot commit (it points at {article} "
                         f"{kind})")
    tree = target.tree
    for name in (META_FILE, STATE_FILE) if with_state else (META_FILE,):
        try:
            kind = tree[name].type_str
        except KeyError:
            kind = None
        if kind != "blob":
            raise StoreError(f"snapshot {ref} is not a snapshot commit (it points at commit "
                             f"{str(target.id)[:12]}, which holds no {name} file)")
    try:
        meta = SnapshotMeta.from_bytes(bytes(memoryview(repo[tree[META_FILE].id])))
    except (ValueError, TypeError) as exc:
        why = "it is not JSON" if isinstance(exc, json.JSONDecodeError) else str(exc)
        raise StoreError(f"snapshot {ref} has a damaged meta.json ({why})") from None
    state = bytes(memoryview(repo[tree[STATE_FILE].id])) if with_state else b""
    return Snapshot(ref, str(target.id), meta, state)


def state_hash(state: bytes) -> str:
    """The SHA-256 (hex) of ``state.bin``, recorded in meta.json as ``stateSha256``."""
    return hashlib.sha256(state).hexdigest()


def snapshot_problem(repo: pygit2.Repository, snapshot: Snapshot,
                     tips: dict[str, str] | None = None) -> str | None:
    """Why ``snapshot`` (read with its state) cannot be used, in plain words, or None when it
    can: ``snapshot <ref> ...`` when its ``format`` is not one of :data:`READS`, its ``cacheSchema``
    is not the version its name (``cache-v<n>``) says, ``state.bin`` is damaged (its SHA-256
    is not meta.json's ``stateSha256``; a snapshot written before that key existed must
    decompress as one zstd frame; either must decompress to a SQLite file), or, with ``tips`` (shard ref -> commit hex), when it does
    not fit them (:func:`fits`)."""
    ref, extra = snapshot.ref, snapshot.meta.extra
    name = ref.rpartition("/")[2]
    if extra.get("format") not in READS:
        return (f"snapshot {ref} was written in format {extra.get('format')!r}; this ynm "
                f"reads formats {' and '.join(str(f) for f in READS)}")
    if f"{NAME_PREFIX}{extra.get('cacheSchema')}" != name:
        return (f"snapshot {ref} has a damaged meta.json (cache schema "
                f"{extra.get('cacheSchema')!r}, where its name says {name})")
    want = extra.get(STATE_HASH)
    if isinstance(want, str):
        if state_hash(snapshot.state) != want:
            return (f"snapshot {ref}: state.bin is damaged (its SHA-256 is not the one "
                    "meta.json records)")
    elif not _decompresses(snapshot.state):
        return f"snapshot {ref}: state.bin is damaged (it does not decompress)"
    if not _head(snapshot.state).startswith(SQLITE_HEADER):
        return f"snapshot {ref}: state.bin is damaged (it does not hold a database)"
    if tips is not None:
        why = fits(repo, snapshot.meta, tips)
        if why is not None:
            return f"snapshot {ref} does not match the notes ({why})"
    return None


def check_snapshot(repo: pygit2.Repository, ref: str, tips: dict[str, str] | None = None
                   ) -> tuple[Snapshot | None, str | None]:
    """Read and verify the snapshot at ``ref`` (:func:`read_snapshot`, then
    :func:`snapshot_problem`). Returns ``(snapshot, None)`` when it is usable, ``(None, None)``
    when the ref does not exist, and ``(snapshot or None, why)`` when it is not (``why``:
    ``snapshot <ref> ...`` in plain words)."""
    try:
        found = read_snapshot(repo, ref)
    except StoreError as err:
        return None, str(err)
    if found is None:
        return None, None
    return found, snapshot_problem(repo, found, tips)


def _head(state: bytes) -> bytes:
    """The first bytes ``state`` decompresses to (b"" when it does not)."""
    import zstandard

    try:
        reader = zstandard.ZstdDecompressor().stream_reader(state)
        return reader.read(len(SQLITE_HEADER))
    except zstandard.ZstdError:
        return b""


def _decompresses(state: bytes) -> bool:
    """Whether ``state`` is one whole zstd frame (streamed, the output not kept)."""
    import zstandard

    try:
        obj = zstandard.ZstdDecompressor().decompressobj()
        view = memoryview(state)
        for i in range(0, len(view), 1 << 20):
            obj.decompress(view[i:i + (1 << 20)])
        return obj.eof
    except zstandard.ZstdError:
        return False


def write_snapshot(repo: pygit2.Repository, ref: str, meta: SnapshotMeta, state: bytes,
                   expected: str | None, message: str) -> str | None:
    """Point ``ref`` at a new parentless commit holding ``meta.json`` and ``state.bin``, by
    compare-and-swap: only if it still points at ``expected`` (None: must not exist). The
    SHA-256 of ``state`` is recorded in meta.json as ``stateSha256`` (what
    :func:`snapshot_problem` checks). The caller holds ``ynm.lock``. Returns the new commit
    (hex), or None when the ref moved.

    Raises:
        StoreError: a git failure.
    """
    objects = repo_common_dir(repo) / "objects"
    meta = SnapshotMeta(meta.shards, meta.created_at,
                        {**meta.extra, STATE_HASH: state_hash(state)})
    try:
        builder = repo.TreeBuilder()
        builder.insert(META_FILE, write_blob(repo, objects, meta.to_bytes()), BLOB_MODE)
        builder.insert(STATE_FILE, write_blob(repo, objects, state), BLOB_MODE)
        tree = builder.write()
        text = message if message.endswith("\n") else message + "\n"
        commit = repo.create_commit(None, signature(repo, "AUTHOR"), signature(repo),
                                    text, tree, [])
        return str(commit) if compare_and_swap(repo, ref, expected, commit, message) else None
    except pygit2.GitError as exc:
        raise StoreError(f"cannot write {ref}: {exc}") from exc


def compare_and_swap(repo: pygit2.Repository, ref: str, expected: str | None,
                     new: pygit2.Oid | None, message: str) -> bool:
    """Move ``ref`` to ``new`` (None: delete it) only if it points at ``expected`` (None: must
    not exist), under git's ref lock. Returns False when it moved."""
    with repo.transaction() as txn:
        txn.lock_ref(ref)
        found = repo.references.get(ref)
        if (str(found.target) if found is not None else None) != expected:
            return False
        if new is None:
            txn.remove(ref)
        else:
            who = signature(repo)
            repo.set_ident(who.name, who.email)
            txn.set_target(ref, new, None, message)
    return True


def drop_snapshots(repo: pygit2.Repository, level: str) -> list[str]:
    """Delete every snapshot ref of ``level`` (a purge: they hold the purged text). Returns the
    refs deleted. The commits become unreachable and go with git's next gc."""
    dropped = []
    for ref in refs_under(repo, snapshots_prefix(level)):
        try:
            repo.references.delete(ref)
            dropped.append(ref)
        except (KeyError, pygit2.GitError):
            continue
    return dropped


def fits(repo: pygit2.Repository, meta: SnapshotMeta, tips: dict[str, str]) -> str | None:
    """Why a snapshot does not fit the shard tips ``tips`` (ref -> commit hex), or None when
    it does: every shard it covers still exists and its covered commit is the tip or one of
    the tip's ancestors (the shard only grew since, by appends or merges). A shard rewritten
    since (a purge) or deleted, or a covered commit this repository lacks, makes it unfit."""
    for ref, shard in meta.shards.items():
        tip = tips.get(ref)
        if tip is None:
            return f"it covers shard {ref}, which this repository does not have"
        covered = shard["commit"]
        if covered == tip:
            continue
        try:
            if repo.descendant_of(tip, covered):
                continue
        except (KeyError, ValueError, pygit2.GitError):
            return (f"it covers commit {covered[:12]} of shard {ref}, which this repository "
                    "does not have")
        return f"shard {ref} was rewritten since the snapshot was written"
    return None
