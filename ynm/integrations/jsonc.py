"""Edit JSON and JSONC (JSON with ``//`` and ``/* */`` comments and trailing commas) in place.

Agent client configs are files people edit by hand: opencode's ``opencode.jsonc`` has comments,
and every client file has its own indentation and key order. Loading and dumping would lose the
comments and reorder nothing but still rewrite every byte. Python has no maintained library that
edits JSONC while keeping its comments, so this module does a careful textual merge instead: a
small scanner finds where each member's value starts and ends, and an edit replaces that span
(or inserts a member before the object's closing brace), leaving every other byte of the file
as it was. New values are indented like their neighbours, with the file's line ending.

Errors: :class:`JsoncError` (a ``ValueError``) with the offset of the first thing that is not
JSONC. Source for the format: opencode's config docs (https://opencode.ai/docs/config/, "JSONC").
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

_LITERAL = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null")


class JsoncError(ValueError):
    """Text that is not JSON or JSONC; the message names the offset."""


@dataclass
class Node:
    """A parsed value: ``start``/``end`` are offsets of its text (end exclusive); objects keep
    their members in order as ``(key, member start, value node)`` and the offset of ``}``."""

    value: Any
    start: int
    end: int
    members: list[tuple[str, int, Node]] = field(default_factory=list)
    close: int = -1
    trailing_comma: bool = False

    def member(self, key: str) -> Node | None:
        for k, _, node in self.members:
            if k == key:
                return node
        return None


def _skip(text: str, i: int) -> int:
    n = len(text)
    while i < n:
        c = text[i]
        if c in " \t\r\n\ufeff":
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j + 1
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise JsoncError(f"unterminated comment at offset {i}")
            i = j + 2
        else:
            break
    return i


def _string(text: str, i: int) -> tuple[str, int]:
    j = i + 1
    while j < len(text):
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c == '"':
            try:
                return json.loads(text[i:j + 1]), j + 1
            except ValueError as err:
                raise JsoncError(f"bad string at offset {i}: {err}") from None
        j += 1
    raise JsoncError(f"unterminated string at offset {i}")


def _value(text: str, i: int) -> Node:
    i = _skip(text, i)
    if i >= len(text):
        raise JsoncError("unexpected end of text")
    c = text[i]
    if c == "{":
        node = Node({}, i, i)
        j = _skip(text, i + 1)
        while True:
            if j < len(text) and text[j] == "}":
                node.close, node.end = j, j + 1
                return node
            if j >= len(text) or text[j] != '"':
                raise JsoncError(f"expected a key or '}}' at offset {j}")
            key, k = _string(text, j)
            k = _skip(text, k)
            if k >= len(text) or text[k] != ":":
                raise JsoncError(f"expected ':' at offset {k}")
            child = _value(text, k + 1)
            node.members.append((key, j, child))
            node.value[key] = child.value
            j = _skip(text, child.end)
            node.trailing_comma = False
            if j < len(text) and text[j] == ",":
                node.trailing_comma = True
                j = _skip(text, j + 1)
            elif j >= len(text) or text[j] != "}":
                raise JsoncError(f"expected ',' or '}}' at offset {j}")
    if c == "[":
        node = Node([], i, i)
        j = _skip(text, i + 1)
        while True:
            if j < len(text) and text[j] == "]":
                node.end = j + 1
                return node
            child = _value(text, j)
            node.value.append(child.value)
            j = _skip(text, child.end)
            if j < len(text) and text[j] == ",":
                j = _skip(text, j + 1)
            elif j >= len(text) or text[j] != "]":
                raise JsoncError(f"expected ',' or ']' at offset {j}")
    if c == '"':
        value, end = _string(text, i)
        return Node(value, i, end)
    m = _LITERAL.match(text, i)
    if not m:
        raise JsoncError(f"unexpected {text[i]!r} at offset {i}")
    return Node(json.loads(m.group()), i, m.end())


def parse(text: str) -> Node:
    """Parse JSON or JSONC text into a :class:`Node` tree. Raises :class:`JsoncError`."""
    node = _value(text, 0)
    rest = _skip(text, node.end)
    if rest != len(text):
        raise JsoncError(f"unexpected text after the value at offset {rest}")
    return node


def loads(text: str) -> Any:
    """The Python value of JSON or JSONC text (comments and trailing commas allowed)."""
    return parse(text).value


def _newline(text: str) -> str:
    return "\r\n" if "\r\n" in text else "\n"


def _line_indent(text: str, pos: int) -> str:
    start = text.rfind("\n", 0, pos) + 1
    return re.match(r"[ \t]*", text[start:]).group()


def _unit(text: str) -> str:
    m = re.search(r"\n([ \t]+)\S", text)
    return m.group(1) if m else "  "


def _dump(value: Any, indent: str, unit: str, nl: str) -> str:
    """``value`` as JSON with ``unit`` per level, continuation lines starting at ``indent``."""
    raw = json.dumps(value, indent=len(unit) if unit.strip(" ") == "" else 1, ensure_ascii=False)
    if unit and unit.strip(" ") != "":  # tab indentation
        raw = re.sub(r"(?m)^( +)", lambda m: unit * len(m.group(1)), raw)
    return raw.replace("\n", nl + indent)


def _insert(text: str, obj: Node, key: str, value: Any) -> str:
    nl, unit = _newline(text), _unit(text)
    if obj.members:
        indent = _line_indent(text, obj.members[0][1])
    else:
        indent = _line_indent(text, obj.start) + unit
    member = f"{json.dumps(key, ensure_ascii=False)}: {_dump(value, indent, unit, nl)}"
    q = obj.close
    while q > 0 and text[q - 1] in " \t\r\n":
        q -= 1
    q = max(q, obj.start + 1)
    if obj.members and "\n" not in text[obj.start:obj.members[0][1]]:
        # an object written on one line ({"a": 1}) gets the new member on that line too
        last = obj.members[-1][2]
        compact = json.dumps({key: value}, ensure_ascii=False)[1:-1]
        return text[:last.end] + ", " + compact + text[last.end:]
    if not obj.members:
        return (text[:q] + nl + indent + member + nl + _line_indent(text, obj.start)
                + text[obj.close:])
    last = obj.members[-1][2]
    if obj.trailing_comma:
        return text[:q] + nl + indent + member + "," + text[q:]
    return text[:last.end] + "," + text[last.end:q] + nl + indent + member + text[q:]


def set_path(text: str, path: list[str], value: Any) -> str:
    """``text`` with the member at ``path`` (keys from the root object down) set to ``value``:
    its value's span replaced, or the member inserted (creating missing parent objects), with
    every other byte unchanged. Empty text counts as ``{}``. Raises :class:`JsoncError` when the
    root is not an object."""
    text = text.removeprefix("\ufeff")
    if not text.strip():
        text = "{}\n"
    node = parse(text)
    nl, unit = _newline(text), _unit(text)
    for depth, key in enumerate(path):
        if not isinstance(node.value, dict):
            raise JsoncError(f"{'.'.join(path[:depth]) or 'the root'} is not an object")
        child = node.member(key)
        rest = path[depth + 1:]
        if child is None:
            for k in reversed(rest):
                value = {k: value}
            return _insert(text, node, key, value)
        if not rest or not isinstance(child.value, dict):
            for k in reversed(rest):
                value = {k: value}
            member_start = next(s for k, s, n in node.members if n is child)
            new = _dump(value, _line_indent(text, member_start), unit, nl)
            return text[:child.start] + new + text[child.end:]
        node = child
    raise JsoncError("empty path")


def merge(text: str, patch: dict[str, Any], replace: Iterable[tuple[str, ...]] = ()) -> str:
    """Deep-merge ``patch`` into the object in ``text``: objects merge key by key, anything
    else (arrays included) is replaced whole, and so is the value at each key path in
    ``replace``; members equal to the patch are left untouched, so merging twice changes
    nothing. Comments and formatting outside the changed values stay; a leading byte order mark
    is dropped (RFC 8259 §8.1: JSON text is exchanged without one)."""
    whole = {tuple(p) for p in replace}

    def walk(text: str, current: Any, patch: dict[str, Any], path: list[str]) -> str:
        for key, want in patch.items():
            have = current.get(key) if isinstance(current, dict) else None
            if (isinstance(want, dict) and isinstance(have, dict)
                    and (*path, key) not in whole):
                text = walk(text, have, want, [*path, key])
            elif have != want or (isinstance(current, dict) and key not in current):
                text = set_path(text, [*path, key], want)
        return text

    text = text.removeprefix("\ufeff")
    current = loads(text) if text.strip() else {}
    if not isinstance(current, dict):
        raise JsoncError("the root is not an object")
    return walk(text, current, patch, [])


def merged_value(current: Any, patch: dict[str, Any],
                 replace: Iterable[tuple[str, ...]] = (), _path: tuple[str, ...] = ()) -> Any:
    """The value :func:`merge` would produce, computed on Python values."""
    whole = {tuple(p) for p in replace}
    out = dict(current) if isinstance(current, dict) else {}
    for key, want in patch.items():
        have = out.get(key)
        out[key] = (merged_value(have, want, whole, (*_path, key))
                    if isinstance(want, dict) and isinstance(have, dict)
                    and (*_path, key) not in whole else want)
    return out


def clashes(current: Any, patch: dict[str, Any], skip: Iterable[tuple[str, ...]] = (),
            _path: tuple[str, ...] = ()) -> list[tuple[tuple[str, ...], Any]]:
    """Where merging ``patch`` would replace a value of another shape: ``(key path, value)``
    for each member that holds something (not null, not absent) where the patch puts an object
    or an array of a different kind (``"mcp": [1, 2]`` where ``mcp.ynm`` goes). Paths in
    ``skip`` are not looked into."""
    out: list[tuple[tuple[str, ...], Any]] = []
    if not isinstance(current, dict):
        return out
    for key, want in patch.items():
        path = (*_path, key)
        if path in set(map(tuple, skip)) or key not in current or current[key] is None:
            continue
        have = current[key]
        if isinstance(want, dict):
            if not isinstance(have, dict):
                out.append((path, have))
            else:
                out += clashes(have, want, skip, path)
        elif isinstance(want, list) and not isinstance(have, list):
            out.append((path, have))
    return out
