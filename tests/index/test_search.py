"""Candidate search: the SQL built by ``filter_sql``/``search_sql`` and what it selects
(reference/algorithms.md §2.3, §8.2; DESIGN.md "The cache")."""

from __future__ import annotations

import pytest

from ynm.index.search import BM25_WEIGHTS, SearchQuery, filter_sql, like_escape, search, search_sql
from ynm.model.text import query_phrases

from .conftest import rec, ulid

# ------------------------------------------------------------------------------- SQL text


def test_default_excludes_tombstoned_only():
    assert filter_sql(SearchQuery()) == ("m.tombstoned = 0", [])


def test_include_tombstoned_and_no_filters():
    assert filter_sql(SearchQuery(include_tombstoned=True)) == ("1", [])


def test_alias():
    assert filter_sql(SearchQuery(pinned_only=True), alias="x") == (
        "x.tombstoned = 0 AND x.pinned = 1", [])


def test_every_filter_text_and_args():
    q = SearchQuery(types=["semantic", "episodic"], levels=["personal"], namespace="org/my_team",
                    subject="entity:x", tags=["a", "b"], exclude_tags=["occurrence"],
                    data_key="owner", since="2026-01-01T00:00:00.000Z",
                    until="2026-02-01T00:00:00.000Z", pinned_only=True, needs_review=False)
    sql, args = filter_sql(q)
    assert sql.split(" AND ") == [
        "m.tombstoned = 0",
        "m.type IN (?, ?)",
        "m.level IN (?)",
        "(m.namespace = ? OR m.namespace LIKE ? ESCAPE '\\')",
        "m.subject = ?",
        "EXISTS (SELECT 1 FROM json_each(m.tags) WHERE value = ?)",
        "EXISTS (SELECT 1 FROM json_each(m.tags) WHERE value = ?)",
        "NOT EXISTS (SELECT 1 FROM json_each(m.tags) WHERE value = ?)",
        "EXISTS (SELECT 1 FROM json_each(m.data_keys) WHERE value = ?)",
        "m.updated_ms >= ?",
        "m.updated_ms <= ?",
        "m.pinned = 1",
        "m.needs_review = ?",
    ]
    assert args == ["semantic", "episodic", "personal", "org/my_team", "org/my\\_team/%",
                    "entity:x", "a", "b", "occurrence", "owner", 1_767_225_600_000,
                    1_769_904_000_000, 0]


def test_like_escape():
    assert like_escape("a_b%c\\d") == "a\\_b\\%c\\\\d"


def test_search_sql_filter_only():
    sql, args = search_sql(SearchQuery(limit=7))
    assert "MATCH" not in sql and "bm25" not in sql
    assert "ORDER BY m.updated_ms DESC" in sql
    assert sql.endswith("LIMIT ?")
    assert args == [7]


def test_search_sql_text():
    sql, args = search_sql(SearchQuery(match='"deploy"', types=["semantic"], limit=40))
    assert BM25_WEIGHTS == (2.0, 1.0, 1.5, 1.0)
    assert "bm25(fts, 2.0, 1.0, 1.5, 1.0)" in sql
    assert "WHERE fts MATCH ? AND m.tombstoned = 0 AND m.type IN (?)" in sql
    assert "ORDER BY rank" in sql and sql.endswith("LIMIT ?")
    assert args == ['"deploy"', "semantic", 40]


# ------------------------------------------------------------------------------ behaviour


def run(cache, **kw) -> list[str]:
    return [c.memory_id for c in search(cache.conn, SearchQuery(**kw))]


def text(words: str) -> str | None:
    return " OR ".join(query_phrases(words)) or None


def test_type_and_level(cache, append):
    a = rec(type="episodic")
    b = rec()
    append(a, b)
    # the distributed log only: level filter on rows
    assert run(cache, types=["episodic"]) == [a["id"]]
    assert set(run(cache, types=["episodic", "semantic"])) == {a["id"], b["id"]}
    assert run(cache, levels=["personal"]) == []
    assert len(run(cache, levels=["distributed"])) == 2


def test_namespace_whole_segments_and_underscore(cache, append):
    from ynm.model.shards import ShardKey

    mems = {}
    for ns in ("org/my_team", "org/my_team/x", "org/myxteam/x", "org/my_teamx"):
        r = rec(namespace=ns)
        append(r, key=ShardKey("distributed", ns, "semantic", "2026-01"))
        mems[ns] = r["id"]
    assert set(run(cache, namespace="org/my_team")) == {mems["org/my_team"],
                                                        mems["org/my_team/x"]}
    assert run(cache, namespace="org/myxteam") == [mems["org/myxteam/x"]]
    # % is literal too: no namespace is called "org/%"
    assert run(cache, namespace="org/%") == []
    assert run(cache, namespace="org/my%") == []
    assert len(run(cache, namespace="org")) == 4


