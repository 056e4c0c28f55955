"""Sync of a git-notes shard log with a remote (reference/storage.md §4 and §7.23).

Every test uses real git: a bare ``origin.git`` holding one commit, and clones made with
``git clone`` (clones of one origin share the root commit, so the anchor agrees). Records are
written with ``GitNotesLog.append`` in fixed buckets, so the shards are deterministic.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pygit2
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.support.git import git, git_bytes, make_repo, root_commit
from tests.support.records import DROP, make_record, ulid

from ynm.index.cache import MountCache
from ynm.model.shards import ShardKey
from ynm.store.gitnotes import GitNotesLog
from ynm.store.sync import SyncResult, cat_sort_uniq, fetch_refspec, merge_shard, sync_log

NS = "common"
SEMANTIC = ShardKey("distributed", NS, "semantic", "2026-09")
EPISODIC = ShardKey("distributed", NS, "episodic", "2026-09")
REF = f"refs/notes/ynm/distributed/{NS}/semantic/2026-09"
EPISODIC_REF = f"refs/notes/ynm/distributed/{NS}/episodic/2026-09"
TRACKING = f"refs/notes/ynm-remote/origin/distributed/{NS}/semantic/2026-09"
SPEC = "+refs/notes/ynm/distributed/*:refs/notes/ynm-remote/origin/distributed/*"


# ---------------------------------------------------------------------------------- helpers


@pytest.fixture
def origin(tmp_path: Path) -> Path:
    """A bare origin with three commits on ``main`` (made by cloning a seed repository)."""
    seed = make_repo(tmp_path / "seed")
    path = tmp_path / "origin.git"
    git(tmp_path, "clone", "-q", "--bare", str(seed), str(path))
    return path


def clone(origin: Path, name: str) -> Path:
    path = origin.parent / name
    git(origin.parent, "clone", "-q", str(origin), str(path))
    return path


def open_log(path: Path, level: str = "distributed") -> GitNotesLog:
    return GitNotesLog(path, level=level, anchor=root_commit(path))


def line(**over) -> bytes:
    over.setdefault("level", "distributed")
    over.setdefault("namespace", NS)
    return json.dumps(make_record(**over), separators=(",", ":")).encode() + b"\n"


def write(log: GitNotesLog, key: ShardKey = SEMANTIC, n: int = 1, **over) -> list[str]:
    """Append ``n`` create records to ``key``; returns their ids."""
    ids = [ulid() for _ in range(n)]
    over.setdefault("type", key.type)
    over.setdefault("recordedAt", f"{key.bucket}-01T10:00:00.000Z")
    payload = b"".join(line(id=i, **over) for i in ids)
    log.append({key: (payload, n)})
    return ids


def annotate(log: GitNotesLog, memory_id: str, key: ShardKey = SEMANTIC) -> str:
    rid = ulid()
    payload = line(id=rid, memoryId=memory_id, op="annotate", type=key.type, tags=["checked"],
                   content=DROP, recordedAt=f"{key.bucket}-02T10:00:00.000Z")
    log.append({key: (payload, 1)})
    return rid


def ids_at(repo: Path, ref: str, anchor: str) -> list[str]:
    """Record ids in the note blob of ``ref`` (in blob order), read with git."""
    blob = git_bytes(repo, "cat-file", "blob", f"{ref}:{anchor}")
    return [json.loads(raw)["id"] for raw in blob.splitlines() if raw.strip()]


def refs(repo: Path, prefix: str = "refs/notes/") -> dict[str, str]:
    out = git(repo, "for-each-ref", "--format=%(refname) %(objectname)", prefix)
    return dict(row.split(" ") for row in out.splitlines())


# ------------------------------------------------------------------------- cat_sort_uniq


@pytest.mark.parametrize(
    ("ours", "theirs", "expected"),
    [
        (b"", b"", b""),
        (b"a\n", b"", b"a\n"),
        (b"", b"b\n", b"b\n"),
        (b"\n\nb\n\n", b"\na\n\n", b"a\nb\n"),  # empty lines dropped
        (b"b\nB\na\n", b"_\n1\n", b"1\nB\n_\na\nb\n"),  # byte order, not case-folded
        ("é\n".encode(), b"z\n", "z\né\n".encode()),  # UTF-8 bytes sort after ASCII
        (b"x\ny\nx\n", b"y\nx\n", b"x\ny\n"),  # duplicates on both sides removed
        (b"a\nc", b"b", b"a\nb\nc\n"),  # missing trailing newline handled
        (b"c", b"c\n", b"c\n"),  # a last line without newline equals the same line with one
        (b"a\r\n", b"a\n", b"a\na\r\n"),  # a CR is part of the line
    ],
)
def test_cat_sort_uniq_vectors(ours, theirs, expected):
    assert cat_sort_uniq(ours, theirs) == expected
    assert cat_sort_uniq(theirs, ours) == expected


# ------------------------------------------------------- the merge is git's merge, byte for byte


def _diverge(origin: Path) -> tuple[Path, GitNotesLog, str]:
    """Clones A and B share one record, then each adds their own to the same shard; A pushes
    and B fetches (``git fetch`` with the refspec). Returns B's path, log and anchor."""
    a, b = clone(origin, "a"), clone(origin, "b")
    la, lb = open_log(a), open_log(b)
    write(la)
    assert sync_log(la, "origin").pushed == [REF]
    shared = sync_log(lb, "origin")
    assert shared.fast_forwarded == shared.fetched == [REF]  # the shared base
    assert shared.merged == [] and shared.fetched_records == 1
    write(la, n=2)
    write(la, EPISODIC)  # a shard only A has
    sync_log(la, "origin")
    write(lb, n=2)
    git(b, "fetch", "-q", "origin")  # the refspec sync added brings the tracking refs
    assert TRACKING in refs(b)
    return b, lb, la.anchor


