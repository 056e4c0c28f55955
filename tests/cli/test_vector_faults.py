"""Faults of vector search and of the steps after a committed write, through the CLI, the
service and the MCP tools, against a real OpenAI-compatible server on 127.0.0.1
(tests/support/embeddings_server.py).

- An embedder whose dimension changes under the same model name re-embeds: vectors are kept by
  model, endpoint and dimension (Embedder.key), never mixed.
- An embedder that fails (server down, model missing, an error, a timeout) falls back to full
  text with ``warning: vector search unavailable (<reason>); full-text results only`` on stderr,
  and ``ynm status`` (a new process) says vectors are off and why.
- Nothing after a committed append turns a write into a failure: exit 0, a ``warnings`` field,
  the memory stored exactly once.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import jsonl, make_record
from ynm.service.ynm import Ynm

FACTS = {
    "deploy": "Deploys to production go out through Argo CD after the staging canary passes.",
    "standup": "The team standup is at 09:30 every weekday in the Orca room.",
    "backups": "Production database backups run nightly and are kept for 35 days.",
}
FALLBACK = "warning: vector search unavailable ("
FULL_TEXT = "); full-text results only"



def remember(cli_run, content: str) -> dict:
    result = cli_run("remember", "--type", "semantic", "--level", "distributed",
                     "--content", content, "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)


def fill(cli_run) -> dict[str, str]:
    return {key: remember(cli_run, text)["memoryId"] for key, text in FACTS.items()}


def stored_vectors(project: Path) -> tuple[set[int], int, str]:
    """(byte lengths of the project cache's vectors, their count, vec_model)."""
    with Ynm.open(project) as y:
        conn = y.mount("project").cache.conn
        lengths = [r[0] for r in conn.execute("SELECT length(embedding) FROM vectors")]
        model = conn.execute("SELECT value FROM meta WHERE key = 'vec_model'").fetchone()[0]
    return set(lengths), len(lengths), model


def memories_with(cli_run, content: str) -> int:
    listed = cli_run("list", "--json")
    assert listed.exit_code == 0, listed.stderr
    return sum(1 for m in json.loads(listed.stdout) if m["current"]["content"] == content)


# -- a change of dimension ------------------------------------------------------------------


def test_a_dimension_change_re_embeds_for_every_command(project, cli_run, server):
    ids = fill(cli_run)
    assert cli_run("recall", "deploys").exit_code == 0
    assert stored_vectors(project)[0] == {8 * 4}
    server.dim = 16  # the same model name now answers with 16 dimensions

    recall = cli_run("recall", "standup", "--json")
    assert recall.exit_code == 0, recall.stderr
    assert json.loads(recall.stdout)[0]["memoryId"] == ids["standup"]
    assert "(8 dims) to openai-compatible:m@" in recall.stderr and "(16 dims)" in recall.stderr
    assert "warning:" not in recall.stderr
    lengths, count, model = stored_vectors(project)
    assert lengths == {16 * 4} and count == 3 and model.endswith("/v1/embeddings (16 dims)")

    new = remember(cli_run, "Invoices are emailed to customers on the first of the month.")
    assert "warnings" not in new
    context = cli_run("context", "--text", "invoices")
    assert context.exit_code == 0 and "warning:" not in context.stderr
    reindex = cli_run("reindex", "--json")
    assert reindex.exit_code == 0 and json.loads(reindex.stdout)["project"] == 4
    status = json.loads(cli_run("status", "--json").stdout)
    assert status["vectors"]["enabled"] is True
    entry = next(e for e in status["index"] if e["mount"] == "project")
    assert entry["vectors"] == 4 and entry["vectorModel"].endswith("(16 dims)")
    assert stored_vectors(project)[0] == {16 * 4}

    server.dim = 8  # and back: the 8-dimension vectors are still stored under their key
    asked = len(server.seen)
    assert cli_run("recall", "standup").exit_code == 0
    texts = [t for body in server.seen[asked:] for t in body["input"]]
    assert sorted(texts) == sorted(["dimension probe", "standup",
                                    "Invoices are emailed to customers on the first of the "
                                    "month."])  # only the memory never embedded at 8
    assert stored_vectors(project)[0] == {8 * 4}


def test_a_dimension_change_inside_one_process_re_embeds(project, cli_run, server):
    ids = fill(cli_run)
    with Ynm.open(project) as y:  # a long-running process (the MCP server)
        from ynm.model.inputs import RecallQuery

        assert y.recall(RecallQuery(text="deploys"))[0]["memoryId"] == ids["deploy"]
        server.dim = 16
        hits = y.recall(RecallQuery(text="backups nightly", explain=True))
        assert hits[0]["memoryId"] == ids["backups"]
        # vectors took part (a hybrid recall), re-embedded at the new size; the hashed test
        # vectors stand out from no background, so the memory is found by its words
        assert "vector" in hits[0]["explain"]
        assert y.warnings == [] and y.status()["vectors"]["enabled"] is True
        conn = y.mount("project").cache.conn
        assert {r[0] for r in conn.execute("SELECT length(embedding) FROM vectors")} == {64}


# -- an embedder that fails -----------------------------------------------------------------


@pytest.mark.parametrize("fault, reason", [
    ("down", "Connection refused"),
    ("404", "HTTP 404 Not Found: model not found"),
    ("500", "HTTP 500"),
])
def test_a_failing_embedder_falls_back_with_a_warning_and_status_says_so(
        project, cli_run, server, monkeypatch, fault, reason):
    ids = fill(cli_run)
    if fault == "down":
        server.stop()
    else:
        server.fail = int(fault)

    recall = cli_run("recall", "standup")
    assert recall.exit_code == 0
    assert recall.stdout.splitlines()[1].split()[1] == ids["standup"]  # full-text results
    warnings = [line for line in recall.stderr.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1  # once, though two mounts fell back
    assert warnings[0].startswith(FALLBACK) and warnings[0].endswith(FULL_TEXT)
    assert reason in warnings[0]

    as_json = cli_run("recall", "standup", "--json")
    assert as_json.exit_code == 0 and FALLBACK in as_json.stderr
    hits = json.loads(as_json.stdout)  # still the reference's bare array
    assert isinstance(hits, list) and hits[0]["memoryId"] == ids["standup"]

    status = cli_run("status")  # a new process: it reads the failure the recall recorded
    assert status.exit_code == 0
    line = next(s for s in status.stdout.splitlines() if s.startswith("vectors:"))
    assert line.startswith("vectors: off (the last recall fell back to full text: ")
    assert reason in line
    vectors = json.loads(cli_run("status", "--json").stdout)["vectors"]
    assert vectors["enabled"] is False and reason in vectors["reason"]
    assert vectors["failedAt"].endswith("Z")

    for args in (["reindex"], ["context", "--text", "standup"]):
        other = cli_run(*args)
        assert other.exit_code == 0 and other.stderr.count(FALLBACK) == 1, args
    # a write asks no embedder (its similar-memory check is full text): nothing fell back
    out = remember(cli_run, "Releases are tagged on Fridays.")
    assert "warnings" not in out
    assert memories_with(cli_run, "Releases are tagged on Fridays.") == 1

    if fault == "down":
        return
    server.fail = None  # the embedder is back: the next recall uses it and clears the record
    recall = cli_run("recall", "standup")
    assert recall.exit_code == 0 and "warning:" not in recall.stderr
    assert "vectors: on (openai-compatible:m)" in cli_run("status").stdout.splitlines()
    assert "failedAt" not in json.loads(cli_run("status", "--json").stdout)["vectors"]


def test_a_timeout_at_query_time_falls_back_in_the_service_and_the_mcp_tool(
        project, cli_run, server):
    from ynm.model.inputs import RecallQuery
    from ynm.server.tools import run_tool

    ids = fill(cli_run)
    with Ynm.open(project) as y:
        assert y.recall(RecallQuery(text="standup"))[0]["memoryId"] == ids["standup"]
        assert y.warnings == []
        y.embedder.timeout_s = 0.2
        server.delay = 1.0
        hits = y.recall(RecallQuery(text="the Orca room"))
        assert hits[0]["memoryId"] == ids["standup"]
        assert len(y.warnings) == 1 and "timed out" in y.warnings[0]
        assert y.status()["vectors"]["enabled"] is False

        out = run_tool(y, "memory_recall", {"text": "weekday standup"})
        assert out.data[0]["memoryId"] == ids["standup"]
        assert "Warning: vector search unavailable (" in out.guidance
        assert "full-text results only" in out.guidance
        assert y.warnings == []  # told once, to this call


def test_full_text_by_choice_says_nothing(project, cli_run, monkeypatch):
    monkeypatch.setenv("YNM_EMBEDDER", "none")
    fill(cli_run)
    recall = cli_run("recall", "standup")
    assert recall.exit_code == 0 and recall.stderr == ""
    assert "vectors: off (embedder is none" in cli_run("status").stdout


# -- steps after a committed write ----------------------------------------------------------


@pytest.fixture
def cache_update_fails(monkeypatch):
    """Every cache update after an append fails, as a locked or broken cache file would."""
    import sqlean

    from ynm.index.cache import MountCache

    def boom(self, *args, **kwargs):
        raise sqlean.OperationalError("database is locked")

    monkeypatch.setattr(MountCache, "apply_append", boom)


CACHE_WARNING = "warning: saved, but the search cache of mount project was not updated ("


@pytest.mark.parametrize("command", ["remember", "supersede", "annotate", "forget", "pin",
                                     "promote", "import"])
def test_a_write_whose_cache_update_fails_succeeds_once(project, cli_run, monkeypatch, tmp_path,
                                                       command):
    personal = cli_run("remember", "--type", "semantic", "--content", "Kept for promote",
                       "--json")
    target = json.loads(cli_run("remember", "--type", "semantic", "--level", "distributed",
                                "--content", "An existing memory", "--json").stdout)["memoryId"]
    before = len(cli_run("export").stdout.splitlines())
    import sqlean

    import ynm.index.cache as cache_module

    def boom(self, *args, **kwargs):
        raise sqlean.OperationalError("database is locked")

    apply_append = cache_module.MountCache.apply_append
    monkeypatch.setattr(cache_module.MountCache, "apply_append", boom)
    args = {
        "remember": ["remember", "--type", "semantic", "--level", "distributed",
                     "--content", "Releases are tagged on Fridays"],
        "supersede": ["supersede", "--memory-id", target, "--content", "A new version"],
        "annotate": ["annotate", "--memory-id", target, "--tags", "x"],
        "forget": ["forget", "--memory-id", target],
        "pin": ["pin", target],
        "promote": ["promote", json.loads(personal.stdout)["memoryId"]],
        "import": ["import", tmp_path / "in.jsonl"],
    }[command]
    if command == "import":
        (tmp_path / "in.jsonl").write_text(jsonl(make_record(level="distributed",
                                                             namespace="common")))
    result = cli_run(*args, "--json")
    assert result.exit_code == 0, result.stderr
    assert result.stderr.count(CACHE_WARNING) == 1
    out = json.loads(result.stdout)
    assert len(out["warnings"]) == 1 and "database is locked" in out["warnings"][0]
    assert "memoryId" in out or out.get("imported") == 1

    monkeypatch.setattr(cache_module.MountCache, "apply_append", apply_append)
    # The record is in git exactly once and the next read catches the cache up.
    assert len(cli_run("export").stdout.splitlines()) == before + 1
    if command == "remember":
        assert memories_with(cli_run, "Releases are tagged on Fridays") == 1
        assert cli_run("recall", "releases", "--json").stdout.count('"memoryId"') == 1


def test_a_failing_similar_memory_check_is_a_warning(project, cli_run, monkeypatch):
    remember(cli_run, "Deploys go out on Tuesdays")

    def boom(self, memory_id, content, **_):
        raise RuntimeError("similar check broke")

    monkeypatch.setattr(Ynm, "similar_guidance", boom)
    out = remember(cli_run, "Deploys go out on Tuesdays after lunch")
    assert out["warnings"] == ["saved, but looking for similar memories failed "
                               "(RuntimeError: similar check broke)"]
    assert memories_with(cli_run, "Deploys go out on Tuesdays after lunch") == 1


def test_the_mcp_write_tools_report_success_with_warnings(project, cache_update_fails):
    from ynm.server.tools import run_tool

    with Ynm.open(project) as y:
        out = run_tool(y, "memory_remember", {"type": "semantic", "level": "distributed",
                                              "content": "Builds run on the big runner"})
        assert out.data["memoryId"] and len(out.data["warnings"]) == 1
        assert "Warning: saved, but the search cache of mount project" in out.guidance
        memory_id = out.data["memoryId"]
        for name, arguments in [("memory_annotate", {"memoryId": memory_id, "tags": ["ci"]}),
                                ("memory_supersede", {"memoryId": memory_id,
                                                      "content": "Builds run on runner 2"}),
                                ("memory_forget", {"memoryId": memory_id})]:
            out = run_tool(y, name, arguments)
            assert out.data["memoryId"] == memory_id and len(out.data["warnings"]) == 1
            assert out.guidance.count("Warning: saved, but") == 1
