"""Aligned columns with a header line for the human output of ``list``, ``recall``,
``review list`` and ``history``.

The reference pads fixed widths (``<type:10> <level:11> <namespace:24>``, reference/cli.md
§4.11), so a longer namespace or mount id pushes the rest of its row out of line and nothing
says what a column is. Here each column is as wide as its widest cell or header, up to a cap;
a cell longer than its column's cap is printed whole (a namespace is copied into
``--namespace``, so it is never cut) and only its own row's later cells shift. Columns are
separated by two spaces; the last column is not padded. No trailing spaces. Every cell is
stored text shown inside one line, so its control characters are written out, line breaks too
(:func:`ynm.cli._common.one_line`).
"""

from __future__ import annotations

from collections.abc import Sequence

DEFAULT_CAP = 64  # characters: wider cells are printed whole, without widening the column


def widths(headers: Sequence[str], rows: Sequence[Sequence[str]],
           caps: Sequence[int | None] | None = None) -> list[int]:
    """Each column's width: the longest of its header and cells, at most its cap
    (``DEFAULT_CAP`` when ``caps`` gives none)."""
    out = []
    for i, header in enumerate(headers):
        cap = (caps[i] if caps is not None else None) or DEFAULT_CAP
        out.append(min(max([len(header), *(len(r[i]) for r in rows)]), max(cap, len(header))))
    return out


def line(cells: Sequence[str], col_widths: Sequence[int]) -> str:
    """One row: every cell but the last padded to its width, two spaces between cells; a cell
    wider than its width is kept whole."""
    parts = [c.ljust(w) for c, w in zip(cells[:-1], col_widths)]
    return "  ".join([*parts, cells[-1]]).rstrip()


def table(headers: Sequence[str], rows: Sequence[Sequence[str]],
          caps: Sequence[int | None] | None = None) -> list[str]:
    """The header line then one line per row, aligned as the module says, each cell with its
    control characters written out."""
    from ynm.cli._common import one_line

    rows = [[one_line(c) for c in r] for r in rows]
    w = widths(headers, rows, caps)
    return [line(headers, w), *(line(r, w) for r in rows)]


def marks(m: dict) -> str:
    """The summary's prefix: ``* `` when pinned, ``[tombstoned] `` when forgotten (shown only
    with ``--include-tombstoned``), ``[expired] `` for working memory past its ttl that no sweep
    has tombstoned yet."""
    return (("* " if m.get("pinned") else "")
            + ("[tombstoned] " if m.get("tombstoned") else "")
            + ("[expired] " if m.get("expired") else ""))


def by_author(m: dict) -> str:
    """The summary's suffix: ``  (<author>)`` for a memory a signed-in person wrote (their
    nickname, else their person id; reference/cli.md §4.11), else nothing."""
    return f"  ({m['author']})" if m.get("author") else ""
