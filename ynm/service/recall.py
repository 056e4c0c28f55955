"""Ranked recall across mounts: candidates from full text and vectors, their fusion into one
relevance per mount, the weighing of mounts against each other, and the hit shape.

The service's ``recall`` and ``context`` call :func:`ranked_across`; everything here reads the
mounts' caches through :mod:`ynm.index.search` and scores with seed 001's ranker
(:mod:`ynm.model.ranker`). The embedder and the background floor stay with the service
(``Ynm.embedder``, ``Ynm._vector_query``, ``Ynm._vector_floor``), which owns the caches and the
warnings. Source: reference/algorithms.md §2, with the departures documented on each function.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ynm.model.ranker import iso_to_ms, score
from ynm.model.text import (
    FUNCTION_WORDS,
    has_no_search_words,
    is_word_phrase,
    phrase_words,
    query_phrases,
)

if TYPE_CHECKING:
    from ynm.service.mounts import Mount
    from ynm.service.ynm import Ynm


# How the lexical and the vector candidate lists become one relevance (see fuse()).
FUSION = "blend"
BLEND_LEXICAL = 0.8
COVERAGE_POWER = 3
MIN_SHARE = 0.5  # below this share of the query's words, a lexical-only hit is no answer
MIN_SPAN = 0.2  # similarities are scaled over at least this span (see fuse())
RRF_K = 60
# Vector neighbours below this similarity are left out as noise, whatever the background.
SIMILARITY_FLOOR = 0.12
# Once one vector neighbour clears the background floor, the others may lie this much lower: the
# floor decides whether the store knows the question's subject at all, not how far down the list
# reaches (measured: paraphrase recall@10 0.80 at 0, 0.85 at 0.04, 0.867 from 0.06 to 0.10)
FOLLOW_MARGIN = 0.08
# A memory found by its vector is an answer when its similarity reaches the query's mean
# similarity to its three nearest background sentences less this (Ynm._vector_floor).
BACKGROUND_MARGIN = 0.08
# Vector evidence (vector_evidence) grows from 0 at the floor to 1 this far above it.
EVIDENCE_SPAN = 0.3


@dataclass(frozen=True)
class QuestionWords:
    """The words of a recall's question that weigh in the share (:func:`content_words`, as
    quoted FTS5 phrases, in the question's order, once each) and those of them no memory of
    the mounts searched holds (``unheld``), as :func:`question_words` finds them. Kept by
    ``Ynm.recall`` (``Ynm.recall_words``) so that a recall that finds nothing can say why
    without another query."""

    words: tuple[str, ...]
    unheld: frozenset[str]

    @property
    def counted(self) -> bool:
        """Whether the unheld words count as missing in every memory's share: they are as
        many as the words some memory holds, or more (see :func:`unknown_words`)."""
        return 2 * len(self.unheld) >= len(self.words)

    @property
    def unknown(self) -> frozenset[str]:
        """The words left out of the share (:func:`unknown_words`): the unheld ones unless
        they count."""
        return frozenset() if self.counted else self.unheld


@dataclass
class Found:
    """One mount's candidates: ``(rowid, relevance in the mount, lexical, vector)`` best
    first, and the mount's evidence (None for a filter-only search)."""

    mount_id: str
    conn: Any
    fused: list[tuple[int, float, float | None, float | None]]
    evidence: float | None
    has_text: bool
    hybrid: bool


def vector_evidence(similarity: float | None, floor: float | None) -> float:
    """How far a vector candidate's ``similarity`` stands above the ``floor`` it had to reach
    (Ynm._vector_floor), in 0..1: 0 at the floor (or for no similarity), 1 at
    :data:`EVIDENCE_SPAN` above it. Unlike the similarity scaled over one mount's neighbours
    (fuse()), it means the same in every mount, so it can weigh mounts against each other."""
    if similarity is None:
        return 0.0
    base = max(SIMILARITY_FLOOR, floor if floor is not None else SIMILARITY_FLOOR)
    return min(1.0, max(0.0, (similarity - base) / EVIDENCE_SPAN))


