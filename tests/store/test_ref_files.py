"""Reads that open no repository: shard refs from git's ref files, and the anchor a mount
remembers (ynm.store.repo.read_refs, ynm.store.anchor.refs_digest / remembered_anchor).

Every answer is checked against what git itself (the ``git`` executable) or libgit2 says, on
real repositories whose refs are loose, packed, or both, before and after the changes that must
make a remembered answer stale.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pygit2
import pytest

from tests.support.git import git, make_repo, orphan_commit, root_commit
from ynm.store.anchor import (
    ANCHOR_MEMO,
    Anchor,
    ensure_bare_store,
    refs_digest,
    remember_anchor,
    remembered_anchor,
    select_anchor,
)
from ynm.store.repo import read_refs

PREFIX = "refs/notes/ynm/distributed/"


def git_refs(repo: Path, prefix: str) -> dict[str, str]:
    """What ``git for-each-ref`` says the refs under ``prefix`` are."""
    out = git(repo, "for-each-ref", "--format=%(refname) %(objectname)", prefix)
    return dict(line.split(" ") for line in out.splitlines() if line)


def note_refs(repo: Path, names: list[str]) -> dict[str, str]:
    """Point ``refs/notes/ynm/distributed/<name>`` at commits of ``repo`` (one per name)."""
    commits = git(repo, "rev-list", "HEAD").splitlines()
    for i, name in enumerate(names):
        git(repo, "update-ref", PREFIX + name, commits[i % len(commits)])
    return git_refs(repo, PREFIX)


def test_ref_files_give_what_git_lists_loose_packed_and_both(tmp_path):
    repo = make_repo(tmp_path / "r")
    common = repo / ".git"
    assert read_refs(common, PREFIX) == {}  # no such folder, no packed-refs
    want = note_refs(repo, ["common/semantic/2026-01", "common/semantic/2026-02",
                            "team/a/episodic/2026-03"])
    assert read_refs(common, PREFIX) == want  # all loose
    git(repo, "pack-refs", "--all")
    assert not [p for p in (common / PREFIX).rglob("*") if p.is_file()]  # none loose now
    assert read_refs(common, PREFIX) == want  # all packed
    head = git(repo, "rev-parse", "HEAD")
    git(repo, "update-ref", PREFIX + "common/semantic/2026-02", head)  # loose over packed
    git(repo, "update-ref", PREFIX + "common/working/2026-04", head)  # loose only
    git(repo, "update-ref", "-d", PREFIX + "team/a/episodic/2026-03")  # gone from both
    git(repo, "update-ref", "refs/notes/ynm/personal/common/semantic/2026-01", head)
    want = git_refs(repo, PREFIX)
    assert len(want) == 3 and want[PREFIX + "common/semantic/2026-02"] == head
    assert read_refs(common, PREFIX) == want


def test_ref_files_that_cannot_answer_for_certain_say_so(tmp_path):
    repo = make_repo(tmp_path / "r")
    common = repo / ".git"
    note_refs(repo, ["common/semantic/2026-01"])
    git(repo, "symbolic-ref", PREFIX + "common/semantic/2026-02", "refs/heads/main")
    assert read_refs(common, PREFIX) is None  # a symbolic ref: libgit2 resolves it
    git(repo, "update-ref", "-d", "--no-deref", PREFIX + "common/semantic/2026-02")
    assert read_refs(common, PREFIX) is not None
    (common / "reftable").mkdir()  # another ref storage: the files are not the refs
    assert read_refs(common, PREFIX) is None


def test_a_ref_being_written_reads_as_its_old_id(tmp_path):
    repo = make_repo(tmp_path / "r")
    common = repo / ".git"
    want = note_refs(repo, ["common/semantic/2026-01"])
    (common / PREFIX / "common/semantic/2026-01.lock").write_text("0" * 40 + "\n")
    assert read_refs(common, PREFIX) == want


def test_refs_digest_changes_with_history_refs_only(tmp_path):
    repo = make_repo(tmp_path / "r")
    common = repo / ".git"
    first = refs_digest(common)
    note_refs(repo, ["common/semantic/2026-01"])  # notes refs do not count
    git(repo, "update-ref", "refs/ynm/distributed/documents/people", "HEAD")
    assert refs_digest(common) == first
    git(repo, "pack-refs", "--all")  # the same refs, now packed: another digest (is fine) ...
    packed = refs_digest(common)
    note_refs(repo, ["common/semantic/2026-02"])  # ... and notes still do not count,
    git(repo, "update-ref", "-d", PREFIX + "common/semantic/2026-01")  # packed ones neither
    assert "2026-01" not in (common / "packed-refs").read_text()
    assert refs_digest(common) == packed
    git(repo, "commit", "-q", "--allow-empty", "-m", "more")
    assert refs_digest(common) != packed
    moved = refs_digest(common)
    git(repo, "branch", "side")
    assert refs_digest(common) != moved
    (common / "shallow").write_text(git(repo, "rev-parse", "HEAD") + "\n")
    assert refs_digest(common) not in (moved, packed, first)


def test_a_personal_store_root_is_remembered_until_its_history_refs_move(tmp_path):
    store = tmp_path / "store.git"
    repo, _ = ensure_bare_store(store)
    assert remembered_anchor(store, None) is None  # nothing kept yet
    before = refs_digest(store)
    anchor = select_anchor(repo)
    remember_anchor(store, anchor, repo, before)
    assert remembered_anchor(store, None) == Anchor(anchor.sha, "root-commit", True)
    # a note written to the store: refs/notes only, the root stays known
    git(store, "update-ref", "refs/notes/ynm/personal/common/semantic/2026-01", anchor.sha)
    assert remembered_anchor(store, None) == anchor
    # an older root on another branch: the root may have changed, so it is asked again
    orphan_commit(store, "refs/heads/older", "2000-01-01T00:00:00Z")
    assert remembered_anchor(store, None) is None
    assert select_anchor(pygit2.Repository(str(store))).sha != anchor.sha


def test_a_root_found_while_refs_moved_is_not_remembered(tmp_path):
    repo_path = make_repo(tmp_path / "r")
    common = repo_path / ".git"
    repo = pygit2.Repository(str(common))
    before = refs_digest(common)
    anchor = select_anchor(repo)
    git(repo_path, "commit", "-q", "--allow-empty", "-m", "meanwhile")
    remember_anchor(common, anchor, repo, before)
    assert not (common / ANCHOR_MEMO).exists()
    assert remembered_anchor(common, None) is None


def test_a_configured_anchor_is_remembered_until_its_object_files_go(tmp_path):
    repo_path = make_repo(tmp_path / "r")
    common = repo_path / ".git"
    sha = root_commit(repo_path)
    repo = pygit2.Repository(str(common))
    assert remembered_anchor(common, sha) is None
    remember_anchor(common, Anchor(sha, "config", True), repo, None)
    kept = json.loads((common / ANCHOR_MEMO).read_text())["commits"][sha]
    assert kept == {"packs": [], "loose": True}
    assert remembered_anchor(common, sha) == Anchor(sha, "config", True)
    assert remembered_anchor(common, "f" * 40) is None  # another id: not known
    git(repo_path, "gc", "-q")  # loose file packed away: asked again
    assert remembered_anchor(common, sha) is None
    remember_anchor(common, Anchor(sha, "config", True), repo, None)
    packs = json.loads((common / ANCHOR_MEMO).read_text())["commits"][sha]["packs"]
    assert len(packs) == 1 and remembered_anchor(common, sha) is not None
    git(repo_path, "commit", "-q", "--allow-empty", "-m", "more")  # new objects: still held
    git(repo_path, "repack", "-q")  # a new pack beside the old one
    assert remembered_anchor(common, sha) is not None
    git(repo_path, "repack", "-q", "-a", "-d")  # the old pack deleted: asked again
    assert remembered_anchor(common, sha) is None


def test_only_a_commit_present_here_is_remembered(tmp_path):
    repo_path = make_repo(tmp_path / "r")
    common = repo_path / ".git"
    repo = pygit2.Repository(str(common))
    blob = git(repo_path, "hash-object", "-w", "--stdin", input=b"not a commit\n")
    for sha in (blob, "e" * 40):  # a blob; an object this clone lacks
        remember_anchor(common, Anchor(sha, "config", True), repo, None)
        assert remembered_anchor(common, sha) is None
    (common / "objects/info/alternates").write_text(str(tmp_path / "elsewhere") + "\n")
    sha = root_commit(repo_path)
    remember_anchor(common, Anchor(sha, "config", True), repo, None)
    assert remembered_anchor(common, sha) is None  # objects may live elsewhere: not kept


def test_a_recall_from_a_fresh_cache_imports_no_git_library(tmp_path):
    """The whole CLI, in a new process: the second recall reads refs and the anchor from
    files and answers from the cache without importing pygit2 (ynm.store.libgit)."""
    repo = make_repo(tmp_path / "proj")
    env = {**os.environ, "YNM_HOME": str(tmp_path / "home"), "YNM_EMBEDDER": "none"}
    run = [sys.executable, "-m", "ynm", "--cwd", str(repo)]
    subprocess.run([*run, "init", "--no-hooks"], env=env, check=True, capture_output=True)
    subprocess.run([*run, "remember", "--type", "semantic", "--level", "distributed",
                    "--content", "Ledger deploys go out on Tuesdays"], env=env, check=True,
                   capture_output=True)
    subprocess.run([*run, "remember", "--type", "semantic", "--content", "I prefer small PRs"],
                   env=env, check=True, capture_output=True)
    probe = ("import sys\n"
             "from ynm.cli import cli\n"
             "try:\n"
             "    cli(sys.argv[1:], prog_name='ynm')\n"
             "except SystemExit:\n"
             "    pass\n"
             "import ynm.store.libgit as g\n"
             "print('pygit2', g.loaded(), 'pygit2' in sys.modules, file=sys.stderr)\n")
    seen = []
    for _ in range(2):
        proc = subprocess.run([sys.executable, "-c", probe, "--cwd", str(repo), "recall",
                               "when do ledger deploys go out"], env=env, capture_output=True,
                              text=True, check=True)
        assert "Ledger deploys go out on Tuesdays" in proc.stdout
        seen.append(proc.stderr.strip().splitlines()[-1])
    assert seen[1] == "pygit2 False False", seen
    memo = json.loads((repo / ".git" / ANCHOR_MEMO).read_text())
    assert list(memo["commits"]) == [json.loads((repo / ".ynm/config.json").read_text())["anchor"]]
    assert (tmp_path / "home" / "store.git" / ANCHOR_MEMO).is_file()


@pytest.mark.parametrize("damage", ["not json", "[]", "null", '{"commits": {"x": 1}, "root": 5}',
                                    '{"commits": 5}', '{"commits": []}', '{"root": []}',
                                    '{"root": {"anchor": 5}}', '{"commits": {"%s": 7}}',
                                    '{"commits": {"%s": {"packs": 7}}}',
                                    '{"commits": {"%s": {"packs": [5]}}}'])
def test_a_damaged_memo_is_asked_again(tmp_path, damage):
    repo_path = make_repo(tmp_path / "r")
    common = repo_path / ".git"
    (common / ANCHOR_MEMO).write_text(damage.replace("%s", root_commit(repo_path)))
    assert remembered_anchor(common, None) is None
    assert remembered_anchor(common, root_commit(repo_path)) is None
    repo = pygit2.Repository(str(common))
    anchor = select_anchor(repo)
    remember_anchor(common, anchor, repo, refs_digest(common))
    assert remembered_anchor(common, None) == anchor
    configured = Anchor(root_commit(repo_path), "config", True)
    remember_anchor(common, configured, repo, None)
    assert remembered_anchor(common, configured.sha) == configured


def test_a_log_on_a_path_that_does_not_exist_is_no_repository(tmp_path):
    """A mount path with a typo inside a repository names no repository (libgit2 says the
    same), rather than the repository around it."""
    from ynm.errors import StoreError
    from ynm.store.gitnotes import GitNotesLog

    repo = make_repo(tmp_path / "r")
    with pytest.raises(StoreError, match="not a git repository"):
        GitNotesLog(repo / "no-such-dir", level="distributed", anchor=root_commit(repo))
    assert GitNotesLog(repo / "file0.txt", level="distributed",
                       anchor=root_commit(repo)).common_dir == (repo / ".git").resolve()


def test_a_mount_git_cannot_open_is_a_mount_problem(tmp_path, monkeypatch):
    """The repository of a configured mount is opened when its anchor is checked, after the
    log was made without opening it: a repository libgit2 refuses is that mount's problem
    (``status`` lists it, reads skip it), as when the log itself failed to open."""
    from ynm.service.ynm import Ynm

    org = tmp_path / "org.git"
    git(tmp_path, "init", "-q", "--bare", str(org))
    git(org, "config", "core.repositoryformatversion", "99")  # libgit2: unsupported version
    home = tmp_path / "home"
    home.mkdir()
    (home / "config.json").write_text(json.dumps({"mounts": [
        {"id": "org", "provider": "git-notes", "path": str(org), "level": "distributed",
         "anchor": "a" * 40}]}))
    monkeypatch.setenv("YNM_HOME", str(home))
    where = tmp_path / "outside"
    where.mkdir()
    with Ynm.open(where) as y:
        assert [m.id for m in y.mounts] == ["personal"]
        [problem] = y.mount_problems
        assert problem.id == "org" and "unsupported repository version 99" in problem.error


def test_the_store_imports_pygit2_on_first_use_once_across_threads():
    """Importing the store modules loads no pygit2; the first attribute read does, once, from
    whichever threads meet it together, and the stand-in then holds the library's own
    objects (a fresh interpreter, so nothing imported pygit2 before)."""
    probe = (
        "import sys, threading\n"
        "import ynm.store.anchor, ynm.store.gitnotes, ynm.store.snapshots, ynm.store.sync\n"
        "import ynm.store.libgit as g\n"
        "assert 'pygit2' not in sys.modules and not g.loaded()\n"
        "seen = []\n"
        "go = threading.Barrier(8)\n"
        "def read():\n"
        "    go.wait()\n"
        "    seen.append(g.pygit2.Repository)\n"
        "threads = [threading.Thread(target=read) for _ in range(8)]\n"
        "[t.start() for t in threads]; [t.join() for t in threads]\n"
        "import pygit2\n"
        "assert g.loaded() and seen == [pygit2.Repository] * 8, seen\n"
        "assert g.pygit2.GitError is pygit2.GitError and g.pygit2.__name__ == 'pygit2'\n"
        "assert g.pygit2.__version__ == pygit2.__version__\n"
        "print('ok')\n")
    proc = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                          check=False)
    assert proc.returncode == 0 and proc.stdout == "ok\n", proc.stderr


def test_a_write_confirms_a_remembered_anchor_first(tmp_path):
    """A memo edited by hand (or copied from elsewhere) can make a read use a wrong anchor,
    but no note is ever hung off it: the first write asks libgit2, deletes the memo and is
    refused; the next command finds the right anchor again."""
    env = {**os.environ, "YNM_HOME": str(tmp_path / "home"), "YNM_EMBEDDER": "none"}
    repo = make_repo(tmp_path / "proj")
    run = [sys.executable, "-m", "ynm", "--cwd", str(repo)]

    def ynm(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*run, *args], env=env, capture_output=True, text=True,
                              check=False)

    assert ynm("init", "--no-hooks").returncode == 0
    assert ynm("remember", "--type", "semantic", "--content", "I prefer small PRs").returncode == 0
    store = tmp_path / "home" / "store.git"
    root = json.loads((store / ANCHOR_MEMO).read_text())["root"]
    notes = git(store, "for-each-ref", "refs/notes/")
    other = git(repo, "rev-parse", "HEAD")  # a commit, but not the personal store's root
    (store / ANCHOR_MEMO).write_text(json.dumps({"root": {**root, "anchor": other}}))
    refused = ynm("remember", "--type", "semantic", "--content", "I review before lunch")
    assert refused.returncode == 1
    assert refused.stderr.splitlines()[0] == (
        f"Error: {store / ANCHOR_MEMO} named anchor {other}, which this repository does not "
        "confirm; it is removed: run the command again")
    assert git(store, "for-each-ref", "refs/notes/") == notes  # nothing written
    assert not (store / ANCHOR_MEMO).exists()
    again = ynm("remember", "--type", "semantic", "--content", "I review before lunch")
    assert again.returncode == 0, again.stderr
    found = ynm("recall", "small PRs review lunch", "--json")
    assert len(json.loads(found.stdout)) == 2
    # the project's memo: a configured anchor that is a blob, dressed up as a commit
    blob = git(repo, "hash-object", "-w", "--stdin", input=b"not a commit\n")
    config = repo / ".ynm" / "config.json"
    config.write_text(json.dumps({"anchor": blob}) + "\n")
    (repo / ".git" / ANCHOR_MEMO).write_text(json.dumps(
        {"commits": {blob: {"packs": [], "loose": True}}}))
    before = git(repo, "for-each-ref", "refs/notes/")
    forged = ynm("remember", "--type", "semantic", "--level", "distributed",
                 "--content", "Deploys on Tuesdays")
    assert forged.returncode == 1
    assert f"named anchor {blob}, which this repository does not confirm" in forged.stderr
    assert git(repo, "for-each-ref", "refs/notes/") == before
    plain = ynm("remember", "--type", "semantic", "--level", "distributed",
                "--content", "Deploys on Tuesdays")
    assert plain.returncode == 2 and "it is a blob, not a commit" in plain.stderr


def test_shard_tips_come_from_libgit2_when_the_ref_files_cannot_say(tmp_path):
    """A symbolic shard ref makes the files unsure: tips then come from libgit2, resolved,
    the same shards in the same order as the files give when they can say."""
    from ynm.store.gitnotes import GitNotesLog

    repo = make_repo(tmp_path / "r")
    log = GitNotesLog(repo, level="distributed", anchor=root_commit(repo))
    want = note_refs(repo, ["common/semantic/2026-01", "common/episodic/2026-02"])
    assert {ref: tip.commit for ref, tip in log.tips().items()} == want
    git(repo, "symbolic-ref", PREFIX + "common/semantic/2026-03",
        PREFIX + "common/semantic/2026-01")
    assert read_refs(repo / ".git", PREFIX) is None
    tips = log.tips()
    linked = PREFIX + "common/semantic/2026-03"
    assert list(tips) == sorted([*want, linked])
    assert tips[linked].commit == want[PREFIX + "common/semantic/2026-01"]
