"""Separate OS processes appending to one shard at once (reference/storage.md §8, conformance:
"external processes x appends to one shard")."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from tests.support.git import git, git_bytes
from ynm.model.shards import ShardKey

WRITER = """
import sys, time
from ynm.model.shards import ShardKey
from ynm.store.gitnotes import GitNotesLog

from ynm.errors import StoreConflict

repo, anchor, writer, start_at = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
tolerate_conflicts = len(sys.argv) > 5
key = ShardKey("personal", "user/test", "semantic", "2026-09")
log = GitNotesLog(repo, level="personal", anchor=anchor)
while time.time() < start_at:
    time.sleep(0.001)
for i in range(8):
    line = '{"id":"w%d-%d"}\\n' % (writer, i)
    try:
        log.append({key: (line.encode(), 1)})
    except StoreConflict:
        if not tolerate_conflicts:
            raise
"""

PORCELAIN_WRITER = """
import subprocess, sys, time
repo, anchor, ref, start_at = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4])
while time.time() < start_at:
    time.sleep(0.001)
for i in range(8):
    subprocess.run(["git", "notes", "--ref=" + ref, "append", "-m", '{"id":"git-%d"}' % i, anchor],
                   cwd=repo, check=True, capture_output=True)
"""


def _run_all(commands: list[list[str]]) -> None:
    procs = [
        subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE) for cmd in commands
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err.decode()


def test_four_processes_append_to_one_shard(repo: Path, anchor: str, key: ShardKey) -> None:
    start_at = time.time() + 1.0
    _run_all([
        [sys.executable, "-c", WRITER, str(repo), anchor, str(writer), str(start_at)]
        for writer in range(4)
    ])
    data = git_bytes(repo, "notes", f"--ref={key.ref}", "show", anchor)
    got = data.decode().splitlines()
    assert len(got) == 32
    assert sorted(got) == sorted(f'{{"id":"w{w}-{i}"}}' for w in range(4) for i in range(8))
    assert git(repo, "rev-list", "--count", key.ref) == "32"
    fsck = subprocess.run(["git", "fsck", "--strict"], cwd=repo, capture_output=True)
    assert fsck.returncode == 0, fsck.stderr.decode()
    assert not (repo / ".git" / "ynm.lock").exists()


def test_ynm_writers_and_porcelain_writer_at_once(
    repo: Path, anchor: str, key: ShardKey
) -> None:
    """ynm writers racing `git notes append` (which bypasses ynm.lock) never corrupt the shard.

    git's `notes append` updates the ref without checking its old value, so it can drop a ynm
    commit that landed between its read and its write; nothing ynm does can prevent that. A ynm
    append may also lose every compare-and-swap to a stream of porcelain writes (StoreConflict,
    tolerated here). What must hold: the repository stays fsck-clean and every line is a whole
    record (none fused, none duplicated).
    """
    start_at = time.time() + 1.0
    commands = [
        [sys.executable, "-c", WRITER, str(repo), anchor, str(writer), str(start_at), "tolerate"]
        for writer in range(2)
    ]
    commands.append(
        [sys.executable, "-c", PORCELAIN_WRITER, str(repo), anchor, key.ref, str(start_at)]
    )
    _run_all(commands)
    fsck = subprocess.run(["git", "fsck", "--strict"], cwd=repo, capture_output=True)
    assert fsck.returncode == 0, fsck.stderr.decode()
    rows = [row for row in git_bytes(repo, "notes", f"--ref={key.ref}", "show", anchor)
            .decode().splitlines() if row]
    assert rows
    assert all(row.startswith('{"id":"') and row.endswith('"}') and row.count("{") == 1
               for row in rows)
    assert len(rows) == len(set(rows))


OPENER = """
import sys, time
from ynm.store.anchor import ensure_bare_store, find_root_commit
path, start_at = sys.argv[1], float(sys.argv[2])
while time.time() < start_at:
    time.sleep(0.001)
repo, created = ensure_bare_store(path)
print(find_root_commit(repo), created)
"""


def test_processes_creating_the_same_bare_store_agree_on_the_root(tmp_path: Path) -> None:
    path = tmp_path / "home" / "store.git"
    start_at = time.time() + 1.0
    procs = [
        subprocess.Popen([sys.executable, "-c", OPENER, str(path), str(start_at)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    results = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        results.append(out.split())
    roots = {root for root, _ in results}
    assert len(roots) == 1
    assert [created for _, created in results].count("True") == 1
    assert git(path, "rev-list", "--all", "--count") == "1"
