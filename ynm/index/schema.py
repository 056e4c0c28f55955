"""Cache schema and connection. A schema version change drops and rebuilds the file: no
migrations (DESIGN.md, "The cache").

Tables:
- ``meta(key, value)``: ``schema_version``, ``anchor``, ``mount``.
- ``shards``: per shard ref, the commit and note blob the cache was built from, the blob's
  byte length, newline count, whether it ends in a newline and its CRC-32 (for tail reads:
  CRC-32 extends over appended bytes without re-reading the old ones), and, when the blob was
  read from a loose file in the layout ynm writes (ynm.store.objects), its mark (NULL when not):
  the length and CRC-32 of its deflated content in that file, the content's Adler-32 and its
  last 32 KiB, so an appended version is read by inflating the appended part alone
  (ynm.store.objects.read_appended_loose).
- ``shard_refs``: a number per shard ref the records came from (``shard``, from 1 in the
  order refs were first met; a rebuild numbers them again), so ``records`` keeps a small
  integer where the ref's ~50 bytes of text, and its index, cost ~10 MB at 100k records.
- ``records``: every valid record line, by record id, with its memory id and shard number
  (``shard_refs.shard``). ``memory_id`` is generated from ``memory_of``, which holds it only
  where it is not the record's own id (:func:`memory_of`). ``line`` is the line's bytes
  compressed (:func:`pack`; read back with :func:`unpack`, or ``ynm_unpack(line)`` in SQL).
  ``records.recorded_at`` and ``memories.created_at``/``updated_at`` hold canonical UTC
  instants (``YYYY-MM-DDTHH:MM:SS.sssZ``, ynm.model.records.normalize_datetime), whatever
  offset a line was written with, so comparing them as text compares instants; they are
  generated from ``recorded_ms``/``created_ms``/``updated_ms``, which hold them as
  milliseconds (:func:`instant`), and compare the same way as numbers (the ``since``/``until``
  filters and ``ORDER BY updated_ms``, ynm.index.search).
- ``problems``: bad lines per shard ref (1-based line number and message).
- ``memories``: one row per folded memory with the columns recall filters on, the indexed
  summary/content, ``current`` (the ``records`` rowid of its current record) and ``extra``:
  what the folded state (cli.md §3.3 shape, without ``mount``) holds besides those columns
  and the current record's line (:func:`state_extra`: links, tombstone reason, dream mark;
  NULL for most memories), packed like ``records.line``. Each text is kept once: readers get
  the state JSON from :func:`state_text` (``ynm_state(...)`` in SQL, :func:`state_sql`),
  byte for byte what folding the records gives.
  ``summary`` is the current record's, or derived from its content when the record has none
  (ynm.model.text.summarize); it is generated from ``summary_head``, which holds its length
  when the content starts with it, as it mostly does (:func:`summary_head`), and
  ``updated_at`` from ``updated_later``, which holds it (in milliseconds, as ``created_ms``)
  only where it is not ``created_at`` (:func:`updated_later`): generated columns are read
  like the others and cost no bytes (at 100k memories these three saved ~12 MB of 100).
  ``updated_ms``, also generated, is the update time in milliseconds: the key of the two
  update-time indexes and what queries order and filter by (an index of the text took twice
  the bytes, and formatting every time for its keys ~1 s per index at 1M memories).
  ``expires_at``: when a working memory's ttl runs out, in milliseconds since the epoch
  (``updatedAt + ttl``; NULL: never expires), so reads leave expired working memory out in
  SQL (ynm.index.search.filter_sql) before any sweep tombstones it.
- ``fts``: contentless FTS5 over summary, content, subject, tags (``porter unicode61``) sharing
  the ``memories`` rowid, fed through ``ynm.model.text.fts_text`` (each Han, kana or Hangul
  character set apart by spaces, so each is a token; ``memories`` keeps the text as written).
  Rows are removed with FTS5's ``'delete'`` command and the old values
  (kept in ``memories``), which undoes their share of the BM25 statistics exactly, so a cache
  updated in place ranks exactly as a rebuilt one. FTS5's ``secure-delete`` option is on, so a
  deleted row's terms leave the index pages too (a purge leaves no trace in the file). It has no id column, so ``bm25(fts, 2.0, 1.0, 1.5, 1.0)`` weighs
  summary 2.0, content 1.0, subject 1.5, tags 1.0 as intended (reference/algorithms.md §8.1
  notes the reference's weights land one column off).
- ``meta`` also holds ``vec_model`` (the key of the embedder the vectors came from) and
  ``vec_failure`` (JSON ``{"reason", "at"}``: the last recall that fell back to full text, for
  ``ynm status``; removed by the next recall whose vector search works).
- ``embeddings``: every vector ever computed, keyed by (model, content hash), where model is
  the embedder's key (name, endpoint and dimension, ynm.index.embedders.Embedder.key), so a
  rebuild or a re-fold never embeds the same text twice and vectors of another length are never
  mixed in.
- ``vectors`` (float32) and ``vector_codes`` (their sign bits), sharing the memories rowid,
  created when vector search is on (``meta.vec_model`` names the embedder). Plain tables scanned
  with sqlite-vec's distance functions: at 100k memories a scan of the sign bits takes ~20 ms
  where a ``vec0`` virtual table took ~70 ms, and rescoring 400 rows by rowid ~1 ms where
  ``vec0`` took ~55 ms (measured here), so ynm keeps no ``vec0`` table.
- ``vector_sum``: one row, the sum and count of the rows of ``vectors``, kept by triggers, so
  the centroid vector search subtracts (see ynm.index.search.vector_search) costs nothing to
  read and is the same however the cache got where it is.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import sqlean as sqlite3

from ynm.model.text import fts_text

# 8: record lines and folded states kept compressed (pack/unpack); 9: the folded state kept as
# what the columns and the current record's line do not hold (state_text); 10: records keep
# their shard as a number (shard_refs); 11: memory ids, update times and summaries that
# repeat another column are generated from it; 12: memory types and levels kept as codes,
# no namespace index; 13: record and creation times kept as milliseconds; 14: the shards'
# loose-file marks (deflated, deflated_crc, adler, window); 15: update times kept and indexed
# as milliseconds (updated_later, updated_ms), instants before 1970 too
SCHEMA_VERSION = 15
BUSY_TIMEOUT_MS = 30_000
# SQLite's result codes for a file damaged inside (SQLITE_CORRUPT) or not a database
# (SQLITE_NOTADB): a cache that gives them is deleted and rebuilt (MountCache.rebuild).
DAMAGED_CODES = (11, 26)

# The memory types and levels (ynm.model.records.MemoryType, Level) that ``memories`` keeps
# as their place in these tuples (``type_code``, ``level_code``: 0 or 1 byte where the name
# took 6 to 11); the generated ``type`` and ``level`` columns read the names. Changing them
# changes what a code means: bump SCHEMA_VERSION with them.
MEMORY_TYPES = ("semantic", "episodic", "procedural", "working", "reflective", "reference")
LEVELS = ("distributed", "personal")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MS = timedelta(milliseconds=1)


def code(value: str, names: tuple[str, ...]) -> int | str:
    """``value``'s place in ``names`` (:data:`MEMORY_TYPES`, :data:`LEVELS`), or ``value``
    itself when it is none of them (the generated column reads it as it is then)."""
    return names.index(value) if value in names else value


def instant(text: str) -> int | str:
    """A canonical UTC instant (``YYYY-MM-DDTHH:MM:SS.sssZ``, ynm.model.records.
    normalize_datetime) as ``records.recorded_ms``/``memories.created_ms``/``updated_later``
    keep it: whole milliseconds since the epoch (negative before 1970; 6 bytes where the text
    takes 24), or the text itself when it is not in that form; the generated
    ``recorded_at``/``created_at``/``updated_at`` columns read the text back either way
    (:func:`_instant_sql`). Every canonical instant is a number, so numbers order as the
    instants do (``memories.updated_ms``, the key of the update-time indexes)."""
    if len(text) == 24 and text[23] == "Z" and text[10] == "T" and text[19] == "." and \
            text[4] == text[7] == "-" and text[13] == text[16] == ":":
        try:  # the canonical form: exactly the instant, in whole milliseconds
            return (datetime.fromisoformat(text) - _EPOCH) // _MS
        except ValueError:
            return text
    return text


def _instant_sql(column: str) -> str:
    """SQL for the instant text a column of :func:`instant` values stands for (integer
    arithmetic only, so every millisecond reads back exactly; the seconds are floored, so an
    instant before 1970 reads back too: SQLite's ``/`` and ``%`` truncate toward zero)."""
    ms = f"(({column} % 1000 + 1000) % 1000)"
    return (f"CASE typeof({column}) WHEN 'integer' THEN strftime('%Y-%m-%dT%H:%M:%S', "
            f"({column} - {ms}) / 1000, 'unixepoch') || printf('.%03dZ', {ms}) "
            f"ELSE {column} END")


def _named(column: str, names: tuple[str, ...]) -> str:
    """SQL for the name a code column (:func:`code`) stands for."""
    cases = " ".join(f"WHEN {i} THEN '{name}'" for i, name in enumerate(names))
    return f"CASE {column} {cases} ELSE {column} END"


# The full-text table: contentless (the memories table holds the text), so a row is deleted by
# FTS5's 'delete' with the values it was indexed with (fts_values).
FTS_DDL = ("CREATE VIRTUAL TABLE fts USING fts5(\n  summary, content, subject, tags,\n"
           "  tokenize = 'porter unicode61', content = ''\n)")
# Deleting a row erases its tokens from the index (not only marks them deleted).
FTS_SECURE_DELETE = "INSERT INTO fts(fts, rank) VALUES ('secure-delete', 1)"
# FTS5's own tables behind ``fts`` (its shadow tables), each with the key it is stored in order
# of: what a snapshot carries of a large mount's index (ynm.index.snapshot).
FTS_SHADOW = {"fts_data": "id", "fts_idx": "segid, term", "fts_docsize": "id",
              "fts_config": "k"}

# A memory's summary from ``summary_head`` and ``content`` (:func:`summary_head`): the
# ``memories.summary`` column, and what a rebuild's temporary rows give the FTS table.
SUMMARY_SQL = ("CASE typeof(summary_head) WHEN 'integer' THEN substr(content, 1, summary_head) "
               "ELSE summary_head END")

DDL = f"""
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE shards (
  ref TEXT PRIMARY KEY,
  commit_id TEXT NOT NULL,
  blob_id TEXT,
  bytes INTEGER NOT NULL DEFAULT 0,
  lines INTEGER NOT NULL DEFAULT 0,
  ends_nl INTEGER NOT NULL DEFAULT 1,
  crc INTEGER NOT NULL DEFAULT 0,
  records INTEGER NOT NULL DEFAULT 0,
  deflated INTEGER,
  deflated_crc INTEGER,
  adler INTEGER,
  window BLOB
);
CREATE TABLE shard_refs (shard INTEGER PRIMARY KEY, ref TEXT NOT NULL UNIQUE);
CREATE TABLE records (
  id TEXT PRIMARY KEY,
  memory_of TEXT,
  memory_id TEXT GENERATED ALWAYS AS (coalesce(memory_of, id)) VIRTUAL,
  shard INTEGER NOT NULL,
  recorded_ms NOT NULL,
  recorded_at TEXT GENERATED ALWAYS AS ({_instant_sql("recorded_ms")}) VIRTUAL,
  op TEXT NOT NULL,
  line BLOB NOT NULL
);
CREATE TABLE problems (ref TEXT NOT NULL, line INTEGER NOT NULL, message TEXT NOT NULL);
CREATE INDEX problems_ref ON problems(ref);
CREATE TABLE memories (
  rowid INTEGER PRIMARY KEY,
  memory_id TEXT NOT NULL,
  type_code NOT NULL,
  type TEXT GENERATED ALWAYS AS ({_named("type_code", MEMORY_TYPES)}) VIRTUAL,
  level_code NOT NULL,
  level TEXT GENERATED ALWAYS AS ({_named("level_code", LEVELS)}) VIRTUAL,
  namespace TEXT NOT NULL,
  subject TEXT,
  tags TEXT NOT NULL,
  data_keys TEXT NOT NULL,
  importance REAL NOT NULL,
  confidence REAL NOT NULL,
  pinned INTEGER NOT NULL,
  needs_review INTEGER NOT NULL,
  tombstoned INTEGER NOT NULL,
  created_ms NOT NULL,
  created_at TEXT GENERATED ALWAYS AS ({_instant_sql("created_ms")}) VIRTUAL,
  updated_later,
  updated_ms GENERATED ALWAYS AS (coalesce(updated_later, created_ms)) VIRTUAL,
  updated_at TEXT GENERATED ALWAYS AS ({_instant_sql("updated_ms")}) VIRTUAL,
  versions INTEGER NOT NULL,
  summary_head NOT NULL,
  summary TEXT GENERATED ALWAYS AS ({SUMMARY_SQL}) VIRTUAL,
  content TEXT NOT NULL,
  current INTEGER NOT NULL,
  extra BLOB,
  expires_at INTEGER
);
{FTS_DDL};
{FTS_SECURE_DELETE};
CREATE TABLE embeddings (
  model TEXT NOT NULL,
  hash TEXT NOT NULL,
  vector BLOB NOT NULL,
  PRIMARY KEY (model, hash)
) WITHOUT ROWID;
"""

# The indexes of ``records`` and ``memories`` (besides their keys), by name: created with the
# tables, and dropped by a full rebuild, which creates each again once its rows are in
# (ynm.index.cache): built from sorted keys it costs less than grown a row at a time, and its
# pages are full (the memory ids come in base order, not id order: grown with the rows, its
# index took ~15% more pages). No index on ``namespace``: its filter (``namespace = ? OR
# namespace LIKE ?``, ynm.index.search.filter_sql) cannot use one (LIKE is case-blind).
RECORD_INDEXES = {
    "records_memory": "CREATE INDEX records_memory ON records(memory_id)",
    "records_shard": "CREATE INDEX records_shard ON records(shard)",
}
MEMORY_INDEXES = {
    "memories_memory_id": "CREATE UNIQUE INDEX memories_memory_id ON memories(memory_id)",
    "memories_updated": "CREATE INDEX memories_updated ON memories(updated_ms)",
    "memories_live_updated": "CREATE INDEX memories_live_updated ON memories(tombstoned, updated_ms)",
    "memories_expires": "CREATE INDEX memories_expires ON memories(expires_at) "
                        "WHERE expires_at IS NOT NULL",
}


VECTOR_DDL = (
    "CREATE TABLE vectors (rowid INTEGER PRIMARY KEY, embedding BLOB NOT NULL)",
    "CREATE TABLE vector_codes (rowid INTEGER PRIMARY KEY, code BLOB NOT NULL)",
    "CREATE TABLE vector_sum (id INTEGER PRIMARY KEY CHECK (id = 0), total BLOB NOT NULL, "
    "count INTEGER NOT NULL)",
    "INSERT INTO vector_sum(id, total, count) VALUES (0, X'', 0)",
    # The sum restarts exactly from the first vector after the table was empty.
    "CREATE TRIGGER vectors_insert AFTER INSERT ON vectors BEGIN "
    "UPDATE vector_sum SET count = count + 1, total = CASE WHEN count = 0 THEN new.embedding "
    "ELSE vec_add(total, new.embedding) END; END",
    "CREATE TRIGGER vectors_delete AFTER DELETE ON vectors BEGIN "
    "UPDATE vector_sum SET count = count - 1, total = CASE WHEN count = 1 THEN X'' "
    "ELSE vec_sub(total, old.embedding) END; END",
    "CREATE TRIGGER vectors_update AFTER UPDATE OF embedding ON vectors BEGIN "
    "UPDATE vector_sum SET total = vec_add(vec_sub(total, old.embedding), new.embedding); END",
)


# The fixed dictionary every packed text is compressed against: the keys and common values of
# record lines and folded states (reference/storage.md §2, cli.md §3.3), so a line of ~540
# bytes packs to ~200 where zstd alone, with no dictionary, gets ~320 (measured on the 100k
# benchmark store). Changing it changes every packed value: bump SCHEMA_VERSION with it.
PACK_DICTIONARY = (
    b'"links":[],"importance":0.5,"confidence":1.0,"pinned":false,"needsReview":false,'
    b'"tombstoned":false,"createdAt":"2026-0","updatedAt":"2026-0","versions":1}'
    b'"provenance":{"actor":"user:","session":"","source":"promoted:"},"links":[{"rel":'
    b'"derives-from","to":"01K"}]}{"memoryId":"01K","current":{"v":1,"id":"01K",'
    b'"memoryId":"01K","op":"create","type":"semantic","level":"distributed",'
    b'"namespace":"common","subject":"entity:","tags":[],"content":"","summary":"",'
    b'"importance":0.,"confidence":1,"recordedAt":"2026-0'
)
_packers: tuple[Any, Any] | None = None


def _codec() -> tuple[Any, Any]:
    global _packers
    if _packers is None:
        import zstandard

        dictionary = zstandard.ZstdCompressionDict(
            PACK_DICTIONARY, dict_type=zstandard.DICT_TYPE_RAWCONTENT)
        # Prepared once for level 3 rather than at every compress: the same bytes, a quarter
        # less time per line (8.5 against 11 us, measured on 50,000 lines of the 100k store).
        dictionary.precompute_compress(level=3)
        _packers = (
            zstandard.ZstdCompressor(level=3, dict_data=dictionary, write_checksum=False,
                                     write_content_size=True, write_dict_id=False),
            zstandard.ZstdDecompressor(dict_data=dictionary),
        )
    return _packers


def pack(text: str) -> bytes:
    """A text (a record line, a folded state's JSON) as the cache keeps it: UTF-8, compressed
    with zstd against :data:`PACK_DICTIONARY` (~2.6x smaller for a record line). The inverse
    is :func:`unpack`."""
    return _codec()[0].compress(text.encode())


# Below this many texts :func:`pack_many` packs them one call at a time: starting the
# compression threads costs more than it saves.
_PACK_MANY_MIN = 64


def pack_many(texts: Sequence[str]) -> list[bytes]:
    """:func:`pack` of each of ``texts``, in order, the same bytes, compressed on every CPU at
    once (python-zstandard's ``multi_compress_to_buffer``) when there are enough of them.
    Used where a whole shard's lines are packed at once (a full rebuild, a snapshot load):
    on 2 cores, 5.3 us a record line against 9.1 us one call at a time (200,000 lines of the
    1M benchmark store). A zstandard without that call (its CFFI backend) packs one at a
    time."""
    codec = _codec()[0]
    if len(texts) < _PACK_MANY_MIN or not hasattr(codec, "multi_compress_to_buffer"):
        return [codec.compress(text.encode()) for text in texts]
    packed = codec.multi_compress_to_buffer([text.encode() for text in texts], threads=-1)
    return [packed[i].tobytes() for i in range(len(texts))]


class TextDamaged(ValueError):
    """A text the cache keeps cannot be read back: a packed text that does not unpack, a
    column NULL or not JSON where ynm wrote one. ynm writes only texts it reads back, so the
    file is damaged (bytes overwritten inside a page, which SQLite's page checks do not
    see). Read through a :class:`CacheConnection` (``ynm_unpack``, ``ynm_state`` in SQL) it
    becomes :class:`CacheDamaged` naming the file; read in Python from a row, the mount
    looks for the damaged text in its cache (ynm.index.cache.MountCache.damaged_text)."""


def unpack(packed: bytes | str | None) -> str | None:
    """The text :func:`pack` was given. A ``str`` (or None) is returned as it is.

    Raises:
        TextDamaged: ``packed`` is not a packed text (a damaged cache file).
    """
    if packed is None or isinstance(packed, str):
        return packed
    try:
        return _codec()[1].decompress(packed).decode()
    except Exception as err:  # zstd's and UTF-8's errors: bytes ynm did not pack
        raise TextDamaged(f"a stored text does not unpack ({type(err).__name__}: {err})") \
            from err


# The ``memories`` columns a folded state is rebuilt from, in :func:`state_text`'s order;
# ``line`` is the current record's packed line (``records.line`` of the row ``current``).
STATE_COLUMNS = ("memory_id", "line", "type", "level", "namespace", "subject", "tags",
                 "importance", "confidence", "pinned", "needs_review", "tombstoned",
                 "created_at", "updated_at", "versions", "extra")
# The state's keys that :func:`state_text` fills from the columns, and the ones only ``extra``
# holds (ynm.model.fold.Memory.to_obj); links are left out of ``extra`` when there are none.
_EXTRA_KEYS = ("links", "tombstoneReason", "dreamed")
_NUMBER_KEYS = ("importance", "confidence")  # REAL columns: a value of another type is extra
_JSON = {"ensure_ascii": False, "separators": (",", ":")}


def state_sql(alias: str = "memories") -> str:
    """SQL for a ``memories`` row's folded state JSON (:func:`state_text`, ``ynm_state``),
    with the table named ``alias`` in the statement."""
    cols = [f"(SELECT line FROM records WHERE records.rowid = {alias}.current)"
            if c == "line" else f"{alias}.{c}" for c in STATE_COLUMNS]
    return f"ynm_state({', '.join(cols)})"


def current_sql(alias: str, path: str) -> str:
    """SQL for ``json_extract(<state>, '$.current<path>')`` of a ``memories`` row (the table
    named ``alias``) without rebuilding the state: from ``extra``'s ``current`` when it holds
    one, else from the current record's line, which :func:`state_extra` found equal to it
    (apart from the float form of ``importance``/``confidence``). ``path`` starts with ``$``."""
    return (f"json_extract(coalesce(json_extract(ynm_unpack({alias}.extra), '$.current'), "
            f"ynm_unpack((SELECT line FROM records WHERE records.rowid = {alias}.current))), "
            f"'{path}')")


def current_text(line: str) -> str:
    """A record line as the folded state's ``current`` holds it, when the line is written the
    way ynm writes it (``dumps_record``): the same keys in the same order, ``importance`` and
    ``confidence`` as floats (Python's ``json.dumps`` writes ``1.0`` where the line has ``1``).
    Any other line (another key order, a time with an offset) gives another text: the caller
    compares (:func:`state_extra`)."""
    obj = json.loads(line)
    for key in _NUMBER_KEYS:
        if type(obj.get(key)) is int:
            obj[key] = float(obj[key])
    return json.dumps(obj, **_JSON)


def _is_current_text(line: str, current: dict[str, Any]) -> bool:
    """Whether :func:`current_text` of ``line`` is ``json.dumps(current)`` (compact, UTF-8),
    without parsing the line in the usual case: ``current`` written with its whole-number
    ``importance``/``confidence`` as integers (as ynm's and JavaScript's writers write
    them) is a JSON text that json reads back to ``current`` with those numbers as integers,
    which :func:`current_text` makes floats again; so a line equal to it qualifies. Any
    other line is parsed and compared (a line with ``\\u`` escapes may still qualify)."""
    whole = {}
    for key in _NUMBER_KEYS:
        value = current.get(key)
        if type(value) is int:  # current_text would make it a float: never the same
            return False
        if type(value) is float and value.is_integer() and math.copysign(1.0, value) > 0:
            whole[key] = int(value)  # not -0.0, which reads back as 0.0
    if line == json.dumps({**current, **whole} if whole else current, **_JSON):
        return True
    return current_text(line) == json.dumps(current, **_JSON)


def state_extra(state: dict[str, Any], line: str) -> bytes | None:
    """What a folded state (``Memory.to_obj()``) keeps besides the ``memories`` columns and
    its current record's line (``line``, as stored): ``links`` when there are any,
    ``tombstoneReason``, ``dreamed``, ``current`` when :func:`current_text` of the line is not
    it, and ``importance``/``confidence`` when not floats; packed (:func:`pack`), or None when
    nothing is left. :func:`state_text` is the inverse."""
    extra = {k: state[k] for k in _EXTRA_KEYS if k in state and (k != "links" or state[k])}
    if not _is_current_text(line, state["current"]):
        extra["current"] = state["current"]
    for key in _NUMBER_KEYS:
        if type(state[key]) is not float:
            extra[key] = state[key]
    return pack(json.dumps(extra, **_JSON)) if extra else None


def state_text(memory_id: str, line: bytes | str, type: str, level: str, namespace: str,
               subject: str | None, tags: str, importance: float, confidence: float,
               pinned: int, needs_review: int, tombstoned: int, created_at: str,
               updated_at: str, versions: int, extra: bytes | str | None) -> str:
    """A memory's folded state JSON (cli.md §3.3 without ``mount``), byte for byte
    ``json.dumps(Memory.to_obj(), ensure_ascii=False, separators=(",", ":"))`` as folded from
    its records: rebuilt from its ``memories`` columns (:data:`STATE_COLUMNS`; ``line`` the
    current record's, packed or not) and ``extra`` (:func:`state_extra`). Every reader of a
    state goes through here (``ynm_state(...)`` in SQL, :func:`state_sql`).

    Raises:
        TextDamaged: ``line`` or ``extra`` is not a packed text, or not the JSON written
            there, or ``line`` or ``tags`` is NULL (a damaged cache file).
    """
    try:
        return _state_text(memory_id, line, type, level, namespace, subject, tags, importance,
                           confidence, pinned, needs_review, tombstoned, created_at,
                           updated_at, versions, extra)
    except TextDamaged:
        raise
    except (ValueError, TypeError, KeyError, AttributeError) as err:
        raise TextDamaged(f"memory {memory_id}: its state cannot be read back "
                          f"({err.__class__.__name__}: {err})") from err  # type: the column


def _state_text(memory_id: str, line: bytes | str, type: str, level: str, namespace: str,
                subject: str | None, tags: str, importance: float, confidence: float,
                pinned: int, needs_review: int, tombstoned: int, created_at: str,
                updated_at: str, versions: int, extra: bytes | str | None) -> str:
    rest = json.loads(unpack(extra)) if extra is not None else {}
    current = rest.pop("current", None)
    obj: dict[str, Any] = {"type": type, "level": level, "namespace": namespace}
    if subject is not None:
        obj["subject"] = subject
    obj.update({"tags": json.loads(tags), "links": [], "importance": importance,
                "confidence": confidence, "pinned": bool(pinned),
                "needsReview": bool(needs_review), "tombstoned": bool(tombstoned),
                "createdAt": created_at, "updatedAt": updated_at, "versions": versions})
    obj.update(rest)  # known keys keep their place; the others follow in to_obj's order
    head = json.dumps({"memoryId": memory_id}, **_JSON)[:-1]
    cur = (json.dumps(current, **_JSON) if current is not None
           else current_text(unpack(line)))  # type: ignore[arg-type]
    return f'{head},"current":{cur},{json.dumps(obj, **_JSON)[1:]}'


def summary_head(summary: str, content: str) -> int | str:
    """``memories.summary_head`` of a memory's summary and indexed content: the summary's
    length in characters when the content starts with it (a summary remember derives is the
    content's first sentence, ynm.model.text.summarize), else the summary itself; the
    generated ``summary`` column gives the summary back either way. A summary holding NUL is
    kept as it is (SQLite's ``substr`` stops at a NUL)."""
    if content.startswith(summary) and "\x00" not in summary:
        return len(summary)
    return summary


def updated_later(created_at: str, updated_at: str) -> int | str | None:
    """``memories.updated_later``: ``updated_at`` as :func:`instant` keeps it when it is not
    ``created_at``, else None (the generated ``updated_ms`` and ``updated_at`` columns read
    ``created_ms`` then)."""
    return None if updated_at == created_at else instant(updated_at)


def memory_of(record_id: str, memory_id: str) -> str | None:
    """``records.memory_of``: a record's memory id when it is not the record's own id (a
    create record's memory id is its id), else None (the generated ``memory_id`` column
    reads ``id`` then)."""
    return None if memory_id == record_id else memory_id


def fts_values(summary: str, content: str, subject: str | None,
               tags: Sequence[str]) -> tuple[str, str, str, str]:
    """The FTS row of a memory (summary, content, subject, tags), the same for its insert, its
    ``'delete'`` and the word-share table of ynm.index.search.coverage: ``subject`` ``""``
    when none, tags joined by spaces (algorithms.md §2.3), each through
    :func:`ynm.model.text.fts_text` so Han, kana and Hangul are searched by their
    characters."""
    return (fts_text(summary), fts_text(content), fts_text(subject or ""),
            fts_text(" ".join(tags)))


def create_vector_tables(conn: sqlite3.Connection) -> None:
    """(Re)create ``vectors``, ``vector_codes`` and ``vector_sum`` with its triggers, empty
    (inside the caller's transaction; sqlite-vec must be loaded, the triggers call it)."""
    for table in ("vec", "vectors", "vector_codes", "vector_sum"):  # vec: an old vec0 table
        # main. named: a name missing from main is looked for in every attached database,
        # which holds a read lock on it to the end of the transaction (a rebuild's staging)
        conn.execute(f"DROP TABLE IF EXISTS main.{table}")
    for statement in VECTOR_DDL:
        conn.execute(statement)


def connect(path: Path | str) -> CacheConnection:
    """Open (creating if needed) a cache file with WAL, a busy timeout and the current schema.

    A file that is not a database, or holds another schema version, is deleted and created
    afresh: the cache is derived data. When the file was damaged (SQLite's SQLITE_CORRUPT or
    SQLITE_NOTADB while it is opened: a header or schema page overwritten, a file of random
    bytes), the new connection's ``replaced`` holds SQLite's message, for the caller to say
    so; a file of another schema version, or one whose vector table this process cannot
    load, is replaced without a message. An empty (zero-length) file is an empty database, as
    SQLite creates every file: it is built like a missing one. ``":memory:"`` gives a private
    in-memory cache.
    """
    if str(path) != ":memory:":
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    damaged, conn = None, None
    try:
        conn = _open(path)
        version = _schema_version(conn)
        if version == SCHEMA_VERSION:
            return conn
        if version is None and _is_empty(conn):
            _create(conn)
            return conn
        conn.close()
    except sqlite3.DatabaseError as err:
        if conn is not None:
            conn.close()
        if is_damaged(err):
            damaged = str(err)
    remove(path)
    conn = _open(path)
    _create(conn)
    conn.replaced = damaged
    return conn


def copy_fts(conn: Any, source: str) -> bool:
    """Take a full-text index built elsewhere (FTS5's shadow tables, :data:`FTS_SHADOW`, in
    the attached schema ``source``: a snapshot's, or one a rebuild's worker built) as the
    cache's own, inside the caller's transaction; returns False, changing nothing, when
    ``source`` has none, or one of another FTS5 file format (its ``fts_config`` version), so
    the caller indexes the memories itself.

    The copy is made into a table created afresh: FTS5 keeps the index structure it last read
    for as long as the table stays open in a connection and does not see rows written around
    it in that connection, so a table that was never read sees only the copied index."""
    tables = {name for (name,) in conn.execute(
        f"SELECT name FROM {source}.sqlite_master WHERE type = 'table'")}
    if not tables >= FTS_SHADOW.keys():
        return False
    version = "SELECT v FROM {}.fts_config WHERE k = 'version'"
    if (conn.execute(version.format(source)).fetchone()
            != conn.execute(version.format("main")).fetchone()):
        return False
    conn.execute("DROP TABLE main.fts")
    conn.execute(FTS_DDL)
    for table, key in FTS_SHADOW.items():
        conn.execute(f"DELETE FROM main.{table}")
        conn.execute(f"INSERT INTO main.{table} SELECT * FROM {source}.{table} ORDER BY {key}")
    return True


class CacheDamaged(sqlite3.DatabaseError):
    """SQLite's report that a cache file is damaged inside or is not a database
    (:data:`DAMAGED_CODES`), raised by a :class:`CacheConnection` for any statement or row
    read from it, at open or mid-query, with the file's ``path`` and SQLite's ``message``
    (``sqlite_errorcode``/``sqlite_errorname`` as SQLite gave them; SQLITE_CORRUPT for a
    text that cannot be read back, :class:`TextDamaged`). It is a
    ``sqlite3.DatabaseError``, so code that handles those handles it too; the mount the file
    belongs to deletes and rebuilds it (ynm.service.mounts.Mount.recover)."""

    def __init__(self, path: str, err: sqlite3.DatabaseError | str) -> None:
        self.path = path
        self.message = str(err)
        super().__init__(self.message)
        self.sqlite_errorcode = getattr(err, "sqlite_errorcode", DAMAGED_CODES[0])
        self.sqlite_errorname = getattr(err, "sqlite_errorname", "SQLITE_CORRUPT")


def _damaged(conn: Any, err: sqlite3.DatabaseError) -> sqlite3.DatabaseError:
    """``err``, met on ``conn``, as a :class:`CacheDamaged` of its file when it reports a
    damaged file, else ``err`` itself: SQLite's corruption codes; a text column that is not
    UTF-8 (ynm writes only UTF-8); one of ynm's functions (``ynm_unpack``, ``ynm_state``)
    that failed on a text it cannot read back (:class:`TextDamaged`)."""
    if isinstance(err, CacheDamaged):
        return err
    path = getattr(conn, "path", "")
    told = getattr(conn, "damaged_text", None)
    if is_damaged(err):
        return CacheDamaged(path, err)
    text = str(err)
    if told is not None and told[0] and "user-defined function raised exception" in text:
        message, told[0] = told[0], None
        return CacheDamaged(path, message)
    if text.startswith("Could not decode to UTF-8"):
        return CacheDamaged(path, text)
    return err


class CacheCursor(sqlite3.Cursor):
    """A cursor that reports a damaged file as :class:`CacheDamaged` for every statement it
    runs and every row it reads (a damaged page is found when a query reaches it)."""

    def execute(self, *args: Any) -> Any:
        try:
            return super().execute(*args)
        except sqlite3.DatabaseError as err:
            raise _damaged(self.connection, err) from err

    def executemany(self, *args: Any) -> Any:
        try:
            return super().executemany(*args)
        except sqlite3.DatabaseError as err:
            raise _damaged(self.connection, err) from err

    def __next__(self) -> Any:
        try:
            return super().__next__()
        except sqlite3.DatabaseError as err:
            raise _damaged(self.connection, err) from err

    def fetchone(self) -> Any:
        try:
            return super().fetchone()
        except sqlite3.DatabaseError as err:
            raise _damaged(self.connection, err) from err

    def fetchmany(self, *args: Any, **kwargs: Any) -> list[Any]:
        try:
            return super().fetchmany(*args, **kwargs)
        except sqlite3.DatabaseError as err:
            raise _damaged(self.connection, err) from err

    def fetchall(self) -> list[Any]:
        try:
            return super().fetchall()
        except sqlite3.DatabaseError as err:
            raise _damaged(self.connection, err) from err


class CacheConnection(sqlite3.Connection):
    """A connection to one cache file (``path``) that remembers whether sqlite-vec loaded
    (``vec_problem`` is None then), and whether it replaced a damaged file (``replaced``:
    SQLite's message, see :func:`connect`). Every statement and row read through it reports a
    damaged file as :class:`CacheDamaged` (:class:`CacheCursor`): the one place where damage
    is told apart from other database errors."""

    vec_problem: str | None = "not tried"
    replaced: str | None = None
    path: str = ""
    # [message] of the last TextDamaged one of ynm's SQL functions raised, which SQLite
    # reports only as "user-defined function raised exception" (None: none pending)
    damaged_text: list[str | None] | None = None

    def cursor(self, factory: Any = CacheCursor) -> Any:
        return super().cursor(factory)

    def create_function(self, name: str, narg: int, func: Any, *,
                        deterministic: bool = False) -> None:
        """Register an SQL function, as sqlite3 does, and remember it for :meth:`close`."""
        super().create_function(name, narg, func, deterministic=deterministic)
        self.__dict__.setdefault("_functions", set()).add((name, narg))

    def close(self) -> None:
        """Close the connection, first letting go of ynm's SQL functions while the GIL is held.

        SQLite frees a function's Python callable when the connection is really closed, and
        a statement still held elsewhere (a cursor in a traceback, say, after an error) defers
        that until the statement is finalized, which sqlean.py does with the GIL released:
        freeing a Python object there aborts the process ("PyThreadState_Get: the function must
        be called with the GIL held"), later, during some garbage collection. Registering None
        in each function's place frees the callable now; None itself is never freed. A
        function a running statement still uses cannot be replaced: the garbage that may hold
        that statement is collected first, and if it still runs, the function is left be."""
        for name, narg in self.__dict__.pop("_functions", ()):
            for attempt in range(2):
                try:
                    super().create_function(name, narg, None)
                except sqlite3.OperationalError:  # a running statement uses it
                    if attempt == 0:
                        import gc

                        gc.collect()
                        continue
                break
        super().close()

    def __del__(self) -> None:
        # a connection dropped without close(): its functions are let go as close() does
        with contextlib.suppress(Exception):
            self.close()

    def execute(self, *args: Any) -> Any:
        try:
            return super().execute(*args)
        except sqlite3.DatabaseError as err:
            raise _damaged(self, err) from err

    def executemany(self, *args: Any) -> Any:
        try:
            return super().executemany(*args)
        except sqlite3.DatabaseError as err:
            raise _damaged(self, err) from err


def _open(path: Path | str) -> CacheConnection:
    conn = sqlite3.connect(str(path), timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None,
                           factory=CacheConnection)
    conn.path = str(path)
    conn.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
    if str(path) != ":memory:":
        conn.execute("PRAGMA journal_mode = WAL")
    conn.execute("PRAGMA synchronous = NORMAL")
    # a page whose cell offsets were overwritten is reported damaged (and rebuilt) instead of
    # yielding other bytes as rows: recall and list silently lost memories to such a page
    # (tests/cli/test_damaged_cache.py); no cost measured at 100k memories
    conn.execute("PRAGMA cell_size_check = ON")
    # ``ynm_unpack(line)`` / ``ynm_unpack(extra)``: the packed texts; ``ynm_state``: a state.
    told: list[str | None] = [None]
    conn.damaged_text = told
    conn.create_function("ynm_unpack", 1, _telling(unpack, told), deterministic=True)
    conn.create_function("ynm_state", len(STATE_COLUMNS), _telling(state_text, told),
                         deterministic=True)
    has_vec_table = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE name IN ('vec', 'vector_codes')").fetchone() is not None
    # sqlite-vec loads only where vectors are kept (or asked for: MountCache.vector_problem),
    # so a full-text-only process pays nothing for it.
    if has_vec_table and load_vec(conn) is not None:
        # A vector table this process cannot maintain: the file is derived, start afresh.
        conn.close()
        raise sqlite3.DatabaseError("cache has a vector table but sqlite-vec cannot load")
    return conn


def _telling(fn: Any, told: list[str | None]) -> Any:
    """``fn`` as an SQL function that, when it fails on a damaged text
    (:class:`TextDamaged`), leaves the reason in ``told[0]`` for the connection to report
    (SQLite passes on only that a function failed)."""
    def call(*args: Any) -> Any:
        try:
            return fn(*args)
        except TextDamaged as err:
            told[0] = str(err)
            raise
    return call


def load_vec(conn: CacheConnection) -> str | None:
    """Load the sqlite-vec extension into ``conn``; returns why not, or None when loaded."""
    import importlib.util

    # The extension's path, found without importing the sqlite_vec package (which imports
    # numpy: a tenth of a second on every command).
    spec = importlib.util.find_spec("sqlite_vec")
    if spec is None or not spec.submodule_search_locations:
        from ynm.errors import pip_install

        conn.vec_problem = f"sqlite-vec is not installed: {pip_install('vector')}"
        return conn.vec_problem
    extension = os.path.join(list(spec.submodule_search_locations)[0], "vec0")
    try:
        conn.enable_load_extension(True)
        conn.load_extension(extension)
        conn.enable_load_extension(False)
    except (AttributeError, sqlite3.Error) as err:
        conn.vec_problem = f"sqlite-vec cannot load: {err}"
        return conn.vec_problem
    conn.vec_problem = None
    return None


def _schema_version(conn: sqlite3.Connection) -> int | None:
    row = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name = 'meta'"
    ).fetchone()
    if row is None:
        return None
    got = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    return int(got[0]) if got else -1


