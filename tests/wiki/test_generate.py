"""The pure wiki generator against pages written by hand from reference algorithms.md §5."""

from __future__ import annotations

from ynm.model.fold import fold
from ynm.model.jsonl import parse_obj
from ynm.wiki import generate, page_slugs, slug

A = "01JZ0000000000000000000001"
B = "01JZ0000000000000000000002"
C = "01JZ0000000000000000000003"
S1 = "01JZ0000000000000000000010"
T1 = "01JZ0000000000000000000011"
D1 = "01JZ0000000000000000000012"


def rec(rid, mid, op, t, **kw):
    obj = {"v": 1, "id": rid, "memoryId": mid, "op": op, "type": "semantic",
           "level": "personal", "namespace": "repo", "recordedAt": f"2026-09-0{t}T10:00:00.000Z",
           "provenance": {"actor": "ann"}}
    obj.update(kw)
    return parse_obj(obj)


RECORDS = [
    rec(A, A, "create", 1, content="Use uv for envs\nmore", subject="python", tags=["tools"],
        pinned=True),
    rec(B, B, "create", 2, content="Builds take ten minutes", summary="Slow builds",
        tags=["tools", "ci"], data={"minutes": 10}, importance=0.8),
    rec(C, C, "create", 3, content="Old fact", subject="python"),
    rec(S1, B, "supersede", 4, content="Builds take two minutes", summary="Fast builds",
        tags=["tools", "ci"], data={"minutes": 2},
        links=[{"rel": "supersedes", "to": B}]),
    rec(T1, C, "tombstone", 5, reason="wrong"),
    rec(D1, A, "annotate", 6, data={"dreamed": "2026-09-06T10:00:00.000Z"}),
]

GEN = "2026-09-07T00:00:00.000Z"

INDEX = f"""---
type: "index"
generated: true
generatedAt: "{GEN}"
memories: 2
---

# Memory: project

Generated from the memory store; edit a memory page and ingest it to change it.

## personal · repo · semantic

- [Fast builds](memories/{B}.md)
- [Use uv for envs](memories/{A}.md) (pinned) · python
"""

LOG = f"""---
type: "log"
generated: true
generatedAt: "{GEN}"
---

# Log

Every record of this mount, oldest first.

## [2026-09-01] create | Use uv for envs (ann)

## [2026-09-02] create | Slow builds (ann)

## [2026-09-03] create | Old fact (ann)

## [2026-09-04] supersede | Fast builds (ann)

## [2026-09-05] tombstone | wrong (ann)

## [2026-09-06] annotate | {A} (ann)
"""

PAGE_B = f"""---
type: "memory"
memoryId: "{B}"
memoryType: "semantic"
level: "personal"
namespace: "repo"
author: "ann"
tags: ["tools", "ci"]
importance: 0.8
confidence: 1
createdAt: "2026-09-02T10:00:00.000Z"
updatedAt: "2026-09-04T10:00:00.000Z"
versions: 2
---

# Fast builds

Builds take two minutes

```json
{{
  "minutes": 2
}}
```

## Links

- supersedes → [{B}]({B}.md)
"""

PAGE_A = f"""---
type: "memory"
memoryId: "{A}"
memoryType: "semantic"
level: "personal"
namespace: "repo"
subject: "python"
author: "ann"
tags: ["tools"]
importance: 0.5
confidence: 1
pinned: true
createdAt: "2026-09-01T10:00:00.000Z"
updatedAt: "2026-09-01T10:00:00.000Z"
versions: 2
---

# {A}

Use uv for envs
more
"""

ENTITY = f"""---
type: "entity"
subject: "python"
generated: true
generatedAt: "{GEN}"
memories: 1
---

# python

## Memories

- [Use uv for envs](memories/{A}.md) (pinned) · python
"""

TOPIC_TOOLS = f"""---
type: "topic"
tag: "tools"
generated: true
generatedAt: "{GEN}"
memories: 2
---

# tools

- [Fast builds](memories/{B}.md)
- [Use uv for envs](memories/{A}.md) (pinned) · python
"""


def build():
    return generate(fold(RECORDS).memories.values(), RECORDS, title="Memory: project",
                    generated_at=GEN)


def test_page_set_sorted_and_tombstone_absent():
    pages = build()
    assert list(pages) == ["entities/python.md", "index.md", "log.md", f"memories/{A}.md",
                           f"memories/{B}.md", "topics/ci.md", "topics/tools.md"]


def test_pages_match_the_hand_written_ones():
    pages = build()
    assert pages["index.md"].decode() == INDEX
    assert pages["log.md"].decode() == LOG
    assert pages[f"memories/{B}.md"].decode() == PAGE_B
    assert pages[f"memories/{A}.md"].decode() == PAGE_A
    assert pages["entities/python.md"].decode() == ENTITY
    assert pages["topics/tools.md"].decode() == TOPIC_TOOLS


def test_slug_rules():
    assert slug("Entity:Foo Bar!") == "foo-bar"
    assert slug("topic:--x--") == "x"
    assert slug("!!!") == "untitled"
    assert slug("a" * 100) == "a" * 80


def test_colliding_names_get_distinct_stable_paths():
    names = ["C++", "C", "Ünïcode", "unicode", "", "!!!"]
    first = page_slugs(names)
    assert page_slugs(list(reversed(names))) == first
    assert len(set(first.values())) == len(names)
    assert first["C"] == "c"
    assert first["C++"].startswith("c-") and len(first["C++"]) == 10
    assert first["unicode"] == "unicode"
    assert first["Ünïcode"] == "n-code"
    assert first[""].startswith("untitled-") and first["!!!"].startswith("untitled-")
    assert first[""] != first["!!!"]


R = "01JZ0000000000000000000004"
N = "01JZ0000000000000000000005"


def test_reflection_review_schema_and_empty_summary():
    records = [
        rec(N, N, "create", 1, content="Line one\nline two", summary="", subject="entity:Api",
            needsReview=True, dataSchema="v1", data={"a": [1, 2]}, confidence=0.25),
        rec(R, R, "create", 2, content="  Api is stable  ", type="reflective",
            subject="entity:Api"),
    ]
    pages = generate(fold(records).memories.values(), records, title="T", generated_at=GEN)
    assert pages["entities/api.md"].decode() == f"""---
type: "entity"
subject: "entity:Api"
generated: true
generatedAt: "{GEN}"
memories: 2
---

# entity:Api

## Reflection

Api is stable

## Memories

- [](memories/{N}.md) · entity:Api
"""
    assert pages[f"memories/{N}.md"].decode() == f"""---
type: "memory"
memoryId: "{N}"
memoryType: "semantic"
level: "personal"
namespace: "repo"
subject: "entity:Api"
author: "ann"
tags: []
importance: 0.5
confidence: 0.25
needsReview: true
createdAt: "2026-09-01T10:00:00.000Z"
updatedAt: "2026-09-01T10:00:00.000Z"
versions: 1
dataSchema: "v1"
---

# 

Line one
line two

```json
{{
  "a": [
    1,
    2
  ]
}}
```
"""
    log = pages["log.md"].decode()
    assert log.endswith("## [2026-09-01] create |  (ann)\n\n## [2026-09-02] create |   Api is stable   (ann)\n")
