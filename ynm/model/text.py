"""Text helpers shared by writers and the cache: summaries, the recall tokenizer, the FTS5
query phrases, and the word sets of the similar-memory note.

Sources: reference/algorithms.md §1.3 (summary), §2.3 (tokenizer and FTS query), §2.10 (overlap).
"""

from __future__ import annotations

import functools
import re
import unicodedata

from ynm.model.records import js_length

SUMMARY_MAX_CHARS = 280
# Word characters of every script (Python's Unicode \w: letters, digits, "_"), "-", "/", "."
_TOKEN_SPLIT_RE = re.compile(r"[^\w\-/.]+")
_WORD_RE = re.compile(r"[a-z0-9]+")
STOP_WORDS = frozenset("the and for with that this from are was use uses".split())
# Scripts written without spaces between words (Korean with particles glued to its words), by
# Unicode block: Hangul Jamo; CJK and Kangxi radicals; 々 〆 〇, Hangzhou numerals, kana repeat
# marks, 〻 〼; Hiragana, Katakana; Bopomofo, Hangul compatibility jamo, Bopomofo extended,
# Katakana phonetic extensions; CJK Extension A and Unified Ideographs; Hangul Jamo Extended-A,
# Syllables, Jamo Extended-B; CJK Compatibility Ideographs; half-width Katakana and Hangul;
# Kana Supplement and Extended; the Supplementary and Tertiary Ideographic Planes.
_CJK = ("\u1100-\u11ff\u2e80-\u2fdf\u3005-\u3007\u3021-\u3029\u3031-\u3035\u303b\u303c"
        "\u3041-\u309f\u30a1-\u30fa\u30fc-\u30ff\u3100-\u31bf\u31f0-\u31ff\u3400-\u4dbf"
        "\u4e00-\u9fff\ua960-\ua97f\uac00-\ud7ff\uf900-\ufaff\uff66-\uffdc"
        "\U0001b000-\U0001b16f\U00020000-\U0003ffff")
PAIR_JOIN = "\u00a0"  # joins the two words of a query pair that holds Han, kana or Hangul


# The patterns over _CJK are compiled on first use: ``re`` compiles a class of these ranges by
# walking their code points, 10-20 ms a pattern on every start-up, and text that is all ASCII
# (every English query) never needs them (:func:`_has_cjk`).
@functools.cache
def _cjk_char_re() -> re.Pattern[str]:
    return re.compile(f"[{_CJK}]")


@functools.cache
def _cjk_run_re() -> re.Pattern[str]:
    return re.compile(f"([{_CJK}]+)")


@functools.cache
def _cjk_edge_re() -> re.Pattern[str]:
    return re.compile(f"(?<=[{_CJK}])(?=\\S)|(?<=\\S)(?=[{_CJK}])")


