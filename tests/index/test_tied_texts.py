"""The pruned text search on a store where most memories are copies of a few notes
(ynm/index/search.py, ``_pruned``, ``_bm25_groups``, ``_top_rows``): each distinct text is
scored once and the rows of a text share its rank, yet the rows must be exactly those of the
plain statement (``search_sql``, FTS5's ``bm25()``): same rowids, same order (rank, then
memory id descending across hundreds of tied rows), bit-identical ranks, for several question
shapes, filters and limits. Copies that differ only in their tags or subject are different
texts and must not share a rank; and a bound that is too small must make these checks fail."""

from __future__ import annotations

import random
from collections import Counter

import pytest

from ynm.index import search as search_mod
from ynm.index.search import SearchQuery, search_sql
from ynm.model.text import query_phrases

from .conftest import cache_over, rec

# (summary, content, subject, tags): the notes most memories copy
NOTES = [
    ("Ledger on call rotation", "The ledger on-call rotation meets on Monday.",
     "entity:ledger-on-call-rotation", ["meetings"]),
    ("Ledger on call rotation", "The ledger on-call rotation meets on Monday.",
     "entity:ledger-on-call-rotation", ["meetings", "ledger"]),  # differs by one tag
    ("Ledger on call rotation", "The ledger on-call rotation meets on Monday.",
     None, ["meetings"]),  # differs by its subject only
    ("Lena as release manager", "Lena (as release manager) prefers tests before code.",
     "entity:lena-as-release-manager", ["preference"]),
    ("Lena as release manager", ("Lena (as release manager) prefers tests before code. "
                                 "Noted during the retro."),
     "entity:lena-as-release-manager", ["preference"]),
    ("Feature flags cache", "To repair the feature-flags cache, run the sync on call.",
     "entity:feature-flags-cache", ["howto"]),
    ("The gateway rewrite", "The gateway rewrite broke because of a full disk on call.",
     "entity:gateway-rewrite", ["incident"]),
    ("Release notes", "The release notes of the ledger are written on Friday.",
     None, ["release"]),
]
WORDS = ["ledger", "rotation", "release", "manager", "call", "on", "the", "gateway", "flags",
         "cache", "monday", "retro", "disk", "quokka", "zephyr", "notes", "tests", "code"]
TYPES = ["semantic", "episodic", "procedural"]
NAMESPACES = ["common", "common/team"]


def memories(n: int = 1500, seed: int = 11) -> list[dict]:
    """``n`` memories: nine in ten copy one of :data:`NOTES` exactly (so the holders of any
    phrase are mostly tied copies), the others are drawn from :data:`WORDS`."""
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        if rng.random() < 0.9:
            summary, content, subject, tags = rng.choice(NOTES)
        else:
            words = rng.sample(WORDS, rng.randint(3, 9)) + ["on call"] * rng.randint(0, 2)
            rng.shuffle(words)
            content = " ".join(words)
            summary = " ".join(words[:3])
            subject = f"entity:{rng.choice(WORDS)}" if rng.random() < 0.3 else None
            tags = rng.sample(WORDS, rng.randint(0, 2))
        out.append(rec(summary=summary, content=content, subject=subject, tags=list(tags),
                       type=rng.choice(TYPES), namespace=rng.choice(NAMESPACES)))
    return out


@pytest.fixture(scope="module")
def conn(tmp_path_factory):
    """The connection of a cache over :func:`memories` in a real repository (built once)."""
    cache = cache_over(tmp_path_factory.mktemp("tied"), memories())
    yield cache.conn
    cache.close()


QUESTIONS = [
    "ledger on call rotation", "lena as release manager", "gateway rewrite",
    "feature flags cache", "the ledger release notes", "release manager tests",
    "ledger meetings", "zephyr quokka ledger", "on call monday retro",
    # the rarest words are held by a few weak matches, the best rows hold the common ones
    "quokka gateway rewrite disk", "zephyr lena as release manager tests code",
]
FILTERS = [
    {"limit": 1}, {"limit": 7}, {"limit": 40}, {"limit": 300},
    {"limit": 10, "types": ["episodic"]},
    {"limit": 10, "namespace": "common/team"},
    {"limit": 10, "tags": ["ledger"]},
    {"limit": 10, "exclude_tags": ["meetings"], "types": ["semantic", "procedural"]},
    {"limit": 10, "subject": "entity:ledger-on-call-rotation"},
]


def text_query(text: str, **filters) -> SearchQuery:
    phrases = query_phrases(text)
    return SearchQuery(match=" OR ".join(phrases), phrases=phrases, **filters)


def plain(conn, q: SearchQuery) -> list:
    sql, args = search_sql(q)
    return conn.execute(sql, args).fetchall()


@pytest.fixture
def pruning(monkeypatch):
    # prune from the first row: the store is small, the argument is the same
    monkeypatch.setattr(search_mod, "PRUNE_FROM_ROWS", 0)


