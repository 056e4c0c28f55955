"""Control characters in stored text: shown escaped on a terminal, refused at write.

Pure functions (no I/O, only :mod:`re`), so the CLI's output path imports them cheaply.
"""

from __future__ import annotations

import re

# C0 controls (U+0000-U+001F, ESC among them), DEL and the C1 controls (U+0080-U+009F): a
# terminal acts on them (ESC [2J clears the screen, ESC ]0;...BEL sets the window title, U+009B
# starts a control sequence on some terminals) instead of showing them.
_CONTROL_RE = re.compile("[\x00-\x1f\x7f-\x9f]")
_CONTROL_KEEP_LINES_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]|\r(?!\n)")
_CONTROL_WRITE_RE = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")


def visible(text: str, lines: bool = False) -> str:
    """``text`` as a terminal may print it: every control character written out as a
    backslash escape, so stored text (a teammate's memory, a tag, a reason, a file name) can
    never clear a screen, set a window title or move the cursor. ESC becomes ``\\x1b``, NUL
    ``\\x00``, BEL ``\\x07``, DEL ``\\x7f``, U+009B ``\\x9b``; tab becomes ``\\t``, newline ``\\n``
    and carriage return ``\\r``, except with ``lines`` (a body printed over several lines on
    purpose: ``ynm show``'s content, a whole human report), which keeps tab, newline and a
    carriage return that ends a line (``\\r\\n``). Other text is unchanged (a backslash already
    in the text stays one backslash)."""
    pattern = _CONTROL_KEEP_LINES_RE if lines else _CONTROL_RE
    if not pattern.search(text):
        return text
    return pattern.sub(_escape_control, text)


_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}


def _escape_control(match: re.Match[str]) -> str:
    ch = match.group(0)
    return _NAMED.get(ch) or f"\\x{ord(ch):02x}"


def control_character_problem(text: str, lines: bool = True) -> str | None:
    """Why ``text`` may not be written, or None: it holds a control character other than tab,
    newline and carriage return (those three only with ``lines``; a one-line field such as a
    tag takes none): NUL, ESC, BEL, DEL, a C1 control. ``must not hold control characters
    (found \\x1b at character 3); only tab and line breaks are kept``. The record schema
    (reference/storage.md §1) takes any string; ynm refuses these at write so no memory carries
    a terminal escape or a NUL byte into a teammate's terminal or tools (memories written by
    other tools are still read, and shown escaped, :func:`visible`)."""
    pattern = _CONTROL_WRITE_RE if lines else _CONTROL_RE
    found = pattern.search(text)
    if found is None:
        return None
    return (f"must not hold control characters (found {_escape_control(found)} at character "
            f"{found.start() + 1}); only tab and line breaks are kept"
            if lines else
            f"must not hold control characters (found {_escape_control(found)} at character "
            f"{found.start() + 1})")
