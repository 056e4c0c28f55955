"""``ynm export`` (reference/cli.md §4.6, §3.5, §8 items 3, 24)."""

from __future__ import annotations

import json

import pytest

from .conftest import jsonl, make_record, ulid


def lines(result) -> list[dict]:
    assert result.exit_code == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_empty_store(project, cli_run):
    result = cli_run("export")
    assert result.exit_code == 0
    assert result.stdout == ""


def test_writes_compact_jsonl_of_every_record(project, cli_run, load):
    a = make_record(recordedAt="2026-01-01T00:00:00.000Z")
    sup = make_record(id=ulid(), memoryId=a["id"], op="supersede", content="new",
                      summary="new", recordedAt="2026-01-02T00:00:00.000Z",
                      links=[{"rel": "supersedes", "to": a["id"]}])
    tomb = make_record(id=ulid(), memoryId=a["id"], op="tombstone", content=None, summary=None,
                       recordedAt="2026-01-03T00:00:00.000Z", reason="wrong")
    load(a, sup, tomb)
    result = cli_run("export")
    # the same bytes as the input (compact JSON in the record's key order), one per line
    assert result.stdout == jsonl(a, sup, tomb)
    assert all("mount" not in r for r in lines(result))
    assert [r["op"] for r in lines(result)] == ["create", "supersede", "tombstone"]


def test_json_flag_is_ignored(project, cli_run, load):
    load(make_record(), make_record(level="distributed", namespace="common"))
    plain = cli_run("export").stdout
    assert cli_run("export", "--json").stdout == plain
    assert len(plain.splitlines()) == 2


def test_level(project, cli_run, load):
    a = make_record()
    b = make_record(level="distributed", namespace="common")
    load(a, b)
    assert [r["id"] for r in lines(cli_run("export", "--level", "distributed"))] == [b["id"]]
    assert [r["id"] for r in lines(cli_run("export", "--level", "personal"))] == [a["id"]]


def test_mount(project, cli_run, load):
    a = make_record()
    b = make_record(level="distributed", namespace="common")
    load(a, b)
    assert [r["id"] for r in lines(cli_run("export", "--mount", "project"))] == [b["id"]]


def test_type(project, cli_run, load):
    a = make_record(type="episodic")
    b = make_record()
    load(a, b)
    assert [r["id"] for r in lines(cli_run("export", "--type", "episodic"))] == [a["id"]]
    assert cli_run("export", "--type", "fact").exit_code == 2


def test_namespace_prefix(project, cli_run, load):
    a = make_record(namespace="org/my_team/x")
    b = make_record(namespace="org/myxteam/x")
    c = make_record(namespace="org/my_team")
    load(a, b, c)
    got = {r["id"] for r in lines(cli_run("export", "--namespace", "org/my_team/"))}
    assert got == {a["id"], c["id"]}


def test_since_until_prune_whole_months(project, cli_run, load):
    jan = make_record(recordedAt="2026-01-31T00:00:00.000Z")
    feb = make_record(recordedAt="2026-02-01T00:00:00.000Z")
    mar = make_record(recordedAt="2026-03-15T00:00:00.000Z")
    load(jan, feb, mar)
    # month buckets: since 2026-02-20 still keeps the whole of February
    got = [r["id"] for r in lines(cli_run("export", "--since", "2026-02-20"))]
    assert sorted(got) == sorted([feb["id"], mar["id"]])
    got = [r["id"] for r in lines(cli_run("export", "--until", "2026-02-01T00:00:00Z"))]
    assert sorted(got) == sorted([jan["id"], feb["id"]])
    assert cli_run("export", "--since", "garbage").exit_code == 2


def test_needs_review_accepted_and_not_applied(project, cli_run, load):
    load(make_record(), make_record())
    assert len(lines(cli_run("export", "--needs-review"))) == 2
    assert len(lines(cli_run("export", "--no-needs-review"))) == 2


def test_round_trip_into_another_home(project, cli_run, tmp_path, monkeypatch, load):
    a = make_record()
    b = make_record(level="distributed", namespace="common")
    load(a, b)
    dump = tmp_path / "dump.jsonl"
    dump.write_text(cli_run("export", "--level", "personal").stdout)
    monkeypatch.setenv("YNM_HOME", str(tmp_path / "other-home"))
    out = cli_run("import", dump, "--json")
    assert json.loads(out.stdout) == {"imported": 1, "problems": []}
    assert cli_run("export", "--level", "personal").stdout == dump.read_text()


def test_export_since_accepts_a_month(project, cli_run):
    result = cli_run("export", "--since", "2026-11", "--until", "2026-12")
    assert result.exit_code == 0, result.stderr


MONTH_OR = "expected a month YYYY-MM or an ISO 8601 date-time"
MONTH_OR_DATETIME = (
    f"{MONTH_OR} such as 2026-11 (the whole month), "
    "2026-11-30T12:00:00Z, 2026-11-30T17:30:00.250+05:30, 20261130T120000Z (basic format) or a "
    "date 2026-11-30 (midnight UTC)")


@pytest.mark.parametrize(("flag", "value", "said"), [
    # a month that does not exist: the value, and why
    ("--since", "2026-13", f"{MONTH_OR}, got '2026-13': no such month"),
    ("--until", "2026-00", f"{MONTH_OR}, got '2026-00': no such month"),
    ("--since", "2026-02-30", f"{MONTH_OR}, got '2026-02-30': no such day or time"),
    # any other form: every form export takes (a month too), an example of each, the value
    ("--since", "2026", f"{MONTH_OR_DATETIME}, got '2026'"),
    ("--until", "last month", f"{MONTH_OR_DATETIME}, got 'last month'"),
    ("--until", "2026/11", f"{MONTH_OR_DATETIME}, got '2026/11'"),
])
def test_a_bad_since_or_until_names_the_value_and_the_forms_export_takes(project, cli_run,
                                                                         flag, value, said):
    result = cli_run("export", flag, value)
    field = flag.removeprefix("--")
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", f"Error: invalid input: {field}: {said}\n")


def test_an_unknown_mount_on_a_read_is_refused(project, cli_run):
    result = cli_run("export", "--mount", "nope")
    assert result.exit_code == 2 and result.stdout == ""
    assert result.stderr.startswith('Error: no mount "nope" (have: personal, project)')


def test_a_reader_that_stops_early_ends_the_command_quietly(project, cli_run, load):
    """``ynm export | head -1`` and ``ynm list --json | head``: the reader closing the pipe
    early ends the command with exit 0 and nothing on stderr (no broken-pipe traceback)."""
    import subprocess
    import sys

    load(*[make_record(content=f"fact {i} " + "x" * 200) for i in range(3000)])
    for args in (["export"], ["list", "--json", "--limit", "3000"]):
        proc = subprocess.Popen([sys.executable, "-m", "ynm.cli", *args],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        assert proc.stdout.readline()  # one line, then the reader goes away
        proc.stdout.close()
        _, err = proc.communicate(timeout=120)
        assert (proc.returncode, err.decode()) == (0, ""), args
