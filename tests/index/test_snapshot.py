"""Cold caches started from a snapshot (``ynm compact``) fold exactly as a full read does
(ynm.index.snapshot; reference/storage.md §2.8, §7.12).

Property: for random histories written to a real repository (creates, supersedes that move a
memory to other shards, annotates, tombstones, purge markers, records that sort before their
memory's base, memories that never get one), a snapshot taken part way, then more appends and a
merge from a clone that never compacted (its records may sort before the snapshot's last one),
a cache started from the snapshot holds the same folded memories, orphans, bad lines and search
answers as a cache built from a full read, and as the model's fold of every record.
"""

from __future__ import annotations

import hashlib
import json
import random
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pygit2
import pytest
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ynm.compact import compact_mount
from ynm.index import schema, snapshot
from ynm.index.snapshot import FORMAT, NAME
from ynm.model.fold import fold
from ynm.model.ids import new_ulid
from ynm.model.jsonl import dumps_record, parse_jsonl, parse_obj
from ynm.model.shards import ShardKey
from ynm.model.text import fts_text
from ynm.service.mounts import Mount
from ynm.store.gitnotes import GitNotesLog
from ynm.store.snapshots import FORMAT as STORE_FORMAT
from ynm.store.snapshots import check_snapshot, snapshot_ref, state_hash
from ynm.store.sync import merge_shard

JAN_1 = 1_767_225_600_000  # 2026-01-01T00:00:00.000Z
SPAN_MS = 85 * 24 * 3600 * 1000  # to late March: three monthly buckets
# ASCII words, and words a snapshot load indexes through fts_values rather than as they stand:
# accented, Han (searched by its characters), and tags whose JSON text holds an escape
WORDS = ("alpha", "beta", "gamma", "delta", "notes", "cache", "café", "数据库", 'say"so',
         "back\\slash")
OPS = ("create", "supersede", "annotate", "annotate", "tombstone", "purge-marker")


