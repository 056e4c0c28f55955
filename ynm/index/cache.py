"""Keep one mount's cache in step with its shard refs, paying only for what changed.

Freshness (DESIGN.md principle 4, "The cache"): one ref listing gives every shard's commit id.
A shard whose commit did not move costs nothing. A moved shard whose old commit is an ancestor
of the new one and whose old note blob is a byte prefix of the new blob is read only for its
tail; any other change (a merge, a purge, a rewrite) re-reads that shard and diffs record ids.
When the cache holds the old blob's mark (it was read from a loose file in the layout ynm
writes, ynm.store.objects) and the new blob is loose too, the tail is had without reading the
new blob whole: the new file must begin with the old deflated bytes exactly, and only what
follows them is inflated (:func:`ynm.store.objects.read_appended_loose`); anything else (a
packed blob, another writer's layout) takes the read above.
Only memories that gained or lost records are folded again, from the raw records table.
Removed shards drop their records. Own writes update the cache in the same call
(:meth:`MountCache.apply_append`).

The store object handed in is a :class:`ynm.store.gitnotes.GitNotesLog` (duck-typed: ``tips``,
``note_blob_id``, ``read_blob``, ``blob_size``, ``loose_object``, ``is_ancestor``, ``anchor``).
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import shutil
import tempfile
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, Self

import sqlean as sqlite3

from ynm.index import schema
from ynm.index.schema import fts_values, instant, memory_of
from ynm.model.fold import Memory, fold, memory_from_base
from ynm.model.jsonl import Problem, dumps_record, parse_jsonl, parse_line
from ynm.model.records import Record
from ynm.model.text import summarize
from ynm.store.objects import LooseMark, mark_loose, read_appended_loose

if TYPE_CHECKING:
    from ynm.index.workers import Background

Progress = Callable[[str, int, int], None]
# The records of one shard, its ref the statement's parameter.
_IN_SHARD = "shard = (SELECT shard FROM shard_refs WHERE ref = ?)"
_INSERT_RECORD = ("INSERT OR IGNORE INTO records(id, memory_of, shard, recorded_ms, op, line) "
                  "VALUES (?, ?, ?, ?, ?, ?)")
# The stored columns of ``memories`` besides its rowid, in :func:`_memory_row`'s order.
_MEMORY_COLUMNS = ("memory_id", "type_code", "level_code", "namespace", "subject", "tags", "data_keys",
                   "importance", "confidence", "pinned", "needs_review", "tombstoned",
                   "created_ms", "updated_later", "versions", "summary_head", "content",
                   "current", "extra", "expires_at")
_TAGS_AT = _MEMORY_COLUMNS.index("tags")  # where a memory row holds its tags' JSON text
# where a staged ``folded`` row holds ``current``, after the base (2) and the FTS values (4)
_FOLDED_CURRENT_AT = 6 + _MEMORY_COLUMNS.index("current")
_FOLDED_MEMORY_ID_AT = 6 + _MEMORY_COLUMNS.index("memory_id")
# A full rebuild reads shards in worker processes from this many bytes of note blobs
# (:func:`_workers_for`): at 1M memories (530 MB) it is CPU-bound Python for about half its
# time; below ~30 MB, starting the workers costs about as much as they save.
WORKERS_FROM_BYTES = 32 * 1024 * 1024
MAX_WORKERS = 4


class ShardLog(Protocol):
    """What the cache needs from a store (see :class:`ynm.store.gitnotes.GitNotesLog`)."""

    anchor: str

    def tips(self) -> dict[str, Any]: ...
    def note_blob_id(self, commit: str) -> str | None: ...
    def read_blob(self, blob_id: str) -> bytes: ...
    def blob_size(self, blob_id: str) -> int: ...
    def loose_object(self, object_hex: str) -> bytes | None: ...
    def is_ancestor(self, old: str, new: str) -> bool: ...


@dataclass(slots=True)
class RefreshReport:
    """What a refresh did: shards read whole or by tail (``shards_inflated`` of the tail reads
    inflated only the appended part of a loose file), records added and removed, memories
    folded again, and whether the whole cache was rebuilt."""

    rebuilt: bool = False
    shards_full: int = 0
    shards_tail: int = 0
    shards_inflated: int = 0
    shards_removed: int = 0
    records_added: int = 0
    records_removed: int = 0
    memories_folded: int = 0
    snapshot: str | None = None  # the snapshot commit a cold cache started from

    @property
    def changed(self) -> bool:
        """True when anything was read or removed."""
        return bool(self.rebuilt or self.shards_full or self.shards_tail or self.shards_removed)


@dataclass(slots=True)
class _Content:
    """What the shards table keeps of a note blob's content: its length in bytes, newline
    count, whether it ends in a newline (or is empty), CRC-32 and, to be written with it, its
    loose-file mark (None: none; rows read back leave it None, see ``_stored_mark``)."""

    bytes: int
    lines: int
    ends_nl: bool
    crc: int
    mark: LooseMark | None = None

    @classmethod
    def of(cls, data: bytes, mark: LooseMark | None) -> Self:
        """The state of ``data``, counted in full."""
        return cls(len(data), data.count(b"\n"), not data or data.endswith(b"\n"),
                   zlib.crc32(data), mark)


@dataclass(slots=True)
class _ShardRow:
    ref: str
    commit_id: str
    blob_id: str | None
    content: _Content


@dataclass(slots=True)
class _Batch:
    """Pending changes inside one refresh transaction."""

    added: dict[str, tuple[Record, str, str]] = field(default_factory=dict)  # id -> rec, line, ref
    removed: set[str] = field(default_factory=set)
    touched: set[str] = field(default_factory=set)  # memory ids
    refs: set[str] = field(default_factory=set)  # shards that lost records


def indexed_content(memory: Memory) -> str:
    """Content as indexed and returned by recall: the current content, plus a newline and the
    string values of ``data`` joined by spaces when it holds any (reference/algorithms.md
    §2.3, where data of no string value still adds the newline: a hit's content then ended
    with an empty line, which searching does not need)."""
    content = memory.current.content or ""
    data = memory.current.data
    words = [v for v in data.values() if isinstance(v, str)] if data else []
    if words:
        content += "\n" + " ".join(words)
    return content


def memory_summary(memory: Memory) -> str:
    """The summary shown for a memory: the current record's, or, when that record has none
    (an imported or hand-written record), one derived from its content the way remember
    derives it (ynm.model.text.summarize, reference/algorithms.md §1.3). Stored records are
    never rewritten."""
    summary = memory.current.summary
    return summary if summary else summarize(memory.current.content or "")


class MountCache:
    """The cache file of one mount.

    Args:
        path: the SQLite file (created if missing; ``":memory:"`` for a private cache).
        mount_id: the mount this cache belongs to (recorded in ``meta``).

    Attributes:
        snapshot_source: how a cold cache finds a snapshot to start from (set by the mount;
            None: never): called with the current shard tips (ref -> commit hex), it returns
            a snapshot that fits them (``meta``: :class:`ynm.store.snapshots.SnapshotMeta`,
            ``state``: bytes, ``commit``, ``ref``) or None, and raises
            :class:`ynm.errors.StoreError` when one exists but cannot be read.
        workers: worker processes a full read of the notes uses (None: chosen by the size of
            the note blobs, :func:`_workers_for`; 0: none).
    """

    def __init__(self, path: Path | str, mount_id: str) -> None:
        self.path = path
        self.mount_id = mount_id
        self.conn = schema.connect(path)
        self.snapshot_source: Callable[[dict[str, str]], Any] | None = None
        self.workers: int | None = None
        if str(path) != ":memory:":  # a rebuild killed outright left its staging here
            _remove_stale_staging(Path(path).parent)

    def close(self) -> None:
        """Close the connection."""
        self.conn.close()

    # -- freshness -------------------------------------------------------------------------

    def _stored_shards(self) -> dict[str, _ShardRow]:
        """Every shard row, without the loose-file marks (:meth:`_stored_mark` reads one)."""
        rows = self.conn.execute(
            "SELECT ref, commit_id, blob_id, bytes, lines, ends_nl, crc FROM shards"
        ).fetchall()
        return {r[0]: _ShardRow(r[0], r[1], r[2], _Content(r[3], r[4], bool(r[5]), r[6]))
                for r in rows}

    def _stored_mark(self, ref: str) -> LooseMark | None:
        """The loose-file mark stored with a shard, or None."""
        row = self.conn.execute("SELECT bytes, adler, deflated, deflated_crc, window FROM shards "
                                "WHERE ref = ?", (ref,)).fetchone()
        return LooseMark(*row) if row is not None and None not in row else None

    def is_fresh(self, log: ShardLog, tips: dict[str, Any] | None = None) -> bool:
        """True when every shard ref points where the cache was built from, and the anchor
        matches."""
        tips = log.tips() if tips is None else tips
        if schema.get_meta(self.conn, "anchor") != log.anchor:
            return False
        stored = self.conn.execute("SELECT ref, commit_id FROM shards").fetchall()
        return dict(stored) == {ref: tip.commit for ref, tip in tips.items()}

    def stale_reason(self, log: ShardLog) -> str | None:
        """Why the cache is stale (``<n> shards in log, <m> indexed`` or ``shard <id> changed``,
        reference/cli.md §7.7), or None when fresh."""
        tips = log.tips()
        if schema.get_meta(self.conn, "anchor") != log.anchor:
            return "anchor changed" if schema.get_meta(self.conn, "anchor") else "never built"
        stored = dict(self.conn.execute("SELECT ref, commit_id FROM shards").fetchall())
        if len(stored) != len(tips):
            return f"{len(tips)} shards in log, {len(stored)} indexed"
        for ref, tip in tips.items():
            if stored.get(ref) != tip.commit:
                return f"shard {tip.key.shard_id} changed"
        return None

    def refresh(self, log: ShardLog, progress: Progress | None = None) -> RefreshReport:
        """Bring the cache up to date with the log (see the module docstring).

        Runs in one transaction holding the cache's write lock from its start, so concurrent
        processes refreshing the same file serialise and the second finds nothing left to do.
        """
        tips = log.tips()
        if self.is_fresh(log, tips):
            return RefreshReport()
        conn = self.conn
        if self.snapshot_source is not None and schema.get_meta(conn, "anchor") is None:
            report = self._start_from_snapshot(log, tips, progress)
            if report is not None:
                return report
        while schema.get_meta(conn, "anchor") == log.anchor:
            conn.execute("BEGIN IMMEDIATE")
            try:
                if schema.get_meta(conn, "anchor") != log.anchor:  # another process changed it
                    conn.execute("ROLLBACK")
                    continue
                report = self._refresh_in_tx(log, tips)
                conn.execute("COMMIT")
            except BaseException:
                schema.rollback(conn)
                raise
            return report
        return self._rebuild(log, progress, tips, refresh_if_built=True)

    def _start_from_snapshot(self, log: ShardLog, tips: dict[str, Any],
                             progress: Progress | None) -> RefreshReport | None:
        """A cache never built takes the mount's snapshot, then reads only what changed since
        (:mod:`ynm.index.snapshot`). Returns None when there is no snapshot that fits, or it
        cannot be used (said on stderr in plain words, with the fix): the caller rebuilds
        from the notes."""
        import sys

        from ynm.errors import StoreError
        from ynm.index import snapshot as snap
        from ynm.model.shards import snapshot_fix

        assert self.snapshot_source is not None
        try:
            found = self.snapshot_source({ref: tip.commit for ref, tip in tips.items()})
        except StoreError as err:
            ref = getattr(err, "ref", None)
            fix = f"; {snapshot_fix(ref)}" if ref else ""
            print(f"ynm: {err}; the {self.mount_id} cache is built from the notes{fix}",
                  file=sys.stderr)
            return None
        if found is None:
            return None
        meta = {**found.meta.extra, "shards": found.meta.shards}
        if snap.check_meta(meta, log.anchor) is not None:
            return None
        conn = self.conn
        try:
            with snap.Attached(conn, found.state):
                conn.execute("BEGIN IMMEDIATE")
                try:
                    if schema.get_meta(conn, "anchor") is not None:  # built meanwhile
                        conn.execute("ROLLBACK")
                        return None
                    if progress:
                        progress("read", 0, len(tips))
                    with _bulk_load(conn):
                        loaded = snap.load_into(conn, meta, log.read_blob)
                    self._bump()
                    schema.set_meta(conn, "anchor", log.anchor)
                    schema.set_meta(conn, "mount", self.mount_id)
                    schema.set_meta(conn, "snapshot", found.commit)
                    report = self._refresh_in_tx(log, tips)
                    conn.execute("COMMIT")
                except BaseException:
                    schema.rollback(conn)
                    raise
        except snap.SnapshotUnusable as err:
            print(f"ynm: snapshot {found.ref}: {err}; the {self.mount_id} cache is built from "
                  f"the notes; {snapshot_fix(found.ref)}", file=sys.stderr)
            return None
        if progress:
            progress("read", len(tips), len(tips))
        report.rebuilt = True
        report.snapshot = found.commit
        report.memories_folded += loaded
        return report

    def rebuild(self, log: ShardLog, progress: Progress | None = None) -> RefreshReport:
        """Drop everything and rebuild from a full read of the log (``ynm reindex``).

        A cache file damaged inside (SQLite's ``SQLITE_CORRUPT`` or ``SQLITE_NOTADB`` while
        it is emptied or filled: pages overwritten behind a valid header) is deleted and
        built afresh: the cache is derived data, and ``ynm reindex`` is the fix every other
        command names for it. Other database errors (a busy lock, a full disk) are raised."""
        try:
            return self._rebuild(log, progress)
        except sqlite3.DatabaseError as err:
            if not schema.is_damaged(err):
                raise
        self.replace()
        return self._rebuild(log, progress)

    def replace(self) -> None:
        """Close the connection, delete the file (with its ``-wal`` and ``-shm``) and open an
        empty cache in its place, for a file that is damaged (:class:`ynm.index.schema.
        CacheDamaged`); the next :meth:`refresh` builds it from the log. Another process that
        still has the old file open keeps reading and writing its own copy, which nothing
        opens again; SQLite's locks on the new file order the rest."""
        self.conn.close()
        schema.remove(self.path)
        self.conn = schema.connect(self.path)

    def _rebuild(self, log: ShardLog, progress: Progress | None,
                 tips: dict[str, Any] | None = None, *,
                 refresh_if_built: bool = False) -> RefreshReport:
        """Rebuild in one transaction; with ``refresh_if_built``, only refresh when the cache
        turns out to be built for the log's anchor once the write lock is held (another
        process rebuilt it meanwhile)."""
        tips = log.tips() if tips is None else tips
        conn = self.conn
        where = None if str(self.path) == ":memory:" else Path(self.path).parent
        with _Folded(conn, where) as folded:
            # BEGIN IMMEDIATE would hide what is staged from here on (see _Folded): the write
            # lock is taken by a first statement that writes, waiting as IMMEDIATE waits.
            conn.execute("BEGIN")
            try:
                conn.execute("DELETE FROM main.meta WHERE 0")
                if refresh_if_built and schema.get_meta(conn, "anchor") == log.anchor:
                    report = self._refresh_in_tx(log, tips)
                else:
                    report = self._rebuild_in_tx(log, tips, progress, folded)
                conn.execute("COMMIT")
            except BaseException:
                schema.rollback(conn)
                raise
        return report

    def _rebuild_in_tx(
        self, log: ShardLog, tips: dict[str, Any], progress: Progress | None, folded: _Folded
    ) -> RefreshReport:
        conn = self.conn
        for name in (*schema.RECORD_INDEXES, *schema.MEMORY_INDEXES):
            conn.execute(f"DROP INDEX {name}")  # created again below, once the rows are in
        for table in ("shards", "shard_refs", "records", "problems", "memories"):
            conn.execute(f"DELETE FROM {table}")
        conn.execute("INSERT INTO fts(fts) VALUES ('delete-all')")
        if self.has_vectors:  # emptied by re-creation: a DELETE would run the sum's trigger per row
            schema.create_vector_tables(conn)
        self._bump()
        schema.set_meta(conn, "anchor", log.anchor)
        schema.set_meta(conn, "mount", self.mount_id)
        conn.execute("DELETE FROM meta WHERE key = 'snapshot'")
        report = RefreshReport(rebuilt=True)
        total = len(tips)
        if progress:
            progress("read", 0, total)
        with _bulk_load(conn):
            shards = [(ref, tip, log.note_blob_id(tip.commit)) for ref, tip in sorted(tips.items())]
            read: deque[tuple[str, Any, str | None, bytes]] = deque()
            linked: set[str] = set()  # records.memory_of values (refold_spread)
            split: set[str] = set()  # memories over two parts of one shard (_shard_rows)

            def jobs() -> Iterator[tuple[bytes, int, int]]:
                for ref, tip, blob_id in shards:
                    data = log.read_blob(blob_id) if blob_id else b""
                    read.append((ref, tip, blob_id, data))
                    yield data, self._shard_number(ref), PART_BYTES

            from ynm.index.workers import ordered_map  # only a rebuild starts workers

            workers = self.workers if self.workers is not None else _workers_for(
                sum(log.blob_size(blob_id) for _, _, blob_id in shards if blob_id))
            results = ordered_map(_shard_rows, jobs(), workers=workers)
            # closed on any exit: the workers stop
            with contextlib.closing(results):
                for i, rows in enumerate(results):
                    ref, tip, blob_id, data = read.popleft()
                    self._store_problems(ref, rows.problems, replace=False)
                    last = conn.execute("SELECT coalesce(max(rowid), 0) FROM records").fetchone()[0]
                    conn.executemany(_INSERT_RECORD, rows.records)
                    linked.update(row[1] for row in rows.records if row[1] is not None)
                    split.update(rows.split)
                    if conn.execute("SELECT coalesce(max(rowid), 0) FROM records").fetchone()[0] \
                            - last == len(rows.records):
                        folded.add_rows(rows.folded, last + 1)
                    else:
                        # A record id an earlier shard holds was not inserted, and stays that
                        # shard's (first wins, as in ynm.model.fold.fold): fold this shard
                        # again without it, with the rowids its records were given.
                        parsed = parse_jsonl(data)
                        lines = [line.strip() for line in parsed.lines]
                        rowids = dict(conn.execute("SELECT id, rowid FROM records WHERE rowid > ?",
                                                   (last,)))
                        folded.add(_by_memory((r, rowids[r.id], line) for r, line
                                              in zip(parsed.records, lines) if r.id in rowids))
                        del parsed, lines, rowids
                    rows.content.mark = _loose_mark(log, blob_id, data)
                    self._put_shard(ref, tip.commit, blob_id, rows.content, len(rows.records))
                    report.shards_full += 1
                    report.records_added += len(rows.records)
                    # One shard at a time: its blob and rows are let go here.
                    del data, rows
                    if progress:
                        progress("read", i + 1, total)
            n_records = conn.execute("SELECT count(*) FROM records").fetchone()[0]
            if progress:
                progress("fold", 0, n_records)
            for stmt in schema.RECORD_INDEXES.values():
                conn.execute(stmt)
            folded.refold_spread(linked, split)
            folded.finish()
            with contextlib.ExitStack() as stack:
                # The full-text index is built in a worker while the memories are copied.
                worker = stack.enter_context(folded.index_in_worker()) if workers else None
                report.memories_folded = folded.insert()
                for stmt in schema.MEMORY_INDEXES.values():
                    conn.execute(stmt)
                folded.index(worker)
            if progress:
                progress("fold", n_records, n_records)
        return report

    def _refresh_in_tx(self, log: ShardLog, tips: dict[str, Any]) -> RefreshReport:
        conn = self.conn
        report = RefreshReport()
        stored = self._stored_shards()
        batch = _Batch()
        grown: dict[str, int] = {}  # shards read by tail -> records in the tail
        for ref in stored.keys() - tips.keys():
            self._drop_shard(ref, batch)
            report.shards_removed += 1
        for ref, tip in tips.items():
            old = stored.get(ref)
            if old is not None and old.commit_id == tip.commit:
                continue
            blob_id = log.note_blob_id(tip.commit)
            if old is not None and blob_id == old.blob_id:
                conn.execute("UPDATE shards SET commit_id = ? WHERE ref = ?", (tip.commit, ref))
                continue
            inflated = self._inflated_tail(log, old, tip.commit, blob_id)
            if inflated is not None:
                tail, content = inflated
                report.shards_inflated += 1
            else:
                data = log.read_blob(blob_id) if blob_id else b""
                content = _Content.of(data, _loose_mark(log, blob_id, data))
                is_tail = old is not None and self._is_tail(log, old, tip.commit, data)
                tail = data[old.content.bytes:] if is_tail else None
            if old is not None and tail is not None:
                parsed = parse_jsonl(tail, first_line=old.content.lines + 1)
                self._store_problems(ref, parsed.problems, replace=False)
                for r, line in zip(parsed.records, parsed.lines):
                    self._add_record(r, ref, batch, line)
                grown[ref] = len(parsed.records)
                report.shards_tail += 1
            else:
                self._reread_shard(ref, data, batch)
                report.shards_full += 1
            self._put_shard(ref, tip.commit, blob_id, content, None)
        report.records_added = len(batch.added)
        report.records_removed = len(batch.removed)
        report.memories_folded = self._apply_batch(batch)
        # A shard read by its tail counts on from its stored count, as an own append does
        # (counting a large shard's records again grows with the shard); the others count.
        conn.executemany("UPDATE shards SET records = records + ? WHERE ref = ?",
                         [(n, ref) for ref, n in grown.items()])
        self._recount({ref for _, _, ref in batch.added.values() if ref not in grown}
                      | batch.refs)
        return report

    @staticmethod
    def _is_tail(log: ShardLog, old: _ShardRow, new_commit: str, data: bytes) -> bool:
        """The new blob only appends to the old one: the old commit is an ancestor of the new,
        and the new blob starts with the old bytes (same length, same CRC-32)."""
        was = old.content
        if old.blob_id is None or not was.ends_nl or len(data) < was.bytes:
            return False
        if zlib.crc32(memoryview(data)[: was.bytes]) != was.crc:
            return False
        return log.is_ancestor(old.commit_id, new_commit)

    def _inflated_tail(self, log: ShardLog, old: _ShardRow | None, new_commit: str,
                       blob_id: str | None) -> tuple[bytes, _Content] | None:
        """What the new blob appends to the old one, read from its loose file by inflating
        only the appended part (:func:`ynm.store.objects.read_appended_loose`), and the new
        blob's content state; None when the cache holds no mark of the old blob, the new one
        is not loose, the file does not extend the old one's deflated bytes, or the old commit
        is not an ancestor of the new: the caller reads the blob whole."""
        if old is None or blob_id is None or old.blob_id is None:
            return None
        was = old.content
        mark = self._stored_mark(old.ref) if was.ends_nl else None
        if mark is None:
            return None
        raw = log.loose_object(blob_id)
        got = read_appended_loose(raw, mark) if raw is not None else None
        if got is None or not log.is_ancestor(old.commit_id, new_commit):
            return None
        tail, mark = got
        return tail, _Content(mark.size, was.lines + tail.count(b"\n"), tail.endswith(b"\n"),
                              zlib.crc32(tail, was.crc), mark)

    def _reread_shard(self, ref: str, data: bytes, batch: _Batch) -> None:
        parsed = parse_jsonl(data)
        self._store_problems(ref, parsed.problems, replace=True)
        have = dict(
            self.conn.execute(f"SELECT id, memory_id FROM records WHERE {_IN_SHARD}",
                              (ref,)).fetchall()
        )
        new_ids = set()
        for r, line in zip(parsed.records, parsed.lines):
            new_ids.add(r.id)
            if r.id not in have:
                self._add_record(r, ref, batch, line)
        for record_id, memory_id in have.items():
            if record_id not in new_ids:
                batch.removed.add(record_id)
                batch.touched.add(memory_id)
                batch.refs.add(ref)

    def _drop_shard(self, ref: str, batch: _Batch) -> None:
        for record_id, memory_id in self.conn.execute(
            f"SELECT id, memory_id FROM records WHERE {_IN_SHARD}", (ref,)
        ).fetchall():
            batch.removed.add(record_id)
            batch.touched.add(memory_id)
        self.conn.execute("DELETE FROM shards WHERE ref = ?", (ref,))
        self.conn.execute("DELETE FROM problems WHERE ref = ?", (ref,))

    @staticmethod
    def _add_record(r: Record, ref: str, batch: _Batch, line: str | None = None) -> None:
        if r.id not in batch.added:
            batch.added[r.id] = (r, line.strip() if line is not None else dumps_record(r), ref)
            batch.touched.add(r.memory_id)

    def _put_shard(
        self, ref: str, commit: str, blob_id: str | None, content: _Content, records: int | None
    ) -> None:
        mark = content.mark
        self.conn.execute(
            "INSERT INTO shards(ref, commit_id, blob_id, bytes, lines, ends_nl, crc, records, "
            "deflated, deflated_crc, adler, window) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(ref) DO UPDATE SET "
            "commit_id = excluded.commit_id, blob_id = excluded.blob_id, bytes = excluded.bytes, "
            "lines = excluded.lines, ends_nl = excluded.ends_nl, crc = excluded.crc, "
            "deflated = excluded.deflated, deflated_crc = excluded.deflated_crc, "
            "adler = excluded.adler, window = excluded.window",
            (ref, commit, blob_id, content.bytes, content.lines, int(content.ends_nl),
             content.crc, records or 0, *((mark.body, mark.body_crc, mark.adler, mark.window)
                                          if mark else (None,) * 4)),
        )

    def _recount(self, refs: Iterable[str]) -> None:
        self.conn.executemany(
            f"UPDATE shards SET records = (SELECT count(*) FROM records WHERE {_IN_SHARD}) "
            "WHERE ref = ?",
            [(ref, ref) for ref in refs],
        )

    def _shard_number(self, ref: str) -> int:
        """The number ``records.shard`` holds for the shard ``ref`` (``shard_refs``), given
        the first time the ref is met (inside the caller's transaction)."""
        self.conn.execute("INSERT OR IGNORE INTO shard_refs(ref) VALUES (?)", (ref,))
        return self.conn.execute(
            "SELECT shard FROM shard_refs WHERE ref = ?", (ref,)).fetchone()[0]

    def _store_problems(self, ref: str, problems: Sequence[Problem], *, replace: bool) -> None:
        if replace:
            self.conn.execute("DELETE FROM problems WHERE ref = ?", (ref,))
        if problems:
            self.conn.executemany(
                "INSERT INTO problems(ref, line, message) VALUES (?, ?, ?)",
                [(ref, p.line, p.message) for p in problems],
            )

    # -- own writes ------------------------------------------------------------------------

    def apply_append(
        self,
        log: ShardLog,
        appended: Sequence[Any],
        records: Sequence[Record],
        lines: dict[str, str] | None = None,
    ) -> None:
        """Update the cache for records this process just appended, without re-reading blobs.

        ``appended`` are the store's results (``ref``, ``revision``, ``previous``, ``blob_id``,
        ``previous_blob_id``, ``previous_size``, ``mark``) and ``records`` what was written
        (``lines``: their serialised lines by record id, when the caller has them). When the
        cache was built from exactly the commit each append started from, the records are added
        and their memories folded again in the same call, with the mark of the loose file each
        append wrote; otherwise (another writer got in between) the cache falls back to a
        refresh, which reads what it missed.
        """
        conn = self.conn
        conn.execute("BEGIN IMMEDIATE")
        try:
            stored = self._stored_shards()
            in_step = schema.get_meta(conn, "anchor") == log.anchor and all(
                _in_step(stored.get(a.ref), a) for a in appended
            )
            if in_step:
                batch = _Batch()
                by_ref: dict[str, list[Record]] = {}
                for r in records:
                    by_ref.setdefault(_ref_of(r), []).append(r)
                text = lines if lines is not None else {r.id: dumps_record(r) for r in records}
                for a in appended:
                    recs = by_ref.get(a.ref, [])
                    payload = "".join(text[r.id] + "\n" for r in recs).encode()
                    was = stored[a.ref].content if a.ref in stored else _Content(0, 0, True, 0)
                    content = _Content(was.bytes + len(payload), was.lines + len(recs), True,
                                       zlib.crc32(payload, was.crc), a.mark)
                    self._put_shard(a.ref, a.revision, a.blob_id, content, None)
                    for r in recs:
                        self._add_record(r, a.ref, batch, text[r.id])
                    conn.execute(
                        "UPDATE shards SET records = records + ? WHERE ref = ?", (len(recs), a.ref)
                    )
                self._apply_batch(batch)
            conn.execute("COMMIT")
        except BaseException:
            schema.rollback(conn)
            raise
        if not in_step:
            self.refresh(log)

    # -- folding into rows -----------------------------------------------------------------

    def _apply_batch(self, batch: _Batch) -> int:
        conn = self.conn
        if batch.removed:
            conn.executemany("DELETE FROM records WHERE id = ?", [(i,) for i in batch.removed])
        if batch.added:
            shards = {ref: self._shard_number(ref) for _, _, ref in batch.added.values()}
            conn.executemany(
                _INSERT_RECORD,
                [(r.id, memory_of(r.id, r.memory_id), shards[ref], instant(r.recorded_at), r.op,
                  schema.pack(line)) for r, line, ref in batch.added.values()],
            )
        if not batch.touched:
            return 0
        self._bump()
        fresh = {rid: rec for rid, (rec, _, _) in batch.added.items()}
        groups: dict[str, list[Record]] = {memory_id: [] for memory_id in batch.touched}
        stored: dict[str, tuple[int, bytes]] = {}  # record id -> (rowid, packed line)
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS touched (memory_id TEXT PRIMARY KEY)")
        conn.execute("DELETE FROM touched")
        conn.executemany("INSERT INTO touched VALUES (?)", [(m,) for m in groups])
        for memory_id, rid, rowid, line in conn.execute(
            "SELECT memory_id, id, rowid, line FROM records "
            "WHERE memory_id IN (SELECT memory_id FROM touched)"
        ):
            stored[rid] = (rowid, line)
            rec = fresh.get(rid)
            groups[memory_id].append(rec if rec is not None else parse_line(schema.unpack(line)))
        folded = []
        gone = []
        for memory_id, recs in groups.items():
            m = fold(recs).memories.get(memory_id)
            if m is None:
                gone.append(memory_id)
            else:
                folded.append(m)
        for memory_id in gone:
            rowid, _ = self._fts_delete(memory_id)
            if rowid is not None:
                conn.execute("DELETE FROM memories WHERE rowid = ?", (rowid,))
        self._upsert_memories(folded, stored)
        return len(folded)

    def _upsert_memories(self, memories: Iterable[Memory],
                         stored: dict[str, tuple[int, bytes]]) -> None:
        """Insert or update the rows of folded ``memories`` and their FTS rows; ``stored``
        holds each current record's ``(records rowid, packed line)`` by record id."""
        conn = self.conn
        update = (f"UPDATE memories SET {', '.join(f'{c} = ?' for c in _MEMORY_COLUMNS)} "
                  "WHERE rowid = ?")
        insert = (f"INSERT INTO memories({', '.join(_MEMORY_COLUMNS)}) "
                  f"VALUES ({', '.join('?' * len(_MEMORY_COLUMNS))})")
        for m in memories:
            current, line = stored[m.current.id]
            summary, content = memory_summary(m), indexed_content(m)
            row = _memory_row(m, current, schema.unpack(line), summary, content)
            rowid, kept = self._fts_delete(m.memory_id, keep=(summary, content, m.subject, row[5]))
            if rowid is not None:
                conn.execute(update, (*row, rowid))
            else:
                rowid = conn.execute(insert, row).lastrowid
            if kept:
                continue
            conn.execute(
                "INSERT INTO fts(rowid, summary, content, subject, tags) VALUES (?, ?, ?, ?, ?)",
                (rowid, *fts_values(summary, content, m.subject, m.tags)),
            )

    def _fts_delete(self, memory_id: str,
                    keep: tuple[str, str, str | None, str] | None = None) -> tuple[int | None, bool]:
        """Remove a memory's FTS row with the values it was indexed with, unless they equal
        ``keep`` (``(summary, content, subject, tags JSON)`` about to be indexed: a record that
        changed none of them, such as a dream mark or a flag, leaves its FTS row as it is,
        which FTS5's secure-delete made most of the cost of such a write). Returns its rowid
        (None: no row) and whether the FTS row was kept."""
        got = self.conn.execute(
            "SELECT rowid, summary, content, subject, tags FROM memories WHERE memory_id = ?",
            (memory_id,),
        ).fetchone()
        if got is None:
            return None, False
        rowid, summary, content, subject, tags = got
        kept = keep is not None and (summary, content, subject, tags) == keep
        if not kept:
            self.conn.execute(
                "INSERT INTO fts(fts, rowid, summary, content, subject, tags) "
                "VALUES ('delete', ?, ?, ?, ?, ?)",
                (rowid, *fts_values(summary, content, subject, json.loads(tags))),
            )
        if self.has_vectors:
            self.conn.execute("DELETE FROM vectors WHERE rowid = ?", (rowid,))
            self.conn.execute("DELETE FROM vector_codes WHERE rowid = ?", (rowid,))
        return rowid, kept

    def _bump(self) -> None:
        """Count a change to the memories table (vector sync compares against it)."""
        version = int(schema.get_meta(self.conn, "memories_version") or "0") + 1
        schema.set_meta(self.conn, "memories_version", version)

    # -- vectors ---------------------------------------------------------------------------

    @property
    def has_vectors(self) -> bool:
        """True when this cache holds vectors (tables ``vectors`` and ``vector_codes``).

        Another process may have added them after this connection opened without sqlite-vec
        (a full-text-only server, then a recall with vectors on): their triggers call
        sqlite-vec, so it is loaded here before any write touches them."""
        if not self._has_table("vector_codes"):
            return False
        if self.conn.vec_problem == "not tried":
            schema.load_vec(self.conn)
        return True

    def _has_table(self, name: str) -> bool:
        return self.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE name = ?", (name,)).fetchone() is not None

    def vector_problem(self) -> str | None:
        """Why this cache cannot hold vectors here, or None."""
        if self.conn.vec_problem == "not tried":
            schema.load_vec(self.conn)
        return self.conn.vec_problem

    def vectors_ready(self, embedder: Any, progress: Progress | None = None) -> int:
        """Give every memory a vector from ``embedder``; returns how many texts were embedded.

        Vectors are kept under the embedder's :attr:`~ynm.index.embedders.Embedder.key` (model
        name, endpoint and dimension). The vector table is (re)created when the key changes (and
        says so on stderr): a server that answers with another dimension under the same model
        name re-embeds, never mixing lengths. Texts already embedded under this key are taken
        from the embeddings store (a stored vector of another length is ignored), so a rebuild
        or a re-fold never embeds the same text twice. Embedding runs in batches with progress.

        Raises:
            EmbedderUnavailable: the embedder failed (e.g. its server is down);
                DimensionChanged when it returned vectors of another length than its ``dim``.
        """
        import sys

        from ynm.index.embedders import content_hash

        if self.vector_problem() is not None:
            return 0
        conn = self.conn
        key, size = embedder.key, embedder.dim * 4  # float32 bytes
        model = schema.get_meta(conn, "vec_model")
        if model != key or not self.has_vectors or not self._has_table("vector_sum"):
            if model is not None and model != key:
                print(f"ynm: embedder changed from {model} to {key}; re-embedding "
                      f"{self.mount_id}", file=sys.stderr)
            conn.execute("BEGIN IMMEDIATE")
            try:
                # Vectors of a cache written before vector_sum existed are refilled from the
                # embeddings store below, without embedding anything again.
                schema.create_vector_tables(conn)
                schema.set_meta(conn, "vec_model", key)
                schema.set_meta(conn, "vec_synced", "")
                if model == embedder.name and not embedder.endpoint:
                    # Kept under the bare model name before keys held the dimension: a local
                    # model's vectors of the right length are its own.
                    conn.execute("UPDATE OR IGNORE embeddings SET model = ? "
                                 "WHERE model = ? AND length(vector) = ?", (key, model, size))
                conn.execute("COMMIT")
            except BaseException:
                schema.rollback(conn)
                raise
        version = schema.get_meta(conn, "memories_version") or "0"
        if schema.get_meta(conn, "vec_synced") == version:
            return 0
        missing = conn.execute(
            "SELECT rowid, summary, content FROM memories "
            "WHERE rowid NOT IN (SELECT rowid FROM vectors)"
        ).fetchall()
        if not missing:
            schema.set_meta(conn, "vec_synced", version)
            return 0
        texts = {row[0]: embedding_text(row[1], row[2]) for row in missing}
        hashes = {rowid: content_hash(embedder.name, text) for rowid, text in texts.items()}
        known, todo = self._stored_or_embedded(
            embedder, {h: texts[rowid] for rowid, h in hashes.items()}, progress)
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany("INSERT OR IGNORE INTO embeddings(model, hash, vector) VALUES (?, ?, ?)",
                             [(key, h, known[h]) for h in todo])
            present = {r[0] for r in conn.execute("SELECT rowid FROM memories")}
            rows = [(rowid, known[h]) for rowid, h in hashes.items() if rowid in present]
            conn.executemany("INSERT INTO vectors(rowid, embedding) VALUES (?, ?) ON CONFLICT "
                             "(rowid) DO UPDATE SET embedding = excluded.embedding", rows)
            conn.executemany("INSERT OR REPLACE INTO vector_codes(rowid, code) "
                             "VALUES (?, vec_quantize_binary(?))", rows)
            if (schema.get_meta(conn, "memories_version") or "0") == version:
                schema.set_meta(conn, "vec_synced", version)
            conn.execute("COMMIT")
        except BaseException:
            schema.rollback(conn)
            raise
        return len(todo)

    def embeddings_of(self, embedder: Any, texts: Sequence[str]) -> list[bytes]:
        """Vectors (float32 bytes) of ``texts`` that are no memory, such as the background
        sentences recall compares a question with, in order: read from the embeddings store,
        and the ones missing embedded once and added to it.

        Raises:
            EmbedderUnavailable: the embedder failed (e.g. its server is down).
        """
        from ynm.index.embedders import content_hash

        hashes = [content_hash(embedder.name, text) for text in texts]
        known, todo = self._stored_or_embedded(embedder, dict(zip(hashes, texts)))
        if todo:
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                self.conn.executemany(
                    "INSERT OR IGNORE INTO embeddings(model, hash, vector) VALUES (?, ?, ?)",
                    [(embedder.key, h, known[h]) for h in todo])
                self.conn.execute("COMMIT")
            except BaseException:
                schema.rollback(self.conn)
                raise
        return [known[h] for h in hashes]

    def _stored_or_embedded(self, embedder: Any, texts: dict[str, str],
                            progress: Progress | None = None
                            ) -> tuple[dict[str, bytes], list[str]]:
        """The vectors (float32 bytes) of ``texts`` (content hash -> text): those the
        embeddings store holds under the embedder's key at its length, and the rest embedded
        now, in batches with progress. Returns ``(hash -> vector, hashes embedded now)``; the
        caller stores the new ones. Nothing is written here.

        Raises:
            EmbedderUnavailable: the embedder failed; DimensionChanged when it returned
                vectors of another length than its ``dim``.
        """
        from ynm.index.embedders import DimensionChanged

        key, size = embedder.key, embedder.dim * 4  # vectors of another key never mix
        known: dict[str, bytes] = {}
        wanted = list(texts)
        for i in range(0, len(wanted), 500):
            chunk = wanted[i: i + 500]
            known.update(self.conn.execute(
                "SELECT hash, vector FROM embeddings WHERE model = ? AND length(vector) = ? "
                f"AND hash IN ({', '.join('?' * len(chunk))})", (key, size, *chunk)))
        todo = [h for h in texts if h not in known]
        if todo:
            vectors = embedder.embed_all([texts[h] for h in todo], progress)
            if vectors.shape[1:] != (embedder.dim,):
                got = vectors.shape[1] if vectors.ndim == 2 else vectors.shape
                raise DimensionChanged(f"{embedder.name} returned {got} dimensions where it "
                                       f"returned {embedder.dim}")
            for h, vector in zip(todo, vectors):
                known[h] = vector.astype("float32").tobytes()
        return known, todo

    # -- reads -----------------------------------------------------------------------------

    def damaged_text(self) -> str | None:
        """Why a text this cache keeps cannot be read back (every memory's state and every
        record's line is read: about a second per 100,000), or None when each one can: what
        tells whether a :class:`ynm.index.schema.TextDamaged` met while reading rows in
        Python came from this file. A file damaged in its pages (SQLite's own complaint)
        says so too."""
        try:
            for sql in (f"SELECT count(*) FROM memories WHERE {schema.state_sql()} IS NULL",
                        "SELECT count(*) FROM records WHERE ynm_unpack(line) IS NULL"):
                self.conn.execute(sql).fetchone()
        except schema.CacheDamaged as err:
            return err.message
        return None

    def problems(self) -> list[tuple[str, int, str]]:
        """Bad lines: ``(shard ref, 1-based line, message)``, by ref then line."""
        return self.conn.execute(
            "SELECT ref, line, message FROM problems ORDER BY ref, line"
        ).fetchall()

    def missing(self, records: Sequence[Record], chunk: int = 500) -> list[Record]:
        """The ``records`` whose id the records table does not hold, in their order; looked up
        ``chunk`` ids at a time, so no set of the store's ids is built."""
        out = []
        for i in range(0, len(records), chunk):
            part = records[i: i + chunk]
            have = {row[0] for row in self.conn.execute(
                f"SELECT id FROM records WHERE id IN ({', '.join('?' * len(part))})",
                [r.id for r in part])}
            out.extend(r for r in part if r.id not in have)
        return out

    def counts(self) -> dict[str, int]:
        """``{"shards", "records", "memories", "orphans", "badLines"}`` as the cache holds them."""
        c = self.conn
        records = c.execute("SELECT count(*) FROM records").fetchone()[0]
        orphans = c.execute(
            "SELECT count(DISTINCT memory_id) FROM records WHERE memory_id NOT IN "
            "(SELECT memory_id FROM memories)"
        ).fetchone()[0]
        return {
            "shards": c.execute("SELECT count(*) FROM shards").fetchone()[0],
            "records": records,
            "memories": c.execute("SELECT count(*) FROM memories").fetchone()[0],
            "orphans": orphans,
            "badLines": c.execute("SELECT count(*) FROM problems").fetchone()[0],
        }

    def get_state(self, memory_id: str) -> dict[str, Any] | None:
        """The folded state of one memory as JSON (cli.md §3.3 without ``mount``), or None."""
        row = self.conn.execute(
            f"SELECT {schema.state_sql()} FROM memories WHERE memory_id = ?", (memory_id,)
        ).fetchone()
        return json.loads(row[0]) if row else None


