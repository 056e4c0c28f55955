"""Mounts: the stores one ynm process reads and writes, and which one takes a record.

Order (reference/cli.md §5.4): ``personal`` (the bare store at ``personalStore``, created on first
use, anchor recomputed from its root commit on every open), ``project`` (the repository's own
distributed notes once ``.ynm/config.json`` exists), then each configured ``mounts[]`` entry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ynm.errors import ConfigError, MountLevelMismatch, NoMount, UnknownMount, YnmError

if TYPE_CHECKING:
    from ynm.index.cache import MountCache, Progress
    from ynm.service.config import LoadedConfig
    from ynm.store.gitnotes import GitNotesLog

PERSONAL = "personal"
PROJECT = "project"
T = TypeVar("T")


def ignore_index_folder(folder: Path) -> None:
    """Make git ignore a project's cache folder (``<repo>/.ynm/index``): a ``.gitignore`` of
    ``*`` in it, which ignores itself too, so the folder never shows in ``git status`` and
    ``git add -A`` never takes the cache, in a clone where ``ynm init`` (which writes the same
    file) never ran. A folder that cannot be written is left as it is."""
    gitignore = folder / ".gitignore"
    if gitignore.exists():
        return
    try:
        folder.mkdir(parents=True, exist_ok=True)
        gitignore.write_text("*\n")
    except OSError:
        pass


@dataclass
class Mount:
    """One open store: ``id``, fixed ``level``, ``provider``, ``location`` (a path), its shard
    ``log`` and the path of its cache file."""

    id: str
    level: str
    provider: str
    location: str
    log: GitNotesLog
    cache_path: Path
    remote: str | None = None
    # Why the anchor is no commit of the mount's repository (``anchor <sha> (from <where>)
    # is not a commit in <repo>: <why>``), and what to do; None when it is usable
    # (:func:`anchor_check`). Reads then find nothing and writes are refused.
    anchor_problem: str | None = None
    anchor_hint: str = ""
    # Told of long work (a cache rebuild): see Ynm.progress.
    progress: Progress | None = field(default=None, repr=False)
    # Told what a read should say without failing (Ynm.warnings): see stray_warning.
    warn: Callable[[str], None] | None = field(default=None, repr=False)
    _cache: MountCache | None = field(default=None, repr=False)
    _strays_checked: bool = field(default=False, repr=False)

    @property
    def cache(self) -> MountCache:
        """The mount's cache (opened on first use; not refreshed). A file found damaged as it
        is opened was replaced by an empty one (ynm.index.schema.connect): that is said on
        stderr (:meth:`say_damaged`) and the new file is built from git at once, as
        :meth:`recover` does for damage found later."""
        if self._cache is None:
            from ynm.index.cache import MountCache

            if self.id == PROJECT:  # <repo>/.ynm/index/ynm-cache/project.sqlite
                ignore_index_folder(Path(self.cache_path).parent.parent)
            cache = MountCache(self.cache_path, self.id)
            cache.snapshot_source = self.snapshot_for
            if cache.conn.replaced is not None:
                self.say_damaged(cache.conn.replaced)
                cache.refresh(self.log, self.progress)
            self._cache = cache
        return self._cache

    def snapshot_for(self, tips: dict[str, str]) -> Any:
        """The mount's snapshot (``ynm compact``) when it fits the shard tips ``tips`` (ref ->
        commit hex), else None: what a cold cache starts from (ynm.index.snapshot).

        Raises:
            SnapshotDamaged: the snapshot ref exists but is unusable
                (:func:`ynm.store.snapshots.check_snapshot`: no snapshot commit, a damaged
                ``meta.json`` or ``state.bin``, an unknown format); the message says why.
        """
        from ynm.index.snapshot import NAME
        from ynm.store.snapshots import SnapshotDamaged, check_snapshot, fits, snapshot_ref

        ref = snapshot_ref(self.level, NAME)
        found, problem = check_snapshot(self.log.repo, ref)
        if problem is not None:
            raise SnapshotDamaged(ref, problem)
        if found is None or fits(self.log.repo, found.meta, tips) is not None:
            return None
        return found

    def fresh_cache(self, progress: Progress | None = None) -> MountCache:
        """The cache, brought up to date with the shard refs first (reporting to ``progress``,
        else to the mount's own :attr:`progress`); a cache found damaged meanwhile is
        rebuilt (:meth:`recover`).

        Raises:
            CacheDamaged: (ynm.index.schema) the rebuilt file is found damaged again."""
        cache = self.cache
        try:
            cache.refresh(self.log, progress or self.progress)
        except Exception as err:
            if not self.recover(err, progress):
                raise
        if not self._strays_checked:
            self._strays_checked = True
            warning = self.stray_warning(cache)
            if warning is not None and self.warn is not None:
                self.warn(warning)
        return cache

    def stray_warning(self, cache: MountCache) -> str | None:
        """What a read says when some of this mount's shards hold notes, but none on its
        anchor: their memories hang off another object, so no read shows them (the anchor
        was changed, ``ynm init --anchor``, or a shallow clone was given one that is not the
        project's). ``mount <id>: <n> shard(s) hold notes on <objects>, none on its anchor
        <anchor>: reads show none of their memories; if the anchor was changed by mistake,
        set it back (`ynm init --anchor <object>`)``; None when every shard has its note.
        One query of the shards table of the fresh cache (note blob NULL); the git
        objects are read only when there are some."""
        rows = cache.conn.execute(
            "SELECT commit_id FROM shards WHERE blob_id IS NULL").fetchall()
        if not rows:
            return None
        from ynm.errors import StoreError

        others: list[str] = []
        try:
            for (commit,) in rows:
                others.extend(o for o in self.log.noted_objects(commit) if o not in others)
        except StoreError:
            pass
        if not others:
            return None
        shown = ", ".join(others[:3]) + (" ..." if len(others) > 3 else "")
        return (f"mount {self.id}: {len(rows)} shard(s) hold notes on {shown}, none on its "
                f"anchor {self.log.anchor}: reads show none of their memories; if the anchor "
                f"was changed by mistake, set it back (`ynm init --anchor {others[0]}`)")

    def recover(self, err: BaseException, progress: Progress | None = None) -> bool:
        """When ``err`` is SQLite's report that this mount's cache file is damaged
        (:class:`ynm.index.schema.CacheDamaged` naming its file, found at open or mid-query),
        or a text read from a row that cannot be read back
        (:class:`ynm.index.schema.TextDamaged`) when this cache holds such a text
        (:meth:`MountCache.damaged_text`): say so on stderr in one line, delete the file and
        build it again from git (the steps of ``ynm reindex`` for a damaged file:
        :meth:`MountCache.replace`, then a refresh, from the mount's snapshot when one fits).
        Returns whether it did; False for any other error, which the caller raises. Source:
        DESIGN.md principle 1 (git is the truth; the cache can be deleted at any time).

        Raises:
            CacheDamaged: the new file is found damaged too (a failing disk); not caught
                again."""
        from ynm.index.schema import CacheDamaged, TextDamaged

        cache = self._cache
        if cache is None:
            return False
        if isinstance(err, CacheDamaged):
            if err.path != str(cache.path):
                return False
            message = err.message
        elif isinstance(err, TextDamaged):  # read in Python from a row: is it this file's?
            found = cache.damaged_text()
            if found is None:
                return False
            message = found
        else:
            return False
        self.say_damaged(message)
        cache.replace()
        cache.refresh(self.log, progress or self.progress)
        return True

    def say_damaged(self, message: str) -> None:
        """Say on stderr, in one line, that this mount's cache file is damaged (``message``:
        SQLite's words) and is being rebuilt from git."""
        import sys

        from ynm.model.controls import visible

        print(visible(f"warning: the search cache of mount {self.id} ({self.cache_path}) is "
                      f"damaged: {message}; rebuilding it from git (memories live in git "
                      "notes: nothing is lost)"), file=sys.stderr, flush=True)

    def read(self, fn: Callable[[MountCache], T]) -> T:
        """``fn(cache)`` on the fresh cache, for a read that holds nothing of the cache
        across calls (no rowids): when the cache is found damaged during it, it is rebuilt
        (:meth:`recover`) and ``fn`` runs once more on the new file. For writes made in
        steps (an import's chunks, a sync's merge, expiry), where running the whole
        operation again would misreport what it did."""
        try:
            return fn(self.fresh_cache())
        except Exception as err:
            if not self.recover(err):
                raise
        return fn(self.fresh_cache())

    def __post_init__(self) -> None:
        if self.anchor_problem is not None:  # the store refuses writes too (a backstop)
            self.log.refusal = f"{self.anchor_problem}; {self.anchor_hint}"

    @property
    def anchor_warning(self) -> str | None:
        """What a read of this mount says on stderr when its anchor is unusable: the problem,
        that the mount refuses writes, and what to do; None otherwise. Reads still show what
        its notes already hold (hiding it would hide memories a history rewrite left behind,
        not keep them safe)."""
        if self.anchor_problem is None:
            return None
        return (f"{self.anchor_problem}: mount {self.id} refuses writes; "
                f"{self.anchor_hint}")

    def check_writable(self) -> None:
        """Refuse a write to a mount whose anchor is no commit of its repository.

        Raises:
            AnchorNotCommit: ``invalid input: anchor <sha> (from <where>) is not a commit in
                <repo>: <why>; <what to do>`` (exit 2), before anything is written.
        """
        if self.anchor_problem is not None:
            from ynm.errors import AnchorNotCommit

            raise AnchorNotCommit(f"{self.anchor_problem}; {self.anchor_hint}")

    def close(self) -> None:
        """Close the cache connection if open."""
        if self._cache is not None:
            self._cache.close()
            self._cache = None


@dataclass
class MountProblem:
    """A configured mount that could not be opened, with the reason."""

    id: str
    level: str
    provider: str
    location: str
    error: str


def anchor_check(repo: Any, sha: str, where: str, location: str, mount_id: str,
                 project_file: str | None = None) -> tuple[str | None, str]:
    """The ``(problem, hint)`` of a configured anchor (:attr:`Mount.anchor_problem`):
    ``problem`` is None when ``sha`` can serve as the anchor of ``repo`` (a pygit2 repository;
    :func:`ynm.store.anchor.anchor_problem` says when), else ``anchor <sha> (from <where>) is
    not a commit in <location>: <why>``. ``hint`` names the fix for where the value came from:
    ``YNM_ANCHOR``, a mount entry, the project's ``.ynm/config.json`` (``project_file``, which
    ``ynm init --anchor`` writes) or another configuration file. Source: reference/storage.md §3.3 (the anchor is a commit of the repository).
    """
    from ynm.store.anchor import anchor_problem

    why = anchor_problem(repo, sha)
    if why is None:
        return None, ""
    problem = f"anchor {sha} (from {where}) is not a commit in {location}: {why}"
    roots = "`git rev-list --max-parents=0 HEAD` prints the root commit"
    if mount_id != PROJECT:
        hint = (f"set the anchor of mount {mount_id} in {where.split(' in ', 1)[-1]} to the "
                "commit that store's notes hang off (`ynm init --bare` printed it)")
    elif where.startswith("YNM_"):
        hint = f"unset {where}, or set it to a commit of this repository ({roots})"
    elif where == project_file:
        hint = (f"run `ynm init --anchor <commit>` with the project's anchor ({roots}), or "
                "fetch the history that holds it")
    else:
        hint = f"correct or remove \"anchor\" in {where} ({roots})"
    return problem, hint



def _personal_anchor(store_path: Path) -> tuple[Any, Any]:
    """The personal store's anchor, its root commit (ynm.store.anchor.Anchor), and the check a
    write makes of it first when it came from the memo (else None): remembered
    while its refs are unchanged (:func:`ynm.store.anchor.remembered_anchor`); else the store is
    opened, created when missing (:func:`ynm.store.anchor.ensure_bare_store`), and its root
    commit found and remembered.

    Raises:
        YnmError: the store cannot be opened or created."""
    from ynm.store.anchor import (
        confirm_remembered,
        ensure_bare_store,
        refs_digest,
        remember_anchor,
        remembered_anchor,
        select_anchor,
    )
    from ynm.store.repo import repo_common_dir

    if (store_path / "HEAD").is_file():
        common = store_path.resolve()
        found = remembered_anchor(common, None)
        if found is not None:
            return found, confirm_remembered(common, found)
    repo, _ = ensure_bare_store(store_path)
    common = repo_common_dir(repo)
    before = refs_digest(common)
    anchor = select_anchor(repo)
    remember_anchor(common, anchor, repo, before)
    return anchor, None


def open_mounts(
    loaded: LoadedConfig, *, personal: bool = True, keep_going: bool = False
) -> tuple[list[Mount], list[MountProblem]]:
    """Open the mounts of a configuration, in mount-table order.

    Returns the open mounts and, separately, configured mounts that failed to open (reported by
    ``status``; reads skip them). With ``keep_going`` (``ynm doctor``) a personal or project
    store that cannot be opened is one more problem instead of an error. A configured anchor
    that is no commit of its repository leaves the mount open with
    :attr:`Mount.anchor_problem` set (:func:`anchor_check`): it refuses
    writes.

    Raises:
        YnmError: the personal or project store cannot be opened (unless ``keep_going``).
    """
    from ynm.service.config import index_path, project_config_path
    from ynm.store.anchor import (
        Anchor,
        confirm_remembered,
        remember_anchor,
        remembered_anchor,
    )
    from ynm.store.gitnotes import GitNotesLog

    cfg = loaded.config
    mounts: list[Mount] = []
    problems: list[MountProblem] = []
    if personal:
        store_path = Path(cfg.personal_store)
        try:
            anchor, confirm = _personal_anchor(store_path)
            log = GitNotesLog(store_path, level="personal", anchor=anchor.sha, mount_id=PERSONAL)
            log.confirm_anchor = confirm
            mounts.append(Mount(PERSONAL, "personal", "git-notes", str(store_path), log,
                                index_path(loaded, PERSONAL)))
        except YnmError as err:
            if not keep_going:
                raise
            problems.append(MountProblem(PERSONAL, "personal", "git-notes", str(store_path),
                                         str(err)))
    if loaded.repo is not None and project_config_path(loaded.repo).exists():
        from ynm.store.repo import find_common_dir

        try:
            common = find_common_dir(loaded.repo)
            anchor = remembered_anchor(common, cfg.anchor)
            problem, hint = None, ""
            confirm = None if anchor is None else confirm_remembered(common, anchor)
            if anchor is None:  # not known for certain from the files: ask libgit2
                from ynm.store.anchor import refs_digest, select_anchor
                from ynm.store.repo import open_repository

                repo = open_repository(loaded.repo)
                before = refs_digest(common)
                anchor = select_anchor(repo, configured=cfg.anchor)
                problem, hint = (anchor_check(repo, anchor.sha,
                                              loaded.sources.get("anchor", "config"),
                                              str(loaded.repo), PROJECT,
                                              str(project_config_path(loaded.repo)))
                                 if anchor.source == "config" else (None, ""))
                if problem is None:
                    remember_anchor(common, anchor, repo, before)
            log = GitNotesLog(loaded.repo, level="distributed", anchor=anchor.sha,
                              mount_id=PROJECT)
            log.confirm_anchor = confirm
            mounts.append(Mount(
                PROJECT, "distributed", "git-notes", str(loaded.repo), log,
                index_path(loaded, PROJECT), remote=cfg.remote, anchor_problem=problem,
                anchor_hint=hint,
            ))
        except YnmError as err:
            if not keep_going:
                raise
            problems.append(MountProblem(PROJECT, "distributed", "git-notes", str(loaded.repo),
                                         str(err)))
    for mc in cfg.mounts:
        if mc.provider == "mcp":
            continue  # a hosted store, reached over MCP (ynm.service.remote)
        location = mc.path or ""
        try:
            # other providers are refused when the configuration is read (config.py)
            if not mc.anchor:
                raise ConfigError(f"mount {mc.id}: git-notes provider needs an anchor")
            log = GitNotesLog(location, level=mc.level, anchor=mc.anchor, mount_id=mc.id)
            where = f"mount {mc.id} in {loaded.sources.get('mounts', 'config')}"
            problem, hint = None, ""
            found = remembered_anchor(log.common_dir, mc.anchor)
            if found is not None:
                log.confirm_anchor = confirm_remembered(log.common_dir, found)
            else:
                # opens the repository: a failure is this mount's problem, as above
                problem, hint = anchor_check(log.repo, mc.anchor, where, location, mc.id)
                if problem is None:  # kept only if it is a commit here (remember_anchor)
                    remember_anchor(log.common_dir, Anchor(mc.anchor, "config", True),
                                    log.repo, None)
        except YnmError as err:
            problems.append(MountProblem(mc.id, mc.level, mc.provider, location, str(err)))
            continue
        mounts.append(Mount(
            mc.id, mc.level, mc.provider, location, log, index_path(loaded, mc.id),
            remote=mc.remote, anchor_problem=problem, anchor_hint=hint,
        ))
    return mounts, problems


def route(mounts: list[Mount], level: str, mount_id: str | None = None) -> Mount:
    """The mount that takes a new record of ``level`` (reference/storage.md §5.3).

    A named mount must exist and have the same level; otherwise personal goes to ``personal``
    and distributed to ``project``, else the first distributed mount.

    Raises:
        UnknownMount: ``mount_id`` names no open mount.
        MountLevelMismatch: the named mount has another level.
        NoMount: no mount of that level is open.
    """
    if mount_id is not None:
        for m in mounts:
            if m.id == mount_id:
                if m.level != level:
                    raise MountLevelMismatch(m.id, m.level, level)
                return m
        raise UnknownMount(mount_id, [m.id for m in mounts])
    if level == "personal":
        for m in mounts:
            if m.id == PERSONAL:
                return m
        raise NoMount(
            "no personal mount available: this store is shared only; set level to distributed "
            "to share, or keep it private in a local ynm"
        )
    for m in mounts:
        if m.id == PROJECT:
            return m
    for m in mounts:
        if m.level == "distributed":
            return m
    raise NoMount("no distributed mount: run `ynm init` in the project (or configure a mount)")
