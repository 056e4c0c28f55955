"""``ynm recall`` (reference/cli.md §4.18, §3.2; reference/algorithms.md §2).

Memories are loaded with ``ynm import`` so their times are known. Procedural and reference
memories never decay, so their scores do not depend on the wall clock.
"""

from __future__ import annotations

import json
import re

import pytest

from .conftest import USER, make_record, ulid

HIT_KEYS = ["memoryId", "mount", "score", "type", "level", "namespace", "tags", "summary",
            "content", "pinned", "importance", "updatedAt", "tombstoned"]
HEADER = "SCORE  ID                          TYPE"  # then MOUNT and SUMMARY, as wide as the rows


def proc(content: str, **over):
    return make_record(type="procedural", content=content, summary=content, **over)


def ids(hits):
    return [h["memoryId"] for h in hits]


def test_human_format(project, cli_run, load):
    a = proc("deploy the ledger on tuesdays")
    load(a)
    result = cli_run("recall", "ledger")
    assert result.exit_code == 0
    assert result.stdout == (
        "SCORE  ID                          TYPE        MOUNT     SUMMARY\n"
        f"0.875  {a['id']}  procedural  personal  deploy the ledger on tuesdays\n")


def test_human_format_padding_and_pin(project, cli_run, load):
    a = make_record(type="reference", content="x", summary="the summary", pinned=True,
                    level="distributed", namespace="common")
    load(a)
    result = cli_run("recall")
    # filter-only: 0.55 * 1 + 0.35 * 0.5 + 0.1 * 1 = 0.825
    assert result.stdout == (
        "SCORE  ID                          TYPE       MOUNT    SUMMARY\n"
        f"0.825  {a['id']}  reference  project  * the summary\n")


def test_explain_line(project, cli_run, load):
    a = proc("deploy the ledger", importance=0.25)
    load(a)
    result = cli_run("recall", "ledger", "--explain")
    lines = result.stdout.splitlines()
    assert lines == [
        "SCORE  ID                          TYPE        MOUNT     SUMMARY",
        f"0.838  {a['id']}  procedural  personal  deploy the ledger",
        "        rel 1.00 rec 1.00 imp 0.25",
    ]


def test_explain_line_of_a_hybrid_hit_adds_both_parts():
    from ynm.cli.recall import format_hits

    hit = {"memoryId": "01KAHVBV000000000000000001", "mount": "project", "score": 0.8,
           "type": "semantic", "summary": "s", "pinned": False,
           "explain": {"relevance": 1.0, "recency": 1.0, "importance": 0.5, "pinned": 0,
                       "total": 0.8, "lexical": None, "vector": 0.4321}}
    assert format_hits([hit]).splitlines()[2] == (
        "        rel 1.00 rec 1.00 imp 0.50 lex - vec 0.43")
    hit["explain"].update(lexical=0.25, vector=None)
    assert format_hits([hit]).splitlines()[2].endswith("lex 0.25 vec -")


def test_no_matches(project, cli_run):
    result = cli_run("recall", "anything")
    assert result.exit_code == 0
    assert result.stdout == "no matches\n"
    result = cli_run("recall", "anything", "--json")
    assert result.exit_code == 0
    assert result.stdout == "[]\n"


HALF_RULE = ("a memory answers only when it holds at least half of the question's words by "
             "weight (rarer words weigh more; function words aside)")


def test_a_recall_that_finds_nothing_names_the_words_no_memory_holds(project, cli_run, load):
    """stdout stays the reference's (``no matches``, ``[]``); stderr says why, naming the
    words no memory holds, in the question's order."""
    load(proc("Release train leaves on Thursdays"))
    for args, out in ((("release", "banana"), "no matches\n"),
                      (("release", "banana", "--json"), "[]\n")):
        result = cli_run("recall", *args)
        assert result.exit_code == 0
        assert result.stdout == out
        assert result.stderr == (f'hint: no memory holds "banana"; {HALF_RULE}: ask without '
                                 "it, or in the words your memories use\n")
    result = cli_run("recall", "kiwi", "release", "banana")
    assert result.stderr == (f'hint: no memory holds "kiwi", "banana"; {HALF_RULE}: ask '
                             "without them, or in the words your memories use\n")
    result = cli_run("recall", "zzzqqq")
    assert result.stderr == 'hint: no memory holds "zzzqqq"; ask in the words your memories use\n'
    # a word no memory holds but fewer than the held ones is left out: the memory answers
    result = cli_run("recall", "release", "train", "banana")
    assert "Release train" in result.stdout and result.stderr == ""


