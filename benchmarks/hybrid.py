"""Hybrid recall at scale: embedding throughput, vector reuse on reindex, hybrid recall latency
in-process and as a whole ``ynm recall`` process, on the 100k store of benchmarks/bench.py.

Usage: python benchmarks/hybrid.py [--size 100000]  (run bench.py first to seed the store;
embedding 100k memories takes several minutes on two cores)
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench import GIT_ENV, pct, timed  # noqa: E402
from corpus import generate_corpus  # noqa: E402

from ynm.model.inputs import RecallQuery  # noqa: E402
from ynm.service.ynm import Ynm  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--dir", default=str(HERE / ".stores"))
    args = parser.parse_args()
    root = Path(args.dir)
    repo = root / f"store-{args.size}"
    if not (repo / ".seeded").exists():
        sys.exit(f"no seeded store at {repo}: run benchmarks/bench.py --sizes {args.size} first")
    env = {**os.environ, **GIT_ENV, "YNM_HOME": str(root / "home"), "YNM_EMBEDDER": "auto"}
    os.environ["YNM_EMBEDDER"] = "auto"
    queries = [q.text for q in generate_corpus(seed=1, count=args.size, level="distributed",
                                               namespaces=("common",)).queries[:20]]
    rows = []
    with Ynm.open(repo, env=env) as y:
        mount = y.mount("project")
        mount.cache.refresh(mount.log)
        embedder = y.embedder
        assert embedder is not None, y.embedder_problem
        calls = {"n": 0}
        inner = embedder.embed

        def counting(texts):
            calls["n"] += len(texts)
            return inner(texts)

        embedder.embed = counting
        t = time.perf_counter()
        y.reindex("project")
        first_s = time.perf_counter() - t
        first = calls["n"]
        rows.append((f"reindex + embed@{args.size}", f"{first_s * 1000:.0f}", "",
                     f"{first} texts embedded, {first / first_s:.0f} texts/s overall"))
        t = time.perf_counter()
        y.reindex("project")
        second_s = time.perf_counter() - t
        rows.append((f"second reindex@{args.size}", f"{second_s * 1000:.0f}", "",
                     f"{calls['n'] - first} texts embedded (stored vectors reused)"))
        qs = [RecallQuery(text=q, limit=10) for q in queries]
        for q in qs:
            y.recall(q)
        k = iter(range(10**9))
        xs = timed(lambda: y.recall(qs[next(k) % len(qs)]), 40)
        rows.append((f"hybrid recall (cache)@{args.size}", f"{pct(xs, 50):.1f}",
                     f"{pct(xs, 95):.1f}", "in-process, model loaded"))
    ynm = str(Path(sys.executable).with_name("ynm"))
    proc = timed(lambda: subprocess.run([ynm, "recall", queries[2], "--cwd", str(repo)], env=env,
                                        check=True, capture_output=True), 8)
    rows.append((f"ynm recall process (hybrid)@{args.size}", f"{pct(proc, 50):.0f}",
                 f"{pct(proc, 95):.0f}", "whole command: start, load model, embed, search"))
    print("| key | p50 ms | p95 ms | note |\n|---|---:|---:|---|")
    for r in rows:
        print(f"| {' | '.join(r)} |")


if __name__ == "__main__":
    main()
