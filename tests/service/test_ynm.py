"""The ranker end to end through ``Ynm.recall`` with a fixed clock (reference/algorithms.md
§2.2, §2.4, §2.5, §2.6; seed 001 weights and half-lives)."""

from __future__ import annotations

import itertools
import json
import math
from pathlib import Path
from typing import Any

import pytest

from ynm.model.ids import iso_ms, new_ulid
from ynm.model.inputs import RecallQuery, RememberInput
from ynm.service.ynm import Ynm

DAY = 86_400_000
NOW = 1_772_323_200_000  # 2026-03-01T00:00:00.000Z
_seq = itertools.count(1)

TEXT_W = {"relevance": 0.6, "recency": 0.2, "importance": 0.15, "pinned": 0.05}
FILTER_W = {"relevance": 0, "recency": 0.55, "importance": 0.35, "pinned": 0.1}


def ulid(ms: int = NOW - 100 * DAY) -> str:
    n = next(_seq)
    return new_ulid(ms, lambda k: n.to_bytes(k, "big"))


def rec(days_ago: float = 0, level: str = "personal", **over: Any) -> dict[str, Any]:
    rid = over.pop("id", None) or ulid()
    obj: dict[str, Any] = {
        "v": 1, "id": rid, "memoryId": rid, "op": "create", "type": "semantic",
        "level": level, "namespace": "user/tester" if level == "personal" else "common",
        "tags": [], "content": "content", "summary": "summary",
        "recordedAt": iso_ms(NOW - round(days_ago * DAY)),
        "provenance": {"actor": "user:tester"}, "links": [],
    }
    obj.update(over)
    return {k: v for k, v in obj.items() if v is not None}


@pytest.fixture
def open_ynm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """``open_ynm(where=None)``: a Ynm whose recall measures recency at NOW."""
    monkeypatch.setenv("YNM_USER", "tester")
    opened: list[Ynm] = []

    def _open(where: Path | None = None) -> Ynm:
        if where is None:
            where = tmp_path / "outside"
            where.mkdir(exist_ok=True)
        y = Ynm.open(where, now_ms=lambda: NOW)
        opened.append(y)
        return y

    yield _open
    for y in opened:
        y.close()


def load(y: Ynm, *objs: dict[str, Any]) -> None:
    out = y.import_jsonl("".join(json.dumps(o) + "\n" for o in objs))
    assert out == {"imported": len(objs), "problems": []}


def recall(y: Ynm, **kw: Any) -> list[dict[str, Any]]:
    return y.recall(RecallQuery(explain=True, **kw))


# ---------------------------------------------------------------------- explain numbers


def test_explain_matches_the_seed_formula(open_ynm):
    y = open_ynm()
    a = rec(14, type="episodic", content="ledger deploys", importance=0.8, pinned=True)
    load(y, a)
    (h,) = recall(y, text="ledger")
    e = h["explain"]
    assert e["relevance"] == 1.0
    assert e["recency"] == pytest.approx(0.5, abs=1e-12)
    assert e["importance"] == 0.8 and e["pinned"] == 1
    assert e["weights"] == TEXT_W
    expected = 0.6 * 1.0 + 0.2 * 0.5 + 0.15 * 0.8 + 0.05 * 1
    assert e["total"] == pytest.approx(expected, abs=1e-12)
    assert h["score"] == e["total"]


@pytest.mark.parametrize(("type_", "half_life", "ns"), [
    ("working", 1, "session/s1"),
    ("episodic", 14, None),
    ("reflective", 90, None),
    ("semantic", 180, None),
])
def test_half_lives(open_ynm, type_, half_life, ns):
    y = open_ynm()
    over = {"namespace": ns} if ns else {}
    load(y, rec(half_life, type=type_, **over), rec(2 * half_life, type=type_, **over))
    hits = recall(y)
    got = sorted(h["explain"]["recency"] for h in hits)
    assert got == pytest.approx([0.25, 0.5], abs=1e-12)


@pytest.mark.parametrize("type_", ["procedural", "reference"])
def test_types_without_half_life_never_decay(open_ynm, type_):
    y = open_ynm()
    load(y, rec(3650, type=type_))
    (h,) = recall(y)
    assert h["explain"]["recency"] == 1.0


