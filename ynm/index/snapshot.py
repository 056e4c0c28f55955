"""A mount's cache state as a snapshot (``state.bin``), and a cold cache started from one.

What a snapshot holds (``state.bin``): a SQLite file, compressed with zstd, with the cache's own
rows as they stood at the shard commits listed in ``meta.json``:

- ``shards``: per shard the notes commit, note blob, byte length, line count, CRC-32 and
  record count the state was built from;
- ``records``: every valid record (its id, memory, time and op) with its shard ref (the cache
  keeps a number for it, ynm.index.schema ``shard_refs``), so the orphans (records whose
  memory has no base yet) travel too, and any memory can be folded again from all its
  records, across shards. A record's line is not carried (format 2): it is named by its
  number in the shard's note blob at the covered commit (``line_no``: the index of the line
  in the blob split at ``\n``, as ynm.model.jsonl reads it), which the repository holds
  anyway; only a line that blob does not hold as such is carried as text (``line``). A
  numbered line that begins with its record id (``{"v":1,"id":"<id>"``, as ynm and the
  reference write every line) gives the id too (``id`` NULL). A CRC-32 per shard over its
  lines in rowid order (``line_sums``) lets the loader prove it took the same lines;
- ``problems``: the bad lines;
- ``memories``: the folded memories (the columns recall filters on, the ``records`` rowid of
  the current record and what else the folded state holds: ynm.index.schema.state_extra);
  ``memory_id`` and ``created_ms`` are NULL where the current record gives them (its memory
  id, its recorded time), as it does for nearly every memory: ULIDs are random, so each copy
  of one costs its full 16 bytes compressed;
- ``embeddings``: the vectors of the memories' texts under the embedder the cache used, when it
  had one, so a clone with the same embedder embeds nothing;
- for a mount of :data:`FTS_CARRIED_FROM` memories or more, the full-text index: copies of
  FTS5's own tables behind ``fts`` (ynm.index.schema.FTS_SHADOW), taken in the same read as
  the memories, so a cold load copies the index rather than indexing every memory again. A
  loader whose FTS5 writes another file format (``fts_config`` version) indexes the memories
  itself; a ynm that does not know these tables never reads them.

Cold start (:func:`load_into`): a cache file that was never built (absent, or dropped for
another schema version) takes the rows above, indexes the memories' text (or takes the carried
index), then refreshes the
ordinary way (ynm.index.cache): a shard that only grew by appends is read for its tail; a shard
a merge changed (cat_sort_uniq, which can bring records that sort before the snapshot's last
one, reference/storage.md §7.12) is read whole and diffed by record id; every memory that gained
or lost a record is folded again from all its records. So snapshot + tail folds exactly as a
full fold does, whatever order the records came in and whichever shards a memory spans.

A snapshot is used only when it fits the current shard tips (every covered commit is the tip
or an ancestor of it: :func:`ynm.store.snapshots.fits`), was written for this cache schema,
format and anchor; anything else, or a state that cannot be read, gives a full rebuild.
"""

from __future__ import annotations

import json
import os
import tempfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Self

from ynm.index import schema
from ynm.index.schema import fts_values

FORMAT = 2  # meta.json "format" written; ynm.store.snapshots.FORMAT, which sync checks, is the same
# Format 1 carried every record line as text and every memory id and creation time in full; it
# is still read.
READS = (1, 2)
NAME = f"cache-v{schema.SCHEMA_VERSION}"
# state.bin: zstd level 3 with long-distance matching over a 32 MiB window (a memory's text
# appears in its record line, its folded state and the indexed columns). At 10k memories:
# 21 MB of SQLite to 1.97 MB in 0.2 s, where level 6 alone gave 2.08 MB in 0.3 s and level 19
# 1.3 MB in 19 s (measured here).
ZSTD_LEVEL = 3
ZSTD_WINDOW_LOG = 25