def _git_merge(repo: Path, local: str, tracking: str) -> None:
    git(repo, "notes", f"--ref={local}", "merge", "-s", "cat_sort_uniq", tracking)


def test_merge_is_byte_identical_to_git_notes_merge(origin, tmp_path):
    b, lb, anchor = _diverge(origin)
    before_local, before_remote = git(b, "rev-parse", REF), git(b, "rev-parse", TRACKING)
    copy = tmp_path / "b-copy"
    shutil.copytree(b, copy, symlinks=True)
    _git_merge(copy, REF, TRACKING)

    result = sync_log(lb, "origin", push=False)
    assert result.fetched == [EPISODIC_REF, REF]  # sorted
    assert result.fast_forwarded == [EPISODIC_REF] and result.merged == [REF]
    assert result.fetched_records == 3  # A's two new records here and its episodic one
    assert result.conflicts == [] and result.pushed == []

    ours = git_bytes(b, "cat-file", "blob", f"{REF}:{anchor}")
    theirs = git_bytes(copy, "cat-file", "blob", f"{REF}:{anchor}")
    assert ours == theirs
    assert len(ours.splitlines()) == 5  # 1 shared + 2 + 2, the shared line once
    assert ours.splitlines() == sorted(ours.splitlines())
    assert git(b, "rev-parse", f"{REF}^{{tree}}") == git(copy, "rev-parse", f"{REF}^{{tree}}")

    ynm_commit = git_bytes(b, "cat-file", "commit", REF)
    git_commit = git_bytes(copy, "cat-file", "commit", REF)
    message = f"Merged notes from {TRACKING} into {REF}".encode()
    assert git_commit.split(b"\n\n", 1)[1] == message  # git writes no trailing newline
    assert ynm_commit.split(b"\n\n", 1)[1] == message
    parents = git(b, "rev-list", "--parents", "-n1", REF).split()[1:]
    assert parents == [before_local, before_remote]
    assert git(copy, "rev-list", "--parents", "-n1", REF).split()[1:] == parents


@pytest.mark.parametrize(
    ("base", "ours", "theirs"),
    [
        (b"m\n", b"m\nb\n\na", b"m\nA\nb\n"),  # empty line, no final newline, shared line
        (b"", "é\nz\n".encode(), b"z\nZ\r\nz\n"),  # non-ASCII, CR, a duplicate in one side
        (b"x\n", b"x\ny\n", b"x\n"),  # theirs unchanged since the base: ours as is
        (b"x\n", b"x\n", b"x\nq\n"),  # ours unchanged since the base: theirs as is
    ],
)
def test_merge_shard_vectors_match_git(tmp_path, base, ours, theirs):
    """merge_shard on hand-made diverged notes commits gives git's tree (so git's blobs)."""
    repo = make_repo(tmp_path / "r", commits=2)
    anchor = root_commit(repo)
    second = git(repo, "rev-parse", "HEAD")  # the remote side also notes this commit

    def notes_commit(content: bytes, parent: str | None, extra: bytes | None = None) -> str:
        blob = git(repo, "hash-object", "-w", "--stdin", input=content)
        entries = f"100644 blob {blob}\t{anchor}\n"
        if extra is not None:
            eblob = git(repo, "hash-object", "-w", "--stdin", input=extra)
            entries += f"100644 blob {eblob}\t{second}\n"
        tree = git(repo, "mktree", input=entries.encode())
        args = ["commit-tree", tree, "-m", "ynm: test"] + (["-p", parent] if parent else [])
        return git(repo, *args)

    base_c = notes_commit(base, None)
    local_c = notes_commit(ours, base_c)
    remote_c = notes_commit(theirs, base_c, extra=b"a note on another commit\n")
    git(repo, "update-ref", REF, local_c)
    git(repo, "update-ref", TRACKING, remote_c)
    copy = tmp_path / "copy"
    shutil.copytree(repo, copy, symlinks=True)
    _git_merge(copy, REF, TRACKING)

    log = open_log(repo)
    merged = merge_shard(log, REF, TRACKING, local_c, remote_c)
    assert refs(repo)[REF] == local_c  # merge_shard moves no ref
    assert git(repo, "rev-parse", f"{merged}^{{tree}}") == git(copy, "rev-parse", f"{REF}^{{tree}}")
    assert git_bytes(repo, "cat-file", "blob", f"{merged}:{anchor}") == git_bytes(
        copy, "cat-file", "blob", f"{REF}:{anchor}")
    assert git(repo, "rev-list", "--parents", "-n1", merged).split()[1:] == [local_c, remote_c]
    assert git_bytes(repo, "cat-file", "commit", merged).split(b"\n\n", 1)[1] == (
        git_bytes(copy, "cat-file", "commit", REF).split(b"\n\n", 1)[1])