def fuse(lexical: list[Any], near: list[tuple[int, float]], held: dict[int, float]
         ) -> list[tuple[int, float, float | None, float | None]]:
    """One relevance in 0..1 per candidate from the FTS5 list (BM25 relevance, best = 1), the
    share of the query's words each lexical candidate holds (``held``, see
    ynm.index.search.coverage) and the vector list (similarity), per mount:
    ``(rowid, relevance, lexical, vector)``, best first. ``lexical`` is the BM25 relevance
    times the share cubed, the part that entered the blend.

    ``blend`` (the default): :data:`BLEND_LEXICAL` (0.8) times that lexical part plus 0.2
    times the similarity min-max scaled over the vector list (nearest 1, farthest 0, over a
    span of at least :data:`MIN_SPAN` so that in a small store two neighbours 0.03 apart do not
    become 1 and 0; measured: no change to either benchmark for spans up to 0.3), a missing
    part counting 0, rescaled so the best candidate is 1. Words that match decide; meaning
    breaks their ties and finds what shares no word with the question, since a hit holding
    only common words has a share near 0. Chosen by measurement with benchmarks/quality.py
    (all-MiniLM-L6-v2, centred vectors; recall@1/5/10, MRR):

    ============================  ===================  ===================
    fusion (replayed on the       seeded corpus        paraphrase set
    candidates of both sets)
    ============================  ===================  ===================
    full text only                0.98 1.0  1.0  0.98  0.02 0.07 0.07 0.03
    vectors only                  0.72 0.94 0.96 0.81  0.43 0.72 0.87 0.55
    blend 0.35, no share          0.90 1.0  1.0  0.94  0.32 0.65 0.80 0.46
    blend 0.6, share              0.94 1.0  1.0  0.97  0.38 0.65 0.87 0.52
    blend 0.8, no share           0.98 1.0  1.0  0.99  0.03 0.10 0.22 0.07
    blend 0.8, share squared      0.98 1.0  1.0  0.99  0.40 0.70 0.87 0.53
    blend 0.8, share cubed        0.98 1.0  1.0  0.99  0.42 0.72 0.87 0.54
    the same, vectors not centred 0.98 1.0  1.0  0.99  0.38 0.62 0.73 0.48
    ============================  ===================  ===================

    (The replay counted function words in the share; leaving them out, as below, gives the same
    figures to two places through benchmarks/quality.py.)

    The share counts the query's words other than English function words ("what", "is",
    "the": ynm.model.text.FUNCTION_WORDS). When no lexical candidate holds
    :data:`MIN_SHARE` (half) of them and no vector neighbour stands out, the mount has no
    answer: its candidates matched only words that say little of the question's subject
    ("what is the capital of France" against a store that knows nothing of France, "how long
    is a marathon" against one that has a "long" somewhere), however BM25 ranks them. When it
    has one, partial matches (holding some of the words, less than half) are listed too, far
    below, as full-text recall lists them (measured: no figure of either benchmark changes,
    and "ledger rota" on the example store lists the 37 memories holding "ledger" under the
    rota memory, where it listed only those among the vector neighbours, 20); a candidate
    holding none of the words (only function words) is listed only as a vector neighbour.
    With no candidate left the recall finds nothing. Words no memory of the store holds
    weigh in the share as :func:`unknown_words` says.

    ``near`` holds only the neighbours that stand out from the question's background
    (Ynm._vector_floor: at least the mean similarity of the question to its three nearest
    background sentences, ynm.index.background, less :data:`BACKGROUND_MARGIN`), so a question
    about nothing the store knows has none, where the nearest memories used to come back at
    relevance 1. Measured with benchmarks/quality.py (50 off-topic questions of
    benchmarks/offtopic.py; share answered with nothing, and the paraphrase set):

    =========================================  ==========  ===========  ====================
    vector neighbours kept / lexical-only      no answer,  no answer,   paraphrase recall@1
    share needed                               corpus      paraphrase   /5/10, MRR
    =========================================  ==========  ===========  ====================
    similarity >= 0.12 / 0.05 (before)         0.00        0.00         0.42 0.72 0.87 0.54
    background - 0.1, nearest one / 0.05 (*)   0.78        0.64         0.40 0.68 0.80 0.52
    background - 0.08, mean of 3 / 0.3         0.96        0.90         0.42 0.70 0.80 0.53
    background - 0.08, mean of 3 / 0.5         0.96        0.92         0.42 0.70 0.80 0.53
    background - 0.10, mean of 3 / 0.5         0.96        0.86         0.42 0.70 0.82 0.54
    background - 0.08, mean of 3 / 0.5, and    0.96        0.92         0.42 0.72 0.87 0.54
    followers to 0.08 lower (the default)
    =========================================  ==========  ===========  ====================

    (*) with an earlier background of 136 sentences. The seeded corpus keeps 0.98 1.0 1.0
    0.987 in every row. Scaling the similarity by
    :func:`vector_evidence` here instead of over the neighbours (so relevance would be absolute
    per candidate) lowered the corpus's recall@1 to 0.94, so a mount's candidates keep this
    relative scale and mounts are weighed against each other by their evidence
    (ranked_across).

    ``rrf`` (reciprocal rank fusion, the sum of ``1 / (60 + rank)``) found 0.38 of the
    paraphrases at rank 5 in an earlier measurement; it ignores how good a match is.
    """
    vec = dict(near)
    # the mount has an answer: then partial matches are listed too, as in full-text recall
    answered = bool(vec) or any(held.get(c.rowid, 0.0) >= MIN_SHARE for c in lexical)
    lex = {c.rowid: c.relevance * held.get(c.rowid, 0.0) ** COVERAGE_POWER for c in lexical
           if c.rowid in vec or held.get(c.rowid, 0.0) >= MIN_SHARE
           or (answered and held.get(c.rowid, 0.0) > 0)}
    ids = list(dict.fromkeys([*lex, *vec]))
    if not ids:
        return []
    if FUSION == "rrf":
        raw = {i: 0.0 for i in ids}
        for rank, c in enumerate(c for c in lexical if c.rowid in lex):
            raw[c.rowid] += 1 / (RRF_K + rank + 1)
        for rank, (rowid, _) in enumerate(near):
            raw[rowid] += 1 / (RRF_K + rank + 1)
    else:
        top = max(vec.values(), default=0.0)
        span = max(top - min(vec.values(), default=0.0), MIN_SPAN)
        # The nearest neighbour is 1, the farthest 0 when they lie MIN_SPAN or more apart;
        # closer neighbours keep their gap to scale, so 0.16 and 0.13 become 1 and 0.85.
        scaled = {i: 1.0 - (top - v) / span for i, v in vec.items()}
        raw = {i: BLEND_LEXICAL * lex.get(i, 0.0) + (1 - BLEND_LEXICAL) * scaled.get(i, 0.0)
               for i in ids}
    best = max(raw.values()) or 1.0
    out = [(i, raw[i] / best, lex.get(i), vec.get(i)) for i in ids]
    out.sort(key=lambda t: t[1], reverse=True)
    return out


