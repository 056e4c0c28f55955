"""Loose blobs written by ynm (ynm/store/objects.py) are what git itself would store."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pygit2

from ynm.store.objects import write_blob


def test_blob_id_and_content_match_git(tmp_path: Path) -> None:
    repo_path = tmp_path / "r"
    subprocess.run(["git", "init", "-q", str(repo_path)], check=True)
    repo = pygit2.Repository(str(repo_path))
    data = ("{\"v\":1}\n" * 5000 + "é\n").encode()
    oid = write_blob(repo, repo_path / ".git" / "objects", data)
    expected = subprocess.run(["git", "hash-object", "--stdin"], input=data, check=True,
                              capture_output=True).stdout.decode().strip()
    assert str(oid) == expected
    shown = subprocess.run(["git", "-C", str(repo_path), "cat-file", "blob", expected],
                           check=True, capture_output=True).stdout
    assert shown == data
    assert repo[oid].data == data
    # writing it again leaves the object alone and gives the same id
    assert write_blob(repo, repo_path / ".git" / "objects", data) == oid
    fsck = subprocess.run(["git", "-C", str(repo_path), "fsck", "--strict"], capture_output=True)
    assert fsck.returncode == 0, fsck.stderr
