"""Date-times are instants: every one that enters ynm (flags, imported records, records another
writer stored) becomes canonical UTC ``YYYY-MM-DDTHH:MM:SS.sssZ``, so bounds, fold order and
shard months follow the instant, not the text (ynm differs from reference/storage.md §7.1, §7.2
deliberately; docs/cli.md "Date-times")."""

from __future__ import annotations

import json

import pytest

from ynm.model.shards import ShardKey
from ynm.service.ynm import Ynm

from .conftest import make_record, ulid

NOON_HALF = "2026-11-30T12:00:00.500Z"


def ids(memories):
    return [m["memoryId"] for m in memories]


def dist(**over):
    return make_record(level="distributed", namespace="common", **over)


def supersede(of, content, recorded_at):
    return dist(id=ulid(), memoryId=of["id"], op="supersede", content=content, summary=content,
                recordedAt=recorded_at, links=[{"rel": "supersedes", "to": of["id"]}])


# --- list/recall bounds with offsets and fractions ------------------------------------------


@pytest.mark.parametrize(
    ("flag", "bound", "shown"),
    [
        # 17:00+05:00 is 12:00Z: the memory (12:00:00.5Z) is after it
        ("--since", "2026-11-30T17:00:00+05:00", True),
        ("--since", "2026-11-30T04:00:00.500-08:00", True),  # the same instant, inclusive
        ("--since", "2026-11-30T04:00:00.501-08:00", False),
        ("--since", "2026-11-30T12:00:00Z", True),  # the same second, half a second earlier
        ("--since", "2026-11-30T12:00:00.5001Z", False),  # past the memory by 0.1 ms
        ("--since", "2026-11-30", True),  # a bare date is midnight UTC
        ("--since", "2026-12-01T00:00:00+12:00", True),  # 12:00Z on 11-30, 0.5 s before
        # 12:00:00Z is half a second before the memory
        ("--until", "2026-11-30T12:00:00Z", False),
        ("--until", "2026-11-30T12:00:00.499Z", False),
        ("--until", "2026-11-30T12:00:00.5009Z", True),  # digits past the ms are dropped
        ("--until", "2026-11-30T17:00:00.500+05:00", True),
        ("--until", "2026-11-30T07:00:00-05:00", False),
        ("--until", "2026-11-30", False),  # midnight UTC, before noon
        ("--until", "2026-12-01", True),
    ],
)
def test_list_bounds_compare_instants(project, run_json, load, flag, bound, shown):
    a = dist(recordedAt=NOON_HALF)
    load(a)
    assert ids(run_json("list", flag, bound)) == ([a["id"]] if shown else [])


def test_recall_bounds_compare_instants(project, run_json, load):
    early = dist(content="alpha early", recordedAt="2026-11-30T11:59:59.999Z")
    mid = dist(content="alpha mid", recordedAt=NOON_HALF)
    late = dist(content="alpha late", recordedAt="2026-11-30T12:00:01Z")
    load(early, mid, late)

    def got(*args):
        return set(ids(run_json("recall", "alpha", *args)))

    assert got("--since", "2026-11-30T17:00:00+05:00") == {mid["id"], late["id"]}
    assert got("--until", "2026-11-30T04:00:00-08:00") == {early["id"]}
    assert got("--since", "2026-11-30T12:00:00.1Z", "--until", "2026-11-30T12:00:00.9Z") == {
        mid["id"]}
    assert got("--since", "2026-11-30T12:00:00.5+00:00", "--until", "2026-11-30T12:00:00.5Z") == {
        mid["id"]}


def test_a_time_without_offset_is_refused(project, cli_run):
    for cmd in (("list",), ("recall", "x"), ("export",)):
        result = cli_run(*cmd, "--since", "2026-11-30T12:00:00")
        assert result.exit_code == 2
        expected = ("a month YYYY-MM or an ISO 8601 date-time" if cmd == ("export",)
                    else "an ISO 8601 date-time")
        assert result.stderr.strip() == (
            f"Error: invalid input: since: expected {expected} with Z or an offset, got "
            "'2026-11-30T12:00:00': add Z for UTC (2026-11-30T12:00:00Z) or an offset "
            "(2026-11-30T12:00:00+05:00)")


