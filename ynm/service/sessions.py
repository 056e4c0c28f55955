"""The settings a started session keeps for its writes: ``$YNM_HOME/sessions/<id>.json``.

``ynm session start`` (and ``memory_session`` start, and the SessionStart hook) keeps the
session's working namespace and ttl in a small JSON file, ``{"sessionId", "namespace", "ttl"}``,
so that a later ``remember --type working --session <id>`` (a separate process) writes with the
session's ttl. ``session end`` removes the file. The file is local state of this machine, like
the cache: it is not memory, is never synced, and losing it only means working memory falls
back to the default ttl (``PT8H``). Files untouched for :data:`STALE_AFTER_S` are removed when
a session starts (clients such as Claude Code never end their sessions explicitly).

Session ids are normalised (:func:`ynm.model.namespaces.normalize_session_id`) before they get
here, so ``<id>`` is ``[a-z0-9][a-z0-9._-]*`` with no ``..``: a safe file name.
"""

from __future__ import annotations

import json
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from ynm.model.durations import ensure_ttl

SESSIONS_DIR = "sessions"
STALE_AFTER_S = 30 * 24 * 3600


def settings_path(home: Path, session_id: str) -> Path:
    """``<home>/sessions/<session_id>.json`` for a normalised ``session_id``."""
    return home / SESSIONS_DIR / f"{session_id}.json"


def keep_settings(home: Path, session_id: str, namespace: str, ttl: str) -> None:
    """Write the session's settings (atomically: a reader sees the old file or the new one),
    then remove settings files untouched for :data:`STALE_AFTER_S` seconds.

    Raises:
        OSError: the file could not be written.
    """
    folder = home / SESSIONS_DIR
    folder.mkdir(parents=True, exist_ok=True)
    body = json.dumps({"sessionId": session_id, "namespace": namespace, "ttl": ttl},
                      separators=(",", ":")) + "\n"
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".json")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(body)
        os.replace(tmp, settings_path(home, session_id))
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _prune(folder, keep=f"{session_id}.json")


def load_settings(home: Path, session_id: str) -> dict[str, Any] | None:
    """The kept settings of ``session_id``, or None when there are none or the file is not a
    JSON object whose ``ttl`` is a duration longer than zero
    (:func:`ynm.model.durations.ensure_ttl`; a damaged or hand-edited file is ignored, never
    an error, and working memory then gets the default ttl)."""

    try:
        data = json.loads(settings_path(home, session_id).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("ttl"), str):
        return None
    try:
        ensure_ttl(data["ttl"])
    except ValueError:
        return None
    return data


def drop_settings(home: Path, session_id: str) -> bool:
    """Remove the kept settings of ``session_id``; True when there were some."""
    try:
        settings_path(home, session_id).unlink()
    except FileNotFoundError:
        return False
    return True


def _prune(folder: Path, keep: str) -> None:
    now = time.time()
    for path in folder.glob("*.json"):
        try:
            if path.name != keep and now - path.stat().st_mtime > STALE_AFTER_S:
                path.unlink()
        except OSError:
            pass
