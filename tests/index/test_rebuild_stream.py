"""A rebuild folds shard by shard, keeping only one shard's records in memory, and refolds
from the records table only the memories spread over several shards. Its result must equal a
fold of the whole store at once (ynm.model.fold.fold over every record, shards in ref order),
row for row, rowid for rowid, with the same full-text ranking (DESIGN.md "The cache")."""

from __future__ import annotations

import json
from functools import partialmethod

import pytest

from ynm.index import cache as cache_module
from ynm.index.cache import (
    _MEMORY_COLUMNS,
    MountCache,
    _Folded,
    _memory_row,
    indexed_content,
    memory_summary,
)
from ynm.index.schema import fts_values, instant, memory_of, pack, state_sql
from ynm.model.fold import fold
from ynm.model.jsonl import parse_jsonl
from ynm.model.shards import ShardKey

from .conftest import line, rec, ulid

JAN = ShardKey("distributed", "common", "semantic", "2026-01")
FEB = ShardKey("distributed", "common", "semantic", "2026-02")
EPI = ShardKey("distributed", "common", "episodic", "2026-01")
TEAM = ShardKey("distributed", "team", "semantic", "2026-01")
WORDS = ["ocelot", "pangolin", "quokka", "raccoon", "serval", "tapir", "urial", "vicuna"]


def _t(day: int, second: int) -> str:
    return f"2026-01-{day:02d}T00:00:{second:02d}.000Z"


def _corpus() -> dict[ShardKey, list[str]]:
    """Lines by shard: plain creates, supersedes into another shard (type change), annotates
    and tombstones in other shards, records before their base, orphans (one spread over two
    shards), a record id repeated in two shards (once under another memory id), bad lines,
    and texts sharing words so that BM25 ranks and ties matter."""
    shards: dict[ShardKey, list[str]] = {k: [] for k in (JAN, FEB, EPI, TEAM)}
    keys = list(shards)
    for i in range(40):
        word = WORDS[i % len(WORDS)]
        create = rec(content=f"{word} {WORDS[(i * 3) % len(WORDS)]} note {i}",
                     summary=f"{word} summary", tags=[word], recordedAt=_t(5, i % 60))
        shards[keys[i % 4]].append(line(create))
        mid = create["id"]
        if i % 5 == 0:  # supersede into the episodic shard
            shards[EPI].append(line(rec(id=ulid(), memoryId=mid, op="supersede", type="episodic",
                                        content=f"{word} superseded {i}", summary="changed",
                                        links=[{"rel": "supersedes", "to": mid}],
                                        recordedAt=_t(6, i % 60))))
        if i % 3 == 0:  # annotate from February, tags and importance
            shards[FEB].append(line(rec(id=ulid(), memoryId=mid, op="annotate", content=None,
                                        summary=None, tags=["later", word], importance=0.9,
                                        recordedAt=_t(7, i % 60))))
        if i % 7 == 0:  # tombstone in the team shard
            shards[TEAM].append(line(rec(id=ulid(), memoryId=mid, op="tombstone", content=None,
                                         summary=None, reason="wrong", recordedAt=_t(8, i))))
        if i % 4 == 1:  # an annotate recorded before its base, in another shard
            shards[keys[(i + 1) % 4]].append(line(rec(
                id=ulid(), memoryId=mid, op="annotate", content=None, summary=None,
                tags=["early"], subject="entity:early", recordedAt=_t(1, i % 60))))
    orphan = ulid()
    shards[JAN].append(line(rec(id=ulid(), memoryId=orphan, op="annotate", content=None,
                                summary=None, tags=["lost"], recordedAt=_t(9, 1))))
    shards[FEB].append(line(rec(id=ulid(), memoryId=orphan, op="tombstone", content=None,
                                summary=None, recordedAt=_t(9, 2))))
    shards[TEAM].append(line(rec(id=ulid(), memoryId=ulid(), op="annotate", content=None,
                                 summary=None, recordedAt=_t(9, 3))))
    wombat, elsewhere = rec(content="wombat here"), rec(content="wombat elsewhere")
    shards[JAN].append(line(wombat))
    shards[TEAM].append(line(elsewhere))
    dup = rec(id=ulid(), memoryId=wombat["id"], op="annotate", content=None, summary=None,
              tags=["twice"], recordedAt=_t(10, 0))
    shards[JAN].append(line(dup))
    shards[FEB].append(line(dup))  # the same record again: read once
    # the same id under another memory: the first read (JAN) wins, so it annotates nothing
    shards[TEAM].append(line(dict(dup, memoryId=elsewhere["id"], tags=["stolen"])))
    shards[EPI].append("{not json")
    shards[FEB].append(line(rec(op="explode")))
    return shards


