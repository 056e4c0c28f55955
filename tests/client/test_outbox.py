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


def _queue(path: Path, n: int, *contents: str) -> None:
    store = SQLQueueStore(path)
    q = Queue(None, store, owner="harness")
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
    assert doc["pending"] == 4 and doc["refused"] == 0 and doc["store"] == f"sqlite:///{path}"
    assert doc["oldest"].endswith("Z")
    human = cli_run("outbox", "status", "--store", path).stdout
    assert human.startswith("4 queued (oldest ") and ", 0 refused, in sqlite:///" in human

    rows = json.loads(cli_run("outbox", "list", "--store", path, "--json").stdout)
    assert [r["record"]["content"] for r in rows][:3] == ["item 0", "item 1", "item 2"]
    assert {r["state"] for r in rows} == {"queued"}
    assert set(rows[0]) == {"key", "state", "record", "queued", "attempts", "target"}
    assert rows[0]["target"] == f"repo:{project}"
    lines = cli_run("outbox", "list", "--store", path).stdout.splitlines()
    assert len(lines) == 4 and "queued" in lines[0] and lines[0].endswith("Item 0")

    flushed = cli_run("outbox", "flush", "--store", path, "--json")
    assert flushed.exit_code == 0, flushed.stderr
    assert json.loads(flushed.stdout) == {"store": f"sqlite:///{path}", "sent": 3,
                                          "refused": 1, "left": 0}
    assert [r["content"] for r in listed(project) if r.get("namespace") == "factory/h/o/r"] == [
        "item 0", "item 1", "item 2"]
    rows = json.loads(cli_run("outbox", "list", "--store", path, "--json").stdout)
    assert [(r["state"], r["error"][:8]) for r in rows] == [("refused", "refused:")]
    # the refused secret is neither kept in the queue file nor shown; which write it was is
    assert rows[0]["record"]["content"] == WITHHELD
    assert rows[0]["record"]["type"] == "semantic"
    assert "AKIAIOSFODNN7EXAMPLE" not in cli_run("outbox", "list", "--store", path).stdout
    assert b"AKIAIOSFODNN7EXAMPLE" not in path.read_bytes()
    assert json.loads(cli_run("outbox", "status", "--store", path, "--json").stdout)[
        "refused"] == 1


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
    _queue(path, 2)
    url = f"http://127.0.0.1:{free_port()}/mcp"
    result = cli_run("outbox", "flush", "--store", path, "--endpoint", url, "--json")
    assert result.exit_code == 1
    assert json.loads(result.stdout)["left"] == 2
    assert result.stderr.startswith("Error: 2 record(s) left queued")


@pytest.mark.parametrize(("store", "code", "message"), [
    ("missing.sqlite", 1, "Error: no queue store at "),
    ("postgresql+psycopg://u@h:port/db", 2, "Error: invalid input: --store: not a database"),
    ("nosuch+driver://x/y", 2, "Error: invalid input: --store: cannot open"),
    ("postgresql+psycopg://nobody@127.0.0.1:1/none", 1,
     "Error: cannot use queue store postgresql+psycopg://nobody@127.0.0.1:1/none: "),
])
def test_bad_stores_are_clear_errors(tmp_path, cli_run, store, code, message):
    if store.endswith(".sqlite"):
        store = str(tmp_path / store)
    result = cli_run("outbox", "status", "--store", store)
    assert result.exit_code == code
    assert result.stderr.startswith(message) and "Traceback" not in result.stderr
    assert result.stdout == ""


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
