"""The git-notes shard log against real git (reference/storage.md §3.4-3.7, §7.13-7.15, §8)."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from tests.support.git import git, git_bytes, init_repo, root_commit
from ynm.errors import LockTimeout, MountLevelMismatch, StoreConflict
from ynm.model.shards import ShardKey
from ynm.store.anchor import ensure_bare_store, find_root_commit
from ynm.store.gitnotes import GitNotesLog, append_message


def line(n: int | str) -> bytes:
    return b'{"id":"' + str(n).encode() + b'"}\n'


def lines(*ids: int | str) -> bytes:
    return b"".join(line(i) for i in ids)


@pytest.fixture
def log(repo: Path, anchor: str) -> GitNotesLog:
    return GitNotesLog(repo, level="personal", anchor=anchor)


def make_commit(repo: Path, tree: str, message: str, parent: str | None = None) -> str:
    args = ["commit-tree", tree, "-m", message] + (["-p", parent] if parent else [])
    return git(repo, *args)


def mktree(repo: Path, entries: list[tuple[str, str, str]]) -> str:
    """``git mktree`` from (mode, sha, name) triples."""
    kinds = {"100644": "blob", "040000": "tree"}
    text = "".join(f"{mode} {kinds[mode]} {sha}\t{name}\n" for mode, sha, name in entries)
    return git(repo, "mktree", input=text.encode())


def hash_blob(repo: Path, data: bytes) -> str:
    return git(repo, "hash-object", "-w", "--stdin", input=data)


# --------------------------------------------------------------------------- empty and basics


def test_empty_log(log: GitNotesLog) -> None:
    assert log.tips() == {}
    assert log.read_all() == {}
    assert log.append({}) == []
    assert log.health_details()["shards"] == 0


def test_append_then_git_notes_show_returns_the_bytes(
    repo: Path, anchor: str, log: GitNotesLog, key: ShardKey
) -> None:
    payload = lines(1, 2, "ünïcode")
    [written] = log.append({key: (payload, 3)})
    assert git_bytes(repo, "notes", f"--ref={key.ref}", "show", anchor) == payload
    assert written.key == key
    assert written.ref == key.ref
    assert written.previous is None
    assert written.previous_blob_id is None
    assert written.previous_size == 0
    assert written.revision == git(repo, "rev-parse", key.ref)
    assert written.blob_id == git(repo, "rev-parse", f"{key.ref}:{anchor}")
    # The only ref ynm made is the shard ref, and git notes lists the anchor.
    assert git(repo, "for-each-ref", "--format=%(refname)", "refs/notes/") == key.ref
    assert git(repo, "notes", f"--ref={key.ref}", "list").split() == [written.blob_id, anchor]


def test_tree_holds_only_the_flat_anchor_note(
    repo: Path, anchor: str, log: GitNotesLog, key: ShardKey
) -> None:
    log.append({key: (line(1), 1)})
    listing = git(repo, "ls-tree", "-r", key.ref)
    blob = git(repo, "rev-parse", f"{key.ref}:{anchor}")
    assert listing == f"100644 blob {blob}\t{anchor}"


def test_commit_subjects_newest_first_and_history_chain(
    repo: Path, log: GitNotesLog, key: ShardKey
) -> None:
    first = log.append({key: (line(1), 1)})[0]
    second = log.append({key: (lines(2, 3), 2)})[0]
    subjects = git(repo, "log", "--format=%s", key.ref).splitlines()
    assert subjects == [
        "ynm: 2 records personal/user/test/semantic/2026-09",
        "ynm: 1 record personal/user/test/semantic/2026-09",
    ]
    assert git(repo, "log", "-1", "--format=%B", key.ref) == (
        "ynm: 2 records personal/user/test/semantic/2026-09\n"
    )
    assert second.previous == first.revision
    assert second.previous_blob_id == first.blob_id
    assert second.previous_size == len(line(1))
    assert git(repo, "rev-parse", f"{key.ref}^") == first.revision
    assert log.is_ancestor(first.revision, second.revision)
    assert log.is_ancestor(second.revision, second.revision)
    assert not log.is_ancestor(second.revision, first.revision)
    assert not log.is_ancestor("0" * 40, second.revision)


def test_append_message() -> None:
    key = ShardKey("distributed", "common", "semantic", "2026-09")
    assert append_message(key, 1) == "ynm: 1 record distributed/common/semantic/2026-09"
    assert append_message(key, 3) == "ynm: 3 records distributed/common/semantic/2026-09"


def test_commit_identity_from_environment(repo: Path, log: GitNotesLog, key: ShardKey) -> None:
    log.append({key: (line(1), 1)})
    assert git(repo, "log", "-1", "--format=%an <%ae>|%cn <%ce>", key.ref) == (
        "Test Author <author@example.com>|Test Committer <committer@example.com>"
    )


def test_append_never_moves_head_index_or_worktree(
    repo: Path, log: GitNotesLog, key: ShardKey
) -> None:
    (repo / "file0.txt").write_text("dirty\n")
    (repo / "untracked.txt").write_text("new\n")
    git(repo, "add", "untracked.txt")
    head = git(repo, "rev-parse", "HEAD")
    head_ref = git(repo, "symbolic-ref", "HEAD")
    status = git(repo, "status", "--porcelain")
    index = (repo / ".git" / "index").read_bytes()
    log.append({key: (line(1), 1)})
    log.append({key: (line(2), 1)})
    assert git(repo, "rev-parse", "HEAD") == head
    assert git(repo, "symbolic-ref", "HEAD") == head_ref
    assert git(repo, "status", "--porcelain") == status
    assert (repo / ".git" / "index").read_bytes() == index


def test_reflog_records_appends(repo: Path, log: GitNotesLog, key: ShardKey) -> None:
    log.append({key: (line(1), 1)})
    log.append({key: (line(2), 1)})
    assert git(repo, "reflog", "show", "--format=%gs", key.ref).splitlines() == [
        "ynm: 1 record personal/user/test/semantic/2026-09",
        "ynm: 1 record personal/user/test/semantic/2026-09",
    ]


# --------------------------------------------------------------------------- reading


def test_tips_and_read_all_across_shards(log: GitNotesLog) -> None:
    keys = [
        ShardKey("personal", "user/test", "semantic", "2026-08"),
        ShardKey("personal", "user/test", "semantic", "2026-09"),
        ShardKey("personal", "user/test/sub", "episodic", "2026-09"),
        ShardKey("personal", "other", "procedural", "2026-09"),
    ]
    log.append({k: (line(i), 1) for i, k in enumerate(keys)})
    tips = log.tips()
    assert sorted(tips) == sorted(k.ref for k in keys)
    blobs = log.read_all(tips)
    for i, k in enumerate(keys):
        assert blobs[k.ref].data == line(i)
        assert blobs[k.ref].tip == tips[k.ref]
        assert blobs[k.ref].blob_id == log.note_blob_id(tips[k.ref].commit)
        assert log.read_blob(blobs[k.ref].blob_id) == line(i)
    # read_all also takes an iterable of tips.
    one = tips[keys[0].ref]
    assert list(log.read_all([one])) == [keys[0].ref]
    assert log.health_details() == {
        "repo": str(log.common_dir),
        "anchor": log.anchor,
        "anchorPresent": True,
        "shallow": False,
        "shards": 4,
    }


def test_porcelain_note_is_readable(
    repo: Path, anchor: str, log: GitNotesLog, key: ShardKey
) -> None:
    git(repo, "notes", f"--ref={key.ref}", "add", "-m", '{"id":"porcelain"}', anchor)
    assert log.read_all()[key.ref].data == b'{"id":"porcelain"}\n'
    log.append({key: (line(2), 1)})
    assert git_bytes(repo, "notes", f"--ref={key.ref}", "show", anchor) == (
        b'{"id":"porcelain"}\n' + line(2)
    )


def test_commit_without_note_reads_empty(repo: Path, log: GitNotesLog, key: ShardKey) -> None:
    empty = make_commit(repo, git(repo, "mktree", input=b""), "empty")
    git(repo, "update-ref", key.ref, empty)
    blob = log.read_all()[key.ref]
    assert blob.blob_id is None
    assert blob.data == b""
    [written] = log.append({key: (line(1), 1)})
    assert written.previous == empty
    assert written.previous_size == 0
    assert log.read_all()[key.ref].data == line(1)


def test_foreign_blob_without_trailing_newline_does_not_fuse(
    repo: Path, anchor: str, log: GitNotesLog, key: ShardKey
) -> None:
    foreign = b'{"id":"foreign"}'
    blob = hash_blob(repo, foreign)
    tree = mktree(repo, [("100644", blob, anchor)])
    git(repo, "update-ref", key.ref, make_commit(repo, tree, "foreign"))
    [written] = log.append({key: (line(2), 1)})
    assert written.previous_size == len(foreign)
    assert log.read_all()[key.ref].data == foreign + b"\n" + line(2)


@pytest.mark.parametrize("depth", [2, 3])
def test_fanned_out_tree_is_read_and_rewritten_flat(
    repo: Path, anchor: str, log: GitNotesLog, key: ShardKey, depth: int
) -> None:
    a = anchor
    mine = hash_blob(repo, line("fanned"))
    neighbour = hash_blob(repo, b"note on a neighbour\n")
    elsewhere = hash_blob(repo, b"note elsewhere\n")
    # A neighbour object sharing the anchor's first four hex digits, and one elsewhere.
    neighbour_rest = a[4:-1] + ("0" if a[-1] != "0" else "1")
    other_top = "00" if a[:2] != "00" else "ff"
    other_rest = "1" * 38
    if depth == 2:
        inner = mktree(repo, [("100644", mine, a[2:]), ("100644", neighbour, a[2:4] + neighbour_rest)])
        expected_neighbour_path = f"{a[:2]}/{a[2:4] + neighbour_rest}"
    else:
        leaf = mktree(repo, [("100644", mine, a[4:]), ("100644", neighbour, neighbour_rest)])
        inner = mktree(repo, [("040000", leaf, a[2:4])])
        expected_neighbour_path = f"{a[:2]}/{a[2:4]}/{neighbour_rest}"
    other_dir = mktree(repo, [("100644", elsewhere, other_rest)])
    root = mktree(repo, [("040000", inner, a[:2]), ("040000", other_dir, other_top)])
    git(repo, "update-ref", key.ref, make_commit(repo, root, "fanned"))
    # git itself reads the fanned-out note, and so do we.
    assert git_bytes(repo, "notes", f"--ref={key.ref}", "show", anchor) == line("fanned")
    assert log.read_all()[key.ref].data == line("fanned")
    [written] = log.append({key: (line(2), 1)})
    assert written.previous_blob_id == mine
    paths = dict(
        (entry.split("\t")[1], entry.split()[2])
        for entry in git(repo, "ls-tree", "-r", key.ref).splitlines()
    )
    assert paths == {
        anchor: written.blob_id,
        expected_neighbour_path: neighbour,
        f"{other_top}/{other_rest}": elsewhere,
    }
    assert git_bytes(repo, "notes", f"--ref={key.ref}", "show", anchor) == line("fanned") + line(2)
    assert git(repo, "fsck", "--strict", "--no-progress") == ""


def test_fan_out_dir_left_empty_is_dropped(
    repo: Path, anchor: str, log: GitNotesLog, key: ShardKey
) -> None:
    a = anchor
    mine = hash_blob(repo, line("fanned"))
    leaf = mktree(repo, [("100644", mine, a[4:])])
    inner = mktree(repo, [("040000", leaf, a[2:4])])
    root = mktree(repo, [("040000", inner, a[:2])])
    git(repo, "update-ref", key.ref, make_commit(repo, root, "fanned"))
    log.append({key: (line(2), 1)})
    assert git(repo, "ls-tree", "--name-only", key.ref) == anchor


# --------------------------------------------------------------------------- concurrency and CAS


def test_cas_retry_keeps_the_intruding_porcelain_record(
    repo: Path, anchor: str, log: GitNotesLog, key: ShardKey
) -> None:
    log.append({key: (line("first"), 1)})
    calls: list[str] = []

    def intrude(ref: str) -> None:
        calls.append(ref)
        if len(calls) == 1:
            git(repo, "notes", f"--ref={ref}", "append", "-m", '{"id":"intruder"}', anchor)

    log.before_update_ref = intrude
    [written] = log.append({key: (line("ours"), 1)})
    assert calls == [key.ref, key.ref]
    data = log.read_all()[key.ref].data
    ids = [row for row in data.split(b"\n") if row]
    assert ids == [line("first").strip(), b'{"id":"intruder"}', line("ours").strip()]
    # Our commit sits on top of the intruder's, which sits on top of the first append.
    assert git(repo, "log", "--format=%s", key.ref).splitlines()[0].startswith("ynm: 1 record")
    assert git(repo, "rev-list", "--count", key.ref) == "3"
    assert written.previous == git(repo, "rev-parse", f"{key.ref}^")


def test_cas_retry_when_the_intruder_creates_the_ref(
    repo: Path, anchor: str, log: GitNotesLog, key: ShardKey
) -> None:
    def intrude(ref: str) -> None:
        log.before_update_ref = None
        git(repo, "notes", f"--ref={ref}", "add", "-m", '{"id":"intruder"}', anchor)

    log.before_update_ref = intrude
    [written] = log.append({key: (line("ours"), 1)})
    assert written.previous is not None
    assert log.read_all()[key.ref].data == b'{"id":"intruder"}\n' + line("ours")


def test_cas_exhausted_raises_store_conflict(
    repo: Path, anchor: str, log: GitNotesLog, key: ShardKey
) -> None:
    counter = iter(range(100))

    def intrude(ref: str) -> None:
        git(repo, "notes", f"--ref={ref}", "append", "-m", f'{{"id":"i{next(counter)}"}}', anchor)

    log.before_update_ref = intrude
    with pytest.raises(StoreConflict) as info:
        log.append({key: (line("ours"), 1)})
    assert str(info.value) == f"compare-and-swap failed after 5 attempts on {key.ref}"
    data = log.read_all()[key.ref].data
    assert b'"ours"' not in data
    assert data.count(b'":"i') == 5
    assert not (log.common_dir / "ynm.lock").exists()


def test_ref_lock_held_by_git_counts_as_a_lost_swap(
    repo: Path, log: GitNotesLog, key: ShardKey
) -> None:
    log.append({key: (line(1), 1)})
    lock = log.common_dir / f"{key.ref}.lock"

    def hold_lock(ref: str) -> None:
        lock.write_text("")

    log.before_update_ref = hold_lock
    with pytest.raises(StoreConflict):
        log.append({key: (line(2), 1)})
    lock.unlink()
    log.before_update_ref = None
    log.append({key: (line(3), 1)})
    assert log.read_all()[key.ref].data == lines(1, 3)


def test_wrong_level_refused_with_nothing_written(repo: Path, log: GitNotesLog) -> None:
    good = ShardKey("personal", "user/test", "semantic", "2026-09")
    bad = ShardKey("distributed", "common", "semantic", "2026-09")
    with pytest.raises(MountLevelMismatch) as info:
        log.append({good: (line(1), 1), bad: (line(2), 1)})
    assert str(info.value) == 'mount "project" is personal; cannot take a distributed record'
    assert git(repo, "for-each-ref", "refs/notes/") == ""
    assert log.tips() == {}


def test_payload_must_end_with_newline(log: GitNotesLog, key: ShardKey) -> None:
    with pytest.raises(ValueError):
        log.append({key: (b'{"id":"x"}', 1)})
    assert log.tips() == {}


def test_200_records_in_batches_of_10(log: GitNotesLog, key: ShardKey) -> None:
    for batch in range(20):
        log.append({key: (lines(*range(batch * 10, batch * 10 + 10)), 10)})
    data = log.read_all()[key.ref].data
    assert data == lines(*range(200))


def _deflated_calls(monkeypatch: pytest.MonkeyPatch) -> list[int | None]:
    """Record, per blob written by an append, the size of the deflated prefix it reused."""
    from ynm.store import gitnotes

    seen: list[int | None] = []
    real = gitnotes.write_appended_blob

    def spy(repo, objects_dir, content, base):  # type: ignore[no-untyped-def]
        seen.append(None if base is None else base.size)
        return real(repo, objects_dir, content, base)

    monkeypatch.setattr(gitnotes, "write_appended_blob", spy)
    return seen


def test_appends_in_one_process_deflate_only_the_new_lines(
    repo: Path, anchor: str, log: GitNotesLog, key: ShardKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The second and later appends reuse the previous blob's deflated content; a foreign
    write in between (git notes by another process, no final newline) makes the next append
    start cold; another shard keeps its own prefix. git reads every version byte for byte."""
    other = ShardKey("personal", "user/test", "episodic", "2026-09")
    seen = _deflated_calls(monkeypatch)
    log.append({key: (lines(1, 2), 2)})
    log.append({key: (line(3), 1), other: (line("o1"), 1)})
    log.append({key: (line(4), 1), other: (line("o2"), 1)})
    assert seen == [None, len(lines(1, 2)), None, len(lines(1, 2, 3)), len(line("o1"))]
    # A foreign writer replaces the note with content lacking a final newline.
    foreign = lines(1, 2, 3, 4) + b'{"id":"foreign"}'
    tree = mktree(repo, [("100644", hash_blob(repo, foreign), anchor)])
    git(repo, "update-ref", key.ref, make_commit(repo, tree, "foreign", git(repo, "rev-parse",
                                                                               key.ref)))
    log.append({key: (line(5), 1)})
    log.append({key: (line(6), 1)})
    assert seen[-2:] == [None, len(foreign + b"\n" + line(5))]
    expected = foreign + b"\n" + lines(5, 6)
    assert git_bytes(repo, "notes", f"--ref={key.ref}", "show", anchor) == expected
    assert git_bytes(repo, "notes", f"--ref={other.ref}", "show", anchor) == lines("o1", "o2")
    # Every stored version reads back as what was appended up to then.
    versions = git(repo, "rev-list", key.ref).split()
    assert len(versions) == 6
    assert git_bytes(repo, "show", f"{versions[4]}:{anchor}") == lines(1, 2, 3)
    fsck = git(repo, "fsck", "--strict", "--full", check=False)
    assert "error" not in fsck.lower()
    fresh = GitNotesLog(repo, level="personal", anchor=anchor)
    assert fresh.read_all()[key.ref].data == expected


