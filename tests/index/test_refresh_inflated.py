"""A refresh after another writer's append reads only the appended part of the new loose file
when it extends the deflated bytes of the blob the cache last read (ynm.store.objects), and
reads the blob whole otherwise; either way the cache ends as a full reindex builds it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.git import git
from ynm.index import schema
from ynm.index.cache import MountCache, RefreshReport
from ynm.model.jsonl import dumps_record
from ynm.store.gitnotes import GitNotesLog
from ynm.store.sync import sync_log

from .conftest import KEY, line, rec, record


def foreign_append(repo: Path, anchor: str, *objs: dict[str, Any]) -> None:
    """Another process's ynm append (a log of its own, so nothing it holds in memory)."""
    other = GitNotesLog(repo, level="distributed", anchor=anchor)
    payload = "".join(dumps_record(record(o)) + "\n" for o in objs).encode()
    other.append({KEY: (payload, len(objs))})


def state(cache: MountCache) -> dict[str, Any]:
    """Every row a refresh keeps, in a comparable form (lines unpacked, memories by id)."""
    c = cache.conn
    return {
        "shards": c.execute("SELECT * FROM shards ORDER BY ref").fetchall(),
        "records": [(*r[:-1], schema.unpack(r[-1])) for r in c.execute(
            "SELECT r.id, r.memory_id, s.ref, r.recorded_at, r.op, r.line FROM records r "
            "JOIN shard_refs s USING (shard) ORDER BY r.id")],
        "problems": c.execute("SELECT * FROM problems ORDER BY ref, line").fetchall(),
        "memories": {m: cache.get_state(m) for (m,) in c.execute(
            "SELECT memory_id FROM memories")},
        "fts": c.execute("SELECT m.memory_id FROM fts JOIN memories AS m ON m.rowid = fts.rowid "
                         "WHERE fts MATCH 'zebra' ORDER BY m.memory_id").fetchall(),
    }


def reindexed(log: GitNotesLog, tmp_path: Path) -> dict[str, Any]:
    fresh = MountCache(tmp_path / "reindex.sqlite", "project")
    try:
        fresh.rebuild(log)
        return state(fresh)
    finally:
        fresh.close()


def mark_of(cache: MountCache) -> tuple[Any, ...]:
    return cache.conn.execute("SELECT deflated, deflated_crc, adler, length(window) FROM shards "
                              "WHERE ref = ?", (KEY.ref,)).fetchone()


def tail_read(report: RefreshReport) -> tuple[int, int, int]:
    return report.shards_tail, report.shards_inflated, report.shards_full


def test_an_append_by_another_ynm_process_is_inflated_alone(log, cache, git_repo, anchor,
                                                            tmp_path):
    first = [rec(content=f"alpha {i} " + "padding " * 40) for i in range(120)]  # > 32 KiB
    foreign_append(git_repo, anchor, *first)
    assert cache.refresh(log).rebuilt
    assert None not in mark_of(cache)  # the rebuild marked the loose blob
    b = rec(content="zebra crossing", summary="zebra")
    foreign_append(git_repo, anchor, b)
    report = cache.refresh(log)
    assert tail_read(report) == (1, 1, 0)
    assert report.records_added == 1 and report.memories_folded == 1
    assert state(cache) == reindexed(log, tmp_path)
    # two appends between reads: both pieces are inflated in one pass
    c, d = rec(content="zebra two"), rec(content="delta")
    foreign_append(git_repo, anchor, c)
    foreign_append(git_repo, anchor, d)
    report = cache.refresh(log)
    assert tail_read(report) == (1, 1, 0) and report.records_added == 2
    assert state(cache) == reindexed(log, tmp_path)


def test_own_appends_keep_the_mark_of_the_file_they_wrote(log, cache, append, git_repo, anchor,
                                                          tmp_path):
    append(rec(), own=False)
    cache.refresh(log)
    append(rec(content="own"))  # the cache follows without reading the blob
    assert None not in mark_of(cache)
    assert state(cache) == reindexed(log, tmp_path)
    foreign_append(git_repo, anchor, rec(content="zebra"))
    assert tail_read(cache.refresh(log)) == (1, 1, 0)
    append(rec(content="own again"))
    foreign_append(git_repo, anchor, rec(content="zebra again"))
    assert tail_read(cache.refresh(log)) == (1, 1, 0)
    assert state(cache) == reindexed(log, tmp_path)


def test_a_mark_that_does_not_fit_the_file_falls_back(log, cache, append, git_repo, anchor,
                                                      tmp_path):
    """An own append whose loose file was already there in git's layout: the mark the log
    gave does not fit it, so the next foreign append is read whole."""
    append(rec(), own=False)
    cache.refresh(log)
    b = rec(content="own")
    appended = append(b, own=False)
    blob = appended[0].blob_id
    path = log.common_dir / "objects" / blob[:2] / blob[2:]
    content = log.read_blob(blob)
    path.unlink()
    git(git_repo, "hash-object", "-w", "--stdin", input=content)
    cache.apply_append(log, appended, [record(b)])
    assert None not in mark_of(cache)
    foreign_append(git_repo, anchor, rec(content="zebra"))
    assert tail_read(cache.refresh(log)) == (1, 0, 0)
    assert state(cache) == reindexed(log, tmp_path)


