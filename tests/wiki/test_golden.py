"""A fixed store of 24 memories (pinned, tombstoned, superseded several times, annotated, with
subjects, tags, data, links, reflections, a review flag and dream marks) against the whole
page files in tests/wiki/golden/, checked by hand against reference algorithms.md §5.

After a deliberate change to the pages, ``UPDATE_GOLDEN=1 pytest tests/wiki/test_golden.py``
rewrites the folder; read the diff against §5 before committing it."""

from __future__ import annotations

import os
from pathlib import Path

from ynm.model.fold import fold
from ynm.model.jsonl import parse_obj
from ynm.wiki import generate

GOLDEN = Path(__file__).parent / "golden"
GEN = "2026-10-01T00:00:00.000Z"


def mid(n: int) -> str:
    return f"01K0000000000000000000{n:04d}"


def rid(n: int) -> str:
    return f"01K0000000000000000001{n:04d}"


def rec(m: int, op: str, *, level="distributed", namespace="team/platform", type="semantic",
        actor="ann", **kw):
    """One record spec; :func:`store` stamps ids and times in list order."""
    return (m, op, dict(level=level, namespace=namespace, type=type, actor=actor, **kw))


def stamp(t: int, spec) -> object:
    m, op, kw = spec
    kw = dict(kw)
    level, namespace, type, actor = (kw.pop(k) for k in ("level", "namespace", "type", "actor"))
    obj = {"v": 1, "id": mid(m) if op == "create" else rid(t), "memoryId": mid(m), "op": op,
           "type": type, "level": level,
           "namespace": namespace,
           "recordedAt": f"2026-09-{1 + t // 24:02d}T{t % 24:02d}:00:00.000Z",
           "provenance": {"actor": actor}}
    obj.update(kw)
    if op == "supersede":  # a supersede names the memory it replaces (seed record rules)
        obj["links"] = [{"rel": "supersedes", "to": mid(m)}, *obj.get("links", [])]
    return parse_obj(obj)


