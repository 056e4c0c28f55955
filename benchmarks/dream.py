"""Time of a full heuristic dream run on a seeded store, and of the run after it.

A project repository of ``size`` memories is seeded from benchmarks/corpus.py (seed 1,
distributed level, namespace ``common``; duplicates and contradictions included) in a temp dir,
then measured with full-text candidates (``YNM_EMBEDDER=none``), the heuristic judge and the
``none`` writer:

- first run: every memory fresh, judging capped at ``dream.maxPairsPerRun`` (2000) per pass;
  the owners past the cap stay fresh (target at 100k: <= 60 s);
- catch-up run: ``maxPairs`` high enough that every fresh memory is judged and marked;
- quiet run: nothing fresh, only expire and retention run (target at 100k: <= 5 s).

Usage: python benchmarks/dream.py [--size 10000] [--max-pairs 2000]
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


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--max-pairs", type=int, default=None)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="ynm-dream-bench-"))
    env = {**os.environ, **GIT_ENV, "YNM_EMBEDDER": "none", "YNM_HOME": str(root / "home"),
           "YNM_USER": "bench"}
    repo = root / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "root"], cwd=repo, check=True,
                   env=env)
    subprocess.run([sys.executable, "-m", "ynm.cli.__main__", "init", "--cwd", str(repo)],
                   check=True, env=env, capture_output=True)
    corpus = generate_corpus(seed=1, count=args.size, level="distributed",
                             namespaces=("common",))
    os.environ.update(env)
    with Ynm.open(repo, env=env) as y:
        t = time.perf_counter()
        y.import_jsonl("".join(dumps_record(r) + "\n" for r in corpus.records))
        print(f"seed {args.size}: {time.perf_counter() - t:.1f} s")
    for label, cap in (("first run", args.max_pairs), ("catch-up run", 10**9),
                       ("quiet run", args.max_pairs)):
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


if __name__ == "__main__":
    main()