def test_future_updated_at_counts_as_age_zero(open_ynm):
    y = open_ynm()
    load(y, rec(-5, type="episodic"))
    (h,) = recall(y)
    assert h["explain"]["recency"] == 1.0


def test_recency_is_measured_from_updated_at(open_ynm):
    """An annotate (not a pure dream mark) makes a memory recent again (§2.4)."""
    y = open_ynm()
    a = rec(28, type="episodic")
    ann = rec(14, id=ulid(), memoryId=a["id"], op="annotate", content=None, summary=None,
              type="episodic", tags=["touched"])
    load(y, a, ann)
    (h,) = recall(y)
    assert h["explain"]["recency"] == pytest.approx(0.5, abs=1e-12)
    assert h["updatedAt"] == ann["recordedAt"]


# -------------------------------------------------------------------------- filter only


def test_filter_only_weights_without_text(open_ynm):
    y = open_ynm()
    load(y, rec(14, type="episodic", importance=0.4))
    (h,) = recall(y)
    e = h["explain"]
    assert e["weights"] == FILTER_W
    assert e["relevance"] == 1.0
    assert e["total"] == pytest.approx(0.55 * 0.5 + 0.35 * 0.4, abs=1e-12)


@pytest.mark.parametrize("text", ["a !", "C++", "*", "?!", "--", "x y z", "...", "#"])
def test_query_without_search_words_finds_nothing(open_ynm, text):
    # The reference runs it as a filter-only query: every memory at the same relevance.
    y = open_ynm()
    a = rec(0, type="reference", content="alpha c++ x", importance=0.2)
    b = rec(0, type="reference", content="bravo", importance=0.9)
    load(y, a, b)
    assert recall(y, text=text) == []
    assert recall(y, text=text, tags=["t"]) == []
    # no text, or a blank one, is still a filter-only recall
    assert [h["memoryId"] for h in recall(y)] == [b["id"], a["id"]]
    assert recall(y, text="  ") == recall(y)


def test_text_without_matches_gives_nothing(open_ynm):
    y = open_ynm()
    load(y, rec(content="alpha"))
    assert recall(y, text="zulu") == []


def test_relevance_is_normalised_per_mount(open_ynm):
    y = open_ynm()
    load(y, rec(content="ledger ledger ledger", summary="ledger"),
         rec(content="ledger and many other unrelated words here today", summary="other"),
         rec(content="x"), rec(content="y"), rec(content="z"))
    hits = recall(y, text="ledger")
    assert len(hits) == 2
    assert hits[0]["explain"]["relevance"] == 1.0
    assert 0 < hits[1]["explain"]["relevance"] < 1.0


def test_words_side_by_side_beat_the_same_words_apart(open_ynm):
    # Same words, same lengths, same everything but word order: only the pair "storage
    # migration" (ynm.model.text.query_phrases) tells the two apart.
    y = open_ynm()
    apart = rec(content="The migration of the storage queue went wrong.", summary="s")
    together = rec(content="The storage migration of the queue went wrong.", summary="s")
    load(y, apart, together, rec(content="x"), rec(content="y"))
    hits = recall(y, text="storage migration")
    assert [h["memoryId"] for h in hits] == [together["id"], apart["id"]]
    assert hits[1]["explain"]["relevance"] < 0.7


# Three rare words; the target holds all three apart, each other memory two of them side by
# side (in the query's order, so BM25 adds the pair's phrase on top).
RARE_TRIPLES = [
    ("zephyr", "quokka", "marlin"),
    ("obsidian", "tamarind", "wrangler"),
    ("kestrel", "basalt", "juniper"),
    ("ferrule", "lantern", "cobalt"),
]


def rare_words_store(y) -> dict[tuple[str, str, str], str]:
    """The RARE_TRIPLES memories among fillers; the target id of each triple."""
    targets, records = {}, []
    for a, b, c in RARE_TRIPLES:
        target = rec(content=f"The {a} check ran first, later {b} was patched, and {c} "
                             "closed the ticket.", summary="s")
        targets[(a, b, c)] = target["id"]
        records += [target, rec(content=f"{a} {b} notes", summary="s"),
                    rec(content=f"Setup of {b} {c} done.", summary="s")]
    records += [rec(content=f"filler memory number {i} about nothing", summary="s")
                for i in range(30)]
    load(y, *records)
    return targets