@pytest.fixture
def store(log):
    for key, lines in _corpus().items():
        log.append({key: ("".join(x + "\n" for x in lines).encode(), len(lines))})
    return log


def _whole_store_fold(log, path) -> MountCache:
    """The expected cache: every record of every shard (ref order) folded at once, memories
    inserted with rowids 1, 2, ... in the fold's order, as the rebuild did before it
    streamed, each pointing at its current record by that record's place in the read order."""
    records, lines, refs, seen = [], [], [], {}
    for ref, tip in sorted(log.tips().items()):
        parsed = parse_jsonl(log.read_blob(log.note_blob_id(tip.commit)), seen=seen)
        records.extend(parsed.records)
        lines.extend(x.strip() for x in parsed.lines)
        refs.extend(ref for _ in parsed.records)
    expected = MountCache(path, "project")
    # records rowids 1, 2, ... in read order, a record id read once (the first shard's)
    # shards numbered 1, 2, ... in ref order
    stored, shards = {}, {ref: i for i, ref in enumerate(sorted(log.tips()), 1)}
    expected.conn.executemany("INSERT INTO shard_refs(shard, ref) VALUES (?, ?)",
                              [(i, ref) for ref, i in shards.items()])
    for i, (r, text, ref) in enumerate(zip(records, lines, refs), 1):
        stored[r.id] = (i, text)
        expected.conn.execute("INSERT INTO records(rowid, id, memory_of, shard, recorded_ms, op, "
                              "line) VALUES (?, ?, ?, ?, ?, ?, ?)",
                              (i, r.id, memory_of(r.id, r.memory_id), shards[ref],
                               instant(r.recorded_at), r.op, pack(text)))
    for i, m in enumerate(fold(records).memories.values(), 1):
        summary, content = memory_summary(m), indexed_content(m)
        row = _memory_row(m, *stored[m.current.id], summary, content)
        expected.conn.execute(f"INSERT INTO memories(rowid, {', '.join(_MEMORY_COLUMNS)}) "
                              f"VALUES ({', '.join('?' * 21)})", (i, *row))
        expected.conn.execute(
            "INSERT INTO fts(rowid, summary, content, subject, tags) VALUES (?, ?, ?, ?, ?)",
            (i, *fts_values(summary, content, m.subject, m.tags)))
    return expected


def _ranked(cache: MountCache, match: str) -> list[tuple[int, float]]:
    return cache.conn.execute(
        "SELECT rowid, bm25(fts, 4.0, 2.0, 1.0, 1.0) FROM fts WHERE fts MATCH ? "
        "ORDER BY rank, rowid", (match,)).fetchall()


@pytest.mark.parametrize(("chunk", "workers", "part"),
                         [(5000, 0, None), (3, 0, 300), (5000, 2, 300), (3, 1, None)])