# ------------------------------------------------------------------ round trips and safety


def test_unpushed_local_record_survives_a_pull_only_sync(origin):
    a, b = clone(origin, "a"), clone(origin, "b")
    la, lb = open_log(a), open_log(b)
    theirs = write(la, n=2)
    sync_log(la, "origin")
    mine = write(lb)
    result = sync_log(lb, "origin", push=False)
    assert result.merged == result.fetched == [REF] and result.pushed == []
    assert result.fetched_records == 2 and result.fast_forwarded == []
    assert sorted(ids_at(b, REF, lb.anchor)) == sorted(theirs + mine)
    assert sorted(ids_at(origin, REF, lb.anchor)) == sorted(theirs)  # never pushed
    # the fetch is forced into the tracking namespace only
    assert refs(b)[TRACKING] == refs(origin)[REF]


def test_local_ahead_is_a_noop_merge_then_a_fast_forward_push(origin):
    a = clone(origin, "a")
    la = open_log(a)
    write(la)
    sync_log(la, "origin")
    write(la)
    git(a, "fetch", "-q", "origin")
    before = refs(a)[REF]
    result = sync_log(la, "origin")
    assert result.merged == [] and result.pushed == [REF] and result.retries == 0
    assert refs(a)[REF] == before == refs(origin)[REF]


def test_missing_remote_result_shape(tmp_path):
    repo = make_repo(tmp_path / "solo", commits=1)
    log = open_log(repo)
    write(log)
    result = sync_log(log, "origin")
    assert result == SyncResult(
        remote="origin",
        skipped='remote "origin" is not configured; add it with '
                "`git remote add origin <url>` and sync again",
    )  # skipped, never a conflict
    assert list(result.to_obj()) == ["remote", "fetched", "fastForwarded", "merged", "pushed",
                                     "conflicts", "retries", "skipped"]


def test_sync_adds_the_fetch_refspec_unless_dry_run(origin):
    a = clone(origin, "a")
    la = open_log(a)
    write(la)

    def fetch() -> list[str]:
        return git(a, "config", "--get-all", "remote.origin.fetch").splitlines()

    assert SPEC not in fetch()
    assert sync_log(la, "origin", dry_run=True).refspec_added is None
    assert SPEC not in fetch()
    result = sync_log(la, "origin")
    assert result.refspec_added == SPEC == fetch_refspec("origin")
    assert fetch() == ["+refs/heads/*:refs/remotes/origin/*", SPEC]
    assert sync_log(la, "origin").refspec_added is None
    assert fetch().count(SPEC) == 1


def test_dry_run_reports_and_moves_no_working_ref(origin):
    a, b = clone(origin, "a"), clone(origin, "b")
    la, lb = open_log(a), open_log(b)
    write(la)
    write(la, EPISODIC)
    sync_log(la, "origin")
    write(lb)
    before_b, before_origin = refs(b, "refs/"), refs(origin)
    result = sync_log(lb, "origin", dry_run=True)
    assert result.fetched == [EPISODIC_REF, REF]  # what would move, and how
    assert result.merged == [REF] and result.fast_forwarded == [EPISODIC_REF]
    assert result.fetched_records == 2
    assert result.pushed == [REF] and result.pushed_records == 1  # b's record origin lacks
    assert result.conflicts == []
    assert refs(b, "refs/") == before_b  # not even a tracking ref moved
    assert refs(origin) == before_origin


def test_personal_refs_in_the_same_clone_never_reach_the_remote(origin):
    a = clone(origin, "a")
    distributed, personal = open_log(a), open_log(a, level="personal")
    write(distributed)
    pkey = ShardKey("personal", "user/david", "semantic", "2026-09")
    write(personal, pkey, level="personal", namespace="user/david")
    result = sync_log(distributed, "origin")
    assert result.pushed == [REF]
    assert list(refs(origin)) == [REF]
    assert refs(origin, "refs/notes/ynm/personal/") == {}