# The tables a snapshot carries: their columns (rowids of memories included: the FTS rows are
# keyed by them; rowids of records too: memories.current points at them). What the folded
# states keep besides the columns travels as plain text: zstd over the whole file shrinks it
# ~10x where each packed on its own (as the cache keeps them) shrinks ~2.6x, for one pack per
# row when loaded. Record lines are named by their number in the covered note blob (module
# docstring); ``records`` and ``memories`` are written and read by their own statements below.
# The shards' loose-file marks (deflated, deflated_crc, adler, window) stay behind: they describe
# object files of the repository that wrote the snapshot; a cache loaded from one finds them
# again when it next reads a shard whole.
_TABLES = {
    "shards": "ref, commit_id, blob_id, bytes, lines, ends_nl, crc, records",
    "records": "rowid, id, memory_of, ref, recorded_ms, op, line",
    "problems": "ref, line, message",
    "memories": "rowid, memory_id, type_code, level_code, namespace, subject, tags, data_keys, "
                "importance, confidence, pinned, needs_review, tombstoned, created_ms, "
                "updated_later, versions, summary_head, content, current, extra, expires_at",
}
_PACKED = ("line", "extra")  # the packed columns (ynm.index.schema.pack)
# ``records.ref`` of a snapshot is ``records.shard`` of the cache: how each side reads it.
_DUMP_REF = "(SELECT ref FROM main.shard_refs AS s WHERE s.shard = records.shard)"
_LOAD_SHARD = "(SELECT shard FROM main.shard_refs AS s WHERE s.ref = records.ref)"
# What gives the ``memory_id`` and ``created_ms`` a format-2 snapshot leaves NULL: the memory
# id and the time of the memory's current record ``r`` (for a memory of one record, its base:
# nearly every memory), joined by rowid, one lookup per memory.
_CURRENT_JOIN = "LEFT JOIN main.records AS r ON r.rowid = m.current"
_DERIVED = {"memory_id": "r.memory_id", "created_ms": "r.recorded_ms"}
_RECORD_ROWS = 5000  # record rows written to the snapshot per statement
# From this many memories a snapshot carries the cache's full-text index (FTS5's own tables)
# and a cold load copies it instead of indexing every memory. At 1M memories of the benchmark
# corpus it adds 31.6 MB to state.bin (46.5 MB without it) and saves ~10 s of a cold load
# (indexing: ~12 s; copying: ~2 s). A smaller mount indexes its memories in a few seconds,
# and there the same two thirds more state.bin weighs more against its notes, which git
# packs far smaller.
FTS_CARRIED_FROM = 200_000


def _columns(table: str) -> list[str]:
    return [c.strip() for c in _TABLES[table].split(",")]


def _select(table: str, func: str, ref: str = "ref") -> str:
    """The column list of ``table`` with each packed column passed through ``func`` and, in
    ``records``, the ref read as ``ref``."""
    cols = _columns(table)
    if table == "problems":
        return ", ".join(cols)
    if table == "records":
        cols = [ref if c == "ref" else c for c in cols]
    return ", ".join(f"{func}({c}) AS {c}" if c in _PACKED else c for c in cols)


def _dump_sql(table: str) -> str:
    """The statement copying ``table`` (shards, problems) from the cache into the snapshot
    being written."""
    return (f"CREATE TABLE snap.{table} AS SELECT "
            f"{_select(table, 'ynm_unpack', f'{_DUMP_REF} AS ref')} FROM main.{table}")


def _dump_memories(conn: Any) -> None:
    """Copy ``memories`` into the snapshot, ``memory_id`` and ``created_ms`` NULL where the
    current record gives them."""
    select = ", ".join(
        f"CASE WHEN m.{c} IS {_DERIVED[c]} THEN NULL ELSE m.{c} END AS {c}" if c in _DERIVED
        else f"ynm_unpack(m.{c}) AS {c}" if c in _PACKED else f"m.{c} AS {c}"
        for c in _columns("memories"))
    conn.execute(f"CREATE TABLE snap.memories AS SELECT {select} FROM main.memories AS m "
                 f"{_CURRENT_JOIN} ORDER BY m.rowid")


