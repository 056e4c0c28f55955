"""The git store: shard refs in git notes, the anchor, and the repository lock.

Names load lazily so that importing ``ynm.store`` does not import pygit2 until it is used.
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

__all__ = [
    "Anchor",
    "AppendedShard",
    "GitNotesLog",
    "RepoLock",
    "ShardBlob",
    "ShardTip",
    "append_message",
    "create_root_commit",
    "ensure_bare_store",
    "find_root_commit",
    "open_repository",
    "select_anchor",
]

_HOMES = {
    "Anchor": "ynm.store.anchor",
    "create_root_commit": "ynm.store.anchor",
    "ensure_bare_store": "ynm.store.anchor",
    "find_root_commit": "ynm.store.anchor",
    "select_anchor": "ynm.store.anchor",
    "AppendedShard": "ynm.store.gitnotes",
    "GitNotesLog": "ynm.store.gitnotes",
    "ShardBlob": "ynm.store.gitnotes",
    "ShardTip": "ynm.store.gitnotes",
    "append_message": "ynm.store.gitnotes",
    "RepoLock": "ynm.store.lock",
    "open_repository": "ynm.store.repo",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module 'ynm.store' has no attribute {name!r}")
    return getattr(import_module(home), name)
