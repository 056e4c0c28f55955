"""Retrieval quality of ``Ynm.recall``: recall@1, recall@5, recall@10 and MRR on two data sets.

- ``corpus``: the seeded synthetic corpus of benchmarks/corpus.py (seed 11, 2,000 memories,
  distributed level, namespace ``common``) and its generated queries, as the reference's tier-1
  retrieval suite (reference/benchmarks.md §1, §3.1: 0.88 / 0.98 / 1.0 / 0.9217 lexically).
- ``paraphrase``: the pairs of benchmarks/paraphrase.py hidden among its distractors; each
  question's one relevant memory is its pair's. Question and memory share no content word, so
  full-text search should score near zero and vector search is what lifts it.

recall@k is the share of queries with any relevant memory in the top k; MRR the mean of 1/rank
of the first relevant hit in the top 10 (0 if none). ``no answer`` (a second table) is the share
of the 50 off-topic questions of benchmarks/offtopic.py (cooking, sport, geography, nonsense,
...) that get no hit at all from each data set's store, as they should, and the same for its 20
off-topic questions in eleven other languages. Each data set gets a
real store: a fresh git repository, ``ynm init`` in a subprocess, a private ``YNM_HOME``,
records imported with ``Ynm.import_jsonl``; recall time is fixed at 2026-10-01T00:00:00Z (the
reference's clock).

Modes: ``fts`` sets ``YNM_EMBEDDER=none`` (full text only); ``hybrid`` sets
``YNM_EMBEDDER=auto``, reindexes after the import and refuses to report numbers unless the
cache holds vectors (so a store that silently fell back to full text is not mistaken for
hybrid).

- ``rare`` (not part of ``all``): the 100k store of benchmarks/bench.py (seeded there once and
  cached under benchmarks/.stores/; hybrid mode embeds it on first use, which takes long). 20
  memories drawn at random (seed 5); the query is each one's three rarest words (fewest
  memories holding them, through the store's own full-text index) in shuffled order. The
  generator's vocabulary is small, so no memory is the only one holding its three rarest
  words: the relevant memories are all that hold the three (a target is drawn only when at
  most 25 do, while thousands hold one or two of them). A memory holding two of the words side
  by side must not outrank those holding all three: targets 19/20 in the top 5, 15/20 at 1.
  Full text finds 20/20 at rank 1 with and without the word share, and so does hybrid recall
  (measured once the 100k store's vectors were embedded, which takes half an hour on two cores
  and is kept in its cache): in this generator no other
  memory holds two of a target's rare words side by side where the target holds them apart,
  so the set guards the rule at scale, and tests (tests/service/test_ynm.py,
  tests/index/test_vectors.py) build the case that broke it.

Usage: python benchmarks/quality.py [--mode fts|hybrid|both] [--dataset corpus|paraphrase|rare|all]
"""

from __future__ import annotations

import argparse
import calendar
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE.parent) not in sys.path:  # benchmarks/ is not an installed package
    sys.path.insert(0, str(HERE.parent))
if str(HERE) not in sys.path:  # bench.py imports corpus.py as a top-level module
    sys.path.insert(0, str(HERE))

from benchmarks.corpus import generate_corpus  # noqa: E402
from benchmarks.offtopic import OFF_TOPIC, OFF_TOPIC_OTHER_LANGUAGES  # noqa: E402
from benchmarks.paraphrase import PAIRS, distractors  # noqa: E402

from ynm.model.ids import iso_ms, new_ulid  # noqa: E402
from ynm.model.inputs import RecallQuery  # noqa: E402
from ynm.model.jsonl import dumps_obj, serialize_records  # noqa: E402
from ynm.service.ynm import Ynm  # noqa: E402

MODES = ("fts", "hybrid")
DATASETS = ("corpus", "paraphrase")
NOW_MS = calendar.timegm((2026, 10, 1, 0, 0, 0)) * 1000
PARAPHRASE_DAY_MS = calendar.timegm((2026, 9, 30, 0, 0, 0)) * 1000
EMBEDDER = {"fts": "none", "hybrid": "auto"}
GIT_ENV = {"GIT_AUTHOR_NAME": "bench", "GIT_AUTHOR_EMAIL": "bench@example.com",
           "GIT_COMMITTER_NAME": "bench", "GIT_COMMITTER_EMAIL": "bench@example.com"}


