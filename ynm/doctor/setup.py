"""Doctor checks of the machine and the project repository: git, the local install, the
configuration files, the project's anchor, refspecs, personal refs and pre-push hook, and a ynh
worker's environment. Source: reference/cli.md §4.4 items 1-3 and 5, §7.4, §6 (personal refs
never in a project repository)."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from collections.abc import Mapping
from pathlib import Path

from ynm.doctor import Check, check

# Ref prefixes under which a personal ref could sit in a repository: the notes shards, the
# documents, and their copies fetched from a remote (reference/storage.md §3).
PERSONAL_PREFIXES = ("refs/notes/ynm/personal/", "refs/ynm/personal/")
PERSONAL_REMOTE_PREFIXES = ("refs/notes/ynm-remote/", "refs/ynm-remote/")
HOOK_NEEDLE = "ynm sync"  # a pre-push hook that runs this counts as installed (cli.md §4.4)


def git_available(env: Mapping[str, str] | None = None) -> Check:
    """``git available``: the output of ``git --version``, or ``git not found on PATH``
    (error)."""
    try:
        proc = subprocess.run(["git", "--version"], capture_output=True, text=True, timeout=30,
                              env=dict(env) if env is not None else None, check=False)
        version = proc.stdout.strip() if proc.returncode == 0 else ""
    except OSError:
        version = ""
    return check("git available", bool(version), version or "git not found on PATH")


def local_install(home: Path, env: Mapping[str, str]) -> list[Check]:
    """``local install on PATH``, only when ``<YNM_HOME>/bin/ynm`` exists: warn when that
    folder is not on ``PATH``; the fix puts it there."""
    bindir = Path(home) / "bin"
    if not (bindir / "ynm").exists():
        return []
    on_path = any(p and Path(p).resolve() == bindir.resolve()
                  for p in env.get("PATH", "").split(os.pathsep))
    if on_path:
        return [check("local install on PATH", True, str(bindir))]
    return [check("local install on PATH", False, f"{bindir} holds a ynm launcher but is not on "
                  "PATH", "warn", fix=f'export PATH="{bindir}:$PATH"')]


def config_files(files: list[str]) -> Check:
    """``config files``: always ok; the files read, joined by ``, ``, or ``none (defaults)``."""
    return check("config files", True, ", ".join(files) if files else "none (defaults)")


def config_error(message: str) -> Check:
    """``config files`` when the configuration cannot be loaded: an error naming the file
    and the key (ynm reads nothing else then)."""
    return check("config files", False, message)


def project_checks(repo_path: Path, config_file: Path, remote: str) -> list[Check]:
    """The checks of a non-bare repository (reference/cli.md §4.4 item 5): ``project
    initialised`` (warn) when ``config_file`` is missing; else ``project anchor configured``,
    then for the remote ``remote``: ``distributed fetch refspec``, or ``remote`` (warn, with
    the ``git remote add`` that mends it) when git has no such remote; then ``personal refs
    never pushed`` over every remote's fetch and push refspecs (the reference looks at
    ``remote`` only and runs it only when that remote exists), ``no personal refs in project
    repo`` and ``pre-push hook``."""

    from ynm.store.repo import open_repository
    from ynm.store.sync import fetch_refspec

    if not config_file.is_file():
        return [check("project initialised", False, "no .ynm/config.json; run `ynm init` to add "
                      "a distributed project mount", "warn", fix="ynm init")]
    out: list[Check] = []
    try:
        data = json.loads(config_file.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        data = {}
    anchor = data.get("anchor") if isinstance(data, dict) else None
    out.append(check("project anchor configured", bool(anchor),
                     anchor or "missing anchor in .ynm/config.json",
                     fix=None if anchor else "ynm init"))
    repo = open_repository(repo_path)
    remotes = {r.name: r for r in repo.remotes}
    if remote in remotes:
        spec = fetch_refspec(remote)
        have = spec in remotes[remote].fetch_refspecs
        out.append(check("distributed fetch refspec", have,
                         spec if have else "missing; `ynm sync` adds it",
                         fix=None if have else f"git config --add remote.{remote}.fetch "
                         f"{shlex.quote(spec)}"))
    else:
        # the reference passes this check (ok, warn) and so prints it as `ok`; a project whose
        # memory cannot be shared is something to act on: a failing warning (docs/cli.md)
        out.append(check("remote", False, f'remote "{remote}" not configured; sync unavailable: '
                         f"add it with `git remote add {remote} <url>`, then run `ynm sync`",
                         "warn"))
    out.append(personal_refspecs(repo, list(remotes)))
    out.append(personal_refs(repo))
    out.append(pre_push_hook(repo_path, repo))
    return out


def _multivar(repo: object, name: str) -> list[str]:
    import pygit2

    try:
        return [str(v) for v in repo.config.get_multivar(name)]  # type: ignore[attr-defined]
    except (KeyError, pygit2.GitError):
        return []


def personal_refspecs(repo: object, remotes: list[str]) -> Check:
    """``personal refs never pushed``: an error when any remote's fetch or push refspec
    mentions ``personal`` (a push would publish personal memory; a fetch would bring someone
    else's into this repository). The detail names each offending refspec; the fix removes
    them, one ``git config --unset-all <key> personal`` per key (the value pattern keeps the
    key's other refspecs)."""
    found: list[tuple[str, str]] = []
    for name in remotes:
        for kind in ("fetch", "push"):
            key = f"remote.{name}.{kind}"
            found += [(key, v) for v in _multivar(repo, key) if "personal" in v]
    if not found:
        return check("personal refs never pushed", True, "no personal refspecs in remote config")
    keys = list(dict.fromkeys(k for k, _ in found))
    detail = "; ".join(f"{k} = {v}" for k, v in found)
    return check("personal refs never pushed", False,
                 f"personal memory would leave this machine: {detail}",
                 fix=" && ".join(f"git config --unset-all {k} personal" for k in keys))


def personal_refs(repo: object) -> Check:
    """``no personal refs in project repo``: an error listing every personal ref in the
    repository (shards, documents, or copies fetched from a remote); detail ``ok`` when
    there are none. The fix deletes them (export them with ``ynm export --level personal``
    from here first if they are worth keeping)."""
    refs: list[str] = []
    for raw in sorted(repo.raw_listall_references()):  # type: ignore[attr-defined]
        ref = raw.decode("utf-8", errors="replace")
        if ref.startswith(PERSONAL_PREFIXES) or (
                ref.startswith(PERSONAL_REMOTE_PREFIXES) and "/personal/" in ref):
            refs.append(ref)
    if not refs:
        return check("no personal refs in project repo", True, "ok")
    return check("no personal refs in project repo", False, ", ".join(refs),
                 fix=" && ".join(f"git update-ref -d {shlex.quote(r)}" for r in refs))


def hooks_dir(work_tree: Path, repo: object) -> Path:
    """The folder git runs hooks from: ``git rev-parse --git-path hooks`` (``core.hooksPath``
    honoured), or ``<common dir>/hooks`` when git cannot say."""
    try:
        proc = subprocess.run(["git", "rev-parse", "--path-format=absolute", "--git-path",
                               "hooks"], cwd=work_tree, capture_output=True, text=True,
                              timeout=30, check=False)
        if proc.returncode == 0 and proc.stdout.strip():
            return Path(proc.stdout.strip())
    except OSError:
        pass
    from ynm.store.repo import repo_common_dir

    return repo_common_dir(repo) / "hooks"  # type: ignore[arg-type]


def pre_push_hook(work_tree: Path, repo: object) -> Check:
    """``pre-push hook``: installed when the hook file runs ``ynm sync`` (ok, info: its path);
    else warn ``not installed``, fixed by ``ynm init`` (which leaves another tool's hook
    alone). A hook file that runs ``ynm sync`` but is not executable is one git ignores
    (``hint: The '<path>' hook was ignored because it's not set as executable``): warn
    ``<path> is not executable, so git ignores it``, fixed by ``chmod +x <path>``."""
    path = hooks_dir(work_tree, repo) / "pre-push"
    try:
        hooked = HOOK_NEEDLE in path.read_text(errors="replace")
    except OSError:
        hooked = False
    if hooked and not os.access(path, os.X_OK):
        return check("pre-push hook", False, f"{path} is not executable, so git ignores it and "
                     "a push does not share memory", "warn",
                     fix=f"chmod +x {shlex.quote(str(path))}")
    if hooked:
        return check("pre-push hook", True, str(path))
    return check("pre-push hook", False, "not installed", "warn", fix="ynm init")


def outside_repo() -> Check:
    """``git repository`` (ok, info) outside any repository."""
    return check("git repository", True,
                 "not inside a git repository; only the personal store is mounted")


def ynh_worker(env: Mapping[str, str]) -> list[Check]:
    """``ynh worker environment``: inside a ynh worker (``YNH_AGENT_SESSION`` set) without
    ``YNM_HOME``, ynm falls back to ``~/.ynm``, the user's own personal store, because ynh
    passes a worker only the variables its harness lists (newer reference; warn)."""
    if not env.get("YNH_AGENT_SESSION") or env.get("YNM_HOME"):
        return []
    return [check("ynh worker environment", False,
                  "inside a ynh worker without YNM_HOME: ynm uses ~/.ynm, your own personal "
                  "store; add YNM_HOME to the harness's env_passthrough with `ynm client install "
                  "ynh`, then `ynh update ynm`", "warn", fix="ynm client install ynh")]
