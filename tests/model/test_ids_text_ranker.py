"""ULIDs and the clock (storage.md §1.5, §8 "ULID"), summaries and the tokenizer
(algorithms.md §1.3, §2.3, §2.10) and the ranker (algorithms.md §2.4, seed 001)."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ynm.model.ids import Clock, is_ulid, iso_ms, new_ulid, ulid_time
from ynm.model.ranker import (
    FILTER_WEIGHTS,
    HALF_LIFE_DAYS,
    TEXT_WEIGHTS,
    iso_to_ms,
    recency,
    score,
)
from ynm.model.text import (
    fts_text,
    overlap_coefficient,
    overlap_words,
    summarize,
    query_phrases,
    tokenize,
)

MAX_MS = 2**48 - 1
DAY = 86_400_000
NOW = 1_788_220_800_000

# --- ULIDs --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("ms", "prefix"),
    [
        (0, "0000000000"),
        (1000, "00000000Z8"),
        (2000, "00000001YG"),
        (1_700_000_000_000, "01HF7YAT00"),
        (1_800_000_000_000, "01MCC5RM00"),
        (1_788_220_800_000, "01M1D47Z00"),
        (MAX_MS, "7ZZZZZZZZZ"),
    ],
)
def test_ulid_time_vectors(ms, prefix):
    id_ = new_ulid(ms)
    assert id_[:10] == prefix
    assert ulid_time(id_) == ms
    assert is_ulid(id_)


def test_ulid_vectors_from_reference_tests():
    assert ulid_time(new_ulid(1_700_000_000_000)) == 1_700_000_000_000
    assert new_ulid(1000) < new_ulid(2000)
    assert len({new_ulid(NOW) for _ in range(5000)}) == 5000


def test_same_random_source_gives_same_id():
    def rng(n: int) -> bytes:
        return bytes(range(n))

    assert new_ulid(5, rng) == new_ulid(5, rng)
    assert new_ulid(5, rng)[:10] == "0000000005"
    assert new_ulid(5, lambda n: b"\x00" * n) == "00000000050000000000000000"
    assert new_ulid(5, lambda n: b"\xff" * n) == "0000000005ZZZZZZZZZZZZZZZZ"


@given(st.integers(0, MAX_MS), st.binary(min_size=10, max_size=10))
def test_ulid_round_trip_property(ms, rnd):
    id_ = new_ulid(ms, lambda n: rnd)
    assert len(id_) == 26
    assert is_ulid(id_)
    assert ulid_time(id_) == ms


@given(st.integers(0, MAX_MS), st.integers(0, MAX_MS))
def test_ulid_sorts_by_time(a, b):
    if a < b:
        assert new_ulid(a) < new_ulid(b)


# --- clock --------------------------------------------------------------------------------


def test_clock_strictly_increases_with_frozen_wall_clock():
    clock = Clock(lambda: 1000)
    assert [clock.now_ms() for _ in range(4)] == [1000, 1001, 1002, 1003]


def test_clock_strictly_increases_when_wall_clock_goes_backwards():
    times = iter([5000, 4000, 3000, 5001, 9000, 8999])
    clock = Clock(lambda: next(times))
    assert [clock.now_ms() for _ in range(6)] == [5000, 5001, 5002, 5003, 9000, 9001]


def test_clock_stamp_shares_one_timestamp():
    clock = Clock(lambda: NOW)
    stamps = [clock.stamp() for _ in range(3)]
    for i, (id_, recorded_at) in enumerate(stamps):
        assert is_ulid(id_)
        assert ulid_time(id_) == NOW + i
        assert recorded_at == iso_ms(NOW + i)
        assert iso_to_ms(recorded_at) == NOW + i
    ids = [s[0] for s in stamps]
    assert ids == sorted(ids) and len(set(ids)) == 3


def test_default_clock_uses_wall_time():
    t = Clock().now_ms()
    assert abs(t - datetime.now(timezone.utc).timestamp() * 1000) < 60_000


@pytest.mark.parametrize(
    ("ms", "text"),
    [
        (0, "1970-01-01T00:00:00.000Z"),
        (1, "1970-01-01T00:00:00.001Z"),
        (1_788_220_800_000, "2026-09-01T00:00:00.000Z"),
        (1_700_000_000_123, "2023-11-14T22:13:20.123Z"),
        (1_788_220_800_999, "2026-09-01T00:00:00.999Z"),
        (253_402_300_799_999, "9999-12-31T23:59:59.999Z"),
    ],
)
def test_iso_ms(ms, text):
    assert iso_ms(ms) == text


@given(st.integers(0, 253_402_300_799_999))
def test_iso_ms_property(ms):
    expected = datetime(1970, 1, 1, tzinfo=timezone.utc) + timedelta(milliseconds=ms)
    text = iso_ms(ms)
    assert len(text) == 24
    assert text == expected.strftime("%Y-%m-%dT%H:%M:%S.") + f"{expected.microsecond // 1000:03d}Z"
    assert iso_to_ms(text) == ms


# --- summarize ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "summary"),
    [
        ("\n# Title here\nbody", "Title here"),
        ("plain line\nsecond", "plain line"),
        ("   \n\n##  Heading  \nbody", "Heading"),
        ("  indented text  ", "indented text"),
        ("###", ""),
        ("", ""),
        ("\n\n", ""),
        ("#NoSpace", "NoSpace"),
    ],
)
def test_summarize(content, summary):
    assert summarize(content) == summary


def test_summarize_cuts_long_lines():
    s = summarize("x" * 400)
    assert len(s) == 280
    assert s == "x" * 277 + "..."
    assert summarize("y" * 280) == "y" * 280
    assert summarize("z" * 281) == "z" * 277 + "..."
    assert summarize("# " + "w" * 300 + "\nmore") == "w" * 277 + "..."


# --- tokenizer and FTS query --------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        ("Deploy: the .env/prod-db, A, x_y!", ["deploy", "the", "env/prod-db", "x_y"]),
        ("Hello World", ["hello", "world"]),
        ("a b c", []),
        ("", []),
        ("--flag ../path/ v1.2.3.", ["flag", "path", "v1.2.3"]),
        ("café naïve", ["café", "naïve"]),  # the reference gives ["caf", "na", "ve"]
        ("Где хранятся БЭКАПЫ?", ["где", "хранятся", "бэкапы"]),
        ("cafe\u0301", ["café"]),  # NFC: a combining accent joins its letter
        ("git-notes, cat_sort_uniq; 42", ["git-notes", "cat_sort_uniq", "42"]),
        ("'quoted' \"double\"", ["quoted", "double"]),
        ("-.-/ x. .y", []),
        ("__init__", ["__init__"]),
    ],
)
def test_tokenize(text, tokens):
    assert tokenize(text) == tokens


@pytest.mark.parametrize(
    ("text", "tokens"),
    [
        # a run of Han, kana or Hangul searches its overlapping two-character pieces
        ("设备", ["设备"]),
        ("二号柜", ["二号", "号柜"]),
        ("设备清单：NAS 在机房二号柜",
         ["设备", "备清", "清单", "nas", "在机", "机房", "房二", "二号", "号柜"]),
        ("设备，清单。", ["设备", "清单"]),  # full-width punctuation separates
        ("柜", ["柜"]),  # a one-character run stays (one Han character is often a word)
        ("在 机 房", ["在", "机", "房"]),
        ("サーバーの設定", ["サー", "ーバ", "バー", "ーの", "の設", "設定"]),
        ("ひらがな", ["ひら", "らが", "がな"]),
        ("서버 설정을 변경", ["서버", "설정", "정을", "변경"]),
        ("\u1109\u1165\u1107\u1165", ["서버"]),  # NFC: decomposed jamo join their syllable
        ("v2版本 nas在 设备/清单", ["v2", "版本", "nas", "在", "设备", "清单"]),
        ("NAS在机房-01.", ["nas", "在机", "机房", "01"]),
        ("x设y", ["设"]),  # one-letter Latin pieces are dropped as ever
    ],
)
def test_tokenize_splits_scripts_written_without_spaces(text, tokens):
    assert tokenize(text) == tokens


@given(st.text(max_size=100))
def test_tokenize_property(text):
    for token in tokenize(text):
        assert len(token) > 1 or fts_text("x" + token) == "x " + token  # or Han, kana, Hangul
        assert all(c.isalnum() or c in "_-/." for c in token)
        assert token == token.lower()
        assert token[0] not in "-./" and token[-1] not in "-./"


def test_query_phrases_are_the_words_then_adjacent_pairs():
    assert query_phrases("deploy env/prod-db") == ['"deploy"', '"env/prod-db"',
                                                   '"deploy env/prod-db"']
    assert query_phrases("one") == ['"one"']
    # the reference's query repeats a repeated word; ynm searches each phrase once
    assert query_phrases("go go now") == ['"go"', '"now"', '"go go"', '"go now"']
    assert query_phrases("to be or not to be to be") == [
        '"to"', '"be"', '"or"', '"not"', '"to be"', '"be or"', '"or not"', '"not to"',
        '"be to"']


def test_query_phrases_pair_one_character_words_they_do_not_search_alone():
    assert query_phrases("messaging 1 2 release") == [
        '"messaging"', '"release"', '"messaging 1"', '"1 2"', '"2 release"']


def test_query_phrases_without_tokens_is_filter_only():
    assert query_phrases("") == []
    assert query_phrases("a ! ?") == []
    assert query_phrases("a b") == []  # the pair "a b" alone does not make a text query


def test_query_phrases_drop_double_quotes_in_words():
    # '"' is a separator for the tokenizer, so no phrase can carry one into FTS5
    assert query_phrases('say "hi" there') == ['"say"', '"hi"', '"there"', '"say hi"',
                                              '"hi there"']


@given(st.text(max_size=60))
def test_query_phrases_property(text):
    phrases = query_phrases(text)
    tokens = tokenize(text)
    distinct = list(dict.fromkeys(tokens))
    assert phrases[: len(distinct)] == [f'"{fts_text(t)}"' for t in distinct]
    assert len(set(phrases)) == len(phrases)
    assert all(p.count('"') == 2 and p.startswith('"') and p.endswith('"') for p in phrases)
    assert not tokens or len(phrases) >= len(distinct)


@pytest.mark.parametrize(
    ("text", "phrases"),
    [
        ("设备", ['"设 备"']),
        ("设备清单", ['"设 备"', '"备 清"', '"清 单"']),
        ("柜", ['"柜"']),
        # a pair holding such characters joins its two words with a no-break space
        ("NAS 在机房", ['"nas"', '"在 机"', '"机 房"', '"nas\u00a0在 机 房"']),
        ("機房の設定", ['"機 房"', '"房 の"', '"の 設"', '"設 定"']),
        ("서버 설정", ['"서 버"', '"설 정"', '"서 버\u00a0설 정"']),
        ("v2版本", ['"v2"', '"版 本"']),
    ],
)
def test_query_phrases_search_han_kana_and_hangul_by_their_characters(text, phrases):
    assert query_phrases(text) == phrases


@pytest.mark.parametrize(
    ("text", "indexed"),
    [
        ("设备清单：NAS 在机房二号柜", "设 备 清 单 ：NAS 在 机 房 二 号 柜"),
        ("サーバーの設定", "サ ー バ ー の 設 定"),
        ("서버 설정을", "서 버 설 정 을"),
        ("\u1109\u1165\u1107\u1165", "서 버"),
        ("v2版本\n下一行", "v2 版 本\n下 一 行"),
    ],
)
def test_fts_text_sets_each_han_kana_and_hangul_character_apart(text, indexed):
    assert fts_text(text) == indexed


@given(st.text(alphabet=st.characters(max_codepoint=0x10ff)))
def test_fts_text_leaves_other_scripts_as_they_are(text):
    # Latin, Cyrillic, Greek, ... reach FTS5 unchanged (not even NFC), so their ranking stays
    assert fts_text(text) is text


# --- similar-memory overlap (§2.10) -------------------------------------------------------


def test_overlap_words():
    assert overlap_words("The quick fox uses the API for deploys, and x1 is ok") == {
        "quick", "fox", "api", "deploys"}
    assert overlap_words("this that from are was use with") == set()


def test_overlap_words_of_han_kana_and_hangul_are_their_character_pairs():
    assert overlap_words("设备清单：NAS 在机房") == {"设备", "备清", "清单", "nas", "在机", "机房"}
    assert overlap_words("サーバー設定") == {"サー", "ーバ", "バー", "ー設", "設定"}
    assert overlap_words("서버 설정을") == {"서버", "설정", "정을"}
    assert overlap_words("一 个 字") == set()  # one character alone, like a short Latin word
    # two Chinese notes sharing only a Latin word are not the same fact
    a, b = overlap_words("设备清单：NAS 在机房二号柜"), overlap_words("NAS 的密码在保险箱")
    assert overlap_coefficient(a, b) < 0.6


def test_overlap_coefficient():
    a = {"git", "notes", "anchor"}
    b = {"git", "notes", "anchor", "commit", "root"}
    assert overlap_coefficient(a, b) == 1.0
    assert overlap_coefficient({"a1x", "b2y"}, {"a1x", "c3z", "d4w"}) == 0.5
    assert overlap_coefficient(set(), b) == 0
    assert overlap_coefficient(a, set()) == 0


# --- ranker -------------------------------------------------------------------------------


def test_constants_match_seed_001():
    assert HALF_LIFE_DAYS == {"working": 1, "episodic": 14, "semantic": 180,
                              "procedural": None, "reflective": 90, "reference": None}
    assert (TEXT_WEIGHTS.relevance, TEXT_WEIGHTS.recency, TEXT_WEIGHTS.importance,
            TEXT_WEIGHTS.pinned) == (0.6, 0.2, 0.15, 0.05)
    assert (FILTER_WEIGHTS.relevance, FILTER_WEIGHTS.recency, FILTER_WEIGHTS.importance,
            FILTER_WEIGHTS.pinned) == (0, 0.55, 0.35, 0.1)
    assert TEXT_WEIGHTS.to_obj() == {"relevance": 0.6, "recency": 0.2, "importance": 0.15,
                                     "pinned": 0.05}


@pytest.mark.parametrize(
    ("mtype", "days", "expected"),
    [
        ("episodic", 14, 0.5),
        ("episodic", 28, 0.25),
        ("working", 1, 0.5),
        ("working", 3, 0.125),
        ("semantic", 180, 0.5),
        ("reflective", 90, 0.5),
        ("reflective", 45, math.sqrt(0.5)),
        ("procedural", 10_000, 1.0),
        ("reference", 10_000, 1.0),
        ("episodic", 0, 1.0),
    ],
)
def test_recency_half_lives(mtype, days, expected):
    assert recency(mtype, NOW - days * DAY, NOW) == pytest.approx(expected, rel=1e-12)


def test_recency_negative_age_clamps_to_one():
    assert recency("episodic", NOW + 5 * DAY, NOW) == 1.0
    assert recency("working", NOW + 1, NOW) == 1.0


@given(st.sampled_from(["working", "episodic", "semantic", "reflective"]),
       st.integers(0, 3650 * DAY))
def test_recency_property(mtype, age):
    value = recency(mtype, NOW - age, NOW)
    assert 0 <= value <= 1
    assert value == pytest.approx(0.5 ** (age / DAY / HALF_LIFE_DAYS[mtype]), rel=1e-9, abs=1e-300)


def test_score_with_text():
    s = score(relevance=0.8, memory_type="episodic", updated_at_ms=NOW - 14 * DAY,
              importance=0.4, pinned=True, has_text=True, now_ms=NOW)
    assert s.recency == pytest.approx(0.5)
    assert s.pinned == 1
    assert s.total == pytest.approx(0.6 * 0.8 + 0.2 * 0.5 + 0.15 * 0.4 + 0.05)
    assert s.total == pytest.approx(0.69)
    assert s.weights == TEXT_WEIGHTS
    explain = s.explain()
    assert set(explain) == {"relevance", "recency", "importance", "pinned", "total", "weights"}
    assert explain["weights"] == TEXT_WEIGHTS.to_obj()
    assert explain["relevance"] == 0.8 and explain["importance"] == 0.4


def test_score_filter_only_ignores_relevance():
    a = score(relevance=1, memory_type="procedural", updated_at_ms=0, importance=0.5,
              pinned=False, has_text=False, now_ms=NOW)
    b = score(relevance=0.1, memory_type="procedural", updated_at_ms=0, importance=0.5,
              pinned=False, has_text=False, now_ms=NOW)
    assert a.total == b.total == pytest.approx(0.55 * 1 + 0.35 * 0.5)
    assert a.pinned == 0
    assert a.weights == FILTER_WEIGHTS
    c = score(relevance=1, memory_type="semantic", updated_at_ms=NOW - 180 * DAY,
              importance=1, pinned=True, has_text=False, now_ms=NOW)
    assert c.total == pytest.approx(0.55 * 0.5 + 0.35 + 0.1)


def test_iso_to_ms():
    assert iso_to_ms("2026-09-01T00:00:00.000Z") == 1_788_220_800_000
    assert iso_to_ms("2026-09-01T02:00:00.000+02:00") == 1_788_220_800_000
    assert iso_to_ms("2026-09-01T00:00:00.123Z") == 1_788_220_800_123
    assert iso_to_ms("1970-01-01T00:00:00.000Z") == 0


@pytest.mark.parametrize(("text", "words", "pairs"), [
    ("设备清单", ["设备", "备清", "清单"], []),
    ("NAS 在机房", ["nas", "在机", "机房"], [["nas", "在机房"]]),
    ("storage migration", ["storage", "migration"], [["storage", "migration"]]),
    ("deploy ledger", ["deploy", "ledger"], [["deploy", "ledger"]]),
    ("서버 설정", ["서버", "설정"], [["서버", "설정"]]),
    ("机房 设备 清单", ["机房", "设备", "清单"], [["机房", "设备"], ["设备", "清单"]]),
])
def test_phrase_words_tell_words_from_pairs_in_every_script(text, words, pairs):
    from ynm.model.text import is_word_phrase, phrase_words

    phrases = query_phrases(text)
    assert [phrase_words(p)[0] for p in phrases if is_word_phrase(p)] == words
    assert [phrase_words(p) for p in phrases if not is_word_phrase(p)] == pairs