def embedding_text(summary: str, content: str) -> str:
    """What a memory's vector is computed from: its summary and indexed content."""
    if summary and not content.startswith(summary):
        return f"{summary}\n{content}"
    return content


# A record of a rebuild with the ``records`` rowid and the line (unpacked) it is kept under.
_Stored = tuple[Record, int, str]


def _by_memory(stored: Iterable[_Stored]) -> Iterable[list[_Stored]]:
    """Stored records grouped by memory id, groups in first-seen order."""
    groups: dict[str, list[_Stored]] = {}
    for s in stored:
        groups.setdefault(s[0].memory_id, []).append(s)
    return groups.values()


class _Folded:
    """The memories of a rebuild, folded a shard at a time and kept in a staging database
    (``folded``: the memories columns, the FTS values and the base's ``(recordedAt, id)``)
    until all are known, then copied into ``memories`` and ``fts`` in one ordered pass each.

    The fold of a memory depends only on that memory's records (ynm.model.fold groups by
    ``memoryId``), so a memory whose records all lie in one shard is folded exactly from that
    shard alone, with that shard's records only in memory. A memory whose records are spread
    over several shards was folded from a part of them: :meth:`refold_spread` folds it again
    from all its records in the records table. :meth:`insert` gives rowids 1, 2, ... in the
    order of each memory's base (its first ``create`` or ``supersede`` by ``(recordedAt,
    id)``), which is the order a fold of the whole store creates them. Memories without a
    base (orphans) get no row; their records stay in the records table.

    The staging database is a file in a temporary folder in ``where`` (beside the cache: at
    1M memories it holds ~700 MB), written through a connection of its own and attached to
    the cache's as ``staged`` (with an empty ``ftsout`` beside it), so that a worker process
    can read it too: :meth:`index` has a worker build the full-text index from it while this
    process copies the memories, then takes the worker's index whole
    (:func:`ynm.index.schema.copy_fts`). SQLite attaches a database only outside a
    transaction, and ``BEGIN IMMEDIATE`` opens one on every attached database at once,
    which would hide what is written to them afterwards: so this is entered before the
    rebuild's transaction, which the caller begins with a plain ``BEGIN`` and a first
    statement that writes to the cache (taking its write lock then, waiting for other
    writers the same way), and the cache's connection reads ``staged`` and ``ftsout`` only
    once they are complete. (A statement naming a table that main and temp lack, such as
    ``DROP TABLE IF EXISTS x``, makes SQLite look in them too and hold a read lock on them
    until the transaction ends, which would block the staging's commit: such names are
    written ``main.x``.) The folder is deleted on exit.
    """

    def __init__(self, conn: Any, where: Path | str | None, chunk: int = 5000) -> None:
        self.conn = conn
        self.where = where
        self.chunk = chunk
        self.columns = _MEMORY_COLUMNS
        self.writer: Any = None
        self.path = self.fts_path = ""
        self._dir: tempfile.TemporaryDirectory[str] | None = None
        self._lock: Any = None

    def __enter__(self) -> Self:
        if self.where is not None:
            Path(self.where).mkdir(parents=True, exist_ok=True)
            _remove_stale_staging(Path(self.where))
        self._dir = tempfile.TemporaryDirectory(prefix=_STAGING, dir=self.where)
        try:
            self._lock = _hold_staging(Path(self._dir.name))
            self.path = os.path.join(self._dir.name, "folded.sqlite")
            self.fts_path = os.path.join(self._dir.name, "fts.sqlite")
            self.writer = sqlite3.connect(self.path, isolation_level=None)
            self.writer.execute("PRAGMA journal_mode = OFF")  # scratch: nothing to roll back
            self.writer.execute("PRAGMA synchronous = OFF")
            self.writer.execute(
                "CREATE TABLE folded (base_at TEXT, base_id TEXT, fts_summary TEXT, "
                f"fts_content TEXT, fts_subject TEXT, fts_tags TEXT, {', '.join(self.columns)})")
            self.writer.execute("BEGIN")
            Path(self.fts_path).touch()
            self.conn.execute("ATTACH DATABASE ? AS staged", (self.path,))
            self.conn.execute("ATTACH DATABASE ? AS ftsout", (self.fts_path,))
        except BaseException:
            self.__exit__()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        if self.writer is not None:
            self.writer.close()
            self.writer = None
        for name in ("staged", "ftsout"):
            with contextlib.suppress(sqlite3.Error):
                self.conn.execute(f"DETACH DATABASE {name}")
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None
        if self._lock is not None:
            self._lock.close()  # after the folder is gone, so no one else deletes it first
            self._lock = None

    def add(self, groups: Iterable[list[_Stored]]) -> None:
        """Fold each group (the records of one memory, each with its ``records`` rowid and
        line) and keep its row; a group without a base is left out."""
        self.add_rows(_folded_rows(groups), 0)

    def add_rows(self, rows: Iterable[tuple[Any, ...]], first_rowid: int) -> None:
        """Keep rows of :func:`_folded_rows` whose ``current`` is a place among one shard's
        records, counted from 0; the first of those records has the ``records`` rowid
        ``first_rowid`` and the others follow it (0: ``current`` is the rowid already)."""
        values = ["?"] * (6 + len(self.columns))
        values[_FOLDED_CURRENT_AT] = f"? + {int(first_rowid)}"
        sql = f"INSERT INTO folded VALUES ({', '.join(values)})"
        it = iter(rows)
        while chunk := list(islice(it, self.chunk)):
            self.writer.executemany(sql, chunk)

    def refold_spread(self, linked: Iterable[str], split: Iterable[str] = ()) -> None:
        """Fold again, from the records table, every memory whose records lie in more than
        one shard, and the memories ``split`` (over two parts of one shard, which have no
        row); the rows folded from single shards are dropped first.

        ``linked`` holds (at least) the ``memory_of`` of every record in the table: a memory
        with records in two shards has two records, and one of them has an id other than
        the memory's (ids are unique), so only those memories are looked at, through the
        ``records_memory`` index (at 1M memories of one record each: none, against 4 s to
        group every record by memory)."""
        conn = self.conn
        conn.execute("CREATE TEMP TABLE linked (memory_id TEXT PRIMARY KEY) WITHOUT ROWID")
        conn.executemany("INSERT OR IGNORE INTO temp.linked VALUES (?)", ((m,) for m in linked))
        conn.execute("CREATE TEMP TABLE split (memory_id TEXT PRIMARY KEY) WITHOUT ROWID")
        conn.executemany("INSERT OR IGNORE INTO temp.split VALUES (?)", ((m,) for m in split))
        conn.execute("CREATE TEMP TABLE spread AS SELECT r.memory_id FROM temp.linked AS l "
                     "JOIN records AS r ON r.memory_id = l.memory_id "
                     "GROUP BY r.memory_id HAVING min(r.shard) <> max(r.shard) "
                     "UNION SELECT memory_id FROM temp.split")
        spread = conn.execute("SELECT memory_id FROM temp.spread").fetchall()
        if spread:
            self.writer.execute("CREATE TEMP TABLE spread (memory_id TEXT PRIMARY KEY)")
            self.writer.executemany("INSERT INTO temp.spread VALUES (?)", spread)
            self.writer.execute(
                "DELETE FROM folded WHERE memory_id IN (SELECT memory_id FROM temp.spread)")
            self.writer.execute("DROP TABLE temp.spread")
            rows = conn.execute("SELECT r.memory_id, r.rowid, r.line FROM temp.spread AS s "
                                "JOIN records AS r ON r.memory_id = s.memory_id "
                                "ORDER BY s.rowid")
            try:
                self.add(_groups_of(rows))
            finally:
                rows.close()
        for table in ("spread", "linked", "split"):
            conn.execute(f"DROP TABLE temp.{table}")

    def finish(self) -> None:
        """Commit and close the staging database, ordered by base; nothing is added after."""
        self.writer.execute("CREATE INDEX folded_order ON folded(base_at, base_id)")
        self.writer.execute("COMMIT")
        self.writer.close()
        self.writer = None

    def insert(self) -> int:
        """Copy the staged rows into ``memories`` (rowids from 1, in base order), after
        :meth:`finish`; returns how many memories there are. Call :meth:`index` after."""
        columns = ", ".join(self.columns)
        self.conn.execute(f"INSERT INTO memories(rowid, {columns}) SELECT row_number() OVER "
                          f"(ORDER BY base_at, base_id), {columns} FROM staged.folded "
                          "ORDER BY base_at, base_id")
        return self.conn.execute("SELECT count(*) FROM memories").fetchone()[0]

    def index_in_worker(self) -> Background:
        """Start building the full-text index of the staged rows in a worker process (into
        ``ftsout``), for :meth:`index` to take; call after :meth:`finish` and before
        :meth:`insert`, which then overlaps with it."""
        from ynm.index.workers import Background

        return Background(_fts_index, (self.path, self.fts_path))

    def index(self, worker: Background | None) -> None:
        """Fill ``fts`` for the staged rows, with the rowids :meth:`insert` gave: the index
        ``worker`` (:meth:`index_in_worker`) built, or, without one or when it cannot be
        used, here."""
        if worker is not None:
            worker.result()  # raises what the worker raised
            if schema.copy_fts(self.conn, "ftsout"):
                return
        self.conn.execute(_FTS_FROM_STAGED)


