"""Opening a git repository with pygit2: its common dir, the identity ynm commits with, and
the one line ynm shows of a failed ``git`` child's output.

Source: reference/storage.md §3.5 (identity fallback, lock in the common dir).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pygit2

from ynm.errors import StoreError

# Reading an object does not re-hash it, as git itself does not (only fsck verifies): libgit2's
# strict verification costs ~20 ms on a 6 MB shard blob, on every read.
pygit2.settings.enable_strict_hash_verification(False)

FALLBACK_NAME = "ynm"
FALLBACK_EMAIL = "ynm@localhost"


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


def repo_common_dir(repo: pygit2.Repository) -> Path:
    """The common dir of an open repository (where refs, objects and ``ynm.lock`` live)."""
    return common_dir_of(Path(repo.path))


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
