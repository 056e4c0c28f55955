"""Anchor vectors (reference/storage.md §3.3, §7.21 and §8 "Anchor")."""

from __future__ import annotations

from pathlib import Path

import pygit2
import pytest

from tests.support.git import git, init_repo, make_repo, orphan_commit, root_commit
from ynm.errors import AnchorError, AnchorNotCommit, StoreError
from ynm.model.shards import ShardKey
from ynm.store.anchor import (
    Anchor,
    anchor_problem,
    create_root_commit,
    ensure_bare_store,
    find_root_commit,
    select_anchor,
)
from ynm.store.gitnotes import GitNotesLog
from ynm.store.repo import is_shallow

SAME_DATE = "2026-01-01T00:00:00Z"


def test_no_commits(tmp_path: Path) -> None:
    path = init_repo(tmp_path / "empty")
    repo = pygit2.Repository(str(path))
    assert find_root_commit(repo) is None
    with pytest.raises(AnchorError, match="no commits"):
        select_anchor(repo)


def test_no_commits_create(tmp_path: Path) -> None:
    path = init_repo(tmp_path / "empty")
    repo = pygit2.Repository(str(path))
    chosen = select_anchor(repo, create=True)
    assert chosen.source == "created"
    assert chosen.present is True
    assert git(path, "rev-parse", "HEAD") == chosen.sha
    assert git(path, "rev-parse", "--abbrev-ref", "HEAD") == "main"
    assert git(path, "log", "--format=%s") == "ynm: root"
    assert git(path, "rev-parse", "HEAD^{tree}") == "4b825dc642cb6eb9a060e54bf8d69288fbee4904"
    # The next selection finds it as the root commit.
    assert select_anchor(repo) == Anchor(chosen.sha, "root-commit", True)


def test_create_uses_the_branch_head_names(tmp_path: Path) -> None:
    path = init_repo(tmp_path / "trunk")
    git(path, "symbolic-ref", "HEAD", "refs/heads/trunk")
    sha = create_root_commit(pygit2.Repository(str(path)))
    assert git(path, "rev-parse", "refs/heads/trunk") == sha
    assert git(path, "for-each-ref", "--format=%(refname)", "refs/heads/") == "refs/heads/trunk"


def test_create_on_detached_head_moves_main_and_leaves_head(repo: Path) -> None:
    head = git(repo, "rev-parse", "HEAD")
    git(repo, "checkout", "-q", "--detach", "HEAD")
    git(repo, "branch", "-q", "-m", "main", "old-main")
    sha = create_root_commit(pygit2.Repository(str(repo)))
    assert git(repo, "rev-parse", "refs/heads/main") == sha
    assert git(repo, "rev-list", "--count", "refs/heads/main") == "1"
    assert git(repo, "rev-parse", "HEAD") == head


def test_identity_comes_from_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AUTHOR", "COMMITTER"):
        monkeypatch.delenv(f"GIT_{name}_NAME")
        monkeypatch.delenv(f"GIT_{name}_EMAIL")
    path = init_repo(tmp_path / "cfg")
    git(path, "config", "user.name", "Config Person")
    git(path, "config", "user.email", "config@example.com")
    create_root_commit(pygit2.Repository(str(path)))
    assert git(path, "log", "--format=%an <%ae>|%cn <%ce>") == (
        "Config Person <config@example.com>|Config Person <config@example.com>"
    )


def test_identity_fallback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("AUTHOR", "COMMITTER"):
        monkeypatch.delenv(f"GIT_{name}_NAME")
        monkeypatch.delenv(f"GIT_{name}_EMAIL")
    level = pygit2.enums.ConfigLevel.GLOBAL
    saved = pygit2.settings.search_path[level]
    empty_home = tmp_path / "home"
    empty_home.mkdir()
    pygit2.settings.search_path[level] = str(empty_home)
    try:
        path = init_repo(tmp_path / "anon")
        create_root_commit(pygit2.Repository(str(path)))
    finally:
        pygit2.settings.search_path[level] = saved
    assert git(path, "log", "--format=%an <%ae>|%cn <%ce>") == (
        "ynm <ynm@localhost>|ynm <ynm@localhost>"
    )


def test_root_commit_of_linear_history(repo: Path) -> None:
    assert find_root_commit(pygit2.Repository(str(repo))) == root_commit(repo)