def test_personal_log_syncs_only_with_the_remote_it_is_given(origin, tmp_path):
    store = tmp_path / "store.git"
    git(tmp_path, "clone", "-q", "--bare", str(origin), str(store))
    git(store, "remote", "remove", "origin")
    backup = tmp_path / "backup.git"
    git(tmp_path, "init", "-q", "--bare", str(backup))
    git(store, "remote", "add", "backup", str(backup))
    log = open_log(store, level="personal")
    pkey = ShardKey("personal", "user/david", "semantic", "2026-09")
    ids = write(log, pkey, level="personal", namespace="user/david")
    result = sync_log(log, "backup")
    pref = "refs/notes/ynm/personal/user/david/semantic/2026-09"
    assert result.pushed == [pref] and result.refspec_added is None
    assert ids_at(backup, pref, log.anchor) == ids
    assert refs(origin) == {}


# ------------------------------------------------------------------------------ push race


def test_push_race_is_fetched_merged_and_retried(origin):
    a, b = clone(origin, "a"), clone(origin, "b")
    la, lb = open_log(a), open_log(b)
    base = write(la)
    sync_log(la, "origin")
    sync_log(lb, "origin")
    mine = write(la)
    theirs: list[str] = []
    rounds: list[int] = []

    def someone_else_pushes(round_: int) -> None:
        rounds.append(round_)
        if round_ == 0:
            theirs.extend(write(lb))
            assert sync_log(lb, "origin").pushed == [REF]

    result = sync_log(la, "origin", before_push=someone_else_pushes)
    assert result.retries >= 1
    assert rounds == [0, 1]
    assert result.conflicts == [] and result.pushed == [REF]
    assert REF in result.merged
    assert sorted(ids_at(origin, REF, la.anchor)) == sorted(base + mine + theirs)
    assert refs(origin)[REF] == refs(a)[REF]
    # the result is a merge of ours and theirs, so the push was a fast-forward
    assert len(git(a, "rev-list", "--parents", "-n1", REF).split()) == 3


def test_push_rejected_every_round_is_a_conflict(origin):
    a, b = clone(origin, "a"), clone(origin, "b")
    la, lb = open_log(a), open_log(b)
    write(la)
    sync_log(la, "origin")
    sync_log(lb, "origin")
    write(la)

    def always_race(_round: int) -> None:
        write(lb)
        sync_log(lb, "origin")

    result = sync_log(la, "origin", before_push=always_race)
    assert result.retries == 3
    assert result.conflicts == ["push to origin still rejected after 3 rounds"]


# ---------------------------------------------------------------------------------- mirror


def test_mirror_remote_pushes_to_the_url_and_rewinds_no_branch(origin, tmp_path):
    mirror = tmp_path / "mirror.git"
    git(tmp_path, "clone", "-q", "--mirror", str(origin), str(mirror))
    other = clone(origin, "other")
    lo = open_log(other)
    theirs = write(lo)
    sync_log(lo, "origin")
    (other / "new.txt").write_text("new\n")
    git(other, "add", "new.txt")
    git(other, "commit", "-q", "-m", "moved on")
    git(other, "push", "-q", "origin", "main")
    main_on_origin = git(origin, "rev-parse", "main")

    log = open_log(mirror)
    mine = write(log)
    result = sync_log(log, "origin")
    assert result.conflicts == [] and result.pushed == [REF] and REF in result.merged
    assert result.refspec_added is None
    assert git(mirror, "config", "--get-all", "remote.origin.fetch") == "+refs/*:refs/*"
    assert sorted(ids_at(origin, REF, log.anchor)) == sorted(theirs + mine)
    assert git(origin, "rev-parse", "main") == main_on_origin  # the branch did not rewind


@pytest.mark.parametrize("value", ["yes", "on", "1"])
def test_mirror_flag_is_read_as_a_git_boolean(origin, tmp_path, value):
    """``remote.<r>.mirror`` is a git boolean (the reference reads it with
    ``git config --type=bool``); any spelling of true makes sync push to the URL."""
    mirror = tmp_path / "mirror.git"
    git(tmp_path, "clone", "-q", "--mirror", str(origin), str(mirror))
    git(mirror, "config", "remote.origin.mirror", value)
    log = open_log(mirror)
    mine = write(log)
    result = sync_log(log, "origin")
    assert result.conflicts == [] and result.pushed == [REF]
    assert ids_at(origin, REF, log.anchor) == mine


# --------------------------------------------------------------------- git stays consistent


def test_fsck_is_clean_after_merges(origin):
    a, b = clone(origin, "a"), clone(origin, "b")
    la, lb = open_log(a), open_log(b)
    for _ in range(3):
        write(la)
        write(lb)
        write(lb, EPISODIC)
        sync_log(la, "origin")
        git(b, "pack-refs", "--all")  # packed refs are read like loose ones
        sync_log(lb, "origin")
    sync_log(la, "origin")
    assert refs(a, "refs/notes/ynm/") == refs(b, "refs/notes/ynm/") == refs(origin)
    assert len(ids_at(origin, REF, la.anchor)) == 6
    for repo in (a, b, origin):
        proc = subprocess.run(["git", "fsck", "--strict", "--no-dangling", "--no-progress"],
                              cwd=repo, capture_output=True, text=True)
        assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == "", proc.stderr


# -------------------------------------------------------------------- the cache follows cheaply