def test_a_new_log_object_reuses_the_prefix_from_the_loose_file(
    repo: Path, anchor: str, log: GitNotesLog, key: ShardKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What a new ``ynm remember`` process sees: no memory of earlier appends, yet the blob
    ynm wrote last is extended without deflating it again."""
    log.append({key: (lines(1, 2), 2)})
    seen = _deflated_calls(monkeypatch)
    fresh = GitNotesLog(repo, level="personal", anchor=anchor)
    fresh.append({key: (line(3), 1)})
    again = GitNotesLog(repo, level="personal", anchor=anchor)
    again.append({key: (line(4), 1)})
    assert seen == [len(lines(1, 2)), len(lines(1, 2, 3))]
    assert git_bytes(repo, "notes", f"--ref={key.ref}", "show", anchor) == lines(1, 2, 3, 4)
    fsck = git(repo, "fsck", "--strict", "--full", check=False)
    assert "error" not in fsck.lower()


def test_lost_swap_retry_rebuilds_from_the_intruders_blob(
    repo: Path, anchor: str, log: GitNotesLog, key: ShardKey, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A retried append after a lost compare-and-swap must not reuse the prefix of the blob
    it lost against: the result holds the intruder's line and ours, once each."""
    log.append({key: (line(1), 1)})
    seen = _deflated_calls(monkeypatch)
    intruded = []

    def intrude(ref: str) -> None:
        if not intruded:
            intruded.append(ref)
            git(repo, "notes", f"--ref={ref}", "append", "-m", '{"id":"git"}', anchor)

    log.before_update_ref = intrude
    log.append({key: (line(2), 1)})
    data = git_bytes(repo, "notes", f"--ref={key.ref}", "show", anchor)
    assert data.count(b'"id":"git"') == 1 and data.count(line(2)) == 1
    assert data.startswith(line(1))
    assert seen[0] == len(line(1)) and seen[1] is None
    fsck = git(repo, "fsck", "--strict", "--full", check=False)
    assert "error" not in fsck.lower()


def _loose_blob_count(repo: Path) -> int:
    counts = dict(row.split(": ") for row in git(repo, "count-objects", "-v").splitlines())
    return int(counts["count"])


def test_loose_bytes_are_counted_across_processes_and_packed_past_the_limit(
    repo: Path, anchor: str, key: ShardKey
) -> None:
    """Each log object (a process) adds the loose bytes it wrote to the shared counter; the
    append that passes the limit starts one background repack, which leaves no loose objects
    and every version readable, and the counter starts again from zero."""
    counter = Path(git(repo, "rev-parse", "--git-common-dir"))
    counter = (repo / counter if not counter.is_absolute() else counter) / "ynm-loose-bytes"
    first = GitNotesLog(repo, level="personal", anchor=anchor)
    first.pack_after_bytes = 10**9
    a = first.append({key: (lines(*range(300)), 300)})[0]
    size_a = (repo / ".git" / "objects" / a.blob_id[:2] / a.blob_id[2:]).stat().st_size
    assert int(counter.read_text()) == size_a
    second = GitNotesLog(repo, level="personal", anchor=anchor)
    second.pack_after_bytes = 10**9
    b = second.append({key: (line("b"), 1)})[0]
    size_b = (repo / ".git" / "objects" / b.blob_id[:2] / b.blob_id[2:]).stat().st_size
    assert int(counter.read_text()) == size_a + size_b
    assert second.wait_for_packing() is None
    assert _loose_blob_count(repo) > 0
    third = GitNotesLog(repo, level="personal", anchor=anchor)
    third.pack_after_bytes = size_a + size_b + 1
    c = third.append({key: (line("c"), 1)})[0]
    assert third.wait_for_packing(60) == 0
    assert int(counter.read_text()) == 0
    assert _loose_blob_count(repo) == 0
    for blob in (a.blob_id, b.blob_id, c.blob_id):
        git(repo, "cat-file", "-e", blob)
    assert git_bytes(repo, "notes", f"--ref={key.ref}", "show", anchor) == (
        lines(*range(300)) + lines("b", "c"))
    # Appends go on from the packed blob (no loose file to reuse: deflated whole).
    fourth = GitNotesLog(repo, level="personal", anchor=anchor)
    fourth.append({key: (line("d"), 1)})
    assert git_bytes(repo, "notes", f"--ref={key.ref}", "show", anchor).endswith(lines("c", "d"))


def test_pack_loose_objects_packs_now_and_zeroes_the_counter(
    repo: Path, anchor: str, key: ShardKey
) -> None:
    log = GitNotesLog(repo, level="personal", anchor=anchor)
    for n in range(5):
        log.append({key: (line(n), 1)})
    assert _loose_blob_count(repo) > 0
    log.pack_loose_objects()
    assert _loose_blob_count(repo) == 0
    assert int((repo / ".git" / "ynm-loose-bytes").read_text()) == 0
    assert git_bytes(repo, "notes", f"--ref={key.ref}", "show", anchor) == lines(*range(5))


def test_packing_deltas_a_shard_version_only_against_its_own_shard(
    repo: Path, anchor: str, key: ShardKey
) -> None:
    """Two shards of near-identical lines and equal sizes, two versions each: git's one
    candidate by size is often the other shard's blob (every note sits at the same path), a
    cheap delta here but seconds of indexing per try on a large shard. Packed, every stored
    delta's base is a version of the same shard, and every version reads back."""
    other = ShardKey("personal", "user/test", "semantic", "2026-08")
    body = b'","content":"' + b"the same long sentence in both shards " * 6 + b'"}\n'
    log = GitNotesLog(repo, level="personal", anchor=anchor)
    log.pack_after_bytes = None
    for shard, tag in ((key, b"a"), (other, b"b")):
        log.append({shard: (b"".join(b'{"id":"' + tag + b"%04d" % n + body
                                     for n in range(200)), 200)})
    for shard, tag in ((key, b"a"), (other, b"b")):
        log.append({shard: (b'{"id":"' + tag + b"9999" + body, 1)})
    versions = {shard.ref: {git(repo, "rev-parse", f"{commit}:{anchor}") for commit in
                            git(repo, "rev-list", shard.ref).splitlines()}
                for shard in (key, other)}
    assert all(len(blobs) == 2 for blobs in versions.values())
    shard_of = {blob: ref for ref, blobs in versions.items() for blob in blobs}
    log.pack_loose_objects()
    [idx] = (repo / ".git" / "objects" / "pack").glob("*.idx")
    bases = {}
    for row in git(repo, "verify-pack", "-v", str(idx)).splitlines():
        parts = row.split()
        if len(parts) == 7 and parts[1] == "blob":  # a delta: id type size ... depth base
            bases[parts[0]] = parts[6]
    assert bases, "versions of one shard are stored as deltas of each other"
    for blob, base in bases.items():
        assert shard_of[blob] == shard_of[base], (blob, base)
    for shard, tag in ((key, b"a"), (other, b"b")):
        data = git_bytes(repo, "notes", f"--ref={shard.ref}", "show", anchor)
        assert data.count(b'{"id":"' + tag) == 201


def test_packing_off_leaves_no_counter(repo: Path, anchor: str, key: ShardKey) -> None:
    log = GitNotesLog(repo, level="personal", anchor=anchor)
    log.pack_after_bytes = None
    log.append({key: (line(1), 1)})
    assert not (repo / ".git" / "ynm-loose-bytes").exists()
    assert log.wait_for_packing() is None


def test_append_waits_for_the_repo_lock(repo: Path, anchor: str, key: ShardKey) -> None:
    log = GitNotesLog(repo, level="personal", anchor=anchor, lock_timeout_s=0.05)
    with log.lock():
        with pytest.raises(LockTimeout):
            log.append({key: (line(1), 1)})
    assert log.tips() == {}


# --------------------------------------------------------------------------- write_shard


def test_write_shard_replaces_wholesale_and_keeps_history(
    repo: Path, log: GitNotesLog, key: ShardKey
) -> None:
    first = log.append({key: (lines(1, 2), 2)})[0]
    with log.lock():
        revision = log.write_shard(
            key, line(2), message="ynm: purge 1 from personal/user/test/semantic/2026-09",
            expected=first.revision,
        )
    assert revision == git(repo, "rev-parse", key.ref)
    assert git(repo, "rev-parse", f"{key.ref}^") == first.revision
    assert log.read_all()[key.ref].data == line(2)
    assert git(repo, "log", "-1", "--format=%s", key.ref) == (
        "ynm: purge 1 from personal/user/test/semantic/2026-09"
    )


def test_write_shard_forget_history(repo: Path, log: GitNotesLog, key: ShardKey) -> None:
    log.append({key: (line(1), 1)})
    second = log.append({key: (line(2), 1)})[0]
    assert git(repo, "rev-list", "--count", key.ref) == "2"
    revision = log.write_shard(
        key, line(2), message="ynm: purge 1 from x (history dropped)",
        expected=second.revision, forget_history=True,
    )
    assert revision is not None
    assert git(repo, "rev-list", "--count", key.ref) == "1"
    assert log.read_all()[key.ref].data == line(2)


def test_write_shard_lost_swap_returns_none(repo: Path, log: GitNotesLog, key: ShardKey) -> None:
    first = log.append({key: (line(1), 1)})[0]
    second = log.append({key: (line(2), 1)})[0]
    assert log.write_shard(key, b"", message="m", expected=first.revision) is None
    assert git(repo, "rev-parse", key.ref) == second.revision
    assert log.write_shard(key, b"", message="m", expected=None) is None


# --------------------------------------------------------------------------- repository kinds


def test_bare_repo(tmp_path: Path, key: ShardKey) -> None:
    path = tmp_path / "personal.git"
    repo, _ = ensure_bare_store(path)
    anchor = find_root_commit(repo)
    assert anchor is not None
    log = GitNotesLog(path, level="personal", anchor=anchor, mount_id="personal")
    log.append({key: (line(1), 1)})
    log.append({key: (line(2), 1)})
    assert git_bytes(path, "notes", f"--ref={key.ref}", "show", anchor) == lines(1, 2)
    assert log.common_dir == path.resolve()
    assert (path / "ynm.lock").exists() is False
    assert git(path, "fsck", "--strict", "--no-progress") == ""


def test_linked_worktree_shares_refs_and_lock(
    repo: Path, anchor: str, key: ShardKey, tmp_path: Path
) -> None:
    worktree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "side", str(worktree))
    main_log = GitNotesLog(repo, level="personal", anchor=anchor)
    wt_log = GitNotesLog(worktree, level="personal",
                         anchor=anchor, lock_timeout_s=0.05)
    assert wt_log.common_dir == main_log.common_dir == (repo / ".git").resolve()
    assert wt_log.lock().path == main_log.lock().path == (repo / ".git" / "ynm.lock").resolve()
    wt_log.append({key: (line("from-worktree"), 1)})
    main_log.append({key: (line("from-main"), 1)})
    assert wt_log.read_all()[key.ref].data == lines("from-worktree", "from-main")
    assert git_bytes(worktree, "notes", f"--ref={key.ref}", "show", anchor) == lines(
        "from-worktree", "from-main"
    )
    with main_log.lock(), pytest.raises(LockTimeout):
        wt_log.append({key: (line("blocked"), 1)})
    # The worktree's HEAD is still its own branch.
    assert git(worktree, "symbolic-ref", "HEAD") == "refs/heads/side"