_STAGING = "ynm-rebuild-"  # a staging folder's name: this and random characters
_STAGING_LOCK = "lock"  # the file in it that its rebuild holds locked while it runs
# A staging folder without its lock file is one a rebuild is creating, or one a rebuild killed
# in that instant left; after this long (seconds) it is the second.
_UNLOCKED_STAGING_S = 600


def _hold_staging(folder: Path) -> Any:
    """Create and lock (``flock``, exclusive) ``folder``'s lock file; returns the open file,
    whose closing releases the lock (the kernel releases it too when the process ends, however
    it ends). None where ``fcntl`` is missing: such folders are never taken for stale."""
    try:
        import fcntl
    except ImportError:
        return None
    # locked under another name, then named: a cleaner never finds it there unlocked
    handle = open(folder / f"{_STAGING_LOCK}.new", "wb")  # noqa: SIM115 - held until the end
    with contextlib.suppress(OSError):  # a file system without locks: no one can take it
        fcntl.flock(handle, fcntl.LOCK_EX)
    os.rename(folder / f"{_STAGING_LOCK}.new", folder / _STAGING_LOCK)
    return handle


def _remove_stale_staging(where: Path) -> None:
    """Delete the staging folders in ``where`` that a rebuild killed outright (SIGKILL, a
    power cut) left behind: those whose lock file nobody holds. A lock held by any process
    that can lock the same file (another PID namespace, another host of an NFS share that
    supports locks) keeps its folder, as does a folder not named like ours or a symbolic
    link; a folder without the lock file only once it is :data:`_UNLOCKED_STAGING_S` old."""
    try:
        import fcntl
    except ImportError:
        return
    for folder in where.glob(f"{_STAGING}*"):
        if folder.is_symlink() or not folder.is_dir():
            continue
        try:
            handle = open(folder / _STAGING_LOCK, "rb")  # noqa: SIM115 - closed below
        except FileNotFoundError:
            try:
                old = time.time() - folder.stat().st_mtime > _UNLOCKED_STAGING_S
            except OSError:
                continue
            if old:
                shutil.rmtree(folder, ignore_errors=True)
            continue
        except OSError:
            continue
        with handle:
            try:
                fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:  # held: its rebuild runs
                continue
            shutil.rmtree(folder, ignore_errors=True)


