"""``ynm outbox status|list|flush``: the operator's view of a queue store (path or URL), with
``--json``, clear errors and the usual exit codes (reference/cli.md §2)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from tests.client.conftest import listed
from ynm.client import Queue, Record, SQLQueueStore
from ynm.client.queue import WITHHELD


def _queue(path: Path, n: int, *contents: str, target: str | None = None) -> None:
    store = SQLQueueStore(path)
    q = Queue(None, store, owner="harness", target=target)
    for i in range(n):
        q.remember(Record(type="episodic", namespace="factory/h/o/r", content=f"item {i}",
                          summary=f"Item {i}"))
    for content in contents:
        q.remember(Record(type="semantic", level="distributed", content=content))
    store.close()


def test_status_list_and_flush(project, tmp_path, cli_run):
    path = tmp_path / "q.sqlite"
    _queue(path, 3, "token AKIAIOSFODNN7EXAMPLE")
    status = cli_run("outbox", "status", "--store", path, "--json")
    assert status.exit_code == 0, status.stderr
    doc = json.loads(status.stdout)
    # the record holding a secret was refused at once, never queued
    assert doc["pending"] == 3 and doc["refused"] == 1 and doc["store"] == f"sqlite:///{path}"
    assert doc["oldest"].endswith("Z")
    assert doc["lastRefusal"] == "refused: content matches 1 secret detector: AWS Access Key"
    human = cli_run("outbox", "status", "--store", path).stdout
    assert human.startswith("3 queued (oldest ") and ", 1 refused (latest: " in human

    rows = json.loads(cli_run("outbox", "list", "--store", path, "--json").stdout)
    assert [r["record"]["content"] for r in rows][:3] == ["item 0", "item 1", "item 2"]
    assert [r["state"] for r in rows] == ["queued"] * 3 + ["refused"]
    assert set(rows[0]) == {"key", "state", "record", "queued", "attempts", "target"}
    assert rows[0]["target"] == f"repo:{project}"
    lines = cli_run("outbox", "list", "--store", path).stdout.splitlines()
    assert len(lines) == 4 and "queued" in lines[0] and lines[0].endswith("Item 0")
    assert f"  for repo:{project}  " in lines[0]

    flushed = cli_run("outbox", "flush", "--store", path, "--json")
    assert flushed.exit_code == 0, flushed.stderr
    assert json.loads(flushed.stdout) == {"store": f"sqlite:///{path}", "sent": 3,
                                          "refused": 0, "left": 0, "stopped": None}
    assert [r["content"] for r in listed(project) if r.get("namespace") == "factory/h/o/r"] == [
        "item 0", "item 1", "item 2"]
    rows = json.loads(cli_run("outbox", "list", "--store", path, "--json").stdout)
    assert [(r["state"], r["error"][:8]) for r in rows] == [("refused", "refused:")]
    # the refused secret is neither kept in the queue file nor shown; which write it was is
    assert rows[0]["record"]["content"] == WITHHELD
    assert rows[0]["record"]["type"] == "semantic"
    assert "AKIAIOSFODNN7EXAMPLE" not in cli_run("outbox", "list", "--store", path).stdout
    assert b"AKIAIOSFODNN7EXAMPLE" not in path.read_bytes()
    status = json.loads(cli_run("outbox", "status", "--store", path, "--json").stdout)
    assert status["refused"] == 1 and status["lastRefusal"].startswith("refused: content ")


def test_flush_without_ynm_leaves_the_queue_and_exits_1(tmp_path, cli_run, monkeypatch):
    path = tmp_path / "q.sqlite"
    _queue(path, 2)
    plain = tmp_path / "plain"
    plain.mkdir()
    monkeypatch.chdir(plain)  # no repository and no user store here
    result = cli_run("outbox", "flush", "--store", path)
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: ynm is not available here: no ynm store: ")
    assert json.loads(cli_run("outbox", "status", "--store", path, "--json").stdout)[
        "pending"] == 2


def test_flush_to_an_endpoint_that_is_down_exits_1_and_keeps_all(tmp_path, cli_run):
    from tests.client.conftest import free_port

    path = tmp_path / "q.sqlite"
    url = f"http://127.0.0.1:{free_port()}/mcp"
    _queue(path, 2, target=f"http:{url}")
    _queue(path, 1)  # meant for the store of this directory, not for the endpoint
    result = cli_run("outbox", "flush", "--store", path, "--endpoint", url, "--json")
    assert result.exit_code == 1
    doc = json.loads(result.stdout)
    assert doc["left"] == 3 and doc["stopped"].startswith(url)
    # the flush says why it stopped: the outage, in the server's words, and what it left
    assert result.stderr.startswith(f"Error: 3 records left queued: stopped: {url}: ")
    assert "; 1 meant for another store (see `ynm outbox list`)" in result.stderr


@pytest.mark.parametrize(("store", "code", "message"), [
    ("missing.sqlite", 2, "Error: invalid input: --store: no queue store at "),
    ("sqlite:///missing/dir/q.sqlite", 2, "Error: invalid input: --store: no queue store at "),
    ("postgresql+psycopg://u@h:port/db", 2, "Error: invalid input: --store: not a database"),
    ("nosuch+driver://x/y", 2,
     "Error: invalid input: --store: unknown database scheme 'nosuch+driver'"),
    ("postgresql+psycopg://nobody@127.0.0.1:1/none", 1,
     "Error: cannot use queue store postgresql+psycopg://nobody@127.0.0.1:1/none: "),
])
def test_bad_stores_are_clear_errors(tmp_path, cli_run, store, code, message):
    if store.endswith(".sqlite"):
        store = store.replace("sqlite:///", f"sqlite:///{tmp_path}/") if "://" in store \
            else str(tmp_path / store)
    result = cli_run("outbox", "status", "--store", store)
    assert result.exit_code == code
    assert result.stderr.startswith(message) and "Traceback" not in result.stderr
    assert result.stdout == ""
    assert not (tmp_path / "missing").exists() and not (tmp_path / "missing.sqlite").exists()


def test_every_command_refuses_a_store_that_is_not_one(tmp_path, cli_run, project):
    """Each malformed or missing store, in each operator command: exit 2, a message naming
    the problem, no traceback, nothing created."""
    from tests.client.test_queue import _bad_stores

    cases = _bad_stores(tmp_path)
    cases["missing file"] = (str(tmp_path / "none.sqlite"), f"no queue store at {tmp_path}")
    cases["missing file URL"] = (f"sqlite:///{tmp_path / 'none.sqlite'}",
                                 f"no queue store at {tmp_path}")
    cases["missing directory"] = (str(tmp_path / "no" / "q.sqlite"), "no queue store at ")
    cases["missing directory URL"] = (f"sqlite:///{tmp_path / 'no' / 'q.sqlite'}",
                                      "no queue store at ")
    for action in (["status"], ["list"], ["flush"], ["drop", "--refused", "--yes"],
                   ["retry", "--refused"]):
        for kind, (arg, message) in cases.items():
            result = cli_run("outbox", *action, "--store", arg)
            assert (result.exit_code, result.stdout) == (2, ""), (action, kind, result.stderr)
            assert result.stderr.startswith("Error: invalid input: --store: "), (action, kind)
            assert message in result.stderr and "Traceback" not in result.stderr, (action, kind)
    assert not (tmp_path / "no").exists() and not (tmp_path / "none.sqlite").exists()


def test_a_record_no_mount_can_take_is_refused_and_the_reason_shown(tmp_path, cli_run,
                                                                     monkeypatch):
    """Outside any repository only the user's personal store is there: a distributed record
    can never be written, so flush moves it aside with ynm's reason instead of keeping it."""
    plain = tmp_path / "plain"
    plain.mkdir()
    monkeypatch.chdir(plain)
    assert cli_run("remember", "--type", "episodic", "--content", "a personal note").exit_code == 0
    path = tmp_path / "q.sqlite"
    store = SQLQueueStore(path)
    q = Queue(None, store, owner="harness", target="user")
    q.remember(Record(type="episodic", level="distributed", content="shared outcome"))
    q.remember(Record(type="episodic", content="personal outcome"))
    store.close()
    flushed = cli_run("outbox", "flush", "--store", path, "--json")
    assert flushed.exit_code == 1  # a record was refused during this flush: it says so
    assert flushed.stderr == ("Error: 1 record refused by ynm during this flush, kept aside "
                              "(`ynm outbox retry` once fixed, or `ynm outbox drop`) (see "
                              "`ynm outbox list`)\n")
    assert json.loads(flushed.stdout) == {"store": f"sqlite:///{path}", "sent": 1,
                                          "refused": 1, "left": 0, "stopped": None}
    [row] = json.loads(cli_run("outbox", "list", "--store", path, "--json").stdout)
    assert row["state"] == "refused" and row["error"].startswith("no distributed mount: ")
    assert "claimedBy" not in row and "claimedAt" not in row
    line = cli_run("outbox", "list", "--store", path).stdout
    assert "  refused: no distributed mount: " in line and "claimed" not in line
    status = cli_run("outbox", "status", "--store", path).stdout
    assert status.startswith("0 queued, 1 refused (latest: no distributed mount: ")


