"""The git-notes shard log: one notes ref per shard, one JSONL blob per ref, written with pygit2.

This layer is byte-level: it never parses JSON. The layer above hands it complete JSONL lines per
shard and gets the raw blob bytes back. Every object and ref operation runs in-process; the ref
update is a compare-and-swap under git's own ref lock, so writers that bypass ``ynm.lock``
(``git notes append`` and other tools) can never be overwritten.
Source: reference/storage.md §3 (git-notes layout) and DESIGN.md "Storage".
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from ynm.errors import MountLevelMismatch, RefCollision, StoreConflict, StoreError
from ynm.model.shards import ShardKey, document_ref, key_from_ref, ref_prefix_for
from ynm.model.words import counted
from ynm.store.anchor import OBJECT_ID_RE
from ynm.store.libgit import pygit2
from ynm.store.lock import LOCK_FILE_NAME, LOCK_TIMEOUT_S, RepoLock
from ynm.store.objects import (
    DeflatedContent,
    LooseMark,
    read_deflated_loose,
    write_appended_blob,
    write_blob,
)
from ynm.store.repo import (
    find_common_dir,
    git_failure_line,
    is_shallow,
    open_repository,
    read_refs,
    refs_under,
    signature,
)

MAX_CAS_RETRIES = 5
# git waits this long for another process's `<ref>.lock` (core.filesRefLockTimeout, 100 ms).
REF_LOCK_TIMEOUT_S = 0.1
REF_LOCK_RETRY_S = 0.005
# Blob bytes kept in memory by id (ids are content hashes, so an entry can never be stale).
# Reading a 3 MB loose blob costs ~15 ms in libgit2 (inflate plus hash verification); the cache
# lets consecutive appends and reads in one process skip it.
BLOB_CACHE_BYTES = 64 * 1024 * 1024
# Deflated shard contents kept by blob id, so the next append to that shard compresses only its
# new lines (ynm.store.objects.write_appended_blob). Bytes of compressed data.
DEFLATED_CACHE_BYTES = 32 * 1024 * 1024
# Every append leaves a whole shard blob as a loose object (~1 MB for a 6.7 MB shard). Once the
# loose bytes appends wrote (counted across processes in <common dir>/ynm-loose-bytes) pass
# this, `git repack -d` runs in the background: it packs the loose objects, each shard version
# as a delta of the next (they share all but the tail), and removes the loose copies.
PACK_AFTER_LOOSE_BYTES = 64 * 1024 * 1024
LOOSE_COUNTER_FILE = "ynm-loose-bytes"
# One delta candidate is enough: a shard version is a prefix of the next one. git's default
# window (10) costs five times the CPU for the same pack.
# Each shard is a delta island (git-pack-objects(1), "DELTA ISLANDS"; a shard's tracking ref
# joins its island): every shard's blob sits at the same note path, so git's candidate by
# size is often another shard's blob, and each such try indexes the whole base before finding
# little in common (minutes of CPU for one repack of a 1M-memory store, 16 blobs of 17-65 MB).
# A base from another island is refused before anything is read.
PACK_ISLANDS = ("^refs/notes/ynm/(.+)$", "^refs/notes/ynm-remote/[^/]+/(.+)$")
REPACK_COMMAND = (*(arg for island in PACK_ISLANDS for arg in ("-c", f"pack.island={island}")),
                  "repack", "-d", "-q", "--window=1", "--delta-islands")
BLOB_MODE = 0o100644  # pygit2.enums.FileMode.BLOB, without importing pygit2
TREE_MODE = 0o040000  # pygit2.enums.FileMode.TREE


@dataclass(frozen=True, slots=True)
class ShardTip:
    """A shard ref and the notes commit it points at.

    Attributes:
        key: The shard key parsed from the ref.
        ref: ``refs/notes/ynm/<level>/<namespace>/<type>/<bucket>``.
        commit: Hex id of the ref's notes commit (the shard's revision).
    """

    key: ShardKey
    ref: str
    commit: str


@dataclass(frozen=True, slots=True)
class ShardBlob:
    """One shard's content at a tip.

    Attributes:
        tip: The ref and commit read.
        blob_id: Hex id of the anchor's note blob, or None when that commit has no note for
            the anchor.
        data: The blob bytes (JSONL, unparsed); ``b""`` when there is no note.
    """

    tip: ShardTip
    blob_id: str | None
    data: bytes


@dataclass(frozen=True, slots=True)
class AppendedShard:
    """What one shard's append wrote.

    Attributes:
        key: The shard.
        ref: Its ref.
        revision: Hex id of the new notes commit.
        previous: Hex id of the tip it replaced, or None when the ref was new.
        blob_id: Hex id of the new note blob.
        previous_blob_id: Hex id of the note blob it replaced, or None.
        previous_size: Length in bytes of the old content (before any newline was inserted),
            so ``data[previous_size:]`` of the new blob holds the appended lines (after an
            optional ``\\n``).
        mark: The new blob's :class:`~ynm.store.objects.LooseMark` as this log wrote its loose
            file, so a cache can read a later append from that file alone (None: SHA-256
            repository). Should the file have been there already in another layout, a reader's
            checks refuse the mark.
    """

    key: ShardKey
    ref: str
    revision: str
    previous: str | None
    blob_id: str
    previous_blob_id: str | None
    previous_size: int
    mark: LooseMark | None = None


def append_message(key: ShardKey, count: int) -> str:
    """The subject of an append commit: ``ynm: <n> record[s] <level>/<ns>/<type>/<bucket>``.

    Source: reference/storage.md §3.6.
    """
    return f"ynm: {counted(count, 'record')} {key.shard_id}"


def _is_lock_busy(exc: pygit2.GitError) -> bool:
    """Whether libgit2 failed because another process holds ``<ref>.lock`` (GIT_ELOCKED or an
    ``O_EXCL`` create that found the file). pygit2 keeps only the message, not the code."""
    text = str(exc)
    return "failed to lock file" in text or "File exists" in text


def _full_message(message: str) -> str:
    # `git commit-tree -m` ends the message with a newline; do the same so commits look alike.
    return message if message.endswith("\n") else message + "\n"


class GitNotesLog:
    """The shard log of one repository at one level.

    Args:
        path: Any path inside the repository: work tree, ``.git`` dir, bare repository or a
            linked worktree (which resolves to the main repository's common dir).
        level: ``"personal"`` or ``"distributed"``; only refs of this level are read or written.
        anchor: Hex id of the commit notes are attached to (see ``ynm.store.anchor``).
        mount_id: The mount's id, used in error messages.
        lock_timeout_s: Seconds to wait for ``<common dir>/ynm.lock``.

    Attributes:
        repo: The open ``pygit2.Repository`` (on the common dir).
        level, anchor, mount_id: As given.
        common_dir: The git common dir (refs, objects and ``ynm.lock``).
        before_update_ref: Test seam; when set, called with the ref name after the new commit
            is written and before the compare-and-swap, on every attempt.
        refusal: Why the anchor is no commit of this repository (set by the mount that opens
            the log, ynm.service.mounts); while set, every write raises
            :class:`~ynm.errors.AnchorNotCommit` with it before touching a ref.

    Raises:
        StoreError: When ``path`` is not in a git repository.

    Source: reference/storage.md §3.
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        level: str,
        anchor: str,
        mount_id: str = "project",
        lock_timeout_s: float = LOCK_TIMEOUT_S,
    ) -> None:
        self.path = Path(path)
        self._repo: pygit2.Repository | None = None
        self.level = level
        self.anchor = anchor
        self.mount_id = mount_id
        self.lock_timeout_s = lock_timeout_s
        # told what a write waits for when another process holds ynm.lock (RepoLock.on_wait)
        self.on_lock_wait: Callable[[str], None] | None = None
        self.common_dir = find_common_dir(path)
        self.before_update_ref: Callable[[str], None] | None = None
        self.refusal: str | None = None
        # Set by the mount when its anchor came from a memo (ynm.store.anchor.remembered_anchor):
        # told the repository before the first write, it returns why that anchor is wrong here
        # (the write is refused), or None.
        self.confirm_anchor: Callable[[pygit2.Repository], str | None] | None = None
        self.pack_after_bytes: int | None = PACK_AFTER_LOOSE_BYTES
        self._packer: subprocess.Popen[bytes] | None = None
        self._blob_cache: OrderedDict[str, bytes] = OrderedDict()
        self._blob_cache_bytes = 0
        self._deflated: OrderedDict[str, DeflatedContent] = OrderedDict()
        self._deflated_bytes = 0
        # Flat first (what writers write), then the two fan-outs git porcelain may produce.
        self._note_paths = (
            anchor,
            f"{anchor[:2]}/{anchor[2:]}",
            f"{anchor[:2]}/{anchor[2:4]}/{anchor[4:]}",
        )

    @property
    def repo(self) -> pygit2.Repository:
        """The repository, opened with pygit2 on first use (reads that need no git object,
        such as a recall answered from a fresh cache, never import pygit2: ynm.store.libgit).

        Raises:
            StoreError: When it cannot be opened.
        """
        if self._repo is None:
            self._repo = open_repository(self.common_dir)
        return self._repo

    # ----------------------------------------------------------------------------- reading

    def lock(self) -> RepoLock:
        """The repository lock (``<common dir>/ynm.lock``) for callers of ``write_shard``;
        a wait for a live owner is told to :attr:`on_lock_wait` (when set) after a second."""
        return RepoLock(self.common_dir / LOCK_FILE_NAME, self.lock_timeout_s,
                        on_wait=self.on_lock_wait)

    def tips(self) -> dict[str, ShardTip]:
        """Every shard ref of this log's level, in one pass over the ref names.

        Refs that do not parse as shard refs, or parse to another level, are skipped.

        Returns:
            ref name -> ShardTip, in ref-name order.

        Raises:
            StoreError: When the ref database cannot be read.

        Source: reference/storage.md §3.7 (``listRefs``).
        """
        prefix = ref_prefix_for(self.level)
        refs = read_refs(self.common_dir, prefix)
        if refs is None:  # the ref files cannot say for certain: ask libgit2
            try:
                refs = dict(sorted(refs_under(self.repo, prefix).items()))
            except pygit2.GitError as exc:
                raise StoreError(f"cannot list shard refs: {exc}") from exc
        out: dict[str, ShardTip] = {}
        for ref, commit in refs.items():
            key = key_from_ref(ref)
            if key is not None and key.level == self.level:
                out[ref] = ShardTip(key, ref, commit)
        return out

    def noted_objects(self, commit_hex: str, limit: int = 3) -> list[str]:
        """The ids of up to ``limit`` objects a notes commit holds a note on (its tree's note
        paths, flat and fanned out, joined back into ids), in tree order: where the notes of a
        shard whose anchor holds none hang (:func:`ynm.service.mounts.Mount.stray_warning`).

        Raises:
            StoreError: When the commit cannot be read.
        """
        found: list[str] = []

        def walk(tree: pygit2.Tree, prefix: str) -> None:
            for entry in tree:
                if len(found) >= limit:
                    return
                name = prefix + entry.name
                if entry.type_str == "blob" and OBJECT_ID_RE.fullmatch(name):
                    found.append(name)
                elif entry.type_str == "tree" and len(name) < 40:
                    walk(self.repo[entry.id], name)

        walk(self._commit_tree(commit_hex), "")
        return found

    def note_blob_id(self, commit_hex: str) -> str | None:
        """The anchor's note blob in a notes commit, or None when it has none.

        Looks at ``<anchor>``, then ``<a[:2]>/<a[2:]>``, then ``<a[:2]>/<a[2:4]>/<a[4:]>``;
        the first hit wins.

        Raises:
            StoreError: When the commit cannot be read.

        Source: reference/storage.md §3.4 and §7.15.
        """
        tree = self._commit_tree(commit_hex)
        found = self._find_note(tree)
        return str(found) if found is not None else None

    def read_blob(self, blob_hex: str) -> bytes:
        """The bytes of a blob.

        Raises:
            StoreError: When the object is missing or not a blob.
        """
        cached = self._blob_cache.get(blob_hex)
        if cached is not None:
            self._blob_cache.move_to_end(blob_hex)
            return cached
        try:
            blob = self.repo[blob_hex]
        except (KeyError, ValueError, pygit2.GitError) as exc:
            raise StoreError(f"cannot read blob {blob_hex}: {exc}") from exc
        if not isinstance(blob, pygit2.Blob):
            raise StoreError(f"object {blob_hex} is not a blob")
        # Copy through the buffer protocol: Blob.data costs a second full read.
        data = bytes(memoryview(blob))
        self._remember_blob(blob_hex, data)
        return data

    def blob_size(self, blob_hex: str) -> int:
        """The size in bytes of a blob, read from its object header (the blob is not read).

        Raises:
            StoreError: When the object is missing or not a blob.
        """
        cached = self._blob_cache.get(blob_hex)
        if cached is not None:
            return len(cached)
        try:
            kind, size = self.repo.odb.read_header(blob_hex)
        except (KeyError, ValueError, pygit2.GitError) as exc:
            raise StoreError(f"cannot read blob {blob_hex}: {exc}") from exc
        if kind != pygit2.enums.ObjectType.BLOB:
            raise StoreError(f"object {blob_hex} is not a blob")
        return size

    def loose_object(self, object_hex: str) -> bytes | None:
        """The file of a loose object as stored (still compressed), or None when the object
        is not loose in this repository's own object folder (packed, in an alternate, or
        missing). Nothing is checked; see :func:`ynm.store.objects.read_appended_loose`."""
        try:
            return (self.common_dir / "objects" / object_hex[:2] / object_hex[2:]).read_bytes()
        except (OSError, ValueError):
            return None

    def read_all(
        self, tips: Mapping[str, ShardTip] | Iterable[ShardTip] | None = None
    ) -> dict[str, ShardBlob]:
        """Read every shard's note blob in-process.

        Args:
            tips: The tips to read (``tips()`` output or any ShardTips); all shards if None.

        Returns:
            ref name -> ShardBlob, in the order of ``tips``. A tip whose commit has no note for
            the anchor gives ``blob_id=None, data=b""``.

        Raises:
            StoreError: When a tip's commit or blob cannot be read.

        Source: reference/storage.md §3.7 (``readAll``).
        """
        if tips is None:
            tips = self.tips()
        items = tips.values() if isinstance(tips, Mapping) else tips
        out: dict[str, ShardBlob] = {}
        for tip in items:
            blob_id = self.note_blob_id(tip.commit)
            data = self.read_blob(blob_id) if blob_id is not None else b""
            out[tip.ref] = ShardBlob(tip, blob_id, data)
        return out

    def is_ancestor(self, old_commit: str, new_commit: str) -> bool:
        """Whether ``old_commit`` is ``new_commit`` or one of its ancestors.

        Same meaning as ``git merge-base --is-ancestor old new``. Missing objects give False.
        """
        if old_commit == new_commit:
            return True
        try:
            return self.repo.descendant_of(new_commit, old_commit)
        except (KeyError, ValueError, pygit2.GitError):
            return False

    def health_details(self) -> dict[str, object]:
        """Store facts for ``ynm doctor`` / ``health``.

        Returns:
            ``{"repo": <common dir path>, "anchor": <hex>, "anchorPresent": bool,
            "shallow": bool, "shards": <number of shard refs of this level>}``; ``shallow``
            is git's answer (:func:`ynm.store.repo.is_shallow`), which says why an absent
            anchor is absent; it is not part of the health report.

        Source: reference/storage.md §3.10.
        """
        try:
            present = isinstance(self.repo.get(self.anchor), pygit2.Commit)
        except (ValueError, pygit2.GitError):
            present = False
        return {
            "repo": str(self.common_dir),
            "anchor": self.anchor,
            "anchorPresent": present,
            "shallow": is_shallow(self.repo),
            "shards": len(self.tips()),
        }

    # ----------------------------------------------------------------------------- writing

    def check_writable(self) -> None:
        """Raise :class:`~ynm.errors.AnchorNotCommit` (exit 2) when :attr:`refusal` is set:
        notes hung off an anchor that is no commit of this repository reach no teammate.
        Before the first write on an anchor taken from a memo, :attr:`confirm_anchor` looks it
        up with libgit2; :class:`~ynm.errors.StoreError` with its reason when it is wrong."""
        if self.refusal is not None:
            from ynm.errors import AnchorNotCommit

            raise AnchorNotCommit(self.refusal)
        if self.confirm_anchor is not None:
            why = self.confirm_anchor(self.repo)
            if why is not None:
                raise StoreError(why)
            self.confirm_anchor = None

    def append(self, batches: Mapping[ShardKey, tuple[bytes, int]], *,
               locked: bool = False) -> list[AppendedShard]:
        """Append JSONL lines to shards, one new notes commit per shard.

        Under ``ynm.lock``, shard by shard: read the tip, its note blob (any of the three
        paths), write ``old + ["\\n" if old lacks one] + payload`` as the flat ``<anchor>``
        note (dropping any fanned-out entry for the anchor, keeping every other note), commit
        ``ynm: <n> record[s] <shard id>`` with the old tip as parent, and move the ref only if
        it still points at the old tip. A lost compare-and-swap re-reads and retries, up to 5
        attempts per shard. Shards are written one after another: not atomic across shards
        (a failure leaves earlier shards written). HEAD, the index and the work tree are never
        touched.

        Args:
            batches: shard key -> (payload, record count). The payload is complete JSONL lines,
                each ending in ``\\n``; shards with an empty payload are skipped.
            locked: the caller holds :meth:`lock` already (several appends under one
                acquisition, so a held lock is waited for once, not once per append).

        Returns:
            One AppendedShard per written shard, in ``batches`` order.

        Raises:
            MountLevelMismatch: A key of another level; raised before anything is written.
            ValueError: A payload that does not end in ``\\n``.
            LockTimeout: ``ynm.lock`` stayed taken.
            StoreConflict: ``compare-and-swap failed after 5 attempts on <ref>``.
            StoreError: Any other git failure, with the cause chained.

        Source: reference/storage.md §3.5, §3.6, §7.13, §7.14, §7.15.
        """
        self.check_writable()
        for key, (payload, _count) in batches.items():
            if key.level != self.level:
                raise MountLevelMismatch(self.mount_id, self.level, key.level)
            if payload and not payload.endswith(b"\n"):
                raise ValueError(f"payload for {key.ref} does not end with a newline")
        work = [(key, payload, count) for key, (payload, count) in batches.items() if payload]
        if not work:
            return []
        with contextlib.nullcontext() if locked else self.lock():
            written: list[AppendedShard] = []
            try:
                for key, payload, count in work:
                    written.append(self._append_shard(key, payload, count))
            finally:
                if written:
                    self._count_loose_bytes(written)
            return written

    def write_shard(
        self,
        key: ShardKey,
        data: bytes,
        *,
        message: str,
        expected: str | None,
        forget_history: bool = False,
    ) -> str | None:
        """Replace a shard's note blob wholesale, with one compare-and-swap and no retry.

        Used by purge. Other notes in the tree are kept. The caller should hold ``lock()``.

        Args:
            key: The shard.
            data: The complete new blob.
            message: The commit message (``ynm: purge <id> from <shard id>[ (history dropped)]``).
            expected: The tip the caller read (None when the ref must not exist yet).
            forget_history: Make a parentless commit, so the ref's history restarts here.

        Returns:
            The new commit's hex id, or None when the ref no longer pointed at ``expected``.

        Raises:
            MountLevelMismatch: A key of another level.
            StoreError: A git failure.

        Source: reference/storage.md §3.9 and §7.16.
        """
        self.check_writable()
        if key.level != self.level:
            raise MountLevelMismatch(self.mount_id, self.level, key.level)
        try:
            old_tree = self._commit_tree(expected) if expected is not None else None
            blob_id = write_blob(self.repo, self.common_dir / "objects", data)
            tree_id = self._notes_tree(old_tree, blob_id)
            parents = [] if forget_history or expected is None else [expected]
            commit_id = self._commit(tree_id, parents, message)
            if self.before_update_ref is not None:
                self.before_update_ref(key.ref)
            won = self._compare_and_swap(key.ref, expected, commit_id, message)
        except pygit2.GitError as exc:
            raise StoreError(f"cannot write {key.ref}: {exc}") from exc
        return str(commit_id) if won else None

    def purge(
        self, memory_id: str, refs: Iterable[str] | None = None, *, forget_history: bool = False
    ) -> tuple[int, list[ShardKey]]:
        """Rewrite every shard holding a memory's lines without them.

        Under ``ynm.lock``, for each shard (all of them, or only ``refs``): read the tip, drop
        the memory's lines (others stay byte for byte, see ``without_memory``), and replace the
        blob with a commit ``ynm: purge <id> from <shard id>[ (history dropped)]`` by
        compare-and-swap, retried up to 5 times. With ``forget_history`` the commit has no
        parent and the ref's reflog is deleted, so the purged bytes are reachable from no ref
        (they stay in the object store until git gc prunes them, and on other clones). A
        purge that rewrote a shard deletes the level's snapshot refs (ynm.store.snapshots):
        they hold the purged text.

        Returns:
            (records removed, shard keys rewritten).

        Raises:
            StoreConflict: a shard kept moving under us for 5 attempts.
            LockTimeout, StoreError: as for ``append``.

        Source: reference/storage.md §3.9.
        """
        self.check_writable()
        with self.lock():
            return self.purge_locked(memory_id, refs, forget_history=forget_history)

    def purge_locked(
        self, memory_id: str, refs: Iterable[str] | None = None, *, forget_history: bool = False
    ) -> tuple[int, list[ShardKey]]:
        """:meth:`purge` for a caller that already holds ``lock()`` (sync does)."""
        from ynm.model.jsonl import without_memory

        suffix = " (history dropped)" if forget_history else ""
        removed = 0
        touched: list[ShardKey] = []
        tips = self.tips()
        targets = [tips[r] for r in refs if r in tips] if refs is not None else list(tips.values())
        for tip in targets:
            for _attempt in range(MAX_CAS_RETRIES):
                current = self._ref_target(tip.ref)
                if current is None:
                    break
                blob_id = self.note_blob_id(current)
                data = self.read_blob(blob_id) if blob_id is not None else b""
                kept, dropped = without_memory(data, memory_id)
                if dropped == 0 and kept == data:
                    break
                message = f"ynm: purge {memory_id} from {tip.key.shard_id}{suffix}"
                if self.write_shard(tip.key, kept, message=message, expected=current,
                                    forget_history=forget_history):
                    removed += dropped
                    touched.append(tip.key)
                    if forget_history:
                        self._drop_reflog(tip.ref)
                    break
            else:
                raise StoreConflict(
                    f"compare-and-swap failed after {MAX_CAS_RETRIES} attempts on {tip.ref}"
                )
        if touched:
            # A snapshot (ynm compact) holds the purged text: it goes with the records.
            from ynm.store.snapshots import drop_snapshots

            drop_snapshots(self.repo, self.level)
        return removed, touched

    def _drop_reflog(self, ref: str) -> None:
        # The files backend keeps a ref's old values in logs/<ref>; they would keep purged
        # commits reachable for git (reflog entries count as reachable until they expire).
        path = self.common_dir / "logs" / ref
        try:
            path.unlink()
        except FileNotFoundError:
            pass

    # ----------------------------------------------------------------------------- documents

    def document_ref(self, name: str) -> str:
        """``refs/ynm/<level>/documents/<name>`` for this log's level."""
        return document_ref(self.level, name)

    def read_document(self, name: str) -> tuple[str, str] | None:
        """A named document: ``(text, version)``, the version being the commit id of its ref,
        or None when the document does not exist (no ref, or a commit without ``<name>.json``).

        Raises:
            StoreError: the ref points at something that is not a readable commit.

        Source: reference/storage.md §3.2, §5.1 (``readDocument``).
        """
        version = self._ref_target(self.document_ref(name))
        if version is None:
            return None
        text = self.document_text_at(version, name)
        return None if text is None else (text, version)

    def document_text_at(self, commit_hex: str, name: str) -> str | None:
        """The text of ``<name>.json`` in a document commit, or None when it has none.

        Raises:
            StoreError: the commit or blob cannot be read, or is not UTF-8.
        """
        tree = self._commit_tree(commit_hex)
        try:
            entry = tree[f"{name}.json"]
        except KeyError:
            return None
        try:
            return self.read_blob(str(entry.id)).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise StoreError(f"document {name} at {commit_hex} is not UTF-8") from exc

    def document_commit(self, name: str, text: str, parents: list[str], message: str) -> str:
        """Write a commit whose tree holds one blob ``<name>.json`` with ``text``; no ref moves.
        Returns its hex id."""
        blob_id = write_blob(self.repo, self.common_dir / "objects", text.encode("utf-8"))
        builder = self.repo.TreeBuilder()
        builder.insert(f"{name}.json", blob_id, BLOB_MODE)
        return str(self._commit(builder.write(), parents, message))

    def write_document(self, name: str, text: str, expected: str | None) -> str | None:
        """Replace a named document whole, by compare-and-swap on its version.

        Under ``ynm.lock``: if the ref still points at ``expected`` (None: it must not exist),
        commit ``ynm: document <name>`` (parent: the old version) holding ``<name>.json`` and
        move the ref. Returns the new version (commit id), or None when the document moved
        since ``expected`` was read (the caller reads again and retries).

        Raises:
            LockTimeout: ``ynm.lock`` stayed taken.
            StoreError: a git failure.

        Source: reference/storage.md §3.6 (message), §5.1 (``writeDocument``).
        """
        ref = self.document_ref(name)
        with self.lock():
            if self._ref_target(ref) != expected:
                return None
            try:
                parents = [expected] if expected is not None else []
                commit = self.document_commit(name, text, parents, f"ynm: document {name}")
                won = self._compare_and_swap(ref, expected, pygit2.Oid(hex=commit),
                                             f"ynm: document {name}")
            except pygit2.GitError as exc:
                raise StoreError(f"cannot write {ref}: {exc}") from exc
        return commit if won else None

    # ----------------------------------------------------------------------------- internals

    def _append_shard(self, key: ShardKey, payload: bytes, count: int) -> AppendedShard:
        ref = key.ref
        message = append_message(key, count)
        try:
            for _attempt in range(MAX_CAS_RETRIES):
                previous = self._ref_target(ref)
                if previous is None:
                    self._check_new_ref(ref)
                old_tree = self._commit_tree(previous) if previous is not None else None
                old_blob_id = self._find_note(old_tree) if old_tree is not None else None
                old, base = self._old_content(old_blob_id)
                # A foreign writer may have left no final newline; never fuse two lines.
                separator = b"\n" if old and not old.endswith(b"\n") else b""
                content = old + separator + payload
                blob_id, deflated = write_appended_blob(
                    self.repo, self.common_dir / "objects", content, base)
                tree_id = self._notes_tree(old_tree, blob_id)
                parents = [previous] if previous is not None else []
                commit_id = self._commit(tree_id, parents, message)
                if self.before_update_ref is not None:
                    self.before_update_ref(ref)
                if self._compare_and_swap(ref, previous, commit_id, message):
                    self._remember_blob(str(blob_id), content)
                    self._remember_deflated(
                        str(old_blob_id) if old_blob_id is not None else None,
                        str(blob_id), deflated)
                    return AppendedShard(
                        key=key,
                        ref=ref,
                        revision=str(commit_id),
                        previous=previous,
                        blob_id=str(blob_id),
                        previous_blob_id=str(old_blob_id) if old_blob_id is not None else None,
                        previous_size=len(old),
                        mark=deflated.mark(content) if deflated is not None else None,
                    )
        except pygit2.GitError as exc:
            raise StoreError(f"cannot append to {ref}: {exc}") from exc
        raise StoreConflict(f"compare-and-swap failed after {MAX_CAS_RETRIES} attempts on {ref}")

    # ----------------------------------------------------------------------------- packing

    def _count_loose_bytes(self, written: list[AppendedShard]) -> None:
        """Add the loose bytes of the blobs just written to ``<common dir>/ynm-loose-bytes`` and
        start a background repack once they pass ``pack_after_bytes``. Called under
        ``ynm.lock``; never raises (packing is housekeeping, the append has succeeded)."""
        if self.pack_after_bytes is None:
            return
        objects = self.common_dir / "objects"
        added = 0
        for shard in written:
            try:
                added += (objects / shard.blob_id[:2] / shard.blob_id[2:]).stat().st_size
            except OSError:
                continue
        # One open, read and rewrite in place (a fixed width, so no truncation): this runs on
        # every append.
        try:
            fd = os.open(self.common_dir / LOOSE_COUNTER_FILE, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            return
        try:
            try:
                total = int(os.read(fd, 64).strip() or b"0") + added
            except ValueError:
                total = added
            if total >= self.pack_after_bytes and self._start_packing():
                total = 0
            os.pwrite(fd, b"%020d\n" % total, 0)
        except OSError:
            pass
        finally:
            os.close(fd)

    def _start_packing(self) -> bool:
        """Run ``git repack -d -q --window=1 --delta-islands`` (:data:`REPACK_COMMAND`) on
        the common dir in the background, detached from this process's terminal and output.
        Returns False (and starts nothing) while an earlier one from this object is still
        running or git cannot be started."""
        if self._packer is not None and self._packer.poll() is None:
            return False
        try:
            self._packer = subprocess.Popen(
                ["git", f"--git-dir={self.common_dir}", *REPACK_COMMAND],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                start_new_session=True,
            )
        except OSError:
            return False
        return True

    def pack_loose_objects(self) -> None:
        """Pack the loose objects now and wait (:data:`REPACK_COMMAND`), then zero
        the loose-bytes counter. For maintenance and the benchmark; appends pack on their own.

        Raises:
            StoreError: git failed, with its message.
        """
        with self.lock():
            self.wait_for_packing()
            done = subprocess.run(["git", f"--git-dir={self.common_dir}", *REPACK_COMMAND],
                                  capture_output=True, text=True, check=False)
            if done.returncode != 0:
                raise StoreError(f"git repack failed: {git_failure_line(done)}")
            (self.common_dir / LOOSE_COUNTER_FILE).write_text(f"{0:020d}\n")

    def wait_for_packing(self, timeout_s: float | None = None) -> int | None:
        """Wait for a background repack this object started; its exit code, or None if none
        was started. Raises subprocess.TimeoutExpired past ``timeout_s``."""
        if self._packer is None:
            return None
        return self._packer.wait(timeout_s)

    def _check_new_ref(self, ref: str) -> None:
        """Refuse to create ``ref`` where git could not: when an existing ref is one of its
        parent directories, or lies below it (reference/storage.md §7.22).

        Raises:
            RefCollision: naming the existing ref.
        """
        parts = ref.split("/")
        for i in range(3, len(parts)):
            parent = "/".join(parts[:i])
            if self._ref_target(parent) is not None:
                raise RefCollision(ref, parent)
        below = (ref + "/").encode()
        for raw in self.repo.raw_listall_references():
            if raw.startswith(below):
                raise RefCollision(ref, raw.decode("utf-8", "replace"))

    def _remember_blob(self, blob_hex: str, data: bytes) -> None:
        """Keep a blob's bytes, evicting the least recently used past BLOB_CACHE_BYTES."""
        if len(data) > BLOB_CACHE_BYTES or blob_hex in self._blob_cache:
            return
        self._blob_cache[blob_hex] = data
        self._blob_cache_bytes += len(data)
        while self._blob_cache_bytes > BLOB_CACHE_BYTES:
            _, evicted = self._blob_cache.popitem(last=False)
            self._blob_cache_bytes -= len(evicted)

    def _old_content(self, blob_id: pygit2.Oid | None) -> tuple[bytes, DeflatedContent | None]:
        """The note blob an append extends and, when known, its deflated content: from memory,
        else from its loose file when ynm wrote it (one inflate, no libgit2 read), else the
        bytes alone through libgit2."""
        if blob_id is None:
            return b"", None
        hex_id = str(blob_id)
        base = self._deflated.get(hex_id)
        if hex_id not in self._blob_cache:
            loaded = read_deflated_loose(self.common_dir / "objects", hex_id)
            if loaded is not None:
                data, base = loaded
                self._remember_blob(hex_id, data)
                self._remember_deflated(None, hex_id, base)
                return data, base
        data = self.read_blob(hex_id)
        if base is not None and base.size != len(data):
            base = None
        return data, base

    def _remember_deflated(self, old_hex: str | None, blob_hex: str,
                           deflated: DeflatedContent | None) -> None:
        """Keep a shard blob's deflated content for the next append, dropping the one it
        replaced (an append never extends an older version again); least recently used entries
        go past DEFLATED_CACHE_BYTES."""
        if old_hex is not None and old_hex in self._deflated:
            self._deflated_bytes -= len(self._deflated.pop(old_hex).body)
        if deflated is None or len(deflated.body) > DEFLATED_CACHE_BYTES:
            return
        if blob_hex in self._deflated:
            return
        self._deflated[blob_hex] = deflated
        self._deflated_bytes += len(deflated.body)
        while self._deflated_bytes > DEFLATED_CACHE_BYTES:
            _, evicted = self._deflated.popitem(last=False)
            self._deflated_bytes -= len(evicted.body)

    def _ref_target(self, ref: str) -> str | None:
        """Hex id the ref points at (symbolic refs resolved), or None when it does not exist."""
        found = self.repo.references.get(ref)
        if found is None:
            return None
        try:
            return str(found.resolve().target)
        except KeyError:
            # A symbolic ref whose target does not exist.
            return None

    def _commit_tree(self, commit_hex: str) -> pygit2.Tree:
        try:
            commit = self.repo[commit_hex]
        except (KeyError, ValueError) as exc:
            raise StoreError(f"cannot read notes commit {commit_hex}: {exc}") from exc
        if not isinstance(commit, pygit2.Commit):
            raise StoreError(f"object {commit_hex} is not a commit")
        return commit.tree

    def _find_note(self, tree: pygit2.Tree) -> pygit2.Oid | None:
        """The anchor's note blob id in a notes tree: flat path first, then the fan-outs."""
        for path in self._note_paths:
            try:
                entry = tree[path]
            except KeyError:
                continue
            if entry.type_str == "blob":
                return entry.id
        return None

    def _notes_tree(self, old_tree: pygit2.Tree | None, blob_id: pygit2.Oid) -> pygit2.Oid:
        """The old notes tree with the anchor's note replaced by ``blob_id`` at the flat path.

        Writes ``<anchor>`` (mode 100644) and drops the anchor's fanned-out entries
        (``<a[:2]>/<a[2:]>`` and ``<a[:2]>/<a[2:4]>/<a[4:]>``), removing fan-out directories
        left empty. Every other note stays where it was. Only trees that end up in the result
        are written, so no dangling objects are left behind.

        Source: reference/storage.md §3.4 and §7.15.
        """
        a = self.anchor
        builder = self.repo.TreeBuilder() if old_tree is None else self.repo.TreeBuilder(old_tree)
        if old_tree is not None and a[:2] in old_tree:
            fan_entry = old_tree[a[:2]]
            if fan_entry.type_str == "tree":
                pruned = self._fan_out_without_anchor(self.repo[fan_entry.id])
                if pruned is None:
                    builder.remove(a[:2])
                elif pruned != fan_entry.id:
                    builder.insert(a[:2], pruned, TREE_MODE)
        builder.insert(a, blob_id, BLOB_MODE)
        return builder.write()

    def _fan_out_without_anchor(self, fan: pygit2.Tree) -> pygit2.Oid | None:
        """The ``<a[:2]>`` subtree without the anchor's note at ``<a[2:]>`` or ``<a[2:4]>/<a[4:]>``.

        Returns the same id when nothing was removed, a new tree id, or None when empty.
        """
        a = self.anchor
        builder = self.repo.TreeBuilder(fan)
        changed = False
        if a[2:] in fan:
            builder.remove(a[2:])
            changed = True
        if a[2:4] in fan and fan[a[2:4]].type_str == "tree":
            inner = self.repo[fan[a[2:4]].id]
            if a[4:] in inner:
                inner_builder = self.repo.TreeBuilder(inner)
                inner_builder.remove(a[4:])
                if len(inner_builder) == 0:
                    builder.remove(a[2:4])
                else:
                    builder.insert(a[2:4], inner_builder.write(), TREE_MODE)
                changed = True
        if not changed:
            return fan.id
        if len(builder) == 0:
            return None
        return builder.write()

    def _commit(self, tree_id: pygit2.Oid, parents: list[str], message: str) -> pygit2.Oid:
        """Write a commit object without moving any ref."""
        author = signature(self.repo, "AUTHOR")
        committer = signature(self.repo, "COMMITTER")
        return self.repo.create_commit(
            None, author, committer, _full_message(message), tree_id, parents
        )

    def _compare_and_swap(
        self, ref: str, expected: str | None, new: pygit2.Oid, message: str
    ) -> bool:
        """Point ``ref`` at ``new`` only if it still points at ``expected`` (None = absent).

        The ref is locked the way git locks it (``<ref>.lock``, created exclusively), then
        re-read, then written, so git's own writers cannot interleave. Losing returns False:
        either the ref moved, or another process holds its lock right now.

        Raises:
            pygit2.GitError: Any other failure (e.g. a ref directory/file conflict, §7.22).
        """
        with self.repo.transaction() as txn:
            if not self._lock_ref(txn, ref):
                return False
            if self._ref_target(ref) != expected:
                # Leaving the block commits a lock with no update, which just unlocks it.
                return False
            # The reflog entry takes the repository's identity (pygit2 cannot pass one in).
            who = signature(self.repo)
            self.repo.set_ident(who.name, who.email)
            txn.set_target(ref, new, None, message)
        return True

    def _lock_ref(self, txn: pygit2.ReferenceTransaction, ref: str) -> bool:
        """Take git's lock on ``ref``, waiting up to REF_LOCK_TIMEOUT_S as git does.

        Returns False when another process kept the lock that long.
        """
        deadline = time.monotonic() + REF_LOCK_TIMEOUT_S
        while True:
            try:
                txn.lock_ref(ref)
                return True
            except pygit2.GitError as exc:
                if not _is_lock_busy(exc):
                    raise
                if time.monotonic() >= deadline:
                    return False
            time.sleep(REF_LOCK_RETRY_S)