def test_subject(cache, append):
    a = rec(subject="entity:ledger")
    b = rec(subject="entity:ledger2")
    append(a, b, rec())
    assert run(cache, subject="entity:ledger") == [a["id"]]


def test_tags_all_and_exclude(cache, append):
    a = rec(tags=["x", "y"])
    b = rec(tags=["x"])
    c = rec(tags=["x", "occurrence"])
    append(a, b, c)
    assert run(cache, tags=["x", "y"]) == [a["id"]]
    assert set(run(cache, tags=["x"])) == {a["id"], b["id"], c["id"]}
    assert set(run(cache, tags=["x"], exclude_tags=["occurrence"])) == {a["id"], b["id"]}
    assert set(run(cache, exclude_tags=["y", "occurrence"])) == {b["id"]}


def test_data_key(cache, append):
    a = rec(data={"owner": "p", "nested": {"k": 1}})
    append(a, rec(), rec(data={"other": 1}))
    assert run(cache, data_key="owner") == [a["id"]]
    assert run(cache, data_key="nested") == [a["id"]]
    assert run(cache, data_key="k") == []


def test_since_until_inclusive(cache, append):
    a = rec(recordedAt="2026-01-01T00:00:00.000Z")
    b = rec(recordedAt="2026-01-02T00:00:00.000Z")
    c = rec(recordedAt="2026-01-03T00:00:00.000Z")
    append(a, b, c)
    assert run(cache, since="2026-01-02T00:00:00.000Z") == [c["id"], b["id"]]
    assert run(cache, until="2026-01-02T00:00:00.000Z") == [b["id"], a["id"]]
    assert run(cache, since="2026-01-02T00:00:00.000Z", until="2026-01-02T00:00:00.000Z") == [
        b["id"]]


def test_pinned_only(cache, append):
    a = rec(pinned=True)
    append(a, rec(), rec(pinned=False))
    assert run(cache, pinned_only=True) == [a["id"]]


def test_include_tombstoned(cache, append):
    a, b = rec(recordedAt="2026-01-01T00:00:00.000Z"), rec(recordedAt="2026-01-01T00:00:01.000Z")
    tomb = rec(id=ulid(), memoryId=a["id"], op="tombstone", content=None, summary=None,
               recordedAt="2026-01-02T00:00:00.000Z")
    append(a, b, tomb)
    assert run(cache) == [b["id"]]
    assert run(cache, include_tombstoned=True) == [a["id"], b["id"]]


def test_needs_review(cache, append):
    a, b = rec(), rec()
    flag = rec(id=ulid(), memoryId=a["id"], op="annotate", content=None, summary=None,
               needsReview=True, recordedAt="2026-01-05T00:00:00.000Z")
    append(a, b, flag)
    assert run(cache, needs_review=True) == [a["id"]]
    assert run(cache, needs_review=False) == [b["id"]]
    assert len(run(cache)) == 2


def test_filters_apply_to_text_queries(cache, append):
    a = rec(content="ledger deploys", type="episodic")
    b = rec(content="ledger deploys")
    append(a, b)
    assert run(cache, match=text("ledger"), types=["episodic"]) == [a["id"]]


def test_filter_only_newest_first_with_limit(cache, append):
    objs = [rec(recordedAt=f"2026-01-0{d}T00:00:00.000Z") for d in range(1, 6)]
    append(*objs)
    got = search(cache.conn, SearchQuery(limit=3))
    assert [c.memory_id for c in got] == [o["id"] for o in reversed(objs)][:3]
    assert all(c.relevance == 1.0 for c in got)


def test_relevance_normalised_best_is_exactly_one(cache, append):
    a = rec(summary="ledger ledger", content="ledger deploys ledger")
    b = rec(summary="payments", content="the ledger is long text with many other words here")
    c = rec(summary="ledger", content="deploys")
    append(a, b, c, rec(summary="unrelated", content="nothing"),
           rec(summary="filler", content="more filler"), rec(summary="x", content="y z"))
    got = search(cache.conn, SearchQuery(match=text("ledger")))
    assert len(got) == 3
    assert got[0].relevance == 1.0
    rel = [c.relevance for c in got]
    assert rel == sorted(rel, reverse=True)
    assert all(0 < r < 1.0 for r in rel[1:])
    assert got[0].memory_id == a["id"]


def test_relevance_single_hit_is_one(cache, append):
    a = rec(content="zebra")
    append(a, rec(content="other"))
    (hit,) = search(cache.conn, SearchQuery(match=text("zebra")))
    assert hit.memory_id == a["id"] and hit.relevance == 1.0


