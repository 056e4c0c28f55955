"""What the cache file holds, table by table, against the raw JSONL of the store.

On a seeded store (benchmarks/bench.py's ``seed_store``; give a copy, the cache is rebuilt in
place): a full reindex (wall and CPU time of this process, median of the runs), the cache's bytes after a WAL checkpoint against the raw JSONL
bytes (``sum(shards.bytes)``), the bytes of each table and index (SQLite's ``dbstat``), the
average record line raw and as kept, and recall (cache) p50/p95 over the corpus queries the
way bench.py measures it.

Usage: python benchmarks/cache_size.py STORE_DIR [--samples 40] [--reindex 2]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench import GIT_ENV, LEXICAL, pct, timed
from corpus import generate_corpus

from ynm.model.inputs import RecallQuery
from ynm.service.ynm import Ynm


def table_bytes(conn) -> list[tuple[str, int]]:
    """``(table or index name, bytes of its pages)``, largest first (``dbstat``)."""
    return conn.execute(
        "SELECT name, sum(pgsize) FROM dbstat GROUP BY name ORDER BY 2 DESC").fetchall()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("store", type=Path)
    parser.add_argument("--samples", type=int, default=40)
    parser.add_argument("--reindex", type=int, default=2)
    args = parser.parse_args()
    repo = args.store.resolve()
    env = {**os.environ, **GIT_ENV, **LEXICAL, "YNM_HOME": str(repo.parent / "home")}
    with Ynm.open(repo, env=env) as y:
        mount = y.mount("project")
        cpu: list[float] = []

        def reindex_once() -> None:
            start = time.process_time()
            mount.cache.rebuild(mount.log)
            cpu.append((time.process_time() - start) * 1000)

        reindex = timed(reindex_once, args.reindex)
        conn = mount.cache.conn
        size = conn.execute("SELECT count(*) FROM memories").fetchone()[0]
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        cache_bytes = Path(mount.cache.path).stat().st_size
        free = conn.execute("PRAGMA freelist_count").fetchone()[0] * conn.execute(
            "PRAGMA page_size").fetchone()[0]  # pages a rebuild over an older file left free
        raw = conn.execute("SELECT sum(bytes) FROM shards").fetchone()[0] or 1
        records, packed = conn.execute(
            "SELECT count(*), sum(length(line)) FROM records").fetchone()
        rows = [("full reindex", f"{pct(reindex, 50):.0f} ms",
                 f"CPU {pct(cpu, 50):.0f} ms; {size} memories"),
                ("cache bytes", f"{cache_bytes / 1e6:.1f} MB",
                 f"{cache_bytes / raw:.2f}x the raw JSONL ({raw / 1e6:.1f} MB)"),
                ("  in use", f"{(cache_bytes - free) / 1e6:.1f} MB",
                 f"{(cache_bytes - free) / raw:.2f}x (the rest: free pages)"),
                ("record line", f"{raw / records:.0f} B raw",
                 f"{(packed or 0) / records:.0f} B as kept ({records} records)")]
        for name, n in table_bytes(conn):
            rows.append((f"  {name}", f"{n / 1e6:.1f} MB", f"{n / cache_bytes * 100:.1f}%"))
        corpus = generate_corpus(seed=1, count=size, level="distributed", namespaces=("common",))
        qs = [RecallQuery(text=q.text, limit=10) for q in corpus.queries[:20]]
        assert all(y.recall(q) for q in qs), "every benchmark query must match"
        k = iter(range(10**9))
        recall = timed(lambda: y.recall(qs[next(k) % len(qs)]), args.samples)
        rows.append(("recall (cache)", f"p50 {pct(recall, 50):.1f} ms",
                     f"p95 {pct(recall, 95):.1f} ms"))
    width = max(len(r[0]) for r in rows)
    for name, value, note in rows:
        print(f"{name:<{width}}  {value:>14}  {note}")


if __name__ == "__main__":
    main()
