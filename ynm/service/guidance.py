"""Similar-memory guidance: the note a write gets when memories like it already exist
(reference/algorithms.md §2.10, cli.md §4.20), found from the content's rarest words in each
local mount's cache. Reached through ``Ynm.similar_guidance`` and a group commit's
``Ynm.remember_many``."""

from __future__ import annotations

import json
import math
from typing import Any

from ynm.model.text import fts_text, overlap_coefficient, overlap_words

SIMILAR_AT = 0.6  # overlap coefficient from which a memory counts as similar (algorithms §2.10)
GUIDANCE_LIMIT = 4  # similar memories named at most (algorithms §2.10: a recall of limit 4)
GUIDANCE_CANDIDATES = 40  # memories tested per mount (recall's candidates for limit 4)
GUIDANCE_WORDS = 8  # rarest content words searched for them at most (see similar_guidance)


def similar_guidance(caches: list[Any], memory_id: str, content: str, *, now_ms: int,
                     seen: dict[Any, Any] | None = None) -> str | None:
    """The note a write gets when similar memories already exist, or None.

    Similar (reference/algorithms.md §2.10, cli.md §4.20): a memory other than this one
    whose word overlap coefficient with the content, ``|A ∩ B| / min(|A|, |B|)``, is at
    least 0.6 (:data:`SIMILAR_AT`; words: lowercase ``[a-z0-9]`` runs of 3+ characters
    minus a few stop words, and the character pairs of Han, kana and Hangul:
    :func:`ynm.model.text.overlap_words`, compared against its content, else its
    summary). Live memories of the local mounts only (hosted stores are not asked, the
    write does not wait on the network); at most :data:`GUIDANCE_LIMIT`, the highest
    overlap first, then the best BM25 match, then the newest id. Never blocks a write.

    The note: ``<n> similar memor(y exists|ies exist): <id> (<summary>); ... If one of them
    is the same fact, prefer `ynm supersede` over a duplicate.``; when more than
    :data:`GUIDANCE_LIMIT` are similar, ``<n> similar memories found; the 4 most similar:
    ...``, so the cut is never silent (``n`` counts the similar memories among those tested,
    below: "found", as one that holds under 60% of the content's words may be left out).

    Which memories are tested: in each mount, the :data:`GUIDANCE_CANDIDATES` that BM25
    ranks best for the content's rarest words that some other memory holds, as many as it
    takes to reach every memory holding 60% of the content's words (with ``n`` words
    and ``need = ceil(0.6 n)`` of them to share, a memory holding ``need`` misses at most
    ``n - need``, so it holds one of any ``n - need + 1``), at most
    :data:`GUIDANCE_WORDS`. The reference tests the first 4 hits of a recall of the
    content's first 200 characters instead; that recall scores every memory holding any
    of its words and pairs (2 s a write at 100k memories of prose, growing with the
    store), and a similar memory ranked fifth behind dissimilar ones was never named.
    Here the test comes before the cut to 4, the search costs what a few rare words cost
    (:func:`ynm.index.search.held_counts` bounds the counting), and vectors are not asked
    (a memory that can pass holds the words searched).

    ``caches``: the local mounts' caches (ynm.index.cache.MountCache), already refreshed,
    in mount order; ``now_ms``: the reader's clock (expired working memory is left out).
    ``seen``: what earlier calls against the same store state looked up (word counts, each
    search's tested candidates), shared by the writes of one group commit, whose contents
    often search the same words; the answers are the same as without it.
    """
    from ynm.index.search import held_counts

    words = overlap_words(content)
    if not words:  # the overlap with no words is 0: nothing can be similar
        return None
    need = math.ceil(SIMILAR_AT * len(words) - 1e-9)
    seen = {} if seen is None else seen
    found: list[tuple[float, float, str, str]] = []  # (overlap, relevance, id, summary)
    for n, cache in enumerate(caches):
        conn = cache.conn
        phrases = [f'"{fts_text(w)}"' for w in sorted(words)]
        unseen = [p for p in phrases if (n, p) not in seen]
        if unseen:
            counts = held_counts(conn, unseen)
            seen.update({(n, p): counts.get(p, 0) for p in unseen})
        # the memory itself is in the cache already: its words count for others only
        own = _held_by(conn, memory_id, phrases)
        held = {p: seen[n, p] - (p in own) for p in phrases if seen[n, p] - (p in own)}
        take = min(GUIDANCE_WORDS, max(1, len(held) - need + 1))
        rarest = tuple(sorted(held, key=lambda p: (held[p], p))[:take])
        if not rarest:
            continue
        if (n, rarest) not in seen:
            seen[n, rarest] = guidance_candidates(conn, rarest, now_ms)
        for other, summary, their_words, relevance in seen[n, rarest]:
            if other != memory_id:
                overlap = overlap_coefficient(words, their_words)
                if overlap >= SIMILAR_AT:
                    found.append((overlap, relevance, other, summary))
    found.sort(reverse=True)
    similar = found[:GUIDANCE_LIMIT]
    if not similar:
        return None
    verb = "memory exists" if len(similar) == 1 else "memories exist"
    listed = "; ".join(f"{other} ({summary})" for _, _, other, summary in similar)
    if len(found) > len(similar):  # say that the list is cut, and from how many
        head = f"{len(found)} similar memories found; the {len(similar)} most similar"
    else:
        head = f"{len(similar)} similar {verb}"
    return (f"{head}: {listed}. If one of them is the same fact, "
            "prefer `ynm supersede` over a duplicate.")


def guidance_candidates(conn: Any, phrases: tuple[str, ...], now_ms: int
                        ) -> list[tuple[str, str, set[str], float]]:
    """The memories :func:`similar_guidance` tests in one mount's cache (``conn``): the
    :data:`GUIDANCE_CANDIDATES` live ones BM25 ranks best for ``phrases`` (quoted FTS5
    words, OR-ed), as ``(memory id, summary, overlap words, relevance)``, best first;
    the overlap words are those of the content, else the summary."""
    from ynm.index.search import SearchQuery, search

    found = search(conn, SearchQuery(match=" OR ".join(phrases), phrases=list(phrases),
                                     now_ms=now_ms, limit=GUIDANCE_CANDIDATES))
    rows = {r[0]: r for r in conn.execute(
        "SELECT rowid, memory_id, summary, content FROM memories "
        "WHERE rowid IN (SELECT value FROM json_each(?))",
        (json.dumps([c.rowid for c in found]),))}
    return [(rows[c.rowid][1], rows[c.rowid][2],
             overlap_words(rows[c.rowid][3] or rows[c.rowid][2]), c.relevance)
            for c in found]


def _held_by(conn: Any, memory_id: str, phrases: list[str]) -> set[str]:
    """The quoted FTS5 ``phrases`` that the memory ``memory_id`` holds in the cache ``conn``
    (none when the cache has no such memory)."""
    row = conn.execute("SELECT rowid FROM memories WHERE memory_id = ?", (memory_id,)).fetchone()
    if row is None:
        return set()
    return {p for p in phrases
            if conn.execute("SELECT 1 FROM fts WHERE fts MATCH ? AND rowid = ?",
                            (p, row[0])).fetchone()}
