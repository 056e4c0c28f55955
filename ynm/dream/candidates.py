"""Nearest neighbours for dedupe, found without any model (reference/algorithms.md §4.9).

For each owner (a fresh memory), up to ``k`` memories of the same type, in the same mount and
in the run's scope, taken alternately from two lists:

- lexical: the owner's summary and first 400 characters of content, as words (lowercase runs
  of letters and digits, three or more characters), of which the :data:`RARE_WORDS` held by
  the fewest memories of the pool (and by at least one other) are searched with FTS5 in the
  mount's cache, best BM25 first. Searching a memory's rarest words instead of all of them
  finds the same near-duplicates at a fraction of the cost (a duplicate shares the rare words
  too) and keeps a first run over a large store fast.
- vectors, when the mount's cache holds vectors of the configured embedder: the stored vectors
  of the pool (nothing is embedded here beyond what recall would embed), moved by the mount's
  centroid as ynm.index.search.vector_search moves them, nearest by cosine, at least
  ynm.service.ynm.SIMILARITY_FLOOR.

Neither list goes through a reranker or a judge.
"""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ynm.dream.engine import Mem, Run

__all__ = ["RARE_WORDS", "neighbours", "owner_words"]

RARE_WORDS = 8
_WORD = re.compile(r"[^\W_]{3,}")
_BLOCK = 256  # owners scored against their pool at once (vector neighbours)


def owner_words(m: Mem) -> list[str]:
    """The distinct words of ``m``'s summary and first 400 characters of content, in order."""
    text = f"{m.current.get('summary') or ''} {m.content[:400]}".lower()
    return list(dict.fromkeys(_WORD.findall(text)))


def neighbours(run: Run, owners: list[Mem], pool: dict[str, Mem], k: int) -> dict[str, list[str]]:
    """Owner id -> up to ``k`` neighbour ids (never the owner), lexical and vector
    neighbours alternating, nearest first. See the module docstring."""
    if not owners:
        return {}
    lexical = _lexical(run, owners, pool, k)
    vectors = _vectors(run, owners, pool, k)
    out: dict[str, list[str]] = {}
    for m in owners:
        lex, vec = lexical.get(m.id, []), vectors.get(m.id, [])
        merged: list[str] = []
        for i in range(max(len(lex), len(vec))):
            for source in (lex, vec):
                if i < len(source) and source[i] != m.id and source[i] not in merged:
                    merged.append(source[i])
        out[m.id] = merged[:k]
    return out


def _lexical(run: Run, owners: list[Mem], pool: dict[str, Mem], k: int) -> dict[str, list[str]]:
    from ynm.index.search import BM25_WEIGHTS, SearchQuery, filter_sql

    words_of = {i: owner_words(m) for i, m in pool.items()}
    df: Counter[str] = Counter()
    for ws in words_of.values():
        df.update(ws)
    weights = ", ".join(str(w) for w in BM25_WEIGHTS)
    out: dict[str, list[str]] = {}
    for m in owners:
        rare = sorted((w for w in words_of.get(m.id) or owner_words(m) if df[w] >= 2),
                      key=lambda w: (df[w], w))[:RARE_WORDS]
        if not rare:
            continue
        cond, args = filter_sql(SearchQuery(types=[m.type], namespace=run.inp.namespace))
        match = " OR ".join('"' + w.replace('"', '""') + '"' for w in rare)
        rows = m.mount.cache.conn.execute(
            f"SELECT m.memory_id FROM fts JOIN memories m ON m.rowid = fts.rowid "
            f"WHERE fts MATCH ? AND {cond} ORDER BY bm25(fts, {weights}), m.memory_id DESC "
            f"LIMIT ?", [match, *args, k + 1]).fetchall()
        out[m.id] = [r[0] for r in rows if r[0] != m.id and r[0] in pool]
    return out


def _vectors(run: Run, owners: list[Mem], pool: dict[str, Mem], k: int) -> dict[str, list[str]]:
    """Vector neighbours per owner (empty when vector search is off or unavailable)."""
    if run.ynm.config.embedder == "none":
        return {}
    import numpy as np

    from ynm.index.search import centroid
    from ynm.service.ynm import SIMILARITY_FLOOR

    out: dict[str, list[str]] = {}
    for mount in run.ynm.mounts:
        mine = [m for m in owners if m.mount is mount]
        if not mine:
            continue
        try:
            if run.ynm._vectors_current(mount, None) is None or not mount.cache.has_vectors:
                continue
        except Exception:  # noqa: BLE001 (vectors are a help here, never a failure)
            continue
        conn = mount.cache.conn
        members = [m for m in pool.values() if m.mount is mount]
        rowids = {m.rowid: m for m in members}
        vectors: dict[int, np.ndarray] = {}
        for rowid, blob in conn.execute(
                "SELECT rowid, embedding FROM vectors WHERE rowid IN "
                "(SELECT value FROM json_each(?))", (_json(list(rowids)),)):
            vectors[rowid] = np.frombuffer(blob, dtype=np.float32)
        if not vectors:
            continue
        center = centroid(conn)
        shift = np.frombuffer(center, dtype=np.float32) if center is not None else 0.0
        by_type: dict[str, list[Mem]] = {}
        for m in members:
            if m.rowid in vectors:
                by_type.setdefault(m.type, []).append(m)
        for kind, group in by_type.items():
            matrix = np.stack([vectors[m.rowid] for m in group]) - shift
            norms = np.linalg.norm(matrix, axis=1, keepdims=True)
            matrix = matrix / np.where(norms > 0, norms, 1.0)
            index = {m.id: i for i, m in enumerate(group)}
            queries = [m for m in mine if m.type == kind and m.id in index]
            for start in range(0, len(queries), _BLOCK):
                block = queries[start:start + _BLOCK]
                sims = matrix[[index[m.id] for m in block]] @ matrix.T
                for row, m in zip(sims, block, strict=True):
                    row[index[m.id]] = -2.0
                    take = min(k, len(group) - 1)
                    if take <= 0:
                        continue
                    top = np.argpartition(-row, take - 1)[:take]
                    top = top[np.argsort(-row[top])]
                    out[m.id] = [group[i].id for i in top if row[i] >= SIMILARITY_FLOOR]
    return out


def _json(values: list[int]) -> str:
    import json

    return json.dumps(values)
