"""Finding and opening a git repository: where it lives (a walk of the file system, no git
library), opening it with pygit2, its common dir, the identity ynm commits with, and the one line
ynm shows of a failed ``git`` child's output.

Source: reference/storage.md §3.5 (identity fallback, lock in the common dir).
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

from ynm.errors import StoreError
from ynm.store.libgit import pygit2

FALLBACK_NAME = "ynm"
FALLBACK_EMAIL = "ynm@localhost"


@dataclass(frozen=True)
class GitLocation:
    """Where the git repository holding a directory lives; every path resolved (no symlinks).

    Attributes:
        repo: the main work tree (the parent of the common dir), or the bare repository itself.
        worktree: the work tree holding the directory (a linked one if so); None when bare.
        git_dir: this work tree's git dir (``.git`` or ``.git/worktrees/<name>``).
        common_dir: the shared git dir (objects, refs, the ynm lock).
        bare: True when the directory is inside a bare repository.

    Source: reference/storage.md §5.6 (worktrees share one store, lock and project index).
    """

    repo: Path
    worktree: Path | None
    git_dir: Path
    common_dir: Path
    bare: bool


def _is_git_dir(path: Path) -> bool:
    # git's own test: a HEAD file plus objects/ and refs/, or a linked worktree's commondir file
    if not (path / "HEAD").is_file():
        return False
    if (path / "commondir").is_file():
        return True
    return (path / "objects").is_dir() and (path / "refs").is_dir()


def _read_gitfile(dot_git: Path) -> Path | None:
    """Follow a ``.git`` file (``gitdir: <path>``), relative paths against its folder."""
    try:
        text = dot_git.read_text(encoding="utf-8")
    except OSError:
        return None
    first = text.splitlines()[0].strip() if text else ""
    if not first.startswith("gitdir:"):
        return None
    target = Path(first[len("gitdir:") :].strip())
    if not target.is_absolute():
        target = dot_git.parent / target
    return target.resolve()


def _common_dir(git_dir: Path) -> Path:
    commondir = git_dir / "commondir"
    if commondir.is_file():
        rel = commondir.read_text(encoding="utf-8").strip()
        target = Path(rel)
        return (target if target.is_absolute() else git_dir / target).resolve()
    return git_dir


def _core_worktree(common_dir: Path) -> Path | None:
    """Read ``core.worktree`` from a git config (set for submodules); None when absent."""
    try:
        lines = (common_dir / "config").read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    section = ""
    for raw in lines:
        line = raw.strip()
        if line.startswith("["):
            section = line.strip("[]").strip().lower()
        elif section == "core" and "=" in line:
            key, _, value = line.partition("=")
            if key.strip().lower() == "worktree":
                target = Path(value.strip().strip('"'))
                return (target if target.is_absolute() else common_dir / target).resolve()
    return None


def _locate(worktree: Path, git_dir: Path) -> GitLocation:
    common = _common_dir(git_dir)
    if common.name == ".git":
        repo = common.parent
    elif common == git_dir:
        # a submodule or --separate-git-dir: this work tree is the main one
        repo = worktree
    else:
        # a linked worktree of a bare repo (or of a submodule, which records core.worktree)
        repo = _core_worktree(common) or common
    return GitLocation(repo=repo, worktree=worktree, git_dir=git_dir, common_dir=common, bare=False)


def discover_git(cwd: str | Path) -> GitLocation | None:
    """Find the git repository holding ``cwd`` by walking up the file system.

    Handles ``.git`` directories, ``.git`` files (``gitdir: ...``, linked worktrees, submodules)
    with the ``commondir`` file of a linked worktree, and bare repositories. Starts no process
    and imports no git library: it runs on every CLI call. ``GIT_DIR`` and
    ``GIT_CEILING_DIRECTORIES`` are not consulted.

    Args:
        cwd: a directory (it need not be the work tree root).

    Returns:
        The location, or None outside any repository.

    Source: reference/storage.md §5.6 (main repo = parent of the git common dir).
    """
    here = Path(cwd).expanduser().resolve()
    for folder in (here, *here.parents):
        dot_git = folder / ".git"
        if dot_git.is_dir() and _is_git_dir(dot_git):
            return _locate(folder, dot_git.resolve())
        if dot_git.is_file():
            target = _read_gitfile(dot_git)
            if target is not None and _is_git_dir(target):
                return _locate(folder, target)
        if _is_git_dir(folder):
            if folder.name == ".git":
                # inside the git dir of an ordinary repository (a hook's cwd, say)
                return _locate(folder.parent, folder)
            common = _common_dir(folder)
            return GitLocation(
                repo=common, worktree=None, git_dir=folder, common_dir=common, bare=True
            )
    return None


def open_repository(path: str | os.PathLike[str]) -> pygit2.Repository:
    """Open the repository containing ``path`` (work tree, ``.git`` dir, bare repo or worktree).

    A linked worktree resolves to its main repository's common dir, so every worktree of a
    repository shares the same refs and the same lock file.

    Raises:
        StoreError: When ``path`` is not inside a git repository.
    """
    found = pygit2.discover_repository(str(path))
    if found is None:
        raise StoreError(f"not a git repository: {path}")
    common = common_dir_of(Path(found))
    try:
        return pygit2.Repository(str(common))
    except pygit2.GitError as exc:
        raise StoreError(f"cannot open git repository {common}: {exc}") from exc


def common_dir_of(git_dir: Path) -> Path:
    """The git common dir for a git dir: ``$GIT_DIR/commondir`` if present, else the git dir.

    A linked worktree's git dir is ``<common>/worktrees/<name>`` and names its common dir (usually
    as a relative path) in the ``commondir`` file, as git's own layout does.
    """
    marker = git_dir / "commondir"
    if marker.is_file():
        target = marker.read_text(encoding="utf-8").strip()
        return (git_dir / target).resolve()
    return git_dir.resolve()


def find_common_dir(path: str | os.PathLike[str]) -> Path:
    """The common dir of the repository holding ``path`` (which must exist), found by
    :func:`discover_git` (no git library): where :func:`open_repository` opens it.

    Raises:
        StoreError: When ``path`` is not inside a git repository.
    """
    # a path that does not exist is no repository, even inside one (as libgit2 says)
    found = discover_git(path) if os.path.exists(path) else None
    if found is None:
        raise StoreError(f"not a git repository: {path}")
    return found.common_dir


PACKED_REFS = "packed-refs"


def read_refs(common_dir: Path, prefix: str) -> dict[str, str] | None:
    """Every ref whose name starts with ``prefix`` (``refs/...``, ending in ``/``) -> the
    commit id it names, read from git's ref files, without a git library: the loose files
    under ``<common dir>/<prefix>``, then ``packed-refs`` for the names no loose file holds
    (a loose ref is newer than its packed line; git removes a deleted ref from both).

    Returns None when the files cannot answer for certain, so the caller asks libgit2: the
    repository keeps its refs in another format (``reftable``), a ref under ``prefix`` is
    symbolic (``ref: ...``) or not one object id, or a file cannot be read (a ref being
    written is renamed into place whole, so a read sees the old or the new id).

    Source: git's ``files`` ref storage (gitrepository-layout(5), git-pack-refs(1)).
    """
    if (common_dir / "reftable").exists():
        return None
    out: dict[str, str] = {}
    try:
        for folder, dirs, files in os.walk(common_dir / prefix, onerror=_raise):
            dirs.sort()
            for name in files:
                if name.endswith(".lock"):
                    continue  # a ref being written: the ref file itself still holds the old id
                path = Path(folder, name)
                value = path.read_bytes().strip()
                if not _is_object_id(value):
                    return None
                out[path.relative_to(common_dir).as_posix()] = value.decode("ascii")
    except FileNotFoundError:
        if out or (common_dir / prefix).exists():
            return None  # a ref deleted while it was read: ask libgit2
    except OSError:
        return None
    try:
        packed = (common_dir / PACKED_REFS).read_bytes()
    except FileNotFoundError:
        packed = b""
    except OSError:
        return None
    raw_prefix = prefix.encode()
    for line in packed.splitlines():
        if line.startswith((b"#", b"^")):
            continue  # the header (# pack-refs with: ...) and peeled ids (^<id>)
        value, _, name = line.partition(b" ")
        if name.startswith(raw_prefix):
            if not _is_object_id(value):
                return None
            out.setdefault(name.decode("utf-8", errors="replace"), value.decode("ascii"))
    return dict(sorted(out.items()))


def _raise(err: OSError) -> None:
    raise err


def _is_object_id(value: bytes) -> bool:
    return len(value) in (40, 64) and all(c in b"0123456789abcdef" for c in value)


def repo_common_dir(repo: pygit2.Repository) -> Path:
    """The common dir of an open repository (where refs, objects and ``ynm.lock`` live)."""
    return common_dir_of(Path(repo.path))


def is_shallow(repo: pygit2.Repository) -> bool:
    """Whether the repository is a shallow clone, as ``git rev-parse
    --is-shallow-repository`` answers: a ``shallow`` file exists in its common dir (git keeps
    it there for every worktree; an empty file still counts, as git counts it).

    libgit2's ``Repository.is_shallow`` looks in the git dir it was opened at, so it says
    False in a linked worktree of a shallow clone; ask this instead."""
    return (repo_common_dir(repo) / "shallow").exists()


def _config_value(repo: pygit2.Repository, name: str) -> str | None:
    try:
        value = repo.config[name]
    except (KeyError, pygit2.GitError):
        return None
    return value or None


def signature(repo: pygit2.Repository, role: str = "COMMITTER") -> pygit2.Signature:
    """The identity for a commit made now, with git's precedence.

    ``GIT_<role>_NAME`` / ``GIT_<role>_EMAIL`` first, then ``user.name`` / ``user.email`` from
    the repository's configuration (which includes global and system files), then ``ynm`` and
    ``ynm@localhost``. The timestamp is now, in the local UTC offset.

    Args:
        repo: The repository whose configuration is read.
        role: ``"AUTHOR"`` or ``"COMMITTER"``.

    Source: reference/storage.md §3.5 ("Identity fallback").
    """
    name = (
        os.environ.get(f"GIT_{role}_NAME")
        or _config_value(repo, "user.name")
        or FALLBACK_NAME
    )
    email = (
        os.environ.get(f"GIT_{role}_EMAIL")
        or _config_value(repo, "user.email")
        or FALLBACK_EMAIL
    )
    return pygit2.Signature(name, email)


def refs_under(repo: pygit2.Repository, prefix: str) -> dict[str, str]:
    """Every ref whose name starts with ``prefix`` -> the hex id it resolves to; refs that
    cannot be resolved (dangling symbolic refs, missing objects) are left out."""
    out = {}
    raw_prefix = prefix.encode()
    for raw in repo.raw_listall_references():
        if raw.startswith(raw_prefix):
            name = raw.decode("utf-8", errors="replace")
            try:
                target = repo.lookup_reference(name).resolve().target
            except (KeyError, pygit2.GitError):
                continue
            out[name] = str(target)
    return out


def git_failure_line(proc: subprocess.CompletedProcess[str]) -> str:
    """What a failed ``git`` child said, on one line: git's first ``fatal``/``error`` line,
    after the lines printed before it (up to two: the transport's cause, such as
    ``ssh: connect to host h port 22: Connection refused``, that git's own ``Could not read
    from remote repository`` does not name; a pre-receive hook's ``remote: ...`` reason),
    joined with ``; ``; else its first non-blank line; else ``exit <code>``. The advice git
    prints after the error (``Please make sure you have the correct access rights``) is left
    out. Reads ``stderr``, then ``stdout`` when stderr is empty."""
    lines = [line.strip() for line in (proc.stderr or proc.stdout or "").splitlines()
             if line.strip()]
    at = next((i for i, line in enumerate(lines)
               if line.lower().startswith(("fatal", "error"))), None)
    if at is None:
        return lines[0] if lines else f"exit {proc.returncode}"
    return "; ".join(lines[max(0, at - 2): at + 1])