def test_cache_reads_a_fast_forwarded_shard_by_tail_and_a_merged_one_whole(origin, tmp_path):
    a, b = clone(origin, "a"), clone(origin, "b")
    la, lb = open_log(a), open_log(b)
    (m1,) = write(la)
    sync_log(la, "origin")
    write(lb, EPISODIC)  # a shard no sync will touch
    sync_log(lb, "origin")
    cache = MountCache(tmp_path / "b.sqlite", "project")
    assert cache.refresh(lb).rebuilt

    # fast-forward: the shard grows at its end, the cache reads only the tail
    write(la)
    sync_log(la, "origin")
    assert sync_log(lb, "origin", push=False).fast_forwarded == [REF]
    report = cache.refresh(lb)
    assert (report.shards_tail, report.shards_full, report.shards_removed) == (1, 0, 0)
    assert report.records_added == 1 and report.memories_folded == 1
    assert cache.is_fresh(lb)

    # merge: the blob is re-sorted, so the merged shard is re-read whole (and only it). A's
    # records get the smaller ids, so B's own blob is no prefix of the sorted merge.
    (m4,) = write(la)
    annotate(la, m1)
    write(lb)
    assert cache.refresh(lb).shards_tail == 1
    sync_log(la, "origin")
    assert sync_log(lb, "origin", push=False).merged == [REF]
    report = cache.refresh(lb)
    assert (report.shards_tail, report.shards_full, report.shards_removed) == (0, 1, 0)
    assert report.records_added == 2 and report.records_removed == 0
    assert report.memories_folded == 2  # m4 is new and m1 gained an annotation
    assert cache.get_state(m4) is not None
    assert cache.is_fresh(lb)
    assert cache.counts()["memories"] == 5
    cache.close()


def test_push_only_sync_reports_a_rejection(origin):
    """With ``pull`` off a rejected push cannot be repaired; it is still a rejection-type error,
    so it ends as a conflict in the result (reference/storage.md §4: retried, then ``push to
    <remote> still rejected after 3 rounds``), not as an exception."""
    a, b = clone(origin, "a"), clone(origin, "b")
    la, lb = open_log(a), open_log(b)
    write(la)
    sync_log(la, "origin")
    write(lb)  # b diverges from origin without fetching
    result = sync_log(lb, "origin", pull=False)
    assert result.pushed == []
    assert len(result.conflicts) == 1 and "rejected" in result.conflicts[0]


def test_merge_without_git_identity_in_the_environment(origin, monkeypatch):
    a, b = clone(origin, "a"), clone(origin, "b")
    la, lb = open_log(a), open_log(b)
    write(la)
    sync_log(la, "origin")
    write(lb)
    for name in ("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME",
                 "GIT_COMMITTER_EMAIL"):
        monkeypatch.delenv(name)
    result = sync_log(lb, "origin")
    assert result.conflicts == [] and result.merged == [REF] and result.pushed == [REF]
    assert git(b, "log", "-1", "--format=%an%ae", REF)


# ------------------------------------------------------------- the pull moves only what changed


def months(n: int) -> list[ShardKey]:
    """``n`` semantic shards of distinct months (2026-01, 2026-02, ...)."""
    return [ShardKey("distributed", NS, "semantic", f"20{26 + i // 12}-{i % 12 + 1:02d}")
            for i in range(n)]


def sharing(origin: Path, keys: list[ShardKey]) -> tuple[Path, GitNotesLog, GitNotesLog]:
    """Clone ``b`` of ``origin`` and the logs of clones ``a`` and ``b`` (``(b, la, lb)``),
    after ``a`` wrote one record into each shard of ``keys`` and synced, and ``b`` pulled
    them: both hold the same tips."""
    a, b = clone(origin, "a"), clone(origin, "b")
    la, lb = open_log(a), open_log(b)
    for key in keys:
        write(la, key)
    sync_log(la, "origin")
    sync_log(lb, "origin", push=False)
    return b, la, lb


def record_fetches(monkeypatch: pytest.MonkeyPatch, command: str = "fetch") -> list[list[str]]:
    """The refspecs of every ``git fetch`` (``command``) sync runs from now on, one list per
    run."""
    from ynm.store import sync as sync_mod

    runs: list[list[str]] = []
    real = sync_mod.Transport.run

    def run(self, *args: str, check: bool = True):
        if args and args[0] == command:
            runs.append([a for a in args if a.startswith(("+", "refs/"))])
        return real(self, *args, check=check)

    monkeypatch.setattr(sync_mod.Transport, "run", run)
    return runs


def shard_ref(key: ShardKey) -> str:
    return f"refs/notes/ynm/{key.level}/{key.namespace}/{key.type}/{key.bucket}"


def tracking_ref(key: ShardKey) -> str:
    return f"refs/notes/ynm-remote/origin/{key.level}/{key.namespace}/{key.type}/{key.bucket}"