def _line_numbers(data: bytes) -> dict[str, int]:
    """Each line of the shard blob ``data`` (stripped, as the cache keeps it) -> the index of
    its first instance in the blob split at ``\n`` (ynm.model.jsonl.parse_jsonl's numbering
    less one); blank lines are left out."""
    out: dict[str, int] = {}
    for i, raw in enumerate(data.decode("utf-8", errors="replace").split("\n")):
        line = raw.strip()
        if line and line not in out:
            out[line] = i
    return out


_ID_HEAD = '{"v":1,"id":"'
_ID_AT = len(_ID_HEAD)


def _line_id(line: str) -> str | None:
    """The record id a line written as ynm and the reference write it begins with
    (``{"v":1,"id":"<26 characters>"``), or None for a line of another shape."""
    if line.startswith(_ID_HEAD) and line[_ID_AT + 26: _ID_AT + 27] == '"':
        return line[_ID_AT: _ID_AT + 26]
    return None


def _lines_sum(lines: list[str]) -> int:
    """The CRC-32 of a shard's record lines (``line_sums``): of each line and a newline, in
    rowid order, in one call."""
    return zlib.crc32(("\n".join(lines) + "\n").encode("utf-8", errors="surrogatepass"))


def _dump_records(conn: Any, read_blob: Callable[[str], bytes]) -> None:
    """Copy ``records`` into the snapshot, one shard at a time: each line that the shard's
    note blob (``read_blob``, by the blob id the cache was built from) holds is named by its
    number there, any other carried as text; and each shard's ``line_sums`` entry.

    Raises:
        StoreError: a note blob cannot be read.
    """
    conn.execute("CREATE TABLE snap.records (rowid INTEGER PRIMARY KEY, id TEXT, "
                 "memory_of TEXT, ref TEXT NOT NULL, recorded_ms INTEGER NOT NULL, "
                 "op TEXT NOT NULL, line_no INTEGER, line TEXT)")
    conn.execute("CREATE TABLE snap.line_sums (ref TEXT PRIMARY KEY, crc INTEGER NOT NULL)")
    shards = conn.execute("SELECT s.shard, s.ref, h.blob_id FROM main.shard_refs AS s "
                          "LEFT JOIN main.shards AS h ON h.ref = s.ref ORDER BY s.ref").fetchall()
    insert = "INSERT INTO snap.records VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
    for shard, ref, blob_id in shards:
        numbers = _line_numbers(read_blob(blob_id)) if blob_id else {}
        lines: list[str] = []
        rows = []
        for rowid, rid, memory_of, recorded_ms, op, packed in conn.execute(
                "SELECT rowid, id, memory_of, recorded_ms, op, line FROM main.records "
                "WHERE shard = ? ORDER BY rowid", (shard,)):
            line = schema.unpack(packed)
            n = numbers.get(line)
            # a numbered line that starts with its id gives it back at load: a ULID is 16
            # random bytes, a quarter of a state.bin of record ids
            rows.append((rowid, None if n is not None and _line_id(line) == rid else rid,
                         memory_of, ref, recorded_ms, op, n, line if n is None else None))
            lines.append(line)
            if len(rows) == _RECORD_ROWS:
                conn.executemany(insert, rows)
                rows = []
        conn.executemany(insert, rows)
        del numbers
        if lines:
            conn.execute("INSERT INTO snap.line_sums VALUES (?, ?)", (ref, _lines_sum(lines)))


_LINES_TABLE = "ynm_snapshot_lines"  # temp: rowid -> packed line, while a load runs


