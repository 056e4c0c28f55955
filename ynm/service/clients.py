"""Thin service entry points for agent client integrations (:mod:`ynm.integrations`), used by
``ynm client`` and ``ynm init``: build the target from the command's options, and keep the
personal files a client writes in a git project out of git (``.git/info/exclude``).
Source: reference/cli.md §4.2, §4.10 step 7.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ynm.integrations import (
    CLIENTS,
    ClientResult,
    ClientStatus,
    Target,
    install,
    plan,
    resolve,
    status,
)


def home_dir(env: Mapping[str, str] | None = None) -> Path:
    """``$HOME`` (the user-level files clients read), else the account's home directory."""
    env = os.environ if env is None else env
    return Path(env.get("HOME") or Path.home())


def client_target(cwd: Path, *, scope: str = "project", url: str | None = None,
                  token: str | None = None, hooks: bool = True,
                  command: list[str] | tuple[str, ...] = ("ynm",), force: bool = False) -> Target:
    """The install target for ``cwd`` and the current environment; ``force`` lets the install
    replace values in client files that are not ynm's."""
    env = dict(os.environ)
    return Target(Path(cwd).resolve(), home_dir(env), scope, url, token, tuple(command), hooks,
                  env, force=force)


def plan_clients(target: Target, name: str | None) -> list[ClientResult]:
    """``ynm client plan``: the named client, or the ones the project uses (Refused, exit 2,
    when none)."""
    return plan(target, resolve(target.work_tree, target.home, name, target.env))


def install_clients(target: Target, name: str | None, *, yes: bool = False) -> list[ClientResult]:
    """``ynm client install``: apply the plans, then exclude the clients' personal files (e.g.
    ``.claude/settings.local.json``) from git when ``cwd`` is in a git work tree, with a done
    line ``excluded <files> from git (<exclude file>)``. Outside a git repository the files are
    written all the same and a done line says plainly that nothing was excluded from git."""
    results = install(target, resolve(target.work_tree, target.home, name, target.env), yes=yes)
    if target.scope != "project":
        return results
    for r in results:
        wrote = {line.split(": ", 1)[0].split(" ", 1)[1] for line in r.done
                 if line.startswith(("wrote ", "merged "))}
        local = [f for f in CLIENTS[r.client].LOCAL_FILES if str(target.work_tree / f) in wrote]
        if not local:
            continue
        found = git_exclude_file(target.work_tree)
        if found is None:
            r.done.append(f"note: {target.work_tree} is not in a git repository, so nothing was "
                          f"excluded from git; {', '.join(local)} is yours only: keep it out "
                          "of any repository you make here")
            continue
        added = exclude_local_files(target.work_tree, local)
        if added:
            r.done.append(f"excluded {', '.join(local)} from git ({found})")
    return results


def client_status(cwd: Path, name: str | None) -> list[ClientStatus]:
    """``ynm client status``: every known client, or the named one."""
    return status(Path(cwd).resolve(), home_dir(), name)


def _work_tree_repo(work_tree: Path) -> Any:
    import pygit2

    found = pygit2.discover_repository(str(work_tree))
    if found is None:
        return None
    repo = pygit2.Repository(found)
    return None if repo.workdir is None else repo


def git_exclude_file(work_tree: Path) -> Path | None:
    """``<git common dir>/info/exclude`` of the git work tree ``work_tree`` is in, or None
    when it is in none (a bare repository counts as none)."""
    repo = _work_tree_repo(work_tree)
    return None if repo is None else Path(repo.path) / "info" / "exclude"


def exclude_local_files(work_tree: Path, entries: list[str]) -> list[str]:
    """Append ``entries`` (paths relative to ``work_tree``) to ``<git dir>/info/exclude`` when
    ``work_tree`` is in a git work tree and they are not listed yet; returns those added
    (none outside a repository). Below the top of the work tree an entry is written anchored
    at its folder (``/sub/dir/.claude/settings.local.json``), so it excludes that file only."""
    repo = _work_tree_repo(work_tree)
    if repo is None:
        return []
    top = Path(repo.workdir).resolve()
    below = Path(work_tree).resolve().relative_to(top) if Path(work_tree).resolve() != top \
        else None
    path = Path(repo.path) / "info" / "exclude"
    text = path.read_text() if path.exists() else ""
    have = {line.strip() for line in text.splitlines()}
    lines = {e: (f"/{below.as_posix()}/{e}" if below else e) for e in entries}
    added = [e for e in entries if lines[e] not in have]
    if added:
        path.parent.mkdir(parents=True, exist_ok=True)
        prefix = "" if not text or text.endswith("\n") else "\n"
        with path.open("a") as fh:
            fh.write(prefix + "".join(lines[e] + "\n" for e in added))
    return added


def results_json(results: list[ClientResult], action: str, single: bool) -> Any:
    """The JSON of reference/cli.md §4.2: for a single named client, ``plan`` gives the bare
    array of changes and ``install`` ``{client, done}``; otherwise an array of ``{client, plan,
    done, inPlace}``."""
    if single:
        r = results[0]
        return ([c.to_obj() for c in r.plan] if action == "plan"
                else {"client": r.client, "done": r.done})
    return [r.to_obj() for r in results]
