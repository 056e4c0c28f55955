"""``detect``: is ynm here? Detected, never required (seed 003_b7c8dac142c7aed9.txt, Detect).

Runs before every write of a program that may or may not have ynm, so it starts no process and
imports no git library: it finds the executable on ``PATH`` and the repository by looking at the
file system, as ``ynm.store.repo.discover_git`` does (this module imports neither the
service nor the store).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from ynm.client.memory import YnmCLI

PROJECT_DIR = ".ynm"


def _git_dir_of(folder: Path) -> Path | None:
    """The git dir of the work tree rooted at ``folder`` (a ``.git`` directory, or the target
    of a ``.git`` file as in a linked worktree), or None when ``folder`` is no work tree root."""
    dot_git = folder / ".git"
    if dot_git.is_dir():
        return dot_git if (dot_git / "HEAD").is_file() else None
    if dot_git.is_file():
        try:
            first = dot_git.read_text(encoding="utf-8").partition("\n")[0].strip()
        except OSError:
            return None
        if not first.startswith("gitdir:"):
            return None
        target = Path(first[len("gitdir:"):].strip())
        target = target if target.is_absolute() else folder / target
        return target if (target / "HEAD").is_file() else None
    return None


def repository_root(cwd: str | os.PathLike[str]) -> Path | None:
    """The main work tree of the git repository holding ``cwd``: for a linked worktree, the
    main repository's (the parent of the shared ``.git`` named by the worktree's ``commondir``
    file); None outside any repository (or in a bare one, which has no ``.ynm/``).

    Walks up from ``cwd`` to the first folder with a ``.git`` and stops there: nothing above
    the repository root is looked at. Source: reference/storage.md §5.6 (worktrees share one
    store); the same walk as ``ynm.store.repo.discover_git``.
    """
    here = Path(cwd).expanduser().absolute()
    for folder in (here, *here.parents):
        git_dir = _git_dir_of(folder)
        if git_dir is None:
            continue
        commondir = git_dir / "commondir"
        if commondir.is_file():
            try:
                rel = commondir.read_text(encoding="utf-8").strip()
            except OSError:
                return folder
            common = (git_dir / rel).resolve() if not os.path.isabs(rel) else Path(rel)
            return common.parent if common.name == ".git" else folder
        return folder
    return None


def user_store() -> tuple[Path, str]:
    """The user's store and where its path came from: ``$YNM_HOME`` when that is set (and not
    empty), and only then ``~/.ynm`` (reference/cli.md §5.1). Returns ``(path, "$YNM_HOME")``
    or ``(path, "~/.ynm")``."""
    home = os.environ.get("YNM_HOME")
    if home:
        return Path(home).expanduser().absolute(), "$YNM_HOME"
    return Path("~/.ynm").expanduser(), "~/.ynm"


def detect(cwd: str | os.PathLike[str] | None = None,
           bin: str = "ynm") -> tuple[YnmCLI | None, str]:
    """Return ynm when it is on ``PATH`` and a store is present, else None; and the reason.

    Where it looks, in order (the places ynm itself writes): the ``.ynm/`` directory at the
    root of the git repository ``cwd`` is in (for a linked worktree, the main repository's);
    then the user's store, ``$YNM_HOME`` when set and only then ``~/.ynm``. It never walks up
    past the repository root, so ``~/.ynm`` is never taken for a project's store (a repository
    rooted at the home directory finds it as the user's store). No git process, no pygit2.

    Args:
        cwd: the directory ynm will run as if from; default the process's working directory.
        bin: the executable's name or path (default ``ynm``).

    Returns:
        ``(YnmCLI(bin=<path found>, cwd=cwd), reason)`` where reason is ``project store
        <repo>/.ynm`` or ``user store <path> ($YNM_HOME|~/.ynm)``; or ``(None, reason)``:
        ``ynm is not on PATH``, or ``no ynm store: ...`` naming the places looked at.

    Source: seed 003_b7c8dac142c7aed9.txt (Detect; ADR-012: detected, never required).
    """
    found = shutil.which(bin)
    if found is None:
        return None, f"{bin} is not on PATH"
    here = Path(cwd) if cwd is not None else Path.cwd()
    home, home_from = user_store()
    looked: list[str] = []
    repo = repository_root(here)
    if repo is not None:
        project = repo / PROJECT_DIR
        if project.is_dir() and project.absolute() != home:
            return YnmCLI(bin=found, cwd=cwd), f"project store {project}"
        looked.append(f"no {PROJECT_DIR}/ at repository root {repo}")
    else:
        looked.append(f"{here} is not inside a git repository")
    if home.is_dir():
        return YnmCLI(bin=found, cwd=cwd), f"user store {home} ({home_from})"
    looked.append(f"no user store at {home} ({home_from})")
    return None, "no ynm store: " + "; ".join(looked)
