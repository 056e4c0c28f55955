"""A long question costs a bounded number of phrases and statements (ynm/index/search.py,
``select_phrases`` and ``search``): repeated words are searched once, and a paragraph keeps its
most selective words and pairs, so its work no longer grows with its length."""

from __future__ import annotations

import random
import re
from types import SimpleNamespace

import pytest

from benchmarks.corpus import generate_corpus
from ynm.index import search as search_mod
from ynm.index.search import (
    MAX_QUERY_PAIRS,
    MAX_QUERY_WORDS,
    SELECT_COUNT_BOUND,
    SearchQuery,
    phrase_hits,
    search,
    search_sql,
    select_phrases,
)
from ynm.model.jsonl import dumps_record
from ynm.model.shards import ShardKey
from ynm.model.text import query_phrases, tokenize

from .conftest import rec

RARE = ("quetzal", "obsidian", "marmalade")


@pytest.fixture(scope="module")
def corpus():
    return generate_corpus(seed=7, count=3000, level="distributed", namespaces=("common",))


@pytest.fixture
def filled(log, cache, corpus, append):
    groups: dict[ShardKey, list] = {}
    for r in corpus.records:
        groups.setdefault(ShardKey(r.level, r.namespace, r.type, r.bucket), []).append(r)
    log.append({k: ("".join(dumps_record(r) + "\n" for r in rs).encode(), len(rs))
                for k, rs in groups.items()})
    cache.refresh(log)
    target = rec(content=f"The {RARE[0]} box went to {RARE[1]} hall with the {RARE[2]} jar.")
    append(target)
    return SimpleNamespace(conn=cache.conn, target_id=target["id"])


def paragraph(corpus, chars: int = 2000) -> str:
    text = ""
    for r in corpus.records[::7]:
        text += (r.content or "") + " "
        if len(text) > chars:
            break
    return text[:chars].rsplit(" ", 1)[0]