def test_blobs_git_wrote_are_read_whole(log, cache, git_repo, anchor, tmp_path):
    """git notes append (git's own layout) and the same appended content written again by
    git hash-object: the tail comes from the whole blob, checked by its CRC."""
    foreign_append(git_repo, anchor, rec())
    cache.refresh(log)
    git(git_repo, "notes", f"--ref={KEY.ref}", "append", "-m", line(rec(content="zebra")),
        anchor)
    assert tail_read(cache.refresh(log)) == (1, 0, 0)
    assert mark_of(cache) == (None, None, None, None)
    assert state(cache) == reindexed(log, tmp_path)
    foreign_append(git_repo, anchor, rec(content="one"))  # marked on its whole read
    cache.refresh(log)
    assert None not in mark_of(cache)
    foreign_append(git_repo, anchor, rec(content="zebra two"))
    blob = log.note_blob_id(git(git_repo, "rev-parse", KEY.ref))
    path = log.common_dir / "objects" / blob[:2] / blob[2:]
    content = log.read_blob(blob)
    path.unlink()
    written = git(git_repo, "hash-object", "-w", "--stdin", input=content)
    assert written == blob and path.exists()
    assert tail_read(cache.refresh(log)) == (1, 0, 0)
    assert state(cache) == reindexed(log, tmp_path)


def test_a_packed_blob_or_one_deflated_whole_is_read_whole(log, cache, git_repo, anchor,
                                                           tmp_path):
    foreign_append(git_repo, anchor, rec())
    cache.refresh(log)
    foreign_append(git_repo, anchor, rec(content="zebra"))
    git(git_repo, "repack", "-adq")
    git(git_repo, "prune-packed")
    # the new blob is packed: no loose file to inflate from, and no mark after
    assert tail_read(cache.refresh(log)) == (1, 0, 0)
    assert mark_of(cache) == (None, None, None, None)
    foreign_append(git_repo, anchor, rec(content="one"))  # extends a packed blob: deflated whole
    assert tail_read(cache.refresh(log)) == (1, 0, 0)
    assert None not in mark_of(cache)
    # and now the old blob is packed, its loose-file mark still fits the new loose file
    git(git_repo, "repack", "-adq")
    git(git_repo, "prune-packed")
    foreign_append(git_repo, anchor, rec(content="zebra two"))  # deflated whole again
    assert tail_read(cache.refresh(log)) == (1, 0, 0)
    assert state(cache) == reindexed(log, tmp_path)


def test_an_appended_blob_under_a_commit_that_does_not_descend_is_read_whole(
        log, cache, git_repo, anchor, tmp_path):
    foreign_append(git_repo, anchor, rec())
    cache.refresh(log)
    foreign_append(git_repo, anchor, rec(content="zebra"))
    tip = git(git_repo, "rev-parse", KEY.ref)
    tree = git(git_repo, "rev-parse", f"{tip}^{{tree}}")
    orphan = git(git_repo, "commit-tree", tree, "-m", "rewritten")
    git(git_repo, "update-ref", KEY.ref, orphan)
    assert tail_read(cache.refresh(log)) == (0, 0, 1)
    assert state(cache) == reindexed(log, tmp_path)


def test_a_merge_of_two_clones_is_read_whole(tmp_path):
    seed = tmp_path / "seed"
    git(tmp_path, "init", "-q", "-b", "main", str(seed))
    git(seed, "commit", "-q", "--allow-empty", "-m", "root")
    origin = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(seed), str(origin))
    a, b = tmp_path / "a", tmp_path / "b"
    for path in (a, b):
        git(tmp_path, "clone", "-q", str(origin), str(path))
    anchor = git(a, "rev-list", "--max-parents=0", "HEAD")
    la = GitNotesLog(a, level="distributed", anchor=anchor)
    lb = GitNotesLog(b, level="distributed", anchor=anchor)
    foreign_append(a, anchor, rec(content="from a"))
    sync_log(la, "origin")
    sync_log(lb, "origin")
    cache = MountCache(tmp_path / "b.sqlite", "project")
    try:
        cache.refresh(lb)
        assert mark_of(cache) == (None, None, None, None)  # fetched: packed
        foreign_append(b, anchor, rec(content="from b"))
        assert tail_read(cache.refresh(lb)) == (1, 0, 0)
        foreign_append(a, anchor, rec(content="zebra from a"))
        sync_log(la, "origin")
        foreign_append(b, anchor, rec(content="again from b"))
        assert tail_read(cache.refresh(lb)) == (1, 1, 0)
        assert sync_log(lb, "origin", push=False).merged == [KEY.ref]
        assert tail_read(cache.refresh(lb)) == (0, 0, 1)
        assert state(cache) == reindexed(lb, tmp_path)
    finally:
        cache.close()