def rows_by_rowid(conn: Any, rowids: list[int]) -> dict[int, dict[str, Any]]:
    """The ``memories`` rows of ``rowids`` in one statement, as dicts by rowid (columns:
    rowid, summary, content, expires_at and ynm.index.schema.STATE_COLUMNS, ``line`` the
    current record's packed line; :func:`hit` adds ``state``, the folded state JSON)."""
    from ynm.index.schema import STATE_COLUMNS

    cols = ("rowid", "summary", "content", "expires_at", *STATE_COLUMNS)
    selected = ", ".join("(SELECT line FROM records WHERE records.rowid = memories.current)"
                         if c == "line" else c for c in cols)
    out = {}
    for row in conn.execute(
        f"SELECT {selected} FROM memories WHERE rowid IN "
        f"(SELECT value FROM json_each(?))", (json.dumps(rowids),)
    ):
        out[row[0]] = dict(zip(cols, row))
    return out


def entry(row: dict[str, Any]) -> Any:
    """A ``memories`` row (:func:`rows_by_rowid`) as a context-block entry
    (ynm.model.context_block.Entry), with the ids it ``derives-from``."""
    from ynm.index.schema import unpack
    from ynm.model.context_block import Entry

    links = json.loads(unpack(row["extra"])).get("links", []) if row["extra"] is not None else []
    return Entry(row["memory_id"], row["type"], bool(row["pinned"]), row["summary"],
                 row["content"], tuple(json.loads(row["tags"])), level=row["level"],
                 derives_from=tuple(link["to"] for link in links
                                    if link.get("rel") == "derives-from"))


