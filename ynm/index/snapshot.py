"""A mount's cache state as a snapshot (``state.bin``), and a cold cache started from one.

What a snapshot holds (``state.bin``): a SQLite file, compressed with zstd, with the cache's own
rows as they stood at the shard commits listed in ``meta.json``:

- ``shards``: per shard the notes commit, note blob, byte length, line count, CRC-32 and
  record count the state was built from;
- ``records``: every valid record line (packed as the cache packs them) with its shard ref
  (the cache keeps a number for it, ynm.index.schema ``shard_refs``), so the orphans
  (records whose memory has no base yet) travel too, and any memory can be folded again from
  all its records, across shards;
- ``problems``: the bad lines;
- ``memories``: the folded memories (the columns recall filters on, the ``records`` rowid of
  the current record and what else the folded state holds: ynm.index.schema.state_extra);
- ``embeddings``: the vectors of the memories' texts under the embedder the cache used, when it
  had one, so a clone with the same embedder embeds nothing.

Cold start (:func:`load_into`): a cache file that was never built (absent, or dropped for
another schema version) takes the rows above, indexes the memories' text, then refreshes the
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
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Self

from ynm.index import schema
from ynm.index.schema import fts_values

FORMAT = 1  # meta.json "format"; ynm.store.snapshots.FORMAT, which sync checks, is the same
NAME = f"cache-v{schema.SCHEMA_VERSION}"
# state.bin: zstd level 3 with long-distance matching over a 32 MiB window (a memory's text
# appears in its record line, its folded state and the indexed columns). At 10k memories:
# 21 MB of SQLite to 1.97 MB in 0.2 s, where level 6 alone gave 2.08 MB in 0.3 s and level 19
# 1.3 MB in 19 s (measured here).
ZSTD_LEVEL = 3
ZSTD_WINDOW_LOG = 25

# The tables a snapshot carries: their columns (rowids of memories included: the FTS rows are
# keyed by them; rowids of records too: memories.current points at them). Record lines and what
# the folded states keep besides the columns travel as plain text: zstd over the whole file
# shrinks them ~10x where each packed on its own (as the cache keeps them) shrinks ~2.6x, so
# state.bin is a third of the size, for one pack per row when loaded.
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
    """The statement copying ``table`` from the cache into the snapshot being written."""
    return (f"CREATE TABLE snap.{table} AS SELECT "
            f"{_select(table, 'ynm_unpack', f'{_DUMP_REF} AS ref')} FROM main.{table}")


def _load_sql(table: str) -> str:
    """The statement copying ``table`` from the attached snapshot into the cache."""
    columns = ", ".join("shard" if c == "ref" and table == "records" else c
                        for c in _columns(table))
    return (f"INSERT INTO main.{table}({columns}) SELECT "
            f"{_select(table, 'ynm_pack', _LOAD_SHARD)} FROM snap.{table} AS {table}")


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


def dump(conn: Any, *, anchor: str, level: str, embedder: Any = None) -> DumpedState:
    """The state of a fresh cache (``conn``, a :class:`ynm.index.cache.MountCache`'s
    connection), read in one transaction so rows and shard commits agree.

    Args:
        anchor, level: the mount's, recorded in ``meta.json``.
        embedder: the embedder whose vectors to carry (its :attr:`key` must be the cache's
            ``vec_model``), or None for none.

    Raises:
        sqlite3.Error: the cache cannot be read.
    """
    import zstandard

    from ynm.index.cache import embedding_text

    with tempfile.TemporaryDirectory(prefix="ynm-snapshot-") as tmp:
        path = os.path.join(tmp, "state.sqlite")
        conn.execute("ATTACH DATABASE ? AS snap", (path,))  # not allowed inside a transaction
        try:
            conn.execute("BEGIN")
            try:
                for table in _TABLES:
                    conn.execute(_dump_sql(table))
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
    if meta.get("format") != FORMAT:
        return f"format {meta.get('format')!r}, this ynm reads {FORMAT}"
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


def load_into(conn: Any, meta: dict[str, Any]) -> int:
    """Fill an empty cache, inside the caller's transaction, with the rows of the snapshot
    attached as ``snap`` (:class:`Attached`), and index their text; returns the number of
    memories loaded. The caller then refreshes against the current shard tips (module
    docstring).

    Raises:
        SnapshotUnusable: the attached file lacks the tables and columns above (a damaged or
            foreign snapshot); the caller rolls back, so nothing stays loaded.
    """
    import sqlean as sqlite3

    conn.create_function("ynm_pack", 1, _pack_text, deterministic=True)
    try:
        conn.execute("INSERT INTO main.shard_refs(ref) SELECT DISTINCT ref FROM snap.records "
                     "ORDER BY ref")
        for table in _TABLES:
            conn.execute(_load_sql(table))
        model = meta.get("embedder")
        if isinstance(model, str):
            conn.execute("INSERT OR IGNORE INTO main.embeddings(model, hash, vector) "
                         "SELECT ?, hash, vector FROM snap.embeddings", (model,))
    except sqlite3.Error:
        raise SnapshotUnusable("state.bin is damaged (it does not hold a cache state)") from None
    loaded = 0
    rows = []
    for rowid, summary, content, subject, tags in conn.execute(
            "SELECT rowid, summary, content, subject, tags FROM memories"):
        rows.append((rowid, *fts_values(summary, content, subject, json.loads(tags))))
        loaded += 1
        if len(rows) == 5000:
            _index(conn, rows)
            rows = []
    _index(conn, rows)
    return loaded


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
