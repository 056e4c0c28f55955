"""``ynm doctor`` and ``ynm validate``: load the configuration, open the mounts without
creating or refreshing anything, and run the checks of :mod:`ynm.doctor` in the reference's
order (reference/cli.md §4.4, §4.28). Read-only and offline: no cache, config file, ref or
store is written, and no hosted store is called."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ynm.doctor import Check, report


def doctor(cwd: str | Path, env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """Every doctor check for ``cwd``: ``{"ok", "checks": [{"name", "ok", "level", "detail",
    "fix"?}]}`` (:func:`ynm.doctor.report`). Never raises for what it finds: a configuration
    that cannot be loaded is a failed ``config files`` check (then only git and the agent
    clients are checked)."""
    from ynm.doctor import cache, clients, mounts, setup
    from ynm.errors import YnmError
    from ynm.service.clients import home_dir
    from ynm.service.config import load_config, project_config_path

    env = dict(os.environ if env is None else env)
    here = Path(cwd).expanduser().absolute()
    checks: list[Check] = [setup.git_available(env)]
    try:
        loaded = load_config(here, env)
    except YnmError as err:
        checks.append(setup.config_error(str(err)))
        checks += clients.client_checks(here, home_dir(env), env)
        checks += setup.ynh_worker(env)
        return report(checks)
    checks += setup.local_install(loaded.home, loaded.env)
    checks.append(setup.config_files(loaded.files))

    store_facts, problems, personal = _open_stores(loaded)
    if personal == "missing":
        checks.append(mounts.personal_not_created(loaded.config.personal_store))
    elif personal != "ok":
        checks.append(mounts.personal_broken(loaded.config.personal_store, personal))
    for facts in store_facts:
        checks += mounts.mount_checks(facts)
    checks += [mounts.problem_check(p) for p in problems]

    if loaded.repo is not None and not loaded.bare:
        checks += setup.project_checks(loaded.repo, project_config_path(loaded.repo),
                                       loaded.config.remote)
    elif loaded.repo is None:
        checks.append(setup.outside_repo())

    from ynm.service.remote import remote_mounts

    checks += mounts.hosted_checks(remote_mounts(loaded))
    checks += clients.client_checks(loaded.worktree or here, home_dir(env), env)
    checks += setup.ynh_worker(env)

    for group in (cache.cache_checks, cache.bad_lines_checks, cache.snapshot_checks):
        for facts in store_facts:
            checks += group(facts)
    checks.append(cache.vector_model(loaded.config.embedder, loaded.home, loaded.env))
    for facts in store_facts:
        checks += cache.cache_size_checks(facts)
    return report(checks)


def _open_stores(loaded: Any) -> tuple[list[Any], list[Any], str]:
    """The mounts' :class:`ynm.doctor.mounts.StoreFacts`, the mounts that could not be
    opened, and the personal store's state (:func:`_store_state`); it is opened only when
    ``ok`` (opening a missing store creates it)."""
    from ynm.doctor.mounts import store_facts
    from ynm.service.mounts import open_mounts

    personal = _store_state(Path(loaded.config.personal_store))
    opened, problems = open_mounts(loaded, personal=personal == "ok", keep_going=True)
    return [store_facts(m) for m in opened], problems, personal


def _store_state(path: Path) -> str:
    """``ok`` when ``path`` is a repository with a root commit (opening it writes nothing),
    ``missing`` when there is no store yet (or one without a commit: the first write makes
    its root), else why it cannot be the store."""
    import pygit2

    from ynm.store.anchor import find_root_commit

    if not path.exists() or (path.is_dir() and not any(path.iterdir())):
        return "missing"
    try:
        repo = pygit2.Repository(str(path), pygit2.enums.RepositoryOpenFlag.NO_SEARCH)
    except pygit2.GitError:
        return f"not a git repository: {path}"
    return "ok" if find_root_commit(repo) is not None else "missing"


def validate(folder: str | Path, cwd: str | Path | None = None,
             env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``ynm validate [dir]`` (:func:`ynm.doctor.clients.validate`) for ``folder`` with user
    files under ``$HOME``; the fixes name ``-C <folder>`` when it is not ``cwd``.

    Raises:
        YnmError: (exit 1) nothing to validate in ``folder``.
    """
    from ynm.doctor.clients import validate as run
    from ynm.service.clients import home_dir

    env = dict(os.environ if env is None else env)
    folder = Path(folder).expanduser().resolve()
    here = Path(cwd).expanduser().resolve() if cwd is not None else Path.cwd().resolve()
    prefix = "ynm" if folder == here else f"ynm -C {folder}"
    return run(folder, home_dir(env), env, prefix)