# The full-text rows of the staged memories, numbered as _Folded.insert numbers them (a
# base's (recordedAt, id) is unique); run in the cache or in a worker's own database.
_FTS_FROM_STAGED = (
    "INSERT INTO fts(rowid, summary, content, subject, tags) "
    "SELECT row_number() OVER (ORDER BY base_at, base_id), "
    f"coalesce(fts_summary, {schema.SUMMARY_SQL}), "
    "coalesce(fts_content, content), coalesce(fts_subject, subject, ''), "
    "coalesce(fts_tags, tags) "
    "FROM staged.folded ORDER BY base_at, base_id")


def _fts_index(job: tuple[str, str]) -> None:
    """Build the full-text index of a rebuild's staging database (``job``: its path, and the
    path of the empty database to build it in) in that database's ``fts``, as the cache
    creates it. Run in a worker (:meth:`_Folded.index_in_worker`)."""
    staged, out = job
    conn = sqlite3.connect(out, isolation_level=None)
    try:
        conn.execute("PRAGMA journal_mode = OFF")
        conn.execute("PRAGMA synchronous = OFF")
        conn.execute("ATTACH DATABASE ? AS staged", (staged,))
        conn.execute("BEGIN")
        conn.execute(schema.FTS_DDL)
        conn.execute(schema.FTS_SECURE_DELETE)
        conn.execute(_FTS_FROM_STAGED)
        conn.execute("COMMIT")
    finally:
        conn.close()


