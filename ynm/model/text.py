"""Text helpers shared by writers and the cache: summaries, the recall tokenizer, the FTS5
query, and the word sets of the similar-memory note.

Sources: reference/algorithms.md §1.3 (summary), §2.3 (tokenizer and FTS query), §2.10 (overlap).
"""

from __future__ import annotations

import re

from ynm.model.records import js_length

SUMMARY_MAX_CHARS = 280
_TOKEN_SPLIT_RE = re.compile(r"[^a-z0-9_\-/.]+")
_WORD_RE = re.compile(r"[a-z0-9]+")
STOP_WORDS = frozenset("the and for with that this from are was use uses".split())


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
    """Recall tokens: lowercase; runs outside ``[a-z0-9_-/.]`` become spaces; split; strip
    leading and trailing ``-./``; keep tokens longer than one character. No stop words."""
    out = []
    for raw in _TOKEN_SPLIT_RE.sub(" ", text.lower()).split():
        token = raw.strip("-./")
        if len(token) > 1:
            out.append(token)
    return out


def fts_query(tokens: list[str]) -> str | None:
    """FTS5 MATCH text: each token quoted (``"`` removed) and OR-ed; None when no tokens."""
    quoted = ['"' + t.replace('"', "") + '"' for t in tokens]
    return " OR ".join(quoted) if quoted else None


def overlap_words(text: str) -> set[str]:
    """Words for the similar-memory overlap: lowercase ``[a-z0-9]`` runs of three or more
    characters, minus the stop words (algorithms.md §2.10)."""
    return {w for w in _WORD_RE.findall(text.lower()) if len(w) >= 3 and w not in STOP_WORDS}


def overlap_coefficient(a: set[str], b: set[str]) -> float:
    """``|A ∩ B| / min(|A|, |B|)``; 0 when either set is empty."""
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))
