"""ynm's own doctor checks, after the reference's: each mount's cache (schema version and
freshness against the shard tips), the bad record lines of each mount, the vector model, and
each cache's size against the bytes of its records. The cache is looked at, never refreshed:
a stale cache is reported with the command that refreshes it."""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Mapping
from pathlib import Path

from ynm.doctor import Check, check
from ynm.doctor.mounts import StoreFacts
from ynm.errors import pip_install
from ynm.index.inspect import stale_reason
from ynm.index.schema import SCHEMA_VERSION
from ynm.model.words import counted

MAX_LISTED = 20  # bad lines named in a detail; the rest are counted (`ynm status` lists all)
VECTOR_PACKAGES = ("numpy", "onnxruntime", "tokenizers", "sqlite_vec")


def cache_checks(facts: StoreFacts) -> list[Check]:
    """``cache <id>``: ok/info ``schema <n>, fresh (<shards> shards, <memories> memories)``,
    or ``not built yet`` (ok: the next read builds it); error with the fix ``ynm reindex
    --mount <id>`` when the file is damaged (``PRAGMA quick_check``, or SQLite's error as it
    is read): ``cache file is damaged: <SQLite's message>; the next command that reads the
    damaged part rebuilds it`` (ynm.service.mounts.Mount.recover); warn with that fix when
    the file was written by another schema version, cannot be read, or is stale
    (``stale: <reason>``, the reasons of ``ynm status``). Nothing is rebuilt here."""
    m, c = facts.mount, facts.cache
    name, fix = f"cache {m.id}", f"ynm reindex --mount {m.id}"
    if facts.error is not None:
        return []  # the mount check already failed
    if not c.exists:
        return [check(name, True, f"{c.path}: not built yet; the next read builds it")]
    if c.damaged is not None:  # the next command that reads it meets the damage and rebuilds
        return [check(name, False, f"{c.path}: cache file is damaged: {c.damaged}; the next "
                      f"command that reads the damaged part rebuilds it, or run `{fix}` "
                      "(memories live in git notes: nothing is lost)", "error", fix=fix)]
    if c.error is not None:
        return [check(name, False, f"{c.path}: {c.error}; the next read rebuilds it", "warn",
                      fix=fix)]
    if not c.current_schema:
        was = "none" if c.schema_version in (None, -1) else str(c.schema_version)
        return [check(name, False, f"{c.path}: schema version {was}, this ynm uses "
                      f"{SCHEMA_VERSION}; the next read rebuilds it", "warn", fix=fix)]
    reason = stale_reason(c, m.log.anchor, facts.tips)
    if reason is not None:
        return [check(name, False, f"{c.path}: stale ({reason}); the next read refreshes it",
                      "warn", fix=fix)]
    return [check(name, True, f"schema {SCHEMA_VERSION}, fresh "
                  f"({counted(len(facts.tips), 'shard')}, "
                  f"{counted(c.memories, 'memory', 'memories')})")]


def bad_lines_checks(facts: StoreFacts) -> list[Check]:
    """``bad lines <id>``: ok ``none``, or warn naming each skipped line as ``<shard ref>:<line>
    <message>`` (at most :data:`MAX_LISTED`, then how many more). Every other record is still
    read. The fix opens the first bad line's shard in an editor (``git notes --ref <ref>
    edit <anchor>``), to correct or delete the line by hand."""
    if facts.error is not None:
        return []
    m, bad = facts.mount, facts.bad_lines
    name = f"bad lines {m.id}"
    if not bad:
        return [check(name, True, "none")]
    listed = "; ".join(f"{ref}:{line} {msg}" for ref, line, msg in bad[:MAX_LISTED])
    more = f"; and {len(bad) - MAX_LISTED} more (`ynm status` lists them)" \
        if len(bad) > MAX_LISTED else ""
    return [check(name, False, f"{counted(len(bad), 'line')} skipped (every other record is read): "
                  f"{listed}{more}", "warn",
                  fix=f"git -C {facts.details['repo']} notes --ref {bad[0][0]} edit "
                  f"{m.log.anchor}")]