@pytest.mark.parametrize("order", [(0, 1, 2), (1, 2, 0), (2, 0, 1)])
def test_holding_more_of_the_words_beats_holding_two_side_by_side(open_ynm, order):
    y = open_ynm()
    targets = rare_words_store(y)
    for triple, target in targets.items():
        hits = recall(y, text=" ".join(triple[i] for i in order))
        assert hits[0]["memoryId"] == target, triple
        assert hits[0]["explain"]["relevance"] == 1.0
        assert all(h["explain"]["relevance"] < 0.7 for h in hits[1:]), [h["explain"]["relevance"] for h in hits]


def test_a_pair_finds_words_too_short_to_search_alone(open_ynm):
    y = open_ynm()
    dotted = rec(content="The messaging 1.2 release slipped.", summary="s")
    plain = rec(content="The messaging release slipped.", summary="s")
    load(y, dotted, plain)
    hits = recall(y, text="messaging 1 2 release")
    assert [h["memoryId"] for h in hits] == [dotted["id"], plain["id"]]


def test_words_of_any_script_are_searched(open_ynm):
    y = open_ynm()
    ru = rec(content="Резервные копии хранятся 35 дней.", summary="s")
    fr = rec(content="The cafe on the corner takes cards.", summary="s")
    load(y, ru, fr, rec(content="x"))
    assert [h["memoryId"] for h in recall(y, text="хранятся")] == [ru["id"]]
    assert [h["memoryId"] for h in recall(y, text="КОПИИ")] == [ru["id"]]
    assert [h["memoryId"] for h in recall(y, text="café")] == [fr["id"]]  # diacritics fold


def test_han_kana_and_hangul_are_found_by_any_characters_side_by_side(open_ynm):
    y = open_ynm()
    zh = rec(content="设备清单：NAS 在机房二号柜", summary="设备清单")
    ja = rec(content="サーバーの設定を変更した。", summary="設定メモ")
    ko = rec(content="서버 설정을 변경했습니다", summary="서버 메모")
    en = rec(content="The NAS sits in rack two", summary="rack")
    load(y, zh, ja, ko, en)

    def found(text: str) -> list[str]:
        return [h["memoryId"] for h in recall(y, text=text)]

    cases = {
        zh["id"]: ["设备", "设备清单", "清单", "机房", "在机房", "二号柜", "号柜", "柜",
                   "设备，清单"],
        ja["id"]: ["サーバー", "ーバ", "の設定", "設定", "変更した", "設", "サーバーの設定を変更"],
        ko["id"]: ["서버", "설정", "설정을", "정을", "변경", "했습니다", "서버 설정"],
    }
    for memory_id, texts in cases.items():
        for text in texts:
            assert found(text) == [memory_id], text
    # characters that are not side by side, or in another order, find nothing
    for text in ["设清", "房机", "柜号", "定設", "정설", "서설"]:
        assert found(text) == [], text
    assert found("NAS 在机房") == [zh["id"], en["id"]]  # mixed text: both scripts search
    assert found("nas") == [en["id"], zh["id"]]  # Latin ranks as before: a shorter text wins
    hit = recall(y, text="机房")[0]  # recall shows the text as written
    assert (hit["summary"], hit["content"]) == ("设备清单", "设备清单：NAS 在机房二号柜")


# ----------------------------------------------------------------------- ties and limits


def test_tie_break_by_memory_id_descending_within_a_mount(open_ynm):
    """Equal scores within one mount: the larger memoryId (the later-created memory) first.
    Both share ``updatedAt``, so the cross-mount ``updatedAt`` tie-break (§2.2) cannot decide;
    they are loaded larger id first so storage order does not decide either."""
    y = open_ynm()
    small = rec(3, type="reference", id=ulid(NOW - 50 * DAY))
    large = rec(3, type="reference", id=ulid(NOW - 40 * DAY))
    load(y, large, small)
    assert large["id"] > small["id"] and large["recordedAt"] == small["recordedAt"]
    for q in ({}, {"text": "content"}):
        hits = recall(y, **q)
        assert hits[0]["score"] == hits[1]["score"]
        assert [h["memoryId"] for h in hits] == [large["id"], small["id"]]