def test_list_shows_each_records_state(tmp_path, cli_run):
    from ynm.client.queue import QUEUE_PREFIX, REFUSED_PREFIX

    path = tmp_path / "q.sqlite"
    _queue(path, 2)
    store = SQLQueueStore(path)
    first = store.keys(QUEUE_PREFIX)[0]
    text, version = store.get(first)
    doc = json.loads(text) | {"claimedBy": "w7", "claimedAt": "2026-12-01T08:00:00.000000Z"}
    assert store.compare_and_set(first, json.dumps(doc), version)
    # a refused document written before refusals dropped their claim: still not claimed
    store.create(REFUSED_PREFIX + "01OLD", json.dumps(doc | {"error": "invalid input: x"}))
    store.close()
    lines = cli_run("outbox", "list", "--store", path).stdout.splitlines()
    assert [line.split("  ")[1] for line in lines] == [
        "claimed by w7 since 2026-12-01T08:00:00.000000Z", "queued", "refused: invalid input: x"]
    rows = json.loads(cli_run("outbox", "list", "--store", path, "--json").stdout)
    assert rows[0]["claimedBy"] == "w7" and "claimedBy" not in rows[2]


def _refused_store(path: Path, n: int) -> list[str]:
    """A store with ``n`` refused records and one queued; the refused keys."""
    from ynm.client.queue import REFUSED_PREFIX

    class Refusing:
        target = "user"

        def remember(self, record):
            from ynm.client import Rejected

            raise Rejected("invalid input: never")

    store = SQLQueueStore(path)
    q = Queue(Refusing(), store, owner="harness")
    for i in range(n):
        assert q.remember(Record(type="episodic", content=f"bad {i}")) == "refused"
    Queue(None, store, owner="harness", target="user").remember(
        Record(type="episodic", content="waiting"))
    keys = store.keys(REFUSED_PREFIX)
    store.close()
    return keys