class HybridUnavailable(RuntimeError):
    """``--mode hybrid`` asked for, but the store has no vectors to search."""


# --- data sets --------------------------------------------------------------------------------


def corpus_dataset() -> tuple[str, list[tuple[str, set[str]]]]:
    """JSONL of the seed-11 corpus and its ``(query, relevant ids)`` list."""
    corpus = generate_corpus(seed=11, count=2000, level="distributed", namespaces=("common",))
    return serialize_records(corpus.records), [(q.text, set(q.relevant)) for q in corpus.queries]


def _create(content: str, ms: int) -> str:
    id_ = new_ulid(ms)
    return dumps_obj({
        "v": 1, "id": id_, "memoryId": id_, "op": "create", "type": "semantic",
        "level": "distributed", "namespace": "common", "tags": [], "content": content,
        "summary": content.split("\n", 1)[0], "importance": 0.5, "confidence": 1,
        "recordedAt": iso_ms(ms), "provenance": {"actor": "bench"}, "links": [],
    })


def paraphrase_dataset() -> tuple[str, list[tuple[str, set[str]]]]:
    """JSONL of the pair memories shuffled among 1,000 distractors (one day, one ms apart, in
    a seeded order) and the ``(question, {its memory id})`` list."""
    import json
    import random

    texts = [m for m, _ in PAIRS] + distractors(1000, seed=0)
    order = list(range(len(texts)))
    random.Random(7).shuffle(order)
    lines: list[str] = []
    ids: dict[int, str] = {}
    start = PARAPHRASE_DAY_MS + 9 * 3_600_000  # 09:00, all well inside the day
    for slot, index in enumerate(order):
        line = _create(texts[index], start + slot * 1000)
        ids[index] = json.loads(line)["memoryId"]
        lines.append(line)
    queries = [(q, {ids[i]}) for i, (_, q) in enumerate(PAIRS)]
    return "".join(line + "\n" for line in lines), queries


# --- store ------------------------------------------------------------------------------------


def _env(home: Path, mode: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("YNM_")}
    env.update(GIT_ENV)
    env["YNM_HOME"] = str(home)
    env["YNM_EMBEDDER"] = EMBEDDER[mode]
    return env


@contextmanager
def open_store(jsonl: str, mode: str, now_ms: int | None = None) -> Iterator[Ynm]:
    """A fresh project store holding ``jsonl``, opened for ``mode`` with recall's clock at
    ``now_ms`` (default: the benchmark's clock, NOW_MS); removed afterwards."""
    clock = NOW_MS if now_ms is None else now_ms
    with tempfile.TemporaryDirectory(prefix="ynm-quality-") as tmp:
        repo, home = Path(tmp) / "repo", Path(tmp) / "home"
        repo.mkdir()
        home.mkdir()
        env = _env(home, mode)
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True, env=env)
        subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "root"], cwd=repo,
                       check=True, env=env)
        init = subprocess.run([sys.executable, "-m", "ynm", "init", "--cwd", str(repo)],
                              env=env, capture_output=True, text=True)
        if init.returncode:
            raise RuntimeError(f"ynm init failed ({init.returncode}): {init.stderr.strip()}")
        saved = os.environ.get("YNM_EMBEDDER")
        os.environ["YNM_EMBEDDER"] = EMBEDDER[mode]  # for code that reads the process env
        try:
            y = Ynm.open(repo, env=env, now_ms=lambda: clock)
            try:
                result = y.import_jsonl(jsonl)
                if result["problems"]:
                    raise RuntimeError(f"import problems: {result['problems'][:3]}")
                if mode == "hybrid":
                    y.reindex()
                    _require_vectors(y)
                yield y
            finally:
                y.close()
        finally:
            if saved is None:
                os.environ.pop("YNM_EMBEDDER", None)
            else:
                os.environ["YNM_EMBEDDER"] = saved