def hit(s: Any, row: dict[str, Any], mount_id: str, explain: bool) -> dict[str, Any]:
    """A RecallHit in the key order of reference/cli.md §3.2, from a score (ynm.model.ranker)
    and a ``memories`` row (:func:`rows_by_rowid`, with the ``_parts``, ``_hybrid`` and
    ``_expired`` keys :func:`ranked_across` adds)."""
    from ynm.index.schema import STATE_COLUMNS, state_text

    row["state"] = state_text(*(row[c] for c in STATE_COLUMNS))  # for the author lookup after
    state = json.loads(row["state"])
    current = state["current"]
    hit: dict[str, Any] = {"memoryId": row["memory_id"], "mount": mount_id, "score": s.total}
    if explain:
        hit["explain"] = s.explain()
        lex, vec = row.get("_parts", (None, None))
        if row.get("_hybrid"):
            # hybrid recall: the two parts the relevance was fused from (None = not a candidate)
            hit["explain"]["lexical"] = lex
            hit["explain"]["vector"] = vec
    hit.update({"type": row["type"], "level": row["level"], "namespace": row["namespace"]})
    if row["subject"] is not None:
        hit["subject"] = row["subject"]
    hit.update({"tags": json.loads(row["tags"]), "summary": row["summary"],
                "content": row["content"], "pinned": bool(row["pinned"]),
                "importance": row["importance"], "updatedAt": row["updated_at"]})
    for key in ("data", "dataSchema"):
        if key in current:
            hit[key] = current[key]
    source = current.get("provenance", {}).get("source")
    if source is not None:
        hit["source"] = source
    if row.get("_expired"):
        hit["expired"] = True
    # not in the reference's RecallHit (cli.md §3.2): added last, so its consumers are not broken
    hit["tombstoned"] = bool(row["tombstoned"])
    return hit


def is_expired(row: dict[str, Any], now_ms: int) -> bool:
    """A live working memory whose ttl has run out (``expires_at <= now``) that no sweep has
    tombstoned yet. Only reads with ``include_tombstoned`` return such a memory."""
    return not row["tombstoned"] and row["expires_at"] is not None and row["expires_at"] <= now_ms