@pytest.mark.parametrize("filters", FILTERS)
def test_pruned_rows_are_the_statement_rows(conn, pruning, filters):
    proven = 0
    for text in QUESTIONS:
        want = plain(conn, text_query(text, **filters))
        got = search_mod._pruned(conn, text_query(text, **filters))
        if got is not None:
            proven += 1
            assert got == want, text  # rowid, memory id and the float rank, exactly
        found = search_mod.search(conn, text_query(text, **filters))
        assert [(c.rowid, c.memory_id) for c in found] == [(r[0], r[1]) for r in want], text
    assert proven >= 4  # the pruned path ran and was proven, not only the statement


def test_the_store_ties_and_each_text_is_scored_once(conn, pruning):
    q = text_query("ledger on call rotation", limit=40)
    want = plain(conn, q)
    # the top 40 rows are copies of one note: one rank, ordered by memory id alone
    assert Counter(r[2] for r in want).most_common(1)[0][1] >= 30
    assert search_mod._pruned(conn, q) == want
    phrases = list(q.phrases)
    rows, avgdl = search_mod.fts_stats(conn)
    idfs = [search_mod._bm25_idf(rows, search_mod.phrase_hits(conn, p)) for p in phrases]
    holders = [r[0] for r in conn.execute("SELECT rowid FROM fts WHERE fts MATCH ?",
                                          ('"ledger on"',))]
    groups = search_mod._bm25_groups(conn, q, phrases, idfs, avgdl, holders)
    assert len(holders) > 300 and len(groups) < len(holders) / 10
    # every row of every group is the row bm25() scores, bit for bit
    every = text_query("ledger on call rotation", limit=len(holders) * 10)
    scored = {r[0]: r for r in plain(conn, every)}
    for rank, rowids, memory_ids in groups:
        for rowid, memory_id in zip(rowids.split(","), memory_ids.split(",")):
            assert scored[int(rowid)] == (int(rowid), memory_id, rank)


def test_copies_that_differ_in_tags_or_subject_are_ranked_apart(conn, pruning):
    # NOTES[0..2] share summary and content; the tag "ledger" or the missing subject changes
    # their BM25 (an extra instance, a shorter row), so one group per text, three ranks;
    # every holder of a word of the question is listed
    q = text_query("ledger on call rotation", limit=2000)
    want = plain(conn, q)
    by_text = {}
    for rowid, _, rank in want:
        text = conn.execute("SELECT summary, content, subject, tags FROM memories "
                            "WHERE rowid = ?", (rowid,)).fetchone()
        by_text.setdefault(text, set()).add(rank)
    copies = [t for t in by_text if t[0] == "Ledger on call rotation"]
    assert len(copies) == 3
    assert all(len(by_text[t]) == 1 for t in copies)  # a text has one rank
    assert len({min(by_text[t]) for t in copies}) == 3  # and the three texts three ranks


def test_a_bound_too_small_makes_the_pruned_rows_wrong(conn, pruning, monkeypatch):
    # The checks above hold only because the bound is right: with the IDF alone (the factor
    # k1 + 1 forgotten), the search stops before rows that outrank its top and returns rows
    # the statement does not.
    monkeypatch.setattr(search_mod, "_phrase_bound", lambda idf: idf)
    wrong = 0
    for text in QUESTIONS:
        for filters in FILTERS:
            got = search_mod._pruned(conn, text_query(text, **filters))
            if got is not None and got != plain(conn, text_query(text, **filters)):
                wrong += 1
    assert wrong > 0


def test_the_holders_of_a_rare_phrase_are_kept_and_go_stale_with_the_index(
        cache, append, monkeypatch):
    conn = cache.conn

    def holding(objs):  # the rowids of those of ``objs`` whose content holds "on call"
        rowid = dict(conn.execute("SELECT memory_id, rowid FROM memories"))
        return sorted(rowid[o["memoryId"]] for o in objs if "on call" in o["content"])

    first = [rec(content="ledger on call"), rec(content="ledger rota"),
             rec(content="payments on call")]
    append(*first)
    assert sorted(search_mod.phrase_holders(conn, '"on call"')) == holding(first)
    assert search_mod.phrase_holders(conn, '"absent"') == []
    # kept with the count: the second answer comes from the cache file's table
    conn.execute("UPDATE ynm_phrase_hits SET holders = '[1, 2, 3]' "
                 "WHERE phrase = '\"on call\"'")
    assert search_mod.phrase_holders(conn, '"on call"') == [1, 2, 3]
    more = [rec(content="on call again")]
    append(*more)  # the memories changed: taken again
    assert sorted(search_mod.phrase_holders(conn, '"on call"')) == holding([*first, *more])
    # a phrase held by more memories than the pruned search scores keeps no rowids
    monkeypatch.setattr(search_mod, "PRUNE_MAX_SCORED", 3)
    append(rec(content="on call once more"))
    assert search_mod.phrase_holders(conn, '"on call"') is None
    assert search_mod.phrase_counts(conn, ['"on call"']) == {'"on call"': 4}
