"""The example team store (examples/team-store.jsonl) is valid, complete and reproducible."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from ynm.model.fold import fold
from ynm.model.ids import ulid_time
from ynm.model.jsonl import parse_jsonl, serialize_records
from ynm.model.records import Record

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"
STORE = EXAMPLES / "team-store.jsonl"
TYPES = {"working", "episodic", "semantic", "procedural", "reflective", "reference"}


@pytest.fixture(scope="module")
def text() -> str:
    return STORE.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def records(text) -> list[Record]:
    return parse_jsonl(text).records


def _ms(iso: str) -> int:
    from datetime import datetime

    seconds = datetime.fromisoformat(iso[:19] + "+00:00").timestamp()
    return int(seconds) * 1000 + int(iso[20:23])


def test_parses_without_problems(text, records):
    result = parse_jsonl(text)
    assert result.problems == []
    assert len(records) == text.count("\n") >= 150  # no duplicate ids dropped


def test_written_in_the_on_disk_format(text, records):
    assert text.endswith("\n")
    assert serialize_records(records) == text


def test_all_six_types(records):
    assert {r.type for r in records} == TYPES
    assert {r.type for r in records if r.op == "create"} == TYPES


def test_every_record_is_distributed(records):
    assert {r.level for r in records} == {"distributed"}


def test_history_ops(records):
    ops = Counter(r.op for r in records)
    assert ops["supersede"] >= 3
    assert ops["annotate"] >= 3
    assert ops["tombstone"] >= 2
    for r in records:
        if r.op == "supersede":
            assert r.memory_id != r.id
            assert {"rel": "supersedes", "to": r.memory_id} in [
                {"rel": link.rel, "to": link.to} for link in r.links
            ]
        if r.op == "tombstone":
            assert r.reason


def test_working_memory_lives_in_sessions(records):
    working = [r for r in records if r.type == "working"]
    assert working
    for r in working:
        assert r.namespace.startswith("session/")
        if r.op == "create":
            assert r.ttl
    assert all(r.type == "working" for r in records if r.namespace.startswith("session/"))


def test_folds_without_orphans(records):
    result = fold(records)
    assert result.orphans == []
    memories = list(result.memories.values())
    assert sum(m.pinned and not m.tombstoned for m in memories) >= 3
    assert sum(m.versions > 1 and m.current.op == "supersede" for m in memories) >= 3
    assert any(m.tombstoned for m in memories)
    assert any(m.current.data is not None and m.current.data_schema for m in memories)


def test_links_point_at_known_memories(records):
    memory_ids = {r.memory_id for r in records}
    rels = Counter()
    for r in records:
        for link in r.links:
            assert link.to in memory_ids
            rels[link.rel] += 1
    assert {"supersedes", "derives-from", "supports", "about"} <= set(rels)


def test_ids_match_recorded_at_and_history_is_chronological(records):
    by_memory: dict[str, list[Record]] = defaultdict(list)
    for r in records:
        assert len(r.recorded_at) == 24 and r.recorded_at.endswith("Z")
        assert ulid_time(r.id) == _ms(r.recorded_at)
        assert "2026-08" <= r.recorded_at[:7] <= "2026-11"
        by_memory[r.memory_id].append(r)
    for group in by_memory.values():
        ordered = sorted(group, key=lambda r: r.recorded_at)
        assert ordered[0].op == "create" and ordered[0].id == ordered[0].memory_id
        assert len({r.recorded_at for r in group}) == len(group)


def test_questions_file():
    questions = [q for q in (EXAMPLES / "questions.txt").read_text().splitlines() if q.strip()]
    assert 5 <= len(questions) <= 10


def test_generator_is_deterministic_and_file_is_current():
    script = EXAMPLES / "make_team_store.py"
    done = subprocess.run([sys.executable, str(script), "--check"], capture_output=True,
                          text=True, check=False)
    assert done.returncode == 0, done.stderr