def ranked_across(y: Ynm, searches: list[tuple[Mount, Any]], text: str | None,
                  weigh_words: bool = True, *, outside: Sequence[float | None] | None = None,
                  report: dict[str, Any] | None = None,
                  unknown: frozenset[str] | None = None
                  ) -> list[tuple[Any, dict[str, Any], str]]:
    """The candidates of every ``(mount, search query)`` for ``text``, scored on one scale:
    ``(score, row, mount id)``, each mount's list by score descending, then memoryId
    descending (the lists follow one another; callers sort the whole).

    Relevance across mounts (reference/algorithms.md §2.5 normalises per mount, so each
    mount's best hit is 1 and a one-word match in a small personal store outranks a full
    match in the project store): each mount ranks its own candidates as before (best 1),
    then all of a mount's relevances are multiplied by its *evidence* over the highest
    evidence of the mounts searched. A mount's evidence is the best absolute match it holds:
    with text, the most of ``BM25 relevance x share**3`` over its candidates (the share of
    the query's words a memory holds, IDF-weighted: ynm.index.search.coverage, an absolute
    measure, where BM25 relevance alone is relative to the mount's best); in hybrid recall,
    the most of ``0.8 x that + 0.2 x vector evidence`` (see :func:`vector_evidence`). With
    one mount, or a filter-only query, nothing changes.

    ``outside`` holds the evidence of hosted stores searched beside these mounts
    (ynm.service.remote.weigh_hosted; None for one that has none): it enters the strongest
    evidence, so a local mount's hits are weighed against a hosted store's as against another
    local mount's. ``report``, when given, receives ``strongest``, the evidence every mount's
    (and hosted store's) is divided by, and ``words``, the question's :class:`QuestionWords`
    (when ``unknown`` is not given).

    ``unknown``: the query's words that no memory of any mount searched holds (see
    :func:`unknown_words`, which finds them when None is given); they do not count in any
    mount's share of the query's words.

    A hit whose relevance is 0 (after the weighing) is never returned: with text it matched
    nothing of the question (a memory holding only its function words, "the" of "the
    ledger", or the farthest vector neighbour with no word of the question), so recency and
    importance alone would rank it.
    """
    outside = [e for e in (outside or ()) if e is not None]
    weigh = len(searches) + len(outside) > 1
    caches = [mount.fresh_cache() for mount, _ in searches]
    if unknown is None:
        asked = question_words([c.conn for c in caches], text)
        unknown = asked.unknown
        if report is not None:
            report["words"] = asked
    found = [candidates(y, mount, sq, text, weigh, weigh_words, cache=cache, unknown=unknown)
             for (mount, sq), cache in zip(searches, caches)]
    strongest = max([*(f.evidence for f in found if f.evidence is not None), *outside],
                    default=0.0)
    if report is not None:
        report["strongest"] = strongest
    now = y._now_ms()
    out: list[tuple[Any, dict[str, Any], str]] = []
    for f in found:
        if not f.fused:
            continue
        factor = 1.0
        if f.evidence is not None and strongest > 0:
            factor = f.evidence / strongest
        rows = rows_by_rowid(f.conn, [t[0] for t in f.fused])
        ranked = []
        for rowid, relevance, lex, vec in f.fused:
            if f.has_text and relevance * factor <= 0:
                continue  # matched nothing of the question (see above)
            row = rows[rowid]
            s = score(relevance=relevance * factor, memory_type=row["type"],
                      updated_at_ms=iso_to_ms(row["updated_at"]),
                      importance=row["importance"], pinned=bool(row["pinned"]),
                      has_text=f.has_text, now_ms=now)
            row["_parts"] = (lex, vec)
            row["_hybrid"] = f.hybrid
            row["_expired"] = is_expired(row, now)
            ranked.append((s, row, f.mount_id))
        ranked.sort(key=lambda h: h[1]["memory_id"], reverse=True)
        ranked.sort(key=lambda h: h[0].total, reverse=True)
        out.extend(ranked)
    return out


def content_words(phrases: Sequence[str]) -> list[str]:
    """The single-word phrases of ``phrases`` (quoted FTS5 phrases of
    ynm.model.text.query_phrases) that are not English function words
    (ynm.model.text.FUNCTION_WORDS): the words whose share a memory's words are weighed by."""
    return [p for p in phrases if is_word_phrase(p) and phrase_words(p)[0] not in FUNCTION_WORDS]