def _is_empty(conn: sqlite3.Connection) -> bool:
    return conn.execute("SELECT count(*) FROM sqlite_master").fetchone()[0] == 0


def _create(conn: sqlite3.Connection) -> None:
    conn.execute("BEGIN IMMEDIATE")
    try:
        if _schema_version(conn) != SCHEMA_VERSION:
            for stmt in DDL.split(";\n"):
                if stmt.strip():
                    conn.execute(stmt)
            for stmt in (*RECORD_INDEXES.values(), *MEMORY_INDEXES.values()):
                conn.execute(stmt)
            conn.execute(
                "INSERT INTO meta(key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),)
            )
        conn.execute("COMMIT")
    except BaseException:
        rollback(conn)
        raise


def is_damaged(err: BaseException) -> bool:
    """Whether ``err`` is SQLite's report of a file damaged inside or not a database
    (:data:`DAMAGED_CODES`, extended codes such as SQLITE_CORRUPT_VTAB included): a cache
    that gives it is deleted and rebuilt from git."""
    code = getattr(err, "sqlite_errorcode", None)
    return isinstance(code, int) and code & 0xFF in DAMAGED_CODES


def rollback(conn: sqlite3.Connection) -> None:
    """Roll back the open transaction, if one is still open. An error or a Ctrl-C inside a
    statement (a COMMIT among them) may have ended it already, and a failing ``ROLLBACK``
    ("cannot rollback - no transaction is active") would hide the error that led here."""
    if conn.in_transaction:
        conn.execute("ROLLBACK")


def remove(path: Path | str) -> None:
    """Delete a cache file with its WAL and shared-memory files (none for ``:memory:``)."""
    if str(path) == ":memory:":
        return
    for suffix in ("", "-wal", "-shm"):
        try:
            os.remove(f"{path}{suffix}")
        except FileNotFoundError:
            pass


def get_meta(conn: sqlite3.Connection, key: str) -> str | None:
    """A value of the ``meta`` table, or None."""
    row = conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return row[0] if row else None


def set_meta(conn: sqlite3.Connection, key: str, value: Any) -> None:
    """Set a value of the ``meta`` table (inside the caller's transaction)."""
    conn.execute(
        "INSERT INTO meta(key, value) VALUES (?, ?) "
        "ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        (key, str(value)),
    )
