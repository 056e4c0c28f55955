"""Candidate search over one mount's cache: FTS5 with BM25 for text, SQL filters for the rest.

Build the SQL in one function and run it in another (like sqlite-utils' ``search_sql`` and
``search``), so the statement can be read and tested as text.

Filters (reference/algorithms.md §2.3.3), all in the same statement: tombstoned excluded unless
asked, and so is working memory past its ttl when the query carries ``now_ms``; type and level
membership; namespace as a whole-segment prefix
(``namespace = ? OR namespace LIKE ? ESCAPE '\\'`` with ``%``, ``_`` and ``\\`` escaped, which the
reference gets wrong, §8.2); exact subject; every required tag present; no excluded tag present;
a data key present; ``updatedAt`` within since/until (inclusive, compared as milliseconds,
``updated_ms``: both sides are canonical UTC ``YYYY-MM-DDTHH:MM:SS.sssZ`` instants, the column
as the cache stores it, the bounds as :mod:`ynm.model.inputs` normalises them); pinned only.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from json import dumps as json_dumps
from json import loads as json_loads
from typing import Any

import sqlean as sqlite3

from ynm.index.schema import instant
from ynm.model.text import fts_text, is_word_phrase, phrase_words

# Column weights for bm25(): summary, content, subject, tags (algorithms.md §2.3.1 intent).
BM25_WEIGHTS = (2.0, 1.0, 1.5, 1.0)
BM25_K1 = 1.2  # FTS5's bm25 constants (sqlite/ext/fts5/fts5_aux.c, fts5Bm25Function)
BM25_B = 0.75
PRUNE_FROM_ROWS = 2000  # below this many phrase hits, scoring every match is cheap enough
# _pruned() scores at most this many rows (the holders of the rarest phrases) before it leaves
# the question to the full statement
PRUNE_MAX_SCORED = 6000
# A long question searches at most this many distinct words and this many adjacent pairs: its
# most selective ones (see select_phrases()). Every query of benchmarks/quality.py fits.
MAX_QUERY_WORDS = 16
MAX_QUERY_PAIRS = 16
# Choosing those counts each word's memories only up to this many; the count of a word held
# by more is estimated from where its doclist reaches that many (see _estimated_hits()).
SELECT_COUNT_BOUND = 256
COARSE_CANDIDATES = 400  # sign-bit neighbours rescored exactly by vector_search
# The centroid subtracted before cosine is the sum of the mount's vectors over (count + this):
# a store of a few memories is barely centred, so one memory never cancels itself out.
CENTROID_PRIOR = 10


@dataclass(slots=True)
class SearchQuery:
    """One mount's candidate query. ``match`` is an FTS5 MATCH string (None: filter only);
    ``phrases`` are its OR-ed quoted phrases, which let :func:`search` prune (see there).
    ``since``/``until`` must be canonical UTC date-times (ynm.model.records.normalize_datetime).

    ``now_ms``: the reader's clock (ms since the epoch) for leaving out expired working
    memory; ``working_session``: the only ``session/<id>`` whose working memory may show
    (see :func:`filter_sql`)."""

    match: str | None = None
    phrases: Sequence[str] = ()
    types: Sequence[str] = ()
    levels: Sequence[str] = ()
    namespace: str | None = None
    subject: str | None = None
    tags: Sequence[str] = ()
    exclude_tags: Sequence[str] = ()
    data_key: str | None = None
    since: str | None = None
    until: str | None = None
    pinned_only: bool = False
    include_tombstoned: bool = False
    needs_review: bool | None = None
    now_ms: int | None = None
    working_session: str | None = None
    limit: int = 40
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Candidate:
    """A memory found by search: its cache rowid, id, and relevance in 0..1 (the best text hit
    of the mount is exactly 1; filter-only candidates all have 1)."""

    rowid: int
    memory_id: str
    relevance: float


def like_escape(value: str) -> str:
    """Escape ``\\``, ``%`` and ``_`` for ``LIKE ... ESCAPE '\\'``."""
    return value.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def filter_parts(q: SearchQuery, alias: str = "m") -> list[tuple[str, str, list[Any]]]:
    """The WHERE conditions of ``q``, each as ``(name, SQL, parameters)``: ``name`` is the
    :class:`SearchQuery` field that asked for it, one entry per tag of ``tags`` and
    ``exclude_tags``; without ``include_tombstoned``, ``tombstoned`` for the condition that
    leaves forgotten memories out and, with ``now_ms``, ``expired`` for the one that leaves
    out working memory past its ttl that no expire pass has tombstoned yet (a forgotten
    memory fails only the first, so :func:`excluded_by` tells expiry from forgetting; joined,
    the two leave out what ``tombstoned = 0 AND (expires_at IS NULL OR expires_at > now)``
    does). :func:`filter_sql` joins them; :func:`excluded_by` asks them one at a time."""
    parts: list[tuple[str, str, list[Any]]] = []
    if not q.include_tombstoned:
        parts.append(("tombstoned", f"{alias}.tombstoned = 0", []))
        if q.now_ms is not None:
            live = (f"({alias}.tombstoned != 0 OR {alias}.expires_at IS NULL "
                    f"OR {alias}.expires_at > ?)")
            parts.append(("expired", live, [q.now_ms]))
    if q.working_session is not None:
        # only this session's working memory (working memory lives in session/<id>)
        mine = (f"({alias}.type != 'working' OR {alias}.namespace = ? "
                f"OR {alias}.namespace LIKE ? ESCAPE '\\')")
        parts.append(("working_session", mine,
                      [q.working_session, like_escape(q.working_session) + "/%"]))
    if q.types:
        parts.append(("types", f"{alias}.type IN ({', '.join('?' * len(q.types))})",
                      list(q.types)))
    if q.levels:
        parts.append(("levels", f"{alias}.level IN ({', '.join('?' * len(q.levels))})",
                      list(q.levels)))
    if q.namespace:
        parts.append(("namespace",
                      f"({alias}.namespace = ? OR {alias}.namespace LIKE ? ESCAPE '\\')",
                      [q.namespace, like_escape(q.namespace) + "/%"]))
    if q.subject is not None:
        parts.append(("subject", f"{alias}.subject = ?", [q.subject]))
    for tag in q.tags:
        parts.append(("tags", f"EXISTS (SELECT 1 FROM json_each({alias}.tags) WHERE value = ?)",
                      [tag]))
    for tag in q.exclude_tags:
        parts.append(("exclude_tags",
                      f"NOT EXISTS (SELECT 1 FROM json_each({alias}.tags) WHERE value = ?)",
                      [tag]))
    if q.data_key is not None:
        parts.append(("data_key",
                      f"EXISTS (SELECT 1 FROM json_each({alias}.data_keys) WHERE value = ?)",
                      [q.data_key]))
    if q.since is not None:
        parts.append(("since", *updated_compared(alias, ">=", q.since)))
    if q.until is not None:
        parts.append(("until", *updated_compared(alias, "<=", q.until)))
    if q.pinned_only:
        parts.append(("pinned_only", f"{alias}.pinned = 1", []))
    if q.needs_review is not None:
        parts.append(("needs_review", f"{alias}.needs_review = ?", [int(q.needs_review)]))
    return parts


def updated_compared(alias: str, op: str, value: str) -> tuple[str, list[Any]]:
    """SQL comparing a memory's update time with the instant ``value`` (``op``: ``<``,
    ``<=``, ``>=``...) and its parameter: by ``updated_ms``, which the update-time indexes
    hold, when ``value`` is canonical (ynm.index.schema.instant gives milliseconds), else by
    the ``updated_at`` text."""
    ms = instant(value)
    if isinstance(ms, int):
        return f"{alias}.updated_ms {op} ?", [ms]
    return f"{alias}.updated_at {op} ?", [value]


def filter_sql(q: SearchQuery, alias: str = "m") -> tuple[str, list[Any]]:
    """The WHERE conditions of ``q`` joined by AND (``"1"`` when none) and their parameters.

    With ``q.now_ms`` (milliseconds since the epoch) and without ``include_tombstoned``,
    working memory whose ttl has run out (``expires_at <= now_ms``) is left out as if the
    expire pass had already tombstoned it (reference/algorithms.md §4.6); with
    ``include_tombstoned`` it stays, like a tombstoned memory. With ``q.working_session``
    (``session/<id>``) working memory outside that namespace is left out (a session start's
    context block holds no other session's working memory)."""
    parts = filter_parts(q, alias)
    return (" AND ".join(sql for _, sql, _ in parts) or "1",
            [arg for _, _, args in parts for arg in args])


def excluded_by(conn: sqlite3.Connection, phrases: Sequence[str], q: SearchQuery) -> set[str]:
    """The conditions of ``q`` (:func:`filter_parts` names: ``tombstoned``, ``expired``,
    ``types``, ``namespace``, ...) that each leave out at least one memory holding one of
    ``phrases`` (quoted FTS5 phrases, matched as FTS5 ``OR``): how a recall that found
    nothing tells which of its filters, and whether forgetting or a working memory's expiry,
    kept the question's words away. One
    ``LIMIT 1`` query per condition; a memory failing a condition by a missing value (no
    subject for ``--subject``) counts as left out. Empty without phrases."""
    if not phrases:
        return set()
    match = " OR ".join(phrases)
    out: set[str] = set()
    for name, sql, args in filter_parts(q):
        if name in out:
            continue
        row = conn.execute(
            "SELECT 1 FROM fts JOIN memories m ON m.rowid = fts.rowid "
            f"WHERE fts MATCH ? AND COALESCE(({sql}), 0) = 0 LIMIT 1", [match, *args]).fetchone()
        if row is not None:
            out.add(name)
    return out


def search_sql(q: SearchQuery) -> tuple[str, list[Any]]:
    """The SQL for ``q`` and its parameters. Text: FTS5 MATCH joined to memories, ordered by
    bm25 with :data:`BM25_WEIGHTS`; filter only: newest ``updatedAt`` first."""
    cond, args = filter_sql(q)
    if q.match is None:
        sql = (
            f"SELECT m.rowid, m.memory_id, 1.0 FROM memories m WHERE {cond} "
            f"ORDER BY m.updated_ms DESC, m.memory_id DESC LIMIT ?"
        )
        return sql, [*args, q.limit]
    weights = ", ".join(str(w) for w in BM25_WEIGHTS)
    sql = (
        f"SELECT m.rowid, m.memory_id, bm25(fts, {weights}) AS rank "
        f"FROM fts JOIN memories m ON m.rowid = fts.rowid "
        f"WHERE fts MATCH ? AND {cond} ORDER BY rank, m.memory_id DESC LIMIT ?"
    )
    return sql, [q.match, *args, q.limit]


def _bm25_idf(rows: int, hits: int) -> float:
    # FTS5's bm25 (fts5_aux.c): idf = ln((N - n + 0.5) / (n + 0.5)), floored at 1e-6.
    idf = math.log((rows - hits + 0.5) / (hits + 0.5))
    return idf if idf > 0 else 1e-6


def _estimated_hits(conn: sqlite3.Connection, phrase: str, bound: int,
                    last_rowid: int) -> tuple[int, bool]:
    """How many memories hold ``phrase``: ``(count, True)`` when fewer than ``bound`` do,
    else ``(estimate, False)``. The count stops at the ``bound``-th memory, so a common word
    costs no more than a rare one; its estimate is ``bound`` scaled by how far through the
    rowids (1..``last_rowid``) that memory lies, never below ``bound``."""
    n, at = conn.execute(
        "SELECT count(*), max(rowid) FROM (SELECT rowid FROM fts WHERE fts MATCH ? LIMIT ?)",
        (phrase, bound)).fetchone()
    if n < bound:
        return n, True
    return max(bound, round(bound * last_rowid / max(at, 1))), False


def _most_selective(conn: sqlite3.Connection, phrases: Sequence[str], cap: int,
                    hits: dict[str, int]) -> list[str]:
    """The ``cap`` phrases of ``phrases`` held by the fewest memories and by at least one, in
    their order in ``phrases``; exact counts (those below :data:`SELECT_COUNT_BOUND`) go to
    ``hits``."""
    counted = {}
    for p, (n, exact) in _bounded_counts(conn, phrases).items():
        counted[p] = n
        if exact:
            hits[p] = n
    held = [i for i, p in enumerate(phrases) if counted[p]]
    keep = set(sorted(held, key=lambda i: (counted[phrases[i]], i))[:cap])
    return [p for i, p in enumerate(phrases) if i in keep]


def held_counts(conn: sqlite3.Connection, phrases: Sequence[str]) -> dict[str, int]:
    """How many memories of the mount hold each of ``phrases`` (quoted FTS5 phrases), for
    those that some memory holds, in the order of ``phrases``: exact below
    :data:`SELECT_COUNT_BOUND`, estimated above it (:func:`_estimated_hits`), so a common word
    costs no more than a rare one. Forgotten memories count, as in BM25's counts."""
    return {p: n for p, (n, _) in _bounded_counts(conn, phrases).items() if n}


def _bounded_counts(conn: sqlite3.Connection, phrases: Sequence[str]
                    ) -> dict[str, tuple[int, bool]]:
    """:func:`_estimated_hits` of each of ``phrases`` at :data:`SELECT_COUNT_BOUND`:
    ``(count, exact)`` by phrase, in the order of ``phrases``."""
    last = conn.execute("SELECT max(rowid) FROM fts").fetchone()[0] or 0
    return {p: _estimated_hits(conn, p, SELECT_COUNT_BOUND, last) for p in phrases}


def select_phrases(conn: sqlite3.Connection, phrases: Sequence[str]
                   ) -> tuple[list[str], dict[str, int]]:
    """The phrases a question is searched with, bounded: ``(phrases, hits)``, where ``hits``
    maps some of them to the number of memories holding them (counts taken on the way).

    ``phrases`` are single words and adjacent pairs (ynm.model.text.is_word_phrase tells
    them apart), as ynm.model.text.query_phrases gives them. Up to :data:`MAX_QUERY_WORDS` distinct words and
    :data:`MAX_QUERY_PAIRS` pairs, all are kept unchanged. Beyond either, a long question
    keeps its most selective words: those held by the fewest memories (the highest BM25 IDF),
    at most :data:`MAX_QUERY_WORDS`, leaving out words no memory holds (they match nothing);
    then, of the pairs made only of kept words, the :data:`MAX_QUERY_PAIRS` rarest ones held
    by some memory. The work of a search, which runs statements per phrase (counts for BM25's
    bounds, :func:`_pruned`, :func:`coverage`), is then bounded whatever the question's length:
    a 2,000-character paragraph costs about as much as a five-word question (benchmarks/
    bench.py, "recall, 2,000-character query").
    """
    words = [p for p in dict.fromkeys(phrases) if is_word_phrase(p)]
    pairs = [p for p in dict.fromkeys(phrases) if not is_word_phrase(p)]
    hits: dict[str, int] = {}
    if len(words) <= MAX_QUERY_WORDS and len(pairs) <= MAX_QUERY_PAIRS:
        return [*words, *pairs], hits
    if len(words) > MAX_QUERY_WORDS:
        words = _most_selective(conn, words, MAX_QUERY_WORDS, hits)
        kept = {phrase_words(w)[0] for w in words}
        pairs = [p for p in pairs
                 if all(w in kept for w in phrase_words(p) if len(w) > 1)
                 and any(len(w) > 1 for w in phrase_words(p))]
    if len(pairs) > MAX_QUERY_PAIRS:
        pairs = _most_selective(conn, pairs, MAX_QUERY_PAIRS, hits)
    return [*words, *pairs], hits


def _pruned(conn: sqlite3.Connection, q: SearchQuery) -> list[Any] | None:
    """The exact top ``q.limit`` rows of a many-phrase OR query, as :func:`search_sql` gives
    them (``(rowid, memory id, rank)``, same order, same ranks), found by scoring only the
    rows that hold one of its rarest phrases; None when that cannot be proven exact.

    BM25 is a sum over phrases, and one phrase adds less than ``idf * (k1 + 1)`` to any row
    (k1 = 1.2). The phrases are taken rarest first (highest bound first): when the ``limit``-th
    best score among the rows holding one of the first ``j`` beats the sum of the bounds of
    all the others, no other row can enter the top ``limit``, not even on a tie (the MaxScore
    argument); else ``j`` grows, up to :data:`PRUNE_MAX_SCORED` rows scored in all, after
    which the full statement is cheaper.

    The rows are scored by :func:`_bm25_groups`, not by FTS5's ``bm25()``: that function
    counts every phrase's memories over the whole index in each statement that calls it
    (fts5_aux.c, ``fts5Bm25GetData``), 170 ms for "feature flags on call rotation" at 1M
    memories even when it scores one row, and the counts are known here already
    (:func:`phrase_counts`), as are the rowids of the rare phrases (:func:`phrase_holders`).
    """
    phrases = list(q.phrases)
    if len(phrases) < 2:
        return None
    known = q.extra.get("hits", {})
    counted = phrase_counts(conn, [p for p in phrases if p not in known])
    hits = [known[p] if p in known else counted[p] for p in phrases]
    q.extra["hits"] = dict(zip(phrases, hits))  # for coverage(), which needs them again
    if sum(hits) <= PRUNE_FROM_ROWS:
        return None
    rows, avgdl = fts_stats(conn)
    idfs = [_bm25_idf(rows, n) for n in hits]
    bound = [_phrase_bound(idf) for idf in idfs]
    order = sorted(range(len(phrases)), key=lambda i: hits[i])
    scored: list[tuple[float, str, str]] = []
    seen: set[int] = set()
    for j in range(1, len(phrases)):
        if sum(hits[i] for i in order[:j]) > PRUNE_MAX_SCORED:
            return None
        rest = sum(bound[i] for i in order[j:]) * (1 + 1e-9)
        holders = phrase_holders(conn, phrases[order[j - 1]])
        if holders is None:  # held by more than PRUNE_MAX_SCORED after all (a stale count)
            return None
        new = [r for r in holders if r not in seen]
        seen.update(new)
        scored.extend(_bm25_groups(conn, q, phrases, idfs, avgdl, new))
        top = _top_rows(scored, q.limit)
        if len(top) == q.limit and -top[-1][2] > rest:
            return top
    return None


def _phrase_bound(idf: float) -> float:
    """A bound, never reached, on what one phrase of IDF ``idf`` adds to a row's BM25 score:
    its term ``idf * f * (k1 + 1) / (f + k1 * (...))`` tends to ``idf * (k1 + 1)`` as ``f``
    grows (fts5_aux.c, ``fts5Bm25Function``)."""
    return idf * (BM25_K1 + 1)


def _top_rows(groups: Sequence[tuple[float, str, str]], limit: int
              ) -> list[tuple[int, str, float]]:
    """The best ``limit`` rows ``(rowid, memory id, rank)`` of ``groups`` (as
    :func:`_bm25_groups` gives them) in :func:`search_sql`'s order: rank ascending, then
    memory id descending. Only the groups up to the ``limit``-th row's rank are unpacked."""
    picked = []
    count = 0
    for rank, rowids, memory_ids in sorted(groups, key=lambda g: g[0]):
        if count >= limit and rank != picked[-1][0]:
            break
        picked.append((rank, rowids, memory_ids))
        count += rowids.count(",") + 1
    rows = [(int(rowid), memory_id, rank) for rank, rowids, memory_ids in picked
            for rowid, memory_id in zip(rowids.split(","), memory_ids.split(","))]
    rows.sort(key=lambda r: r[1], reverse=True)
    rows.sort(key=lambda r: r[2])
    return rows[:limit]


def _bm25_groups(conn: sqlite3.Connection, q: SearchQuery, phrases: Sequence[str],
                 idfs: Sequence[float], avgdl: float, rowids: Sequence[int]
                 ) -> list[tuple[float, str, str]]:
    """The memories ``rowids`` that pass ``q``'s filters, one group per distinct text, in no
    order: ``(rank, rowids, memory ids)``, the group's rowids and memory ids joined by commas
    in the same order, where rank is the value ``bm25(fts, *BM25_WEIGHTS)`` gives each of its
    rows for the OR of ``phrases`` (negative; bit for bit), from the phrases' IDFs in the mount
    (``idfs``) and its mean row length in tokens (``avgdl``, :func:`fts_stats`).

    FTS5's formula (fts5_aux.c, ``fts5Bm25Function``), in its order of operations: for each
    phrase in order, ``idf * (f * (k1 + 1)) / (f + k1 * (1 - b + b * D / avgdl))`` summed from
    0, negated; ``f`` is the phrase's instances in the row, each counted at its column's
    weight, and ``D`` the row's length in tokens, all columns. Both depend on the row's text
    alone (summary, content, subject, tags: ynm.index.schema.fts_values), so the memories are
    grouped by that text in SQL and each distinct text is scored once: the holders of a
    store's rarest phrase are often copies of one note (the seeded stores of benchmarks/
    bench.py: 4,157 memories hold "lena as" at 1M, in 384 distinct texts). ``D`` and ``f``
    are read from the distinct texts' own FTS5 table (:func:`_fill_candidates`: same
    tokenizer, same text): ``D`` from its size record, and ``f`` recovered from ``bm25()``
    over that small table, one phrase at a time: there its value is ``-idf' * f * (k1 + 1) /
    (f + k1 * (1 - b + b * D / avgdl'))`` with that table's own IDF and mean length, solved
    for ``f`` and rounded to its multiple of 0.5 (every weight is one).
    """
    cond, args = filter_sql(q)
    # CROSS JOIN: look each rowid up; else the planner may walk an index of every live memory.
    # One row per distinct text: the first of its memories' rowids stands for it below.
    # (Memory ids are ULIDs, rowids integers: neither holds the comma group_concat joins with.)
    groups = conn.execute(
        f"SELECT group_concat(m.rowid), group_concat(m.memory_id), "
        f"m.summary, m.content, m.subject, m.tags "
        f"FROM json_each(?) AS j CROSS JOIN memories m ON m.rowid = j.value WHERE {cond} "
        f"GROUP BY m.summary, m.content, m.subject, m.tags",
        (json_dumps(list(rowids)), *args)).fetchall()
    if not groups:
        return []
    members = {}
    texts = []
    for ids, memory_ids, *text in groups:
        first = int(ids.partition(",")[0])
        members[first] = (ids, memory_ids)
        texts.append((first, *text))
    _fill_candidates(conn, texts)
    table = _CANDIDATE_TABLE
    size = {rowid: sum(_varints(blob)) for rowid, blob in
            conn.execute(f"SELECT id, sz FROM temp.{table}_docsize")}
    n, avg = fts_stats(conn, f"temp.{table}")
    weights = ", ".join(str(w) for w in BM25_WEIGHTS)
    # the length factor of each text in the candidates' table (to recover f) and in the mount
    here = {r: BM25_K1 * (1 - BM25_B + BM25_B * d / avg) for r, d in size.items()}
    there = {r: BM25_K1 * (1 - BM25_B + BM25_B * d / avgdl) for r, d in size.items()}
    terms: dict[int, list[tuple[float, float]]] = {rowid: [] for rowid in members}
    for phrase, idf in zip(phrases, idfs):
        held = conn.execute(f"SELECT rowid, bm25({table}, {weights}) FROM {table} "
                            f"WHERE {table} MATCH ?", (phrase,)).fetchall()
        top = _bm25_idf(n, len(held)) * (BM25_K1 + 1)
        for rowid, rank in held:
            # rank = -top * f / (f + here), solved for f and rounded to its multiple of 0.5
            f = round(-2 * rank * here[rowid] / (top + rank)) / 2
            terms[rowid].append((idf, f))
    out = []
    for first, (ids, memory_ids) in members.items():
        norm = there[first]
        score = 0.0
        for idf, f in terms[first]:  # in phrase order, as fts5 sums them
            score += idf * ((f * (BM25_K1 + 1.0)) / (f + norm))
        out.append((-1.0 * score, ids, memory_ids))
    return out


def _varints(blob: bytes) -> list[int]:
    """The SQLite varints ``blob`` holds, in order (7 bits a byte, big end first; the 9th
    byte gives 8): the format of FTS5's averages and size records (fts5_index.c)."""
    out = []
    value = length = 0
    for byte in blob:
        length += 1
        if length == 9:
            out.append((value << 8) | byte)
            value = length = 0
            continue
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            out.append(value)
            value = length = 0
    return out


def _averages(conn: sqlite3.Connection, table: str = "fts") -> list[int]:
    """The averages record of the FTS5 table ``table`` (row 1 of its ``_data`` table,
    ``FTS5_AVERAGES_ROWID`` in fts5_index.c): ``[rows, tokens of column 0, column 1, ...]``,
    what FTS5's ``bm25()`` reads as N and the mean row length; ``[]`` for an empty index."""
    row = conn.execute(f"SELECT block FROM {table}_data WHERE id = 1").fetchone()
    return _varints(row[0]) if row and row[0] else []


def fts_stats(conn: sqlite3.Connection, table: str = "fts") -> tuple[int, float]:
    """``(rows, mean row length in tokens)`` of the FTS5 table ``table`` as its ``bm25()``
    computes them (fts5_aux.c, ``fts5Bm25GetData``: the token total of every column over the
    row count, in doubles); ``(0, 0.0)`` for an empty index."""
    record = _averages(conn, table)
    if not record or not record[0]:
        return 0, 0.0
    return record[0], float(sum(record[1:])) / float(record[0])


def fts_rows(conn: sqlite3.Connection) -> int:
    """How many rows the mount's ``fts`` index holds: the ``N`` of FTS5's BM25 IDF.

    Read from the index's own averages record (:func:`_averages`, whose first varint is the
    row count that FTS5's ``bm25()`` itself uses) in microseconds, where ``SELECT count(*)
    FROM memories`` walks a whole b-tree (about 1-3 ms at 100k memories, twice per recall).
    0 for an empty index. FTS5 writes the record when a transaction commits, so inside one
    that has added rows the count lags them; the cache's connection runs in autocommit mode,
    and recall writes none."""
    record = _averages(conn)
    return record[0] if record else 0


def phrase_hits(conn: sqlite3.Connection, phrase: str) -> int:
    """How many memories of the mount hold ``phrase`` (a quoted FTS5 phrase)."""
    return conn.execute("SELECT count(*) FROM fts WHERE fts MATCH ?", (phrase,)).fetchone()[0]


_HITS_TABLE = "ynm_phrase_hits"
# The cache file keeps the entries of at most this many phrases, the newest taken: an entry
# holds up to PRUNE_MAX_SCORED rowids (about 50 KB), most hold a count alone.
HITS_KEPT = 1000


def phrase_counts(conn: sqlite3.Connection, phrases: Sequence[str]) -> dict[str, int]:
    """phrase -> how many memories of the mount hold it (:func:`phrase_hits`), for each of
    ``phrases``, kept in the cache file until the mount's memories change.

    A common phrase costs a walk of its whole doclist (at 1M memories, 74 ms for "on call",
    36 ms for "on"), and recall needs each count twice (BM25's bounds, :func:`coverage`);
    questions of one store share their common words, and so do the processes that ask them:
    each ``ynm recall`` is a new process with a new connection. The counts are kept in the
    table ``ynm_phrase_hits`` of the cache file (derived data like the rest of it; at most
    :data:`HITS_KEPT` phrases) under a stamp of the index: the cache's ``memories_version``
    (bumped by every change to the memories and their FTS rows, ynm.index.cache) and the FTS5
    averages record (row and token totals), so a change made through any connection makes
    them stale. Where the file cannot take them at once (a read-only file, another writer
    holding it, which is not waited for, or a transaction of the caller's open), the
    connection keeps them in its ``temp`` schema instead (:func:`_keep_entries`). The same
    walk keeps the rowids of a phrase held by at most :data:`PRUNE_MAX_SCORED` memories
    (:func:`phrase_holders`)."""
    return {p: n for p, (n, _) in _phrase_entries(conn, phrases).items()}


def phrase_holders(conn: sqlite3.Connection, phrase: str) -> list[int] | None:
    """The rowids of the memories holding ``phrase`` (a quoted FTS5 phrase), in no order,
    when at most :data:`PRUNE_MAX_SCORED` do (forgotten ones included), else None; kept
    with its count (:func:`phrase_counts`).

    :func:`_pruned` scores the holders of a question's rarest phrases, and a rare pair of
    common words is slow to find: "flags on" (2,433 memories at 1M) walks the doclist of
    "on" (386k memories), and recall has walked it once already to count it."""
    holders = _phrase_entries(conn, [phrase])[phrase][1]
    return None if holders is None else json_loads(holders)


def _phrase_entries(conn: sqlite3.Connection, phrases: Sequence[str]
                    ) -> dict[str, tuple[int, str | None]]:
    """phrase -> ``(memories holding it, their rowids as a JSON array or None)`` for each of
    ``phrases``: the rowids when at most :data:`PRUNE_MAX_SCORED` hold it. Read from the
    kept entries whose stamp is current (see :func:`phrase_counts`), else taken from the
    index and kept."""
    if not phrases:
        return {}
    version = conn.execute("SELECT value FROM meta WHERE key = 'memories_version'").fetchone()
    stamp = json_dumps([version[0] if version else None, _averages(conn)])
    asked = json_dumps(list(phrases))
    out: dict[str, tuple[int, str | None]] = {}
    for where in _hits_schemas(conn):
        out.update((p, (n, holders)) for p, n, holders in conn.execute(
            f"SELECT phrase, hits, holders FROM {where}.{_HITS_TABLE} "
            "WHERE stamp = ? AND phrase IN (SELECT value FROM json_each(?))", (stamp, asked)))
    missing = [p for p in dict.fromkeys(phrases) if p not in out]
    for p in missing:
        # the first PRUNE_MAX_SCORED + 1 holders, then the whole count only past them
        n, holders = conn.execute(
            "SELECT count(*), json_group_array(rowid) FROM "
            "(SELECT rowid FROM fts WHERE fts MATCH ? LIMIT ?)",
            (p, PRUNE_MAX_SCORED + 1)).fetchone()
        out[p] = (n, holders) if n <= PRUNE_MAX_SCORED else (phrase_hits(conn, p), None)
    if missing:
        _keep_entries(conn, [(p, *out[p], stamp) for p in missing])
    return out


def _hits_schemas(conn: sqlite3.Connection) -> list[str]:
    """The schemas of ``conn`` that hold a ``ynm_phrase_hits`` table: ``temp`` (this
    connection's own), then ``main`` (the cache file)."""
    return [where for where in ("temp", "main") if conn.execute(
        f"SELECT 1 FROM {where}.sqlite_master WHERE type = 'table' AND name = ?",
        (_HITS_TABLE,)).fetchone()]


def _keep_entries(conn: sqlite3.Connection, rows: Sequence[tuple[str, int, str | None, str]]
                  ) -> None:
    """Keep ``rows`` ``(phrase, hits, holders, stamp)`` in the cache file, in a transaction
    of their own that waits for no lock, dropping the entries of other stamps and all but the
    newest :data:`HITS_KEPT`. When the file cannot take them (read-only, another writer
    holds it) or the caller has a transaction open (the rows would join it), they go to the
    connection's ``temp`` schema, which lasts as long as the connection."""
    if not conn.in_transaction:
        waited = conn.execute("PRAGMA busy_timeout").fetchone()[0]
        conn.execute("PRAGMA busy_timeout = 0")
        try:
            conn.execute("BEGIN IMMEDIATE")
            _write_entries(conn, "main", rows)
            conn.execute("COMMIT")
            return
        except sqlite3.OperationalError:  # SQLITE_BUSY, SQLITE_READONLY and kin
            if conn.in_transaction:
                conn.execute("ROLLBACK")
        finally:
            conn.execute(f"PRAGMA busy_timeout = {int(waited)}")
    conn.execute("SAVEPOINT ynm_phrase_hits")  # nests in a caller's transaction
    try:
        _write_entries(conn, "temp", rows)
    finally:
        conn.execute("RELEASE ynm_phrase_hits")


def _write_entries(conn: sqlite3.Connection, where: str,
                   rows: Sequence[tuple[str, int, str | None, str]]) -> None:
    """Write ``rows`` to ``<where>.ynm_phrase_hits`` (created if missing) as described in
    :func:`_keep_entries`; a phrase written again moves to the newest rowid."""
    table = f"{where}.{_HITS_TABLE}"
    conn.execute(f"CREATE TABLE IF NOT EXISTS {table} (phrase TEXT PRIMARY KEY, "
                 "hits INTEGER NOT NULL, holders TEXT, stamp TEXT NOT NULL)")
    conn.execute(f"DELETE FROM {table} WHERE stamp != ?", (rows[0][3],))
    conn.executemany(f"INSERT OR REPLACE INTO {table} VALUES (?, ?, ?, ?)", rows)
    conn.execute(f"DELETE FROM {table} WHERE rowid <= (SELECT max(rowid) FROM {table}) - ?",
                 (HITS_KEPT,))


def unheld(conn: sqlite3.Connection, phrases: Sequence[str]) -> set[str]:
    """The phrases of ``phrases`` (quoted FTS5 phrases) that no memory of the mount holds
    (document frequency 0), forgotten memories included, as BM25's counts include them. One
    probe per phrase that stops at the first memory holding it, so a common word costs no
    more than a rare one."""
    return {p for p in phrases
            if conn.execute("SELECT 1 FROM fts WHERE fts MATCH ? LIMIT 1", (p,)).fetchone()
            is None}


def coverage(conn: sqlite3.Connection, phrases: Sequence[str], rowids: Sequence[int],
             hits: dict[str, int] | None = None,
             unsearched: Sequence[str] = (), unseen: int = 0) -> dict[int, float]:
    """For each of ``rowids``, the share of the query's ``phrases`` it holds, each phrase
    weighted by FTS5's BM25 IDF in the mount: 1 for a memory holding every phrase, 0 for one
    holding none or only words most memories hold (their IDF is ~0). ``{}`` without phrases.
    Recall passes the query's single words less its function words, and the phrase counts
    :func:`search` already took (``hits``, phrase -> memories holding it), if any.

    BM25 relevance is relative to the best hit, so a question that shares only a common word
    with the store still has a hit of relevance 1, and BM25 adds a phrase's weight for every
    adjacent pair a memory holds; recall multiplies relevance by this share (cubed) so that
    holding more of the question's words counts for more than either.

    ``unsearched`` are the question's words a long question was not searched with
    (:func:`select_phrases`): each whose count is in ``hits`` adds its IDF to the whole and
    counts as held by none, so a pasted paragraph that shares one word with a memory is not
    taken for a full match because its other words are held by no memory.

    ``unseen`` is how many of the question's words the caller left out of ``phrases`` as
    words no memory of the store holds (ynm.service.recall.unknown_words, only when they are
    fewer than the words it holds): each adds the mean IDF of the other words (``phrases``
    and ``unsearched``) to the whole and counts as held by none. BM25 would give such a word
    the highest IDF of all, ``ln((N + 0.5) / 0.5)``, more than the store's rarest word, so a
    memory holding every other word of "why did the payout outage happen" held less than half
    of it for the one word, "happen", that no memory could hold.

    Which candidate holds which word is asked of a small FTS5 table in the connection's
    ``temp`` schema holding only the candidates' rows (:func:`_candidate_table`), with the
    cache's tokenizer and text, so the answer is FTS5's own; asking the mount's index instead
    reads each word's whole doclist (at 100k, a third of a full-text recall's time).
    """
    if not phrases:
        return {}
    rows = fts_rows(conn)
    held = dict.fromkeys(rowids, 0.0)
    left = [_bm25_idf(rows, hits[w]) for w in unsearched if hits and w in hits]
    table = _candidate_table(conn, list(held))
    counted = phrase_counts(conn, [p for p in phrases if not hits or p not in hits])
    idfs = [_bm25_idf(rows, hits[p] if hits and p in hits else counted[p]) for p in phrases]
    total = sum(left) + sum(idfs)
    # each word the store has never seen weighs as much as the others on average
    total += unseen * total / (len(left) + len(idfs))
    # one statement for every phrase: which candidates hold phrase i
    sql = " UNION ALL ".join(f"SELECT {i}, rowid FROM {table} WHERE {table} MATCH ?"
                             for i in range(len(phrases)))
    for i, rowid in conn.execute(sql, list(phrases)):
        held[rowid] += idfs[i]
    return {rowid: value / total for rowid, value in held.items()} if total else {}


_CANDIDATE_TABLE = "ynm_candidates"


def _candidate_table(conn: sqlite3.Connection, rowids: Sequence[int]) -> str:
    """``temp.ynm_candidates``, an FTS5 table made like the cache's ``fts`` (same columns and
    tokenizer, rows from :func:`ynm.index.schema.fts_values`), emptied and filled with the
    memories ``rowids`` under their own rowids; returns its name. Created on first use per
    connection; it lives in the ``temp`` schema, so a read-only cache file is never written."""
    _fill_candidates(conn, conn.execute(
        "SELECT rowid, summary, content, subject, tags FROM memories "
        "WHERE rowid IN (SELECT value FROM json_each(?))", (json_dumps(list(rowids)),)))
    return _CANDIDATE_TABLE


def _fill_candidates(conn: sqlite3.Connection, rows: Iterable[Sequence[Any]]) -> None:
    """Empty ``temp.ynm_candidates`` (created on first use) and fill it with ``rows``:
    ``(rowid, summary, content, subject, tags)`` as the ``memories`` table holds them."""
    # tags are passed as their JSON array text (stored with ensure_ascii off): unicode61
    # splits at the quotes, brackets and commas as it does at the spaces fts_values joins
    # them with, so the tokens are the same; an escape (backslash) is decoded first
    values = [(rowid, fts_text(summary), fts_text(content), fts_text(subject or ""),
               fts_text(" ".join(json_loads(tags)) if "\\" in tags else tags))
              for rowid, summary, content, subject, tags in rows]
    # one savepoint around the writes: the cache connection is in autocommit mode, where each
    # insert would be a transaction of its own; a savepoint also nests in a caller's
    conn.execute("SAVEPOINT ynm_candidates")
    try:
        conn.execute(f"CREATE VIRTUAL TABLE IF NOT EXISTS temp.{_CANDIDATE_TABLE} USING fts5("
                     "summary, content, subject, tags, tokenize = 'porter unicode61', "
                     "content = '')")
        conn.execute(f"INSERT INTO temp.{_CANDIDATE_TABLE}({_CANDIDATE_TABLE}) "
                     "VALUES ('delete-all')")
        conn.executemany(
            f"INSERT INTO temp.{_CANDIDATE_TABLE}(rowid, summary, content, subject, tags) "
            "VALUES (?, ?, ?, ?, ?)", values)
    finally:
        conn.execute("RELEASE ynm_candidates")


def by_coverage(candidates: Sequence[Candidate], held: dict[int, float], power: float
                ) -> list[Candidate]:
    """``candidates`` (BM25 relevance, best 1) with each relevance multiplied by the share of
    the query's words it holds (``held``, see :func:`coverage`) to the ``power``, rescaled so
    the best is 1 again, best first (ties keep their order). Empty ``held`` (a question of
    function words only) leaves them as they are.

    BM25 adds a phrase's weight for each adjacent pair of query words a memory holds, with no
    limit: a memory holding two rare query words side by side outranks the only one holding
    all three apart. The share puts holding more of the words (by IDF) first in every mode;
    hybrid recall applies it in ynm.service.recall.fuse.
    """
    if not held or not candidates:
        return list(candidates)
    weighed = [(c, c.relevance * held.get(c.rowid, 0.0) ** power) for c in candidates]
    best = max(w for _, w in weighed)
    if best <= 0:
        return list(candidates)
    weighed.sort(key=lambda cw: cw[1], reverse=True)
    return [Candidate(c.rowid, c.memory_id, w / best) for c, w in weighed]


def search(conn: sqlite3.Connection, q: SearchQuery) -> list[Candidate]:
    """Run :func:`search_sql` and normalise relevance so the best text hit is 1
    (``relevance_i = rank_i / rank_best`` on bm25's negative-is-better scale). Text queries
    with several phrases try :func:`_pruned` first, which returns the same rows faster.

    A question of more phrases than :func:`select_phrases` keeps is narrowed to those first:
    ``q.phrases`` and ``q.match`` are replaced, in place, by the phrases searched (which
    :func:`coverage` is then given), and ``q.extra["hits"]`` holds the counts taken. A
    narrowed question is scored in one statement without trying :func:`_pruned`: its 16 or
    more phrases are all of the rarer kind, so no short prefix of them can prove the rest
    out, and each failed try costs about what the full statement does (measured on the 100k
    store of benchmarks/bench.py)."""
    narrowed = False
    if q.match is not None and q.phrases:
        phrases, hits = select_phrases(conn, q.phrases)
        q.extra.setdefault("hits", {}).update(hits)
        if not phrases:  # no word of the long question is held by any memory
            q.phrases = []
            return []
        if phrases != list(q.phrases):
            # the question's words left out still count in its word share (see coverage)
            q.extra["unsearched"] = [p for p in q.phrases
                                     if is_word_phrase(p) and p not in phrases]
            q.phrases, q.match, narrowed = phrases, " OR ".join(phrases), True
    rows = _pruned(conn, q) if q.match is not None and not narrowed else None
    if rows is None:
        sql, args = search_sql(q)
        rows = conn.execute(sql, args).fetchall()
    if q.match is None or not rows:
        return [Candidate(r[0], r[1], 1.0) for r in rows]
    best = -rows[0][2]
    return [Candidate(r[0], r[1], (-r[2]) / best if best > 0 else 1.0) for r in rows]


def centroid(conn: sqlite3.Connection) -> bytes | None:
    """The vector :func:`vector_search` subtracts from the query and from every memory before
    cosine (float32 bytes): the sum of the mount's vectors divided by their count plus
    :data:`CENTROID_PRIOR`; None when the mount has no vectors (or no ``vector_sum`` table).

    Sentence embeddings share a common direction (they are anisotropic), and memories of one
    store share their topic on top of it, so raw cosines crowd together and a question lands
    near whatever is typical of the store. Subtracting what every memory has in common leaves
    what tells them apart. Measured with benchmarks/quality.py and all-MiniLM-L6-v2, vectors
    alone through the ranker, on the paraphrase set: recall@5 0.62 raw, 0.72 centred; recall@10
    0.73 raw, 0.87 centred.
    """
    import numpy as np

    try:
        row = conn.execute("SELECT total, count FROM vector_sum").fetchone()
    except sqlite3.OperationalError:
        return None
    if row is None or not row[1]:
        return None
    total = np.frombuffer(row[0], dtype=np.float32)
    return (total / (row[1] + CENTROID_PRIOR)).astype(np.float32).tobytes()


def vector_search(conn: sqlite3.Connection, q: SearchQuery, query_vector: bytes,
                  k: int) -> list[tuple[int, str, float]]:
    """The ``k`` memories nearest to ``query_vector`` (float32 bytes) that pass ``q``'s
    filters: ``(rowid, memory id, similarity)``, nearest first. Similarity is the cosine of
    the query and the memory after both are moved by the mount's :func:`centroid` (-1..1).

    Two steps: a scan of the sign bits (one bit per dimension, Hamming distance, table
    ``vector_codes``) gives :data:`COARSE_CANDIDATES` candidates for the whole mount at a
    fraction of a float scan's cost; their float32 vectors are then rescored exactly, after
    the filters. When the filters leave fewer than ``k`` of them, an exact scan of the
    filtered memories takes over, so filters never hide a near memory.
    """
    import numpy as np

    cond, args = filter_sql(q)
    center = centroid(conn)
    if center is None:
        distance, vector_args = "vec_distance_cosine(v.embedding, ?)", [query_vector]
    else:
        moved = (np.frombuffer(query_vector, dtype=np.float32)
                 - np.frombuffer(center, dtype=np.float32)).astype(np.float32).tobytes()
        distance = "vec_distance_cosine(vec_sub(v.embedding, ?), ?)"
        vector_args = [center, moved]
    fetch = max(k * 10, COARSE_CANDIDATES)
    coarse = [r[0] for r in conn.execute(
        "SELECT rowid FROM vector_codes ORDER BY "
        "vec_distance_hamming(vec_bit(code), vec_quantize_binary(?)) LIMIT ?",
        (query_vector, fetch))]
    if coarse:
        out = [(r[0], r[1], 1.0 - r[2]) for r in conn.execute(
            f"SELECT m.rowid, m.memory_id, {distance} AS d "
            f"FROM memories m JOIN vectors v ON v.rowid = m.rowid "
            f"WHERE m.rowid IN (SELECT value FROM json_each(?)) AND {cond} ORDER BY d LIMIT ?",
            (*vector_args, json_dumps(coarse), *args, k))]
        if len(out) >= k or len(coarse) < fetch:
            return out
    return [(r[0], r[1], 1.0 - r[2]) for r in conn.execute(
        f"SELECT m.rowid, m.memory_id, {distance} AS d "
        f"FROM memories m JOIN vectors v ON v.rowid = m.rowid WHERE {cond} ORDER BY d LIMIT ?",
        (*vector_args, *args, k))]


def background_similarity(conn: sqlite3.Connection, query_vector: bytes,
                          background: Sequence[bytes], nearest: int = 3) -> float | None:
    """The mean cosine between ``query_vector`` and its ``nearest`` closest ``background``
    vectors (float32 bytes each, e.g. ynm.index.background.BACKGROUND embedded by the mount's
    model), all moved by the mount's :func:`centroid` exactly as :func:`vector_search` moves
    the query and the memories, so the figure is on the scale of its similarities; None
    without background.

    It says how near the question is to text about other things: "which spices go into a
    garam masala?" lies at 0.45 from the background's sentences about food and at 0.31 from
    the nearest engineering note, while a real engineering question stays far from all of
    them. The mean of a few nearest, not the single nearest, so that one sentence that happens
    to share a word's sense ("A library lends books") does not silence a real question.
    """
    import numpy as np

    if not background:
        return None
    center = centroid(conn)
    shift = np.frombuffer(center, dtype=np.float32) if center is not None else 0.0
    query = np.frombuffer(query_vector, dtype=np.float32) - shift
    others = np.stack([np.frombuffer(b, dtype=np.float32) for b in background]) - shift
    norms = np.linalg.norm(others, axis=1) * (np.linalg.norm(query) or 1.0)
    sims = others @ query / np.where(norms > 0, norms, 1.0)
    return float(np.mean(np.sort(sims)[-nearest:]))