def unknown_words(conns: Sequence[Any], text: str | None) -> frozenset[str]:
    """The words of ``text`` (as :func:`content_words` gives them) that no memory of any of
    the caches ``conns`` holds (ynm.index.search.unheld), when they are fewer than the words
    some memory holds; else none (an empty set).

    Such words are left out of the share of the question's words a memory holds (see
    :data:`MIN_SHARE`, ynm.index.search.coverage): a store that has never seen a word cannot
    hold it, so counting it as missing (at the highest IDF of all) only makes a natural
    question fail, "why did the payout outage happen" against a store that has a memory
    about the payout outage and no "happen". When they are as many as the words the store
    knows, or more, they stay counted: the question is then about something the store knows
    nothing of ("what is the capital of Australia", "how long is a marathon" against a store
    that has a "long" somewhere, a pasted paragraph sharing one word with a memory), and one
    known word in a memory must not make it an answer. Counted over the whole store (every
    mount searched), so a mount lacking a word another mount holds still counts it missing,
    which keeps the mounts' evidence comparable (ranked_across).

    A word left out still weighs in the share, as much as the question's known words on
    average (ynm.index.search.coverage's ``unseen``), not as BM25's IDF would weigh it (the
    highest of all, ``ln((N + 0.5) / 0.5)``). Measured with benchmarks/quality.py (off-topic
    questions answered, of 50, on the corpus / paraphrase stores) and 17 questions a new user
    might ask the example store (tests/test_demo_recall.py; expected memory first):

    ===============================================  ===========  ===========  ===========
    unseen words in the share                        full text    hybrid       example store
                                                     off-topic    off-topic    fts / hybrid
    ===============================================  ===========  ===========  ===========
    highest IDF (before)                             0 / 0        2 / 2        12 / 14
    left out                                         8 / 15       10 / 17
    left out when fewer than the known words         0 / 1        2 / 3
    mean IDF when fewer than the known words         0 / 0        2 / 2        14 / 15
    ===============================================  ===========  ===========  ===========

    Left out, a question such as "which chords are in the key of G major" became an answer
    wherever a memory held "major"; left out always, so did "how long is a marathon in
    miles". The paraphrase set's hybrid recall@1 / MRR: 0.417 / 0.542 before, 0.133 / 0.355
    left out, 0.383 / 0.525 left out when fewer, 0.400 / 0.534 as chosen (one question of 60
    from first to second); the seeded corpus keeps 0.98 1.0 1.0 0.985 (full text) and 0.9867
    (hybrid) MRR in every row. Before, three of the example store's questions found nothing
    in full text: "why did the payout outage happen", "why did customers get charged twice",
    "which bank handles our payouts"."""
    return question_words(conns, text).unknown


def question_words(conns: Sequence[Any], text: str | None) -> QuestionWords:
    """The words of ``text`` that weigh in the share (:func:`content_words`) and those no
    memory of any of the caches ``conns`` holds (ynm.index.search.unheld: one probe per word
    and cache, stopping at the first memory holding it). None of either for a text without
    words to search."""
    from ynm.index.search import unheld

    if not text or has_no_search_words(text):
        return QuestionWords((), frozenset())
    words = list(dict.fromkeys(content_words(query_phrases(text))))
    unknown = set(words)
    for conn in conns:
        if not unknown:
            break
        unknown = unheld(conn, [w for w in words if w in unknown])
    return QuestionWords(tuple(words), frozenset(unknown))