def test_rebuild_equals_a_fold_of_the_whole_store(store, cache, tmp_path, monkeypatch, chunk,
                                                  workers, part):
    """Inline, and with shards read in worker processes and the full-text index built in
    one (the corpus has records of one id in two shards, which a worker cannot know of);
    with each blob read whole, and in parts of ~300 bytes (two or three records), so that
    a memory's records lie in several parts of one shard."""
    monkeypatch.setattr(_Folded, "__init__", partialmethod(_Folded.__init__, chunk=chunk))
    if part is not None:
        monkeypatch.setattr(cache_module, "PART_BYTES", part)
    cache.workers = workers
    report = cache.rebuild(store)
    expected = _whole_store_fold(store, tmp_path / "expected.sqlite")
    got_rows = cache.conn.execute("SELECT * FROM memories ORDER BY rowid").fetchall()
    want_rows = expected.conn.execute("SELECT * FROM memories ORDER BY rowid").fetchall()
    assert len(want_rows) == 42  # 40 memories and two wombats; none for the orphans
    assert got_rows == want_rows
    for table in ("records", "shard_refs"):
        rows = f"SELECT rowid, * FROM {table} ORDER BY rowid"
        assert cache.conn.execute(rows).fetchall() == expected.conn.execute(rows).fetchall()
    assert report.memories_folded == 42
    for match in WORDS + ["wombat", "later OR early", "superseded", "note"]:
        assert _ranked(cache, match) == _ranked(expected, match), match
    # 40 creates, 8 supersedes, 14 annotates, 6 tombstones, 10 early annotates, 3 orphan
    # records, two wombats and their annotate once; two bad lines
    assert cache.counts() == {"shards": 4, "records": 84, "memories": 42, "orphans": 2,
                              "badLines": 2}
    ids = {r[0] for r in cache.conn.execute("SELECT memory_id FROM memories")}
    spread = cache.conn.execute(
        "SELECT count(*) FROM (SELECT memory_id FROM records GROUP BY memory_id "
        "HAVING count(DISTINCT shard) > 1)").fetchone()[0]
    assert spread > 10 and len(ids) == 42  # the corpus does spread memories over shards
    tags = {json.loads(r[0])["current"]["content"]: json.loads(r[0])["tags"] for r in
            cache.conn.execute(f"SELECT {state_sql()} FROM memories")}
    assert tags["wombat here"] == ["twice"] and tags["wombat elsewhere"] == []
    assert not cache.conn.execute(
        "SELECT name FROM sqlite_temp_master WHERE name IN ('folded', 'spread', 'linked')"
    ).fetchall()
    assert _staging_gone(cache)
    expected.close()


def _staging_gone(cache: MountCache) -> bool:
    """No staging database attached to the cache's connection, none left beside the file."""
    attached = [row[1] for row in cache.conn.execute("PRAGMA database_list")]
    return set(attached) <= {"main", "temp"} and not list(cache.path.parent.glob("ynm-rebuild-*"))


def test_workers_and_inline_give_the_same_cache_file_contents(store, tmp_path):
    """Every table a rebuild fills, the full-text index's own tables included, holds the same
    rows whether the shards and the index were done here or in worker processes."""
    def contents(workers: int) -> dict[str, list[tuple]]:
        cache = MountCache(tmp_path / f"w{workers}.sqlite", "project")
        cache.workers = workers
        cache.rebuild(store)
        tables = ("records", "memories", "problems", "shards", "shard_refs", "fts_data",
                  "fts_idx", "fts_docsize", "fts_config")
        got = {t: cache.conn.execute(f"SELECT * FROM {t} ORDER BY 1, 2").fetchall()
               for t in tables}
        assert _staging_gone(cache)
        cache.close()
        return got

    inline, workers = contents(0), contents(2)
    assert len(inline["memories"]) == 42 and len(inline["problems"]) == 2
    assert inline == workers


def test_a_blob_read_in_parts_gives_the_same_cache(store, tmp_path, monkeypatch):
    """Parts of one line each: every memory of two records or more lies in several parts
    (the rows folded from one part are left out and the memory folded again from all its
    records), bad lines keep their numbers, a record id repeated in two parts is read once."""
    def contents(name: str) -> dict[str, list[tuple]]:
        cache = MountCache(tmp_path / f"{name}.sqlite", "project")
        cache.rebuild(store)
        got = {t: cache.conn.execute(f"SELECT * FROM {t} ORDER BY 1, 2").fetchall()
               for t in ("records", "memories", "problems", "fts_data", "fts_idx")}
        cache.close()
        return got

    whole = contents("whole")
    monkeypatch.setattr(cache_module, "PART_BYTES", 1)
    assert contents("lines") == whole
    assert [row[1] for row in whole["problems"]] != []


