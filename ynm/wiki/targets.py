"""Where built wiki pages go (reference algorithms.md §5, "Targets").

``write_directory`` writes pages under a folder; ``write_orphan_branch`` commits them to
``refs/heads/ynm/wiki`` in-process with pygit2. Both take ``{relative path: bytes}`` from
:func:`ynm.wiki.generate`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pygit2

from ynm.errors import StoreConflict
from ynm.store.repo import signature

WIKI_REF = "refs/heads/ynm/wiki"
MANIFEST = ".ynm-wiki-pages.json"


@dataclass(frozen=True)
class WriteResult:
    """``written``: pages written (int); ``location``: folder path or ``<ref>@<commit>``;
    ``changed``: False when the target already held exactly these pages."""

    written: int
    location: str
    changed: bool


def write_directory(folder: Path, pages: dict[str, bytes]) -> WriteResult:
    """Write ``pages`` under ``folder`` (created if missing).

    Also writes a ``.gitignore`` of ``*`` (which ignores itself too) and a manifest of the pages
    written, so that pages this target wrote before and no longer builds are deleted while
    files it never wrote are left alone (ynm refinement of §5, which deletes every stale
    ``.md``). Raises OSError on file-system failures.
    """
    folder.mkdir(parents=True, exist_ok=True)
    manifest = folder / MANIFEST
    try:
        before = set(json.loads(manifest.read_text("utf-8")))
    except (OSError, ValueError):
        before = set()
    changed = False
    for rel in sorted(before - set(pages)):
        stale = folder / rel
        if stale.is_file():
            stale.unlink()
            changed = True
    for rel, data in pages.items():
        path = folder / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_file() and path.read_bytes() == data:
            continue
        path.write_bytes(data)
        changed = True
    (folder / ".gitignore").write_text("*\n", "utf-8")
    manifest.write_text(json.dumps(sorted(pages)) + "\n", "utf-8")
    return WriteResult(len(pages), str(folder), changed)


def _tree(repo: pygit2.Repository, pages: dict[str, bytes]) -> pygit2.Oid:
    files: dict[str, bytes] = {}
    dirs: dict[str, dict[str, bytes]] = {}
    for rel, data in pages.items():
        head, sep, rest = rel.partition("/")
        if sep:
            dirs.setdefault(head, {})[rest] = data
        else:
            files[head] = data
    builder = repo.TreeBuilder()
    for name, data in files.items():
        builder.insert(name, repo.create_blob(data), pygit2.GIT_FILEMODE_BLOB)
    for name, sub in dirs.items():
        builder.insert(name, _tree(repo, sub), pygit2.GIT_FILEMODE_TREE)
    return builder.write()


def write_orphan_branch(repo: pygit2.Repository, pages: dict[str, bytes]) -> WriteResult:
    """Commit ``pages`` as the tree of a new commit on ``refs/heads/ynm/wiki``.

    The parent is the old tip (none on the first build); the message is
    ``ynm: wiki (<n> pages)`` (§5). HEAD, the index and the work tree are not touched. When the
    tree equals the tip's tree no commit is written. The ref moves by compare-and-swap under
    git's ref lock.

    Raises:
        StoreConflict: the ref moved or was locked while the commit was being written.
    """
    tree = _tree(repo, pages)
    try:
        old = repo.references[WIKI_REF].target
    except KeyError:
        old = None
    if old is not None and repo[old].peel(pygit2.Commit).tree_id == tree:
        return WriteResult(len(pages), f"{WIKI_REF}@{old}", False)
    who = signature(repo)
    commit = repo.create_commit(None, who, who, f"ynm: wiki ({len(pages)} pages)", tree,
                                [old] if old is not None else [])
    with repo.transaction() as txn:
        try:
            txn.lock_ref(WIKI_REF)
        except pygit2.GitError as err:
            raise StoreConflict(f"{WIKI_REF} is locked by another process") from err
        try:
            now = repo.references[WIKI_REF].target
        except KeyError:
            now = None
        if now != old:
            raise StoreConflict(f"{WIKI_REF} moved while the wiki was being built")
        txn.set_target(WIKI_REF, commit, None, f"ynm: wiki ({len(pages)} pages)")
    return WriteResult(len(pages), f"{WIKI_REF}@{commit}", True)
