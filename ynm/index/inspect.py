"""Look at a mount's cache file without changing it (``ynm doctor``).

:class:`ynm.index.cache.MountCache` opens its file for writing: it creates a missing file,
switches it to WAL and drops a file of another schema version. Inspection must do none of that,
so the file is opened read-only: with SQLite's ``immutable=1`` when no ``-wal`` file is beside it
(nothing can be pending then, and SQLite creates no ``-wal``/``-shm`` file of its own), else with
``mode=ro`` (another process has it open; its ``-wal`` holds the newest pages).
Source: SQLite URI parameters (https://www.sqlite.org/uri.html, ``mode``, ``immutable``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import sqlean as sqlite3

from ynm.index.schema import SCHEMA_VERSION, is_damaged


@dataclass
class CacheFacts:
    """What a cache file holds, as read without changing it.

    Attributes:
        path: the file.
        exists: whether it exists.
        schema_version: the ``meta.schema_version`` it was written with (None: no ``meta``
            table, -1: no version in it).
        anchor: the anchor it was built for (None: never built).
        shards: shard ref -> the notes commit it was built from.
        shard_bytes: shard ref -> the byte length of the note blob it was built from.
        problems: bad lines it recorded: ``(shard ref, 1-based line, message)``.
        memories: folded memories it holds.
        bytes: bytes on disk (the file and its ``-wal``).
        error: why it could not be read (not a database, unreadable), else None.
        damaged: with ``verify``, SQLite's first complaint about a file that opens and reads
            but is damaged inside (``PRAGMA quick_check``), else None.
    """

    path: Path
    exists: bool = False
    schema_version: int | None = None
    anchor: str | None = None
    shards: dict[str, str] = field(default_factory=dict)
    shard_bytes: dict[str, int] = field(default_factory=dict)
    problems: list[tuple[str, int, str]] = field(default_factory=list)
    memories: int = 0
    bytes: int = 0
    error: str | None = None
    damaged: str | None = None

    @property
    def current_schema(self) -> bool:
        """Whether it was written with this ynm's :data:`SCHEMA_VERSION`."""
        return self.schema_version == SCHEMA_VERSION


def inspect_cache(path: Path | str, verify: bool = False) -> CacheFacts:
    """The :class:`CacheFacts` of the cache file at ``path``; never raises for a missing,
    damaged or foreign file (``exists``/``error`` say so) and never writes.

    With ``verify``, pages that no read touched are checked too (``PRAGMA quick_check``: the
    whole file is read, about 3 s for 1 GB): a file damaged behind a valid header answers
    queries and can silently miss memories, so only such a check finds it (``damaged``)."""
    path = Path(path)
    facts = CacheFacts(path)
    if not path.is_file():
        return facts
    facts.exists = True
    wal = Path(f"{path}-wal")
    facts.bytes = path.stat().st_size + (wal.stat().st_size if wal.is_file() else 0)
    mode = "mode=ro" if wal.is_file() else "immutable=1"
    try:
        conn = sqlite3.connect(f"file:{quote(str(path))}?{mode}", uri=True)
    except sqlite3.Error as err:
        facts.error = f"cannot open: {err}"
        return facts
    try:
        _read(conn, facts)
        if verify:
            found = conn.execute("PRAGMA quick_check(1)").fetchone()[0]
            # one line: SQLite heads its report "*** in database main ***" on a line of its own
            facts.damaged = None if found == "ok" else "; ".join(
                part.strip() for part in found.splitlines()
                if part.strip() and not part.startswith("***"))
    except sqlite3.Error as err:
        if verify and is_damaged(err):
            facts.damaged = str(err)
        facts.error = f"cannot read: {err}"
    finally:
        conn.close()
    return facts


def _read(conn: Any, facts: CacheFacts) -> None:
    tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "meta" not in tables:
        return
    meta = dict(conn.execute("SELECT key, value FROM meta").fetchall())
    try:
        facts.schema_version = int(meta.get("schema_version", -1))
    except ValueError:
        facts.schema_version = -1
    if not facts.current_schema:
        return  # another layout: its other tables are not read
    facts.anchor = meta.get("anchor")
    for ref, commit, size in conn.execute("SELECT ref, commit_id, bytes FROM shards"):
        facts.shards[ref] = commit
        facts.shard_bytes[ref] = size
    facts.problems = [tuple(r) for r in conn.execute(
        "SELECT ref, line, message FROM problems ORDER BY ref, line")]
    facts.memories = conn.execute("SELECT count(*) FROM memories").fetchone()[0]


def stale_reason(facts: CacheFacts, anchor: str, tips: Mapping[str, Any]) -> str | None:
    """Why a cache with ``facts`` is not in step with a log whose anchor is ``anchor`` and
    whose shard tips are ``tips`` (ref -> tip with ``.commit`` and ``.key.shard_id``), in the
    words of ``ynm status`` (reference/cli.md §7.7): ``never built``, ``anchor changed``,
    ``<n> shards in log, <m> indexed``, ``shard <id> changed``; None when it is in step.
    ``facts`` must be of the current schema."""
    if facts.anchor != anchor:
        return "anchor changed" if facts.anchor else "never built"
    if len(facts.shards) != len(tips):
        return f"{len(tips)} shards in log, {len(facts.shards)} indexed"
    for ref, tip in tips.items():
        if facts.shards.get(ref) != tip.commit:
            return f"shard {tip.key.shard_id} changed"
    return None