def test_a_pull_fetches_new_shards_together_and_each_changed_shard_alone(origin, monkeypatch):
    a, b = clone(origin, "a"), clone(origin, "b")
    la, lb = open_log(a), open_log(b)
    keys = months(4)
    for key in keys:
        write(la, key)
    sync_log(la, "origin")
    runs = record_fetches(monkeypatch)
    assert sync_log(lb, "origin", push=False).fetched_records == 4
    # shards new to b have no old version to delta against: one fetch brings them all
    assert runs == [sorted(f"+{shard_ref(k)}:{tracking_ref(k)}" for k in keys)]

    runs.clear()
    first = write(la, keys[1], n=2)
    second = write(la, keys[3])
    sync_log(la, "origin")
    result = sync_log(lb, "origin", push=False)
    assert result.fetched_records == 3 and result.fast_forwarded == [shard_ref(keys[1]),
                                                                     shard_ref(keys[3])]
    assert runs == [[f"+{shard_ref(keys[1])}:{tracking_ref(keys[1])}"],
                    [f"+{shard_ref(keys[3])}:{tracking_ref(keys[3])}"]]
    assert set(first) <= set(ids_at(b, shard_ref(keys[1]), lb.anchor))
    assert set(second) <= set(ids_at(b, shard_ref(keys[3]), lb.anchor))
    assert refs(b, "refs/notes/ynm/") == {k: v for k, v in refs(origin).items()
                                          if k.startswith("refs/notes/ynm/")}

    runs.clear()
    result = sync_log(lb, "origin", push=False)  # nothing changed: no transfer at all
    assert runs == [] and result.fetched == [] and result.fetched_records == 0


def test_a_remote_tip_held_here_moves_the_tracking_ref_without_a_fetch(origin, monkeypatch):
    keys = months(3)
    b, _la, lb = sharing(origin, keys)
    before = refs(b, "refs/notes/ynm-remote/")
    assert len(before) == 3
    for ref in before:
        git(b, "update-ref", "-d", ref)
    runs = record_fetches(monkeypatch)
    result = sync_log(lb, "origin", push=False)
    assert runs == [] and result.fetched == []
    assert refs(b, "refs/notes/ynm-remote/") == before


def test_a_changed_shard_held_here_without_a_tracking_ref_is_fetched_alone(origin,
                                                                           monkeypatch):
    keys = months(3)
    b, la, lb = sharing(origin, keys)
    for key in keys:
        git(b, "update-ref", "-d", tracking_ref(key))
    write(la, keys[0])
    write(la, keys[2])
    sync_log(la, "origin")
    runs = record_fetches(monkeypatch)
    result = sync_log(lb, "origin", push=False)
    assert runs == [[f"+{shard_ref(keys[0])}:{tracking_ref(keys[0])}"],
                    [f"+{shard_ref(keys[2])}:{tracking_ref(keys[2])}"]]
    assert result.fast_forwarded == [shard_ref(keys[0]), shard_ref(keys[2])]
    assert result.fetched_records == 2


def test_a_shard_removed_on_the_remote_keeps_its_tracking_ref(origin):
    a, b = clone(origin, "a"), clone(origin, "b")
    la, lb = open_log(a), open_log(b)
    write(la, SEMANTIC)
    write(la, EPISODIC)
    sync_log(la, "origin")
    sync_log(lb, "origin", push=False)
    git(origin, "update-ref", "-d", EPISODIC_REF)
    write(la, SEMANTIC)
    sync_log(la, "origin", pull=False)
    before = refs(b)
    result = sync_log(lb, "origin", push=False)
    assert result.fast_forwarded == [REF]
    after = refs(b)
    assert after[EPISODIC_REF] == before[EPISODIC_REF]  # nothing lost here
    assert after["refs/notes/ynm-remote/origin/distributed/common/episodic/2026-09"] == \
        before["refs/notes/ynm-remote/origin/distributed/common/episodic/2026-09"]


def test_a_push_sends_each_shard_the_remote_holds_alone_and_new_ones_together(origin,
                                                                             monkeypatch):
    keys = months(4)
    b, _la, lb = sharing(origin, keys[:3])
    mine = [write(lb, keys[0]), write(lb, keys[2]), write(lb, keys[3])]
    runs = record_fetches(monkeypatch, "push")
    result = sync_log(lb, "origin")
    glob = "refs/notes/ynm/distributed/*:refs/notes/ynm/distributed/*"
    assert runs == [[f"{shard_ref(keys[0])}:{shard_ref(keys[0])}"],
                    [f"{shard_ref(keys[2])}:{shard_ref(keys[2])}"], [glob]]
    assert result.pushed == sorted(shard_ref(k) for k in (keys[0], keys[2], keys[3]))
    assert result.pushed_records == 3 and result.retries == 0 and result.conflicts == []
    for key, ids in zip((keys[0], keys[2], keys[3]), mine, strict=True):
        assert set(ids) <= set(ids_at(origin, shard_ref(key), lb.anchor))
    assert refs(b, "refs/notes/ynm/") == {k: v for k, v in refs(origin).items()
                                          if k.startswith("refs/notes/ynm/")}


