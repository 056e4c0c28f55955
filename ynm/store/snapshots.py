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
  record count; see :class:`SnapshotMeta`) and ``state.bin`` (the folded state, compressed).
  Each compaction replaces the previous commit (compare-and-swap on the old one), so old
  snapshots become garbage instead of piling up in history.
- Sync carries the refs: fetched into ``refs/ynm-remote/<remote>/<level>/snapshots/*``, the
  newer snapshot wins if it fits the local history, pushed with a lease on what was fetched
  (:mod:`ynm.store.sync`).
- A purge drops the level's snapshots (:func:`drop_snapshots`): they hold the purged text.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import pygit2

from ynm.errors import StoreError
from ynm.model.shards import DOCUMENTS_PREFIX, DOCUMENTS_REMOTE_PREFIX
from ynm.store.objects import write_blob
from ynm.store.repo import repo_common_dir, signature

META_FILE = "meta.json"
STATE_FILE = "state.bin"
BLOB_MODE = pygit2.enums.FileMode.BLOB


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
        StoreError: the ref exists but its commit, ``meta.json`` or ``state.bin`` is missing
            or unreadable (the caller ignores such a snapshot and says so).
    """
    found = repo.references.get(ref)
    if found is None:
        return None
    try:
        commit = found.peel(pygit2.Commit)
        tree = commit.tree
        meta = SnapshotMeta.from_bytes(bytes(memoryview(repo[tree[META_FILE].id])))
        state = bytes(memoryview(repo[tree[STATE_FILE].id])) if with_state else b""
    except (KeyError, ValueError, TypeError, pygit2.GitError) as exc:
        raise StoreError(f"snapshot {ref} is unreadable: {exc}") from exc
    return Snapshot(ref, str(commit.id), meta, state)


def write_snapshot(repo: pygit2.Repository, ref: str, meta: SnapshotMeta, state: bytes,
                   expected: str | None, message: str) -> str | None:
    """Point ``ref`` at a new parentless commit holding ``meta.json`` and ``state.bin``, by
    compare-and-swap: only if it still points at ``expected`` (None: must not exist). The
    caller holds ``ynm.lock``. Returns the new commit (hex), or None when the ref moved.

    Raises:
        StoreError: a git failure.
    """
    objects = repo_common_dir(repo) / "objects"
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


def list_snapshots(repo: pygit2.Repository, prefix: str) -> dict[str, str]:
    """Refs under ``prefix`` -> commit hex."""
    out = {}
    raw_prefix = prefix.encode()
    for raw in repo.raw_listall_references():
        if raw.startswith(raw_prefix):
            name = raw.decode("utf-8", errors="replace")
            try:
                out[name] = str(repo.lookup_reference(name).resolve().target)
            except (KeyError, pygit2.GitError):
                continue
    return out


def drop_snapshots(repo: pygit2.Repository, level: str) -> list[str]:
    """Delete every snapshot ref of ``level`` (a purge: they hold the purged text). Returns the
    refs deleted. The commits become unreachable and go with git's next gc."""
    dropped = []
    for ref in list_snapshots(repo, snapshots_prefix(level)):
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
    since (a purge) or deleted makes it unfit."""
    for ref, shard in meta.shards.items():
        tip = tips.get(ref)
        if tip is None:
            return f"shard {ref} is gone"
        covered = shard["commit"]
        if covered == tip:
            continue
        try:
            if repo.descendant_of(tip, covered):
                continue
        except (KeyError, ValueError, pygit2.GitError):
            pass
        return f"shard {ref} was rewritten since the snapshot"
    return None