def _has_cjk(text: str) -> bool:
    """Whether ``text`` holds a character of :data:`_CJK`; every one of them is outside ASCII,
    so ASCII text is answered without the pattern."""
    return not text.isascii() and _cjk_char_re().search(text) is not None


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
    ``-./``; split runs of Han, kana and Hangul into their two-character pieces
    (:func:`_cjk_split`); keep tokens longer than one character, and single characters of those
    scripts (in Chinese and Japanese one character is often a word). No stop words.

    The reference's tokenizer (reference/algorithms.md §2.3) keeps only ``[a-z0-9_-/.]``, so
    "café" searches "caf" and a Cyrillic or Greek word searches nothing; ynm keeps the letters,
    and FTS5's ``unicode61`` tokenizer (which folds case and diacritics) matches them.
    """
    text = unicodedata.normalize("NFC", text)
    out = []
    for raw in _TOKEN_SPLIT_RE.sub(" ", text.lower()).split():
        for token in _cjk_split(raw.strip("-./")):
            if len(token) > 1 or _has_cjk(token):
                out.append(token)
    return out


def _cjk_split(token: str) -> list[str]:
    """A token of :func:`tokenize` as the tokens it searches: ``[token]`` when it holds no
    character of a script written without spaces (Han, Hiragana, Katakana, Bopomofo, Hangul);
    else each such run as its overlapping two-character pieces ("设备清单" gives "设备", "备清",
    "清单"; a one-character run stays whole), and the text between runs stripped of ``-./``,
    in order ("v2版本" gives "v2", "版本"). Empty pieces are dropped, short ones are not.

    The FTS5 index holds every such character as its own token (:func:`fts_text`) and
    :func:`query_phrases` searches each piece as a phrase of its characters, so a memory is
    found by any two characters it holds side by side, and a query of many characters by
    each pair of them (the bigrams of Lucene's CJKBigramFilter).
    """
    if not _has_cjk(token):
        return [token]
    out = []
    for i, piece in enumerate(_cjk_run_re().split(token)):
        if i % 2 == 0:  # between runs
            piece = piece.strip("-./")
            if piece:
                out.append(piece)
        elif len(piece) == 1:
            out.append(piece)
        else:
            out.extend(piece[j: j + 2] for j in range(len(piece) - 1))
    return out


def fts_text(text: str) -> str:
    """What the FTS5 table is given for ``text`` (summary, content, subject or tags) and what
    a query phrase is passed through: ``text`` itself when it holds no character of the
    scripts of :func:`_cjk_split`; else its NFC form with a space on each side of every such
    character, so ``unicode61`` makes each one a token ("NAS 在机房" gives "NAS 在 机 房").

    ``unicode61`` splits only at spaces and punctuation, so without this a run of Han or kana
    is one token and no part of it can be searched. Porter stemming leaves these tokens alone
    (it rewrites ASCII suffixes only). The memories table keeps the text as written.
    """
    if not _has_cjk(text):
        return text
    return _cjk_edge_re().sub(" ", unicodedata.normalize("NFC", text))


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
    # A pair with Han, kana or Hangul joins its words with a no-break space, which FTS5 reads
    # as the space it is but which fts_text's spaces between such characters are not: so
    # phrase_words can tell the pair's two words apart.
    pairs = [f"{a}{PAIR_JOIN if _has_cjk(a + b) else ' '}{b}"
             for a, b in zip(words, words[1:])]
    return list(dict.fromkeys('"' + fts_text(p.replace('"', "")) + '"'
                              for p in [*tokens, *pairs]))


def phrase_words(phrase: str) -> list[str]:
    """The words of one quoted phrase of :func:`query_phrases`: one for a token's phrase
    (``"设 备"`` gives ``["设备"]``: the spaces :func:`fts_text` set between Han, kana and
    Hangul characters are not word breaks), two for a pair of adjacent words (``"deploy
    ledger"``, and ``"nas<no-break space>在 机 房"`` gives ``["nas", "在机房"]``)."""
    body = phrase.strip('"')
    if PAIR_JOIN in body:
        return [part.replace(" ", "") for part in body.split(PAIR_JOIN)]
    if _has_cjk(body):
        return [body.replace(" ", "")]
    return body.split(" ")


def is_word_phrase(phrase: str) -> bool:
    """True for a phrase of :func:`query_phrases` that searches one word (a token), False for
    a pair of adjacent words (see :func:`phrase_words`)."""
    return len(phrase_words(phrase)) == 1


def has_no_search_words(text: str | None) -> bool:
    """True for a recall text that is not blank yet holds nothing to search: no word at all
    (no token of :func:`tokenize`, so :func:`query_phrases` gives none: "C++", "*", "?!",
    "--"), or only English function words (:func:`only_function_words`: "the", "the and
    of"). Such a recall searches nothing and finds nothing, and the CLI and the MCP tool say
    why (:func:`no_search_words_reason`); a blank or absent text is a filter-only recall.

    The reference (reference/algorithms.md §2.3) runs a text without words as a filter-only
    query, which returns the whole store at one relevance as if every memory matched. A text
    of function words only found nothing in full text (no memory holds any of its words that
    count, ynm.service.recall.candidates) and at most a vector neighbour chosen by grammar in
    hybrid recall, with no word of why.
    """
    return (text is not None and bool(text.strip())
            and (not tokenize(text) or only_function_words(text)))


def only_function_words(text: str) -> bool:
    """True when every word ``text`` searches (the single words of :func:`query_phrases`) is
    an English function word (:data:`FUNCTION_WORDS`) and there is at least one."""
    words = [phrase_words(p)[0] for p in query_phrases(text) if is_word_phrase(p)]
    return bool(words) and all(w in FUNCTION_WORDS for w in words)


def no_search_words_reason(text: str) -> str:
    """Why a recall of ``text`` (:func:`has_no_search_words`) searched nothing, ending in
    ``so nothing was searched``: ``the query 'C++' has no searchable words (a word is two or
    more letters or digits)``, or ``the query 'the and of' has only function words (the, and,
    of), which name no subject``."""
    if not tokenize(text):
        return (f"the query {text!r} has no searchable words (a word is two or more letters "
                "or digits), so nothing was searched")
    words = list(dict.fromkeys(phrase_words(p)[0] for p in query_phrases(text)
                               if is_word_phrase(p)))
    return (f"the query {text!r} has only function words ({', '.join(words)}), which name no "
            "subject, so nothing was searched")


def overlap_words(text: str) -> set[str]:
    """Words for the similar-memory overlap: lowercase ``[a-z0-9]`` runs of three or more
    characters, minus the stop words (algorithms.md §2.10), plus the two-character pieces of
    each run of Han, kana or Hangul (:func:`_cjk_split`), which the reference's ASCII words
    leave out: two memories in Chinese would otherwise share no word however alike, and two
    sharing one Latin word would count as the same."""
    words = {w for w in _WORD_RE.findall(text.lower()) if len(w) >= 3 and w not in STOP_WORDS}
    runs = [] if text.isascii() else _cjk_run_re().findall(unicodedata.normalize("NFC", text))
    return words | {p for run in runs for p in _cjk_split(run) if len(p) == 2}


def overlap_coefficient(a: set[str], b: set[str]) -> float:
    """``|A ∩ B| / min(|A|, |B|)``; 0 when either set is empty."""
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))
