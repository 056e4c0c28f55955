"""Time of a full heuristic dream run on a seeded store, and of the runs after it.

A project repository of ``size`` memories seeded from benchmarks/corpus.py (seed 1,
distributed level, namespace ``common``; duplicates and contradictions included): by default
the one benchmarks/bench.py seeds and keeps in benchmarks/.stores/store-<size> (seeded there
when missing), copied to a temp dir first because a dream writes into it (``--fresh-seed``:
seed a new one in the temp dir instead). Measured with full-text candidates
(``YNM_EMBEDDER=none``), the heuristic judge and the ``none`` writer:

- first run: every memory fresh, judging capped at ``dream.maxPairsPerRun`` (2000) per pass;
  the owners past the cap stay fresh (target at 100k: <= 60 s);
- catch-up run (``--catch-up``; minutes at 10k, far longer at 100k): ``maxPairs`` high enough
  that every fresh memory is judged and marked; without it, every memory still fresh gets
  its dream mark the way a run's end writes them (ynm.dream.engine.mark_dreamed, timed as
  "settle"), which is where a catch-up leaves the store;
- quiet run: nothing fresh, only expire and retention run (target at 100k: <= 5 s).

Usage: python benchmarks/dream.py [--size 10000] [--max-pairs 2000] [--catch-up]
       [--fresh-seed] [--dir benchmarks/.stores]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus import generate_corpus

from ynm.model.jsonl import dumps_record
from ynm.service.ynm import Ynm

GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com",
           "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}


def seeded_copy(size: int, root: Path, fresh: bool, env: dict[str, str],
                stores: Path) -> Path:
    """A seeded repository of ``size`` memories in ``root``: a copy of bench.py's kept store
    in ``stores`` (seeding it when missing), or a new one with ``fresh``."""
    if not fresh:
        from bench import seed_store


        repo, _, seconds = seed_store(size, stores)
        print(f"seeded store {repo} ({seconds:.1f} s to seed), copied")
        copy = root / "repo"
        subprocess.run(["cp", "-r", str(repo), str(copy)], check=True)
        if (stores / "home").is_dir():
            subprocess.run(["cp", "-r", str(stores / "home"), str(root / "home")], check=True)
        return copy
    repo = root / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "root"], cwd=repo, check=True,
                   env=env)
    subprocess.run([sys.executable, "-m", "ynm.cli.__main__", "init", "--cwd", str(repo)],
                   check=True, env=env, capture_output=True)
    corpus = generate_corpus(seed=1, count=size, level="distributed", namespaces=("common",))
    with Ynm.open(repo, env=env) as y:
        t = time.perf_counter()
        y.import_jsonl("".join(dumps_record(r) + "\n" for r in corpus.records))
        print(f"seed {size}: {time.perf_counter() - t:.1f} s")
    return repo


def settle(repo: Path, env: dict[str, str]) -> str:
    """Give every memory still fresh its heuristic dream mark, as a run's end writes them."""
    from ynm.dream.engine import DreamInput, Run, mark_dreamed
    from ynm.dream.heuristic import HeuristicJudge
    from ynm.dream.writers_none import NoneWriter

    with Ynm.open(repo, env=env) as y:
        t = time.perf_counter()
        run = Run(ynm=y, judge=HeuristicJudge(), writer=NoneWriter(), inp=DreamInput(),
                  now_ms=y._now_ms())
        run.fresh = {i: v[0] for i, v in run.versions().items() if v[2] != v[0]}
        marked = mark_dreamed(run)
        return f"settle: {time.perf_counter() - t:.1f} s ({marked} marked)"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--max-pairs", type=int, default=None)
    parser.add_argument("--catch-up", action="store_true",
                        help="judge every fresh memory (no cap) instead of settling")
    parser.add_argument("--fresh-seed", action="store_true",
                        help="seed a new store instead of copying bench.py's")
    parser.add_argument("--dir", default=str(HERE / ".stores"),
                        help="where bench.py keeps its seeded stores (as bench.py --dir)")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="ynm-dream-bench-"))
    env = {**os.environ, **GIT_ENV, "YNM_EMBEDDER": "none", "YNM_HOME": str(root / "home"),
           "YNM_USER": "bench"}
    os.environ.update(env)
    repo = seeded_copy(args.size, root, args.fresh_seed, env, Path(args.dir))
    runs = [("first run", args.max_pairs), ("catch-up run", 10**9), ("quiet run", args.max_pairs)]
    for label, cap in runs:
        if label == "catch-up run" and not args.catch_up:
            print(settle(repo, env))
            continue
        with Ynm.open(repo, env=env) as y:
            t = time.perf_counter()
            out = y.consolidate(max_pairs=cap)
            seconds = time.perf_counter() - t
        full = out["full"]
        summary = ", ".join(f"{name} {len(p['changed'])}/{p['candidates']}"
                            + (f" flagged {len(p['flagged'])}" if p["flagged"] else "")
                            + (f" judged {p['judged']}" if p["judged"] else "")
                            for name, p in full["passes"].items())
        print(f"{label}: {seconds:.1f} s (fresh {full['fresh']}, dreamed {full['dreamed']}; "
              f"{summary})")
    subprocess.run(["rm", "-rf", str(root)], check=False)


if __name__ == "__main__":
    main()