def _load_lines(conn: Any, read_blob: Callable[[str], bytes]) -> None:
    """Fill ``temp.ynm_snapshot_lines`` (rowid -> packed record line) for the records of a
    format-2 snapshot attached as ``snap``, one shard at a time: its note blob read once
    (``read_blob``, by the id the snapshot's ``shards`` names) and dropped before the next, so
    memory holds one blob; each line taken by its number there, or packed from the text the
    snapshot carries. The records are copied afterwards in rowid order, which mixes the
    shards: the table is what lets each blob be read once without holding them all.

    (Splitting and packing the lines in worker processes, as a full rebuild does its shards,
    was measured at 1M memories: 32.6 -> 31.2 s, for twice the peak memory, since the rows
    and lines this process then sends and takes back cost it about what it saved.)

    Raises:
        SnapshotUnusable: a blob cannot be read, a number is past its end, or a shard's lines
            do not sum to the snapshot's ``line_sums`` CRC-32.
    """
    conn.execute(f"CREATE TEMP TABLE IF NOT EXISTS {_LINES_TABLE} "
                 "(rowid INTEGER PRIMARY KEY, id TEXT, line BLOB NOT NULL)")
    conn.execute(f"DELETE FROM temp.{_LINES_TABLE}")
    blob_ids = dict(conn.execute("SELECT ref, blob_id FROM snap.shards"))
    want = dict(conn.execute("SELECT ref, crc FROM snap.line_sums"))
    insert = f"INSERT INTO temp.{_LINES_TABLE}(rowid, id, line) VALUES (?, ?, ?)"
    sums: dict[str, int] = {}
    refs = [ref for (ref,) in conn.execute("SELECT DISTINCT ref FROM snap.records ORDER BY ref")]
    for ref in refs:
        rows = conn.execute("SELECT rowid, id, line_no, line FROM snap.records WHERE ref = ? "
                            "ORDER BY rowid", (ref,)).fetchall()
        ids, texts = _shard_lines(ref, rows, blob_ids.get(ref), read_blob)
        sums[ref] = _lines_sum(texts)
        for at in range(0, len(rows), _LINE_ROWS):
            packed = schema.pack_many(texts[at:at + _LINE_ROWS])
            conn.executemany(insert, zip([row[0] for row in rows[at:at + _LINE_ROWS]],
                                         ids[at:at + _LINE_ROWS], packed))
        del rows, ids, texts
    if sums != {ref: want.get(ref) for ref in sums} or want.keys() - sums.keys():
        raise SnapshotUnusable("state.bin names record lines its note blobs do not hold "
                               "(their checksums differ)")


def _shard_lines(ref: str, rows: list[tuple[Any, ...]], blob_id: str | None,
                 read_blob: Callable[[str], bytes]) -> tuple[list[str], list[str]]:
    """The record ids and line texts of one shard's snapshot ``rows`` (``rowid, id, line_no,
    line``, in rowid order): a numbered line is taken from the note blob ``blob_id`` split at
    ``\n`` (read at the first number and decoded whole, which gives each line as decoding it
    alone would: a newline byte is never part of a UTF-8 sequence, nor of what an invalid one
    is replaced by) and stripped as the cache keeps it; an id the snapshot leaves out is read
    from the line's start (:func:`_line_id`).

    Raises:
        SnapshotUnusable: the blob cannot be read, a number is past its end, or a line does
            not give the id left out.
    """
    lines: list[str] | None = None
    ids: list[str] = []
    texts: list[str] = []
    for _, rid, line_no, line in rows:
        if line_no is None:
            text = line if line is not None else ""
        else:
            if lines is None:
                try:
                    data = read_blob(blob_id) if blob_id else b""
                except Exception as exc:  # noqa: BLE001 - any failure: read the notes instead
                    raise SnapshotUnusable(f"state.bin names record lines its note blobs do "
                                           f"not give ({exc})") from None
                lines = data.decode("utf-8", errors="replace").split("\n")
                del data
            if line_no >= len(lines):
                raise SnapshotUnusable("state.bin names record lines its note blobs do not "
                                       f"give (line {line_no + 1} of shard {ref})")
            text = lines[line_no].strip()
        if rid is None:
            # _line_id, inline: one call per record costs ~0.3 s at 1M records
            if text.startswith(_ID_HEAD) and text[_ID_AT + 26:_ID_AT + 27] == '"':
                rid = text[_ID_AT:_ID_AT + 26]
            else:
                raise SnapshotUnusable("state.bin names a record line that does not give "
                                       f"its id (line {line_no + 1} of shard {ref})"
                                       if line_no is not None else
                                       "state.bin holds a record without its id")
        ids.append(rid)
        texts.append(text)
    return ids, texts