# --- fold order and shard month --------------------------------------------------------------


def test_imported_offset_supersede_folds_and_files_by_instant(project, run_json, load, git):
    base = dist(content="base", recordedAt="2026-11-30T10:00:00.000Z")
    offset = supersede(base, "offset", "2026-12-01T01:00:00.000+05:00")  # 20:00Z on 11-30
    zulu = supersede(base, "zulu", "2026-11-30T21:00:00.000Z")
    load(base, zulu, offset)
    [m] = run_json("list")
    assert m["current"]["content"] == "zulu"
    assert m["updatedAt"] == "2026-11-30T21:00:00.000Z" and m["versions"] == 3
    refs = git(project, "for-each-ref", "--format=%(refname)", "refs/notes/ynm/").split()
    assert refs == ["refs/notes/ynm/distributed/common/semantic/2026-11"]


@pytest.mark.parametrize(
    ("written", "canonical", "month"),
    [
        ("2026-12-01T01:00:00.000+05:00", "2026-11-30T20:00:00.000Z", "2026-11"),
        ("2026-11-30T16:00:00-08:00", "2026-12-01T00:00:00.000Z", "2026-12"),
        ("2026-11-30T12:00:00.5Z", "2026-11-30T12:00:00.500Z", "2026-11"),
        ("2026-11-30T12:00:00.123456Z", "2026-11-30T12:00:00.123Z", "2026-11"),
        ("2026-11-30", "2026-11-30T00:00:00.000Z", "2026-11"),
    ],
)
def test_import_writes_canonical_times(project, cli_run, load, git, written, canonical, month):
    a = dist(recordedAt=written, validFrom=written, validTo=written)
    load(a)
    [line] = cli_run("export").stdout.splitlines()
    obj = json.loads(line)
    assert (obj["recordedAt"], obj["validFrom"], obj["validTo"]) == (canonical,) * 3
    refs = git(project, "for-each-ref", "--format=%(refname)", "refs/notes/ynm/").split()
    assert refs == [f"refs/notes/ynm/distributed/common/semantic/{month}"]


def test_records_stored_with_offsets_fold_by_instant(project, run_json):
    """Lines another writer stored as written (offsets, other precisions; the reference files
    them under the local month) are read as their instants; the stored bytes are untouched."""
    base = dist(content="base", recordedAt="2026-11-30T10:00:00Z")
    offset = supersede(base, "offset", "2026-12-01T01:00:00.000+05:00")
    zulu = supersede(base, "zulu", "2026-11-30T21:00:00.000Z")
    other = dist(content="other", recordedAt="2026-11-30T12:00:00.5Z")
    with Ynm.open(project) as y:
        [mount] = [m for m in y.mounts if m.level == "distributed"]
        raw = {ShardKey("distributed", "common", "semantic", "2026-11"): [base, zulu, other],
               ShardKey("distributed", "common", "semantic", "2026-12"): [offset]}
        mount.log.append({k: ("".join(json.dumps(r) + "\n" for r in recs).encode(), len(recs))
                          for k, recs in raw.items()})
    memories = {m["memoryId"]: m for m in run_json("list")}
    assert memories[base["id"]]["current"]["content"] == "zulu"
    assert memories[base["id"]]["updatedAt"] == "2026-11-30T21:00:00.000Z"
    assert memories[other["id"]]["updatedAt"] == NOON_HALF
    assert ids(run_json("list", "--until", "2026-11-30T12:00:00Z")) == []
    assert ids(run_json("list", "--since", "2026-11-30T21:00:00.001Z")) == []
    assert ids(run_json("list", "--since", "2026-11-30T17:00:00+05:00")) == [base["id"],
                                                                             other["id"]]


# --- other flags -----------------------------------------------------------------------------