def candidates(y: Ynm, mount: Mount, sq: Any, text: str | None, weigh: bool = False,
               weigh_words: bool = True, *, cache: Any = None,
               unknown: frozenset[str] = frozenset()) -> Found:
    """One mount's candidates for ``sq`` (text from ``text``) with their relevance in the
    mount (best 1) and the mount's evidence (see :func:`ranked_across`; full-text recall
    measures it only when asked to ``weigh`` mounts, as it costs a query per word).
    Nothing for a text with no word to search (ynm.model.text.has_no_search_words).
    ``weigh_words=False`` leaves full-text candidates in BM25 order without the word share
    and its no-answer rule (hybrid recall needs the share to fuse and keeps it).

    ``cache``: the mount's cache, already refreshed (else refreshed here); ``unknown``: the
    question's words left out of the share (:func:`unknown_words`). With words to weigh, a
    full-text candidate that holds none of them (only function words, "the" of "the
    ledger") is no answer and is left out."""
    from ynm.index.search import by_coverage, coverage, search

    if has_no_search_words(text):
        return Found(mount.id, None, [], None, False, False)
    phrases = query_phrases(text or "")
    sq.match = " OR ".join(phrases) if phrases else None
    sq.phrases = phrases
    if cache is None:
        cache = mount.fresh_cache()
    query_vector = y._vector_query(mount, text) if text else None
    lexical = search(cache.conn, sq)
    floor = y._vector_floor(mount, query_vector) if query_vector is not None else None
    near = (vector_candidates(cache.conn, sq, query_vector, floor)
            if query_vector is not None else [])
    # Hybrid whenever vector search ran on a text with words or found neighbours; a text
    # without words and without neighbours stays a filter-only recall.
    hybrid = query_vector is not None and (sq.match is not None or bool(near))
    # the single words searched (search() may have kept a long question's rarest), less
    # those no memory of the store holds when the store knows most of the question's words
    words = [p for p in content_words(sq.phrases) if p not in unknown]
    unsearched = [p for p in content_words(sq.extra.get("unsearched", []))
                  if p not in unknown]
    evidence: float | None = None
    if hybrid:
        if sq.match is None:
            lexical = []
        held = coverage(cache.conn, words, [c.rowid for c in lexical],
                        sq.extra.get("hits", {}), unsearched, len(unknown))
        fused = fuse(lexical, near, held)
        evidence = max((BLEND_LEXICAL * (lex or 0.0)
                        + (1 - BLEND_LEXICAL) * vector_evidence(vec, floor)
                        for _, _, lex, vec in fused), default=0.0)
    else:
        # more of the words before adjacency (by_coverage); the same share weighs the
        # mount's evidence, taken on the BM25 relevance before it is rescaled. When no hit
        # holds MIN_SHARE of the question's words (function words aside, and words the store
        # has never seen while it knows most of the others: unknown_words), the mount has no
        # answer: its hits share only words that say little of the subject ("what is the
        # capital of Australia" against notes holding "is" and "the"). Otherwise partial
        # matches stay, ranked lower, as full-text search is expected to list them; a hit
        # holding none of the words (only function words) is no match at all.
        if sq.match is not None and lexical and words and weigh_words:
            held = coverage(cache.conn, words, [c.rowid for c in lexical],
                            sq.extra.get("hits", {}), unsearched, len(unknown))
            if all(held.get(c.rowid, 0.0) < MIN_SHARE for c in lexical):
                lexical = []
            else:
                lexical = [c for c in lexical if held.get(c.rowid, 0.0) > 0]
                if weigh:
                    evidence = max(c.relevance * held.get(c.rowid, 0.0) ** COVERAGE_POWER
                                   for c in lexical)
                # rescaled (best 1) even for one word, whose best BM25 hit may have been one
                # holding only function words
                lexical = by_coverage(lexical, held, COVERAGE_POWER)
        fused = [(c.rowid, c.relevance, c.relevance if sq.match else None, None)
                 for c in lexical]
    return Found(mount.id, cache.conn, fused, evidence,
                  sq.match is not None or bool(near), hybrid)


def vector_candidates(conn: Any, sq: Any, query_vector: bytes,
                      floor: float | None = None) -> list[tuple[int, float]]:
    """``(rowid, cosine similarity)`` of the memories nearest to the query vector that
    pass the filters, nearest first: none unless the nearest reaches ``floor`` (see
    ``Ynm._vector_floor``; at least :data:`SIMILARITY_FLOOR`); then every neighbour down
    to ``floor`` less :data:`FOLLOW_MARGIN` (never below :data:`SIMILARITY_FLOOR`).

    The floor tells a question about something the store knows from one about nothing;
    once one memory stands out, a paraphrase's memory a little under the floor still
    belongs in the list (at 0.80 of the paraphrase set's questions found in the top 10
    with every neighbour held to the floor, 0.867 with followers, as before there was a
    floor; no off-topic question gains an answer, since one needs a neighbour over the
    floor to have any)."""
    import dataclasses

    from ynm.index.search import vector_search

    least = max(SIMILARITY_FLOOR, floor if floor is not None else SIMILARITY_FLOOR)
    filters = dataclasses.replace(sq, match=None, phrases=())
    near = [(rowid, sim) for rowid, _, sim in vector_search(conn, filters, query_vector,
                                                            sq.limit)]
    if not near or near[0][1] < least:
        return []
    follow = max(SIMILARITY_FLOOR, least - FOLLOW_MARGIN)
    return [(rowid, sim) for rowid, sim in near if sim >= follow]
