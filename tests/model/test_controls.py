"""Control characters: written out for a terminal (visible), refused at write."""

from __future__ import annotations

import pytest

from ynm.model.controls import control_character_problem, visible


@pytest.mark.parametrize(("text", "one_line", "lines"), [
    ("plain café ✓", "plain café ✓", "plain café ✓"),
    ("a\x1b[2Jb", "a\\x1b[2Jb", "a\\x1b[2Jb"),
    ("t\x1b]0;pwned\x07", "t\\x1b]0;pwned\\x07", "t\\x1b]0;pwned\\x07"),
    ("nul\x00 del\x7f c1\x9b", "nul\\x00 del\\x7f c1\\x9b", "nul\\x00 del\\x7f c1\\x9b"),
    ("a\tb\nc", "a\\tb\\nc", "a\tb\nc"),
    ("crlf\r\nline", "crlf\\r\\nline", "crlf\r\nline"),
    ("over\rwrite", "over\\rwrite", "over\\rwrite"),
    ("back\\x1b stays", "back\\x1b stays", "back\\x1b stays"),
])
def test_visible(text: str, one_line: str, lines: str) -> None:
    assert visible(text) == one_line
    assert visible(text, lines=True) == lines


def test_control_character_problem() -> None:
    assert control_character_problem("a\tb\r\nc") is None
    assert control_character_problem("a\x00b") == (
        "must not hold control characters (found \\x00 at character 2); only tab and line "
        "breaks are kept")
    assert control_character_problem("tag\tx", lines=False) == (
        "must not hold control characters (found \\t at character 4)")
    assert control_character_problem("é ✓ ok", lines=False) is None
    assert control_character_problem("\x85", lines=True) is not None  # C1 NEL
