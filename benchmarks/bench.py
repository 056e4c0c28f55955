"""Latency of ynm's core paths on seeded stores, printed as a table.

For each size (default 10k and 100k memories) a project repository is seeded once (cached under
benchmarks/.stores/) from benchmarks/corpus.py (seed 1, distributed level, namespace common:
16 shards, 4 types x 4 months) and then measured:

- remember: ``Ynm.remember`` of one memory (one append plus the cache update in the same call);
  store append: the raw one-record shard append alone;
- load+fold: read every shard blob, parse, fold (no cache);
- reindex: full cache rebuild from git;
- cache bytes: the cache file against the raw JSONL bytes of the shards it was built from;
- reindex peak RSS: a whole ``ynm reindex`` process, its wall time and peak resident memory;
- refresh: cache refresh after one foreign append (a second process's write, here another
  log object), which reads only the appended tail;
- recall (cache): ``Ynm.recall`` over corpus queries that match, through a fresh cache;
- recall (fold): the same question answered without the cache: load, parse, fold, score;
- recall, 5-word query / 2,000-character query: ``Ynm.recall`` of five words against a
  paragraph of 2,000 characters made of the store's own memories, timed alternately; a long
  question searches only its most selective words and pairs, so it must stay within 3x;
- ynm recall process: the whole ``ynm recall "<query>"`` command as a new process, with its
  bytecode compiled (the child's environment drops PYTHONDONTWRITEBYTECODE) and one warm-up
  run before the samples;
- sync@1000: one new record, then ``ynm sync`` (fetch, merge, push) against a local bare remote
  holding 1k memories;
- append to the largest shard: one record (raw shard append, warm process) into the biggest
  shard, next to ``git hash-object`` of that shard's blob in the same run (the object id covers
  every byte: the floor of the format) and an append into a new, empty shard;
- .git bytes after N appends: N one-record appends into the largest shard (``--appends``,
  default 1000) with background packing, ``du`` of ``.git`` before and after;
- 8 writers through ynm serve's write queue: 8 concurrent tasks send ``remember`` through the
  server's MemoryService (one worker thread, one write queue) into the largest shard's
  namespace; remembers per second, and every record checked to land exactly once;
- refresh after sync: a sync brings 100 new records (written by another clone into the
  existing month shards) into the store; the cache refresh that follows, against the full
  reindex of the same store.

- compact / cold rebuild with snapshot / cold rebuild without snapshot (``--compact-only``
  runs just these, on a copy of the seeded store): ``ynm compact`` writing the snapshot anew,
  then a cache deleted and rebuilt by the first read, once from the snapshot and once from a
  full read of the notes; each in its own process, with the peak resident memory it reached
  (``VmHWM`` of that process, from /proc), the cache file's bytes and ``.git`` bytes before
  and after the snapshot; and the memory ids recall gives for the corpus queries before
  compact, after it and from a cache built from its snapshot, which must be the same ids in
  the same order; then ``--appends`` appends into the largest shard and one more compact,
  and ``.git`` (after ``git gc``) against its size before any compaction or append.

Usage: python benchmarks/bench.py [--sizes 10000,100000] [--samples 20] [--compact-only]
(``make bench-1m`` runs ``--sizes 100000,1000000``: seeding the 1M store takes the better part
of an hour on two cores and ~10 GB of disk; it is kept under benchmarks/.stores/ for later runs.)
At 1M the whole-store reads (load+fold, recall by folding) run once and the compact rows twice.
Percentiles are nearest-rank over the samples; the machine is what it is (2 cores here).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from corpus import generate_corpus  # noqa: E402

from ynm.index.schema import SCHEMA_VERSION  # noqa: E402
from ynm.model.fold import fold  # noqa: E402
from ynm.model.inputs import RecallQuery, RememberInput  # noqa: E402
from ynm.model.jsonl import dumps_record, parse_jsonl  # noqa: E402
from ynm.model.ranker import iso_to_ms, score  # noqa: E402
from ynm.model.shards import ShardKey  # noqa: E402
from ynm.model.text import tokenize  # noqa: E402
from ynm.service.ynm import Ynm  # noqa: E402
from ynm.store.gitnotes import GitNotesLog  # noqa: E402

GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}
# This table measures the full-text paths; benchmarks/hybrid.py measures vector search.
LEXICAL = {"YNM_EMBEDDER": "none"}


def pct(samples: list[float], p: float) -> float:
    """Nearest-rank percentile of ``samples`` (ms)."""
    s = sorted(samples)
    return s[min(len(s) - 1, max(0, round(p / 100 * len(s) + 0.5) - 1))]


def timed(fn, n: int) -> list[float]:
    out = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        out.append((time.perf_counter() - t) * 1000)
    return out


def seed_store(size: int, root: Path) -> tuple[Path, list[str], float]:
    """A project repository holding ``size`` memories; returns it, matching queries, seed s."""
    repo = root / f"store-{size}"
    marker = repo / ".seeded"
    corpus = generate_corpus(seed=1, count=size, level="distributed", namespaces=("common",))
    queries = [q.text for q in corpus.queries[:20]]
    if marker.exists():
        return repo, queries, float(marker.read_text())
    env = {**os.environ, **GIT_ENV, **LEXICAL}
    subprocess.run(["rm", "-rf", str(repo)], check=True)
    repo.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "root"], cwd=repo, check=True,
                   env=env)
    subprocess.run([sys.executable, "-m", "ynm.cli.__main__", "init", "--cwd", str(repo)],
                   check=True, env=env, capture_output=True)
    t = time.perf_counter()
    with Ynm.open(repo, env=env) as y:
        records = corpus.records  # imported 50,000 lines at a time, as ``ynm import`` reads
        y.import_chunks("".join(dumps_record(r) + "\n" for r in records[i: i + 50_000])
                        for i in range(0, len(records), 50_000))
    seconds = time.perf_counter() - t
    marker.write_text(f"{seconds:.3f}")
    return repo, queries, seconds


def recall_by_folding(log: GitNotesLog, text: str, now: int) -> list[str]:
    """Answer a query with no cache: read every shard, parse, fold, score by term frequency."""
    records = []
    for blob in log.read_all().values():
        records.extend(parse_jsonl(blob.data).records)
    memories = fold(records).memories
    tokens = tokenize(text)
    scored = []
    for m in memories.values():
        if m.tombstoned:
            continue
        hay = " ".join([m.current.summary or "", m.current.content or "", m.subject or "",
                        " ".join(m.tags)]).lower()
        tf = sum(hay.count(t) for t in tokens)
        if tf:
            scored.append((tf, m))
    best = max((tf for tf, _ in scored), default=1)
    ranked = sorted(
        scored,
        key=lambda p: score(relevance=p[0] / best, memory_type=p[1].type,
                            updated_at_ms=iso_to_ms(p[1].updated_at), importance=p[1].importance,
                            pinned=p[1].pinned, has_text=True, now_ms=now).total,
        reverse=True,
    )
    return [m.memory_id for _, m in ranked[:10]]


def cache_bytes_row(cache, size: int) -> tuple[str, str, str, str]:
    """The cache file's bytes (after a WAL checkpoint) against the raw JSONL bytes of the
    shard blobs it was built from (``shards.bytes``); the target is at most 1.5x."""
    cache.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    cache_bytes = Path(cache.path).stat().st_size
    raw = cache.conn.execute("SELECT sum(bytes) FROM shards").fetchone()[0] or 1
    note = (f"{cache_bytes / 1e6:.1f} MB = {cache_bytes / raw:.2f}x the raw JSONL "
            f"({raw / 1e6:.1f} MB)")
    return (f"cache bytes@{size}", "", "", note)


def reindex_rss_row(repo: Path, env: dict[str, str], size: int) -> tuple[str, str, str, str]:
    """Peak resident memory of a whole ``ynm reindex`` process and of the worker processes
    a large rebuild starts (ynm.index.workers): the largest sum of their resident sets,
    sampled every 50 ms from /proc (the children's ru_maxrss would be the largest child's
    peak, and counts what the parent had when the child was started); the process's own
    ru_maxrss beside it."""
    code = ("import resource, runpy, sys\n"
            f"sys.argv = ['ynm', 'reindex', '-q', '--mount', 'project', '--cwd', {str(repo)!r}]\n"
            "try:\n    runpy.run_module('ynm', run_name='__main__')\n"
            "except SystemExit:\n    pass\n"
            "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)\n")
    t = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    tree_kb, most = 0, 1
    while proc.poll() is None:
        pids = _process_tree(proc.pid)
        tree_kb, most = max((tree_kb, most), (sum(_rss_kb(p) for p in pids), len(pids)))
        time.sleep(0.05)
    err = proc.stderr.read() if proc.stderr else ""
    ms = (time.perf_counter() - t) * 1000
    if proc.returncode:
        raise RuntimeError(f"ynm reindex failed: {err}")
    peak_kb = int(err.strip().splitlines()[-1])
    tree = (f"; with its workers {tree_kb / 1024:.0f} MB at most ({most} processes)"
            if most > 1 else "; no workers")
    return (f"reindex peak RSS@{size}", f"{ms:.0f}", "",
            f"{peak_kb / 1024:.0f} MB peak RSS of the ynm reindex process{tree}")


def _process_tree(pid: int) -> list[int]:
    """``pid`` and its descendants, from /proc (just ``pid`` where /proc is missing)."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children") as f:
                    todo += [int(c) for c in f.read().split()]
        except OSError:
            pass
    return found


