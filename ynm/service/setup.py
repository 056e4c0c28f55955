"""``ynm init``: set a repository (or a bare memory store) up for ynm.

Project mode changes no branch, tag, commit or tracked file: it writes ``.ynm/config.json``
(the anchor, which the team commits so every clone agrees), adds ``.ynm/wiki/`` and
``.ynm/index/`` to ``.git/info/exclude``, and, when the remote exists, adds the distributed fetch
refspec and fetches and merges the memory already there (no push). An empty repository gets
an empty ``ynm: root`` commit to serve as the anchor.
Source: reference/cli.md §4.10, reference/storage.md §3.12.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ynm.errors import YnmError
from ynm.service.config import LoadedConfig, project_config_path, write_project_anchor
from ynm.service.mounts import ignore_index_folder

GIT_STATUS_WT_NEW = 1 << 7  # libgit2's flag for an untracked file (git_status_t)

EXCLUDES = (".ynm/wiki/", ".ynm/index/")
HOOK_MARKER = "# ynm: sync shared memory notes alongside code pushes"


def pre_push_hook(command: list[str]) -> str:
    """The pre-push hook script for ``command`` (the argv that runs ynm, e.g. ``["ynm"]`` or
    ``["/home/me/proj/.venv/bin/ynm"]``).

    git runs it as ``pre-push <remote name> <url>``. It syncs the project mount with that
    remote (``ynm sync --quiet --mount project --remote <name>``), never with another one, so
    ``git push fork main`` shares memory with ``fork`` (the reference syncs every distributed
    mount with its configured remote, whatever is pushed to). A push to a bare URL (name equals
    URL) is not synced and says so. When ynm cannot be run, or the sync fails, the hook says so
    on stderr and lets the code push go on (exit 0): memory never blocks a push.
    Source: reference/cli.md §4.10 step 5, with the remote taken from git's arguments.
    """
    import shlex

    first = shlex.quote(command[0])
    rest = " ".join(shlex.quote(c) for c in command[1:])
    run = f'"$ynm"{" " + rest if rest else ""}'
    return f"""#!/bin/sh
{HOOK_MARKER} (installed by `ynm init`)
[ -n "$YNM_SYNC_IN_PROGRESS" ] && exit 0
ynm={first}
if ! command -v "$ynm" >/dev/null 2>&1; then
  if command -v ynm >/dev/null 2>&1; then
    ynm=ynm
  else
    echo "ynm pre-push hook: cannot run ynm ($ynm is gone and ynm is not on PATH): memory was not synced. Put ynm on PATH, or run 'ynm init' again from where ynm is installed." >&2
    exit 0
  fi
fi
remote="$1"
if [ -z "$remote" ] || [ "$remote" = "$2" ]; then
  echo "ynm pre-push hook: pushing to a URL, not a named remote: memory was not synced (run 'ynm sync --remote <name>')" >&2
  exit 0