def test_a_push_of_single_shards_rejected_midway_is_merged_and_retried(origin):
    keys = months(3)
    _b, la, lb = sharing(origin, keys)
    mine = [write(lb, key) for key in keys]
    theirs: list[str] = []

    def race(round_: int) -> None:
        if round_ == 0:  # a pushes to the middle shard between b's pull and b's push
            theirs.extend(write(la, keys[1]))
            sync_log(la, "origin")

    result = sync_log(lb, "origin", before_push=race)
    assert result.retries == 1 and result.conflicts == []
    assert result.pushed == sorted(shard_ref(k) for k in keys) and result.pushed_records == 3
    assert set(theirs + mine[1]) <= set(ids_at(origin, shard_ref(keys[1]), lb.anchor))
    for key, ids in zip(keys, mine, strict=True):
        assert set(ids) <= set(ids_at(origin, shard_ref(key), lb.anchor))


def meet_in_pairs(monkeypatch: pytest.MonkeyPatch, command: str) -> list[list[str]]:
    """Make the first two ``git <command>`` runs of sync wait for each other (10 s at most)
    before they start: run one after the other, the first waits in vain and the barrier
    breaks. Returns the refspecs of the runs that met."""
    import threading

    from ynm.store import sync as sync_mod

    monkeypatch.setattr(sync_mod, "TRANSFER_JOBS", 2)
    barrier = threading.Barrier(2, timeout=10)
    met: list[list[str]] = []
    real = sync_mod.Transport.run

    def run(self, *args: str, check: bool = True):
        if args and args[0] == command and len(met) < 2:
            met.append([a for a in args if a.startswith(("+", "refs/"))])
            barrier.wait()
        return real(self, *args, check=check)

    monkeypatch.setattr(sync_mod.Transport, "run", run)
    return met


def test_changed_shards_are_fetched_side_by_side_without_fetch_head(origin, monkeypatch):
    keys = months(3)
    b, la, lb = sharing(origin, keys)
    (b / ".git" / "FETCH_HEAD").unlink(missing_ok=True)
    mine = {key: write(la, key) for key in keys}
    sync_log(la, "origin")
    met = meet_in_pairs(monkeypatch, "fetch")
    result = sync_log(lb, "origin", push=False)
    assert sorted(map(tuple, met)) == [(f"+{shard_ref(k)}:{tracking_ref(k)}",) for k in keys[:2]]
    assert result.fast_forwarded == [shard_ref(k) for k in keys] and result.fetched_records == 3
    for key, ids in mine.items():
        assert set(ids) <= set(ids_at(b, shard_ref(key), lb.anchor))
    assert not (b / ".git" / "FETCH_HEAD").exists()


def test_shards_the_remote_holds_are_pushed_side_by_side(origin, monkeypatch):
    keys = months(3)
    _b, _la, lb = sharing(origin, keys)
    mine = {key: write(lb, key) for key in keys}
    met = meet_in_pairs(monkeypatch, "push")
    result = sync_log(lb, "origin")
    assert sorted(map(tuple, met)) == [(f"{shard_ref(k)}:{shard_ref(k)}",) for k in keys[:2]]
    assert result.pushed == [shard_ref(k) for k in keys] and result.pushed_records == 3
    assert result.conflicts == [] and result.retries == 0
    for key, ids in mine.items():
        assert set(ids) <= set(ids_at(origin, shard_ref(key), lb.anchor))


@pytest.mark.parametrize("shards", [3, 12])
def test_each_changed_shard_arrives_as_a_small_delta_of_its_own_old_blob(origin, shards):
    """Every note blob sits at the same path; fetched together, git pairs a shard's new blob
    with whichever old blobs fall in its window (at most ``pack.window`` = 10 of them), so
    beyond ten shards some arrive whole. Fetched alone, each is a delta of the appended
    lines. The received packs are kept (``fetch.unpackLimit=1``) to read how each came."""
    import random

    rng = random.Random(shards)
    a, b = clone(origin, "a"), clone(origin, "b")
    la, lb = open_log(a), open_log(b)
    keys = months(shards)
    for key in keys:  # ~60 KB of incompressible, unrelated lines per shard
        write(la, key, n=400, content=f"{rng.getrandbits(512):0128x}")
    sync_log(la, "origin")
    sync_log(lb, "origin", push=False)
    for key in keys:
        write(la, key, content="one more")
    sync_log(la, "origin")
    git(b, "config", "fetch.unpackLimit", "1")
    packs_before = set((b / ".git/objects/pack").glob("*.idx"))
    result = sync_log(lb, "origin", push=False)
    assert result.fetched_records == shards and len(result.fast_forwarded) == shards
    new_blobs = {git(b, "rev-parse", f"{shard_ref(k)}:{lb.anchor}") for k in keys}
    stored: dict[str, tuple[int, bool]] = {}
    for idx in set((b / ".git/objects/pack").glob("*.idx")) - packs_before:
        for row in git(b, "verify-pack", "-v", str(idx)).splitlines():
            parts = row.split()
            if len(parts) >= 5 and parts[1] == "blob":
                stored[parts[0]] = (int(parts[2]), len(parts) == 7)  # size, is a delta
    assert new_blobs <= stored.keys()
    for blob in new_blobs:
        size, is_delta = stored[blob]
        assert is_delta and size < 2_000, (blob, size, is_delta)