def test_a_recall_whose_words_are_all_held_names_what_else_left_them_out(project, cli_run,
                                                                          load):
    load(proc("Release train leaves on Thursdays"),
         make_record(type="semantic", content="The ledger closes at noon"))
    result = cli_run("recall", "release", "--type", "episodic", "--namespace", "team")
    assert result.stdout == "no matches\n"
    # no memory is forgotten: forgetting is not named
    assert result.stderr == ("hint: some memory holds each word of the question, but each "
                             "memory holding them fails one of: passing --type, --namespace\n")
    # three words, each held by another memory: none holds half of them
    load(make_record(type="semantic", content="Rota for the weekend"))
    result = cli_run("recall", "release", "ledger", "rota")
    assert result.stdout == "no matches\n"
    assert result.stderr == ("hint: some memory holds each word of the question, but each "
                             "memory holding them fails one of: holding at least half of them "
                             "by weight (rarer words weigh more; function words aside)\n")
    memory = cli_run("recall", "release", "--json").stdout
    forgotten = json.loads(memory)[0]["memoryId"]
    assert cli_run("forget", forgotten).exit_code == 0
    result = cli_run("recall", "release", "--include-tombstoned", "--type", "episodic")
    assert result.stderr == ("hint: some memory holds each word of the question, but each "
                             "memory holding them fails one of: passing --type\n")
    # the words are looked up in the mounts searched: personal holds none of them here
    result = cli_run("recall", "ledger", "--level", "distributed")
    assert result.stderr == ('hint: no memory of the mounts --level selected holds "ledger"; '
                             "ask in the words your memories use\n")


HOLDING = ("hint: some memory holds each word of the question, but each memory holding them "
           "fails one of: ")
FORGOTTEN = "not being forgotten (add --include-tombstoned)"


def test_the_hint_names_forgetting_only_when_a_forgotten_memory_holds_the_words(
        project, cli_run, load):
    kept = proc("Release train leaves on Thursdays", namespace="user/david/ops")
    gone = make_record(type="semantic", content="The ledger closes at noon")
    load(kept, gone)
    assert cli_run("forget", gone["id"]).exit_code == 0
    # "ledger" is held by the forgotten memory only: named
    result = cli_run("recall", "ledger")
    assert result.stdout == "no matches\n"
    assert result.stderr == HOLDING + FORGOTTEN + "\n"
    assert cli_run("recall", "ledger", "--include-tombstoned").stdout.count(gone["id"]) == 1
    # "release" is held by a memory that is not forgotten: only the filter that left it out
    result = cli_run("recall", "release", "--type", "semantic")
    assert result.stderr == HOLDING + "passing --type\n"
    # both words: the forgotten one and the filtered one are each named
    result = cli_run("recall", "release", "ledger", "--type", "reference")
    assert result.stderr.startswith(HOLDING) and result.stderr.endswith(
        "passing --type; " + FORGOTTEN + "\n")



EXPIRED = "not being expired working memory (add --include-tombstoned)"


