"""The pure wiki generator of reference algorithms.md §5 (no I/O)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable
from typing import Any

from ynm.model.fold import Memory
from ynm.model.records import Record

_NON_ALNUM = re.compile(r"[^a-z0-9]+")
INDEX_INTRO = "Generated from the memory store; edit a memory page and ingest it to change it."
LOG_INTRO = "Every record of this mount, oldest first."


def slug(name: str) -> str:
    """The reference slug of ``name`` (§5): lowercase, drop a leading ``entity:``/``topic:``,
    runs of non-``[a-z0-9]`` become ``-``, trim ``-``, cut to 80; ``untitled`` if empty."""
    s = name.lower()
    for prefix in ("entity:", "topic:"):
        if s.startswith(prefix):
            s = s[len(prefix):]
            break
    s = _NON_ALNUM.sub("-", s).strip("-")[:80]
    return s or "untitled"


def _raw_slug(name: str) -> str:
    s = name.lower()
    for prefix in ("entity:", "topic:"):
        if s.startswith(prefix):
            s = s[len(prefix):]
            break
    return _NON_ALNUM.sub("-", s).strip("-")[:80]


def page_slugs(names: Iterable[str]) -> dict[str, str]:
    """Collision-free slugs: ``{name: slug}`` for distinct ``names``.

    Within a group of names sharing a plain slug (:func:`slug` without the ``untitled``
    fallback), the name that sorts first by code point keeps the plain slug; every other name, and any name whose plain slug is
    empty, gets ``<slug>-<first 8 hex of sha256(name)>`` (``untitled-<hex>`` for empty). The
    result depends only on the set of names, never on their order (ynm deviation from §5).
    """
    groups: dict[str, list[str]] = {}
    for name in set(names):
        groups.setdefault(_raw_slug(name), []).append(name)
    out: dict[str, str] = {}
    for base, members in groups.items():
        members.sort()
        for i, name in enumerate(members):
            if base and i == 0:
                out[name] = base
            else:
                digest = hashlib.sha256(name.encode("utf-8")).hexdigest()[:8]
                out[name] = f"{base or 'untitled'}-{digest}"
    return out


def _fm_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(json.dumps(v, ensure_ascii=False) for v in value) + "]"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _frontmatter(pairs: list[tuple[str, Any]]) -> str:
    lines = [f"{k}: {_fm_value(v)}" for k, v in pairs if v is not None]
    return "---\n" + "\n".join(lines) + "\n---\n"


def _first_line(content: str | None) -> str | None:
    if content is None:
        return None
    return content.split("\n", 1)[0]


def _label(m: Memory) -> str:
    s = m.current.summary
    if s is not None:
        return s
    line = _first_line(m.current.content)
    return line if line is not None else ""


def _line(m: Memory) -> str:
    out = f"- [{_label(m)}](memories/{m.memory_id}.md)"
    if m.pinned:
        out += " (pinned)"
    if m.subject:
        out += f" · {m.subject}"
    return out


def _memory_page(m: Memory) -> str:
    c = m.current
    fm = _frontmatter([
        ("type", "memory"), ("memoryId", m.memory_id), ("memoryType", m.type),
        ("level", m.level), ("namespace", m.namespace), ("subject", m.subject),
        ("author", c.provenance.actor), ("tags", m.tags), ("importance", m.importance),
        ("confidence", m.confidence), ("pinned", True if m.pinned else None),
        ("needsReview", True if m.needs_review else None), ("createdAt", m.created_at),
        ("updatedAt", m.updated_at), ("versions", m.versions), ("dataSchema", c.data_schema),
    ])
    body = f"# {c.summary if c.summary is not None else m.memory_id}\n\n{(c.content or '').strip()}\n"
    if c.data is not None:
        body += "\n```json\n" + json.dumps(c.data, indent=2, ensure_ascii=False) + "\n```\n"
    if m.links:
        body += "\n## Links\n\n" + "".join(f"- {lk.rel} → [{lk.to}]({lk.to}.md)\n" for lk in m.links)
    return fm + "\n" + body


def generate(memories: Iterable[Memory], records: Iterable[Record], *, title: str,
             generated_at: str) -> dict[str, bytes]:
    """Pages of one mount: ``{relative path: UTF-8 bytes}``, keys sorted by path (§5).

    ``memories`` are folded memories (tombstoned ones are left out here); ``records`` are every
    raw record of the mount for ``log.md``; ``title`` is e.g. ``Memory: project``;
    ``generated_at`` an ISO timestamp written into generated pages. Pure; raises nothing.
    """
    live = sorted((m for m in memories if not m.tombstoned),
                  key=lambda m: (m.updated_at, m.memory_id), reverse=True)
    pages: dict[str, str] = {}
    groups: dict[str, list[Memory]] = {}
    for m in live:
        groups.setdefault(f"{m.level} · {m.namespace} · {m.type}", []).append(m)
    idx = _frontmatter([("type", "index"), ("generated", True), ("generatedAt", generated_at),
                        ("memories", len(live))])
    idx += f"\n# {title}\n\n{INDEX_INTRO}\n"
    for key in sorted(groups):
        idx += f"\n## {key}\n\n" + "".join(_line(m) + "\n" for m in groups[key])
    pages["index.md"] = idx
    log = _frontmatter([("type", "log"), ("generated", True), ("generatedAt", generated_at)])
    log += f"\n# Log\n\n{LOG_INTRO}\n"
    for r in sorted(records, key=lambda r: (r.recorded_at, r.id)):
        what = r.summary if r.summary is not None else _first_line(r.content)
        if what is None:
            what = r.reason if r.reason is not None else r.memory_id
        log += f"\n## [{r.recorded_at[:10]}] {r.op} | {what} ({r.provenance.actor})\n"
    pages["log.md"] = log
    for m in live:
        pages[f"memories/{m.memory_id}.md"] = _memory_page(m)
    subjects: dict[str, list[Memory]] = {}
    tags: dict[str, list[Memory]] = {}
    for m in live:
        if m.subject:
            subjects.setdefault(m.subject, []).append(m)
        for t in m.tags:
            tags.setdefault(t, []).append(m)
    sslug = page_slugs(subjects)
    for subj, ms in subjects.items():
        page = _frontmatter([("type", "entity"), ("subject", subj), ("generated", True),
                             ("generatedAt", generated_at), ("memories", len(ms))])
        page += f"\n# {subj}\n"
        refl = [m for m in ms if m.type == "reflective"]
        if refl:
            page += "\n## Reflection\n\n" + "\n\n".join((m.current.content or "").strip() for m in refl) + "\n"
        page += "\n## Memories\n\n" + "".join(_line(m) + "\n" for m in ms if m.type != "reflective")
        pages[f"entities/{sslug[subj]}.md"] = page
    tslug = page_slugs(tags)
    for tag, ms in tags.items():
        page = _frontmatter([("type", "topic"), ("tag", tag), ("generated", True),
                             ("generatedAt", generated_at), ("memories", len(ms))])
        page += f"\n# {tag}\n\n" + "".join(_line(m) + "\n" for m in ms)
        pages[f"topics/{tslug[tag]}.md"] = page
    return {p: pages[p].encode("utf-8") for p in sorted(pages)}
