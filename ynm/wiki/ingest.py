"""Read an edited memory page back (reference algorithms.md §5 "Ingest", cli.md §4.29). Pure."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from ynm.errors import YnmError

_MEMORY_ID = re.compile(r'^memoryId:\s*"?([0-9A-HJKMNP-TV-Z]{26})"?\s*$', re.MULTILINE)
NOT_A_PAGE = "not a memory page: missing frontmatter with memoryId"


@dataclass(frozen=True)
class EditedPage:
    """``memory_id`` (26 Crockford chars), ``title`` (the first ``# `` line, or None) and
    ``content`` (the body after the title up to the data block or links, trimmed)."""

    memory_id: str
    title: str | None
    content: str


def parse_page(text: str) -> EditedPage:
    """Parse a page written by the generator and edited by a person.

    Raises:
        YnmError: ``not a memory page: missing frontmatter with memoryId`` (exit 1).
    """
    text = text.replace("\r\n", "\n")
    if not text.startswith("---\n"):
        raise YnmError(NOT_A_PAGE)
    end = text.find("\n---\n", 3)
    if end < 0:
        raise YnmError(NOT_A_PAGE)
    found = _MEMORY_ID.search(text[4:end + 1])
    if found is None:
        raise YnmError(NOT_A_PAGE)
    body = text[end + 5:]
    title = None
    lines = body.split("\n")
    for i, line in enumerate(lines):
        if line.startswith("# "):
            title = line[2:].strip()
            body = "\n".join(lines[i + 1:])
            break
    body = "\n" + body
    for stop in ("\n```json\n", "\n## Links\n"):
        cut = body.find(stop)
        if cut >= 0:
            body = body[:cut]
    return EditedPage(found.group(1), title, body.strip())


def supersede_fields(page: EditedPage, current: dict[str, Any]) -> dict[str, Any] | None:
    """The supersede the page asks for, or None when its content equals the stored one.

    ``current`` is the memory's current record (camelCase keys). The summary is the page
    title only when the title was edited (differs from both the memoryId and the stored
    summary); otherwise it is left out so that it is derived from the new content (§5). The
    stored ``data`` and ``dataSchema`` are carried over so that an edit of the text keeps
    them (a supersede without data would drop it).
    """
    if page.content == (current.get("content") or "").strip():
        return None
    fields: dict[str, Any] = {"memory_id": page.memory_id, "content": page.content}
    if page.title and page.title not in (page.memory_id, current.get("summary")):
        fields["summary"] = page.title
    if current.get("data") is not None:
        fields["data"] = current["data"]
    if current.get("dataSchema") is not None:
        fields["data_schema"] = current["dataSchema"]
    return fields
