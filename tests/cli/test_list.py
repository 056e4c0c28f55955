"""``ynm list`` (reference/cli.md §4.11, §3.3, §8 items 9, 13, 14, 16, 27)."""

from __future__ import annotations

import json

import pytest

from .conftest import USER, make_record, ulid

MEMORY_KEYS = ["memoryId", "current", "type", "level", "namespace", "tags", "links",
               "importance", "confidence", "pinned", "needsReview", "tombstoned", "createdAt",
               "updatedAt", "versions", "mount"]


def ids(memories):
    return [m["memoryId"] for m in memories]


def at(day: int) -> str:
    return f"2026-01-{day:02d}T00:00:00.000Z"


def test_empty(project, cli_run):
    result = cli_run("list")
    assert result.exit_code == 0
    assert result.stdout == "no memories\n"
    assert cli_run("list", "--json").stdout == "[]\n"


def test_human_format(project, cli_run, load):
    """A header line, then columns as wide as their widest cell (reference: fixed widths, no
    header; docs/cli.md says why)."""
    a = make_record(summary="first summary", content="body a", recordedAt=at(1))
    b = make_record(type="procedural", level="distributed", namespace="common", pinned=True,
                    summary="second summary", content="body b", recordedAt=at(2))
    load(a, b)
    result = cli_run("list")
    assert result.exit_code == 0
    ns = f"user/{USER}".ljust(len("NAMESPACE"))
    assert result.stdout == (
        f"ID                          TYPE        LEVEL        {'NAMESPACE'.ljust(len(ns))}  SUMMARY\n"
        f"{b['id']}  procedural  distributed  {'common'.ljust(len(ns))}  * second summary\n"
        f"{a['id']}  semantic    personal     {ns}  first summary\n"
    )


def test_long_namespace_is_not_cut(project, cli_run, load):
    ns = "team/" + "n" * 30
    a = make_record(namespace=ns, summary="s")
    load(a)
    assert cli_run("list").stdout.splitlines()[1] == f"{a['id']}  semantic  personal  {ns}  s"


def test_a_60_character_namespace_keeps_the_columns_aligned(project, cli_run, load):
    ns = "team/" + "n" * 55
    assert len(ns) == 60
    a = make_record(namespace=ns, summary="long one", recordedAt=at(2))
    b = make_record(namespace="common", level="distributed", summary="short one",
                    recordedAt=at(1))
    load(a, b)
    lines = cli_run("list").stdout.splitlines()
    assert len(lines) == 3
    starts = {line.index(word) for line, word in zip(lines, ("SUMMARY", "long one", "short one"))}
    assert starts == {26 + 2 + 8 + 2 + 11 + 2 + 60 + 2}
    assert lines[2].startswith(f"{b['id']}  semantic  distributed  common{' ' * 56}short one")


def test_a_namespace_past_the_cap_is_printed_whole(project, cli_run, load):
    """Past 64 characters the column stops widening; the long cell is kept whole and only its
    own row shifts."""
    long_ns = "team/" + "x" * 95
    a = make_record(namespace=long_ns, summary="long one", recordedAt=at(2))
    b = make_record(summary="short one", recordedAt=at(1))
    load(a, b)
    lines = cli_run("list").stdout.splitlines()
    assert lines[0].index("SUMMARY") == lines[2].index("short one") == 26 + 2 + 8 + 2 + 8 + 2 + 64 + 2
    assert lines[1].endswith(f"  {long_ns}  long one")


def test_tombstoned_memories_are_marked(project, cli_run, run_json, load):
    a = make_record(summary="gone", recordedAt=at(1))
    tomb = make_record(id=ulid(), memoryId=a["id"], op="tombstone", content=None,
                       summary=None, recordedAt=at(2), reason="wrong")
    b = make_record(summary="kept", recordedAt=at(3))
    load(a, tomb, b)
    assert "gone" not in cli_run("list").stdout
    lines = cli_run("list", "--include-tombstoned").stdout.splitlines()
    assert lines[1].endswith("  kept") and "[tombstoned]" not in lines[1]
    assert lines[2].endswith("  [tombstoned] gone")
    flags = {m["memoryId"]: m["tombstoned"] for m in run_json("list", "--include-tombstoned")}
    assert flags == {a["id"]: True, b["id"]: False}