def test_parts_of_a_blob_end_at_newlines_and_number_their_lines():
    data = b"a\nbb\n\nccc\nd"
    assert list(cache_module._parts(data, 1)) == [(b"a\n", 1), (b"bb\n", 2), (b"\n", 3),
                                                  (b"ccc\n", 4), (b"d", 5)]
    assert list(cache_module._parts(data, 4)) == [(b"a\nbb\n", 1), (b"\nccc\n", 3),
                                                  (b"d", 5)]
    assert list(cache_module._parts(data, 100)) == [(data, 1)]
    assert list(cache_module._parts(b"", 4)) == []


def test_rebuild_after_a_refresh_gives_the_same_rows(store, cache, tmp_path):
    cache.refresh(store)  # a cold cache is rebuilt too
    first = cache.conn.execute("SELECT * FROM memories ORDER BY rowid").fetchall()
    cache.rebuild(store)
    assert cache.conn.execute("SELECT * FROM memories ORDER BY rowid").fetchall() == first



def _indexes(cache: MountCache) -> list[tuple[str, str]]:
    return cache.conn.execute("SELECT name, sql FROM sqlite_master WHERE type = 'index' "
                              "AND sql IS NOT NULL ORDER BY name").fetchall()


def test_rebuild_creates_its_indexes_again_and_a_failed_one_keeps_them(store, cache, tmp_path,
                                                                       monkeypatch):
    """The rebuild drops the records and memories indexes and creates them after its bulk
    insert: the cache ends with the indexes a new cache has, and the query plans use them;
    a rebuild that fails half way rolls back to the indexes and rows it started from."""
    fresh = MountCache(tmp_path / "fresh.sqlite", "project")
    want = _indexes(fresh)
    fresh.close()
    assert [name for name, _ in want] == ["memories_expires", "memories_live_updated",
                                          "memories_memory_id", "memories_updated",
                                          "problems_ref", "records_memory", "records_shard"]
    cache.rebuild(store)
    assert _indexes(cache) == want
    plan = " ".join(str(r) for r in cache.conn.execute(
        "EXPLAIN QUERY PLAN SELECT id FROM records WHERE memory_id = 'x'"))
    assert "records_memory" in plan
    rows = cache.conn.execute("SELECT * FROM memories ORDER BY rowid").fetchall()

    def fail(self):
        raise RuntimeError("interrupted")

    monkeypatch.setattr(_Folded, "insert", fail)
    with pytest.raises(RuntimeError, match="interrupted"):
        cache.rebuild(store)
    assert _indexes(cache) == want
    assert cache.conn.execute("SELECT * FROM memories ORDER BY rowid").fetchall() == rows
    assert _staging_gone(cache)


