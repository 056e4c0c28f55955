"""``ynm reindex`` (reference/cli.md §4.19, §8 items 12, 27)."""

from __future__ import annotations

import json
from contextlib import closing

import sqlean

from .conftest import make_record


def test_human(project, cli_run, load):
    load(make_record(), make_record(), make_record(level="distributed", namespace="common"))
    result = cli_run("reindex")
    assert result.exit_code == 0
    assert result.stdout == "personal: 2 memories indexed\nproject: 1 memories indexed\n"


def test_json(project, run_json, load):
    load(make_record())
    out = run_json("reindex")
    assert out == {"personal": 1, "project": 0}
    assert list(out) == ["personal", "project"]


def test_json_layout(project, cli_run):
    assert cli_run("reindex", "--json").stdout == '{\n  "personal": 0,\n  "project": 0\n}\n'


def test_mount(project, run_json, load):
    load(make_record(level="distributed", namespace="common"))
    assert run_json("reindex", "--mount", "project") == {"project": 1}


def test_unknown_mount_is_refused(project, cli_run):
    """The reference prints ``{}``; ynm refuses a mount configured nowhere (exit 2)."""
    result = cli_run("reindex", "--mount", "nope", "--json")
    assert result.exit_code == 2
    assert result.stdout == "" and result.stderr.startswith('Error: no mount "nope"')


def test_rebuilds_a_deleted_cache(project, cli_run, run_json, load, ynm_home):
    a = make_record(content="ledger deploys", summary="ledger deploys")
    load(a)
    before = run_json("recall", "ledger")
    (ynm_home / "index" / "ynm-cache" / "personal.sqlite").unlink()
    assert run_json("reindex", "--mount", "personal") == {"personal": 1}
    after = run_json("recall", "ledger")
    assert [h["memoryId"] for h in after] == [h["memoryId"] for h in before] == [a["id"]]


def test_rebuilds_a_cache_damaged_behind_a_valid_header(project, cli_run, run_json, load,
                                                         ynm_home):
    # pages overwritten but the schema's (the header and the schema stay valid; the schema
    # takes more than the first page): SQLite opens the file and reports SQLITE_CORRUPT only
    # when the damaged pages are read
    records = [make_record(content=f"ledger deploys {n} " + "filler " * 60) for n in range(150)]
    load(*records)
    before = {h["memoryId"] for h in run_json("recall", "ledger", "--limit", "200")}
    assert len(before) == 150
    path = ynm_home / "index" / "ynm-cache" / "personal.sqlite"
    run_json("status")  # the WAL checkpointed into the file on close
    with closing(sqlean.connect(str(path))) as conn:  # 1-based page numbers
        schema_pages = {r[0] - 1 for r in conn.execute(
            "SELECT pageno FROM dbstat WHERE name = 'sqlite_schema'")}
    data = bytearray(path.read_bytes())
    assert len(data) > 8 * 4096
    for page in set(range(1, len(data) // 4096)) - schema_pages:
        data[page * 4096 + 100: page * 4096 + 900] = b"\xa5" * 800
    path.write_bytes(bytes(data))
    # the first command that meets the damage rebuilds the file from git and answers
    damaged = cli_run("list", "--json", "--limit", "200")
    assert damaged.exit_code == 0, damaged.output
    assert {m["memoryId"] for m in json.loads(damaged.stdout)} == before
    assert damaged.stderr.count("the search cache of mount personal") == 1
    assert "is damaged: database disk image is malformed; rebuilding it from git" in damaged.stderr
    path.write_bytes(bytes(data))  # damaged again: reindex rebuilds it just as well
    result = cli_run("reindex", "--mount", "personal")
    assert result.exit_code == 0, result.output
    assert result.stdout == "personal: 150 memories indexed\n"
    after = {h["memoryId"] for h in run_json("recall", "ledger", "--limit", "200")}
    assert after == before


def test_counts_memories_not_records(project, run_json, load):
    from .conftest import ulid

    a = make_record(recordedAt="2026-01-01T00:00:00.000Z")
    ann = make_record(id=ulid(), memoryId=a["id"], op="annotate", content=None, summary=None,
                      tags=["x"], recordedAt="2026-01-02T00:00:00.000Z")
    load(a, ann)
    assert run_json("reindex", "--mount", "personal") == {"personal": 1}


def test_outside_a_repository(tmp_path, cli_run, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert json.loads(cli_run("reindex", "--json").stdout) == {"personal": 0}