def test_prints_current_summary(project, cli_run, load):
    a = make_record(summary="old", content="old body", recordedAt=at(1))
    sup = make_record(id=ulid(), memoryId=a["id"], op="supersede", summary="new",
                      content="new body", recordedAt=at(2),
                      links=[{"rel": "supersedes", "to": a["id"]}])
    load(a, sup)
    assert cli_run("list").stdout.rstrip("\n").endswith("  new")


def test_json_shape(project, run_json, load):
    a = make_record(subject="entity:x", tags=["t"], recordedAt=at(3))
    load(a)
    (m,) = run_json("list")
    keys = list(m)
    assert keys == MEMORY_KEYS[:5] + ["subject"] + MEMORY_KEYS[5:] + ["summary"]
    assert m["current"] == a
    assert m["mount"] == "personal"
    assert m["versions"] == 1 and m["createdAt"] == m["updatedAt"] == at(3)
    assert (m["importance"], m["confidence"], m["pinned"], m["needsReview"],
            m["tombstoned"]) == (0.5, 1, False, False, False)


def test_newest_first_across_mounts(project, run_json, load):
    a = make_record(recordedAt=at(1))
    b = make_record(level="distributed", namespace="common", recordedAt=at(3))
    c = make_record(recordedAt=at(2))
    load(a, b, c)
    assert ids(run_json("list")) == [b["id"], c["id"], a["id"]]


def test_level(project, run_json, load):
    a = make_record()
    b = make_record(level="distributed", namespace="common")
    load(a, b)
    assert ids(run_json("list", "--level", "distributed")) == [b["id"]]
    assert ids(run_json("list", "--level", "personal")) == [a["id"]]


def test_level_is_not_repeatable_enum(project, cli_run):
    assert cli_run("list", "--level", "team").exit_code == 2


def test_type(project, run_json, load):
    a = make_record(type="episodic")
    b = make_record()
    load(a, b)
    assert ids(run_json("list", "--type", "episodic")) == [a["id"]]


def test_unknown_type(project, cli_run):
    assert cli_run("list", "--type", "fact").exit_code == 2


def test_namespace(project, run_json, load):
    a = make_record(namespace="factory", recordedAt=at(1))
    b = make_record(namespace="factory/line", recordedAt=at(2))
    c = make_record(namespace="factoryx", recordedAt=at(3))
    load(a, b, c)
    assert ids(run_json("list", "--namespace", "factory")) == [b["id"], a["id"]]
    assert ids(run_json("list", "--namespace", "factory/")) == [b["id"], a["id"]]
    assert len(run_json("list", "--namespace", "/")) == 3


def test_namespace_underscore_is_literal(project, run_json, load):
    a = make_record(namespace="org/my_team/x")
    b = make_record(namespace="org/myxteam/x")
    load(a, b)
    assert ids(run_json("list", "--namespace", "org/my_team")) == [a["id"]]


def test_since_until_inclusive(project, run_json, load):
    a, b, c = (make_record(recordedAt=at(d)) for d in (1, 2, 3))
    load(a, b, c)
    assert ids(run_json("list", "--since", at(2))) == [c["id"], b["id"]]
    assert ids(run_json("list", "--until", at(2))) == [b["id"], a["id"]]
    assert ids(run_json("list", "--since", "2026-01-02", "--until", "2026-01-02")) == [b["id"]]


def test_since_garbage(project, cli_run):
    result = cli_run("list", "--since", "yesterday")
    assert result.exit_code == 2
    assert result.stderr.strip() == ("Error: invalid input: since: expected an ISO 8601 date-time "
        "such as 2026-11-30T12:00:00Z, 2026-11-30T17:30:00.250+05:30, 20261130T120000Z "
        "(basic format) or a date 2026-11-30 (midnight UTC)" ", got 'yesterday'")


def test_include_tombstoned(project, run_json, load):
    a = make_record(recordedAt=at(1))
    tomb = make_record(id=ulid(), memoryId=a["id"], op="tombstone", content=None, summary=None,
                       recordedAt=at(2))
    load(a, tomb)
    assert run_json("list") == []
    (m,) = run_json("list", "--include-tombstoned")
    assert m["tombstoned"] is True and m["versions"] == 2 and m["updatedAt"] == at(2)
    assert run_json("list", "--no-include-tombstoned") == []