def _folded_rows(groups: Iterable[list[_Stored]]) -> Iterator[tuple[Any, ...]]:
    """The staged ``folded`` row of each group (the records of one memory, each with its
    ``records`` rowid and line): the base's ``(recordedAt, id)``, the FTS values
    (:func:`_fts_kept`) and the memory row (:func:`_memory_row`). A group without a base
    gives no row."""
    for group in groups:
        first, rowid, line = group[0]
        if len(group) == 1 and first.op in ("create", "supersede"):
            m: Memory | None = memory_from_base(first)  # what fold gives for one base
            base = (first.recorded_at, first.id)
        else:
            recs = [s[0] for s in group]
            m = fold(recs).memories.get(first.memory_id)
            if m is None:
                continue
            base = min((r.recorded_at, r.id) for r in recs if r.op in ("create", "supersede"))
            rowid, line = next((i, text) for r, i, text in group if r.id == m.current.id)
        summary, content = memory_summary(m), indexed_content(m)
        row = _memory_row(m, rowid, line, summary, content)
        fts = _fts_kept(summary, content, m.subject, m.tags, row[_TAGS_AT])
        yield (*base, *fts, *row)


@dataclass(slots=True)
class _ShardRows:
    """What a full rebuild writes for one shard, computed from its note blob alone
    (:func:`_shard_rows`): the problems of its bad lines, its ``records`` rows (the line
    packed) in line order, the ``folded`` rows of its memories as folded from this shard
    (``current`` numbered from 0 in that order; :meth:`_Folded.add_rows`), the memories
    left out of them because their records lie in two parts of the blob (``split``, folded
    again from the records table: :meth:`_Folded.refold_spread`) and the shards-table state
    of the blob (without its loose mark, which the caller reads)."""

    problems: list[Problem]
    records: list[tuple[Any, ...]]
    folded: list[tuple[Any, ...]]
    split: list[str]
    content: _Content