def test_each_pushed_shard_leaves_as_a_small_delta_of_its_own_old_blob(origin):
    """The push side of the test above: the origin keeps what it receives as packs
    (``receive.unpackLimit=1``), and each shard's new blob came as a delta of its appended
    lines."""
    import random

    rng = random.Random(7)
    a, b = clone(origin, "a"), clone(origin, "b")
    la, lb = open_log(a), open_log(b)
    keys = months(12)
    for key in keys:
        write(la, key, n=400, content=f"{rng.getrandbits(512):0128x}")
    sync_log(la, "origin")
    sync_log(lb, "origin", push=False)
    git(origin, "config", "receive.unpackLimit", "1")
    packs_before = set((origin / "objects/pack").glob("*.idx"))
    for key in keys:
        write(lb, key, content="one more")
    result = sync_log(lb, "origin")
    assert result.pushed_records == 12 and len(result.pushed) == 12
    new_blobs = {git(b, "rev-parse", f"{shard_ref(k)}:{lb.anchor}") for k in keys}
    stored: dict[str, tuple[int, bool]] = {}
    for idx in set((origin / "objects/pack").glob("*.idx")) - packs_before:
        for row in git(origin, "verify-pack", "-v", str(idx)).splitlines():
            parts = row.split()
            if len(parts) >= 5 and parts[1] == "blob":
                stored[parts[0]] = (int(parts[2]), len(parts) == 7)
    assert new_blobs <= stored.keys()
    for blob in new_blobs:
        size, is_delta = stored[blob]
        assert is_delta and size < 2_000, (blob, size, is_delta)


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        (b"", b"a\nb\n", 2),
        (b"a\nb\n", b"a\nb\nc\n", 1),  # an append: only the tail counts
        (b"a\nb\n", b"a\nb\na\nc\nc\n", 1),  # appended copies of old or repeated lines: once
        (b"ab\nb\n", b"ab\nb\na\n", 1),  # "a" is part of an old line, not an old line
        (b"a\nxb\n", b"a\nxb\nb\n", 1),  # "b" ends an old line but is not one
        (b"a\nb\n", b"b\nc\na\n", 1),  # a merge re-sorts: every line is compared
        (b"a\nb", b"a\nbc\n", 1),  # the old blob without a final newline is no prefix
        (b"a\nb\n", b"a\nc\nb\nd\n", 2),  # same size prefix test fails: every line compared
        (b"x\n", b"x\n" + b"".join(b"%d\n" % i for i in range(100)) + b"x\n", 100),  # long tail
        (b"a\nb\n", b"a\nb\na\nb\nc\n", 1),  # the first old line, then its neighbour: held
        (b"x\nb\nc\n", b"x\nb\nc\nc\nb\nd\n", 1),  # held lines side by side in the old blob
        (b"x\nab\nabc\n", b"x\nab\nabc\nabc\nab\nabcd\n", 1),  # one line begins another
        (b"x\nabc\n", b"x\nabc\na.c\n", 1),  # a line is matched as bytes, not as a pattern
    ],
)
def test_records_new_to_a_shard_are_counted_from_its_tail(tmp_path, old, new, expected):
    from ynm.store.sync import _lines_not_in

    repo = pygit2.init_repository(str(tmp_path / "r.git"), bare=True)
    before = repo.create_blob(old)
    assert _lines_not_in(repo, new, before) == expected
    assert _lines_not_in(repo, new, None) == len({line for line in new.split(b"\n") if line})


@pytest.fixture(scope="module")
def blob_repo(tmp_path_factory):
    """One bare repository for the blobs of many generated examples."""
    return pygit2.init_repository(str(tmp_path_factory.mktemp("blobs") / "r.git"), bare=True)


@settings(max_examples=300, deadline=None)
@given(old=st.lists(st.sampled_from([b"a", b"ab", b"b", b"a.b", b"ba", b"(", b"a\\"]),
                    min_size=1, max_size=8),
       tail=st.lists(st.sampled_from([b"a", b"ab", b"b", b"a.b", b"abc", b"(", b"a\\", b"z"]),
                     max_size=8))
def test_records_new_to_a_shard_match_the_definition_for_any_tail(blob_repo, old, tail):
    """An append's count is the definition's, whichever old lines the tail repeats, begins
    or sits beside (lines of regex metacharacters included)."""
    from ynm.store.sync import _lines_not_in

    before_bytes = b"".join(line + b"\n" for line in old)
    new = before_bytes + b"".join(line + b"\n" for line in tail)
    before = blob_repo.create_blob(before_bytes)
    assert _lines_not_in(blob_repo, new, before) == len(set(tail) - set(old))
