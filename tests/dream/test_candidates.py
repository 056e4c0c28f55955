"""Dedupe's neighbours are found without a model: by shared rare words, and by stored vectors
when vector search is on (reference/algorithms.md §4.9)."""

from __future__ import annotations

from tests.dream.conftest import FakeJudge, load, rec

MARK = "\U0001F642"  # not a word: only the fake embedder sees it


def test_lexical_neighbours_share_rare_words_and_stay_in_type_and_scope(y):
    load(
        y,
        rec(5, content="The zanzibar cluster runs the quokka ingest jobs nightly"),
        rec(4, content="The quokka ingest jobs run on the zanzibar cluster"),
        rec(3, type="procedural", content="Restart the quokka ingest on zanzibar"),
        rec(2, namespace="user/tester/other", content="zanzibar quokka ingest jobs"),
        rec(1, content="Lunch is at noon on Fridays"),
    )
    judge = FakeJudge(calibrated=False)
    out = y.consolidate(passes=["dedupe"], namespace="user/tester", judge_model=judge)
    pairs = [sorted((c["a"]["content"], c["b"]["content"])) for c in judge.calls]
    # same type only; the namespace filter is a scope, not a type: other_ns is in user/tester/
    assert out["full"]["passes"]["dedupe"]["candidates"] == len(pairs) == 3
    contents = {c for p in pairs for c in p}
    assert "Lunch is at noon on Fridays" not in contents
    assert "Restart the quokka ingest on zanzibar" not in contents
    narrow = FakeJudge(calibrated=False)
    y.consolidate(passes=["dedupe"], namespace="user/tester/other", judge_model=narrow)
    assert narrow.calls == []  # alone in its scope


def test_vector_neighbours_are_found_without_a_shared_word(server, y, monkeypatch):
    import tests.support.embeddings_server as es

    monkeypatch.setattr(es, "hash_vector", lambda text, dim: (
        [1.0] + [0.0] * (dim - 1) if MARK in text else [0.0, 1.0] + [0.0] * (dim - 2)))
    load(y, rec(4, content=f"alpha beta gamma {MARK}"),
         rec(3, content=f"delta epsilon zeta {MARK}"),
         rec(2, content="eta theta iota"), rec(1, content="kappa lambda omicron"))
    judge = FakeJudge(calibrated=False)
    out = y.consolidate(passes=["dedupe"], judge_model=judge)
    assert out["full"]["passes"]["dedupe"]["candidates"] == 2
    pairs = {frozenset((x["a"]["content"], x["b"]["content"])) for x in judge.calls}
    assert pairs == {frozenset((f"alpha beta gamma {MARK}", f"delta epsilon zeta {MARK}")),
                     frozenset(("eta theta iota", "kappa lambda omicron"))}


def test_without_vectors_no_shared_word_means_no_pair(y):
    load(y, rec(4, content=f"alpha beta gamma {MARK}"), rec(3, content=f"delta epsilon {MARK}"))
    out = y.consolidate(passes=["dedupe"], judge_model=FakeJudge(calibrated=False))
    assert out["full"]["passes"]["dedupe"]["candidates"] == 0


def test_candidates_per_memory_caps_the_neighbours(tmp_path, ynm_home, monkeypatch):
    import json

    from ynm.service.ynm import Ynm

    monkeypatch.setenv("YNM_USER", "tester")
    found = {}
    for k in (1, 2, 4):
        home = tmp_path / f"home-{k}"
        home.mkdir()
        (home / "config.json").write_text(json.dumps({"dream": {"candidatesPerMemory": k}}))
        monkeypatch.setenv("YNM_HOME", str(home))
        where = tmp_path / f"outside-{k}"
        where.mkdir()
        with Ynm.open(where) as y:
            load(y, *(rec(10 - i, content=f"quokka zanzibar ingest pipeline variant {i}")
                      for i in range(5)))
            out = y.consolidate(passes=["dedupe"], judge_model=FakeJudge(calibrated=False))
            found[k] = out["full"]["passes"]["dedupe"]["candidates"]
    # each of 5 owners pairs with at most k others; 5 memories make at most 10 pairs
    assert found[1] <= 5 and found[2] <= 10 and found[4] == 10
    assert found[1] < found[2] <= found[4]
