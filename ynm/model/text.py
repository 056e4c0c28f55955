"""Text helpers shared by writers and the cache: summaries, the recall tokenizer, the FTS5
query phrases, and the word sets of the similar-memory note.

Sources: reference/algorithms.md §1.3 (summary), §2.3 (tokenizer and FTS query), §2.10 (overlap).
"""

from __future__ import annotations

import re
import unicodedata

from ynm.model.records import js_length

SUMMARY_MAX_CHARS = 280
# Word characters of every script (Python's Unicode \w: letters, digits, "_"), "-", "/", "."
_TOKEN_SPLIT_RE = re.compile(r"[^\w\-/.]+")
_WORD_RE = re.compile(r"[a-z0-9]+")
STOP_WORDS = frozenset("the and for with that this from are was use uses".split())
# English function words: they carry a question's grammar, not its subject. Hybrid recall gives
# them no weight when it measures how much of a question a memory's words hold (a small store
# cannot learn from IDF that "is" or "what" says nothing). BM25 still searches them.
FUNCTION_WORDS = frozenset("""
a about above after again against all am an and any are as at be because been before being
below between both but by can could did do does doing don down during each few for from
further had has have having he her here hers herself him himself his how i if in into is it
its itself just me more most my myself no nor not now of off on once only or other our ours
ourselves out over own same she should so some such than that the their theirs them
themselves then there these they this those through to too under until up very was we were
what when where which while who whom why will with would you your yours yourself yourselves
""".split())


def summarize(content: str) -> str:
    """One line for a memory: the first non-blank line of ``content`` with leading ``#``s and
    spaces stripped, trimmed; longer than 280 characters becomes the first 277 plus ``...``."""
    for line in content.split("\n"):
        if line.strip():
            text = line.strip().lstrip("#").strip()
            break
    else:
        text = ""
    if js_length(text) > SUMMARY_MAX_CHARS:
        cut = text[: SUMMARY_MAX_CHARS - 3]
        while js_length(cut) > SUMMARY_MAX_CHARS - 3:
            cut = cut[:-1]
        text = cut + "..."
    return text


def tokenize(text: str) -> list[str]:
    """Recall tokens: NFC, lowercase; runs of characters other than letters and digits of any
    script, ``_``, ``-``, ``/`` and ``.`` become spaces; split; strip leading and trailing
    ``-./``; keep tokens longer than one character. No stop words.

    The reference's tokenizer (reference/algorithms.md §2.3) keeps only ``[a-z0-9_-/.]``, so
    "café" searches "caf" and a Cyrillic or Greek word searches nothing; ynm keeps the letters,
    and FTS5's ``unicode61`` tokenizer (which folds case and diacritics) matches them.
    """
    text = unicodedata.normalize("NFC", text)
    out = []
    for raw in _TOKEN_SPLIT_RE.sub(" ", text.lower()).split():
        token = raw.strip("-./")
        if len(token) > 1:
            out.append(token)
    return out


def query_phrases(text: str) -> list[str]:
    """The quoted FTS5 phrases a recall text is searched with, OR-ed by the caller: one per
    token of :func:`tokenize` (the reference's query, reference/algorithms.md §2.3), then one
    per pair of adjacent words, so a memory holding the words side by side scores higher than
    one holding them apart ("storage migration" over "migrate the storage queue").

    The pairs are built before one-character words are dropped, which makes "messaging 1 2
    release" find "messaging 1.2 release" by the pairs "messaging 1", "1 2" and "2 release"
    though "1" and "2" alone are not searched. No tokens gives no phrases (a filter-only
    recall), whatever the pairs. BM25 gives each phrase its own IDF, so a pair that is rare in
    the store weighs more than its two common words; measured on the seeded corpus of
    benchmarks/quality.py, recall@1 went from 0.82 to 0.98 and MRR from 0.85 to 0.985.

    Each phrase appears once, in order of first appearance: a word repeated in the question
    (the reference repeats it) would only be scored and counted again. A long question still
    gives many phrases; ynm.index.search.search keeps the most selective of them.
    """
    tokens = tokenize(text)
    if not tokens:
        return []
    lowered = unicodedata.normalize("NFC", text).lower()
    stripped = (raw.strip("-./") for raw in _TOKEN_SPLIT_RE.sub(" ", lowered).split())
    words = [w for w in stripped if w]
    pairs = [f"{a} {b}" for a, b in zip(words, words[1:])]
    return list(dict.fromkeys('"' + p.replace('"', "") + '"' for p in [*tokens, *pairs]))


def has_no_search_words(text: str | None) -> bool:
    """True for a recall text that is not blank yet holds no word to search (no token of
    :func:`tokenize`: "C++", "*", "?!", "--"). Such a recall finds nothing, and the CLI and the
    MCP tool say why; a blank or absent text is a filter-only recall.

    The reference (reference/algorithms.md §2.3) runs it as a filter-only query, which returns
    the whole store at one relevance as if every memory matched.
    """
    return text is not None and bool(text.strip()) and not query_phrases(text)


def overlap_words(text: str) -> set[str]:
    """Words for the similar-memory overlap: lowercase ``[a-z0-9]`` runs of three or more
    characters, minus the stop words (algorithms.md §2.10)."""
    return {w for w in _WORD_RE.findall(text.lower()) if len(w) >= 3 and w not in STOP_WORDS}


def overlap_coefficient(a: set[str], b: set[str]) -> float:
    """``|A ∩ B| / min(|A|, |B|)``; 0 when either set is empty."""
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))
