"""The web view's pages at scale: wall time of whole HTTP requests to a real ``ynm serve
--http`` on 127.0.0.1 (full-text recall, no auth) over the seeded stores of benchmarks/bench.py
(seed 1, distributed level, namespace common; cached under benchmarks/.stores/).

Rows per size: ``/ui/`` (the counts by level, namespace and type plus the first page of 50),
``/ui/`` after the 10,000th memory (its cursor; the last one of a smaller store: keyset pages cost the same
anywhere), ``/ui/m/<id>`` (a memory and its history), ``/ui/search?q=`` (recall with score
parts, corpus queries that match) and ``/ui/status``. The first request of each kind is a
warm-up, not in the percentiles but shown in the note: for ``/ui/`` it is the one that counts
the store by level, namespace and type (later pages reuse the counts while the shard tips stay
the same, ynm.service.browse.facets). Target: ``/ui/`` under 1 s at 100k.

Usage: python benchmarks/ui.py [--sizes 10000,100000] [--samples 20]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path
from urllib.parse import quote

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

import httpx
from bench import GIT_ENV, LEXICAL, pct, seed_store

from tests.support.serve import serve_http
from ynm.service import browse
from ynm.service.ynm import Ynm


def rows_for(size: int, root: Path, samples: int) -> list[tuple[str, ...]]:
    t = time.perf_counter()
    repo, queries, _ = seed_store(size, root)
    print(f"  store of {size} ready in {time.perf_counter() - t:.1f} s", file=sys.stderr)
    env = {**GIT_ENV, **LEXICAL}
    with Ynm.open(repo, env={**os.environ, **env}) as y:
        deep = browse.page(y, browse.Filter(), limit=1)
        cursor = None
        # the cursor of the 10,000th memory (or the last one of a smaller store)
        walked = 0
        while walked < min(10_000, size - 1):
            step = min(browse.PAGE_MAX, min(10_000, size - 1) - walked)
            deep = browse.page(y, browse.Filter(), after=cursor, limit=step)
            walked += len(deep.items)
            cursor = deep.next
        memory_id = deep.items[-1]["memoryId"]
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        with serve_http(repo, wait_s=600) as base, httpx.Client(base_url=base,
                                                                 timeout=60) as client:
            paths = {
                "/ui/ (counts + newest 50)": ["/ui/"],
                "/ui/ after the 10,000th memory": [f"/ui/?after={quote(cursor or '')}"],
                "/ui/m/<id>": [f"/ui/m/{memory_id}"],
                "/ui/search?q=": [f"/ui/search?q={quote(q)}" for q in queries],
                "/ui/status": ["/ui/status"],
            }
            out = []
            for name, urls in paths.items():
                start = time.perf_counter()
                r = client.get(urls[0])  # warm-up, timed apart (the index counts its store)
                first = (time.perf_counter() - start) * 1000
                assert r.status_code == 200, (name, r.status_code, r.text[:300])
                times = []
                for n in range(samples):
                    start = time.perf_counter()
                    r = client.get(urls[n % len(urls)])
                    times.append((time.perf_counter() - start) * 1000)
                    assert r.status_code == 200
                out.append((f"{name} @{size // 1000}k", f"{pct(times, 50):.1f}",
                            f"{pct(times, 95):.1f}",
                            f"{len(r.content) // 1024} KiB page; first request {first:.0f} ms"))
            return out
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--dir", default=str(HERE / ".stores"))
    args = parser.parse_args()
    root = Path(args.dir)
    root.mkdir(parents=True, exist_ok=True)
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        print(f"seeding and measuring {size} memories ...", file=sys.stderr)
        rows.extend(rows_for(size, root, args.samples))
    print("| page | p50 ms | p95 ms | note |\n|---|---:|---:|---|")
    for r in rows:
        print(f"| {' | '.join(r)} |")


if __name__ == "__main__":
    main()