def test_subdirectory_path_opens_the_repository(repo: Path, anchor: str, key: ShardKey) -> None:
    sub = repo / "deep" / "er"
    sub.mkdir(parents=True)
    log = GitNotesLog(sub, level="personal", anchor=anchor)
    log.append({key: (line(1), 1)})
    assert log.common_dir == (repo / ".git").resolve()


def test_not_a_repository(tmp_path: Path) -> None:
    from ynm.errors import StoreError

    (tmp_path / "plain").mkdir()
    with pytest.raises(StoreError, match="not a git repository"):
        GitNotesLog(tmp_path / "plain", level="personal", anchor="0" * 40)


def test_absent_anchor_object(tmp_path: Path, key: ShardKey) -> None:
    path = init_repo(tmp_path / "r")
    (path / "x").write_text("x")
    git(path, "add", "x")
    git(path, "commit", "-q", "-m", "x")
    log = GitNotesLog(path, level="personal", anchor="0" * 40)
    log.append({key: (line(1), 1)})
    assert log.read_all()[key.ref].data == line(1)
    assert log.health_details()["anchorPresent"] is False
    assert git_bytes(path, "notes", f"--ref={key.ref}", "show", "0" * 40) == line(1)


def test_pygit2_repository_is_exposed(log: GitNotesLog, repo: Path) -> None:
    assert isinstance(log.repo, pygit2.Repository)
    assert log.level == "personal" and log.mount_id == "project"
    assert root_commit(repo) == log.anchor