def _require_vectors(y: Ynm) -> None:
    """Raise :class:`HybridUnavailable` unless some mount's cache has a non-empty vector or
    embedding table (the design's ``vec0`` table and embedding store)."""
    seen = []
    for mount in y.mounts:
        conn = mount.fresh_cache().conn
        names = [row[0] for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND "
            "(name LIKE '%vec%' OR name LIKE '%embed%' OR sql LIKE '%vec0%')")]
        for name in names:
            try:
                n = conn.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0]
            except Exception as exc:  # noqa: BLE001 - e.g. vec0 without the extension loaded
                seen.append(f"{mount.id}.{name}: unreadable ({exc})")
                continue
            if n:
                return
            seen.append(f"{mount.id}.{name}: empty")
    detail = "; ".join(seen) if seen else "no vector or embedding table in any cache"
    raise HybridUnavailable(
        "hybrid recall is not available in this ynm build (YNM_EMBEDDER=auto, after reindex): "
        f"{detail}. Is the vector feature merged and an embedder installed (pip install "
        "'ynm[vector]' plus a sentence-transformers model)?"
    )


# --- metrics ----------------------------------------------------------------------------------


def metrics(ranked: Sequence[Sequence[str]], relevant: Sequence[set[str]]) -> dict[str, float]:
    """recall@1/5/10 and MRR (top 10) of ranked id lists against relevant id sets."""
    n = len(ranked)
    firsts = []
    for ids, rel in zip(ranked, relevant, strict=True):
        first = next((i + 1 for i, mid in enumerate(ids[:10]) if mid in rel), None)
        firsts.append(first)
    out = {f"recall@{k}": sum(1 for f in firsts if f and f <= k) / n for k in (1, 5, 10)}
    out["mrr"] = sum(1 / f for f in firsts if f) / n
    out["queries"] = n
    return out


def no_answer(y: Ynm, questions: Sequence[str] = OFF_TOPIC) -> float:
    """The share of ``questions`` (by default the off-topic ones) that ``y`` recalls nothing
    for: 1.0 when none of them gets a hit."""
    return sum(1 for q in questions if not y.recall(RecallQuery(text=q, limit=10))) / len(
        questions)


def evaluate_dataset(name: str, mode: str = "fts") -> dict[str, float]:
    """Metrics of one data set (``corpus`` or ``paraphrase``) in ``mode``, with ``no answer``:
    :func:`no_answer` for the off-topic questions on the same store."""
    if mode not in MODES:
        raise ValueError(f"mode must be one of {MODES}, not {mode!r}")
    jsonl, queries = corpus_dataset() if name == "corpus" else paraphrase_dataset()
    with open_store(jsonl, mode) as y:
        ranked = [[h["memoryId"] for h in y.recall(RecallQuery(text=q, limit=10))]
                  for q, _ in queries]
        silent = no_answer(y)
        silent_other = no_answer(y, OFF_TOPIC_OTHER_LANGUAGES)
    return {**metrics(ranked, [rel for _, rel in queries]), "no answer": silent,
            "no answer, other languages": silent_other}


RARE_SIZE = 100_000
RARE_TARGETS = 20
RARE_MAX_HOLDERS = 25


def rare_words_queries(y: Ynm, count: int = RARE_TARGETS, seed: int = 5
                       ) -> list[tuple[str, set[str]]]:
    """``(query, relevant ids)`` for ``count`` memories of ``y``'s project store drawn at
    random (``seed``): the query is the target's three rarest words (fewest memories holding
    each, counted by the store's FTS5 index; ties by the word) in shuffled order, the relevant
    ids are the live memories holding all three. Memories with fewer than three words, or whose
    three words more than :data:`RARE_MAX_HOLDERS` memories hold, are passed over."""
    import random

    from ynm.index.search import phrase_hits
    from ynm.model.text import tokenize

    conn = y.mount("project").fresh_cache().conn
    rows = conn.execute("SELECT memory_id, content FROM memories WHERE tombstoned = 0 "
                        "ORDER BY memory_id").fetchall()
    rng = random.Random(seed)
    df: dict[str, int] = {}

    def held_by(word: str) -> int:
        if word not in df:
            df[word] = phrase_hits(conn, f'"{word}"')
        return df[word]

    out: list[tuple[str, set[str]]] = []
    for index in rng.sample(range(len(rows)), len(rows)):
        memory_id, content = rows[index]
        words = list(dict.fromkeys(tokenize(content or "")))
        if len(words) < 3:
            continue
        rare = sorted(words, key=lambda w: (held_by(w), w))[:3]
        every = " AND ".join(f'"{w}"' for w in rare)
        holders = {r[0] for r in conn.execute(
            "SELECT m.memory_id FROM fts JOIN memories m ON m.rowid = fts.rowid "
            "WHERE fts MATCH ? AND m.tombstoned = 0 LIMIT ?", (every, RARE_MAX_HOLDERS + 1))}
        if len(holders) > RARE_MAX_HOLDERS:
            continue
        rng.shuffle(rare)
        out.append((" ".join(rare), holders | {memory_id}))
        if len(out) == count:
            break
    return out