def test_drop_removes_refused_records(tmp_path, cli_run, monkeypatch):
    import ynm.cli.outbox as outbox_cli

    path = tmp_path / "q.sqlite"
    keys = _refused_store(path, 4)

    def states():
        rows = json.loads(cli_run("outbox", "list", "--store", path, "--json").stdout)
        return [r["state"] for r in rows]

    # not on a terminal: --yes is required, and nothing goes without it
    result = cli_run("outbox", "drop", keys[0], "--store", path)
    assert result.exit_code == 2
    assert result.stderr == ("Error: dropping records is irreversible; re-run with "
                             "--yes to confirm\n")
    for args, problem in (([], "drop needs the ids"), ([keys[0], "--refused"], "not both"),
                          (["status", keys[0]], "only apply to drop")):
        argv = ["outbox", *(args if args[:1] == ["status"] else ["drop", *args])]
        result = cli_run(*argv, "--store", path, "--yes")
        assert result.exit_code == 2 and problem in result.stderr, argv
    queued = cli_run("outbox", "list", "--store", path, "--json")
    queued_key = json.loads(queued.stdout)[0]["key"]
    result = cli_run("outbox", "drop", keys[0], queued_key, "--store", path, "--yes")
    assert result.exit_code == 2 and "it is queued (for user): only refused" in result.stderr
    assert states() == ["queued"] + ["refused"] * 4  # a bad id dropped nothing

    result = cli_run("outbox", "drop", keys[0], keys[1].rsplit("/", 1)[1], "--store", path,
                     "--yes", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout) == {"store": f"sqlite:///{path}", "dropped": keys[:2]}
    assert states() == ["queued", "refused", "refused"]

    # on a terminal it asks; no keeps them
    monkeypatch.setattr(outbox_cli, "_terminal", lambda: True)
    result = cli_run("outbox", "drop", "--refused", "--store", path, input="n\n")
    assert result.exit_code == 1 and "Error: nothing dropped" in result.stderr
    assert "Drop 2 refused records from sqlite:///" in result.stderr
    assert states() == ["queued", "refused", "refused"]
    result = cli_run("outbox", "drop", "--refused", "--store", path, input="y\n")
    assert result.exit_code == 0
    assert result.stdout == f"dropped 2 records\n  {keys[2]}\n  {keys[3]}\n"
    assert keys[2] not in result.stderr  # the keys are printed once, on stdout
    assert states() == ["queued"]


def test_default_store_and_the_real_executable(project, ynm_home):
    _queue(ynm_home / "queue.sqlite", 1)
    out = subprocess.run(["ynm", "outbox", "status", "--json"], cwd=project,
                         capture_output=True, text=True, timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["pending"] == 1
    out = subprocess.run(["ynm", "outbox", "flush"], cwd=project, capture_output=True,
                         text=True, timeout=120, check=False)
    assert (out.returncode, out.stdout) == (0, "sent 1, refused 0, 0 left queued\n")


def test_endpoint_only_applies_to_flush(tmp_path, cli_run):
    result = cli_run("outbox", "status", "--endpoint", "http://127.0.0.1:1/mcp")
    assert result.exit_code == 2
    assert "--endpoint and --token only apply to flush" in result.stderr
    assert cli_run("outbox", "drain").exit_code == 2


def test_a_postgresql_database_without_the_queue_is_refused(postgres_url, cli_run):
    result = cli_run("outbox", "list", "--store", postgres_url)
    assert result.exit_code == 2
    assert result.stderr == (f"Error: invalid input: --store: {postgres_url} is not a queue "
                             "store (no ynm_client_queue table)\n")
    import sqlalchemy as sa

    engine = sa.create_engine(postgres_url)
    assert not sa.inspect(engine).has_table("ynm_client_queue")  # looking created nothing
    engine.dispose()
    SQLQueueStore(postgres_url).create("memory/refused/01A", '{"error": "invalid input: x"}')
    result = cli_run("outbox", "status", "--store", postgres_url, "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["lastRefusal"] == "invalid input: x"
