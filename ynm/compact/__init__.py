"""``ynm compact``: write each mount's folded state as a snapshot a cold cache starts from.

A compaction brings the mount's cache up to date, then writes its state (folded memories,
every record with the orphans among them, each line named by its number in the note blob it
is in, bad lines, the shard commits it covers, and the vectors of the configured embedder) to
``refs/ynm/<level>/snapshots/cache-v<schema>``
(:mod:`ynm.store.snapshots` for the ref, :mod:`ynm.index.snapshot` for the state). The shard
logs are not touched: every record stays where it was, and readers that know nothing of
snapshots (the reference implementation) read the store exactly as before.

Nothing new since the last snapshot (same shard commits, same embedder) writes nothing, unless
that snapshot is unusable (:func:`ynm.store.snapshots.check_snapshot`: no snapshot commit, a
damaged ``meta.json`` or ``state.bin``, an unknown format): it is replaced.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

from ynm.errors import StoreConflict


@dataclass(frozen=True, slots=True)
class CompactResult:
    """What one mount's compaction did.

    Attributes:
        mount: the mount id.
        ref: the snapshot ref.
        commit: the snapshot commit now at ``ref`` (hex); None for a mount with no shard
            (nothing to compact, nothing written).
        written: False when the existing snapshot already covered every shard commit.
        shards, records, memories: what the snapshot covers.
        bytes: size of ``state.bin`` (0 when nothing was written).
    """

    mount: str
    ref: str
    commit: str | None
    written: bool
    shards: int
    records: int
    memories: int
    bytes: int

    def to_obj(self) -> dict[str, Any]:
        """JSON shape (docs/cli.md "ynm compact")."""
        return {"mount": self.mount, "ref": self.ref, "commit": self.commit,
                "written": self.written, "shards": self.shards, "records": self.records,
                "memories": self.memories, "bytes": self.bytes}


def compact_mount(mount: Any, embedder: Any = None, *, locked: bool = False) -> CompactResult:
    """Write ``mount``'s snapshot (module docstring).

    Args:
        mount: a :class:`ynm.service.mounts.Mount` (its ``log``, ``level``, ``fresh_cache``).
        embedder: the embedder whose vectors the cache holds and the snapshot carries, or None.
        locked: the caller holds the repository lock (``ynm.lock``) already (sync does).

    Raises:
        StoreConflict: another process replaced the snapshot while this one was writing.
        StoreError: a git failure.
    """
    from ynm.index.snapshot import NAME, covered_shards, dump
    from ynm.store.snapshots import SnapshotMeta, check_snapshot, snapshot_ref, write_snapshot

    log = mount.log
    repo = log.repo
    ref = snapshot_ref(mount.level, NAME)
    cache = mount.fresh_cache()
    old, problem = check_snapshot(repo, ref)
    if problem is not None:
        old = None  # unusable: replaced below
        found = repo.references.get(ref)
        expected = str(found.target) if found is not None else None
    else:
        expected = old.commit if old is not None else None
    key = embedder.key if embedder is not None else None
    covered = covered_shards(cache.conn)
    if not covered:
        return CompactResult(mount.id, ref, expected, False, 0, 0, 0, 0)
    if old is not None and old.meta.extra.get("embedder") == key and (
            old.meta.shards == covered):
        return CompactResult(mount.id, ref, old.commit, False, len(old.meta.shards),
                             int(old.meta.extra.get("records", 0)),
                             int(old.meta.extra.get("memories", 0)), 0)
    state = dump(cache.conn, anchor=log.anchor, level=mount.level, read_blob=log.read_blob,
                 embedder=embedder)
    meta = dict(state.meta)
    shards, created = meta.pop("shards"), meta.pop("createdAt")
    message = f"ynm: snapshot {mount.level} {NAME}"
    with contextlib.nullcontext() if locked else log.lock():
        commit = write_snapshot(repo, ref, SnapshotMeta(shards, created, meta), state.state,
                                expected, message)
    if commit is None:
        raise StoreConflict(f"{ref} moved while ynm compact wrote it; run ynm compact again")
    return CompactResult(mount.id, ref, commit, True, len(shards), meta["records"],
                         meta["memories"], len(state.state))
