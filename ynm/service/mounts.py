"""Mounts: the stores one ynm process reads and writes, and which one takes a record.

Order (reference/cli.md §5.4): ``personal`` (the bare store at ``personalStore``, created on first
use, anchor recomputed from its root commit on every open), ``project`` (the repository's own
distributed notes once ``.ynm/config.json`` exists), then each configured ``mounts[]`` entry.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ynm.errors import ConfigError, MountLevelMismatch, NoMount, UnknownMount, YnmError

if TYPE_CHECKING:
    from ynm.index.cache import MountCache, Progress
    from ynm.service.config import LoadedConfig
    from ynm.store.gitnotes import GitNotesLog

PERSONAL = "personal"
PROJECT = "project"


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
    # Told of long work (a cache rebuild): see Ynm.progress.
    progress: Progress | None = field(default=None, repr=False)
    _cache: MountCache | None = field(default=None, repr=False)

    @property
    def cache(self) -> MountCache:
        """The mount's cache (opened on first use; not refreshed)."""
        if self._cache is None:
            from ynm.index.cache import MountCache

            self._cache = MountCache(self.cache_path, self.id)
            self._cache.snapshot_source = self.snapshot_for
        return self._cache

    def snapshot_for(self, tips: dict[str, str]) -> Any:
        """The mount's snapshot (``ynm compact``) when it fits the shard tips ``tips`` (ref ->
        commit hex), else None: what a cold cache starts from (ynm.index.snapshot).

        Raises:
            StoreError: the snapshot ref exists but cannot be read.
        """
        from ynm.index.snapshot import NAME
        from ynm.store.snapshots import fits, read_snapshot, snapshot_ref

        ref = snapshot_ref(self.level, NAME)
        head = read_snapshot(self.log.repo, ref, with_state=False)
        if head is None or fits(self.log.repo, head.meta, tips) is not None:
            return None
        return read_snapshot(self.log.repo, ref)

    def fresh_cache(self, progress: Progress | None = None) -> MountCache:
        """The cache, brought up to date with the shard refs first (reporting to ``progress``,
        else to the mount's own :attr:`progress`)."""
        cache = self.cache
        cache.refresh(self.log, progress or self.progress)
        return cache

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


def open_mounts(
    loaded: LoadedConfig, *, personal: bool = True
) -> tuple[list[Mount], list[MountProblem]]:
    """Open the mounts of a configuration, in mount-table order.

    Returns the open mounts and, separately, configured mounts that failed to open (reported by
    ``status``; reads skip them).

    Raises:
        YnmError: the personal or project store cannot be opened.
    """
    from ynm.service.config import index_path, project_config_path
    from ynm.store.anchor import ensure_bare_store, select_anchor
    from ynm.store.gitnotes import GitNotesLog

    cfg = loaded.config
    mounts: list[Mount] = []
    problems: list[MountProblem] = []
    if personal:
        store_path = Path(cfg.personal_store)
        repo, _ = ensure_bare_store(store_path)
        anchor = select_anchor(repo)
        mounts.append(Mount(
            PERSONAL, "personal", "git-notes", str(store_path),
            GitNotesLog(store_path, level="personal", anchor=anchor.sha, mount_id=PERSONAL),
            index_path(loaded, PERSONAL),
        ))
    if loaded.repo is not None and project_config_path(loaded.repo).exists():
        from ynm.store.repo import open_repository

        anchor = select_anchor(open_repository(loaded.repo), configured=cfg.anchor)
        mounts.append(Mount(
            PROJECT, "distributed", "git-notes", str(loaded.repo),
            GitNotesLog(loaded.repo, level="distributed", anchor=anchor.sha, mount_id=PROJECT),
            index_path(loaded, PROJECT), remote=cfg.remote,
        ))
    for mc in cfg.mounts:
        if mc.provider == "mcp":
            continue  # a hosted store, reached over MCP (ynm.service.remote)
        location = mc.path or ""
        try:
            # other providers are refused when the configuration is read (config.py)
            if not mc.anchor:
                raise ConfigError(f"mount {mc.id}: git-notes provider needs an anchor")
            log = GitNotesLog(location, level=mc.level, anchor=mc.anchor, mount_id=mc.id)
        except YnmError as err:
            problems.append(MountProblem(mc.id, mc.level, mc.provider, location, str(err)))
            continue
        mounts.append(Mount(
            mc.id, mc.level, mc.provider, location, log, index_path(loaded, mc.id),
            remote=mc.remote,
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
