"""The similar-memory guidance of a write (``Ynm.similar_guidance``, reference/algorithms.md
§2.10): which memories it names, in what order, and that a group commit gives each write the
guidance a lone lookup on the same store gives."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from ynm.model.inputs import ForgetInput, RememberInput
from ynm.model.jsonl import parse_jsonl
from ynm.model.text import overlap_coefficient, overlap_words
from ynm.service.guidance import GUIDANCE_CANDIDATES
from ynm.service.ynm import Ynm


def _inp(content: str) -> RememberInput:
    return RememberInput(type="semantic", level="distributed", content=content)


def _named(guidance: str | None) -> list[str]:
    """The memory ids a guidance note names, in its order."""
    return re.findall(r"([0-9A-HJKMNP-TV-Z]{26}) \(", guidance or "")


@pytest.fixture
def y(project: Path):
    with Ynm.open(project) as opened:
        yield opened


def test_a_near_duplicate_is_named_and_an_unrelated_memory_is_not(y: Ynm) -> None:
    first = y.remember(_inp("The ledger service deploys every Tuesday morning after standup"))
    y.remember(_inp("Payroll exports run on the first day of the month"))
    out = y.remember(_inp("Ledger service deploys happen every Tuesday morning"))
    assert _named(out["guidance"]) == [first["memoryId"]]
    assert out["guidance"].startswith("1 similar memory exists: ")
    assert "guidance" not in y.remember(_inp("Grafana dashboards live in the ops folder"))


def test_the_written_memory_and_forgotten_ones_are_not_named(y: Ynm) -> None:
    gone = y.remember(_inp("Staging database restores take forty minutes"))
    y.forget(ForgetInput(memory_id=gone["memoryId"]))
    out = y.remember(_inp("Staging database restores take forty minutes"))
    assert "guidance" not in out
    assert y.similar_guidance(out["memoryId"], "Staging database restores take forty minutes"
                              ) is None
    # another write of it names the live one only
    again = y.remember(_inp("Staging database restores take forty minutes"))
    assert _named(again["guidance"]) == [out["memoryId"]]


def test_at_most_four_are_named_highest_overlap_first_and_the_cut_is_said(y: Ynm) -> None:
    base = "kafka brokers rebalance partitions nightly"
    # overlap with the new content: 5/5 for the first, then 5/5 with one extra word, ...
    texts = [base + extra for extra in ["", " quietly", " quietly again", " quietly again often",
                                         " quietly again often lately",
                                         " quietly again often lately too"]]
    ids = [y.remember(_inp(t))["memoryId"] for t in texts]
    new = base + " quietly again often lately"
    out = y.remember(_inp(new))
    named = _named(out["guidance"])
    words = overlap_words(new)
    overlaps = {i: overlap_coefficient(words, overlap_words(t)) for i, t in zip(ids, texts)}
    # every memory qualifies (the base alone is 5 of its words); the named are the best 4,
    # and the note says they are 4 of the 5 tested: the base holds under 60% of the new
    # content's words (5 of 9), so the search for its rarest words does not reach it
    assert all(v >= 0.6 for v in overlaps.values())
    assert out["guidance"].startswith("5 similar memories found; the 4 most similar: ")
    assert len(named) == 4
    assert [overlaps[i] for i in named] == sorted(overlaps.values(), reverse=True)[:4]
    assert set(named[:2]) == {ids[4], ids[5]}  # all of its words: 1.0


def test_four_similar_are_all_named_without_a_cut(y: Ynm) -> None:
    texts = ["kafka brokers rebalance partitions nightly" + extra
             for extra in ["", " quietly", " quietly again", " quietly again often"]]
    ids = [y.remember(_inp(t))["memoryId"] for t in texts]
    out = y.remember(_inp("kafka brokers rebalance partitions nightly quietly"))
    assert out["guidance"].startswith("4 similar memories exist: ")
    assert sorted(_named(out["guidance"])) == sorted(ids)


def test_a_duplicate_behind_many_memories_sharing_common_words_is_found(y: Ynm) -> None:
    """More memories share the content's common words than are tested; the duplicate holds
    its rare words, which are the ones searched."""
    duplicate = y.remember(_inp("Rotate the zephyr signing keys before the quarterly audit"))
    y.remember_many([(_inp(f"before the quarterly audit note {n} rotate"), None)
                     for n in range(GUIDANCE_CANDIDATES * 2)])
    out = y.remember(_inp("Rotate zephyr signing keys before each quarterly audit"))
    assert duplicate["memoryId"] in _named(out["guidance"])


def test_a_write_without_overlap_words_gets_no_guidance(y: Ynm) -> None:
    y.remember(_inp("a b c is to of"))
    assert "guidance" not in y.remember(_inp("a b c is to of"))


def test_a_group_commit_gives_each_write_its_lone_guidance_and_lands_in_order(
        y: Ynm, project: Path) -> None:
    seeded = [y.remember(_inp(text))["memoryId"] for text in [
        "The billing worker retries failed invoices three times",
        "Search indexing pauses during the weekly reindex window",
        "Feature flags are cleaned up after each quarterly release",
    ]]
    contents = [
        "Billing worker retries failed invoices three times before alerting",  # seeded 0
        "Search indexing pauses during the weekly reindex window",  # seeded 1
        "Completely different words about coffee grinders",  # nothing
        "Coffee grinders need different words completely",  # the one before it
        "Feature flags cleaned after each quarterly release train",  # seeded 2
        "Billing worker retries failed invoices three times",  # seeded 0 and the first
    ]
    outs = y.remember_many([(_inp(c), None) for c in contents])
    assert all(isinstance(o, dict) for o in outs)
    results: list[dict[str, Any]] = outs  # type: ignore[assignment]
    # each write's guidance is what a lone lookup gives on the same store
    for out, content in zip(results, contents, strict=True):
        assert out.get("guidance") == y.similar_guidance(out["memoryId"], content)
    assert {seeded[0], results[5]["memoryId"]} <= set(_named(results[0].get("guidance")))
    assert seeded[1] in _named(results[1].get("guidance"))
    assert _named(results[2].get("guidance")) == [results[3]["memoryId"]]
    assert seeded[2] in _named(results[4].get("guidance"))
    assert {seeded[0], results[0]["memoryId"]} <= set(_named(results[5].get("guidance")))
    # every record landed once, in input order, in one commit of the shard
    stored = [r for b in y.mount("project").log.read_all().values()
              for r in parse_jsonl(b.data).records if r.memory_id not in seeded]
    assert [r.content for r in stored] == contents
    assert [r.memory_id for r in stored] == [o["memoryId"] for o in results]
    assert len({o["revision"] for o in results}) == 1
    assert json.dumps(results)  # plain data


def test_a_failed_lookup_warns_only_the_write_it_failed_for(
        y: Ynm, monkeypatch: pytest.MonkeyPatch) -> None:
    real = Ynm.similar_guidance

    def flaky(self: Ynm, memory_id: str, content: str, **kw: Any) -> str | None:
        if content.startswith("broken"):
            raise RuntimeError("lookup broke")
        return real(self, memory_id, content, **kw)

    monkeypatch.setattr(Ynm, "similar_guidance", flaky)
    outs = y.remember_many([(_inp(c), None) for c in ["fine one", "broken two", "fine three"]])
    assert [o.get("warnings") for o in outs] == [  # type: ignore[union-attr]
        None, ["saved, but looking for similar memories failed (RuntimeError: lookup broke)"],
        None]