def test_tie_across_mounts_goes_to_newer_updated_at(open_ynm, git_repo):
    from ynm.service.config import load_config
    from ynm.service.setup import init_project

    init_project(load_config(git_repo), git_repo)
    y = open_ynm(git_repo)
    # personal has the larger id but the older update; project the newer update
    proj = rec(1, level="distributed", type="reference", id=ulid(NOW - 60 * DAY))
    pers = rec(3, type="reference", id=ulid(NOW - 30 * DAY))
    load(y, pers, proj)
    hits = recall(y)
    assert hits[0]["score"] == hits[1]["score"]
    assert [(h["mount"], h["memoryId"]) for h in hits] == [("project", proj["id"]),
                                                           ("personal", pers["id"])]


def test_higher_score_wins_across_mounts(open_ynm, git_repo):
    from ynm.service.config import load_config
    from ynm.service.setup import init_project

    init_project(load_config(git_repo), git_repo)
    y = open_ynm(git_repo)
    proj = rec(0, level="distributed", type="reference", importance=0.9)
    pers = rec(0, type="reference", importance=0.1)
    load(y, pers, proj)
    assert [h["mount"] for h in recall(y)] == ["project", "personal"]
    assert [h["mount"] for h in recall(y, level=["personal"])] == ["personal"]
    assert [h["mount"] for h in recall(y, mount="project")] == ["project"]


def _two_mounts(open_ynm, git_repo) -> Ynm:
    from ynm.service.config import load_config
    from ynm.service.setup import init_project

    init_project(load_config(git_repo), git_repo)
    return open_ynm(git_repo)


def test_a_one_word_match_in_a_small_personal_store_does_not_outrank_a_full_match(
        open_ynm, git_repo):
    # Per mount, the personal store's only match ("deploy") has relevance 1 like the project's
    # full match; the share of the question's words each holds puts them on one scale.
    y = _two_mounts(open_ynm, git_repo)
    full = rec(level="distributed", content="Ledger deploys go out on Tuesdays after the 10:00 "
               "sync", summary="Ledger deploys go out on Tuesdays after the 10:00 sync")
    load(y, full,
         rec(level="distributed", content="Ledger rollback procedure: revert the Tuesday "
             "deploy tag", summary="Ledger rollback procedure"),
         rec(level="distributed", content="Payments deploy freeze during month end close",
             summary="Payments deploy freeze"),
         rec(content="I like to read the deploy dashboard in the morning",
             summary="deploy dashboard"))
    hits = recall(y, text="when do ledger deploys go out on tuesday")
    assert hits[0]["memoryId"] == full["id"] and hits[0]["explain"]["relevance"] == 1.0
    # the personal store's one-word match of a seven-word question holds too little of it
    # to be an answer in its mount, in full text as in hybrid recall
    assert [h for h in hits if h["mount"] == "personal"] == []
    hits = recall(y, text="deploy dashboard")
    assert [h["mount"] for h in hits] == ["personal"]  # "deploy" alone answers nothing here


@pytest.mark.parametrize("query,personal_text,project_texts", [
    ("dark mode in the editor", "I prefer dark mode in the editor",
     ["The editor plugin is built with esbuild", "Releases are tagged on Fridays",
      "The API gateway runs on port 8080", "Backups are kept for 35 days"]),
    ("my ssh key passphrase", "My ssh key passphrase is in the password manager",
     ["Deploy keys are rotated every quarter", "The ssh bastion is bastion.internal",
      "Staging uses the blue cluster", "Standup is at 09:30"]),
])
def test_a_full_match_in_the_personal_store_outranks_a_partial_one_in_the_project(
        open_ynm, git_repo, query, personal_text, project_texts):
    # The personal memory is older, so on a tie of relevance the project's would come first.
    y = _two_mounts(open_ynm, git_repo)
    mine = rec(3, content=personal_text, summary=personal_text)
    load(y, mine, *[rec(level="distributed", content=t, summary=t) for t in project_texts])
    hits = recall(y, text=query)
    assert hits[0]["memoryId"] == mine["id"] and hits[0]["explain"]["relevance"] == 1.0
    assert all(h["explain"]["relevance"] < 0.5 for h in hits[1:])