def test_needs_review(project, run_json, load):
    a = make_record(recordedAt=at(1))
    b = make_record(recordedAt=at(2))
    flag = make_record(id=ulid(), memoryId=a["id"], op="annotate", content=None, summary=None,
                       needsReview=True, recordedAt=at(3))
    load(a, b, flag)
    assert ids(run_json("list", "--needs-review")) == [a["id"]]
    assert ids(run_json("list", "--no-needs-review")) == [b["id"]]
    assert set(ids(run_json("list"))) == {a["id"], b["id"]}


def test_limit_after_sorting_across_mounts(project, run_json, load):
    a = make_record(recordedAt=at(1))
    b = make_record(level="distributed", namespace="common", recordedAt=at(2))
    c = make_record(recordedAt=at(3))
    load(a, b, c)
    assert ids(run_json("list", "--limit", "2")) == [c["id"], b["id"]]
    assert ids(run_json("list", "--limit", "1")) == [c["id"]]


@pytest.mark.parametrize("value", ["0", "10001"])
def test_limit_out_of_range(project, cli_run, value):
    result = cli_run("list", "--limit", value)
    assert result.exit_code == 2
    assert result.stderr.startswith("Error: invalid input: limit: ")


def test_mount(project, run_json, cli_run, load):
    a = make_record()
    b = make_record(level="distributed", namespace="common")
    load(a, b)
    assert ids(run_json("list", "--mount", "project")) == [b["id"]]
    result = cli_run("list", "--mount", "nope")
    assert result.exit_code == 2 and result.stdout == ""


def test_cwd(project, cli_run, load, tmp_path, monkeypatch):
    b = make_record(level="distributed", namespace="common")
    load(b)
    monkeypatch.chdir(tmp_path)
    assert cli_run("list").stdout == "no memories\n"
    assert cli_run("list", "--cwd", project).stdout.splitlines()[1].startswith(b["id"])


def test_list_shows_50_by_default_and_says_when_more_exist(project, cli_run, load):
    from .conftest import make_record

    records = [make_record(recordedAt=f"2026-01-01T10:{i // 60:02d}:{i % 60:02d}.000Z",
                           content=f"fact {i}", summary=f"fact {i}") for i in range(53)]
    load(*records)
    result = cli_run("list")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["ID", "TYPE", "LEVEL", "NAMESPACE", "SUMMARY"]
    assert len(lines) == 51 and lines[1].endswith("fact 52") and lines[-1].endswith("fact 3")
    assert result.stderr == ("note: showing the newest 50; more exist (use --limit N or "
                             "--all)\n")
    as_json = cli_run("list", "--json")
    assert len(json.loads(as_json.stdout)) == 50 and "more exist" in as_json.stderr
    assert len(json.loads(cli_run("list", "--all", "--json").stdout)) == 53
    exact = cli_run("list", "--limit", "53", "--json")
    assert len(json.loads(exact.stdout)) == 53 and exact.stderr == ""
    assert cli_run("list", "--limit", "5", "--all").exit_code == 2


def test_no_note_when_everything_fits(project, cli_run, load):
    from .conftest import make_record

    load(*[make_record(content=f"fact {i}") for i in range(50)])
    result = cli_run("list")
    assert len(result.stdout.splitlines()) == 1 + 50 and result.stderr == ""


def test_memories_updated_at_the_same_time_come_by_memory_id_however_the_cache_was_built(
        project, cli_run, load, run_json):
    """Ties of updatedAt are ordered by memory id, descending (as recall and the browser order
    them), the same in a cache refreshed as the records came and in one rebuilt; so --limit
    picks the same memories either way."""
    ids_ = sorted(ulid() for _ in range(4))
    # written biggest id first: a refresh numbers the rows in that order, a rebuild by id
    load(*(make_record(id=i, content=f"tied {n}", recordedAt=at(3))
           for n, i in enumerate(reversed(ids_))))
    want = sorted(ids_, reverse=True)
    assert ids(run_json("list")) == want
    assert ids(run_json("list", "--limit", "2")) == want[:2]
    assert cli_run("reindex").exit_code == 0
    assert ids(run_json("list")) == want
    assert ids(run_json("list", "--limit", "2")) == want[:2]