# A shard's blob is parsed this many bytes at a time (at a line's end), so that only one
# part's parsed records are held: a parsed record takes ~3.8 KB, so the 65 MB largest
# shard of the 1M benchmark store held ~480 MB of them at once.
PART_BYTES = 4 * 1024 * 1024


def _parts(data: bytes, size: int) -> Iterator[tuple[bytes, int]]:
    """``data`` cut at the first newline that makes a part at least ``size`` bytes long:
    ``(part, number of its first line)``. A newline byte is never part of a UTF-8 sequence
    (nor of what an invalid one decodes to), so each part decodes to the lines decoding the
    whole would give."""
    start, line = 0, 1
    while start < len(data):
        end = data.find(b"\n", start + max(size, 1) - 1)
        end = len(data) if end < 0 else end + 1
        part = data[start:end]
        yield part, line
        line += part.count(b"\n")
        start = end


def _shard_rows(job: tuple[bytes, int, int]) -> _ShardRows:
    """The rows of one shard (:class:`_ShardRows`) from ``(note blob, records.shard, part
    size in bytes)``; the blob is parsed a part at a time (:data:`PART_BYTES`).

    Depends on nothing but its argument, so a large rebuild runs it in worker processes
    (:func:`ynm.index.workers.ordered_map`) while the caller writes the shard before."""
    data, shard, part_bytes = job
    problems: list[Problem] = []
    records: list[tuple[Any, ...]] = []
    folded: list[tuple[Any, ...]] = []
    seen: dict[str, int] = {}  # record ids met in earlier parts (parse_jsonl drops repeats)
    part_of: dict[str, int] = {}  # memory id -> the part its first record was in
    split: set[str] = set()
    with _no_cycle_collection():
        for k, (part, first_line) in enumerate(_parts(data, part_bytes)):
            parsed = parse_jsonl(part, first_line, seen)
            problems += parsed.problems
            lines = [line.strip() for line in parsed.lines]
            place = len(records)
            records += [(r.id, memory_of(r.id, r.memory_id), shard, instant(r.recorded_at),
                         r.op, packed) for r, packed in zip(parsed.records, schema.pack_many(lines))]
            for r in parsed.records:
                if part_of.setdefault(r.memory_id, k) != k:
                    split.add(r.memory_id)
            folded += _folded_rows(_by_memory(
                (r, place + i, line) for i, (r, line) in enumerate(zip(parsed.records, lines))))
            del parsed, lines
        if split:
            folded = [row for row in folded if row[_FOLDED_MEMORY_ID_AT] not in split]
    return _ShardRows(problems, records, folded, sorted(split), _Content.of(data, None))


