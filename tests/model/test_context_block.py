"""Context block packing (reference/algorithms.md §3.3, cli.md §3.4)."""

from __future__ import annotations

from ynm.model.context_block import Entry, estimate_tokens, line_of, pack


def e(mid: str, summary: str = "x", pinned: bool = False, tags: tuple[str, ...] = (),
      type_: str = "semantic") -> Entry:
    return Entry(mid, type_, pinned, summary, summary, tags)


def test_line_format_and_estimate():
    assert line_of(e("a", "Deploys on Tuesdays", tags=("deploy", "ops"))) == (
        "- (semantic) Deploys on Tuesdays [deploy, ops]")
    assert line_of(e("a", "P", pinned=True)) == "- (semantic, pinned) P"
    assert line_of(Entry("a", "reference", False, "", "first\nsecond", ())) == "- (reference) first"
    assert estimate_tokens("## Memory\n") == 3 and estimate_tokens("abcde") == 2


def test_the_reference_example():
    block = pack([], [e("m1", "The team deploys on Tuesdays", tags=("deploy",))], 1500)
    assert block == {"markdown": "## Memory\n- (semantic) The team deploys on Tuesdays [deploy]\n",
                     "included": ["m1"], "tokens": 16, "truncated": False}


def test_nothing_fits_gives_empty_markdown_and_truncated():
    assert pack([], [e("m1", "a long enough line")], 4) == {
        "markdown": "", "included": [], "tokens": 0, "truncated": True}
    assert pack([], [], 1500) == {"markdown": "", "included": [], "tokens": 0, "truncated": False}


def test_pinned_overflow_stops_the_pinned_phase_but_ranked_may_fill():
    big = e("p1", "P" * 200, pinned=True)
    small_pinned = e("p2", "tiny", pinned=True)
    ranked = [e("r1", "short one"), e("r2", "another")]
    block = pack([big, small_pinned], ranked, 20)
    # the big pinned memory ends the pinned phase (p2 is not tried), ranked ones still fit
    assert block["included"] == ["r1", "r2"] and block["truncated"] is True
    assert block["tokens"] <= 20


def test_occurrences_never_enter_and_duplicates_are_skipped():
    occ = e("o", "seen again", pinned=True, tags=("occurrence",))
    block = pack([occ, e("p", "pinned one", pinned=True)],
                 [e("p", "pinned one"), e("o2", "x", tags=("occurrence",)), e("r", "ranked")], 100)
    assert block["included"] == ["p", "r"]


def test_a_promoted_copy_stands_for_its_personal_original():
    """Personal original and its distributed copy (``derives-from``): only the copy enters,
    wherever either appears (pinned or ranked, before or after the other)."""
    orig = Entry("o", "semantic", True, "Deploys on Tuesdays", "", (), level="personal")
    copy = Entry("c", "semantic", False, "Deploys on Tuesdays", "", (), level="distributed",
                 derives_from=("o",))
    other = Entry("x", "semantic", False, "Other", "", (), level="personal")
    assert pack([orig], [other, copy], 1500)["included"] == ["x", "c"]
    assert pack([], [copy, orig, other], 1500)["included"] == ["c", "x"]
    assert pack([], [orig, copy], 1500)["markdown"] == (
        "## Memory\n- (semantic) Deploys on Tuesdays\n")
    # the copy not a candidate (another level asked for, or forgotten): the original stays
    assert pack([orig], [other], 1500)["included"] == ["o", "x"]
    # a personal memory deriving from another personal one is not a promoted copy
    mine = Entry("m", "semantic", False, "Mine", "", (), level="personal", derives_from=("x",))
    assert pack([], [mine, other], 1500)["included"] == ["m", "x"]