def test_text_any_token_matches(cache, append):
    a, b = rec(content="alpha"), rec(content="bravo")
    append(a, b, rec(content="charlie"))
    assert set(run(cache, match=text("alpha bravo"))) == {a["id"], b["id"]}


def test_no_text_hit_gives_nothing(cache, append):
    append(rec(content="alpha"))
    assert run(cache, match=text("zulu")) == []


@pytest.mark.parametrize("words", ['"quoted"', "quoted!!", "QUOTED"])
def test_punctuation_and_case_in_queries(cache, append, words):
    a = rec(content="a quoted word")
    append(a)
    assert run(cache, match=text(words)) == [a["id"]]


def test_fts_rows_is_the_index_row_count(cache, append):
    from ynm.index.search import fts_rows

    assert fts_rows(cache.conn) == 0
    a, b = rec(content="alpha"), rec(content="beta")
    append(a, b)
    assert fts_rows(cache.conn) == 2 == cache.conn.execute("SELECT count(*) FROM fts").fetchone()[0]
    # a supersede replaces the memory's row: still two
    append(rec(id=ulid(), memoryId=a["id"], op="supersede", content="alpha two",
               recordedAt="2026-01-02T00:00:00.000Z", links=[{"rel": "supersedes", "to": a["id"]}]))
    assert fts_rows(cache.conn) == 2


@pytest.mark.parametrize("n", [1, 127, 128, 16383, 16384, 20000])
def test_fts_rows_reads_every_varint_length(n):
    # the averages record holds the count as an SQLite varint of 1, 2 or 3 bytes here
    import sqlean

    from ynm.index.search import fts_rows

    conn = sqlean.connect(":memory:", isolation_level=None)  # autocommit, as the cache's
    conn.execute("CREATE VIRTUAL TABLE fts USING fts5(content, content = '')")
    conn.executemany("INSERT INTO fts(rowid, content) VALUES (?, ?)",
                     ((i, f"word{i % 7}") for i in range(1, n + 1)))
    assert fts_rows(conn) == n


def test_words_no_memory_holds_weigh_as_the_known_ones_on_average(log, cache, append):
    """``unknown_words`` names the question's words no memory holds, only while they are
    fewer than the words some memory holds; ``coverage`` weighs each of them as the mean IDF
    of the others (BM25 would give it the highest IDF of all)."""
    from ynm.index.search import _bm25_idf, coverage, fts_rows, phrase_hits
    from ynm.service.recall import unknown_words

    outage = rec(content="payout outage: the bank rotated its host key")
    append(outage, rec(content="payout batches go to the bank at 14:00"),
           rec(content="deploy the ledger"), rec(content="the ledger keeps long balances"))
    conn = cache.conn
    rowid = conn.execute("SELECT rowid FROM memories WHERE memory_id = ?",
                         (outage["id"],)).fetchone()[0]
    assert unknown_words([conn], "why did the payout outage happen") == {'"happen"'}
    assert unknown_words([conn], "payout outage") == frozenset()
    # as many unknown words as known ones: the question is about something else
    assert unknown_words([conn], "how long is a marathon") == frozenset()
    assert unknown_words([conn], "capital of Australia") == frozenset()
    # a question of unknown words only leaves none out (and finds nothing)
    assert unknown_words([conn], "zzzqqq") == frozenset()
    # counted over every mount searched: a word another mount holds is not unknown there
    import sqlean as sqlite3

    other = sqlite3.connect(":memory:")
    other.execute("CREATE VIRTUAL TABLE fts USING fts5(summary, content, subject, tags, "
                  "tokenize = 'porter unicode61')")
    other.execute("INSERT INTO fts VALUES ('it happened once', '', '', '')")
    assert unknown_words([conn, other], "why did the payout outage happen") == frozenset()
    rows = fts_rows(conn)
    idf = {w: _bm25_idf(rows, phrase_hits(conn, w)) for w in ('"payout"', '"outage"')}
    share = coverage(conn, ['"payout"', '"outage"'], [rowid], unseen=1)[rowid]
    mean = (idf['"payout"'] + idf['"outage"']) / 2
    assert share == pytest.approx(sum(idf.values()) / (sum(idf.values()) + mean))
    assert share == pytest.approx(2 / 3)  # both words held, each as heavy as the unseen one
    # with "happen" at BM25's IDF, the same memory held less than half of the question
    assert coverage(conn, ['"payout"', '"outage"', '"happen"'], [rowid])[rowid] < 0.5


def test_an_update_time_bound_not_in_the_canonical_form_is_compared_as_text():
    """Bounds are canonical when they come through ynm.model.inputs; any other text is still
    compared with the ``updated_at`` text rather than given to the millisecond column."""
    sql, args = filter_sql(SearchQuery(since="2026-01-01", include_tombstoned=True))
    assert (sql, args) == ("m.updated_at >= ?", ["2026-01-01"])