def _rss_kb(pid: int) -> int:
    """A process's resident set in KiB (0 when it is gone or /proc is missing)."""
    try:
        with open(f"/proc/{pid}/status") as f:
            return next((int(line.split()[1]) for line in f if line.startswith("VmRSS:")), 0)
    except OSError:
        return 0


# One step in a process of its own; prints {"ms", "hwm_kb", "cache_bytes"} on its last line.
CHILD = """
import json, os, sys, time
from pathlib import Path
from ynm.service.ynm import Ynm
repo, step = sys.argv[1], sys.argv[2]
answers = []
with Ynm.open(repo, env=dict(os.environ)) as y:
    mount = y.mount("project")
    t = time.perf_counter()
    if step == "compact":
        y.compact("project")
    elif step == "answers":
        from ynm.model.inputs import RecallQuery
        for text in json.loads(sys.argv[3]):
            answers.append([h["memoryId"] for h in y.recall(RecallQuery(text=text, limit=10))])
    else:
        if step == "cold-full":
            mount.cache.snapshot_source = None
        report = mount.cache.refresh(mount.log)
        assert (report.snapshot is not None) == (step == "cold-snapshot"), report
    ms = (time.perf_counter() - t) * 1000
    mount.cache.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    size = Path(mount.cache.path).stat().st_size
status = Path("/proc/self/status").read_text()
hwm = next(int(x.split()[1]) for x in status.splitlines() if x.startswith("VmHWM:"))
print(json.dumps({"ms": ms, "hwm_kb": hwm, "cache_bytes": size, "answers": answers}))
"""


