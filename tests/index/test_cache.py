"""The per-mount cache: freshness by shard commit, tail reads, re-reads with a record diff,
bad lines, rebuilds (DESIGN.md "The cache"; reference/algorithms.md §2.3)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ynm.index import schema
from ynm.index.cache import MountCache
from ynm.index.search import SearchQuery, search
from ynm.model.shards import ShardKey
from ynm.model.text import query_phrases

from .conftest import KEY, line, rec, ulid


def find(cache: MountCache, text: str) -> list[str]:
    match = " OR ".join(query_phrases(text)) or None
    return [c.memory_id for c in search(cache.conn, SearchQuery(match=match))]


def memory_ids(cache: MountCache) -> set[str]:
    return {r[0] for r in cache.conn.execute("SELECT memory_id FROM memories")}


def porcelain_append(git, repo: Path, ref: str, anchor: str, text: str) -> None:
    git(repo, "notes", f"--ref={ref}", "append", "-m", text, anchor)


def blob_lines(git, repo: Path, ref: str, anchor: str) -> list[str]:
    return git(repo, "notes", f"--ref={ref}", "show", anchor).split("\n")


# ------------------------------------------------------------------------------ first read


def test_first_refresh_rebuilds(log, cache, append):
    a = rec(content="alpha")
    append(a, own=False)
    report = cache.refresh(log)
    assert report.rebuilt and report.shards_full == 1 and report.memories_folded == 1
    assert memory_ids(cache) == {a["id"]}
    assert cache.is_fresh(log)
    assert cache.refresh(log).changed is False


def test_own_append_keeps_the_cache_fresh(log, cache, append):
    cache.refresh(log)
    a = rec(content="alpha")
    append(a)
    assert cache.is_fresh(log)
    assert memory_ids(cache) == {a["id"]}
    assert cache.refresh(log).changed is False


# --------------------------------------------------------------------------- foreign writes


def test_foreign_porcelain_append_is_a_tail_read(log, cache, append, git, git_repo, anchor):
    a = rec(content="alpha")
    append(a, own=False)
    cache.refresh(log)
    b = rec(content="zebra crossing", summary="zebra")
    porcelain_append(git, git_repo, KEY.ref, anchor, line(b))
    assert not cache.is_fresh(log)
    report = cache.refresh(log)
    assert (report.rebuilt, report.shards_tail, report.shards_full) == (False, 1, 0)
    assert report.records_added == 1 and report.memories_folded == 1
    assert find(cache, "zebra") == [b["id"]]
    assert memory_ids(cache) == {a["id"], b["id"]}
    assert cache.is_fresh(log)


def test_own_append_after_a_tail_read_stays_in_step(log, cache, append, git, git_repo, anchor):
    """After git's append (which may leave a blank separator line) our own append must still
    be recorded against the right byte length."""
    append(rec(), own=False)
    cache.refresh(log)
    porcelain_append(git, git_repo, KEY.ref, anchor, line(rec()))
    cache.refresh(log)
    c = rec(content="gamma")
    append(c)
    assert cache.is_fresh(log)
    assert len(memory_ids(cache)) == 3
    d = rec(content="delta")
    porcelain_append(git, git_repo, KEY.ref, anchor, line(d))
    report = cache.refresh(log)
    assert report.shards_tail == 1 and report.shards_full == 0
    assert find(cache, "delta") == [d["id"]]


def test_broken_line_is_reported_and_hides_nothing(log, cache, append, git, git_repo, anchor):
    a = rec(content="alpha")
    append(a, own=False)
    cache.refresh(log)
    porcelain_append(git, git_repo, KEY.ref, anchor, "{broken")
    c = rec(content="gamma")
    porcelain_append(git, git_repo, KEY.ref, anchor, line(c))
    cache.refresh(log)
    lines = blob_lines(git, git_repo, KEY.ref, anchor)
    expected_line = lines.index("{broken") + 1
    problems = cache.problems()
    assert len(problems) == 1
    ref, number, message = problems[0]
    assert ref == KEY.ref and number == expected_line
    assert message.startswith("invalid JSON")
    assert memory_ids(cache) == {a["id"], c["id"]}
    assert cache.counts()["badLines"] == 1


def test_broken_line_number_on_full_read(log, cache, append, git, git_repo, anchor):
    a = rec(content="alpha")
    append(a, own=False)
    porcelain_append(git, git_repo, KEY.ref, anchor, "{broken")
    cache.refresh(log)  # first read: a rebuild
    lines = blob_lines(git, git_repo, KEY.ref, anchor)
    assert cache.problems() == [(KEY.ref, lines.index("{broken") + 1, cache.problems()[0][2])]
    assert memory_ids(cache) == {a["id"]}


def test_rewritten_shard_is_reread_and_diffed(log, cache, append, anchor):
    a, b, c = rec(content="alpha"), rec(content="bravo"), rec(content="charlie")
    append(a, b, c)
    tip = log.tips()[KEY.ref].commit
    blob = log.read_blob(log.note_blob_id(tip))
    kept = b"".join(x + b"\n" for x in blob.split(b"\n") if x and b["id"].encode() not in x)
    with log.lock():
        assert log.write_shard(KEY, kept, message="ynm: purge", expected=tip) is not None
    report = cache.refresh(log)
    assert report.shards_full == 1 and report.shards_tail == 0
    assert report.records_removed == 1 and report.records_added == 0
    assert memory_ids(cache) == {a["id"], c["id"]}
    assert find(cache, "bravo") == []
    assert find(cache, "alpha") == [a["id"]]


def test_rewritten_shard_refolds_a_memory(log, cache, append):
    a = rec(content="original words", summary="original", recordedAt="2026-01-01T00:00:00.000Z")
    sup = rec(id=ulid(), memoryId=a["id"], op="supersede", content="replacement words",
              summary="replacement", recordedAt="2026-01-02T00:00:00.000Z",
              links=[{"rel": "supersedes", "to": a["id"]}])
    append(a, sup)
    assert cache.get_state(a["id"])["current"]["summary"] == "replacement"
    tip = log.tips()[KEY.ref].commit
    with log.lock():
        log.write_shard(KEY, (line(a) + "\n").encode(), message="ynm: rewrite", expected=tip)
    report = cache.refresh(log)
    assert report.memories_folded == 1
    state = cache.get_state(a["id"])
    assert state["current"]["summary"] == "original" and state["versions"] == 1
    assert find(cache, "replacement") == []
    assert find(cache, "original") == [a["id"]]


def test_history_rewrite_with_forget_history(log, cache, append):
    a, b = rec(content="alpha"), rec(content="bravo")
    append(a, b)
    tip = log.tips()[KEY.ref].commit
    with log.lock():
        log.write_shard(KEY, (line(b) + "\n").encode(), message="ynm: purge", expected=tip,
                        forget_history=True)
    report = cache.refresh(log)
    assert report.shards_full == 1
    assert memory_ids(cache) == {b["id"]}


def test_deleted_shard_ref_drops_its_memories(log, cache, append, git, git_repo):
    other = ShardKey("distributed", "team", "semantic", "2026-01")
    a = rec(content="alpha")
    b = rec(content="bravo", namespace="team")
    append(a)
    append(b, key=other)
    git(git_repo, "update-ref", "-d", KEY.ref)
    report = cache.refresh(log)
    assert report.shards_removed == 1 and report.records_removed == 1
    assert memory_ids(cache) == {b["id"]}
    assert find(cache, "alpha") == []
    assert cache.counts()["shards"] == 1


def test_only_touched_memories_refold(log, cache, append, git, git_repo, anchor):
    mems = [rec(content=f"memory {i}") for i in range(5)]
    append(*mems)
    ann = rec(id=ulid(), memoryId=mems[2]["id"], op="annotate", content=None, summary=None,
              tags=["flagged"], recordedAt="2026-01-03T00:00:00.000Z")
    porcelain_append(git, git_repo, KEY.ref, anchor, line(ann))
    report = cache.refresh(log)
    assert report.memories_folded == 1 and report.records_added == 1
    assert cache.get_state(mems[2]["id"])["tags"] == ["flagged"]
    assert cache.get_state(mems[2]["id"])["versions"] == 2


def test_new_shard_from_another_writer(log, cache, append, git, git_repo, anchor):
    append(rec())
    b = rec(namespace="ops", content="bravo")
    porcelain_append(git, git_repo, "refs/notes/ynm/distributed/ops/semantic/2026-01", anchor,
                     line(b))
    report = cache.refresh(log)
    assert report.shards_full == 1 and report.memories_folded == 1
    assert find(cache, "bravo") == [b["id"]]


# ----------------------------------------------------------------------- apply_append races


def test_apply_append_after_another_writer_falls_back_to_refresh(
        log, cache, append, git, git_repo, anchor):
    a = rec(content="alpha")
    append(a)
    b = rec(content="bravo")
    porcelain_append(git, git_repo, KEY.ref, anchor, line(b))  # the cache has not seen it
    c = rec(content="charlie")
    append(c)  # our append starts from the foreign commit
    assert cache.is_fresh(log)
    assert memory_ids(cache) == {a["id"], b["id"], c["id"]}
    assert find(cache, "bravo") == [b["id"]]
    assert cache.counts()["records"] == 3
    assert cache.refresh(log).changed is False


def test_apply_append_on_a_never_built_cache(log, cache, append):
    a = rec(content="alpha")
    append(rec(content="before"), own=False)
    append(a)
    assert cache.is_fresh(log)
    assert len(memory_ids(cache)) == 2


# --------------------------------------------------------------------------- cache file life


def test_corrupt_cache_file_is_rebuilt_on_open(log, cache, cache_path, append):
    a = rec(content="alpha")
    append(a)
    cache.close()
    for suffix in ("-wal", "-shm"):
        Path(f"{cache_path}{suffix}").unlink(missing_ok=True)
    cache_path.write_bytes(b"\x00garbage, not a database\xff" * 200)
    fresh = MountCache(cache_path, "project")
    try:
        assert schema.get_meta(fresh.conn, "schema_version") == str(schema.SCHEMA_VERSION)
        report = fresh.refresh(log)
        assert report.rebuilt
        assert memory_ids(fresh) == {a["id"]}
    finally:
        fresh.close()


def test_other_schema_version_is_rebuilt(log, cache, cache_path, append):
    a = rec(content="alpha")
    append(a)
    cache.conn.execute("UPDATE meta SET value = '999' WHERE key = 'schema_version'")
    cache.close()
    fresh = MountCache(cache_path, "project")
    try:
        assert schema.get_meta(fresh.conn, "schema_version") == str(schema.SCHEMA_VERSION)
        assert fresh.counts()["memories"] == 0
        report = fresh.refresh(log)
        assert report.rebuilt and memory_ids(fresh) == {a["id"]}
    finally:
        fresh.close()


def test_anchor_change_rebuilds(log, cache, append, git_repo, git):
    from ynm.store.gitnotes import GitNotesLog

    append(rec())
    head = git(git_repo, "rev-parse", "HEAD")
    other = GitNotesLog(git_repo, level="distributed", anchor=head, mount_id="project")
    report = cache.refresh(other)
    assert report.rebuilt
    assert cache.counts()["memories"] == 0  # no notes on the new anchor


def test_rebuild_matches_incremental_state(log, cache, cache_path, append, git, git_repo,
                                           anchor, tmp_path):
    a = rec(content="alpha", recordedAt="2026-01-01T00:00:00.000Z")
    append(a)
    ann = rec(id=ulid(), memoryId=a["id"], op="annotate", content=None, summary=None,
              pinned=True, recordedAt="2026-01-02T00:00:00.000Z")
    porcelain_append(git, git_repo, KEY.ref, anchor, line(ann))
    append(rec(content="bravo"))
    cache.refresh(log)
    other = MountCache(tmp_path / "other.sqlite", "project")
    try:
        other.refresh(log)
        rows = (f"SELECT memory_id, {schema.state_sql()}, summary, content, tags, pinned "
                "FROM memories ORDER BY 1")
        assert cache.conn.execute(rows).fetchall() == other.conn.execute(rows).fetchall()
        recs = ("SELECT id, memory_id, s.ref, line FROM records AS r "
                "JOIN shard_refs AS s ON s.shard = r.shard ORDER BY 1")
        assert cache.conn.execute(recs).fetchall() == other.conn.execute(recs).fetchall()
    finally:
        other.close()


def test_stale_reason(log, cache, append, git, git_repo, anchor):
    assert cache.stale_reason(log) == "never built"
    append(rec(), own=False)
    cache.refresh(log)
    assert cache.stale_reason(log) is None
    porcelain_append(git, git_repo, KEY.ref, anchor, line(rec()))
    assert cache.stale_reason(log) == f"shard {KEY.shard_id} changed"


# ------------------------------------------------------------------------- BM25 weights


def test_summary_term_outranks_content_term(log, cache, append):
    """Summary weight 2.0 vs content 1.0 (algorithms.md §2.3.1 intent, §8.1 fixed). The
    summary-match memory is created first (smaller id), so an id tie-break would favour the
    other one."""
    in_summary = rec(summary="zebra alpha", content="beta gamma")
    in_content = rec(summary="beta alpha", content="zebra gamma")
    append(in_summary, in_content)
    got = search(cache.conn, SearchQuery(match='"zebra"'))
    assert [c.memory_id for c in got] == [in_summary["id"], in_content["id"]]
    assert got[0].relevance == 1.0
    assert 0 < got[1].relevance < 1.0


def test_subject_term_outranks_tag_term(log, cache, append):
    in_subject = rec(summary="s", content="c", subject="zebra", tags=["other"])
    in_tags = rec(summary="s", content="c", subject="other", tags=["zebra"])
    append(in_subject, in_tags)
    got = search(cache.conn, SearchQuery(match='"zebra"'))
    assert [c.memory_id for c in got] == [in_subject["id"], in_tags["id"]]


def test_indexed_content_includes_string_data_values(log, cache, append):
    a = rec(content="body", data={"owner": "payments", "n": 3})
    append(a)
    assert find(cache, "payments") == [a["id"]]
    row = cache.conn.execute("SELECT content FROM memories").fetchone()
    assert row[0] == "body\npayments"


def test_data_without_a_string_value_adds_nothing_to_the_content(log, cache, append):
    a = rec(content="body", data={"n": 3, "ok": True, "list": ["x"]})
    append(a)
    assert cache.conn.execute("SELECT content FROM memories").fetchone() == ("body",)


def test_porter_stemming(log, cache, append):
    a = rec(content="the team deploys on tuesdays")
    append(a)
    assert find(cache, "deployed") == [a["id"]]


# ---------------------------------------------------------------- end to end through Ynm


@pytest.fixture
def ynm_factory(git_repo, monkeypatch):
    from ynm.service.setup import init_project
    from ynm.service.config import load_config
    from ynm.service.ynm import Ynm

    monkeypatch.setenv("YNM_USER", "tester")
    init_project(load_config(git_repo), git_repo)
    now = 1_767_225_600_000 + 30 * 86_400_000  # 2026-01-31

    def make() -> Ynm:
        return Ynm.open(git_repo, now_ms=lambda: now)

    return make


CORPUS = [
    rec(type="episodic", content="ledger deploys on tuesday", summary="ledger deploys",
        recordedAt="2026-01-10T00:00:00.000Z", importance=0.7),
    rec(content="the ledger team owns payments", summary="ledger team",
        recordedAt="2026-01-12T00:00:00.000Z"),
    rec(type="procedural", content="run make deploy for the ledger", summary="deploy steps",
        recordedAt="2026-01-14T00:00:00.000Z", pinned=True),
    rec(type="reference", content="unrelated", summary="unrelated",
        recordedAt="2026-01-15T00:00:00.000Z"),
    rec(type="reference", content="other words", summary="other words",
        recordedAt="2026-01-16T00:00:00.000Z"),
    rec(type="reference", content="more filler", summary="more filler",
        recordedAt="2026-01-17T00:00:00.000Z"),
]


def _queries():
    from ynm.model.inputs import RecallQuery

    return [RecallQuery(text="ledger deploy", explain=True), RecallQuery(explain=True)]


def _delete_cache(git_repo: Path) -> None:
    cache_file = git_repo / ".ynm" / "index" / "ynm-cache" / "project.sqlite"
    assert cache_file.exists()
    for suffix in ("", "-wal", "-shm"):
        Path(f"{cache_file}{suffix}").unlink(missing_ok=True)


def test_deleting_the_cache_gives_identical_hits_and_scores(ynm_factory, git_repo):
    with ynm_factory() as y:
        y.import_jsonl("".join(line(o) + "\n" for o in CORPUS))
        before = [y.recall(q) for q in _queries()]
    assert len(before[0]) == 3 and len(before[1]) == 6
    _delete_cache(git_repo)
    with ynm_factory() as y:
        after = [y.recall(q) for q in _queries()]
    assert json.dumps(after) == json.dumps(before)


def test_reindex_gives_identical_hits_and_scores(ynm_factory, git_repo):
    """``ynm reindex`` over an existing cache must score like a brand-new cache file: BM25
    statistics of the old rows must not survive the rebuild."""
    with ynm_factory() as y:
        y.import_jsonl("".join(line(o) + "\n" for o in CORPUS))
        before = [y.recall(q) for q in _queries()]
        y.reindex()
        assert json.dumps([y.recall(q) for q in _queries()]) == json.dumps(before)


def test_refolded_memory_scores_like_a_fresh_cache(ynm_factory, git_repo, git, anchor):
    """A memory folded again (its FTS row replaced) leaves no trace in BM25 statistics: the
    incrementally kept cache ranks exactly like one rebuilt from scratch."""
    with ynm_factory() as y:
        y.import_jsonl("".join(line(o) + "\n" for o in CORPUS))
        y.recall(_queries()[0])
        ann = rec(id=ulid(), memoryId=CORPUS[1]["id"], op="annotate", content=None,
                  summary=None, importance=0.9, recordedAt="2026-01-20T00:00:00.000Z")
        ref = "refs/notes/ynm/distributed/common/semantic/2026-01"
        git(git_repo, "notes", f"--ref={ref}", "append", "-m", line(ann), anchor)
        incremental = [y.recall(q) for q in _queries()]
    _delete_cache(git_repo)
    with ynm_factory() as y:
        fresh = [y.recall(q) for q in _queries()]
    assert json.dumps(incremental) == json.dumps(fresh)


# --------------------------------------------------------------- scripts without spaces


def fts_terms(cache: MountCache) -> list[tuple[str, str, int, int]]:
    """Every token the FTS index holds: (memory id, term, column, position), sorted."""
    cache.conn.execute("CREATE VIRTUAL TABLE IF NOT EXISTS temp.vocab "
                       "USING fts5vocab(main, fts, 'instance')")
    return sorted(cache.conn.execute(
        "SELECT m.memory_id, v.term, v.col, v.offset FROM temp.vocab v "
        "JOIN memories m ON m.rowid = v.doc"))


def test_han_kana_and_hangul_are_indexed_one_character_a_token(log, cache, append):
    a = rec(content="设备清单：NAS 在机房", summary="设备", tags=["机房", "infra"])
    b = rec(content="サーバー設定", summary="서버 설정")
    append(a, b)
    terms = {(m, t, c) for m, t, c, _ in fts_terms(cache)}
    assert {(a["id"], t, "content") for t in ["na", *"设备清单在机房"]} <= terms
    assert {(a["id"], t, "tags") for t in "机房"} | {(a["id"], "infra", "tags")} <= terms
    assert {(b["id"], t, "summary") for t in "서버설정"} <= terms
    assert {(b["id"], t, "content") for t in "サーバ設定"} <= terms
    assert not [t for _, t, _, _ in fts_terms(cache) if len(t) > 1 and t not in ("na", "infra")]
    assert find(cache, "机房") == [a["id"]]
    assert find(cache, "バー設") == [b["id"]]
    assert find(cache, "설정") == [b["id"]]
    assert find(cache, "房机") == [] and find(cache, "设清") == []  # not side by side
    # the memories table keeps the text as written
    assert cache.get_state(a["id"])["current"]["content"] == "设备清单：NAS 在机房"


def test_refolded_han_memory_leaves_no_old_terms(log, cache, append, tmp_path):
    """A superseded memory's FTS row is deleted with the text it was indexed with, so an
    updated cache holds exactly the tokens of a rebuilt one."""
    a = rec(content="设备清单：NAS 在机房二号柜", summary="设备清单",
            recordedAt="2026-01-01T00:00:00.000Z")
    b = rec(content="サーバーの設定", summary="設定")
    append(a, b)
    sup = rec(id=ulid(), memoryId=a["id"], op="supersede", content="备份在三号柜",
              summary="备份", recordedAt="2026-01-02T00:00:00.000Z",
              links=[{"rel": "supersedes", "to": a["id"]}])
    append(sup)
    assert find(cache, "机房") == [] and find(cache, "设备") == []
    assert find(cache, "号柜") == [a["id"]]
    rebuilt = MountCache(tmp_path / "rebuilt.sqlite", "project")
    try:
        assert rebuilt.refresh(log).rebuilt
        assert fts_terms(cache) == fts_terms(rebuilt)
    finally:
        rebuilt.close()


def test_expires_at_is_updated_at_plus_ttl_of_working_memory(log, cache, append, tmp_path):
    key = ShardKey("distributed", "session/s", "working", "2026-01")
    w = rec(type="working", namespace="session/s", ttl="PT2H",
            recordedAt="2026-01-01T00:00:00.000Z")
    fact = rec(ttl="PT2H", content="not working memory: never expires")
    no_ttl = rec(type="working", namespace="session/s", recordedAt="2026-01-01T00:00:00.000Z")
    append(w, no_ttl, key=key)
    append(fact)
    base = 1_767_225_600_000  # 2026-01-01T00:00:00.000Z
    expires = dict(cache.conn.execute("SELECT memory_id, expires_at FROM memories"))
    assert expires == {w["id"]: base + 2 * 3_600_000, fact["id"]: None, no_ttl["id"]: None}
    # an annotation pushes updatedAt, and so the expiry
    append(rec(id=ulid(), memoryId=w["id"], op="annotate", type="working",
               namespace="session/s", content=None, summary=None, tags=["x"],
               recordedAt="2026-01-01T01:30:00.000Z"), key=key)
    got = cache.conn.execute("SELECT expires_at FROM memories WHERE memory_id = ?",
                             (w["id"],)).fetchone()[0]
    assert got == base + 90 * 60_000 + 2 * 3_600_000
    other = MountCache(tmp_path / "other.sqlite", "project")
    try:
        other.refresh(log)  # a rebuild from the log gives the same instants
        rows = "SELECT memory_id, expires_at, summary FROM memories ORDER BY 1"
        assert cache.conn.execute(rows).fetchall() == other.conn.execute(rows).fetchall()
    finally:
        other.close()


def test_summary_column_is_derived_when_the_record_has_none(log, cache, append):
    a = rec(content="\n# Release train\nevery Tuesday", summary=None)
    b = rec(content="kept as written", summary="Given summary")
    append(a, b)
    got = dict(cache.conn.execute("SELECT memory_id, summary FROM memories"))
    assert got == {a["id"]: "Release train", b["id"]: "Given summary"}
    assert "summary" not in cache.get_state(a["id"])["current"]  # the record as stored
    assert find(cache, "release") == [a["id"]]  # the derived summary is indexed too


@pytest.mark.parametrize(("change", "reindexed"), [
    ({"op": "annotate", "data": {"dreamed": "x@heuristic"}}, False),  # a dream mark
    ({"op": "annotate", "needsReview": True, "reason": "possible duplicate"}, False),
    ({"op": "annotate", "importance": 0.9}, False),
    ({"op": "annotate", "tags": ["ops"]}, True),  # tags are indexed
    ({"op": "annotate", "data": {"ticket": "OPS-7"}}, False),  # indexed: the content record's
    ({"op": "supersede", "content": "Backups run at three", "summary": "Backups"}, True),
])
def test_a_record_that_changes_no_indexed_text_keeps_its_fts_row(
        log, cache, append, tmp_path, monkeypatch, change, reindexed):
    """A refold whose summary, content, subject and tags are unchanged keeps the FTS row (no
    secure-delete and re-insert); any change to them replaces it. Either way the cache holds
    exactly the tokens and the states of a rebuilt one."""
    import ynm.index.cache as cache_module

    a = rec(content="Backups run nightly at two", summary="Backups nightly",
            recordedAt="2026-01-01T00:00:00.000Z")
    append(a, rec(content="Deploys happen on Tuesday"))
    calls: list[Any] = []
    real = cache_module.fts_values
    monkeypatch.setattr(cache_module, "fts_values", lambda *v: calls.append(v) or real(*v))
    fields = {"content": None, "summary": None, **change}
    if change["op"] == "supersede":
        fields["links"] = [{"rel": "supersedes", "to": a["id"]}]
    append(rec(id=ulid(), memoryId=a["id"], recordedAt="2026-01-02T00:00:00.000Z", **fields))
    assert (len(calls) == 2) is reindexed and (calls == []) is not reindexed
    rebuilt = MountCache(tmp_path / "rebuilt.sqlite", "project")
    try:
        assert rebuilt.refresh(log).rebuilt
        assert fts_terms(cache) == fts_terms(rebuilt)
        assert cache.get_state(a["id"]) == rebuilt.get_state(a["id"])
    finally:
        rebuilt.close()