fi
{run} sync --quiet --mount project --remote "$remote" || echo "ynm pre-push hook: 'ynm sync --remote $remote' failed (see above); the push goes on without memory" >&2
exit 0
"""


def install_pre_push_hook(repo: Any, work_tree: Path,
                          command: list[str] | None = None) -> tuple[str | None, str | None]:
    """Install the pre-push hook (:func:`pre_push_hook` for ``command``, default ``ynm``) in
    ``core.hooksPath`` or ``<git common dir>/hooks``. A hook an earlier ``ynm init`` wrote is
    brought up to date (and executable again: git ignores a hook that is not); any other
    pre-push hook is left alone.

    Returns ``(path installed, None)``, ``(None, None)`` when ynm's hook is already there as it
    would be written, or ``(None, note)`` when another pre-push hook exists and was left alone.
    """
    try:
        hooks_path = Path(str(repo.config["core.hooksPath"])).expanduser()
        hooks_dir = hooks_path if hooks_path.is_absolute() else work_tree / hooks_path
    except KeyError:
        hooks_dir = Path(repo.path) / "hooks"
    path = hooks_dir / "pre-push"
    text = pre_push_hook(command or ["ynm"])
    if path.exists():
        old = path.read_text(errors="replace")
        if old == text and os.access(path, os.X_OK):
            return None, None  # one that is not executable is ignored by git: made so below
        if HOOK_MARKER not in old:
            return None, f"pre-push hook exists and was left alone: {path}"
    hooks_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return str(path), None


def _excluded(lines: list[str], entry: str) -> bool:
    stripped = {line.strip() for line in lines}
    return entry in stripped or entry.rstrip("/") in stripped or ".ynm/" in stripped or ".ynm" in stripped


def add_excludes(common_dir: Path) -> list[str]:
    """Append ``.ynm/wiki/`` and ``.ynm/index/`` to ``<common dir>/info/exclude`` unless already
    covered (also by ``.ynm/`` or ``.ynm``). Returns the entries added."""
    path = common_dir / "info" / "exclude"
    path.parent.mkdir(parents=True, exist_ok=True)
    text = path.read_text() if path.exists() else ""
    lines = text.splitlines()
    added = [e for e in EXCLUDES if not _excluded(lines, e)]
    if added:
        prefix = "" if not text or text.endswith("\n") else "\n"
        with path.open("a") as fh:
            fh.write(prefix + "".join(e + "\n" for e in added))
    return added


def init_project(
    loaded: LoadedConfig,
    cwd: str | Path,
    *,
    anchor: str | None = None,
    remote: str | None = None,
    hooks: bool | None = None,
    clients: bool = True,
    client_names: tuple[str, ...] = (),
    command: list[str] | None = None,
    command_note: str | None = None,
) -> dict[str, Any]:
    """Initialise the repository containing the configuration's cwd. ``command`` is the argv
    that runs ynm, written into the pre-push hook and the agent client setup (default
    ``["ynm"]``); ``command_note`` is added to the notes when it is not a plain ``ynm``.

    With the remote configured, its shards are fetched first (:func:`ynm.store.sync.fetch_shards`)
    so the anchor they hang off is known, and merged into the project's shards at the end as
    ``ynm sync --no-push`` does (never a push); a fetch that fails is a warning, not an error.
    The anchor is the team's when the remote has one (``select_anchor`` with the remote:
    docs/cli.md "ynm init"); an anchor from this clone's own uncommitted ``.ynm/config.json``
    gives way to the one the remote's notes hang off, unless the clone already holds shards. ``.ynm/config.json`` is not written when the remote's default
    branch already has it and this clone has not pulled it (an untracked copy would make
    ``git pull`` refuse); a note says to pull, or to remove an untracked copy that is in the way.

    Returns the JSON of reference/cli.md §4.10: ``repo, anchor, anchorSource, configFile,
    configWritten, refspecs, hooksInstalled, notes, clients, commit, local``, plus
    ``configExists`` (whether ``.ynm/config.json`` is there after init), ``configWaiting``
    (``{"branch", "run"}`` when it was not written because a teammate's committed copy waits
    on that remote branch, and the git command that gets it: :func:`_how_to_get`), ``fetched``
    (``{"remote", "shards", "records"}`` merged from the remote, None when nothing was
    fetched), ``warnings`` (a failed fetch or merge, one line each) and ``also`` (clients on
    this machine the project does not use: a hint, nothing written). ``clients`` entries are
    :func:`ynm.integrations.configure_for_init`'s ``{client, detected, applied, run}``: with
    ``clients`` every client whose files are in the project gets its project-scope setup, and
    ``client_names`` picks exactly those clients, detected or not.

    Raises:
        YnmError: ``<cwd> is not inside a git repository``.
        InvalidInput: a client file that is not valid JSON or a half-written guidance block
            (the client step is planned before anything is written, so nothing changes).
        AnchorError: a shallow clone without ``--anchor``.
        InvalidInput: an ``anchor`` that is not a commit id, or an abbreviated one that names
            no commit or several objects (:func:`ynm.store.anchor.resolve_anchor_id`).
        AnchorNotCommit: the anchor given or configured is no commit of this repository
            (:func:`ynm.store.anchor.anchor_problem`); nothing is written.
    """
    from ynm.store.anchor import (
        remote_notes_anchor,
        remote_project_config,
        resolve_anchor_id,
        select_anchor,
    )
    from ynm.store.repo import open_repository
    from ynm.store.sync import fetch_refspec, fetch_shards

    if loaded.repo is None or loaded.bare:
        raise YnmError(f"{cwd} is not inside a git repository")
    repo_path = loaded.repo
    repo = open_repository(repo_path)
    replaced: str | None = None
    if anchor is not None:
        anchor = resolve_anchor_id(repo, anchor)
        _check_init_anchor(repo, anchor, "--anchor", repo_path)  # before anything is written
        replaced = _unusable_anchor(repo, loaded, anchor)
    planned: list[dict[str, Any]] = []
    if clients or client_names:
        # Planned before anything is written: a client file that is not valid JSON refuses
        # the whole init (exit 2) with nothing changed.
        from ynm.integrations import plan_for_init
        from ynm.service.clients import home_dir

        planned = plan_for_init(repo_path, home_dir(), list(client_names),
                                command=tuple(command or ["ynm"]))
    notes: list[str] = []
    warnings: list[str] = []
    had_commits = not repo.head_is_unborn
    remote_name = remote or loaded.config.remote
    has_remote = remote_name in repo.remotes.names()
    refspecs: list[str] = []
    fetch_problem: str | None = None
    if has_remote:
        spec = fetch_refspec(remote_name)
        if spec not in repo.remotes[remote_name].fetch_refspecs:
            repo.remotes.add_fetch(remote_name, spec)
            refspecs.append(spec)
        # The team's memory, and with it the anchor its notes hang off, before choosing one.
        fetch_problem = fetch_shards(repo, remote_name)
        if fetch_problem is not None:
            warnings.append(f"could not fetch memory from {remote_name} ({fetch_problem}); "
                            "init went on without it: run `ynm sync` once the remote is "
                            "reachable")
    configured = anchor or loaded.config.anchor
    if (configured is not None and anchor is None and has_remote and fetch_problem is None
            and _draft_anchor(repo, repo_path, loaded, configured)):
        team = remote_notes_anchor(repo, remote_name)
        if team is not None and team != configured:
            if _has_local_shards(repo):
                notes.append(
                    f"{remote_name}'s memory hangs off anchor {team}, this clone's off "
                    f"{configured} (its uncommitted .ynm/config.json): they do not see each "
                    "other. To join the team's, `ynm export --level distributed > mine.jsonl`, "
                    f"run `ynm init --anchor {team}`, then `ynm import mine.jsonl`")
            else:
                notes.append(f"took the team's anchor {team} from {remote_name}'s notes "
                             f"(this clone's uncommitted .ynm/config.json had {configured})")
                configured = None
    chosen = select_anchor(repo, configured=configured, create=True,
                           remote=remote_name if has_remote else None)
    if chosen.source == "config" and anchor is None:
        _check_init_anchor(repo, chosen.sha, loaded.sources.get("anchor", "config"), repo_path)
    if chosen.source == "created" and not had_commits:
        from ynm.store.anchor import current_branch

        branch = current_branch(repo).removeprefix("refs/heads/")
        notes.append(f"the repository had no commits; created the empty root commit `ynm: root` "
                     f"on branch {branch} as the anchor (your first commit follows it)")
    if replaced:
        notes.append(f"replaced {replaced} with {chosen.sha}")
    if not chosen.present:
        notes.append(f"anchor {chosen.sha} is not present locally (shallow clone); plumbing does "
                     "not need it")
    config_file = project_config_path(repo_path)
    rel = str(config_file.relative_to(repo_path))
    upstream = remote_project_config(repo, remote_name) if has_remote else None
    branch = upstream[0].removeprefix("refs/remotes/") if upstream else ""
    get = _how_to_get(repo, upstream[0]) if upstream else ""
    waiting = None
    if upstream is not None and not config_file.exists() and upstream[1] == chosen.sha:
        # Writing it would leave an untracked file that makes `git pull` refuse to merge.
        written = False
        waiting = {"branch": branch, "run": get}
        notes.append(f"{branch} already has {rel} (anchor {chosen.sha}), committed by a "
                     f"teammate: run `{get}` to get it; ynm wrote none here, so nothing "
                     "stands in its way, and until then ynm shows none of the project's memory")
    else:
        written = write_project_anchor(repo_path, chosen.sha, remote)
        if upstream is not None and repo.status_file(rel) & GIT_STATUS_WT_NEW:
            same = ("the same anchor" if upstream[1] == chosen.sha
                    else f"anchor {upstream[1]}, not {chosen.sha}")
            notes.append(f"{branch} already has {rel} ({same}): `{get}` refuses to "
                         f"overwrite an untracked copy, so remove yours (`rm {rel}`), then "
                         f"run `{get}`")
    ignore_index_folder(repo_path / ".ynm" / "index")
    common = Path(repo.path)
    added = add_excludes(common)
    if added:
        notes.append(f"added {' and '.join(added)} to .git/info/exclude")
    if not has_remote:
        notes.append(f'no remote "{remote_name}" yet; distributed memory stays in this clone '
                     "until you add one, then `ynm sync` shares it")
    installed: list[str] = []
    if loaded.config.hooks if hooks is None else hooks:
        hook, note = install_pre_push_hook(repo, repo_path, command)
        if hook:
            installed.append(hook)
        if note:
            notes.append(note)
    client_setups: list[dict[str, Any]] = []
    local: list[str] = []
    also: list[str] = []
    if planned:
        from ynm.integrations import apply_for_init
        from ynm.service.clients import exclude_local_files

        for setup in apply_for_init(planned):
            notes += setup.pop("notes", [])
            if setup.get("skipped"):
                also.append(setup["client"])
                continue
            files = setup.pop("local")
            if files:
                exclude_local_files(repo_path, files)
                local += [f for f in files if (repo_path / f).exists() and f not in local]
            client_setups.append(setup)
    if command_note and (installed or client_setups):
        notes.append(command_note)
    commit = []
    status = repo.status_file(rel) if config_file.exists() else 0
    if written or status:
        commit.append(rel)
    shared = sorted({f for c in client_setups for f in c["applied"] if f not in local})
    machine_only = _names_this_machine(repo_path) if any(
        c["client"] == "claude-code" for c in client_setups) else False
    if machine_only:
        # it names this machine's ynm: not for the team until it says plain `ynm`, whether
        # this run wrote it or an earlier one did
        notes.append(".mcp.json names this machine's ynm, so it is not listed for commit: "
                     "put ynm on PATH and run `ynm init` again before committing it")
    for rel_path in shared:
        if not (repo_path / rel_path).exists() or not repo.status_file(rel_path):
            continue
        if not (rel_path == ".mcp.json" and machine_only):
            commit.append(rel_path)
    fetched = None
    if has_remote and fetch_problem is None:
        fetched, problem = _merge_fetched(loaded, repo_path, remote_name, chosen.sha)
        if problem is not None:
            warnings.append(problem)
    return {
        "repo": str(repo_path), "anchor": chosen.sha, "anchorSource": chosen.source,
        "configFile": str(config_file), "configWritten": written,
        "configExists": config_file.exists(), "configWaiting": waiting, "refspecs": refspecs,
        "fetched": fetched, "hooksInstalled": installed, "notes": notes,
        "clients": client_setups, "commit": commit, "local": local, "warnings": warnings,
        "also": also,
    }


def _names_this_machine(repo_path: Path) -> bool:
    """Whether the project's ``.mcp.json`` runs ynm by a path of this machine (not a plain
    ``ynm``), so it is not for the team to commit."""
    from ynm.integrations.common import entry_argv, json_member, runs_ynm

    entry = json_member(repo_path / ".mcp.json", "mcpServers", "ynm")
    if not isinstance(entry, dict) or "command" not in entry or not runs_ynm(entry):
        return False
    return entry_argv(entry)[0] != "ynm"


def _draft_anchor(repo: Any, repo_path: Path, loaded: LoadedConfig, configured: str) -> bool:
    """Whether the configured anchor is only this clone's draft: it comes from a
    ``.ynm/config.json`` that git does not track (an earlier ``ynm init`` here, never
    committed), not from ``YNM_ANCHOR`` or a committed file the team shares."""
    if loaded.env.get("YNM_ANCHOR"):
        return False
    path = project_config_path(repo_path)
    try:
        data = json.loads(path.read_text(encoding="utf-8-sig"))
    except (OSError, ValueError):
        return False
    if not isinstance(data, dict) or data.get("anchor") != configured:
        return False
    return bool(repo.status_file(str(path.relative_to(repo_path))) & GIT_STATUS_WT_NEW)


def _has_local_shards(repo: Any) -> bool:
    """Whether this clone holds distributed shards of its own (``refs/notes/ynm/distributed/*``)."""
    from ynm.model.shards import NOTES_PREFIX

    prefix = f"{NOTES_PREFIX}/distributed/".encode()
    return any(raw.startswith(prefix) for raw in repo.raw_listall_references())


def _merge_fetched(loaded: LoadedConfig, repo_path: Path, remote: str,
                   anchor: str) -> tuple[dict[str, Any] | None, str | None]:
    """Merge what the fetch brought into the project's shards, as ``ynm sync --no-push``
    does (fetch and merge, never a push), with the mount opened on the ``anchor`` init chose
    (it may not be written yet: a teammate's committed config waiting for ``git pull``, or a
    shallow clone). Returns ``({"remote", "shards", "records"}, None)`` (shards that took in
    records, and how many records), or ``(None, warning)`` when the merge could not run."""
    from ynm.service.mounts import PROJECT
    from ynm.service.ynm import Ynm

    failed = f"fetched memory from {remote} but could not merge it"
    env = {**(loaded.env or {}), "YNM_ANCHOR": anchor}
    try:
        with Ynm.open(repo_path, env, personal=False) as ynm:
            if ynm.mount(PROJECT) is not None:
                result = ynm.sync(PROJECT, remote, push=False).get(PROJECT)
            else:
                # No .ynm/config.json yet (a teammate's waits for `git pull`): no project mount,
                # and no memory of this clone's own to re-purge, so the store merges directly.
                from ynm.store.gitnotes import GitNotesLog
                from ynm.store.sync import sync_log

                log = GitNotesLog(repo_path, level="distributed", anchor=anchor,
                                  mount_id=PROJECT)
                result = sync_log(log, remote, push=False).to_obj()
    except (YnmError, OSError) as err:
        return None, f"{failed} ({err}); run `ynm sync`"
    if result is None or result.get("skipped"):
        return None, None
    if result["conflicts"]:
        return None, (f"merging memory from {remote}: {'; '.join(result['conflicts'])}; run "
                      "`ynm sync`")
    return {"remote": remote, "shards": len(result["fetched"]["shards"]),
            "records": result["fetched"]["records"]}, None


def init_store(path: str | Path) -> dict[str, Any]:
    """Create or adopt a bare memory store (``init --bare`` and ``init --personal``).

    Returns ``{"repo", "anchor", "created"}``; ``created`` is False when a root commit already
    existed.
    """
    from ynm.store.anchor import ensure_bare_store, select_anchor

    path = Path(path).expanduser()
    repo, created = ensure_bare_store(path)
    return {"repo": str(path), "anchor": select_anchor(repo).sha, "created": created}


def _how_to_get(repo: Any, tracking: str) -> str:
    """The git command that brings the remote-tracking branch ``tracking``
    (``refs/remotes/<remote>/<branch>``) into this clone's work tree: ``git checkout <branch>``
    when there is no branch to pull into (no commit checked out, as after a clone whose
    remote HEAD names a branch that does not exist, or a detached HEAD), ``git pull`` when the
    current branch tracks it, else ``git pull <remote> <branch>``."""
    remote, _, name = tracking.removeprefix("refs/remotes/").partition("/")
    if repo.head_is_unborn or repo.head_is_detached:
        return f"git checkout {name}"
    try:
        upstream = repo.branches.local[repo.head.shorthand].upstream
    except (KeyError, ValueError):
        upstream = None
    if upstream is not None and upstream.name == tracking:
        return "git pull"
    return f"git pull {remote} {name}"


def _unusable_anchor(repo: Any, loaded: LoadedConfig, anchor: str) -> str | None:
    """What ``ynm init --anchor <anchor>`` replaces in the project's ``.ynm/config.json``: an
    anchor that is not a full commit id (abbreviated, or not a string: left out when the
    configuration was loaded, :attr:`LoadedConfig.unusable_anchor`) or one that is no commit
    of this repository, as ``the unusable anchor <value> in .ynm/config.json (<why>)``; None
    when there was none or it was usable."""
    from ynm.store.anchor import anchor_problem

    if loaded.unusable_anchor is not None:
        return (f"the unusable anchor {json.dumps(loaded.unusable_anchor)} in .ynm/config.json "
                "(not a full commit id)")
    configured = loaded.config.anchor
    if (configured and configured != anchor and loaded.repo is not None
            and loaded.sources.get("anchor") == str(project_config_path(loaded.repo))):
        why = anchor_problem(repo, configured)
        if why:
            return f"the unusable anchor {configured} in .ynm/config.json ({why})"
    return None


def _check_init_anchor(repo: Any, sha: str, where: str, repo_path: Path) -> None:
    """Refuse to record an anchor (given with ``--anchor`` or already configured) that is no
    commit of this repository: every write would then be refused (ynm.service.mounts).

    Raises:
        AnchorNotCommit: ``invalid input: anchor <sha> (from <where>) is not a commit in
            <repo>: <why>; <fix>`` (exit 2), the fix for where the value came from
            (:func:`ynm.service.mounts.anchor_check`: ``ynm init --anchor`` only for the
            project's ``.ynm/config.json``, which it writes)."""
    from ynm.errors import AnchorNotCommit
    from ynm.service.mounts import PROJECT, anchor_check

    problem, hint = anchor_check(repo, sha, where, str(repo_path), PROJECT,
                                 str(project_config_path(repo_path)))
    if problem is None:
        return
    if where == "--anchor":
        hint = "give a commit of this repository"
    raise AnchorNotCommit(f"{problem}; {hint}")