def test_the_hint_names_expiry_apart_from_forgetting(project, cli_run, load):
    """Working memory past its ttl that no expire pass has tombstoned is left out as a
    forgotten memory is, but it was not forgotten: the hint says which kept the words out."""
    late = make_record(type="working", namespace="session/s1", content="Rollback drill at five",
                       ttl="PT1H", recordedAt="2026-01-01T10:00:00.000Z")
    gone = make_record(type="semantic", content="Rollback needs the ledger frozen")
    load(late, gone)
    # "drill" is held by the expired working memory only
    result = cli_run("recall", "drill")
    assert result.stdout == "no matches\n"
    assert result.stderr == HOLDING + EXPIRED + "\n"
    assert cli_run("recall", "drill", "--include-tombstoned").stdout.count(late["id"]) == 1
    # "rollback": the expired one and a forgotten one
    assert cli_run("forget", gone["id"]).exit_code == 0
    assert cli_run("recall", "rollback").stderr == HOLDING + (
        "not being forgotten or expired working memory (add --include-tombstoned)\n")
    # "ledger": the forgotten one only (forgetting, not expiry)
    assert cli_run("recall", "ledger").stderr == HOLDING + FORGOTTEN + "\n"
    # once the expire pass tombstoned it, the expired memory is forgotten
    assert cli_run("session", "end", "s1").exit_code == 0
    assert cli_run("recall", "drill").stderr == HOLDING + FORGOTTEN + "\n"


@pytest.mark.parametrize("flags", [
    ("--type", "reference"), ("--namespace", "team"), ("--subject", "planes"),
    ("--tags", "docs"), ("--data-key", "team"), ("--since", "2026-10-01"),
    ("--until", "2026-08-01"), ("--pinned-only",),
])
def test_each_filter_that_left_the_memory_out_is_named(project, cli_run, load, flags):
    load(proc("Release train leaves on Thursdays", namespace="user/david/ops", tags=["ops"],
              subject="trains", data={"owner": "ops"}, recordedAt="2026-09-01T10:00:00.000Z"),
         proc("The wiki holds the runbooks", tags=["docs"], subject="planes", pinned=True,
              data={"team": "docs"}))  # passes the filter, holds no word of the question
    result = cli_run("recall", "release", *flags)
    assert result.stdout == "no matches\n"
    assert result.stderr == HOLDING + f"passing {flags[0]}\n"


def test_a_filter_that_left_no_memory_out_is_not_named(project, cli_run, load):
    load(proc("Release train leaves on Thursdays", namespace="user/david/ops", tags=["ops"]))
    # --namespace and --tags pass the one memory holding "release"; --type leaves it out
    result = cli_run("recall", "release", "--namespace", "user/david/ops", "--tags", "ops",
                     "--type", "semantic")
    assert result.stdout == "no matches\n"
    assert result.stderr == HOLDING + "passing --type\n"
    # --subject leaves it out (it has none), --since does not
    result = cli_run("recall", "release", "--subject", "x", "--since", "2026-01-01")
    assert result.stderr == HOLDING + "passing --subject\n"


def test_a_recall_with_hits_or_without_words_gives_no_hint(project, cli_run, load):
    load(proc("Release train leaves on Thursdays"))
    assert cli_run("recall", "release").stderr == ""
    assert cli_run("recall", "--type", "episodic").stderr == ""


def test_chinese_japanese_and_korean_are_found_by_a_part(project, cli_run):
    """A memory written without spaces is found by two or more of its characters side by
    side; the output shows it as written."""
    texts = ["设备清单：NAS 在机房二号柜", "サーバーの設定を変更した", "서버 설정을 변경했다"]
    made = [json.loads(cli_run("remember", "--type", "semantic", "--level", "distributed",
                               "--content", t, "--json").stdout)["memoryId"] for t in texts]
    for query, i in [("设备", 0), ("机房", 0), ("二号柜", 0), ("設定", 1), ("バー", 1),
                     ("설정", 2), ("변경", 2)]:
        result = cli_run("recall", query, "--explain")
        assert result.exit_code == 0, result.stderr
        lines = result.stdout.splitlines()
        assert len(lines) == 3 and lines[1].startswith("0.875  " + made[i]), (query, lines)
        assert lines[0].startswith(HEADER) and lines[1].endswith("  project  " + texts[i])
    assert cli_run("recall", "设单").stdout == "no matches\n"


def test_json_hit_shape(project, run_json, load):
    a = proc("deploy the ledger", tags=["deploy"])
    load(a)
    hits = run_json("recall", "ledger")
    assert len(hits) == 1
    h = hits[0]
    assert list(h) == HIT_KEYS
    assert h == {
        "memoryId": a["id"], "mount": "personal", "score": 0.875, "type": "procedural",
        "level": "personal", "namespace": f"user/{USER}", "tags": ["deploy"],
        "summary": "deploy the ledger", "content": "deploy the ledger", "pinned": False,
        "importance": 0.5, "updatedAt": a["recordedAt"], "tombstoned": False,
    }