def test_export_month_of_an_offset_bound_is_the_utc_month(project, cli_run, load):
    nov = dist(recordedAt="2026-11-30T20:00:00Z")
    dec = dist(recordedAt="2026-12-01T00:30:00Z")
    load(nov, dec)

    def got(*args):
        return [json.loads(line)["id"] for line in cli_run("export", *args).stdout.splitlines()]

    # 2026-12-01T01:00+05:00 is 2026-11-30T20:00Z: November's bucket is kept
    assert got("--since", "2026-12-01T01:00:00+05:00") == [nov["id"], dec["id"]]
    # 2026-11-30T16:30-08:00 is 2026-12-01T00:30Z: only December's bucket
    assert got("--since", "2026-11-30T16:30:00-08:00") == [dec["id"]]
    assert got("--until", "2026-11-30T16:30:00-08:00") == [nov["id"], dec["id"]]
    assert got("--until", "2026-12-01T01:00:00+05:00") == [nov["id"]]


def test_remember_valid_from_and_to_are_canonical(project, run_json):
    out = run_json("remember", "--type", "semantic", "--content", "x",
                   "--valid-from", "2026-12-01T01:00:00+05:00", "--valid-to", "2026-12-02")
    [m] = run_json("list")
    assert m["memoryId"] == out["memoryId"]
    assert m["current"]["validFrom"] == "2026-11-30T20:00:00.000Z"
    assert m["current"]["validTo"] == "2026-12-02T00:00:00.000Z"


# --- ISO 8601 basic format and the message for other forms -----------------------------------

BASIC = [  # (written, canonical UTC)
    ("20261130T120000Z", "2026-11-30T12:00:00.000Z"),
    ("20261130T120000.5+0530", "2026-11-30T06:30:00.500Z"),
    ("20261130T1200-05", "2026-11-30T17:00:00.000Z"),
    ("20261130T120000,25Z", "2026-11-30T12:00:00.250Z"),
    ("2026-11-30T12:00:00,25+01", "2026-11-30T11:00:00.250Z"),
]
FORMS = ("such as 2026-11-30T12:00:00Z, 2026-11-30T17:30:00.250+05:30, 20261130T120000Z "
         "(basic format) or a date 2026-11-30 (midnight UTC)")


@pytest.mark.parametrize(("written", "canonical"), BASIC)
def test_basic_format_is_accepted_by_flags_and_stored_canonical(project, run_json, written,
                                                                 canonical):
    run_json("remember", "--type", "semantic", "--content", "x", "--valid-from", written)
    [m] = run_json("list", "--since", written, "--until", "2999-01-01")
    assert m["current"]["validFrom"] == canonical
    assert run_json("list", "--until", written) == []  # the memory was written after it


@pytest.mark.parametrize(("written", "canonical"), BASIC[:3])
def test_basic_format_in_imported_records(project, cli_run, load, written, canonical):
    load(dist(recordedAt=written, validTo=written))
    obj = json.loads(cli_run("export", "--since", written).stdout)
    assert (obj["recordedAt"], obj["validTo"]) == (canonical, canonical)


@pytest.mark.parametrize("value", ["tomorrow", "2026-11-30T120000Z", "20261130T12:00:00Z",
                                   "2026/11/30", "30.11.2026", "2026-11-30 12:00Z",
                                   "20261130T1Z", "20261130"])
def test_other_forms_are_refused_listing_the_accepted_ones(project, cli_run, load, value):
    for cmd in (("list", "--since"), ("recall", "x", "--until"),
                ("remember", "--type", "semantic", "--content", "x", "--valid-to")):
        result = cli_run(*cmd, value)
        field = {"list": "since", "recall": "until", "remember": "validTo"}[cmd[0]]
        assert result.exit_code == 2, cmd
        assert result.stderr.strip() == (
            f"Error: invalid input: {field}: expected an ISO 8601 date-time {FORMS}, "
            f"got {value!r}")
    result = cli_run("export", "--until", value)
    assert (result.exit_code, result.stderr.strip()) == (2, (
        "Error: invalid input: until: expected a month YYYY-MM or an ISO 8601 date-time such "
        f"as 2026-11 (the whole month), {FORMS.removeprefix('such as ')}, got {value!r}"))
    out = json.loads(cli_run("import", "--json", input=json.dumps(dist(recordedAt=value))
                             + "\n").stdout)
    assert out["imported"] == 0
    assert out["problems"] == [
        f"line 1: recordedAt: expected an ISO 8601 date-time {FORMS}, got {value!r}"]