def store():
    r = []
    # plain facts in one group, some with subjects and tags
    r.append(rec(1, "create", content="Deploys go out on Tuesdays", subject="deploys",
                 tags=["deploy", "release"], summary="Deploy day"))
    r.append(rec(2, "create", content="Staging mirrors production nightly\nat 02:00 UTC",
                 subject="staging", tags=["deploy"]))
    r.append(rec(3, "create", content="Use uv for Python environments", subject="python",
                 tags=["tools"], pinned=True, importance=0.9, actor="bob"))
    r.append(rec(4, "create", content="The ledger service owns invoices", subject="ledger",
                 tags=["architecture"], data={"owner": "payments", "since": 2024}))
    # superseded twice, with links and data
    r.append(rec(5, "create", content="Builds take ten minutes", summary="Slow builds",
                 tags=["ci"], data={"minutes": 10}))
    r.append(rec(5, "supersede", content="Builds take five minutes", summary="Faster builds",
                 tags=["ci"], data={"minutes": 5}))
    r.append(rec(5, "supersede", content="Builds take two minutes", summary="Fast builds",
                 tags=["ci", "perf"], data={"minutes": 2, "cache": True},
                 links=[{"rel": "about", "to": mid(4)}], actor="bob"))
    # tombstoned: absent from pages, present in the log
    r.append(rec(6, "create", content="Deploys go out on Fridays", subject="deploys",
                 tags=["deploy"]))
    r.append(rec(6, "tombstone", reason="contradicted by the release calendar"))
    # a purged-looking tombstone without reason: the log falls back to the memory id
    r.append(rec(7, "create", content="Temporary password is hunter2", tags=["secret"]))
    r.append(rec(7, "tombstone"))
    # personal level, another namespace, procedural and episodic types
    r.append(rec(8, "create", level="personal", namespace="repo", type="procedural",
                 content="Run `make test` before pushing", tags=["workflow"], actor="cat"))
    r.append(rec(9, "create", level="personal", namespace="repo", type="episodic",
                 content="Fixed the flaky login test on 2026-09-02", subject="login tests",
                 actor="cat"))
    r.append(rec(10, "create", level="distributed", namespace="repo", type="semantic",
                 content="The API is versioned under /v2", subject="API", tags=["api"],
                 importance=0.7, confidence=0.6))
    # subjects whose plain slugs collide: C, c and C++ share nothing but "c"
    r.append(rec(11, "create", content="C code lives in native/", subject="C", tags=["lang"]))
    r.append(rec(12, "create", content="C++ code is built with CMake", subject="C++",
                 tags=["lang"]))
    r.append(rec(13, "create", content="Lower-case c is our CLI prefix", subject="c",
                 tags=["Lang"]))
    # a subject and a tag whose slug is empty
    r.append(rec(14, "create", content="Emoji in commit titles are fine", subject="🎉",
                 tags=["✨"]))
    # annotated: tags and links added later, needs review
    r.append(rec(15, "create", content="Payments retries up to 3 times", subject="ledger",
                 tags=["payments"]))
    r.append(rec(15, "annotate", tags=["payments", "retries"],
                 links=[{"rel": "contradicts", "to": mid(16)}], needsReview=True,
                 reason="conflicts with the on-call notes"))
    r.append(rec(16, "create", content="Payments retries up to 5 times", subject="ledger",
                 tags=["payments"], links=[{"rel": "contradicts", "to": mid(15)}]))
    # reflective memories about a subject (entity page's Reflection section)
    r.append(rec(17, "create", type="reflective", content="  The ledger is the riskiest "
                 "service: two retry policies disagree.  ", subject="ledger", tags=["risk"],
                 actor="dream"))
    r.append(rec(18, "create", type="reflective", content="Ledger ownership is stable.",
                 subject="ledger", actor="dream"))
    # a dream mark: an annotate that only records when a memory was last dreamed over
    r.append(rec(4, "annotate", data={"owner": "payments", "since": 2024},
                 actor="dream"))
    # an empty summary stays empty; a summary with spaces is kept as written
    r.append(rec(19, "create", content="Summary left empty on purpose", summary="",
                 tags=["edge"]))
    r.append(rec(20, "create", content="Markdown *inside* content\n\n- a list\n- [link](x.md)",
                 summary="Markdown body", tags=["edge"]))
    # data with a schema, unicode and nested values
    r.append(rec(21, "create", content="Feature flags for the ledger", subject="ledger",
                 tags=["flags"], data={"flags": {"fast-path": True, "beta": ["eu", "us"]},
                                       "note": "café"}, dataSchema="flags/v1"))
    # pinned and superseded: pinned survives the supersede
    r.append(rec(22, "create", content="On-call rotation is weekly", pinned=True,
                 tags=["oncall"]))
    r.append(rec(22, "supersede", content="On-call rotation is every two weeks",
                 tags=["oncall"], actor="bob"))
    # more plain memories so the store holds over twenty live ones
    for n, text in ((23, "Code review needs one approval"), (24, "Release notes live in docs/"),
                    (25, "Logs are kept for 30 days"), (26, "Metrics go to Prometheus")):
        r.append(rec(n, "create", content=text, tags=["process"] if n < 25 else ["ops"]))
    return [stamp(t, spec) for t, spec in enumerate(r)]


def build() -> dict[str, bytes]:
    records = store()
    return generate(fold(records).memories.values(), records, title="Memory: project",
                    generated_at=GEN)


def test_store_has_what_the_pages_must_show():
    records = store()
    folded = fold(records).memories.values()
    live = [m for m in folded if not m.tombstoned]
    assert len(live) >= 20
    assert any(m.pinned for m in live) and any(m.versions >= 3 for m in live)
    assert any(m.links for m in live) and any(m.current.data for m in live)
    assert len(folded) - len(live) == 2


def test_pages_equal_the_golden_files():
    pages = build()
    if os.environ.get("UPDATE_GOLDEN") == "1":
        for old in GOLDEN.rglob("*.md"):
            old.unlink()
        for path, data in pages.items():
            (GOLDEN / path).parent.mkdir(parents=True, exist_ok=True)
            (GOLDEN / path).write_bytes(data)
    golden = {p.relative_to(GOLDEN).as_posix(): p.read_bytes() for p in GOLDEN.rglob("*.md")}
    assert sorted(pages) == sorted(golden)
    for path, data in pages.items():
        assert data == golden[path], path


def test_tombstoned_memories_are_on_no_page_but_in_the_log():
    pages = build()
    for gone in (mid(6), mid(7)):
        assert f"memories/{gone}.md" not in pages
        for path, data in pages.items():
            if path != "log.md":
                assert gone.encode() not in data, path
    log = pages["log.md"].decode()
    assert log.count("\n## [") == len(store())
    assert f"tombstone | {mid(7)} (ann)" in log
    assert "Deploys go out on Fridays" not in pages["index.md"].decode()
