"""ynm's cache lives apart from the reference implementation's index files
(``<repo>/.ynm/index/project.sqlite``, ``$YNM_HOME/index/<mountId>.sqlite``: reference/storage.md
§6, algorithms.md §7.2), so running either one against a clone never breaks the other's.

The fixture files hold the reference's index tables as reference/storage.md §6 lists them."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

from .conftest import make_record

# The reference's SqliteIndex tables (reference/storage.md §6), with one indexed memory.
REFERENCE_DDL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE revisions (shard TEXT PRIMARY KEY, revision TEXT NOT NULL);
CREATE TABLE memories (
  memoryId TEXT PRIMARY KEY, mount TEXT NOT NULL, type TEXT NOT NULL, level TEXT NOT NULL,
  namespace TEXT NOT NULL, subject TEXT, tags TEXT NOT NULL, dataKeys TEXT NOT NULL,
  importance REAL NOT NULL, confidence REAL NOT NULL, pinned INTEGER NOT NULL,
  needsReview INTEGER NOT NULL, tombstoned INTEGER NOT NULL, createdAt TEXT NOT NULL,
  updatedAt TEXT NOT NULL, versions INTEGER NOT NULL, summary TEXT NOT NULL,
  content TEXT NOT NULL, state TEXT NOT NULL
);
CREATE INDEX memories_namespace ON memories(namespace);
CREATE INDEX memories_updated ON memories(updatedAt);
CREATE VIRTUAL TABLE fts USING fts5(memoryId UNINDEXED, summary, content, subject, tags,
  tokenize = 'porter unicode61');
"""
REF_ID = "01KAAAAAAAAAAAAAAAAAAAAAAA"


def _reference_index(path: Path, mount: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript(REFERENCE_DDL)
    conn.execute("INSERT INTO meta VALUES ('version', '1')")
    conn.execute("INSERT INTO revisions VALUES ('distributed/common/semantic/2026-01', 'abc')")
    conn.execute(
        "INSERT INTO memories VALUES (?, ?, 'semantic', 'distributed', 'common', NULL, '[]', "
        "'[]', 0.5, 1, 0, 0, 0, '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', 1, "
        "'reference summary', 'written by the reference', '{}')", (REF_ID, mount))
    conn.execute("INSERT INTO fts(rowid, memoryId, summary, content, subject, tags) VALUES "
                 "(1, ?, 'reference summary', 'written by the reference', '', '')", (REF_ID,))
    conn.commit()
    conn.close()
    # An old time, so any write by ynm would move it.
    os.utime(path, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))


def _snapshot(path: Path) -> tuple[bytes, int]:
    return path.read_bytes(), path.stat().st_mtime_ns


def _reference_reads(path: Path) -> list[tuple[str, str]]:
    """What the reference would read back: its memories and a full-text hit."""
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        rows = conn.execute("SELECT memoryId, summary FROM memories").fetchall()
        hits = conn.execute("SELECT memoryId FROM fts WHERE fts MATCH 'reference'").fetchall()
    finally:
        conn.close()
    assert hits == [(REF_ID,)]
    return rows


def test_ynm_never_opens_the_reference_index(project, cli_run, run_json, load, ynm_home):
    ref_project = project / ".ynm" / "index" / "project.sqlite"
    ref_personal = ynm_home / "index" / "personal.sqlite"
    _reference_index(ref_project, "project")
    _reference_index(ref_personal, "personal")
    before = {p: _snapshot(p) for p in (ref_project, ref_personal)}

    a = make_record(content="ledger deploys on friday", summary="ledger deploys")
    b = make_record(level="distributed", namespace="common", content="ledger freeze in june",
                    summary="ledger freeze")
    load(a, b)
    assert sorted(h["memoryId"] for h in run_json("recall", "ledger")) == sorted([a["id"], b["id"]])
    status = run_json("status")
    assert {e["mount"]: e["indexed"] for e in status["index"]} == {"personal": 1, "project": 1}
    assert run_json("reindex") == {"personal": 1, "project": 1}

    for path, snap in before.items():
        assert _snapshot(path) == snap, path
        assert not Path(f"{path}-wal").exists() and not Path(f"{path}-journal").exists()
    assert (project / ".ynm" / "index" / "ynm-cache" / "project.sqlite").is_file()
    assert (ynm_home / "index" / "ynm-cache" / "personal.sqlite").is_file()


def test_alternating_use_keeps_both_working(project, cli_run, run_json, load, ynm_home):
    ref_project = project / ".ynm" / "index" / "project.sqlite"
    load(make_record(level="distributed", namespace="common", content="first by ynm",
                     summary="first by ynm"))
    assert len(run_json("recall", "first")) == 1
    # The reference then builds (or rebuilds) its own index in the same clone ...
    _reference_index(ref_project, "project")
    snap = _snapshot(ref_project)
    # ... ynm keeps working from its own cache, untouched by that file ...
    second = make_record(level="distributed", namespace="common", content="second by ynm",
                         summary="second by ynm")
    load(second)
    assert [h["memoryId"] for h in run_json("recall", "second")] == [second["id"]]
    status = run_json("status")
    assert next(e for e in status["index"] if e["mount"] == "project") == {
        "mount": "project", "fresh": True, "indexed": 2}
    # ... and the reference's index still reads as the reference left it.
    assert _snapshot(ref_project) == snap
    assert _reference_reads(ref_project) == [(REF_ID, "reference summary")]
    # The reference writes again; ynm is unaffected.
    conn = sqlite3.connect(ref_project)
    conn.execute("UPDATE memories SET summary = 'changed by the reference'")
    conn.commit()
    conn.close()
    assert len(run_json("recall", "ynm")) == 2
    assert _reference_reads(ref_project) == [(REF_ID, "changed by the reference")]


def test_a_legacy_ynm_cache_at_the_reference_path_is_left_alone(project, cli_run, run_json,
                                                               load, ynm_home):
    """A cache an older ynm wrote at ``project.sqlite`` is not opened (it may be the reference's
    by now): ynm builds its own and leaves that file as it is."""
    from ynm.index.schema import connect

    legacy = project / ".ynm" / "index" / "project.sqlite"
    connect(legacy).close()
    os.utime(legacy, ns=(1_700_000_000_000_000_000, 1_700_000_000_000_000_000))
    snap = _snapshot(legacy)
    load(make_record(level="distributed", namespace="common"))
    assert json.loads(cli_run("status", "--json").stdout)["index"][1]["indexed"] == 1
    assert _snapshot(legacy) == snap