def test_a_rebuild_waits_for_another_writer_and_sees_its_rows(store, cache, cache_path):
    """The rebuild's transaction begins deferred (its staging database is attached) and takes
    the write lock with its first statement: it waits for a writer that holds the lock, as
    BEGIN IMMEDIATE does, then rebuilds over what that writer committed."""
    import threading

    import sqlean

    cache.rebuild(store)
    other = sqlean.connect(cache_path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")
    other.execute("INSERT INTO meta(key, value) VALUES ('other', 'was here')")
    timer = threading.Timer(0.5, lambda: other.execute("COMMIT"))
    timer.start()
    try:
        report = cache.rebuild(store)
    finally:
        timer.join()
        other.close()
    assert report.memories_folded == 42
    assert cache.conn.execute("SELECT value FROM meta WHERE key = 'other'").fetchone() == (
        "was here",)


def test_a_cold_refresh_rebuilt_meanwhile_by_another_process_only_refreshes(store, cache,
                                                                             cache_path):
    """A refresh that finds the cache never built rebuilds it; when another connection has
    built it by the time the write lock is held, the refresh reads only what changed."""
    assert cache.stale_reason(store) == "never built"
    other = MountCache(cache_path, "project")
    other.rebuild(store)
    other.close()
    real = MountCache._rebuild_in_tx

    def no_second_rebuild(*args, **kwargs):
        raise AssertionError("rebuilt again")

    MountCache._rebuild_in_tx = no_second_rebuild
    try:
        # the cache's own connection read "never built" before; force the stale path
        report = cache._rebuild(store, None, refresh_if_built=True)
    finally:
        MountCache._rebuild_in_tx = real
    assert not report.rebuilt and cache.counts()["memories"] == 42


def _staging(folder, name: str, *, lock: bool = True, age_s: float = 0):
    """A staging folder as a rebuild leaves it (a lock file and a staged database)."""
    import os
    import time

    path = folder / name
    path.mkdir()
    (path / "folded.sqlite").write_bytes(b"staged")
    if lock:
        (path / "lock").write_bytes(b"")
    if age_s:
        then = time.time() - age_s
        os.utime(path, (then, then))
    return path


def test_a_rebuild_removes_staging_left_by_a_killed_rebuild_only(store, cache, cache_path):
    """A rebuild killed outright leaves its staging folder beside the cache; the next rebuild
    deletes it, and keeps one whose lock another process holds (a rebuild running, here or in
    another PID namespace), one being created (no lock file yet) and anything not named like
    a staging folder."""
    import subprocess
    import sys

    folder = cache_path.parent
    dead = _staging(folder, "ynm-rebuild-dead")
    live = _staging(folder, "ynm-rebuild-live")
    young = _staging(folder, "ynm-rebuild-young", lock=False)
    old = _staging(folder, "ynm-rebuild-old", lock=False, age_s=3600)
    other = _staging(folder, "not-ynm-rebuild")
    hold = ("import fcntl, sys, time\n"
            f"f = open({str(live / 'lock')!r}, 'rb'); fcntl.flock(f, fcntl.LOCK_EX)\n"
            "print('held', flush=True); time.sleep(60)")
    holder = subprocess.Popen([sys.executable, "-c", hold], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "held\n"
        cache.rebuild(store)
    finally:
        holder.kill()
        holder.wait()
    assert not dead.exists() and not old.exists()
    assert live.exists() and young.exists() and other.exists()
    cache.rebuild(store)  # its holder is gone now
    assert not live.exists() and young.exists()


def test_opening_a_cache_removes_staging_left_by_a_killed_rebuild(tmp_path):
    """No rebuild needs to come: any command that opens the cache deletes a dead rebuild's
    staging folder (ynm reindex stopped by SIGTERM or SIGKILL leaves one)."""
    stale = _staging(tmp_path, "ynm-rebuild-abc")
    link = tmp_path / "ynm-rebuild-link"
    link.symlink_to(_staging(tmp_path, "elsewhere"))
    MountCache(tmp_path / "project.sqlite", "project").close()
    assert not stale.exists()
    assert link.is_symlink() and (tmp_path / "elsewhere" / "folded.sqlite").exists()


def test_a_running_rebuild_holds_its_staging_folder(store, cache, cache_path, monkeypatch):
    """While a rebuild runs, its folder's lock is held: a command opening the cache then
    (here: in the middle of the rebuild) leaves it alone, and the rebuild ends right."""
    seen = []
    real = _Folded.finish

    def finish_and_open(self):
        MountCache(cache_path.parent / "other.sqlite", "project").close()  # cleans the folder
        seen.extend(p.name for p in cache_path.parent.glob("ynm-rebuild-*"))
        real(self)

    monkeypatch.setattr(_Folded, "finish", finish_and_open)
    report = cache.rebuild(store)
    assert len(seen) == 1 and report.memories_folded == 42
    assert _staging_gone(cache)