_LINE_ROWS = 20_000  # record lines packed together (schema.pack_many) and inserted at once


def _load_sql(table: str) -> str:
    """The statement copying ``table`` from the attached snapshot into the cache."""
    columns = ", ".join("shard" if c == "ref" and table == "records" else c
                        for c in _columns(table))
    return (f"INSERT INTO main.{table}({columns}) SELECT "
            f"{_select(table, 'ynm_pack', _LOAD_SHARD)} FROM snap.{table} AS {table}")


def _load_records_sql() -> str:
    """The statement copying a format-2 snapshot's ``records`` into the cache, in rowid
    order, their lines from ``temp.ynm_snapshot_lines`` (:func:`_load_lines`)."""
    return ("INSERT INTO main.records(rowid, id, memory_of, shard, recorded_ms, op, line) "
            f"SELECT records.rowid, l.id, memory_of, {_LOAD_SHARD}, recorded_ms, op, l.line "
            f"FROM snap.records AS records JOIN temp.{_LINES_TABLE} AS l "
            "ON l.rowid = records.rowid ORDER BY records.rowid")


def _load_memories_sql() -> str:
    """The statement copying a format-2 snapshot's ``memories`` into the cache, the
    ``memory_id`` and ``created_ms`` it leaves NULL taken from the current record."""
    cols = _columns("memories")
    select = ", ".join(
        f"coalesce(m.{c}, {_DERIVED[c]})" if c in _DERIVED
        # most memories have no extra: no call into Python for those
        else f"CASE WHEN m.{c} IS NULL THEN NULL ELSE ynm_pack(m.{c}) END" if c in _PACKED
        else f"m.{c}" for c in cols)
    # in the order the dump wrote them, which is rowid order: the snapshot's ``rowid`` is a
    # plain column there, and ordering by it sorted every row (0.3 to 1 s at 1M memories)
    return (f"INSERT INTO main.memories({', '.join(cols)}) SELECT {select} "
            f"FROM snap.memories AS m {_CURRENT_JOIN} ORDER BY m._rowid_")


class SnapshotUnusable(Exception):
    """A snapshot that cannot be loaded (unreadable ``state.bin``, another format, schema or
    anchor); the cache is rebuilt from the notes instead."""


@dataclass(frozen=True, slots=True)
class DumpedState:
    """A cache's state ready to be written as a snapshot.

    Attributes:
        meta: the ``meta.json`` object (``format``, ``cacheSchema``, ``anchor``, ``level``,
            ``embedder``, ``records``, ``memories``, ``createdAt`` and ``shards``: per shard
            ``{"commit", "records", "last": {"recordedAt", "id"} | None}``).
        state: the ``state.bin`` bytes.
    """

    meta: dict[str, Any]
    state: bytes


def covered_shards(conn: Any) -> dict[str, dict[str, Any]]:
    """Per shard the cache was built from: ``{"commit", "records", "last"}`` (the last record
    in fold order, ``{"recordedAt", "id"}``, or None for a shard with no valid record)."""
    last = dict(conn.execute(
        "SELECT s.ref, max(r.recorded_at || ' ' || r.id) FROM records AS r "
        "JOIN shard_refs AS s ON s.shard = r.shard GROUP BY r.shard").fetchall())
    out = {}
    for ref, commit, count in conn.execute(
            "SELECT ref, commit_id, records FROM shards ORDER BY ref").fetchall():
        key = last.get(ref)
        at, _, rid = key.partition(" ") if key else ("", "", "")
        out[ref] = {"commit": commit, "records": count,
                    "last": {"recordedAt": at, "id": rid} if key else None}
    return out