@contextmanager
def _no_cycle_collection() -> Iterator[None]:
    """Python's cycle collector paused (as it was, after): while a shard's hundreds of
    thousands of records, lines and rows are built, each full collection walks all of them,
    for nothing (they hold no cycles; reference counts free them). On the largest shard of
    the 1M benchmark store, parsing went from ~38 to ~23 us a record."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _workers_for(size: int) -> int:
    """Worker processes for a full rebuild of note blobs totalling ``size`` bytes: none below
    :data:`WORKERS_FROM_BYTES` (starting them costs more than they save) or on one CPU; else
    one per CPU, at most :data:`MAX_WORKERS` (this process keeps SQLite busy meanwhile)."""
    cpus = os.cpu_count() or 1
    if size < WORKERS_FROM_BYTES or cpus < 2:
        return 0
    return min(cpus, MAX_WORKERS)


def _fts_kept(summary: str, content: str, subject: str | None, tags: list[str],
              tags_json: str) -> tuple[str | None, str | None, str | None, str | None]:
    """A folded memory's FTS row (:func:`ynm.index.schema.fts_values`) as the staged ``folded``
    keeps it: each value, or None where it is the memory's own column as the row holds it
    (the summary, the content, the subject or ``""``, and the tags' JSON text ``tags_json``),
    which :meth:`_Folded.insert` then reads. Most text passes fts_text unchanged (it changes
    only Han, kana and Hangul), so the temporary rows do not hold each text twice. The tags'
    JSON array text stands for the tags joined by spaces when it holds no escape: unicode61
    splits words at its quotes, brackets and commas as at spaces, so the tokens are the same
    (as ynm.index.search._fill_candidates relies on)."""
    fts = fts_values(summary, content, subject, tags)
    return (None if fts[0] == summary else fts[0],
            None if fts[1] == content else fts[1],
            None if fts[2] == (subject or "") else fts[2],
            None if fts[3] == " ".join(tags) and "\\" not in tags_json else fts[3])


def _groups_of(rows: Iterable[tuple[str, int, bytes]]) -> Iterator[list[_Stored]]:
    """``(memory id, records rowid, packed line)`` rows, consecutive by memory, as lists of
    stored records (:data:`_Stored`), one memory at a time."""
    memory_id = None
    group: list[_Stored] = []
    for mid, rowid, packed in rows:
        if mid != memory_id:
            if group:
                yield group
            memory_id, group = mid, []
        line = schema.unpack(packed)
        group.append((parse_line(line), rowid, line))
    if group:
        yield group


@contextmanager
def _bulk_load(conn: Any, cache_kib: int = 128 * 1024) -> Iterator[None]:
    """Settings for a whole-store load inside the caller's transaction: a page cache of
    ``cache_kib`` KiB (SQLite's default is 2 MiB), so the pages a rebuild dirties are not
    spilled to the WAL before the commit, and the index B-trees it grows stay in memory. The
    cache size is put back afterwards. Memory stays bounded by ``cache_kib``."""
    before = conn.execute("PRAGMA cache_size").fetchone()[0]
    conn.execute(f"PRAGMA cache_size = -{cache_kib}")
    try:
        yield
    finally:
        conn.execute(f"PRAGMA cache_size = {before}")


def _loose_mark(log: ShardLog, blob_id: str | None, data: bytes) -> LooseMark | None:
    """The mark of a note blob just read whole (``data``) when its loose file is in the layout
    ynm writes, for the next refresh to read an append from the loose file alone; else None."""
    raw = log.loose_object(blob_id) if blob_id else None
    return mark_loose(raw, data) if raw is not None else None


def _in_step(old: _ShardRow | None, a: Any) -> bool:
    """True when the cache holds exactly the shard state this append started from."""
    if old is None:
        return a.previous is None
    return (
        old.commit_id == a.previous
        and old.blob_id == a.previous_blob_id
        and old.content.bytes == a.previous_size
        and old.content.ends_nl
    )


def _ref_of(r: Record) -> str:
    from ynm.model.shards import NOTES_PREFIX

    return f"{NOTES_PREFIX}/{r.level}/{r.namespace}/{r.type}/{r.bucket}"



def _memory_row(m: Memory, current: int, line: str, summary: str,
                content: str) -> tuple[Any, ...]:
    """The stored ``memories`` row of a folded memory (:data:`_MEMORY_COLUMNS`, without its
    rowid); ``current`` is the ``records`` rowid of its current record, ``line`` that
    record's line as kept (unpacked), ``summary`` and ``content`` its :func:`memory_summary`
    and :func:`indexed_content`. The folded state is kept as what the columns and that line
    do not hold (ynm.index.schema.state_extra); the summary and update time as
    ynm.index.schema.summary_head and updated_later keep them, type and level as codes
    (ynm.index.schema.code), the creation time as milliseconds (ynm.index.schema.instant)."""
    data = m.current.data
    return (
        m.memory_id, schema.code(m.type, schema.MEMORY_TYPES),
        schema.code(m.level, schema.LEVELS), m.namespace, m.subject,
        json.dumps(m.tags, ensure_ascii=False),
        json.dumps(list(data.keys()) if data else [], ensure_ascii=False),
        m.importance, m.confidence, int(m.pinned), int(m.needs_review), int(m.tombstoned),
        instant(m.created_at), schema.updated_later(m.created_at, m.updated_at), m.versions,
        schema.summary_head(summary, content), content,
        current, schema.state_extra(m.to_obj(), line),
        m.expires_at_ms(),
    )
