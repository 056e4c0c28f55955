"""The pruned text search returns exactly the rows of the full BM25 query (ynm/index/search.py,
``_pruned``): same ids, same order, same scores, with and without filters, for the phrases
recall really searches with (single words and adjacent pairs, ynm.model.text.query_phrases)."""

from __future__ import annotations

import random

import pytest

from benchmarks.corpus import generate_corpus
from ynm.index import search as search_mod
from ynm.index.search import SearchQuery, search_sql
from ynm.model.jsonl import dumps_record
from ynm.model.shards import ShardKey
from ynm.model.text import query_phrases, tokenize


@pytest.fixture(scope="module")
def corpus():
    return generate_corpus(seed=7, count=3000, level="distributed", namespaces=("common",))


@pytest.fixture
def filled(log, cache, corpus):
    groups: dict[ShardKey, list] = {}
    for r in corpus.records:
        groups.setdefault(ShardKey(r.level, r.namespace, r.type, r.bucket), []).append(r)
    log.append({k: ("".join(dumps_record(r) + "\n" for r in rs).encode(), len(rs))
                for k, rs in groups.items()})
    cache.refresh(log)
    return cache


def queries(corpus, n: int = 60) -> list[str]:
    rng = random.Random(3)
    words = sorted({w for r in corpus.records[:400] for w in tokenize(r.content or "")})
    out = [q.text for q in corpus.queries[:30]]
    out += [" ".join(rng.sample(words, rng.randint(2, 5))) for _ in range(n - len(out))]
    return out


@pytest.mark.parametrize("limit", [5, 40])
@pytest.mark.parametrize("types", [(), ("semantic",)])
def test_pruned_rows_equal_the_full_query(filled, corpus, monkeypatch, limit, types):
    monkeypatch.setattr(search_mod, "PRUNE_FROM_ROWS", 0)
    conn = filled.conn
    pruned_used = 0
    for text in queries(corpus):
        phrases = query_phrases(text)
        q = SearchQuery(match=" OR ".join(phrases), phrases=phrases, types=types, limit=limit)
        sql, args = search_sql(q)
        full = conn.execute(sql, args).fetchall()
        got = search_mod._pruned(conn, q)
        if got is not None:
            pruned_used += 1
            assert got == full, text
        assert [c.memory_id for c in search_mod.search(conn, q)] == [r[1] for r in full]
    assert pruned_used >= 10  # the pruning really ran, and was proven exact each time