def dump(conn: Any, *, anchor: str, level: str, read_blob: Callable[[str], bytes],
         embedder: Any = None) -> DumpedState:
    """The state of a fresh cache (``conn``, a :class:`ynm.index.cache.MountCache`'s
    connection), read in one transaction so rows and shard commits agree.

    Args:
        anchor, level: the mount's, recorded in ``meta.json``.
        read_blob: blob id (hex) -> its bytes (the mount's
            :meth:`ynm.store.gitnotes.GitNotesLog.read_blob`): the note blobs the cache was
            built from, whose lines the snapshot names by number (one blob in memory at a
            time).
        embedder: the embedder whose vectors to carry (its :attr:`key` must be the cache's
            ``vec_model``), or None for none.

    Raises:
        sqlite3.Error: the cache cannot be read.
        StoreError: a note blob cannot be read.
    """
    import zstandard

    from ynm.index.cache import embedding_text

    with tempfile.TemporaryDirectory(prefix="ynm-snapshot-") as tmp:
        path = os.path.join(tmp, "state.sqlite")
        conn.execute("ATTACH DATABASE ? AS snap", (path,))  # not allowed inside a transaction
        try:
            conn.execute("BEGIN")
            try:
                for table in ("shards", "problems"):
                    conn.execute(_dump_sql(table))
                _dump_records(conn, read_blob)
                _dump_memories(conn)
                memories = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
                if memories >= FTS_CARRIED_FROM:  # the full-text index, as it stands
                    for table in schema.FTS_SHADOW:
                        conn.execute(f"CREATE TABLE snap.{table} AS SELECT * FROM main.{table}")
                conn.execute("CREATE TABLE snap.embeddings (hash TEXT PRIMARY KEY, "
                             "vector BLOB NOT NULL) WITHOUT ROWID")
                key = None
                if embedder is not None and schema.get_meta(conn, "vec_model") == embedder.key:
                    key = embedder.key
                    _dump_embeddings(conn, embedder, embedding_text)
                shards = covered_shards(conn)
                counts = {"records": conn.execute("SELECT count(*) FROM records").fetchone()[0],
                          "memories": conn.execute(
                              "SELECT count(*) FROM memories").fetchone()[0]}
                conn.execute("COMMIT")
            except BaseException:
                schema.rollback(conn)
                raise
        finally:
            conn.execute("DETACH DATABASE snap")
        params = zstandard.ZstdCompressionParameters.from_level(
            ZSTD_LEVEL, enable_ldm=True, window_log=ZSTD_WINDOW_LOG)
        packed = os.path.join(tmp, "state.bin")
        with open(path, "rb") as fh, open(packed, "wb") as out:
            zstandard.ZstdCompressor(compression_params=params).copy_stream(fh, out)
        with open(packed, "rb") as fh:  # read once: memory holds the compressed state once
            state = fh.read()
    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    meta = {"format": FORMAT, "cacheSchema": schema.SCHEMA_VERSION, "anchor": anchor,
            "level": level, "embedder": key, **counts, "createdAt": now, "shards": shards}
    return DumpedState(meta, state)


def _dump_embeddings(conn: Any, embedder: Any, embedding_text: Any) -> None:
    from ynm.index.embedders import content_hash

    size = embedder.dim * 4
    rows = conn.execute("SELECT summary, content FROM memories")
    while batch := rows.fetchmany(500):  # 500 memories at a time, never the whole store
        chunk = [content_hash(embedder.name, embedding_text(s, c)) for s, c in batch]
        conn.execute(
            "INSERT OR IGNORE INTO snap.embeddings(hash, vector) SELECT hash, vector FROM "
            f"main.embeddings WHERE model = ? AND length(vector) = ? AND hash IN "
            f"({', '.join('?' * len(chunk))})", (embedder.key, size, *chunk))