def snapshot_checks(facts: StoreFacts) -> list[Check]:
    """``snapshot <id>``: the mount's snapshot (``ynm compact``,
    ``refs/ynm/<level>/snapshots/cache-v<schema>``), read and verified without changing
    anything (:func:`ynm.store.snapshots.check_snapshot`). ok/info ``none`` when there is
    none; ok/info ``<ref> <commit>: covers <r> records in <s> shards, <n> behind the tips``
    (records in the shards that it does not cover, which a cold cache reads after loading
    it) when usable; warn, naming why, with the fix ``ynm compact``, when it is no snapshot
    commit, is damaged, of an unknown format, written for another anchor, or does not match
    the notes (a cold cache is then built from the notes)."""
    if facts.error is not None:
        return []
    from ynm.index.snapshot import NAME, check_meta
    from ynm.store.snapshots import check_snapshot, snapshot_ref
    from ynm.store.sync import new_records

    m = facts.mount
    name, fix = f"snapshot {m.id}", "ynm compact"
    repo = m.log.repo
    ref = snapshot_ref(m.level, NAME)
    tips = {r: tip.commit for r, tip in facts.tips.items()}
    found, why = check_snapshot(repo, ref, tips)
    if found is None and why is None:
        return [check(name, True, f"none ({ref}); `ynm compact` writes one, which a fresh "
                      "clone's first read starts from")]
    if why is None and found is not None:
        other = check_meta({**found.meta.extra}, m.log.anchor)
        if other is not None:
            why = f"snapshot {ref} does not suit this mount ({other})"
    if why is not None or found is None:
        return [check(name, False, f"{why}; a fresh cache is built from the notes, not from "
                      "it; `ynm compact` writes it again", "warn", fix=fix)]
    behind = sum(new_records(repo, tip, found.meta.shards.get(r, {}).get("commit"))
                 for r, tip in tips.items())
    covered = sum(int(s.get("records", 0)) for s in found.meta.shards.values())
    return [check(name, True, f"{ref} {found.commit[:12]}: covers "
                  f"{counted(covered, 'record')} in {counted(len(found.meta.shards), 'shard')}, "
                  f"{counted(behind, 'record')} behind the tips")]


def vector_model(spec: str, home: Path, env: Mapping[str, str]) -> Check:
    """``vector model``: whether recall can use vectors, and, when a local model is ready,
    how long it takes to start (load and embed one text), in milliseconds. Never an error:
    without vectors recall is full-text only. ``embedder: none``, an ``auto`` embedder without
    the vector extra and a remote (openai-compatible) model, which doctor does not call
    (offline), are ok/info; a missing package for an embedder named explicitly, a model not
    exported yet, sqlite-vec that cannot load, or a model that fails to start are warnings."""
    from ynm.index import embedders

    spec = (spec or "auto").strip()
    name = "vector model"
    if spec == "none":
        return check(name, True, "off (embedder is none): full-text recall only")
    problem = embedders.spec_problem(spec)
    if problem is not None:
        return check(name, False, f"{problem}: full-text recall only", "warn")
    if spec.startswith("openai-compatible:"):
        return check(name, True, f"{embedders.model_name(spec)} at {spec.partition('@')[2]}: "
                     "not called (doctor works offline)")
    missing = [p for p in VECTOR_PACKAGES if importlib.util.find_spec(p) is None]
    install = pip_install("vector")
    if missing:
        detail = f"{', '.join(missing)} not installed: full-text recall only"
        if spec == "auto":
            return check(name, True, f"{detail}; {install}")
        return check(name, False, detail, "warn", fix=install)
    vec = _sqlite_vec_problem()
    if vec is not None:
        return check(name, False, f"{vec}; full-text recall only", "warn")
    model = embedders.model_name(spec)
    onnx = embedders.export_path(spec, home)
    if onnx is None or not onnx.is_file():
        return check(name, False, f"{model} is not exported yet ({onnx}); the first recall "
                     "exports it once (needs torch)", "warn", fix="ynm reindex")
    began = time.perf_counter()
    embedder, why = embedders.open_embedder(spec, home, dict(env))
    if embedder is None:
        return check(name, False, f"{model} cannot start: {why}", "warn")
    try:
        embedder.embed(["ynm doctor"])
    except Exception as err:  # noqa: BLE001 - any failure of the model is reported, not raised
        return check(name, False, f"{model} cannot embed: {err}", "warn")
    ms = round((time.perf_counter() - began) * 1000)
    return check(name, True, f"{model} ready, starts in {ms} ms ({embedder.dim} dimensions)")


def _sqlite_vec_problem() -> str | None:
    """Why sqlite-vec cannot load into ynm's SQLite here, tried on a private in-memory
    database; None when it loads."""
    import sqlean as sqlite3

    from ynm.index.schema import CacheConnection, load_vec

    conn = sqlite3.connect(":memory:", factory=CacheConnection)
    try:
        return load_vec(conn)
    finally:
        conn.close()


def cache_size_checks(facts: StoreFacts) -> list[Check]:
    """``cache size <id>`` (ok, info): the cache file's bytes (with its ``-wal``) against the
    bytes of the store's records (its shards' note blobs), and their ratio."""
    if facts.error is not None:
        return []
    c = facts.cache
    records = f"{_size(facts.raw_bytes)} of records in {counted(len(facts.tips), 'shard')}"
    if not c.exists:
        return [check(f"cache size {facts.mount.id}", True, f"no cache yet; {records}")]
    ratio = f" ({c.bytes / facts.raw_bytes:.1f}x)" if facts.raw_bytes else ""
    return [check(f"cache size {facts.mount.id}", True,
                  f"{_size(c.bytes)} cache for {records}{ratio}")]


def _size(n: int) -> str:
    """Bytes in binary units: ``512 B``, ``88.0 KiB``, ``1.5 MiB``, ``2.0 GiB``."""
    if n < 1024:
        return f"{n} B"
    for unit in ("KiB", "MiB", "GiB"):
        n /= 1024
        if n < 1024 or unit == "GiB":
            return f"{n:.1f} {unit}"
    return f"{n} B"  # pragma: no cover