def many_words(corpus, n: int = 300) -> str:
    vocabulary = sorted({w for r in corpus.records[:500] for w in tokenize(r.content or "")})
    made_up = [f"zz{i:03d}" for i in range(n)]  # held by no memory
    words = random.Random(1).sample(vocabulary, min(len(vocabulary), n // 2)) + made_up
    return " ".join(words)[:2000]


def traced(conn, q: SearchQuery) -> tuple[list, list[str]]:
    statements: list[str] = []

    def seen(sql: str) -> None:  # ours, not FTS5's own nor the cache's data_version checks
        if not sql.startswith("--") and "data_version" not in sql:
            statements.append(sql)

    conn.set_trace_callback(seen)
    try:
        got = search(conn, q)
    finally:
        conn.set_trace_callback(None)
    return got, statements


def text_query(text: str, limit: int = 40) -> SearchQuery:
    phrases = query_phrases(text)
    return SearchQuery(match=" OR ".join(phrases), phrases=phrases, limit=limit)


def test_short_questions_search_every_phrase_unchanged(filled, corpus):
    conn = filled.conn
    texts = [q.text for q in corpus.queries[:20]]
    texts.append(" ".join(f"w{i}x" for i in range(MAX_QUERY_WORDS)))  # at the cap
    for text in texts:
        phrases = query_phrases(text)
        assert select_phrases(conn, phrases) == (phrases, {})
        q = text_query(text)
        search(conn, q)
        assert list(q.phrases) == phrases


@pytest.mark.parametrize("kind", ["repeated", "paragraph", "distinct"])
def test_long_questions_search_a_bounded_number_of_phrases(filled, corpus, kind):
    conn = filled.conn
    text = {"repeated": ("deploy the ledger " * 120)[:2000].rsplit(" ", 1)[0],
            "paragraph": paragraph(corpus),
            "distinct": many_words(corpus)}[kind]
    assert 1900 <= len(text) <= 2000
    q = text_query(text)
    distinct_words = len(set(tokenize(text)))
    got, statements = traced(conn, q)
    assert got
    words = [p for p in q.phrases if " " not in p]
    pairs = [p for p in q.phrases if " " in p]
    assert len(words) <= MAX_QUERY_WORDS and len(pairs) <= MAX_QUERY_PAIRS
    assert q.match == " OR ".join(q.phrases)
    # the statements on the mount's tables (those on the connection's temp tables, the
    # candidates scored by _pruned, and those keeping the counts in the cache file with their
    # transaction, read no index of the mount)
    kept = ("temp.", "ynm_candidates", "ynm_phrase_hits", "PRAGMA busy_timeout", "BEGIN",
            "COMMIT")
    statements = [s for s in statements if not any(k in s for k in kept)]
    scoring = [s for s in statements if "bm25(fts" in s]
    # a narrowed question is scored once by bm25(); a short one at most once (none when the
    # pruning, which scores its candidates itself, is proven)
    assert len(scoring) == 1 if kind != "repeated" else len(scoring) <= 1
    for s in scoring:  # each scores the kept phrases only
        match = re.search(r"MATCH '([^']*)'", s).group(1)
        assert match.count(" OR ") + 1 <= MAX_QUERY_WORDS + MAX_QUERY_PAIRS
    # one count per distinct word to choose (bounded by LIMIT), one per kept phrase, a few more
    assert len(statements) <= distinct_words + 2 * MAX_QUERY_PAIRS + len(q.phrases) + 4
    if kind == "repeated":
        assert q.phrases == ['"deploy"', '"the"', '"ledger"', '"deploy the"', '"the ledger"',
                             '"ledger deploy"']
        # a count per phrase, then per prefix of rarer phrases its rows and their text
        assert len(statements) <= 3 * len(q.phrases) + 3, statements
    else:
        assert len(query_phrases(text)) > 2 * (MAX_QUERY_WORDS + MAX_QUERY_PAIRS)


def test_a_long_question_keeps_its_rarest_words(filled, corpus):
    conn = filled.conn
    text = paragraph(corpus, 900) + f" {RARE[0]} " + paragraph(corpus, 500) + f" {RARE[2]}"
    phrases, hits = select_phrases(conn, query_phrases(text))
    words = [p for p in phrases if " " not in p]
    assert len(words) == MAX_QUERY_WORDS
    assert f'"{RARE[0]}"' in words and f'"{RARE[2]}"' in words
    assert hits[f'"{RARE[0]}"'] == 1
    left_out = [p for p in query_phrases(text) if " " not in p and p not in words]
    kept_max = max(phrase_hits(conn, p) for p in words)
    # a word left out is held by no memory, or by at least as many as any word kept (counts
    # at or above SELECT_COUNT_BOUND are estimates)
    for p in left_out:
        n = phrase_hits(conn, p)
        assert n == 0 or n >= min(kept_max, SELECT_COUNT_BOUND), p
    assert '"the"' not in words
    # the paragraph quotes memories of the store, which rank first; the rare words still find
    # the one memory holding them
    assert filled.target_id in [c.memory_id for c in search(conn, text_query(text))]


def test_words_held_by_no_memory_are_not_searched(filled):
    conn = filled.conn
    text = " ".join(f"nothing{i}" for i in range(40))
    q = text_query(text)
    got, statements = traced(conn, q)
    assert got == [] and list(q.phrases) == []
    assert not [s for s in statements if "bm25(" in s]


def test_pruning_of_a_narrowed_question_is_exact(filled, corpus, monkeypatch):
    monkeypatch.setattr(search_mod, "PRUNE_FROM_ROWS", 0)
    conn = filled.conn
    for text in (paragraph(corpus), paragraph(corpus, 600), many_words(corpus)):
        q = text_query(text)
        search(conn, q)  # narrows q
        full = conn.execute(*search_sql(q)).fetchall()
        assert [c.memory_id for c in search(conn, q)] == [r[1] for r in full]


def test_words_left_out_of_a_long_question_still_count_in_its_word_share(log, cache, append):
    """A pasted paragraph that shares two words with a memory is no full match: the words it
    was not searched with (held by no memory) still weigh in the share of the question a
    memory holds."""
    from ynm.index.search import coverage

    ssh = rec(content="Reminder: rotate my laptop SSH keys every quarter")
    other = rec(content="Deploys go out on Tuesdays after the sync")
    append(ssh, other)
    recipe = ("Lasagne: brown the mince with onion, garlic, carrot and celery, pour in red "
              "wine, simmer with tomatoes and basil, layer with béchamel, parmesan and fresh "
              "pasta sheets, bake until bubbling; we cook it every quarter for the neighbours")
    q = SearchQuery(match=None, limit=40)
    q.phrases = query_phrases(recipe)
    q.match = " OR ".join(q.phrases)
    assert len([p for p in q.phrases if " " not in p]) > MAX_QUERY_WORDS
    found = {c.memory_id: c.rowid for c in search(cache.conn, q)}
    rowid = found[ssh["id"]]
    words = [p for p in q.phrases if " " not in p and p not in ('"the"', '"for"', '"with"')]
    unsearched = q.extra["unsearched"]
    assert '"lasagne"' in unsearched and '"quarter"' not in unsearched
    share = coverage(cache.conn, words, [rowid], q.extra["hits"], unsearched)
    assert share[rowid] < 0.2
    # without the words left out, the two words held looked like most of the question
    assert coverage(cache.conn, words, [rowid], q.extra["hits"])[rowid] > 0.5