def test_three_orphan_roots_same_date_pick_smallest_sha(tmp_path: Path) -> None:
    path = init_repo(tmp_path / "orphans")
    shas = [
        orphan_commit(path, f"refs/heads/b{i}", SAME_DATE, message=f"root {i}") for i in range(3)
    ]
    assert len(set(shas)) == 3
    chosen = select_anchor(pygit2.Repository(str(path)))
    assert chosen == Anchor(min(shas), "root-commit", True)


@pytest.mark.parametrize(
    "ref",
    [
        "refs/notes/ynm/personal/user/x/semantic/2026-09",
        "refs/ynm/distributed/documents/people",
        "refs/ynm-remote/origin/distributed/documents/people",
    ],
)
def test_notes_and_document_roots_are_never_chosen(repo: Path, ref: str) -> None:
    orphan_commit(repo, ref, "2000-01-01T00:00:00Z", message="doc")
    assert find_root_commit(pygit2.Repository(str(repo))) == root_commit(repo)


def test_same_second_notes_root_never_wins(repo: Path) -> None:
    root = root_commit(repo)
    date = git(repo, "show", "-s", "--format=%cI", root)
    # Try several so at least one would win the sha tie-break if notes refs counted.
    for i in range(8):
        orphan_commit(repo, f"refs/notes/ynm/personal/user/x/semantic/2026-0{i + 1}", date,
                      message=f"n{i}")
    assert find_root_commit(pygit2.Repository(str(repo))) == root


def test_later_second_root_loses(repo: Path) -> None:
    orphan_commit(repo, "refs/heads/later", "2030-01-01T00:00:00Z")
    assert find_root_commit(pygit2.Repository(str(repo))) == root_commit(repo)


def test_earlier_root_on_a_tag_wins(repo: Path) -> None:
    early = orphan_commit(repo, "refs/tags/early", "2020-01-01T00:00:00Z")
    assert find_root_commit(pygit2.Repository(str(repo))) == early


def test_configured_must_be_an_object_id(repo: Path) -> None:
    with pytest.raises(AnchorError, match="not an object id"):
        select_anchor(pygit2.Repository(str(repo)), configured="HEAD")
    with pytest.raises(AnchorError, match="anchor ABC is not an object id"):
        select_anchor(pygit2.Repository(str(repo)), configured="ABC")


def test_configured_zeros_is_not_present(repo: Path) -> None:
    zeros = "0" * 40
    assert select_anchor(pygit2.Repository(str(repo)), configured=zeros) == Anchor(
        zeros, "config", False
    )


def test_configured_64_hex_accepted(repo: Path) -> None:
    sha = "a" * 64
    assert select_anchor(pygit2.Repository(str(repo)), configured=sha) == Anchor(
        sha, "config", False
    )


def test_configured_existing_commit_is_present(repo: Path, anchor: str) -> None:
    assert select_anchor(pygit2.Repository(str(repo)), configured=anchor) == Anchor(
        anchor, "config", True
    )


def test_configured_tree_is_not_present(repo: Path) -> None:
    tree = git(repo, "rev-parse", "HEAD^{tree}")
    assert select_anchor(pygit2.Repository(str(repo)), configured=tree).present is False


def test_shallow_clone(tmp_path: Path) -> None:
    source = make_repo(tmp_path / "source", commits=4)
    anchor = root_commit(source)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{source}", str(clone))
    repo = pygit2.Repository(str(clone))
    assert repo.is_shallow
    with pytest.raises(AnchorError, match="shallow"):
        select_anchor(repo)
    chosen = select_anchor(repo, configured=anchor)
    assert chosen == Anchor(anchor, "config", False)

    key = ShardKey("distributed", "common", "semantic", "2026-09")
    log = GitNotesLog(clone, level="distributed", anchor=chosen.sha)
    log.append({key: (b'{"id":"a"}\n', 1)})
    assert log.read_all()[key.ref].data == b'{"id":"a"}\n'
    assert git(clone, "notes", f"--ref={key.ref}", "show", anchor) == '{"id":"a"}'


def test_ensure_bare_store(tmp_path: Path) -> None:
    path = tmp_path / "personal.git"
    repo, created = ensure_bare_store(path)
    assert created is True
    assert repo.is_bare
    root = find_root_commit(repo)
    assert root is not None
    assert git(path, "rev-parse", "refs/heads/main") == root
    again, created_again = ensure_bare_store(path)
    assert created_again is False
    assert find_root_commit(again) == root