def test_relevance_within_one_mount_is_not_rescaled_by_the_other(open_ynm, git_repo):
    # The project's candidates keep their order and ratios; only the weaker mount is scaled.
    y = _two_mounts(open_ynm, git_repo)
    load(y, rec(level="distributed", content="ledger ledger ledger", summary="ledger"),
         rec(level="distributed", content="ledger and many other unrelated words here today",
             summary="other"),
         *[rec(level="distributed", content=w, summary=w) for w in ("x", "y", "z")],
         rec(content="nothing about it", summary="unrelated"))
    alone = {h["memoryId"]: h["explain"]["relevance"]
             for h in recall(y, text="ledger", mount="project")}
    both = {h["memoryId"]: h["explain"]["relevance"] for h in recall(y, text="ledger")}
    assert both == alone and max(both.values()) == 1.0


def test_limit_respected(open_ynm):
    y = open_ynm()
    objs = [rec(0, type="reference", importance=i / 20) for i in range(15)]
    load(y, *objs)
    hits = recall(y, limit=3)
    assert [h["memoryId"] for h in hits] == [o["id"] for o in reversed(objs)][:3]
    assert len(recall(y)) == 10
    assert len(recall(y, limit=200)) == 15


def test_filter_only_candidates_are_the_newest_k(open_ynm):
    """K = max(4 * limit, 40) newest candidates per mount; an older memory outside them is
    never ranked, however important (§2.3.2)."""
    y = open_ynm()
    old = rec(100, type="reference", importance=1.0, pinned=True)
    newer = [rec(i / 10, type="reference") for i in range(40)]
    load(y, old, *newer)
    assert old["id"] not in [h["memoryId"] for h in recall(y, limit=1)]
    assert recall(y, limit=11)[0]["memoryId"] == old["id"]


def test_hit_shape_without_explain(open_ynm):
    y = open_ynm()
    a = rec(0, content="alpha", tags=["t"])
    load(y, a)
    (h,) = y.recall(RecallQuery(text="alpha"))
    assert list(h) == ["memoryId", "mount", "score", "type", "level", "namespace", "tags",
                       "summary", "content", "pinned", "importance", "updatedAt", "tombstoned"]
    assert not math.isnan(h["score"])


# ------------------------------------------------------------------------- hybrid fusion


def test_fuse_scales_close_neighbours_over_the_minimum_span():
    from ynm.service.recall import MIN_SPAN, fuse

    out = {rowid: rel for rowid, rel, _, _ in fuse([], [(1, 0.16), (2, 0.13)], {})}
    assert out[1] == 1.0 and out[2] == pytest.approx(1 - 0.03 / MIN_SPAN)
    # far apart: plain min-max, the farthest is 0
    out = {rowid: rel for rowid, rel, _, _ in fuse([], [(1, 0.6), (2, 0.3), (3, 0.2)], {})}
    assert out == pytest.approx({1: 1.0, 2: 0.25, 3: 0.0})
    # a lone neighbour is the best there is
    assert fuse([], [(7, 0.13)], {})[0][:2] == (7, 1.0)


def test_full_text_word_share_counts_han_words(open_ynm):
    """The word share of full-text ranking counts the two-character pieces of Han text as
    words (a pair of two runs stays a pair): the memory holding every piece of the question
    ranks first, above one holding two of them side by side."""
    y = open_ynm()
    add = lambda text: y.remember(RememberInput(  # noqa: E731
        type="semantic", level="personal", content=text))["memoryId"]
    target = add("机房的设备和那份清单都在二号柜")
    add("机房设备")
    add("无关的笔记")
    hits = y.recall(RecallQuery(text="机房 设备 清单"))
    assert hits[0]["memoryId"] == target
