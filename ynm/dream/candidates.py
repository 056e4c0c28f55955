"""Nearest neighbours for dedupe, found without any model (reference/algorithms.md §4.9).

For each owner (a fresh memory), up to ``k`` memories of the same type, in the same mount and
in the run's scope, taken alternately from two lists:

- lexical: the owner's summary and first 400 characters of content, as words (lowercase runs
  of letters and digits, three or more characters); its :data:`RARE_WORDS` held by the fewest
  memories of the same mount and type (at least one other, at most :data:`MAX_WORD_SHARE` of
  them) are looked up in an inverted index of those memories, and the memories holding them
  are ranked by the summed IDF of the words they share. A duplicate shares the rare words, so
  this finds near-duplicates as a full-text search would, without a query per memory: FTS5
  with BM25 cost 5 to 16 ms per memory on the seeded 10k store of benchmarks/dream.py (so
  minutes for a first run at 100k), the index a fraction of a millisecond.
- vectors, when the mount's cache holds vectors of the configured embedder: the stored vectors
  of the pool (nothing is embedded here beyond what recall would embed), moved by the mount's
  centroid as ynm.index.search.vector_search moves them, nearest by cosine, at least
  ynm.service.ynm.SIMILARITY_FLOOR.

Neither list goes through a reranker or a judge.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ynm.dream.engine import Mem, Run

__all__ = ["RARE_WORDS", "neighbours", "owner_words"]

RARE_WORDS = 8
# A word held by more than this share of a group's memories (and by more than the floor) is
# no rare word: it says little and its postings cost the most.
MAX_WORD_SHARE = 0.05
MAX_WORD_SHARE_FLOOR = 1000
# The rarest words are taken until their postings would pass this many (at least one word):
# what bounds an owner's cost on a store whose words are all common.
POSTINGS_BUDGET = 4096
_WORD = re.compile(r"[^\W_]{3,}")
_BLOCK = 256  # owners scored against their pool at once (vector neighbours)


def owner_words(m: Mem) -> list[str]:
    """The distinct words of ``m``'s summary and first 400 characters of content, in order."""
    text = f"{m.raw_summary} {m.content[:400]}".lower()
    return list(dict.fromkeys(_WORD.findall(text)))


def neighbours(run: Run, owners: list[Mem], pool: dict[str, Mem], k: int,
               cache: dict | None = None) -> dict[str, list[str]]:
    """Owner id -> up to ``k`` neighbour ids (never the owner), lexical and vector
    neighbours alternating, nearest first. See the module docstring. An owner's neighbours
    depend only on it and ``pool``, so a pass may ask for its owners a block at a time,
    passing the same ``cache`` (a dict it keeps for one ``pool``): the lexical index of each
    mount and type is then built once, when an owner of it is first asked for."""
    if not owners:
        return {}
    lexical = _lexical(run, owners, pool, k, {} if cache is None else cache)
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


class _Index:
    """The inverted index of one mount's memories of one type (``group``, sorted by id):
    numpy arrays of postings (``post_doc`` sorted by word, ``starts`` per word), ``df``,
    ``idf`` and each memory's word ids."""

    def __init__(self, group: list[Mem]) -> None:
        import numpy as np

        self.group = group
        self.index = {m.id: i for i, m in enumerate(group)}
        vocab: dict[str, int] = {}
        self.doc_words = [[vocab.setdefault(w, len(vocab)) for w in owner_words(m)]
                          for m in group]
        post_doc = np.fromiter((d for d, ws in enumerate(self.doc_words) for _ in ws),
                               dtype=np.int32)
        post_word = np.fromiter((w for ws in self.doc_words for w in ws), dtype=np.int32)
        order = np.argsort(post_word, kind="stable")
        self.post_doc = post_doc[order]
        self.df = np.bincount(post_word, minlength=len(vocab))
        self.starts = np.concatenate(([0], np.cumsum(self.df)))
        n = len(group)
        self.idf = np.log1p(n / np.maximum(self.df, 1))
        self.cap = max(MAX_WORD_SHARE_FLOOR, int(n * MAX_WORD_SHARE))
        self.ids = np.array([m.id for m in group])


def _lexical(run: Run, owners: list[Mem], pool: dict[str, Mem], k: int,
             cache: dict | None = None) -> dict[str, list[str]]:
    """Lexical neighbours per owner: see the module docstring. Per mount and type, an inverted
    index (numpy arrays of postings) over the pool's words, built once per ``cache``; an
    owner's score for a memory is the sum of ``ln(1 + N / df)`` over the owner's rare words the
    memory holds, best first, ties by memory id descending."""
    import numpy as np

    cache = {} if cache is None else cache
    wanted: dict[tuple[str, str], list[Mem]] = {}
    for m in owners:
        wanted.setdefault((m.mount.id, m.type), []).append(m)
    if "groups" not in cache:
        groups: dict[tuple[str, str], list[Mem]] = {}
        for m in pool.values():
            groups.setdefault((m.mount.id, m.type), []).append(m)
        cache["groups"] = groups
    out: dict[str, list[str]] = {}
    for key, mine in wanted.items():
        if key not in cache:
            group = sorted(cache["groups"].get(key, []), key=lambda m: m.id)
            cache[key] = _Index(group) if len(group) >= 2 else None
        ix = cache[key]
        if ix is None:
            continue
        df, starts, post_doc, idf = ix.df, ix.starts, ix.post_doc, ix.idf
        for m in mine:
            i = ix.index.get(m.id)
            if i is None:
                continue
            rare, budget = [], POSTINGS_BUDGET
            for w in sorted((w for w in ix.doc_words[i] if 2 <= df[w] <= ix.cap),
                            key=lambda w: (df[w], w))[:RARE_WORDS]:
                if rare and df[w] > budget:
                    break
                rare.append(w)
                budget -= df[w]
            if not rare:
                continue
            docs = np.concatenate([post_doc[starts[w]:starts[w + 1]] for w in rare])
            weights = np.concatenate([np.full(df[w], idf[w]) for w in rare])
            found, inverse = np.unique(docs, return_inverse=True)
            scores = np.bincount(inverse, weights=weights)
            scores[found == i] = -1.0
            take = min(k, len(found) - 1)
            if take <= 0:
                continue
            top = np.argpartition(-scores, take - 1)[:take] if take < len(found) else \
                np.arange(len(found))
            best = sorted(((float(scores[t]), str(ix.ids[found[t]])) for t in top
                           if scores[t] > 0), key=lambda p: p[1], reverse=True)
            best.sort(key=lambda p: p[0], reverse=True)  # stable: ties keep id descending
            out[m.id] = [memory_id for _, memory_id in best[:k]]
    return out


def _vectors(run: Run, owners: list[Mem], pool: dict[str, Mem], k: int) -> dict[str, list[str]]:
    """Vector neighbours per owner (empty when vector search is off or unavailable)."""
    if run.ynm.config.embedder == "none":
        return {}
    import numpy as np

    from ynm.index.search import centroid
    from ynm.service.recall import SIMILARITY_FLOOR

    out: dict[str, list[str]] = {}
    for mount in run.ynm.mounts:
        mine = [m for m in owners if m.mount is mount]
        if not mine:
            continue
        try:
            if run.ynm._vectors_current(mount, None) is None or not mount.cache.has_vectors:
                continue
        except Exception as err:  # noqa: BLE001 (vectors are a help here, never a failure)
            run.ynm.warnings.append(f"dedupe: no vector neighbours in mount {mount.id} "
                                    f"({type(err).__name__}: {err})")
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
