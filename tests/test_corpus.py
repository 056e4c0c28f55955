"""The seeded synthetic corpus (benchmarks/corpus.py; reference/benchmarks.md §6)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # benchmarks/ is not an installed package
    sys.path.insert(0, str(ROOT))

from benchmarks.corpus import (  # noqa: E402
    PEOPLE,
    SERVICES,
    TEMPLATES,
    generate_corpus,
    mulberry32,
    slug,
    ulid,
    write_jsonl,
)
from ynm.model.ids import new_ulid, ulid_time  # noqa: E402
from ynm.model.jsonl import parse_jsonl, serialize_records  # noqa: E402

# Vectors from the JavaScript definition, run under Node:
#   function mulberry32(a){return function(){var t=a+=0x6D2B79F5;t=Math.imul(t^t>>>15,t|1);
#     t^=t+Math.imul(t^t>>>7,t|61);return((t^t>>>14)>>>0)/4294967296;}}
MULBERRY32_VECTORS = {
    42: (0.6011037519201636, 0.44829055899754167, 0.8524657934904099, 0.6697340414393693,
         0.17481389874592423),
    0: (0.26642920868471265, 0.0003297457005828619, 0.2232720274478197, 0.1462021479383111,
        0.46732782293111086),
    1: (0.6270739405881613, 0.002735721180215478, 0.5274470399599522, 0.9810509674716741,
        0.9683778982143849),
    4294967295: (0.8964226141106337, 0.189478256739676, 0.7156526781618595, 0.9440599093213677,
                 0.8452364315744489),
}


@pytest.fixture(scope="module")
def corpus():
    return generate_corpus(seed=42, count=4000)


@pytest.mark.parametrize("seed", sorted(MULBERRY32_VECTORS))
def test_mulberry32_matches_javascript(seed):
    r = mulberry32(seed)
    assert tuple(r() for _ in range(5)) == MULBERRY32_VECTORS[seed]


def test_mulberry32_first_values_as_uint32():
    r = mulberry32(42)
    assert [int(r() * 2**32) for _ in range(3)] == [2581720956, 1925393290, 3661312704]


def test_mulberry32_bytes_are_the_same_draws():
    a, b = mulberry32(7), mulberry32(7)
    assert a.bytes(10) + a.bytes(3) == bytes(int(b() * 256) & 255 for _ in range(13))
    assert a() == b()


def test_fast_ulid_equals_new_ulid():
    r = mulberry32(3)
    for i in range(200):
        ms = int(r() * 2**48)
        rand = r.bytes(10)
        assert ulid(ms, rand) == new_ulid(ms, lambda n, rand=rand: rand)


def test_vocabulary_shape():
    assert len(SERVICES) == len(set(SERVICES)) == 30
    assert len(PEOPLE) == len(set(PEOPLE)) == 20
    assert len(TEMPLATES) == 8
    for t in TEMPLATES:
        assert 4 <= len(t.values) <= 8
        assert len(t.paraphrases) == 4
        assert all("{e}" in p and "{v}" in p for p in t.paraphrases)
    assert [t.exclusive for t in TEMPLATES] == [True, False, True, False, True, True, False, False]


def test_slug():
    assert slug("the payments staging environment") == "payments-staging-environment"
    assert slug("Priya (as reviewer)") == "priya-as-reviewer"
    assert slug("the feature-flags CLI") == "feature-flags-cli"


def test_same_seed_same_bytes(tmp_path):
    a = generate_corpus(seed=5, count=500)
    b = generate_corpus(seed=5, count=500)
    assert serialize_records(a.records) == serialize_records(b.records)
    write_jsonl(a.records, tmp_path / "a.jsonl")
    assert (tmp_path / "a.jsonl").read_text(encoding="utf-8") == serialize_records(b.records)
    assert serialize_records(generate_corpus(seed=6, count=500).records) != \
        serialize_records(a.records)


def test_count_and_records_valid(corpus):
    assert len(corpus.records) == len(corpus.claims) == 4000
    text = serialize_records(corpus.records)
    parsed = parse_jsonl(text)
    assert parsed.problems == []
    assert len(parsed.records) == 4000  # ids unique
    assert serialize_records(parsed.records) == text  # round-trips byte for byte


def test_record_rules(corpus):
    for rec, claim in zip(corpus.records, corpus.claims):
        assert rec.op == "create" and rec.id == rec.memory_id
        assert rec.level == "personal" and rec.namespace == "user/test"
        assert rec.type == TEMPLATES[claim.template].type
        assert rec.subject == "entity:" + slug(claim.entity)
        assert rec.tags == list(TEMPLATES[claim.template].tags)
        assert rec.content.startswith(rec.summary) and len(rec.summary) <= 120
        assert rec.confidence == 1 and rec.importance == round(rec.importance, 2)
        assert rec.links == [] and rec.provenance.actor == "generator"
        assert rec.provenance.session in {f"s{i}" for i in range(50)}
        assert "2026-06" <= rec.recorded_at[:7] <= "2026-09"
        assert 1 <= int(rec.recorded_at[8:10]) <= 27
        offset = ulid_time(rec.id) - _ms(rec.recorded_at)
        assert 0 <= offset <= 999


def test_all_four_months_used(corpus):
    assert {r.recorded_at[:7] for r in corpus.records} == {"2026-06", "2026-07", "2026-08",
                                                           "2026-09"}


def test_duplicate_and_contradiction_rates(corpus):
    kinds = Counter(c.kind for c in corpus.claims)
    assert 0.035 <= kinds["duplicate"] / len(corpus.records) <= 0.065
    assert 0 < kinds["contradiction"] / len(corpus.records) <= 0.02
    for prev, (rec, claim) in zip(corpus.claims, list(zip(corpus.records, corpus.claims))[1:]):
        if claim.kind == "duplicate":
            assert (claim.template, claim.entity, claim.value) == \
                (prev.template, prev.entity, prev.value)
        if claim.kind == "contradiction":
            assert TEMPLATES[claim.template].exclusive
            assert (claim.template, claim.entity) == (prev.template, prev.entity)
            assert claim.value != prev.value


def test_duplicate_is_a_paraphrase(corpus):
    for i, claim in enumerate(corpus.claims):
        if claim.kind == "duplicate":
            assert corpus.records[i].content != corpus.records[i - 1].content
            assert corpus.records[i].subject == corpus.records[i - 1].subject


def test_labels(corpus):
    by_id = {r.id: c for r, c in zip(corpus.records, corpus.claims)}
    assert corpus.duplicates and corpus.contradictions
    for a, b in corpus.duplicates:
        assert (by_id[a].template, by_id[a].entity, by_id[a].value) == \
            (by_id[b].template, by_id[b].entity, by_id[b].value)
    for a, b in corpus.contradictions:
        assert by_id[a].template == by_id[b].template and by_id[a].entity == by_id[b].entity
        assert by_id[a].value != by_id[b].value and TEMPLATES[by_id[a].template].exclusive
    emitted = sum(c.kind == "duplicate" for c in corpus.claims)
    assert len(corpus.duplicates) >= emitted  # chance collisions count too


def test_queries(corpus):
    assert len(corpus.queries) == 50
    by_subject = Counter(r.subject for r in corpus.records)
    ids_by_subject: dict[str, set[str]] = {}
    for r in corpus.records:
        ids_by_subject.setdefault(r.subject, set()).add(r.id)
    for q in corpus.queries:
        assert q.relevant
        assert "-" not in q.text and not q.text.startswith("entity")
        subject = "entity:" + q.text.replace(" ", "-")
        assert by_subject[subject] >= 2
        assert q.relevant == ids_by_subject[subject]


def test_distributed_level_defaults():
    c = generate_corpus(seed=3, count=200, level="distributed")
    assert {r.level for r in c.records} == {"distributed"}
    assert {r.namespace for r in c.records} == {"common", "org/eyelock/project/ynm"}
    with pytest.raises(ValueError):
        generate_corpus(level="public")


def _ms(iso: str) -> int:
    from datetime import datetime

    seconds = datetime.fromisoformat(iso[:19] + "+00:00").timestamp()
    return int(seconds) * 1000 + int(iso[20:23])