def iso(ms: int) -> str:
    from datetime import UTC, datetime

    return datetime.fromtimestamp(ms / 1000, UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def make_history(seed: int, memories: int, steps: int) -> list[dict[str, Any]]:
    """Records of ``memories`` memories (one of them never gets a base): a create (id =
    memory id) at most once per memory, then supersedes, annotates, tombstones and purge
    markers at random times, so many sort before their base."""
    rnd = random.Random(seed)
    mids = [new_ulid(JAN_1 + rnd.randrange(SPAN_MS), rnd.randbytes) for _ in range(memories)]
    created: set[str] = set()
    out = []
    for _ in range(steps):
        mid = rnd.choice(mids)
        op = rnd.choice(OPS)
        if op == "create" and (mid in created or mid == mids[-1]):
            op = "annotate"
        if op == "supersede" and mid == mids[-1]:
            op = "tombstone"  # the last memory stays an orphan
        ms = JAN_1 + rnd.randrange(SPAN_MS)
        rid = mid if op == "create" else new_ulid(ms, rnd.randbytes)
        obj: dict[str, Any] = {
            "v": 1, "id": rid, "memoryId": mid, "op": op,
            "type": rnd.choice(("semantic", "episodic")), "level": "distributed",
            "namespace": rnd.choice(("common", "team/x")), "tags": [], "links": [],
            "recordedAt": iso(ms), "provenance": {"actor": "user:test"},
        }
        if op == "create":
            created.add(mid)
        if op in ("create", "supersede"):
            obj["content"] = " ".join(rnd.choice(WORDS) for _ in range(4))
            obj["summary"] = rnd.choice(WORDS)
        if op == "supersede":
            obj["links"] = [{"rel": "supersedes", "to": mid}]
        if op == "annotate":
            obj["tags"] = [rnd.choice(WORDS)]
            if rnd.random() < 0.5:
                obj["importance"] = round(rnd.random(), 2)
            if rnd.random() < 0.3:
                obj["pinned"] = True
            if rnd.random() < 0.2:
                obj["data"] = {"dreamed": rid}
                obj["tags"] = []
                obj.pop("importance", None)
                obj.pop("pinned", None)
        if op in ("tombstone", "purge-marker"):
            obj["reason"] = rnd.choice(WORDS)
        out.append(obj)
    return out


def by_shard(objs: list[dict[str, Any]]) -> dict[ShardKey, list[str]]:
    out: dict[ShardKey, list[str]] = defaultdict(list)
    for obj in objs:
        r = parse_obj(obj)
        out[ShardKey(r.level, r.namespace, r.type, r.bucket)].append(dumps_record(r))
    return out


def append(log: GitNotesLog, objs: list[dict[str, Any]], bad: bool = False) -> None:
    batches = {}
    for key, lines in by_shard(objs).items():
        text = "".join(line + "\n" for line in lines)
        if bad:
            text += "{not json\n"
        batches[key] = (text.encode(), len(lines))
    if batches:
        log.append(batches)


def merge_from_clone(log: GitNotesLog, base: dict[str, str], objs: list[dict[str, Any]]) -> None:
    """What ``ynm sync`` does with a clone that appended ``objs`` to the shards as they were at
    ``base`` (ref -> commit): per shard, a side commit on the old tip, merged into the current
    tip with cat_sort_uniq (the blob ends sorted, the clone's lines among the old ones)."""
    repo = log.repo
    for key, lines in by_shard(objs).items():
        ref = key.ref
        old = base.get(ref)
        data = b""
        parents = []
        if old is not None:
            blob = log.note_blob_id(old)
            data = log.read_blob(blob) if blob else b""
            parents = [old]
        payload = data + "".join(line + "\n" for line in lines).encode()
        builder = repo.TreeBuilder()
        builder.insert(log.anchor, repo.create_blob(payload), pygit2.enums.FileMode.BLOB)
        sig = pygit2.Signature("clone", "clone@example.com")
        side = str(repo.create_commit(None, sig, sig, "clone\n", builder.write(), parents))
        tip = log._ref_target(ref)
        if tip is None:
            repo.references.create(ref, pygit2.Oid(hex=side))
            continue
        merged = merge_shard(log, ref, "refs/notes/ynm-remote/origin/x", tip, side)
        assert log._compare_and_swap(ref, tip, pygit2.Oid(hex=merged), "merge")


def states(cache) -> dict[str, Any]:
    return {mid: json.loads(state) for mid, state in cache.conn.execute(
        f"SELECT memory_id, {schema.state_sql()} FROM memories")}


def orphan_ids(cache) -> set[str]:
    return {r[0] for r in cache.conn.execute(
        "SELECT id FROM records WHERE memory_id NOT IN (SELECT memory_id FROM memories)")}


def answers(cache, word: str) -> list[tuple[str, float]]:
    phrase = '"' + fts_text(word).strip().replace('"', '""') + '"'
    return [(mid, round(score, 9)) for mid, score in cache.conn.execute(
        "SELECT m.memory_id, bm25(fts, 2.0, 1.0, 1.5, 1.0) FROM fts JOIN memories m "
        "ON m.rowid = fts.rowid WHERE fts MATCH ? ORDER BY 2, 1", (phrase,))]


def new_repo(root: Path) -> tuple[pygit2.Repository, str]:
    repo = pygit2.init_repository(str(root / "repo"), bare=True)
    sig = pygit2.Signature("t", "t@example.com")
    anchor = repo.create_commit("refs/heads/main", sig, sig, "root\n",
                                repo.TreeBuilder().write(), [])
    return repo, str(anchor)


def mount(log: GitNotesLog, path: Path) -> Mount:
    return Mount("project", "distributed", "git-notes", str(log.path), log, path)


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32), memories=st.integers(2, 7), steps=st.integers(4, 40),
       cut=st.floats(0.1, 0.9), clone_share=st.floats(0.0, 0.5), bad=st.booleans(),
       carry=st.booleans())