def check_meta(meta: dict[str, Any], anchor: str) -> str | None:
    """Why a snapshot's ``meta.json`` does not suit this cache (format, cache schema, anchor),
    or None."""
    if meta.get("format") not in READS:
        return (f"format {meta.get('format')!r}, this ynm reads "
                f"{' and '.join(str(f) for f in READS)}")
    if meta.get("cacheSchema") != schema.SCHEMA_VERSION:
        return f"cache schema {meta.get('cacheSchema')!r}, this ynm's is {schema.SCHEMA_VERSION}"
    if meta.get("anchor") != anchor:
        return f"anchor {meta.get('anchor')!r}, the mount's is {anchor}"
    return None


class Attached:
    """A snapshot's ``state.bin`` decompressed to a temporary file and attached to a cache
    connection as ``snap`` (SQLite attaches only outside a transaction), for
    :func:`load_into` inside the caller's transaction. A context manager: leaving it detaches
    and deletes the file.

    Raises:
        SnapshotUnusable: ``state.bin`` does not decompress or is not a database.
    """

    def __init__(self, conn: Any, state: bytes) -> None:
        self.conn = conn
        self.state = state
        self._tmp: tempfile.TemporaryDirectory[str] | None = None

    def __enter__(self) -> Self:
        import sqlean as sqlite3
        import zstandard

        self._tmp = tempfile.TemporaryDirectory(prefix="ynm-snapshot-")
        path = os.path.join(self._tmp.name, "state.sqlite")
        try:
            with open(path, "wb") as out:
                zstandard.ZstdDecompressor().copy_stream(_Reader(self.state), out)
            self.conn.execute("ATTACH DATABASE ? AS snap", (path,))
            self.conn.execute("SELECT count(*) FROM snap.sqlite_master").fetchone()
        except (zstandard.ZstdError, sqlite3.Error) as exc:
            self._close()
            what = "decompress" if isinstance(exc, zstandard.ZstdError) else "hold a database"
            raise SnapshotUnusable(f"state.bin is damaged (it does not {what})") from None
        except BaseException:
            self._close()
            raise
        return self

    def __exit__(self, *exc: object) -> None:
        self._close()

    def _close(self) -> None:
        import sqlean as sqlite3

        try:
            self.conn.execute("DETACH DATABASE snap")
        except sqlite3.Error:
            pass
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None