def test_ensure_bare_store_adopts_existing_history(tmp_path: Path) -> None:
    source = make_repo(tmp_path / "source")
    path = tmp_path / "clone.git"
    git(tmp_path, "clone", "-q", "--bare", str(source), str(path))
    repo, created = ensure_bare_store(path)
    assert created is False
    assert find_root_commit(repo) == root_commit(source)


def test_ensure_bare_store_refuses_a_non_empty_plain_directory(tmp_path: Path) -> None:
    path = tmp_path / "plain"
    path.mkdir()
    (path / "keep.txt").write_text("x")
    with pytest.raises(StoreError, match="not a git repository"):
        ensure_bare_store(path)
    assert sorted(p.name for p in path.iterdir()) == ["keep.txt"]


def test_ensure_bare_store_adds_root_to_empty_repo(tmp_path: Path) -> None:
    path = init_repo(tmp_path / "empty.git", bare=True)
    repo, created = ensure_bare_store(path)
    assert created is True
    assert find_root_commit(repo) == git(path, "rev-parse", "refs/heads/main")


# -- whether a configured anchor can serve (anchor_problem) -----------------------------------


def test_a_commit_is_a_usable_anchor(repo: Path, anchor: str) -> None:
    assert anchor_problem(pygit2.Repository(str(repo)), anchor) is None
    assert anchor_problem(pygit2.Repository(str(repo)), git(repo, "rev-parse", "HEAD")) is None


def test_objects_that_are_no_commit_are_named_by_kind(repo: Path) -> None:
    r = pygit2.Repository(str(repo))
    tree = git(repo, "rev-parse", "HEAD^{tree}")
    blob = git(repo, "rev-parse", "HEAD:file0.txt")
    git(repo, "tag", "-a", "-m", "release", "v1", "HEAD")
    tag = git(repo, "rev-parse", "v1")
    assert anchor_problem(r, tree) == "it is a tree, not a commit"
    assert anchor_problem(r, blob) == "it is a blob, not a commit"
    assert anchor_problem(r, tag) == (f"it is an annotated tag (of commit "
                                      f"{git(repo, 'rev-parse', 'HEAD')}), not a commit")


def test_an_absent_anchor_in_a_full_clone_is_refused(repo: Path) -> None:
    assert anchor_problem(pygit2.Repository(str(repo)), "1" * 40) == (
        "no such object, and this clone is not shallow")


def test_an_absent_anchor_in_a_shallow_clone_or_a_notes_only_copy_is_fine(tmp_path: Path) -> None:
    source = make_repo(tmp_path / "source", commits=3)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{source}", str(clone))
    assert anchor_problem(pygit2.Repository(str(clone)), root_commit(source)) is None
    bare = init_repo(tmp_path / "org.git", bare=True)  # `git init --bare`: notes only
    assert anchor_problem(pygit2.Repository(str(bare)), root_commit(source)) is None


def test_a_linked_worktree_of_a_shallow_clone_is_shallow(tmp_path: Path) -> None:
    """git keeps ``shallow`` in the common dir; a repository opened at a linked worktree's
    git dir (where libgit2's ``is_shallow`` looks) is shallow all the same, so an absent
    anchor is allowed there and no graft point is taken for a root."""
    source = make_repo(tmp_path / "source", commits=3)
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{source}", str(clone))
    git(clone, "worktree", "add", "-q", str(tmp_path / "linked"))
    assert git(tmp_path / "linked", "rev-parse", "--is-shallow-repository") == "true"
    repo = pygit2.Repository(str(tmp_path / "linked"))
    assert is_shallow(repo) and is_shallow(pygit2.Repository(str(clone)))
    assert not is_shallow(pygit2.Repository(str(source)))
    assert anchor_problem(repo, root_commit(source)) is None
    with pytest.raises(AnchorError, match="shallow clone"):
        select_anchor(repo)


def test_a_log_with_a_refusal_writes_nothing(repo: Path, anchor: str) -> None:
    log = GitNotesLog(repo, level="distributed", anchor=anchor)
    log.refusal = "anchor x (from here) is not a commit in there: why; what to do"
    key = ShardKey("distributed", "common", "semantic", "2026-09")
    for write in (lambda: log.append({key: (b'{"id":"a"}\n', 1)}),
                  lambda: log.write_shard(key, b"x\n", message="m", expected=None),
                  lambda: log.purge("01ABC")):
        with pytest.raises(AnchorNotCommit, match="invalid input: anchor x .*what to do"):
            write()
    assert log.tips() == {}
