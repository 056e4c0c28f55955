"""The pruned text search scores rows itself (ynm/index/search.py, ``_pruned`` and
``_bm25_groups``) and must give exactly the rows of the plain statement (``search_sql``, FTS5's
``bm25()``): same rowids, same order, bit-identical ranks, on a store of common and rare words,
repeated words, words in every column, identical texts (ties broken by memoryId), non-ASCII
text, filters and limits; and it must leave a question it cannot prove to the statement."""

from __future__ import annotations

import random

import pytest
import sqlean

from ynm.index import search as search_mod
from ynm.index.cache import MountCache
from ynm.index.schema import BUSY_TIMEOUT_MS
from ynm.index.search import SearchQuery, phrase_counts, phrase_hits, search_sql
from ynm.model.text import query_phrases

from .conftest import cache_over, rec

COMMON = ["on", "call", "the", "deploy", "service"]  # in most memories
MIDDLE = ["ledger", "rotation", "payments", "flags", "feature", "queue"]
RARE = ["zephyr", "quokka", "café", "naïve"]
TYPES = ["semantic", "episodic", "procedural"]


def memories(n: int = 900, seed: int = 5) -> list[dict]:
    """``n`` memories drawn from the three vocabularies: common words in nearly all, the
    middle ones in about a quarter, rare ones in a few; repeated words, text in the summary,
    subject and tags; every 10th memory copies an earlier one's text (exact score ties)."""
    rng = random.Random(seed)
    out: list[dict] = []
    for i in range(n):
        if i % 10 == 9:
            twin = out[rng.randrange(len(out))]
            obj = rec(content=twin["content"], summary=twin["summary"], type=twin["type"],
                      tags=twin["tags"], subject=twin.get("subject"))
        else:
            words = [w for w in COMMON if rng.random() < 0.8]
            words += [w for w in MIDDLE if rng.random() < 0.25]
            words += [w for w in RARE if rng.random() < 0.02]
            words += ["filler"] * rng.randint(0, 12) + ["on call"] * rng.randint(0, 2)
            rng.shuffle(words)
            content = " ".join(words) or "nothing"
            summary = " ".join(rng.sample(words, min(len(words), rng.randint(0, 4)))) or "s"
            obj = rec(content=content, summary=summary, type=rng.choice(TYPES),
                      tags=rng.sample(MIDDLE, rng.randint(0, 2)),
                      subject=f"entity:{rng.choice(MIDDLE)}" if rng.random() < 0.3 else None)
        out.append(obj)
    return out


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A cache over :func:`memories` in a real repository (module scope: built once)."""
    cache = cache_over(tmp_path_factory.mktemp("bm25"), memories())
    yield cache
    cache.close()


QUESTIONS = [
    "feature flags on call rotation", "ledger on call rotation", "zephyr deploy",
    "the quokka ledger on call", "payments queue service", "café naïve on call",
    "deploy the service on call", "filler filler ledger", "rotation flags zephyr quokka",
]


def plain(conn, q: SearchQuery) -> list:
    sql, args = search_sql(q)
    return conn.execute(sql, args).fetchall()


def text_query(text: str, **filters) -> SearchQuery:
    phrases = query_phrases(text)
    return SearchQuery(match=" OR ".join(phrases), phrases=phrases, **filters)


@pytest.mark.parametrize("filters", [
    {"limit": 1}, {"limit": 5}, {"limit": 40},
    {"limit": 10, "types": ["semantic"]},
    {"limit": 10, "tags": ["ledger"]},
    {"limit": 10, "exclude_tags": ["flags"], "types": ["episodic", "procedural"]},
])
def test_pruned_rows_are_the_statement_rows_bit_for_bit(store, monkeypatch, filters):
    monkeypatch.setattr(search_mod, "PRUNE_FROM_ROWS", 0)
    conn = store.conn
    proven = 0
    for text in QUESTIONS:
        want = plain(conn, text_query(text, **filters))
        got = search_mod._pruned(conn, text_query(text, **filters))
        if got is not None:
            proven += 1
            assert got == want, text  # rowid, memory id and the float rank, exactly
        found = search_mod.search(conn, text_query(text, **filters))
        assert [c.rowid for c in found] == [r[0] for r in want], text
    assert proven >= 3  # the pruning ran and was proven each time, not only the fallback


def test_ties_are_broken_by_memory_id_as_the_statement_does(store, monkeypatch):
    monkeypatch.setattr(search_mod, "PRUNE_FROM_ROWS", 0)
    conn = store.conn
    q = text_query("deploy the service on call", limit=40)
    want = plain(conn, q)
    ranks = [r[2] for r in want]
    assert len(set(ranks)) < len(ranks)  # the store's twins tie within the top 40
    assert search_mod._pruned(conn, q) == want


def test_every_row_of_the_mount_is_scored_like_bm25(store):
    # _bm25_groups over every memory holding a word of the question, against bm25() itself
    conn = store.conn
    q = text_query("the quokka ledger on call café", limit=2000)
    phrases = list(q.phrases)
    n, avgdl = search_mod.fts_stats(conn)
    idfs = [search_mod._bm25_idf(n, phrase_hits(conn, p)) for p in phrases]
    rowids = [r[0] for r in conn.execute("SELECT rowid FROM fts WHERE fts MATCH ?", (q.match,))]
    got = [(int(rowid), memory_id, rank) for rank, rowids_, memory_ids
           in search_mod._bm25_groups(conn, q, phrases, idfs, avgdl, rowids)
           for rowid, memory_id in zip(rowids_.split(","), memory_ids.split(","))]
    want = plain(conn, q)
    assert len(want) == len(rowids) > 500
    assert sorted(got) == sorted(want)


def test_a_question_the_bound_cannot_prove_goes_to_the_statement(store, monkeypatch):
    # The rare words' memories hold little else; the best rows hold the common words many
    # times. Pruning may score only about the holders of the rare words here, whose best rows
    # are not the top 5, so it must give up rather than return them. (A bound half as large
    # makes the tests above fail: the pruning then returns rows the statement does not.)
    monkeypatch.setattr(search_mod, "PRUNE_FROM_ROWS", 0)
    conn = store.conn
    text = "zephyr quokka on call deploy the service filler"
    want = plain(conn, text_query(text, limit=5))
    rare = [r[0] for r in conn.execute(
        "SELECT rowid FROM fts WHERE fts MATCH '\"zephyr\" OR \"quokka\"'")]
    monkeypatch.setattr(search_mod, "PRUNE_MAX_SCORED", len(rare) + 1)
    assert not set(rare) >= {r[0] for r in want}
    assert search_mod._pruned(conn, text_query(text, limit=5)) is None
    assert [c.rowid for c in search_mod.search(conn, text_query(text, limit=5))] == [
        r[0] for r in want]


def test_phrase_counts_are_the_counts_and_go_stale_with_the_index(cache, append):
    append(rec(content="ledger on call"), rec(content="ledger rota"))
    conn = cache.conn
    phrases = ['"ledger"', '"on call"', '"absent"']
    assert phrase_counts(conn, phrases) == {'"ledger"': 2, '"on call"': 1, '"absent"': 0}
    # kept in the cache file: the second answer comes from its table
    conn.execute("UPDATE main.ynm_phrase_hits SET hits = hits + 100")
    assert phrase_counts(conn, phrases)['"ledger"'] == 102
    append(rec(content="ledger again"))  # the memories changed: the counts are taken again
    assert phrase_counts(conn, phrases) == {'"ledger"': 3, '"on call"': 1, '"absent"': 0}


def test_phrase_counts_kept_in_the_cache_file_serve_the_next_connection(cache, append,
                                                                         cache_path):
    append(rec(content="ledger on call"), rec(content="ledger rota"))
    phrases = ['"ledger"', '"on call"']
    assert phrase_counts(cache.conn, phrases) == {'"ledger"': 2, '"on call"': 1}
    cache.conn.execute("UPDATE ynm_phrase_hits SET hits = hits + 100")
    other = MountCache(cache_path, "project")  # a new process's connection
    try:
        assert phrase_counts(other.conn, phrases) == {'"ledger"': 102, '"on call"': 101}
        append(rec(content="ledger again"))  # a change through the first connection
        assert phrase_counts(other.conn, phrases) == {'"ledger"': 3, '"on call"': 1}
    finally:
        other.close()


def test_phrase_counts_wait_for_no_writer_and_stay_with_the_connection(cache, append,
                                                                        cache_path):
    append(rec(content="ledger on call"), rec(content="ledger rota"))
    writer = sqlean.connect(str(cache_path), isolation_level=None)
    writer.execute("BEGIN IMMEDIATE")  # another process holds the file's write lock
    try:
        assert phrase_counts(cache.conn, ['"ledger"']) == {'"ledger"': 2}
        assert cache.conn.execute(
            "SELECT phrase, hits FROM temp.ynm_phrase_hits").fetchall() == [('"ledger"', 2)]
        assert cache.conn.execute(
            "SELECT 1 FROM sqlite_master WHERE name = 'ynm_phrase_hits'").fetchone() is None
        # the connection waits for locks as before
        assert cache.conn.execute("PRAGMA busy_timeout").fetchone()[0] == BUSY_TIMEOUT_MS
    finally:
        writer.execute("ROLLBACK")
        writer.close()
    cache.conn.execute("UPDATE temp.ynm_phrase_hits SET hits = 7")
    assert phrase_counts(cache.conn, ['"ledger"']) == {'"ledger"': 7}


def test_the_cache_file_keeps_the_newest_phrases_only(cache, append, monkeypatch):
    append(rec(content="ledger on call rota"))
    monkeypatch.setattr(search_mod, "HITS_KEPT", 2)
    phrase_counts(cache.conn, ['"ledger"', '"on"', '"call"'])
    phrase_counts(cache.conn, ['"rota"'])
    assert cache.conn.execute("SELECT phrase FROM ynm_phrase_hits ORDER BY rowid").fetchall(
        ) == [('"call"',), ('"rota"',)]