def test_json_hit_optional_keys_in_order(project, run_json, load):
    a = proc("deploy the ledger", subject="entity:ledger", data={"owner": "payments", "n": 1},
             dataSchema="owner/v1", provenance={"actor": "user:x", "source": "https://x/1"})
    load(a)
    (h,) = run_json("recall", "ledger", "--explain")
    assert list(h) == ["memoryId", "mount", "score", "explain", "type", "level", "namespace",
                       "subject", "tags", "summary", "content", "pinned", "importance",
                       "updatedAt", "data", "dataSchema", "source", "tombstoned"]
    assert list(h["explain"]) == ["relevance", "recency", "importance", "pinned", "total",
                                  "weights"]
    assert list(h["explain"]["weights"]) == ["relevance", "recency", "importance", "pinned"]
    assert h["explain"]["weights"] == {"relevance": 0.6, "recency": 0.2, "importance": 0.15,
                                       "pinned": 0.05}
    assert h["explain"]["total"] == h["score"]
    assert h["subject"] == "entity:ledger"
    # content is the indexed content: current content plus string data values (§2.9)
    assert h["content"] == "deploy the ledger\npayments"
    assert h["data"] == {"owner": "payments", "n": 1}
    assert h["source"] == "https://x/1"


def test_positional_query_equals_text(project, cli_run, load):
    load(proc("deploy the ledger"), proc("rotate the keys"), proc("ledger audit"))
    a = cli_run("recall", "ledger", "deploy", "--json").stdout
    b = cli_run("recall", "--text", "ledger deploy", "--json").stdout
    assert a == b
    assert len(json.loads(a)) == 2


def test_text_over_2000_chars(project, cli_run):
    result = cli_run("recall", "--text", "x" * 2001)
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: invalid input: text: ")


def test_type_filter_repeatable(project, run_json, load):
    a = proc("alpha")
    b = make_record(type="reference", content="alpha", summary="alpha")
    c = make_record(type="semantic", content="alpha", summary="alpha")
    load(a, b, c)
    assert set(ids(run_json("recall", "alpha", "--type", "procedural"))) == {a["id"]}
    got = run_json("recall", "alpha", "--type", "procedural", "--type", "reference")
    assert set(ids(got)) == {a["id"], b["id"]}


def test_type_filter_rejects_unknown(project, cli_run):
    assert cli_run("recall", "--type", "fact").exit_code == 2


def test_level_filter(project, run_json, load):
    a = proc("alpha")
    b = proc("alpha", level="distributed", namespace="common")
    load(a, b)
    assert ids(run_json("recall", "alpha", "--level", "distributed")) == [b["id"]]
    assert ids(run_json("recall", "alpha", "--level", "personal")) == [a["id"]]
    assert len(run_json("recall", "alpha", "--level", "personal", "--level", "distributed")) == 2


def test_mount_filter(project, run_json, load):
    a = proc("alpha")
    b = proc("alpha", level="distributed", namespace="common")
    load(a, b)
    hits = run_json("recall", "alpha", "--mount", "project")
    assert ids(hits) == [b["id"]] and hits[0]["mount"] == "project"


def test_namespace_prefix_whole_segments(project, run_json, load):
    a = proc("alpha", namespace="team/pay")
    b = proc("alpha", namespace="team/pay/sub")
    c = proc("alpha", namespace="team/payments")
    load(a, b, c)
    assert set(ids(run_json("recall", "alpha", "--namespace", "team/pay"))) == {a["id"], b["id"]}
    assert set(ids(run_json("recall", "alpha", "--namespace", "team/pay/"))) == {a["id"], b["id"]}
    assert len(run_json("recall", "alpha", "--namespace", "/")) == 3


