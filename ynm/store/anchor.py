"""The anchor: the one commit id every shard's note hangs off, and how it is chosen.

Only the anchor's id is used (as the path of the note in each notes tree); the object need not
exist locally. Source: reference/storage.md §3.3 and §7.21.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ynm.errors import AnchorError, InvalidInput, StoreError
from ynm.store.libgit import pygit2
from ynm.store.lock import RepoLock
from ynm.store.repo import PACKED_REFS, is_shallow, signature

OBJECT_ID_RE = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
ROOT_MESSAGE = "ynm: root\n"
DEFAULT_BRANCH = "refs/heads/main"
# Notes and document histories start with parentless commits of their own; they are never roots.
EXCLUDED_PREFIXES = ("refs/notes/", "refs/ynm/", "refs/ynm-remote/")


@dataclass(frozen=True, slots=True)
class Anchor:
    """A chosen anchor.

    Attributes:
        sha: 40 (or 64) lowercase hex digits.
        source: ``"config"``, ``"remote-config"`` (the remote's ``.ynm/config.json``),
            ``"remote-notes"`` (the object the remote's notes annotate), ``"root-commit"`` or
            ``"created"``.
        present: Whether the object exists locally and is a commit.
    """

    sha: str
    source: str
    present: bool


def _peel_to_commit(repo: pygit2.Repository, ref: pygit2.Reference) -> pygit2.Commit | None:
    try:
        obj = ref.peel(pygit2.Commit)
    except (pygit2.GitError, KeyError, ValueError, pygit2.InvalidSpecError):
        return None
    return obj if isinstance(obj, pygit2.Commit) else None


def _history_tips(repo: pygit2.Repository) -> list[pygit2.Oid]:
    """Commit ids of ``--all`` (every ref plus HEAD) minus notes and document refs."""
    tips: dict[pygit2.Oid, None] = {}
    names = [name for name in repo.listall_references() if not name.startswith(EXCLUDED_PREFIXES)]
    names.append("HEAD")
    for name in names:
        try:
            ref = repo.lookup_reference(name)
        except (KeyError, pygit2.GitError, pygit2.InvalidSpecError):
            continue
        commit = _peel_to_commit(repo, ref)
        if commit is not None:
            tips[commit.id] = None
    return list(tips)


def find_root_commit(repo: pygit2.Repository) -> str | None:
    """The oldest parentless commit reachable from any ref other than notes and document refs.

    Every ref and HEAD count, except ``refs/notes/*``, ``refs/ynm/*`` and ``refs/ynm-remote/*``.
    Among the parentless commits the smallest committer time (epoch seconds) wins; ties go to
    the smallest hex id in string order.

    Args:
        repo: The repository to walk.

    Returns:
        The root commit's hex id, or None when no ref reaches a commit.

    Source: reference/storage.md §3.3 (``findRootCommit``) and §7.21.
    """
    tips = _history_tips(repo)
    if not tips:
        return None
    walker = repo.walk(tips[0], pygit2.enums.SortMode.NONE)
    for tip in tips[1:]:
        walker.push(tip)
    best: tuple[int, str] | None = None
    for commit in walker:
        if commit.parent_ids:
            continue
        candidate = (commit.commit_time, str(commit.id))
        if best is None or candidate < best:
            best = candidate
    return best[1] if best else None


def _is_commit(repo: pygit2.Repository, sha: str) -> bool:
    try:
        obj = repo.get(sha)
    except (ValueError, pygit2.GitError):
        return False
    return isinstance(obj, pygit2.Commit)


def anchor_problem(repo: pygit2.Repository, sha: str) -> str | None:
    """Why ``sha`` cannot serve as this repository's anchor, or None when it can.

    It can when it names a commit here; also when the object is simply absent from a shallow
    clone (reference/cli.md §4.4: "not present locally (shallow clone); plumbing does not need
    it") or from a repository with no history of its own (a ``git init --bare`` copy of an
    org store, which only ever holds notes: reference/storage.md §3.12). It cannot when the
    object is a blob, tree or tag (notes would hang off something that is no commit), or when
    it is absent from a clone that holds the whole history: then it is no commit of this
    project, and notes written on it would be invisible to every teammate.

    Args:
        repo: The repository the anchor is for.
        sha: A well-formed 40- or 64-hex id (a malformed one is refused when the
            configuration is read, :mod:`ynm.service.config`).

    Returns:
        None, or the reason as a phrase: ``it is a blob, not a commit``, ``it is an annotated
        tag (of commit <id>), not a commit``, ``no such object, and this clone is not
        shallow``.
    """
    try:
        obj = repo.get(sha)
    except (ValueError, pygit2.GitError):
        obj = None
    if isinstance(obj, pygit2.Commit):
        return None
    if isinstance(obj, pygit2.Tag):
        try:
            target = obj.peel(pygit2.Commit)
        except (pygit2.GitError, KeyError, ValueError, pygit2.InvalidSpecError):
            return "it is an annotated tag, not a commit"
        return f"it is an annotated tag (of commit {target.id}), not a commit"
    if obj is not None:
        kind = type(obj).__name__.lower()
        return f"it is a {kind}, not a commit"
    if is_shallow(repo) or find_root_commit(repo) is None:
        return None
    return "no such object, and this clone is not shallow"


PROJECT_CONFIG = ".ynm/config.json"


def remote_default_branch(repo: pygit2.Repository, remote: str) -> str | None:
    """The remote-tracking ref of ``remote``'s default branch as last fetched:
    ``refs/remotes/<remote>/HEAD`` resolved (``git clone`` sets it), else ``.../main`` or
    ``.../master`` when present; None when there is none. No network."""
    head = repo.references.get(f"refs/remotes/{remote}/HEAD")
    if head is not None:
        try:
            return str(head.resolve().name)
        except (KeyError, pygit2.GitError):
            pass
    for branch in ("main", "master"):
        if repo.references.get(f"refs/remotes/{remote}/{branch}") is not None:
            return f"refs/remotes/{remote}/{branch}"
    return None


def remote_project_config(repo: pygit2.Repository, remote: str) -> tuple[str, str] | None:
    """``(remote-tracking ref, anchor)`` when the remote's default branch (as last fetched)
    holds a ``.ynm/config.json`` naming a well-formed anchor: a teammate ran ``ynm init`` and
    committed it. None otherwise (no such branch, file or anchor; unreadable JSON). No
    network."""
    import json

    ref = remote_default_branch(repo, remote)
    if ref is None:
        return None
    commit = _peel_to_commit(repo, repo.references[ref])
    if commit is None:
        return None
    try:
        entry = commit.tree[PROJECT_CONFIG]
        data = json.loads(repo[entry.id].data.decode("utf-8-sig"))
    except (KeyError, ValueError, UnicodeDecodeError, pygit2.GitError):
        return None
    anchor = data.get("anchor") if isinstance(data, dict) else None
    if isinstance(anchor, str) and OBJECT_ID_RE.match(anchor):
        return ref, anchor
    return None


def remote_notes_anchor(repo: pygit2.Repository, remote: str) -> str | None:
    """The one object the remote's distributed notes annotate, read from the tracking refs
    ``refs/notes/ynm-remote/<remote>/distributed/*`` (what ``git fetch`` brought once the
    fetch refspec was added); None when there are none or they annotate several objects."""
    prefix = f"refs/notes/ynm-remote/{remote}/distributed/".encode()
    objects: set[str] = set()
    for raw in repo.raw_listall_references():
        if not raw.startswith(prefix):
            continue
        try:
            tree = repo.lookup_reference(raw.decode("utf-8")).peel(pygit2.Tree)
        except (KeyError, ValueError, UnicodeDecodeError, pygit2.GitError):
            continue
        objects |= _annotated(tree)
    return objects.pop() if len(objects) == 1 else None


def _annotated(tree: pygit2.Tree, prefix: str = "") -> set[str]:
    """The object ids a notes tree annotates (flat and fanned-out paths alike)."""
    out: set[str] = set()
    for entry in tree:
        if isinstance(entry, pygit2.Tree):
            out |= _annotated(entry, prefix + entry.name)
        elif OBJECT_ID_RE.match(prefix + entry.name):
            out.add(prefix + entry.name)
    return out


SHORT_ID_RE = re.compile(r"^[0-9a-f]{1,63}$")
MIN_PREFIX = 4  # libgit2's GIT_OID_MINPREFIXLEN; git itself takes no fewer either


def resolve_anchor_id(repo: pygit2.Repository, given: str, field: str = "anchor") -> str:
    """The full commit id an ``--anchor`` names: a full 40- or 64-hex id as is (lower case;
    it need not exist locally: a shallow clone may lack it), or an abbreviated one (at least
    4 hex digits) resolved through ``repo`` to the one commit it starts, as ``git rev-parse``
    does.

    Raises:
        InvalidInput: (exit 2) ``<field>: <x> is ambiguous ...`` when several objects start
            with it; ``no commit starts with <x> ...`` when none does; ``<x> is a <kind>, not a
            commit``; and for anything that is not hex, ``<x> is not a commit id ...``.

    Source: reference/storage.md §3.3 (the anchor is a full object id); reference/cli.md
    §4.10 (``--anchor <sha>``); abbreviated ids are ynm's convenience.
    """
    value = given.strip().lower()
    if OBJECT_ID_RE.match(value):
        return value
    if not SHORT_ID_RE.match(value):
        raise InvalidInput(f"{field}: {given!r} is not a commit id (40 or 64 hex digits, or an "
                           f"unambiguous abbreviation of at least {MIN_PREFIX})")
    if len(value) < MIN_PREFIX:
        raise InvalidInput(f"{field}: {given} is too short to name a commit; give at least "
                           f"{MIN_PREFIX} hex digits (`git rev-parse {given}` prints the full id)")
    try:
        obj = repo.revparse_single(value)
    except pygit2.AmbiguousError:
        raise InvalidInput(f"{field}: {given} is ambiguous: several objects in this repository "
                           "start with it; give more digits") from None
    except (KeyError, ValueError, pygit2.GitError, pygit2.InvalidSpecError):
        raise InvalidInput(f"{field}: no commit starts with {given} in this repository; give "
                           "the full 40-hex id (a shallow clone may lack the commit)") from None
    if not isinstance(obj, pygit2.Commit):
        kind = type(obj).__name__.lower()
        raise InvalidInput(f"{field}: {given} is a {kind} ({obj.id}), not a commit")
    return str(obj.id)


def select_anchor(
    repo: pygit2.Repository, configured: str | None = None, create: bool = False,
    remote: str | None = None,
) -> Anchor:
    """Choose the anchor for a repository.

    In order: the configured id (``present`` says whether it is a local commit); with
    ``remote`` (``ynm init``), the team's choice already on that remote: the anchor of the
    ``.ynm/config.json`` on its default branch, else the one object its fetched notes annotate
    (so a clone never picks an anchor of its own beside the team's); a shallow clone without
    one is refused; the root commit (``find_root_commit``); with ``create``, a new empty root
    commit on the current branch.

    Args:
        repo: The repository.
        configured: An id from configuration (``anchor`` in ``.ynm/config.json`` or the mount).
        create: Create a root commit when the repository has none (``ynm init``).
        remote: A remote whose team anchor to adopt (``ynm init``); no network is used.

    Returns:
        The anchor with its source: ``config``, ``remote-config``, ``remote-notes``,
        ``root-commit`` or ``created``.

    Raises:
        AnchorError: ``anchor <x> is not an object id`` for a malformed configured id; a
            shallow clone without a configured anchor; a repository with no commits when
            ``create`` is false.

    Source: reference/storage.md §3.3 (``selectAnchor``).
    """
    if configured is not None:
        if not OBJECT_ID_RE.match(configured):
            raise AnchorError(f"anchor {configured} is not an object id")
        return Anchor(configured, "config", _is_commit(repo, configured))
    if remote is not None:
        found = remote_project_config(repo, remote)
        if found is not None:
            return Anchor(found[1], "remote-config", _is_commit(repo, found[1]))
        notes_anchor = remote_notes_anchor(repo, remote)
        if notes_anchor is not None:
            return Anchor(notes_anchor, "remote-notes", _is_commit(repo, notes_anchor))
    if is_shallow(repo):
        raise AnchorError(
            "repository is a shallow clone; its graft points are not real roots, so no anchor "
            "can be chosen. Set \"anchor\" in .ynm/config.json to the project's anchor commit, "
            "or unshallow the clone (git fetch --unshallow)"
        )
    root = find_root_commit(repo)
    if root is not None:
        return Anchor(root, "root-commit", True)
    if create:
        return Anchor(create_root_commit(repo), "created", True)
    raise AnchorError("repository has no commits; run `ynm init` to create the root commit")


def create_root_commit(repo: pygit2.Repository) -> str:
    """Make an empty-tree, parentless commit ``ynm: root`` and point the current branch at it.

    The branch is the one HEAD names (even when unborn), or ``refs/heads/main`` when HEAD is
    detached or missing; HEAD itself, the index and the work tree are left alone. Only call
    this on a repository with no commits: it moves the branch unconditionally.

    Args:
        repo: The repository.

    Returns:
        The new commit's hex id.

    Source: reference/storage.md §3.3 (``createRootCommit``) and §7.21.
    """
    empty_tree = repo.TreeBuilder().write()
    author = signature(repo, "AUTHOR")
    committer = signature(repo, "COMMITTER")
    commit_id = repo.create_commit(None, author, committer, ROOT_MESSAGE, empty_tree, [])
    repo.create_reference_direct(current_branch(repo), commit_id, True, "ynm: root")
    return str(commit_id)


def current_branch(repo: pygit2.Repository) -> str:
    """The full name of the branch HEAD names, even when unborn (``refs/heads/<name>``), or
    :data:`DEFAULT_BRANCH` when HEAD is detached or missing."""
    try:
        head = repo.lookup_reference("HEAD")
    except (KeyError, pygit2.GitError):
        return DEFAULT_BRANCH
    if head.type == pygit2.enums.ReferenceType.SYMBOLIC:
        target = head.target
        return target if isinstance(target, str) else DEFAULT_BRANCH
    return DEFAULT_BRANCH


def _open_exact(path: Path) -> pygit2.Repository | None:
    """The repository at exactly ``path`` (no search upwards), or None when there is none."""
    try:
        return pygit2.Repository(str(path), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
    except pygit2.GitError:
        return None


def ensure_bare_store(path: str | os.PathLike[str]) -> tuple[pygit2.Repository, bool]:
    """Open the bare repository at ``path``, creating it (branch ``main``) if missing.

    A new repository, or an existing one without commits, gets a root commit so it has an
    anchor. Used for the personal store. Safe when several processes call it at once:
    creation runs under ``<parent>/<name>.ynm-init.lock``, so they all see the same root commit.

    Args:
        path: Directory of the bare repository.

    Returns:
        ``(repository, created)``; ``created`` is true when this call made the root commit
        (a new repository or an empty one), false when a root commit already existed.

    Raises:
        StoreError: When the path is a non-empty directory that is not a repository.
        LockTimeout: When another process holds the creation lock past 60 s.

    Source: reference/storage.md §5.4 (personal store) and §3.3; reference/cli.md §4.10
    (``created``).
    """
    target = Path(path)
    repo = _open_exact(target)
    if repo is not None and find_root_commit(repo) is not None:
        return repo, False
    # Several processes may open a missing store at once; the check, the init and the root
    # commit happen under one lock so they all end up with the same root (and anchor).
    target.parent.mkdir(parents=True, exist_ok=True)
    with RepoLock(target.parent / f"{target.name}.ynm-init.lock"):
        repo = _open_exact(target)
        if repo is None:
            if target.exists() and any(target.iterdir()):
                raise StoreError(f"not a git repository: {target}")
            target.mkdir(parents=True, exist_ok=True)
            repo = pygit2.init_repository(str(target), bare=True, initial_head="main")
        if find_root_commit(repo) is not None:
            return repo, False
        create_root_commit(repo)
    return repo, True


# -- what a read remembers of its anchor ----------------------------------------------------

ANCHOR_MEMO = "ynm-anchor.json"
"""Kept in a repository's common dir (beside ``ynm.lock``); git ignores files it does not know
there. JSON: ``{"root": {"refs": <digest>, "anchor": <id>}, "commits": {<id>: {"packs": [...],
"loose": bool}}}``."""


def refs_digest(common_dir: Path) -> str | None:
    """A SHA-256 of everything :func:`find_root_commit` starts from: ``HEAD``, every ref other
    than notes and document refs (EXCLUDED_PREFIXES), loose and packed, and the files that
    change what history a walk sees (``shallow``, ``info/grafts``), read as files. While it is
    unchanged the history those refs reach is unchanged (commits never change), and so is its
    root commit. None when the refs are not kept as files (``reftable``) or cannot be read."""
    if (common_dir / "reftable").exists():
        return None
    digest = hashlib.sha256()
    try:
        for name in ("HEAD", "shallow", "info/grafts"):
            path = common_dir / name
            digest.update(b"%s\0%s\0" % (name.encode(), path.read_bytes() if path.exists()
                                           else b"-"))
        excluded = tuple(prefix.encode() for prefix in EXCLUDED_PREFIXES)
        refs = common_dir / "refs"
        for folder, dirs, files in os.walk(refs):
            here = Path(folder).relative_to(common_dir).as_posix() + "/"
            dirs[:] = sorted(d for d in dirs if not (here + d + "/").encode().startswith(excluded))
            for name in sorted(files):
                digest.update(b"%s\0%s\0" % ((here + name).encode(),
                                              Path(folder, name).read_bytes()))
        packed = common_dir / PACKED_REFS
        kept = False
        for line in (packed.read_bytes() if packed.exists() else b"").splitlines():
            if line.startswith(b"^"):  # the peeled id of the ref above it
                if kept:
                    digest.update(line + b"\n")
                continue
            kept = not line.partition(b" ")[2].startswith(excluded)
            if kept:
                digest.update(line + b"\n")
    except OSError:
        return None
    return digest.hexdigest()


def _object_files(common_dir: Path, sha: str) -> tuple[list[str], bool] | None:
    """The pack files of the repository and whether ``sha`` is a loose object; None when
    objects may also come from elsewhere (``objects/info/alternates``)."""
    objects = common_dir / "objects"
    if (objects / "info" / "alternates").exists():
        return None
    try:
        packs = sorted(p.name for p in (objects / "pack").glob("*.pack"))
    except OSError:
        return None
    return packs, (objects / sha[:2] / sha[2:]).is_file()


def _read_memo(common_dir: Path) -> dict:
    try:
        memo = json.loads((common_dir / ANCHOR_MEMO).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return memo if isinstance(memo, dict) else {}


def remembered_anchor(common_dir: Path, configured: str | None) -> Anchor | None:
    """The anchor :func:`select_anchor` (without ``remote`` or ``create``) would choose, from
    what :func:`remember_anchor` kept when it last asked libgit2, or None when that no longer
    holds for certain (then open the repository and ask again):

    - ``configured``: it was found a commit, and every pack file of the repository then is
      still there and, if it was a loose object, its file too (objects leave a repository only
      by their pack or loose file being deleted, and an object's type never changes):
      ``Anchor(configured, "config", True)``, which :func:`anchor_problem` accepts.
    - none configured: the root commit found when :func:`refs_digest` was what it is now.

    Reads files only: a recall answered from a fresh cache opens no repository.
    """
    memo = _read_memo(common_dir)
    if configured is not None:
        commits = memo.get("commits")
        kept = (commits.get(configured)
                if isinstance(commits, dict) and OBJECT_ID_RE.match(configured) else None)
        if not isinstance(kept, dict) or not isinstance(kept.get("packs"), list) or not (
                kept.get("loose") or kept["packs"]):
            return None  # no file stands for it: nothing would say when it went
        objects = common_dir / "objects"
        if kept.get("loose") and not (objects / configured[:2] / configured[2:]).is_file():
            return None
        if (objects / "info" / "alternates").exists() or not all(
                isinstance(name, str) and (objects / "pack" / name).is_file()
                for name in kept["packs"]):
            return None
        return Anchor(configured, "config", True)
    root = memo.get("root")
    if not isinstance(root, dict) or not OBJECT_ID_RE.match(str(root.get("anchor", ""))):
        return None
    digest = refs_digest(common_dir)
    if digest is None or root.get("refs") != digest:
        return None
    return Anchor(root["anchor"], "root-commit", True)


def remember_anchor(common_dir: Path, anchor: Anchor, repo: pygit2.Repository,
                    refs_before: str | None) -> None:
    """Keep what :func:`remembered_anchor` needs to give ``anchor`` again without libgit2, after
    :func:`select_anchor` chose it in ``repo``: for a configured anchor that is a commit here,
    the pack files and whether it is loose, listed before it is looked up once more (so an
    object deleted meanwhile is not remembered as present); for a root commit, the
    :func:`refs_digest` taken before the walk (``refs_before``), kept only when the refs are
    still the same after it. Anything else is not kept. A memo that cannot be written (a
    read-only repository) is left out: reads then ask libgit2 each time."""
    memo = _read_memo(common_dir)
    if anchor.source == "config" and anchor.present:
        found = _object_files(common_dir, anchor.sha)
        if found is None or not (found[0] or found[1]) or not _is_commit(repo, anchor.sha):
            return
        commits = memo.get("commits") if isinstance(memo.get("commits"), dict) else {}
        commits = {anchor.sha: {"packs": found[0], "loose": found[1]},
                   **{k: v for k, v in commits.items() if k != anchor.sha}}
        memo["commits"] = dict(list(commits.items())[:8])
    elif anchor.source == "root-commit":
        if refs_before is None or refs_digest(common_dir) != refs_before:
            return
        memo["root"] = {"refs": refs_before, "anchor": anchor.sha}
    else:
        return
    path = common_dir / ANCHOR_MEMO
    temp = path.with_name(f"{ANCHOR_MEMO}.{os.getpid()}.tmp")
    try:
        temp.write_text(json.dumps(memo, sort_keys=True), encoding="utf-8")
        os.replace(temp, path)
    except OSError:
        temp.unlink(missing_ok=True)


def confirm_remembered(common_dir: Path, anchor: Anchor) -> Any:
    """A check for the first write on an anchor :func:`remembered_anchor` gave (set as the
    log's ``confirm_anchor``): a write opens the repository anyway, so it asks libgit2 what
    the memo stood for (a configured anchor is a commit here; a root commit is still the one
    :func:`find_root_commit` finds) before a note is hung off it. Returns the check:
    ``check(repo)`` -> None, or why the write is refused after deleting the memo (a memo
    edited by hand, copied from another repository): ``<memo> named anchor <sha>, which this
    repository does not confirm; it is removed: run the command again``."""

    def check(repo: pygit2.Repository) -> str | None:
        confirmed = (_is_commit(repo, anchor.sha) if anchor.source == "config"
                     else find_root_commit(repo) == anchor.sha)
        if confirmed:
            return None
        memo = common_dir / ANCHOR_MEMO
        memo.unlink(missing_ok=True)
        return (f"{memo} named anchor {anchor.sha}, which this repository does not confirm; "
                "it is removed: run the command again")

    return check
