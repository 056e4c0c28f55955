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
                  command: list[str] | tuple[str, ...] = ("ynm",)) -> Target:
    """The install target for ``cwd`` and the current environment."""
    env = dict(os.environ)
    return Target(Path(cwd).resolve(), home_dir(env), scope, url, token, tuple(command), hooks,
                  env)


def plan_clients(target: Target, name: str | None) -> list[ClientResult]:
    """``ynm client plan``: the named client, or the ones the project uses (Refused, exit 2,
    when none)."""
    return plan(target, resolve(target.work_tree, target.home, name, target.env))


def install_clients(target: Target, name: str | None, *, yes: bool = False) -> list[ClientResult]:
    """``ynm client install``: apply the plans, then exclude the clients' personal files (e.g.
    ``.claude/settings.local.json``) from git when ``cwd`` is a git work tree."""
    results = install(target, resolve(target.work_tree, target.home, name, target.env), yes=yes)
    if target.scope == "project":
        local = [f for r in results if r.done for f in CLIENTS[r.client].LOCAL_FILES]
        if local:
            exclude_local_files(target.work_tree, local)
    return results


def client_status(cwd: Path, name: str | None) -> list[ClientStatus]:
    """``ynm client status``: every known client, or the named one."""
    return status(Path(cwd).resolve(), home_dir(), name)


def exclude_local_files(work_tree: Path, entries: list[str]) -> list[str]:
    """Append ``entries`` (paths relative to the work tree) to ``<git dir>/info/exclude`` when
    ``work_tree`` is the top of a git work tree and they are not listed yet; returns those
    added (none outside a repository)."""
    import pygit2

    found = pygit2.discover_repository(str(work_tree))
    if found is None:
        return []
    repo = pygit2.Repository(found)
    if repo.workdir is None or Path(repo.workdir).resolve() != Path(work_tree).resolve():
        return []
    path = Path(repo.path) / "info" / "exclude"
    text = path.read_text() if path.exists() else ""
    have = {line.strip() for line in text.splitlines()}
    added = [e for e in entries if e not in have]
    if added:
        path.parent.mkdir(parents=True, exist_ok=True)
        prefix = "" if not text or text.endswith("\n") else "\n"
        with path.open("a") as fh:
            fh.write(prefix + "".join(e + "\n" for e in added))
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