def evaluate_rare(mode: str = "fts", size: int = RARE_SIZE) -> dict[str, float]:
    """Metrics of the rare-words set (see the module's docstring) on the ``size`` store of
    benchmarks/bench.py, seeded if not cached, in ``mode``.

    Raises:
        HybridUnavailable: ``mode="hybrid"`` and the store holds no vectors.
    """
    from bench import GIT_ENV as BENCH_GIT_ENV, seed_store

    root = HERE / ".stores"
    repo, _, _ = seed_store(size, root)
    env = {**_env(root / "home", mode), **BENCH_GIT_ENV}
    saved = os.environ.get("YNM_EMBEDDER")
    os.environ["YNM_EMBEDDER"] = EMBEDDER[mode]
    try:
        with Ynm.open(repo, env=env) as y:
            if mode == "hybrid":
                y.recall(RecallQuery(text="warm up", limit=1))  # embeds what is missing
                _require_vectors(y)
            queries = rare_words_queries(y)
            ranked = [[h["memoryId"] for h in y.recall(RecallQuery(text=q, limit=10))]
                      for q, _ in queries]
    finally:
        if saved is None:
            os.environ.pop("YNM_EMBEDDER", None)
        else:
            os.environ["YNM_EMBEDDER"] = saved
    return metrics(ranked, [rel for _, rel in queries])


def evaluate(mode: str = "fts", datasets: Sequence[str] = DATASETS) -> dict[str, dict[str, float]]:
    """``{data set: {"recall@1", "recall@5", "recall@10", "mrr", "queries", "no answer"}}``
    for ``mode``.

    Raises:
        HybridUnavailable: ``mode="hybrid"`` and the store holds no vectors.
    """
    return {name: evaluate_rare(mode) if name == "rare" else evaluate_dataset(name, mode)
            for name in datasets}


def table(results: dict[str, dict[str, dict[str, float]]]) -> str:
    """Markdown table of ``{mode: evaluate(mode)}``."""
    lines = ["| data set | mode | recall@1 | recall@5 | recall@10 | MRR | queries |",
             "|---|---|---|---|---|---|---|"]
    for mode, by_set in results.items():
        for name, m in by_set.items():
            lines.append(f"| {name} | {mode} | {m['recall@1']:.3f} | {m['recall@5']:.3f} | "
                         f"{m['recall@10']:.3f} | {m['mrr']:.4f} | {m['queries']} |")
    if not any("no answer" in m for by_set in results.values() for m in by_set.values()):
        return "\n".join(lines)
    lines += ["", "| off-topic questions on the store of | mode | no answer | questions |",
              "|---|---|---|---|"]
    for mode, by_set in results.items():
        for name, m in by_set.items():
            if "no answer" not in m:  # the rare-words set asks no off-topic questions
                continue
            lines.append(f"| {name} | {mode} | {m['no answer']:.2f} | {len(OFF_TOPIC)} |")
            if "no answer, other languages" in m:
                lines.append(f"| {name}, questions in 11 other languages | {mode} | "
                             f"{m['no answer, other languages']:.2f} | "
                             f"{len(OFF_TOPIC_OTHER_LANGUAGES)} |")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=(*MODES, "both"), default="fts")
    parser.add_argument("--dataset", choices=(*DATASETS, "rare", "all"), default="all")
    args = parser.parse_args(argv)
    modes = MODES if args.mode == "both" else (args.mode,)
    datasets = DATASETS if args.dataset == "all" else (args.dataset,)
    results = {}
    t = time.perf_counter()
    for mode in modes:
        try:
            results[mode] = evaluate(mode, datasets)
        except HybridUnavailable as exc:
            print(f"error: {exc}", file=sys.stderr)
            if results:
                print(table(results))
            return 2
    print(table(results))
    print(f"\n({time.perf_counter() - t:.1f}s; recall clock {iso_ms(NOW_MS)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