def child_step(repo: Path, env: dict[str, str], step: str,
               queries: list[str] | None = None) -> dict[str, Any]:
    """Run one CHILD step (``compact``, ``cold-snapshot``, ``cold-full``, or ``answers``: the
    memory ids recall gives for each of ``queries``, limit 10) in a new process."""
    extra = [json.dumps(queries)] if queries is not None else []
    done = subprocess.run([sys.executable, "-c", CHILD, str(repo), step, *extra], env=env,
                          capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def append_to_largest(repo: Path, env: dict[str, str], n: int) -> None:
    """``n`` one-record appends into the largest shard of ``repo``'s project mount, each its
    own commit, as ``ynm remember`` makes them (background packing included)."""
    with Ynm.open(repo, env=env) as y:
        log = y.mount("project").log
        key = max(log.read_all().values(), key=lambda b: len(b.data)).tip.key
        for i in range(n):
            r = y._stamp({"op": "create", "type": key.type, "level": key.level,
                          "namespace": key.namespace, "content": f"append bench {i}",
                          "tags": [], "links": []})
            log.append({key: ((dumps_record(r) + "\n").encode(), 1)})
        if hasattr(log, "wait_for_packing"):
            log.wait_for_packing()


def compact_rows(repo: Path, root: Path, env: dict[str, str], size: int,
                 samples: int, queries: list[str],
                 appends: int = 1000) -> list[tuple[str, str, str, str]]:
    """``compact``, ``cold rebuild with snapshot``, ``cold rebuild without snapshot`` on a copy
    of the seeded store (module docstring), and whether recall answers ``queries`` the same
    (same ids, same order) before compact, after it, and from a cache built from its
    snapshot."""
    work = root / f"compact-{size}"
    subprocess.run(["rm", "-rf", str(work)], check=True)
    subprocess.run(["cp", "-a", str(repo), str(work)], check=True)
    cache_dir = work / ".ynm" / "index" / "ynm-cache"
    snapshot_ref = "refs/ynm/distributed/snapshots/cache-v"

    def drop_cache() -> None:
        for f in cache_dir.glob("project.sqlite*"):
            f.unlink()

    def drop_snapshot() -> None:
        for ref in git("for-each-ref", "--format=%(refname)", snapshot_ref[:-8],
                       cwd=work).split():
            git("update-ref", "-d", ref, cwd=work)

    child_step(work, env, "cold-full")  # a warm cache to compact from
    before = child_step(work, env, "answers", queries)["answers"]
    git("gc", "-q", "--prune=now", cwd=work)
    git_before = dir_bytes(work / ".git")
    n = max(2, min(samples, 5 if size < 1_000_000 else 2))
    runs: dict[str, list[dict[str, float]]] = {"compact": [], "cold-snapshot": [],
                                              "cold-full": []}
    for _ in range(n):
        drop_snapshot()
        runs["compact"].append(child_step(work, env, "compact"))
    after = child_step(work, env, "answers", queries)["answers"]
    git("gc", "-q", "--prune=now", cwd=work)
    git_after = dir_bytes(work / ".git")
    state = int(git("cat-file", "-s", f"{snapshot_ref}{SCHEMA_VERSION}:state.bin", cwd=work))
    from_snapshot: list[list[str]] = []
    for _ in range(n):
        for step in ("cold-snapshot", "cold-full"):
            drop_cache()
            runs[step].append(child_step(work, env, step))
            if step == "cold-snapshot" and not from_snapshot:
                from_snapshot = child_step(work, env, "answers", queries)["answers"]
    names = {"compact": "compact", "cold-snapshot": "cold rebuild with snapshot",
             "cold-full": "cold rebuild without snapshot"}
    rows = []
    for step, got in runs.items():
        ms = [r["ms"] for r in got]
        hwm = max(r["hwm_kb"] for r in got) / 1024
        note = f"peak RSS {hwm:.0f} MB (VmHWM of the process)"
        if step == "compact":
            note += (f"; state.bin {state / 1e6:.2f} MB; .git {git_before / 1e6:.1f} MB -> "
                     f"{git_after / 1e6:.1f} MB after gc")
        else:
            note += f"; cache {got[-1]['cache_bytes'] / 1e6:.1f} MB"
        rows.append((f"{names[step]}@{size}", f"{pct(ms, 50):.0f}", f"{pct(ms, 95):.0f}", note))
    full, snap = (pct([r["ms"] for r in runs[s]], 50) for s in ("cold-full", "cold-snapshot"))
    rows.append((f"cold rebuild speed-up@{size}", "", "",
                 f"{full / snap:.1f}x faster from the snapshot"))
    differ = [q for q, a, b, c in zip(queries, before, after, from_snapshot) if not a == b == c]
    hits = sum(len(a) for a in before)
    rows.append((f"recall answers after compact@{size}", "", "",
                 f"{len(queries)} queries, {hits} hits: " + (
                     "same ids in the same order before compact, after it and from its snapshot"
                     if not differ else f"DIFFER for {len(differ)}: {differ[:3]}")))
    if appends:
        # the store as a team's grows between compactions: appends to its largest shard, then
        # one compaction, all against the .git bytes before any of it
        append_to_largest(work, env, appends)
        child_step(work, env, "compact")
        git("gc", "-q", "--prune=now", cwd=work)
        grown = dir_bytes(work / ".git")
        rows.append((f".git after {appends} appends and one compact@{size}",
                     f"{grown / 1e6:.1f} MB", "",
                     (f"{grown / git_before:.2f}x the {git_before / 1e6:.1f} MB before "
                      "them (both after git gc)")))
    subprocess.run(["rm", "-rf", str(work)], check=True)
    return rows


def bench_size(size: int, samples: int, root: Path,
               appends: int = 1000) -> list[tuple[str, str, str, str]]:
    repo, queries, seed_s = seed_store(size, root)
    env = {**os.environ, **GIT_ENV, **LEXICAL, "YNM_HOME": str(root / "home")}
    rows: list[tuple[str, str, str, str]] = []

    def row(name: str, xs: list[float], note: str = "") -> None:
        rows.append((f"{name}@{size}", f"{pct(xs, 50):.1f}", f"{pct(xs, 95):.1f}", note))

    with Ynm.open(repo, env=env) as y:
        mount = y.mount("project")
        log = mount.log
        rows.append((f"bulk import@{size}", f"{seed_s * 1000:.0f}", "", "one-time seeding"))
        reindex = timed(lambda: mount.cache.rebuild(log), 2 if size < 100_000 else 1)
        row("full reindex", reindex, f"{mount.cache.counts()['memories']} memories")
        rows.append(cache_bytes_row(mount.cache, size))
        rows.append(reindex_rss_row(repo, env, size))
        slow = 3 if size < 1_000_000 else 1  # whole-store reads take about a minute at 1M
        row("load+fold", timed(lambda: fold(
            r for b in log.read_all().values() for r in parse_jsonl(b.data).records), slow))

        i = iter(range(10**9))
        row("remember", timed(lambda: y.remember(RememberInput(
            type="semantic", level="distributed", content=f"bench write {next(i)}")), samples),
            "append + cache update")
        other = GitNotesLog(repo, level="distributed", anchor=log.anchor)
        key = ShardKey("distributed", "common", "semantic", "2026-09")

        def store_append() -> None:
            r = y._stamp({"op": "create", "type": "semantic", "level": "distributed",
                          "namespace": "common", "content": f"raw {next(i)}", "tags": [],
                          "links": []})
            other.append({key: ((dumps_record(r) + "\n").encode(), 1)})

        row("store append", timed(store_append, samples), "one record, raw shard append")
        refresh = []
        folded = []
        for _ in range(max(5, samples // 2)):
            store_append()  # a foreign write: the cache has not seen it
            t = time.perf_counter()
            report = mount.cache.refresh(log)
            refresh.append((time.perf_counter() - t) * 1000)
            folded.append(report.memories_folded)
            assert report.shards_tail == 1 and report.shards_full == 0, report
        row("refresh after foreign append", refresh, "tail read, 1 memory folded")

        qs = [RecallQuery(text=q, limit=10) for q in queries]
        hits = [len(y.recall(q)) for q in qs]
        assert all(hits), "every benchmark query must match"
        k = iter(range(10**9))
        cache_recall = timed(lambda: y.recall(qs[next(k) % len(qs)]), max(samples * 2, 40))
        row("recall (cache)", cache_recall, f"{len(qs)} corpus queries, limit 10")
        now = int(time.time() * 1000)
        fold_recall = timed(lambda: recall_by_folding(log, queries[0], now), slow)
        row("recall (fold, no cache)", fold_recall,
            f"{pct(fold_recall, 50) / pct(cache_recall, 50):.0f}x slower than the cache")
        rows.extend(long_query_rows(y, size, samples))
    rows.extend(compact_rows(repo, root, env, size, samples, queries, appends))
    rows.extend(append_rows(repo, env, size, samples, appends))
    rows.extend(serve_writers_rows(repo, env, size))
    if size >= 100_000:
        rows.extend(refresh_after_sync(repo, root, env, size, reindex))
    rows.append(recall_process_row(repo, env, queries, size))
    return rows


def recall_process_row(repo: Path, env: dict[str, str], queries: list[str], size: int,
                       samples: int = 12) -> tuple[str, str, str, str]:
    """The whole ``ynm recall "<query>"`` command as a new process, run as an installed ynm
    runs: the child's environment drops ``PYTHONDONTWRITEBYTECODE``, so its modules' bytecode
    is written once and read after (with it set, every run compiled ynm's modules again,
    ~230 ms that no installed ynm pays), and one warm-up run comes first. The samples cycle
    through four corpus queries."""
    ynm = str(Path(sys.executable).with_name("ynm"))
    child_env = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
    asked = queries[1:5]
    i = iter(range(10**9))

    def one() -> None:
        subprocess.run([ynm, "recall", asked[next(i) % len(asked)], "--cwd", str(repo)],
                       env=child_env, check=True, capture_output=True)

    one()  # warm-up: writes the bytecode, reads the cache file into the page cache
    xs = timed(one, samples)
    note = f"whole command, new process, bytecode compiled, one warm-up run; {len(asked)} queries"
    return (f"ynm recall process@{size}", f"{pct(xs, 50):.1f}", f"{pct(xs, 95):.1f}", note)


def dir_bytes(path: Path) -> int:
    """Bytes on disk under ``path`` (``du -sb``)."""
    out = subprocess.run(["du", "-sb", str(path)], check=True, capture_output=True, text=True)
    return int(out.stdout.split()[0])


def append_rows(repo: Path, env: dict[str, str], size: int, samples: int,
                appends: int) -> list[tuple[str, str, str, str]]:
    """Append to the largest shard against ``git hash-object`` of its blob and an append to a
    new shard (same run, alternating); then ``.git`` bytes before and after ``appends``
    appends into the largest shard, background packing included."""
    with Ynm.open(repo, env=env) as y:
        log = y.mount("project").log
        blobs = log.read_all()
        biggest = max(blobs.values(), key=lambda b: len(b.data))
        key = biggest.tip.key
        blob_file = repo / ".git" / "bench-largest-blob"
        blob_file.write_bytes(biggest.data)
        i = iter(range(10**9))

        def record(k: ShardKey) -> bytes:
            r = y._stamp({"op": "create", "type": k.type, "level": k.level,
                          "namespace": k.namespace, "content": f"append bench {next(i)}",
                          "tags": [], "links": []})
            return (dumps_record(r) + "\n").encode()

        log.append({key: (record(key), 1)})  # warm: the process has seen this shard
        large: list[float] = []
        empty: list[float] = []
        hashing: list[float] = []
        taken = {tip.key for tip in log.tips().values()}
        spare = (ShardKey(key.level, key.namespace, key.type, f"{year}-01")
                 for year in range(2100, 9999))
        for _ in range(samples):
            fresh = next(k for k in spare if k not in taken)
            large += timed(lambda: log.append({key: (record(key), 1)}), 1)
            empty += timed(lambda f=fresh: log.append({f: (record(f), 1)}), 1)
            hashing += timed(lambda: subprocess.run(["git", "hash-object", str(blob_file)],
                                                    check=True, capture_output=True), 1)
        blob_file.unlink()
        above = pct(large, 50) - pct(empty, 50)
        rows = [
            (f"append to the largest shard@{size}", f"{pct(large, 50):.1f}",
             f"{pct(large, 95):.1f}", f"{len(biggest.data) / 1e6:.1f} MB shard {key.shard_id}"),
            (f"append to an empty shard@{size}", f"{pct(empty, 50):.1f}",
             f"{pct(empty, 95):.1f}", "a new shard each time"),
            (f"git hash-object of the largest shard's blob@{size}", f"{pct(hashing, 50):.1f}",
             f"{pct(hashing, 95):.1f}",
             f"append above empty: {above:.1f} ms = {above / pct(hashing, 50):.2f}x hash-object"),
        ]
        if appends:
            before = dir_bytes(repo / ".git")
            t = time.perf_counter()
            for _ in range(appends):
                log.append({key: (record(key), 1)})
            seconds = time.perf_counter() - t
            if hasattr(log, "wait_for_packing"):  # older trees did not pack
                log.wait_for_packing()
            after = dir_bytes(repo / ".git")
            note = (f"before {before / 1e6:.0f} MB ({after / before:.2f}x), background packing "
                    f"still behind; {appends / seconds:.0f} appends/s")
            rows.append((f".git bytes after {appends} appends@{size}", f"{after / 1e6:.0f} MB",
                         "", note))
            if hasattr(log, "pack_loose_objects"):
                log.pack_loose_objects()
                packed = dir_bytes(repo / ".git")
                rows.append((f".git bytes after {appends} appends and one repack@{size}",
                             f"{packed / 1e6:.0f} MB", "",
                             f"{packed / before:.2f}x the {before / 1e6:.0f} MB before"))
    return rows


def serve_writers_rows(repo: Path, env: dict[str, str], size: int, writers: int = 8,
                       per_writer: int = 50) -> list[tuple[str, str, str, str]]:
    """``writers`` concurrent tasks each sending ``per_writer`` remembers through ynm serve's
    MemoryService (its one worker thread and write queue), after one warm-up remember into the
    same shard; remembers per second, and every record read back from git exactly once, in each
    writer's order."""
    import asyncio

    from ynm.server.app import MemoryService

    with Ynm.open(repo, env=env) as y:
        log = y.mount("project").log
        biggest = max(log.read_all().values(), key=lambda b: len(b.data))
    key = biggest.tip.key
    tag = f"w{time.time_ns()}"
    from ynm.server.tools import TOOL_SPECS

    grouped = getattr(TOOL_SPECS["memory_remember"], "run_many", None)
    service = MemoryService(repo, personal=False, env=env)
    service.open()

    async def remember(content: str) -> None:
        inp = RememberInput(type=key.type, level="distributed", namespace=key.namespace,
                            content=content)
        if grouped is not None:  # the MCP tool's path: group commit of queued remembers
            await service.call_grouped(grouped, inp)
        else:
            await service.call(lambda ynm: ynm.remember(inp), write=True)

    async def writer(w: int) -> None:
        for n in range(per_writer):
            await remember(f"{tag} writer {w} item {n}")

    async def everyone() -> float:
        # one remember before the clock starts: the service's first write into a shard whose
        # blob git has packed reads and rewrites that blob whole (later appends add to its
        # loose object, ynm.store.objects), a one-time cost that is not the sustained rate
        await remember(f"{tag} warm-up")
        t = time.perf_counter()
        await asyncio.gather(*(writer(w) for w in range(writers)))
        return time.perf_counter() - t

    try:
        seconds = asyncio.run(everyone())
    finally:
        service.close()
    with Ynm.open(repo, env=env) as y:
        records = [r for b in y.mount("project").log.read_all().values()
                   for r in parse_jsonl(b.data).records
                   if r.content and r.content.startswith(f"{tag} writer ")]
    seen = [r.content for r in records]
    assert len(seen) == len(set(seen)) == writers * per_writer, "every record exactly once"
    for w in range(writers):
        mine = [c for c in seen if c.startswith(f"{tag} writer {w} ")]
        assert mine == [f"{tag} writer {w} item {n}" for n in range(per_writer)], "order kept"
    total = writers * per_writer
    note = (f"{total / seconds:.0f} remembers/s after one warm-up remember; "
            f"{total} records each landed once")
    return [(f"{writers} writers via ynm serve@{size}", f"{seconds * 1000 / total:.1f}", "", note)]


def long_paragraph(y: Ynm, chars: int = 2000) -> str:
    """``chars`` characters (cut at a word) of the store's first memories' content, joined."""
    conn = y.mount("project").fresh_cache().conn
    text = ""
    for (content,) in conn.execute("SELECT content FROM memories ORDER BY rowid LIMIT 200"):
        text += content + " "
        if len(text) > chars:
            break
    return text[:chars].rsplit(" ", 1)[0]


def long_query_rows(y: Ynm, size: int, samples: int) -> list[tuple[str, str, str, str]]:
    """Recall of a 5-word query and of a 2,000-character paragraph, timed alternately."""
    paragraph = long_paragraph(y)
    five = " ".join(paragraph.split()[:5])
    short_q, long_q = RecallQuery(text=five, limit=10), RecallQuery(text=paragraph, limit=10)
    y.recall(short_q), y.recall(long_q)  # warm both
    short_ms: list[float] = []
    long_ms: list[float] = []
    for _ in range(max(samples, 10)):
        short_ms += timed(lambda: y.recall(short_q), 1)
        long_ms += timed(lambda: y.recall(long_q), 1)
    ratio = pct(long_ms, 50) / pct(short_ms, 50)
    return [(f"recall, 5-word query@{size}", f"{pct(short_ms, 50):.1f}",
             f"{pct(short_ms, 95):.1f}", f"{five!r}"),
            (f"recall, 2,000-character query@{size}", f"{pct(long_ms, 50):.1f}",
             f"{pct(long_ms, 95):.1f}",
             f"{len(paragraph)} characters; {ratio:.1f}x the 5-word query")]


def git(*args: str, cwd: Path | None = None) -> str:
    env = {**os.environ, **GIT_ENV}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def refresh_after_sync(repo: Path, root: Path, env: dict[str, str], size: int,
                       reindex: list[float]) -> list[tuple[str, str, str, str]]:
    """Another clone adds 100 records to the shared shards; we sync (fast-forward) and time
    the cache refresh that follows, against the full reindex. The remote is a plain git
    server: its new blobs stay loose, as a push of a few objects leaves them."""
    origin = root / f"origin-{size}.git"
    subprocess.run(["rm", "-rf", str(origin)], check=True)
    git("clone", "-q", "--mirror", str(repo), str(origin))
    with Ynm.open(repo, env=env) as y:
        mount = y.mount("project")
        subprocess.run(["git", "-C", str(repo), "remote", "remove", "origin"],
                       capture_output=True)
        git("-C", str(repo), "remote", "add", "origin", str(origin))
        mount.cache.refresh(mount.log)
        theirs = GitNotesLog(origin, level="distributed", anchor=mount.log.anchor)
        theirs.pack_after_bytes = None  # no ynm packing on the server, nor during the timing
        extra = generate_corpus(seed=9, count=100, level="distributed", namespaces=("common",))
        groups: dict[ShardKey, list] = {}
        for r in extra.records:
            groups.setdefault(ShardKey(r.level, r.namespace, r.type, r.bucket), []).append(r)
        theirs.append({k: ("".join(dumps_record(r) + "\n" for r in rs).encode(), len(rs))
                       for k, rs in groups.items()})
        # The store-level sync alone: Ynm.sync would refresh the cache inside the sync (to
        # re-apply purges), and the refresh is what this row measures.
        from ynm.store.sync import sync_log

        t = time.perf_counter()
        result = {"project": sync_log(mount.log, "origin", push=False).to_obj()}
        sync_ms = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        report = mount.cache.refresh(mount.log)
        refresh_ms = (time.perf_counter() - t) * 1000
    share = refresh_ms / pct(reindex, 50) * 100
    return [
        (f"sync pull of 100 records@{size}", f"{sync_ms:.1f}", "",
         f"{len(result['project']['fastForwarded'])} shards fast-forwarded"),
        (f"refresh after that sync@{size}", f"{refresh_ms:.1f}", "",
         f"{report.shards_tail} tail reads, {report.memories_folded} memories folded; "
         f"{share:.2f}% of a full reindex"),
    ]


def bench_sync(root: Path, samples: int) -> list[tuple[str, str, str, str]]:
    """One new record, then a full sync against a local bare remote holding 1k memories."""
    base = root / "sync-1000"
    subprocess.run(["rm", "-rf", str(base)], check=True)
    origin, clone = base / "origin.git", base / "clone"
    git("init", "-q", "--bare", "-b", "main", str(origin))
    git("clone", "-q", str(origin), str(clone))
    git("commit", "-q", "--allow-empty", "-m", "root", cwd=clone)
    git("push", "-q", "origin", "HEAD:main", cwd=clone)
    env = {**os.environ, **GIT_ENV, **LEXICAL, "YNM_HOME": str(base / "home")}
    subprocess.run([sys.executable, "-m", "ynm", "init", "--no-hooks", "--cwd", str(clone)],
                   check=True, env=env, capture_output=True)
    corpus = generate_corpus(seed=3, count=1000, level="distributed", namespaces=("common",))
    with Ynm.open(clone, env=env) as y:
        y.import_jsonl("".join(dumps_record(r) + "\n" for r in corpus.records))
        y.sync()
        i = iter(range(10**9))

        def one() -> None:
            y.remember(RememberInput(type="semantic", level="distributed",
                                     content=f"sync bench {next(i)}"))
            result = y.sync()
            assert result["project"]["pushed"], result

        xs = timed(one, samples)
    return [("sync@1000", f"{pct(xs, 50):.1f}", f"{pct(xs, 95):.1f}",
             "remember + fetch, merge, push to a local bare remote")]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,100000")
    parser.add_argument("--samples", type=int, default=20)
    parser.add_argument("--dir", default=str(HERE / ".stores"))
    parser.add_argument("--appends", type=int, default=1000,
                        help="appends into the largest shard for the .git bytes row")
    parser.add_argument("--compact-only", action="store_true",
                        help="only the compact and cold rebuild rows")
    args = parser.parse_args()
    root = Path(args.dir)
    root.mkdir(parents=True, exist_ok=True)
    rows = []
    if args.compact_only:
        env = {**os.environ, **GIT_ENV, **LEXICAL, "YNM_HOME": str(root / "home")}
        for size in (int(s) for s in args.sizes.split(",")):
            print(f"seeding and compacting {size} memories ...", file=sys.stderr)
            repo, queries, _ = seed_store(size, root)
            rows.extend(compact_rows(repo, root, env, size, args.samples, queries,
                                     args.appends))
        print("| key | p50 ms | p95 ms | note |\n|---|---:|---:|---|")
        for r in rows:
            print(f"| {' | '.join(r)} |")
        return
    for size in (int(s) for s in args.sizes.split(",")):
        print(f"seeding and measuring {size} memories ...", file=sys.stderr)
        rows.extend(bench_size(size, args.samples, root, args.appends))
    print("measuring sync ...", file=sys.stderr)
    rows.extend(bench_sync(root, max(5, args.samples // 2)))
    print("| key | p50 ms | p95 ms | note |\n|---|---:|---:|---|")
    for r in rows:
        print(f"| {' | '.join(r)} |")


if __name__ == "__main__":
    main()
