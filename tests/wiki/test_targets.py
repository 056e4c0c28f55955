"""Wiki targets against real folders and real git repositories."""

from __future__ import annotations

import subprocess

import pygit2

from ynm.wiki.targets import WIKI_REF, write_directory, write_orphan_branch

PAGES = {"index.md": b"# i\n", "memories/X.md": b"# x\n", "topics/t.md": b"# t\n"}


def git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True).stdout


def test_directory_removes_only_its_own_stale_pages(tmp_path):
    d = tmp_path / "wiki"
    r = write_directory(d, PAGES)
    assert r.written == 3 and r.changed
    (d / "notes.md").write_bytes(b"mine\n")
    r = write_directory(d, {"index.md": b"# i2\n"})
    assert not (d / "memories/X.md").exists() and not (d / "topics/t.md").exists()
    assert (d / "notes.md").read_bytes() == b"mine\n"
    assert (d / "index.md").read_bytes() == b"# i2\n"
    assert (d / ".gitignore").read_text() == "*\n"
    assert not write_directory(d, {"index.md": b"# i2\n"}).changed


def test_orphan_branch_leaves_head_index_worktree(tmp_path):
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "config", "user.name", "T")
    git(tmp_path, "config", "user.email", "t@example.com")
    (tmp_path / "a.txt").write_text("a\n")
    git(tmp_path, "add", "a.txt")
    git(tmp_path, "commit", "-qm", "one")
    (tmp_path / "a.txt").write_text("changed\n")
    (tmp_path / "b.txt").write_text("new\n")
    status = git(tmp_path, "status", "--porcelain")
    head = git(tmp_path, "rev-parse", "HEAD")
    index = (tmp_path / ".git/index").read_bytes()
    repo = pygit2.Repository(str(tmp_path))
    r1 = write_orphan_branch(repo, PAGES)
    assert r1.changed
    tip = git(tmp_path, "rev-parse", WIKI_REF).decode().strip()
    assert git(tmp_path, "log", "--format=%s", WIKI_REF).decode() == "ynm: wiki (3 pages)\n"
    assert git(tmp_path, "show", f"{WIKI_REF}:memories/X.md") == b"# x\n"
    assert git(tmp_path, "ls-tree", "-r", "--name-only", WIKI_REF).decode().split() == [
        "index.md", "memories/X.md", "topics/t.md"]
    r2 = write_orphan_branch(repo, PAGES)
    assert not r2.changed
    assert git(tmp_path, "rev-parse", WIKI_REF).decode().strip() == tip
    r3 = write_orphan_branch(repo, {"index.md": b"# j\n"})
    assert r3.changed
    assert git(tmp_path, "rev-parse", f"{WIKI_REF}^").decode().strip() == tip
    assert git(tmp_path, "status", "--porcelain") == status
    assert git(tmp_path, "rev-parse", "HEAD") == head
    assert (tmp_path / ".git/index").read_bytes() == index