def test_namespace_with_underscore_is_literal(project, run_json, load):
    """algorithms.md §8.2: ``_`` must not act as a LIKE wildcard."""
    a = proc("alpha", namespace="org/my_team/x")
    b = proc("alpha", namespace="org/myxteam/x")
    c = proc("alpha", namespace="org/my_team")
    load(a, b, c)
    assert set(ids(run_json("recall", "alpha", "--namespace", "org/my_team"))) == {a["id"], c["id"]}
    assert set(ids(run_json("recall", "--namespace", "org/my_team"))) == {a["id"], c["id"]}


def test_namespace_with_percent_is_refused_not_a_wildcard(project, cli_run, load):
    # no namespace holds '%': the filter is refused like a write, never a LIKE wildcard
    a = proc("alpha", namespace="org/a/x")
    load(a)
    result = cli_run("recall", "alpha", "--namespace", "org/%")
    assert result.exit_code == 2 and result.stdout == ""
    assert "invalid input: namespace: namespace must be /-separated" in result.stderr


def test_subject_exact(project, run_json, load):
    a = proc("alpha", subject="entity:ledger")
    b = proc("alpha", subject="entity:ledger2")
    load(a, b)
    assert ids(run_json("recall", "alpha", "--subject", "entity:ledger")) == [a["id"]]


def test_tags_all_required_and_comma_split(project, run_json, load):
    a = proc("alpha", tags=["x", "y"])
    b = proc("alpha", tags=["x"])
    load(a, b)
    assert ids(run_json("recall", "alpha", "--tags", "x,y")) == [a["id"]]
    assert ids(run_json("recall", "alpha", "--tags", "x", "--tags", "y")) == [a["id"]]
    assert set(ids(run_json("recall", "alpha", "--tags", "x"))) == {a["id"], b["id"]}


def test_data_key(project, run_json, load):
    a = proc("alpha", data={"owner": "p"})
    b = proc("alpha")
    load(a, b)
    assert ids(run_json("recall", "alpha", "--data-key", "owner")) == [a["id"]]
    assert run_json("recall", "alpha", "--data-key", "other") == []


def test_since_until_inclusive(project, run_json, load):
    a = proc("alpha", recordedAt="2026-01-01T00:00:00.000Z")
    b = proc("alpha", recordedAt="2026-01-02T00:00:00.000Z")
    c = proc("alpha", recordedAt="2026-01-03T00:00:00.000Z")
    load(a, b, c)
    assert set(ids(run_json("recall", "alpha", "--since", "2026-01-02T00:00:00.000Z"))) == {
        b["id"], c["id"]}
    assert set(ids(run_json("recall", "alpha", "--until", "2026-01-02T00:00:00.000Z"))) == {
        a["id"], b["id"]}
    # a bare date means midnight UTC
    assert ids(run_json("recall", "alpha", "--since", "2026-01-02", "--until", "2026-01-02")) == [
        b["id"]]


def test_since_garbage(project, cli_run):
    result = cli_run("recall", "--since", "garbage")
    assert result.exit_code == 2
    assert result.stderr.strip() == ("Error: invalid input: since: expected an ISO 8601 date-time "
        "such as 2026-11-30T12:00:00Z, 2026-11-30T17:30:00.250+05:30, 20261130T120000Z "
        "(basic format) or a date 2026-11-30 (midnight UTC)" ", got 'garbage'")


def test_until_garbage(project, cli_run):
    result = cli_run("recall", "--until", "2026-01-02 10:00")
    assert result.exit_code == 2
    assert result.stderr.strip() == ("Error: invalid input: until: expected an ISO 8601 date-time "
        "such as 2026-11-30T12:00:00Z, 2026-11-30T17:30:00.250+05:30, 20261130T120000Z "
        "(basic format) or a date 2026-11-30 (midnight UTC)" ", got '2026-01-02 10:00'")


def test_pinned_only(project, run_json, load):
    a = proc("alpha", pinned=True)
    b = proc("alpha")
    load(a, b)
    assert ids(run_json("recall", "alpha", "--pinned-only")) == [a["id"]]
    assert len(run_json("recall", "alpha", "--no-pinned-only")) == 2


