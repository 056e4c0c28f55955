"""``ynm recall``: ranked search over memories (reference/cli.md §4.18)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ynm.cli._common import (
    DATETIME_HELP,
    check_mount,
    common_options,
    drop_none,
    emit,
    note_left_out,
    note_unmerged,
    open_ynm,
    say,
    scope_hint,
    split_tags,
)

# Said on stderr after the reason when the query has nothing to search
# (ynm.model.text.has_no_search_words, no_search_words_reason).
NO_SEARCH_WORDS_HINT = "give words of the subject, or filters without a query"
TYPES = ("working", "episodic", "semantic", "procedural", "reflective", "reference")
LEVELS = ("personal", "distributed")
# RecallQuery field -> the flag that set it, named by the hint of a recall that found nothing
FILTER_FLAGS = (("type", "--type"), ("level", "--level"), ("namespace", "--namespace"),
                ("subject", "--subject"), ("tags", "--tags"), ("data_key", "--data-key"),
                ("since", "--since"), ("until", "--until"), ("pinned_only", "--pinned-only"),
                ("mount", "--mount"))


def no_match_hint(asked: Any, q: Any, hosted: bool = False,
                  excluded: set[str] | None = None) -> str | None:
    """Why a recall with words found nothing, for a ``hint:`` line on stderr, from what the
    recall already knows: ``asked`` (ynm.service.recall.QuestionWords: the question's words
    and those no memory holds) and the query ``q`` (a RecallQuery). None without words.

    - No word of the question held: ``no memory holds "banana"; ask in the words your
      memories use``.
    - Words no memory holds that count as missing (as many as the held ones, or more: the
      question is about something the store does not know, ynm.service.recall.MIN_SHARE and
      unknown_words): ``no memory holds "banana"; a memory answers only when it holds at
      least half of the question's words by weight (rarer words weigh more; function words
      aside): ask without it, or in the words your memories use``.
    - With ``--level`` or ``--mount``, the words were looked up in the mounts they select
      only: ``no memory of the mounts --level selected holds ...``; with hosted stores
      configured (``hosted``), whose words are not known here, ``no local memory holds ...``.
    - Otherwise (every word held somewhere, or the unheld ones left out of the share): what
      else left the memories holding them out: ``... but each memory holding them fails one
      of: holding at least half of them by weight (...); passing --type; not being forgotten
      (add --include-tombstoned)``, the first only for a question of two words or more.
      ``excluded`` (ynm.service.ynm.Ynm.recall_exclusions: the RecallQuery fields that left
      out a memory holding a word of the question, ``include_tombstoned`` when a forgotten
      one holds one, ``expired`` when working memory past its ttl, not yet tombstoned, holds
      one) narrows the rest: a filter flag is named only when it left such a memory out,
      ``--include-tombstoned`` only when a forgotten or expired memory holds a word, as
      ``not being forgotten``, ``not being expired working memory`` or ``not being forgotten
      or expired working memory`` (expired is not forgotten: no record says so until an
      expire pass, ``ynm dream`` or ``ynm session end``, tombstones it);
      ``--level`` and ``--mount`` are named whenever given (they chose the mounts read, and
      what they left out was not looked at). None: every filter given, and forgetting, are
      named."""
    from ynm.model.text import phrase_words

    if asked is None or not asked.words:
        return None
    shown = [" ".join(phrase_words(p)) for p in asked.words if p in asked.unheld]
    # the words were looked up in the mounts searched only
    scope = [flag for field, flag in FILTER_FLAGS if field in ("level", "mount")
             and getattr(q, field)]
    nobody = (f"no memory of the mounts {' and '.join(scope)} selected" if scope
              else "no local memory" if hosted else "no memory")
    missing = ", ".join(f'"{w}"' for w in shown)
    if len(shown) == len(asked.words):
        return f"{nobody} holds {missing}; ask in the words your memories use"
    if asked.counted:
        return (f"{nobody} holds {missing}; a memory answers only when it holds at least half "
                "of the question's words by weight (rarer words weigh more; function words "
                "aside): ask without "
                f"{'it' if len(shown) == 1 else 'them'}, or in the words your memories use")
    head = f"{nobody} holds {missing} (left out); " if shown else ""
    filters = [flag for field, flag in FILTER_FLAGS if getattr(q, field)
               and (excluded is None or field in excluded or field in ("level", "mount"))]
    share = ("holding at least half of them by weight (rarer words weigh more; function "
             "words aside)")
    ways = [share] if len(asked.words) > 1 else []
    if filters:
        ways.append("passing " + ", ".join(filters))
    if not q.include_tombstoned:
        gone = [what for what, field in (("forgotten", "include_tombstoned"),
                                         ("expired working memory", "expired"))
                if (excluded is None and field == "include_tombstoned")
                or (excluded is not None and field in excluded)]
        if gone:
            ways.append(f"not being {' or '.join(gone)} (add --include-tombstoned)")
    if not ways:  # one word, held, no filter: nothing else to name
        return None
    return (f"{head}some memory holds each {'other ' if shown else ''}word of the question, "
            f"but each memory holding them fails one of: {'; '.join(ways)}")


def format_hits(hits: list[dict[str, Any]]) -> str:
    """A header line ``SCORE  ID  TYPE  MOUNT  SUMMARY`` then one aligned row per hit (see
    :mod:`ynm.cli._table`), each followed by its explain line (``rel rec imp``, then ``lex vec``
    for a hybrid recall, ``-`` for a part the memory was not a candidate of) when asked;
    ``no matches`` when empty. The summary is prefixed ``* `` when pinned, ``[tombstoned] ``
    for a forgotten memory and ``[expired] `` for working memory past its ttl that no sweep has
    tombstoned yet (both shown only with ``--include-tombstoned``). The reference pads fixed
    widths with no header (reference/cli.md §4.18); docs/cli.md says so."""
    from ynm.cli._table import by_author, line, marks, widths

    if not hits:
        return "no matches"
    headers = ("SCORE", "ID", "TYPE", "MOUNT", "SUMMARY")
    rows = [(f"{h['score']:.3f}", h["memoryId"], h["type"], h["mount"],
             marks(h) + h["summary"] + by_author(h))
            for h in hits]
    w = widths(headers, rows)
    lines = [line(headers, w)]
    for h, row in zip(hits, rows):
        lines.append(line(row, w))
        if "explain" in h:
            e = h["explain"]
            text = (f"        rel {e['relevance']:.2f} rec {e['recency']:.2f} "
                    f"imp {e['importance']:.2f}")
            if "vector" in e:
                text += "".join(f" {key} " + ("-" if e[part] is None else f"{e[part]:.2f}")
                                for key, part in (("lex", "lexical"), ("vec", "vector")))
            lines.append(text)
    return "\n".join(lines)


@click.command()
@click.argument("query", nargs=-1)
@click.option("--text", help="Free text (same as the positional QUERY).")
@click.option("--type", "type_", multiple=True, type=click.Choice(TYPES), help="Types (repeatable).")
@click.option("--level", multiple=True, type=click.Choice(LEVELS), help="Levels (repeatable).")
@click.option("--namespace", help="Namespace prefix (whole segments).")
@click.option("--subject", help="Exact subject.")
@click.option("--tags", multiple=True, help="All of these tags (repeatable, comma-separated).")
@click.option("--data-key", help="Memories whose data has this key.")
@click.option("--since", help=f"updatedAt at or after this: {DATETIME_HELP}.")
@click.option("--until", help=f"updatedAt at or before this: {DATETIME_HELP}.")
@click.option("--pinned-only/--no-pinned-only", default=False, help="Only pinned memories.")
@click.option("--include-tombstoned/--no-include-tombstoned", default=False,
              help="Include forgotten memories.")
@click.option("--limit", type=int, default=10, show_default=True, help="Hits to return (1..200).")
@click.option("--explain/--no-explain", default=False, help="Show the score's parts.")
@click.option("--rerank/--no-rerank", default=None, help="Judge-backed rerank of the top hits (default: config dream.rerank; needs a calibrated judge such as TypeSafe).")
@click.option("--mount", help="Only this mount.")
@common_options
def recall(as_json: bool, cwd: Path | None, query: tuple[str, ...], text: str | None,
           type_: tuple[str, ...], level: tuple[str, ...], tags: tuple[str, ...],
           **rest: Any) -> None:
    """Find memories by text and filters, best first.

    \b
    Example:
      ynm recall "how do we deploy the ledger"
      ynm recall --type procedural --namespace team/payments --explain
    """
    from ynm.errors import InvalidInput
    from ynm.model.inputs import RecallQuery, parse_input

    words = " ".join(query) or None
    if words is not None and text is not None and words != text:
        raise InvalidInput("text: give the query either as arguments or with --text, not both")
    q = parse_input(RecallQuery, drop_none(
        text=text if text is not None else words, type=list(type_), level=list(level),
        tags=split_tags(tags), **rest,
    ))
    with open_ynm(cwd) as ynm:
        check_mount(ynm, q.mount, hosted=True)
        hits = ynm.recall(q)
        conflict = scope_hint(ynm, q.mount, q.level)
        unmerged = note_unmerged(ynm)
        left_out = list(ynm.left_out)
        asked = ynm.recall_words
        hosted = bool(ynm.remotes)
        # which filters (and whether forgetting) kept the question's words away: asked only
        # of a recall that found nothing and will say why
        excluded = (ynm.recall_exclusions(q)
                    if not (hits or left_out or unmerged) and asked is not None and asked.words
                    else None)
    from ynm.model.text import has_no_search_words, no_search_words_reason

    if has_no_search_words(q.text):
        say(f"note: {no_search_words_reason(q.text)}; {NO_SEARCH_WORDS_HINT}", err=True)
    if left_out and not hits and not as_json:
        # a bare "No matches" would pass for the whole answer
        say("No matches in the stores that answered; the answer is incomplete: "
            "shared memory was left out (below)")
    else:
        emit(hits, as_json, format_hits)
    # no hint for an answer already said to be incomplete: the stores left out (or the shards
    # fetched but not merged) may hold the words
    hint = None if hits or left_out or unmerged else no_match_hint(asked, q, hosted, excluded)
    if conflict is not None and not hits:
        say(conflict, err=True)
    elif hint is not None:
        say(f"hint: {hint}", err=True)
    note_left_out(left_out)