def test_snapshot_then_tail_folds_like_a_full_read(seed, memories, steps, cut, clone_share,
                                                   bad, carry):
    history = make_history(seed, memories, steps)
    rnd = random.Random(seed + 1)
    rnd.shuffle(history)  # write order is not time order
    n_head = max(1, int(len(history) * cut))
    head, rest = history[:n_head], history[n_head:]
    n_clone = int(len(rest) * clone_share)
    clone, tail = rest[:n_clone], rest[n_clone:]
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        repo, anchor = new_repo(root)
        log = GitNotesLog(repo.path, level="distributed", anchor=anchor)
        append(log, head[: len(head) // 2])
        append(log, head[len(head) // 2:], bad=bad)
        at_snapshot = {ref: tip.commit for ref, tip in log.tips().items()}
        first = mount(log, root / "first.sqlite")
        # with carry, the snapshot holds the full-text index too, as it does for large mounts
        with patch.object(snapshot, "FTS_CARRIED_FROM", 0 if carry else 10**9):
            result = compact_mount(first)
        assert result.written
        first.close()

        append(log, tail)
        merge_from_clone(log, at_snapshot, clone)

        started = mount(log, root / "started.sqlite")
        report = started.cache.refresh(log)
        assert report.snapshot == result.commit  # the snapshot fits: shards only grew
        full = mount(log, root / "full.sqlite")
        full.cache.snapshot_source = None
        assert full.cache.refresh(log).snapshot is None

        everything = [r for b in log.read_all().values() for r in parse_jsonl(b.data).records]
        folded = fold(everything)
        want = {mid: m.to_obj() for mid, m in folded.memories.items()}
        assert states(full.cache) == want
        assert states(started.cache) == want
        assert orphan_ids(started.cache) == orphan_ids(full.cache) == {
            r.id for r in folded.orphans}
        assert started.cache.problems() == full.cache.problems()
        assert started.cache.counts() == full.cache.counts()
        for word in WORDS:
            assert answers(started.cache, word) == answers(full.cache, word)
            # and each answers exactly the memories holding the word
            holding = {mid for mid, m in want.items()
                       if word in (m["current"].get("content") or "").split(" ")
                       or word == m["current"].get("summary") or word in m["tags"]}
            assert {mid for mid, _ in answers(full.cache, word)} == holding, word
        # and both stay in step with a later write to a memory the snapshot holds
        later = {**head[0], "id": new_ulid(JAN_1 + SPAN_MS, rnd.randbytes), "op": "annotate",
                 "tags": ["later"], "links": [], "recordedAt": iso(JAN_1 + SPAN_MS)}
        for key in ("content", "summary", "data", "reason"):
            later.pop(key, None)
        append(log, [later])
        started.cache.refresh(log)
        full.cache.refresh(log)
        assert states(started.cache) == states(full.cache)
        for word in WORDS:
            assert answers(started.cache, word) == answers(full.cache, word)
        started.cache.conn.execute("INSERT INTO fts(fts) VALUES ('integrity-check')")
        started.close()
        full.close()


# ------------------------------------------------------------------------- when not to use it


@pytest.fixture
def store(tmp_path: Path):
    repo, anchor = new_repo(tmp_path)
    log = GitNotesLog(repo.path, level="distributed", anchor=anchor)
    append(log, make_history(7, 4, 20))
    first = mount(log, tmp_path / "first.sqlite")
    compact_mount(first)
    first.close()
    return log


@pytest.mark.parametrize("forget_history", [False, True])
def test_a_rewritten_shard(store, tmp_path: Path, forget_history: bool):
    """A shard rewritten on top of its old commit (a purge) still has the covered commit in its
    history: the snapshot is used and the re-read shard is diffed by record id. A shard whose
    history restarted (purge --forget-history) no longer holds it: full rebuild. Both fold
    exactly."""
    ref = min(store.tips())
    tip = store.tips()[ref].commit
    data = store.read_blob(store.note_blob_id(tip))
    kept = b"".join(line + b"\n" for line in data.splitlines()[1:])
    assert store.write_shard(store.tips()[ref].key, kept, message="rewrite", expected=tip,
                             forget_history=forget_history)
    cold = mount(store, tmp_path / "cold.sqlite")
    report = cold.cache.refresh(store)
    if forget_history:
        assert report.snapshot is None and report.shards_full == len(store.tips())
    else:
        assert report.snapshot is not None and report.shards_full == 1
        assert report.records_removed == 1
    full = mount(store, tmp_path / "full.sqlite")
    full.cache.snapshot_source = None
    full.cache.refresh(store)
    assert states(cold.cache) == states(full.cache) != {}
    assert orphan_ids(cold.cache) == orphan_ids(full.cache)


def _replace(repo: pygit2.Repository, ref: str, *, state: bytes | None = None,
             meta: bytes | None = None, drop: str | None = None, rehash: bool = False) -> None:
    """Point ``ref`` at a copy of its snapshot commit with ``state.bin`` / ``meta.json``
    replaced or ``drop`` left out; ``rehash`` records the new state's SHA-256 in meta.json
    (a state.bin that is intact as a blob but holds something else)."""
    commit = repo.references[ref].peel(pygit2.Commit)
    builder = repo.TreeBuilder(commit.tree)
    if state is not None:
        builder.insert("state.bin", repo.create_blob(state), pygit2.enums.FileMode.BLOB)
        if rehash:
            obj = json.loads(repo[commit.tree["meta.json"].id].data)
            obj["stateSha256"] = state_hash(state)
            meta = json.dumps(obj).encode()
    if meta is not None:
        builder.insert("meta.json", repo.create_blob(meta), pygit2.enums.FileMode.BLOB)
    if drop is not None:
        builder.remove(drop)
    sig = pygit2.Signature("t", "t@example.com")
    bad = repo.create_commit(None, sig, sig, "bad\n", builder.write(), [])
    repo.references[ref].set_target(bad)


def _without_hash(repo: pygit2.Repository, ref: str) -> bytes:
    commit = repo.references[ref].peel(pygit2.Commit)
    obj = json.loads(repo[commit.tree["meta.json"].id].data)
    del obj["stateSha256"]
    return json.dumps(obj).encode()


def _flip(data: bytes, at: int) -> bytes:
    return data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1:]


# case -> (damage(repo, ref, state.bin bytes, anchor), what the warning says)
DAMAGE = {
    "flipped byte": (lambda repo, ref, st, anchor: _replace(repo, ref, state=_flip(st, len(st) // 2)),
                     "state.bin is damaged (its SHA-256 is not the one meta.json records)"),
    "not zstd, no hash (an older ynm)": (
        lambda repo, ref, st, anchor: _replace(repo, ref, state=b"\x28\xb5\x2f\xfd garbage",
                                       meta=_without_hash(repo, ref)),
        "state.bin is damaged (it does not decompress)"),
    "zstd of no database": (
        lambda repo, ref, st, anchor: _replace(
            repo, ref, state=zstandard.ZstdCompressor().compress(b"x" * 5000), rehash=True),
        "state.bin is damaged (it does not hold a database)"),
    "no meta.json": (lambda repo, ref, st, anchor: _replace(repo, ref, drop="meta.json"),
                     "is not a snapshot commit (it points at commit "),
    "meta.json not JSON": (lambda repo, ref, st, anchor: _replace(repo, ref, meta=b"{nope"),
                           "has a damaged meta.json (it is not JSON)"),
    "a tree": (lambda repo, ref, st, anchor: repo.references[ref].set_target(
        repo.references[ref].peel(pygit2.Commit).tree_id),
        "is not a snapshot commit (it points at a tree)"),
    "a code commit": (lambda repo, ref, st, anchor: repo.references[ref].set_target(
        repo.revparse_single(anchor).id),  # the code commit memory hangs on
        "which holds no meta.json file)"),
}


@pytest.mark.parametrize("case", list(DAMAGE))
def test_a_damaged_snapshot_is_ignored_with_a_plain_warning(store, tmp_path: Path, capsys,
                                                            case: str):
    repo = store.repo
    ref = snapshot_ref("distributed", NAME)
    state = repo[repo.references[ref].peel(pygit2.Commit).tree["state.bin"].id].data
    damage, said = DAMAGE[case]
    damage(repo, ref, state, store.anchor)
    _, why = check_snapshot(repo, ref)
    assert why is not None and said in why and why.startswith(f"snapshot {ref}")
    cold = mount(store, tmp_path / "cold.sqlite")
    report = cold.cache.refresh(store)
    assert report.snapshot is None and report.rebuilt
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and said in err, err
    assert err.startswith(f"ynm: snapshot {ref}")
    assert err.endswith(f"the project cache is built from the notes; `ynm compact` rewrites "
                        f"it, or `git update-ref -d {ref}` removes it\n")
    assert "peeled" not in err and "'meta.json'" not in err and "git_object_t" not in err
    full = mount(store, tmp_path / "full.sqlite")
    full.cache.snapshot_source = None
    full.cache.refresh(store)
    assert states(cold.cache) == states(full.cache) != {}
    # a compaction replaces it, and the new one is usable
    assert compact_mount(mount(store, tmp_path / "again.sqlite")).written
    assert check_snapshot(repo, ref)[1] is None


def test_the_state_hash_is_recorded_and_checked(store):
    repo = store.repo
    ref = snapshot_ref("distributed", NAME)
    found, why = check_snapshot(repo, ref)
    assert why is None and found is not None
    assert found.meta.extra["stateSha256"] == hashlib.sha256(found.state).hexdigest()
    assert found.meta.extra["format"] == FORMAT == STORE_FORMAT
    tips = {r: t.commit for r, t in store.tips().items()}
    assert check_snapshot(repo, ref, tips)[1] is None
    shard = min(tips)
    _, why = check_snapshot(repo, ref, {**tips, shard: "0" * 40})
    assert why == (f"snapshot {ref} does not match the notes (it covers commit "
                   f"{found.meta.shards[shard]['commit'][:12]} of shard {shard}, which this "
                   "repository does not have)") or why.endswith("was rewritten since the "
                                                                "snapshot was written)")
    del tips[shard]
    assert check_snapshot(repo, ref, tips)[1] == (
        f"snapshot {ref} does not match the notes (it covers shard {shard}, which this "
        "repository does not have)")


# ------------------------------------------------------------------- record lines by number


def _snapshot_rows(repo: pygit2.Repository, sql: str) -> list[tuple[Any, ...]]:
    """Rows of ``sql`` over the snapshot's state.bin, decompressed to a scratch file."""
    import sqlite3

    ref = snapshot_ref("distributed", NAME)
    found, why = check_snapshot(repo, ref)
    assert why is None and found is not None
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "state.sqlite"
        path.write_bytes(zstandard.ZstdDecompressor().decompressobj().decompress(found.state))
        conn = sqlite3.connect(path)
        try:
            return conn.execute(sql).fetchall()
        finally:
            conn.close()


def _format_1_state(cache) -> bytes:
    """The state.bin an earlier ynm wrote for ``cache`` (format 1): every record line as text,
    every memory id and creation time in full."""
    from ynm.index import snapshot as snap

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "state.sqlite"
        conn = cache.conn
        conn.execute("ATTACH DATABASE ? AS snap", (str(path),))
        try:
            for table in snap._TABLES:
                conn.execute(snap._dump_sql(table))
            conn.execute("CREATE TABLE snap.embeddings (hash TEXT PRIMARY KEY, "
                         "vector BLOB NOT NULL) WITHOUT ROWID")
        finally:
            conn.execute("DETACH DATABASE snap")
        return zstandard.ZstdCompressor().compress(path.read_bytes())


def test_lines_are_named_by_number_and_ids_not_repeated(store):
    """A format-2 snapshot carries no record line its note blobs hold, and leaves the memory
    id and creation time to the current record wherever it gives them."""
    carried, numbered = _snapshot_rows(
        store.repo, "SELECT count(line), count(line_no) FROM records")[0]
    total = sum(len(parse_jsonl(b.data).records) for b in store.read_all().values())
    assert (carried, numbered) == (0, total)
    # every line here begins with its record id, which is therefore not carried again
    assert _snapshot_rows(store.repo, "SELECT count(id) FROM records") == [(0,)]
    ids, memories = _snapshot_rows(
        store.repo, "SELECT count(memory_id), count(*) FROM memories")[0]
    assert memories > 0 and ids == 0
    sums = _snapshot_rows(store.repo, "SELECT count(*) FROM line_sums")[0][0]
    assert sums == len(store.tips())


def test_creation_times_are_left_to_the_base_record(tmp_path: Path):
    """A memory created by its base record (no earlier record of it) travels without its
    creation time; one whose creation time an earlier record set carries it."""
    repo, anchor = new_repo(tmp_path)
    log = GitNotesLog(repo.path, level="distributed", anchor=anchor)
    history = make_history(3, 1, 1)  # one create, as a template
    base = {k: v for k, v in history[0].items()}
    objs = []
    for i in range(4):
        mid = new_ulid(JAN_1 + 1000 * (i + 1), random.Random(i).randbytes)
        objs.append({**base, "id": mid, "memoryId": mid, "op": "create",
                     "content": f"alpha {i}", "summary": "alpha",
                     "recordedAt": iso(JAN_1 + 1000 * (i + 1)), "links": [], "tags": []})
    # the last memory has an annotate recorded before its base: the fold takes that time
    early = new_ulid(JAN_1, random.Random(9).randbytes)
    objs.append({**base, "id": early, "memoryId": objs[-1]["id"], "op": "annotate",
                 "recordedAt": iso(JAN_1), "links": [], "tags": ["early"]})
    for key in ("content", "summary"):
        objs[-1].pop(key, None)
    append(log, objs)
    first = mount(log, tmp_path / "first.sqlite")
    assert compact_mount(first).written
    first.close()
    carried = _snapshot_rows(repo, "SELECT created_ms FROM memories WHERE created_ms IS NOT NULL")
    assert carried == [(JAN_1,)]
    cold = mount(log, tmp_path / "cold.sqlite")
    assert cold.cache.refresh(log).snapshot is not None
    full = mount(log, tmp_path / "full.sqlite")
    full.cache.snapshot_source = None
    full.cache.refresh(log)
    assert states(cold.cache) == states(full.cache)
    assert len(states(cold.cache)) == 4


def test_a_line_its_blob_does_not_hold_travels_as_text(tmp_path: Path):
    """A cache line that differs from its blob's (here: the same record written with other
    spacing) is carried as text, and a cache started from the snapshot holds it as it was."""
    repo, anchor = new_repo(tmp_path)
    log = GitNotesLog(repo.path, level="distributed", anchor=anchor)
    append(log, make_history(11, 5, 25))
    first = mount(log, tmp_path / "first.sqlite")
    cache = first.fresh_cache()
    rowid, packed = cache.conn.execute(
        "SELECT rowid, line FROM records ORDER BY rowid LIMIT 1").fetchone()
    spaced = json.dumps(json.loads(schema.unpack(packed)), separators=(", ", ": "))
    cache.conn.execute("UPDATE records SET line = ? WHERE rowid = ?", (schema.pack(spaced), rowid))
    assert compact_mount(first).written
    first.close()
    assert _snapshot_rows(repo, "SELECT rowid, line_no, line FROM records WHERE line IS NOT NULL"
                          ) == [(rowid, None, spaced)]
    # a line carried as text keeps its id beside it; the numbered ones give theirs at load
    assert _snapshot_rows(repo, "SELECT rowid FROM records WHERE id IS NOT NULL") == [(rowid,)]
    cold = mount(log, tmp_path / "cold.sqlite")
    assert cold.cache.refresh(log).snapshot is not None
    assert schema.unpack(cold.cache.conn.execute(
        "SELECT line FROM records WHERE rowid = ?", (rowid,)).fetchone()[0]) == spaced
    full = mount(log, tmp_path / "full.sqlite")
    full.cache.snapshot_source = None
    full.cache.refresh(log)
    assert states(cold.cache) == states(full.cache) != {}


@pytest.mark.parametrize("blob", ["other line", "missing"])
def test_lines_its_blobs_do_not_give_make_it_unusable(store, tmp_path: Path, capsys, monkeypatch,
                                                      blob: str):
    """When a covered note blob does not give the lines the snapshot names (bytes that differ,
    a blob that cannot be read), the cache is built from the notes, said once on stderr."""
    from ynm.errors import StoreError

    real = store.read_blob
    covered = {row[0] for row in _snapshot_rows(store.repo, "SELECT blob_id FROM shards")}
    calls = {"n": 0}

    def read_blob(blob_id: str) -> bytes:
        calls["n"] += 1
        if blob_id in covered and calls["n"] == 1:  # the load's first read only
            if blob == "missing":
                raise StoreError(f"cannot read blob {blob_id}: not found")
            data = real(blob_id)
            return data.replace(b"alpha", b"omega", 1) if b"alpha" in data else b"x" + data
        return real(blob_id)

    monkeypatch.setattr(store, "read_blob", read_blob)
    cold = mount(store, tmp_path / "cold.sqlite")
    report = cold.cache.refresh(store)
    assert report.snapshot is None and report.rebuilt
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "names record lines its note blobs do not" in err, err
    full = mount(store, tmp_path / "full.sqlite")
    full.cache.snapshot_source = None
    full.cache.refresh(store)
    assert states(cold.cache) == states(full.cache) != {}


def test_a_format_1_snapshot_still_loads(tmp_path: Path):
    """A snapshot an earlier ynm wrote (format 1: lines as text) is read as it was, and its
    cache is the same as one started from a format-2 snapshot."""
    repo, anchor = new_repo(tmp_path)
    log = GitNotesLog(repo.path, level="distributed", anchor=anchor)
    append(log, make_history(5, 6, 40), bad=True)
    first = mount(log, tmp_path / "first.sqlite")
    assert compact_mount(first).written
    two = mount(log, tmp_path / "two.sqlite")
    assert two.cache.refresh(log).snapshot is not None
    ref = snapshot_ref("distributed", NAME)
    commit = repo.references[ref].peel(pygit2.Commit)
    meta = json.loads(repo[commit.tree["meta.json"].id].data)
    state = _format_1_state(first.fresh_cache())
    first.close()
    _replace(repo, ref, state=state, meta=json.dumps(
        {**meta, "format": 1, "stateSha256": state_hash(state)}).encode())
    found, why = check_snapshot(repo, ref)
    assert why is None and found.meta.extra["format"] == 1
    one = mount(log, tmp_path / "one.sqlite")
    assert one.cache.refresh(log).snapshot == found.commit
    assert states(one.cache) == states(two.cache) != {}
    assert orphan_ids(one.cache) == orphan_ids(two.cache)
    assert one.cache.problems() == two.cache.problems() != []
    for word in WORDS:
        assert answers(one.cache, word) == answers(two.cache, word)


def test_lines_of_another_key_order_carry_their_id(tmp_path: Path):
    """A writer that puts the keys in another order (here: sorted) writes lines that do not
    begin with their id: they are still named by number, and carry the id beside it."""
    repo, anchor = new_repo(tmp_path)
    log = GitNotesLog(repo.path, level="distributed", anchor=anchor)
    history = [o for o in make_history(21, 5, 30) if o["op"] != "purge-marker"]
    batches: dict[ShardKey, list[str]] = defaultdict(list)
    for obj in history:
        r = parse_obj(obj)
        batches[ShardKey(r.level, r.namespace, r.type, r.bucket)].append(
            json.dumps(json.loads(dumps_record(r)), sort_keys=True, separators=(",", ":")))
    log.append({k: ("".join(x + "\n" for x in v).encode(), len(v)) for k, v in batches.items()})
    first = mount(log, tmp_path / "first.sqlite")
    assert compact_mount(first).written
    first.close()
    ids, numbered, total = _snapshot_rows(
        repo, "SELECT count(id), count(line_no), count(*) FROM records")[0]
    assert ids == numbered == total > 0
    cold = mount(log, tmp_path / "cold.sqlite")
    assert cold.cache.refresh(log).snapshot is not None
    full = mount(log, tmp_path / "full.sqlite")
    full.cache.snapshot_source = None
    full.cache.refresh(log)
    assert states(cold.cache) == states(full.cache) != {}
    assert orphan_ids(cold.cache) == orphan_ids(full.cache)


def test_a_state_holding_a_memory_twice_is_unusable(store, tmp_path: Path, capsys):
    """A state.bin whose memories repeat a memory id (intact as a blob, its hash recorded)
    fails when the cache's unique index is built: the cache is built from the notes."""
    repo = store.repo

    def repeat_an_id(conn: Any) -> None:
        first, second = [r[0] for r in conn.execute(
            "SELECT rowid FROM memories ORDER BY rowid LIMIT 2")]
        conn.execute("UPDATE memories SET memory_id = ? WHERE rowid IN (?, ?)",
                     ("01ARZ3NDEKTSV4RRFFQ69G5FAV", first, second))

    _, state = _with_state(repo, repeat_an_id)
    _replace(repo, snapshot_ref("distributed", NAME), state=state, rehash=True)
    cold = mount(store, tmp_path / "cold.sqlite")
    report = cold.cache.refresh(store)
    assert report.snapshot is None and report.rebuilt
    err = capsys.readouterr().err
    assert "state.bin is damaged (it does not hold a cache state)" in err, err
    full = mount(store, tmp_path / "full.sqlite")
    full.cache.snapshot_source = None
    full.cache.refresh(store)
    assert states(cold.cache) == states(full.cache) != {}


# ------------------------------------------------------------------ the full-text index carried


def _with_state(repo: pygit2.Repository, use: Any) -> tuple[Any, bytes]:
    """Open the level's snapshot state as a SQLite file, call ``use(conn)`` and commit;
    returns what it returned and the state compressed again (for :func:`_replace`)."""
    import sqlite3

    found, why = check_snapshot(repo, snapshot_ref("distributed", NAME))
    assert why is None
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "state.sqlite"
        path.write_bytes(zstandard.ZstdDecompressor().decompressobj().decompress(found.state))
        conn = sqlite3.connect(path)
        result = use(conn)
        conn.commit()
        conn.close()
        return result, zstandard.ZstdCompressor().compress(path.read_bytes())


def _state_tables(repo: pygit2.Repository) -> dict[str, Any]:
    """The tables of the level's snapshot state, and its fts_config rows."""

    def read(conn: Any) -> dict[str, Any]:
        tables = {name for (name,) in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table'")}
        config = (dict(conn.execute("SELECT k, v FROM fts_config"))
                  if "fts_config" in tables else None)
        return {"tables": tables, "config": config}

    return _with_state(repo, read)[0]


@pytest.mark.parametrize("carried_from", [0, 10**9])
def test_a_large_mounts_snapshot_carries_its_full_text_index(tmp_path: Path, monkeypatch,
                                                             carried_from: int):
    """From FTS_CARRIED_FROM memories the state holds FTS5's tables and a cold load takes them
    as they are; below it, it holds none and the load indexes the memories. Either way the
    cache answers as one built from the notes, FTS5 finds its index sound, and it keeps doing
    both after later writes read into it."""
    monkeypatch.setattr(snapshot, "FTS_CARRIED_FROM", carried_from)
    repo, anchor = new_repo(tmp_path)
    log = GitNotesLog(repo.path, level="distributed", anchor=anchor)
    history = make_history(11, 8, 60)
    append(log, history)
    first = mount(log, tmp_path / "first.sqlite")
    assert compact_mount(first).written
    first.close()
    held = _state_tables(repo)
    carried = carried_from == 0
    assert (set(schema.FTS_SHADOW) <= held["tables"]) is carried
    if carried:
        assert held["config"] == {"secure-delete": 1, "version": 4}

    cold = mount(log, tmp_path / "cold.sqlite")
    assert cold.cache.refresh(log).snapshot is not None
    full = mount(log, tmp_path / "full.sqlite")
    full.cache.snapshot_source = None
    full.cache.refresh(log)

    def same() -> None:
        assert states(cold.cache) == states(full.cache) != {}
        for word in WORDS:
            assert answers(cold.cache, word) == answers(full.cache, word)
        cold.cache.conn.execute("INSERT INTO fts(fts) VALUES ('integrity-check')")

    same()
    # later writes: new memories, a supersede, annotates and tombstones of loaded ones
    rnd = random.Random(12)
    again = []  # the loaded memories' supersedes, annotates and tombstones, as new records
    for obj in history[:20]:
        if obj["op"] != "create":
            ms = JAN_1 + SPAN_MS + rnd.randrange(10**6)
            again.append({**obj, "id": new_ulid(ms, rnd.randbytes), "recordedAt": iso(ms)})
    assert again
    append(log, make_history(13, 4, 30) + again)
    cold.cache.refresh(log)
    full.cache.refresh(log)
    same()
    cold.close()
    full.close()


def test_an_index_of_another_fts5_format_is_built_instead(tmp_path: Path, monkeypatch):
    """A carried index whose FTS5 file format (``fts_config`` version) is not this SQLite's is
    left aside: the memories are indexed from their rows, and the snapshot is still used."""
    monkeypatch.setattr(snapshot, "FTS_CARRIED_FROM", 0)
    repo, anchor = new_repo(tmp_path)
    store = GitNotesLog(repo.path, level="distributed", anchor=anchor)
    append(store, make_history(7, 6, 30))
    first = mount(store, tmp_path / "first.sqlite")
    assert compact_mount(first).written
    first.close()

    def another_format(conn: Any) -> None:
        assert conn.execute("SELECT v FROM fts_config WHERE k = 'version'").fetchone() == (4,)
        conn.execute("UPDATE fts_config SET v = 5 WHERE k = 'version'")
        conn.execute("DELETE FROM fts_data")  # an index this SQLite could not read at all

    _, state = _with_state(repo, another_format)
    _replace(repo, snapshot_ref("distributed", NAME), state=state, rehash=True)
    cold = mount(store, tmp_path / "cold.sqlite")
    assert cold.cache.refresh(store).snapshot is not None
    full = mount(store, tmp_path / "full.sqlite")
    full.cache.snapshot_source = None
    full.cache.refresh(store)
    assert states(cold.cache) == states(full.cache) != {}
    for word in WORDS:
        assert answers(cold.cache, word) == answers(full.cache, word)
    assert cold.cache.conn.execute(
        "SELECT v FROM fts_config WHERE k = 'version'").fetchone() == (4,)


@given(st.lists(st.one_of(st.binary(max_size=12), st.sampled_from(
    [b"\xe2\x82", b"\xe2\x82\xac", b"\xff", b"\xf0\x9f\x90", b"\xc3", b"\x85", b" \t"])),
    max_size=12))
def test_a_blob_decoded_whole_gives_each_line_as_decoding_it_alone(parts):
    """The loader decodes a note blob once and splits it (snapshot._shard_lines); the dump
    and ynm.model.jsonl read lines split first. Truncated or invalid UTF-8 next to a newline
    must not make the two differ."""
    data = b"\n".join(parts)
    assert data.decode("utf-8", errors="replace").split("\n") == [
        line.decode("utf-8", errors="replace") for line in data.split(b"\n")]