def test_include_tombstoned(project, run_json, load):
    a = proc("alpha")
    b = proc("alpha")
    tomb = make_record(id=ulid(), memoryId=b["id"], op="tombstone", type="procedural",
                       content=None, summary=None, recordedAt="2026-01-02T00:00:00.000Z")
    load(a, b, tomb)
    assert ids(run_json("recall", "alpha")) == [a["id"]]
    assert ids(run_json("recall", "alpha", "--no-include-tombstoned")) == [a["id"]]
    assert set(ids(run_json("recall", "alpha", "--include-tombstoned"))) == {a["id"], b["id"]}


def test_limit(project, run_json, load):
    load(*(proc(f"alpha {i}") for i in range(5)))
    assert len(run_json("recall", "alpha")) == 5
    assert len(run_json("recall", "alpha", "--limit", "2")) == 2


def test_default_limit_is_10(project, run_json, load):
    load(*(proc(f"alpha {i}") for i in range(12)))
    assert len(run_json("recall", "alpha")) == 10


@pytest.mark.parametrize("value", ["0", "201"])
def test_limit_out_of_range(project, cli_run, value):
    result = cli_run("recall", "--limit", value)
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: invalid input: limit: ")


def test_limit_not_an_integer(project, cli_run):
    assert cli_run("recall", "--limit", "ten").exit_code == 2


def test_rerank_flags_accepted_without_a_judge(project, run_json, load):
    a = proc("alpha")
    load(a)
    assert ids(run_json("recall", "alpha", "--rerank")) == [a["id"]]
    assert ids(run_json("recall", "alpha", "--no-rerank")) == [a["id"]]


def test_filter_only_ranks_by_recency_and_importance(project, run_json, load):
    a = proc("one", importance=0.2)
    b = proc("two", importance=0.9)
    load(a, b)
    hits = run_json("recall", "--explain")
    assert ids(hits) == [b["id"], a["id"]]
    assert hits[0]["explain"]["weights"] == {"relevance": 0, "recency": 0.55, "importance": 0.35,
                                             "pinned": 0.1}
    assert hits[0]["score"] == pytest.approx(0.55 + 0.35 * 0.9)


def test_cwd_flag(project, cli_run, load, tmp_path, monkeypatch):
    b = proc("alpha", level="distributed", namespace="common")
    load(b)
    monkeypatch.chdir(tmp_path)
    result = cli_run("recall", "alpha", "--cwd", project, "--json")
    assert [h["memoryId"] for h in json.loads(result.stdout)] == [b["id"]]
    # without --cwd only the personal store is mounted
    assert json.loads(cli_run("recall", "alpha", "--json").stdout) == []


def test_errors_are_never_json(project, cli_run):
    result = cli_run("recall", "--limit", "0", "--json")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert re.match(r"Error: invalid input: ", result.stderr)


@pytest.mark.parametrize("query", ["C++", "*", "?!", "--"])
def test_a_query_without_search_words_finds_nothing_and_says_why(project, cli_run, load,
                                                                 query):
    load(proc("deploy the ledger"), proc("c++ builds use cmake"))
    result = cli_run("recall", "--", query)  # after "--", a "--" is the query too
    assert result.exit_code == 0
    assert result.stdout == "no matches\n"
    assert "has no searchable words" in result.stderr and repr(query) in result.stderr
    as_json = cli_run("recall", "--text", query, "--json")
    assert json.loads(as_json.stdout) == [] and "no searchable words" in as_json.stderr
    # words, or filters alone, still search
    assert "no searchable words" not in cli_run("recall", "ledger").stderr
    assert len(json.loads(cli_run("recall", "--json").stdout)) == 2


@pytest.mark.parametrize("query", ["the", "the and of", "what is it"])
@pytest.mark.parametrize("hybrid", [False, True])
def test_a_query_of_function_words_only_says_so(project, cli_run, load, query, hybrid,
                                                 request) -> None:
    if hybrid:  # vectors from a local embeddings server; else full text (YNM_EMBEDDER=none)
        request.getfixturevalue("server")
    load(proc("the ledger and the rota of the team"), proc("what is it we deploy"))
    result = cli_run("recall", query)
    assert result.exit_code == 0
    assert result.stdout == "no matches\n"
    assert result.stderr == (f"note: the query {query!r} has only function words "
                             f"({', '.join(query.split())}), which name no subject, so nothing "
                             "was searched; give words of the subject, or filters without a "
                             "query\n")
    as_json = cli_run("recall", "--text", query, "--json")
    assert json.loads(as_json.stdout) == [] and "only function words" in as_json.stderr
    # a word of the subject beside them still searches
    hits = json.loads(cli_run("recall", f"{query} ledger", "--json").stdout)
    assert [h["summary"] for h in hits][:1] == ["the ledger and the rota of the team"]