def load_into(conn: Any, meta: dict[str, Any],
              read_blob: Callable[[str], bytes] | None = None) -> int:
    """Fill an empty cache, inside the caller's transaction, with the rows of the snapshot
    attached as ``snap`` (:class:`Attached`), and index their text; returns the number of
    memories loaded. The caller then refreshes against the current shard tips (module
    docstring).

    Args:
        meta: the snapshot's ``meta.json`` (its ``format`` says how ``state.bin`` is laid out).
        read_blob: blob id (hex) -> its bytes, for the record lines a format-2 snapshot names
            by number (:func:`_load_lines`: one blob in memory at a time).

    Raises:
        SnapshotUnusable: the attached file lacks the tables and columns above (a damaged or
            foreign snapshot), or names record lines its note blobs do not give (a blob that
            cannot be read, a checksum that differs); the caller rolls back, so nothing stays
            loaded.
    """
    import sqlean as sqlite3

    conn.create_function("ynm_pack", 1, _pack_text, deterministic=True)
    # the indexes are built once the rows are in, from sorted keys, as a full rebuild does
    # (ynm.index.cache): grown a row at a time in memory-id order, which is random, the
    # unique index of memory ids alone cost about a third of a load at 1M memories
    for name in (*schema.RECORD_INDEXES, *schema.MEMORY_INDEXES):
        conn.execute(f"DROP INDEX IF EXISTS main.{name}")
    try:
        # by shard, then as the cache wrote them: _load_lines reads a shard at a time, and the
        # distinct refs come from the index instead of a sort of every record
        conn.execute("CREATE INDEX IF NOT EXISTS snap.records_by_ref ON records(ref, rowid)")
        conn.execute("INSERT INTO main.shard_refs(ref) SELECT DISTINCT ref FROM snap.records "
                     "ORDER BY ref")
        if meta.get("format") == 1:
            for table in _TABLES:
                conn.execute(_load_sql(table))
        else:
            if read_blob is None:
                raise SnapshotUnusable("no repository to read its record lines from")
            conn.execute(_load_sql("shards"))
            _load_lines(conn, read_blob)
            conn.execute(_load_records_sql())
            conn.execute(f"DELETE FROM temp.{_LINES_TABLE}")
            conn.execute(_load_sql("problems"))
            conn.execute(_load_memories_sql())
        for stmt in (*schema.RECORD_INDEXES.values(), *schema.MEMORY_INDEXES.values()):
            conn.execute(stmt)  # a memory id twice (a damaged state) fails here
        model = meta.get("embedder")
        if isinstance(model, str):
            conn.execute("INSERT OR IGNORE INTO main.embeddings(model, hash, vector) "
                         "SELECT ?, hash, vector FROM snap.embeddings", (model,))
        carried = schema.copy_fts(conn, "snap")
    except sqlite3.Error:
        raise SnapshotUnusable("state.bin is damaged (it does not hold a cache state)") from None
    if carried:
        return conn.execute("SELECT count(*) FROM memories").fetchone()[0]
    conn.execute("INSERT INTO fts(rowid, summary, content, subject, tags) SELECT rowid, "
                 f"summary, content, coalesce(subject, ''), tags FROM memories WHERE {_AS_IS}")
    rows = []
    for rowid, summary, content, subject, tags in conn.execute(
            "SELECT rowid, summary, content, subject, tags FROM memories "
            f"WHERE NOT ({_AS_IS})"):
        rows.append((rowid, *fts_values(summary, content, subject, json.loads(tags))))
        if len(rows) == 5000:
            _index(conn, rows)
            rows = []
    _index(conn, rows)
    return conn.execute("SELECT count(*) FROM memories").fetchone()[0]


def _ascii(column: str) -> str:
    """SQL true when ``column``'s text is ASCII: as many bytes as characters. (A text holding
    NUL counts its characters only up to it, so it is never taken for ASCII.)"""
    return f"length(CAST({column} AS BLOB)) = length({column})"


# The memories whose full-text row is their columns as they stand, given to FTS5 in one
# statement: an ASCII text is what fts_values makes of it (fts_text changes only Han, kana and
# Hangul), and the tags' JSON array text, without an escape, gives unicode61 the tokens of the
# tags joined by spaces, as the quotes, brackets and commas split words as spaces do (also
# relied on by ynm.index.search._fill_candidates). The others go through fts_values in Python.
# At 1M memories, 200,000 rows: 1.4 s in one statement against 3.9 s through Python, the
# same index bytes.
_AS_IS = " AND ".join([*(_ascii(c) for c in ("summary", "content", "coalesce(subject, '')",
                                            "tags")),
                       "instr(tags, char(92)) = 0"])


def _pack_text(value: Any) -> Any:
    """:func:`ynm.index.schema.pack` for a text read from a snapshot (anything else, such as a
    value packed already, is kept)."""
    return schema.pack(value) if isinstance(value, str) else value


def _index(conn: Any, rows: list[tuple[Any, ...]]) -> None:
    if rows:
        conn.executemany(
            "INSERT INTO fts(rowid, summary, content, subject, tags) VALUES (?, ?, ?, ?, ?)",
            rows)


class _Reader:
    """A file-like reader over bytes for zstandard's stream copy (no second copy of them)."""

    def __init__(self, data: bytes) -> None:
        self._view = memoryview(data)
        self._pos = 0

    def read(self, size: int = -1) -> bytes:
        end = len(self._view) if size is None or size < 0 else self._pos + size
        chunk = self._view[self._pos:end]
        self._pos += len(chunk)
        return bytes(chunk)