# ------------------------------------------------------------ ref directory/file conflicts (§7.22)

@pytest.mark.parametrize(("first", "second"), [
    ("docs", "docs/semantic/2026-09"),          # the file first, then a ref below it
    ("docs/semantic/2026-09", "docs"),          # a ref below first, then the file
    ("a/b", "a/b/semantic/2026-09/c/d"),
])
def test_append_refuses_a_ref_that_collides_with_an_existing_one(
    repo: Path, log: GitNotesLog, first: str, second: str
) -> None:
    from ynm.errors import RefCollision

    a = ShardKey("personal", first, "semantic", "2026-09")
    b = ShardKey("personal", second, "semantic", "2026-09")
    log.append({a: (line(1), 1)})
    before = git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/notes/")
    with pytest.raises(RefCollision) as err:
        log.append({b: (line(2), 1)})
    assert err.value.ref == b.ref and err.value.existing == a.ref
    assert "collides with the existing ref" in str(err.value)
    # Nothing moved, and the existing shard still takes appends.
    assert git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/notes/") == before
    log.append({a: (line(3), 1)})


def test_blob_size_reads_the_object_header_of_loose_and_packed_blobs(repo: Path, log):
    """``blob_size`` is the length ``read_blob`` gives, for a loose blob, a packed one and one
    read before (held in memory); a missing object or another kind of object is refused."""
    from ynm.errors import StoreError

    key = ShardKey("personal", "user/test", "semantic", "2026-08")
    log.append({key: (lines(*range(50)), 50)})
    blob = log.note_blob_id(log.tips()[key.ref].commit)
    fresh = GitNotesLog(repo, level="personal", anchor=log.anchor)  # nothing held in memory
    assert fresh.blob_size(blob) == len(lines(*range(50)))
    git(repo, "repack", "-a", "-d", "-q")
    packed = GitNotesLog(repo, level="personal", anchor=log.anchor)
    assert not (repo / ".git" / "objects" / blob[:2] / blob[2:]).exists()
    assert packed.blob_size(blob) == len(packed.read_blob(blob)) == len(lines(*range(50)))
    with pytest.raises(StoreError, match="cannot read blob"):
        packed.blob_size("0" * 40)
    with pytest.raises(StoreError, match="is not a blob"):
        packed.blob_size(log.tips()[key.ref].commit)