def test_tombstoned_hits_are_marked_and_flagged(project, cli_run, run_json, load):
    """With --include-tombstoned a forgotten memory is marked ``[tombstoned]`` in the human
    output and carries ``"tombstoned": true`` (the last key) in JSON; live ones false."""
    gone = proc("deploy the ledger by hand", recordedAt="2026-01-01T00:00:00.000Z")
    tomb = make_record(id=ulid(), memoryId=gone["id"], op="tombstone", type="procedural",
                       content=None, summary=None, recordedAt="2026-01-02T00:00:00.000Z",
                       reason="wrong")
    kept = proc("deploy the ledger with the pipeline", pinned=True)
    load(gone, tomb, kept)
    assert [h["memoryId"] for h in run_json("recall", "ledger")] == [kept["id"]]
    hits = run_json("recall", "ledger", "--include-tombstoned")
    assert {h["memoryId"]: h["tombstoned"] for h in hits} == {gone["id"]: True,
                                                             kept["id"]: False}
    assert all(list(h)[-1] == "tombstoned" for h in hits)
    lines = cli_run("recall", "ledger", "--include-tombstoned").stdout.splitlines()
    by_id = {line.split()[1]: line for line in lines[1:]}
    assert by_id[gone["id"]].endswith("  [tombstoned] deploy the ledger by hand")
    assert by_id[kept["id"]].endswith("  * deploy the ledger with the pipeline")


def test_columns_align_with_a_long_mount_id(tmp_path):
    """The mount column is as wide as its longest id, so the summaries start together."""
    from ynm.cli.recall import format_hits

    def hit(mount, summary):
        return {"memoryId": "01KAHVBV000000000000000001", "mount": mount, "score": 0.5,
                "type": "semantic", "summary": summary, "pinned": False}

    lines = format_hits([hit("personal", "one"), hit("payments-team-shared", "two"),
                         hit("project", "three")]).splitlines()
    assert {line.index(word) for line, word in zip(lines, ("SUMMARY", "one", "two", "three"))
            } == {5 + 2 + 26 + 2 + 8 + 2 + 20 + 2}
    assert lines[0].split() == ["SCORE", "ID", "TYPE", "MOUNT", "SUMMARY"]


def test_a_word_no_memory_holds_does_not_make_a_question_fail(project, cli_run, load):
    """"happen" is in no memory: it weighs as much as the question's other words on average,
    not as the rarest word there could be, so the memory holding "payout" and "outage" is an
    answer. A question most of whose words the store lacks still finds nothing, though one
    memory holds its "long"."""
    outage = proc("payout outage on 7 Oct: the bank rotated its host key")
    load(outage, proc("payout batches go to the bank at 14:00"), proc("deploy the ledger"),
         proc("the ledger keeps long-term balances"))
    result = cli_run("recall", "why did the payout outage happen", "--json")
    assert result.exit_code == 0, result.stderr
    assert ids(json.loads(result.stdout))[:1] == [outage["id"]]
    for question in ("how long is a marathon", "zzzqqq", "what is the capital of Australia"):
        assert cli_run("recall", question).stdout == "no matches\n", question


def test_a_memory_holding_only_function_words_is_no_hit(project, cli_run, load):
    """"the ledger": memories holding only "the" matched nothing of the question; no hit of
    relevance 0 is listed."""
    ledger = proc("deploy the ledger on tuesdays")
    load(ledger, proc("the bank sends the file"), proc("rotate the host key"))
    hits = json.loads(cli_run("recall", "the ledger", "--json", "--explain").stdout)
    assert ids(hits) == [ledger["id"]]
    assert hits[0]["explain"]["relevance"] > 0
