"""``ynm recall``: ranked search over memories (reference/cli.md §4.18)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ynm.cli._common import (
    common_options,
    drop_none,
    emit,
    note_left_out,
    note_unmerged,
    open_ynm,
    say,
    split_tags,
    warn_unknown_mount,
)

# Said on stderr after the reason when the query has nothing to search
# (ynm.model.text.has_no_search_words, no_search_words_reason).
NO_SEARCH_WORDS_HINT = "give words of the subject, or filters without a query"
TYPES = ("working", "episodic", "semantic", "procedural", "reflective", "reference")
LEVELS = ("personal", "distributed")


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
@click.option("--since", help="updatedAt at or after (ISO 8601 or YYYY-MM-DD).")
@click.option("--until", help="updatedAt at or before (ISO 8601 or YYYY-MM-DD).")
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
        warn_unknown_mount(ynm, q.mount, hosted=True)
        hits = ynm.recall(q)
        note_unmerged(ynm)
        left_out = list(ynm.left_out)
    from ynm.model.text import has_no_search_words, no_search_words_reason

    if has_no_search_words(q.text):
        say(f"note: {no_search_words_reason(q.text)}; {NO_SEARCH_WORDS_HINT}", err=True)
    if left_out and not hits and not as_json:
        # a bare "No matches" would pass for the whole answer
        say("No matches in the stores that answered; the answer is incomplete: "
            "shared memory was left out (below)")
    else:
        emit(hits, as_json, format_hits)
    note_left_out(left_out)
