"""Fixtures for the dream tests: a Ynm on a personal store in a temp home, records with known
times relative to the wall clock, fake judges and writers, and every ref tip of the store."""

from __future__ import annotations

import itertools
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.embeddings_server import server  # noqa: F401 (a fixture)
from ynm.dream.seams import Answer, JudgeLimits, Judgment, ModelUnavailable, Usage, Written
from ynm.model.ids import iso_ms, new_ulid
from ynm.service.ynm import Ynm

DAY = 86_400_000
NOW = time.time_ns() // 1_000_000
_seq = itertools.count(1)


def rec(days_ago: float, **over: Any) -> dict[str, Any]:
    """A personal semantic ``create`` record ``days_ago`` days before now (``over`` replaces
    keys; None drops one)."""
    at = NOW - round(days_ago * DAY)
    rid = over.pop("id", None) or new_ulid(at, lambda k: next(_seq).to_bytes(k, "big"))
    content = over.pop("content", "content")
    obj: dict[str, Any] = {
        "v": 1, "id": rid, "memoryId": rid, "op": "create", "type": "semantic",
        "level": "personal", "namespace": "user/tester", "tags": [], "content": content,
        "summary": content[:280], "recordedAt": iso_ms(at),
        "provenance": {"actor": "user:tester"}, "links": [],
    }
    obj.update(over)
    return {k: v for k, v in obj.items() if v is not None}


@pytest.fixture
def y(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """A Ynm on a personal store only (cwd outside any repository)."""
    monkeypatch.setenv("YNM_USER", "tester")
    where = tmp_path / "outside"
    where.mkdir()
    ynm = Ynm.open(where)
    yield ynm
    ynm.close()


def load(y: Ynm, *objs: dict[str, Any]) -> list[str]:
    """Import records (ids and times kept); returns their memory ids."""
    out = y.import_jsonl("".join(json.dumps(o) + "\n" for o in objs))
    assert out == {"imported": len(objs), "problems": []}
    return [o["memoryId"] for o in objs]


def tips(y: Ynm) -> dict[str, str]:
    """Every ref of every mount's repository -> its target (compare before and after)."""
    out = {}
    for m in y.mounts:
        repo = m.log.repo
        for name in repo.references:
            out[f"{m.id}:{name}"] = str(repo.references[name].target)
    return out


def record_count(y: Ynm) -> int:
    return sum(m.fresh_cache().conn.execute("SELECT count(*) FROM records").fetchone()[0]
               for m in y.mounts)


def state(y: Ynm, memory_id: str) -> dict[str, Any]:
    return y.find(memory_id)[1]


def history(y: Ynm, memory_id: str) -> list[dict[str, Any]]:
    """The raw records of a memory (JSON objects) in fold order."""
    out = []
    for m in y.mounts:
        out += [json.loads(line) for (line,) in m.fresh_cache().conn.execute(
            "SELECT ynm_unpack(line) FROM records WHERE memory_id = ? ORDER BY recorded_at, id",
            (memory_id,))]
    return out


class FakeJudge:
    """A judge answering ``nouls`` (question id -> probability, or a function of the state
    giving that dict); counts its calls. ``choice`` answers pick ``choices[qid]``."""

    def __init__(self, name: str = "fake", calibrated: bool = True,
                 nouls: dict[str, float] | Callable[[Any], dict[str, float]] | None = None,
                 choices: dict[str, str] | None = None, unavailable: bool = False) -> None:
        self.name, self.calibrated = name, calibrated
        self.nouls = nouls or {}
        self.choices = choices or {}
        self.unavailable = unavailable
        self.calls: list[Any] = []

    def limits(self) -> JudgeLimits:
        return JudgeLimits(state_tokens=32000, request_tokens=64000, max_choices=255)

    def judge(self, state: Any, questions: dict[str, Any]) -> Judgment:
        self.calls.append(state)
        if self.unavailable:
            raise ModelUnavailable("fake judge is down")
        nouls = self.nouls(state) if callable(self.nouls) else self.nouls
        answers = {}
        for qid, q in questions.items():
            if q.type == "noul":
                answers[qid] = Answer(type="noul", noul=nouls.get(qid, 0.0))
            elif q.type == "choice":
                pick = self.choices.get(qid, next(iter(q.criteria)))
                answers[qid] = Answer(type="choice", choice=pick,
                                      probabilities={k: float(k == pick) for k in q.criteria},
                                      confidence=0.9)
            else:
                answers[qid] = Answer(type="score", score=0, probabilities=[1.0], confidence=0.9)
        return Judgment(answers=answers, model=f"{self.name}-1", calibrated=self.calibrated,
                        usage=Usage(input_tokens=100, output_tokens=5))


class FakeWriter:
    """A writer returning ``values`` in turn (dicts validated into the schema), or raising
    ``error``; counts its calls."""

    def __init__(self, *values: dict[str, Any], error: Exception | None = None,
                 name: str = "fake-writer") -> None:
        self.name = name
        self.values = list(values)
        self.error = error
        self.calls: list[tuple[str, Any, str | None]] = []

    def write(self, instructions: str, state: Any, schema: Any,
              schema_name: str | None = None) -> Written:
        self.calls.append((instructions, state, schema_name))
        if self.error is not None:
            raise self.error
        value = schema.model_validate(self.values.pop(0))
        return Written(value=value, model="fake-writer-1", usage=Usage(input_tokens=50))
