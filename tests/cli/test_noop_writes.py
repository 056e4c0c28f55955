"""A write that would change nothing writes nothing: no record, no commit, the result says
``unchanged`` (exit 0); a real change through the same command still writes. Covers annotate,
pin, pin --unpin, review clear, forget, supersede and purge through the CLI (the MCP tools are
in tests/server/test_tools.py). Also: promote of a working memory (seed 001)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest


def ok(result) -> str:
    assert result.exit_code == 0, result.stderr
    return result.stdout


def js(result):
    return json.loads(ok(result))


def commits(ynm_home: Path, project: Path) -> int:
    """Commits on every ynm shard ref of the personal store and the project repository."""
    total = 0
    for repo in (ynm_home / "store.git", project):
        out = subprocess.run(["git", "-C", str(repo), "rev-list", "--count",
                              "--glob=refs/notes/ynm"], capture_output=True, text=True)
        total += int(out.stdout.strip() or 0) if out.returncode == 0 else 0
    return total


def records(cli_run, memory_id: str) -> int:
    return sum(json.loads(line)["memoryId"] == memory_id
               for line in ok(cli_run("export")).splitlines())


@pytest.fixture
def memory(project, cli_run) -> str:
    """A personal semantic memory tagged ``deploy``, linked to nothing, importance 0.8."""
    return js(cli_run("remember", "--type", "semantic", "--content", "Deploys go out on Tuesdays",
                      "--tags", "deploy", "--importance", "0.8", "--json"))["memoryId"]


# (arguments of a write that changes nothing on ``memory``, the note it reports, and the
#  arguments of a write through the same command that does change it)
NO_OPS = [
    (["pin", "{id}", "--unpin"], "already unpinned", ["pin", "{id}"]),
    (["annotate", "{id}", "--tags", "deploy"], "nothing to change",
     ["annotate", "{id}", "--tags", "deploy,ops"]),
    (["annotate", "{id}", "--importance", "0.8", "--no-pinned", "--no-needs-review",
      "--confidence", "1"], "nothing to change", ["annotate", "{id}", "--importance", "0.9"]),
    (["annotate", "{id}", "--reason", "looked at it"], "nothing to change",
     ["annotate", "{id}", "--needs-review", "--reason", "looked at it"]),
    (["review", "clear", "{id}"], "not flagged for review",
     ["annotate", "{id}", "--data", '{"checked": true}']),
    (["supersede", "{id}", "--content", "Deploys go out on Tuesdays"],
     "same content and fields",
     ["supersede", "{id}", "--content", "Deploys go out on Tuesdays", "--summary", "Tuesdays"]),
    (["supersede", "{id}", "--content", "Deploys go out on Tuesdays", "--tags", "deploy",
      "--importance", "0.8"], "same content and fields",
     ["supersede", "{id}", "--content", "Deploys go out on Tuesdays", "--tags", "release"]),
]


@pytest.mark.parametrize("noop, note, change", NO_OPS)
def test_a_write_that_changes_nothing_writes_nothing(project, cli_run, ynm_home, memory,
                                                     noop, note, change):
    before = (commits(ynm_home, project), records(cli_run, memory))
    fill = lambda args: [a.replace("{id}", memory) for a in args]  # noqa: E731
    out = ok(cli_run(*fill(noop)))
    assert out.strip() == f"unchanged: {memory} {note}"
    assert js(cli_run(*fill(noop), "--json")) == {
        "memoryId": memory, "mount": "personal", "unchanged": True, "note": note}
    assert (commits(ynm_home, project), records(cli_run, memory)) == before
    result = js(cli_run(*fill(change), "--json"))
    assert "unchanged" not in result and result["recordId"] != memory
    assert (commits(ynm_home, project), records(cli_run, memory)) == (before[0] + 1,
                                                                       before[1] + 1)


def test_second_pin_review_clear_and_forget_write_nothing(project, cli_run, ynm_home, memory):
    ok(cli_run("pin", memory))
    ok(cli_run("annotate", memory, "--needs-review"))
    ok(cli_run("review", "clear", memory))
    ok(cli_run("forget", memory, "--reason", "wrong"))
    before = (commits(ynm_home, project), records(cli_run, memory))
    assert before[1] == 5
    assert ok(cli_run("pin", memory)).strip() == f"unchanged: {memory} already pinned"
    assert ok(cli_run("review", "clear", memory)).strip() == (
        f"unchanged: {memory} not flagged for review")
    assert ok(cli_run("forget", memory, "--reason", "again")).strip() == (
        f"unchanged: {memory} already forgotten")
    assert (commits(ynm_home, project), records(cli_run, memory)) == before
    # a supersede of a forgotten memory revives it, so the same content is a change
    ok(cli_run("supersede", memory, "--content", "Deploys go out on Tuesdays"))
    assert records(cli_run, memory) == 6
    assert js(cli_run("show", memory, "--json"))["tombstoned"] is False


def test_a_dream_mark_is_still_written(project, cli_run, ynm_home, memory):
    before = commits(ynm_home, project)
    ok(cli_run("annotate", memory, "--data", '{"dreamed": "v1"}'))
    ok(cli_run("annotate", memory, "--data", '{"dreamed": "v1"}'))
    assert commits(ynm_home, project) == before + 2


def test_a_second_purge_reports_already_purged(project, cli_run, ynm_home, memory):
    first = js(cli_run("purge", memory, "--reason", "gdpr", "--yes", "--json"))
    assert first == {"memoryId": memory, "removed": 1, "mount": "personal"}
    before = commits(ynm_home, project)
    second = cli_run("purge", memory, "--reason", "gdpr", "--yes")
    assert second.exit_code == 0 and second.stdout.strip() == (
        f"unchanged: {memory} already purged")
    assert js(cli_run("purge", memory, "--reason", "gdpr", "--yes", "--json")) == {
        "memoryId": memory, "removed": 0, "mount": "personal", "unchanged": True,
        "note": "already purged"}
    assert commits(ynm_home, project) == before
    never = "01KZZZZZZZZZZZZZZZZZZZZZZZ"  # never existed: still an unknown memory
    r = cli_run("purge", never, "--reason", "x", "--yes")
    assert r.exit_code == 1 and f"unknown memory {never}" in r.stderr


def test_a_same_content_supersede_renews_working_memory(project, cli_run, ynm_home):
    mid = _working(cli_run)
    before = commits(ynm_home, project)
    out = js(cli_run("supersede", mid, "--content", "Bisect points at the cache refactor",
                     "--json"))
    assert "unchanged" not in out and commits(ynm_home, project) == before + 1
    shown = js(cli_run("show", mid, "--json"))
    assert shown["updatedAt"] > shown["createdAt"] and shown["current"]["ttl"] == "PT8H"
    # an annotate with nothing new is still nothing, working memory or not
    assert ok(cli_run("annotate", mid, "--tags", "ci")).strip() == (
        f"unchanged: {mid} nothing to change")
    assert commits(ynm_home, project) == before + 1


def _working(cli_run, *more: str) -> str:
    return js(cli_run("remember", "--type", "working", "--namespace", "session/s1",
                      "--content", "Bisect points at the cache refactor", "--subject",
                      "topic:ci", "--tags", "ci", "--importance", "0.7", *more,
                      "--json"))["memoryId"]


@pytest.mark.parametrize("more, tags", [((), ["ci"]), (("--tags", "promote"), ["ci"])])
def test_promote_of_a_working_memory_makes_a_lasting_episodic_copy(project, cli_run, more,
                                                                    tags):
    mid = _working(cli_run, *more)
    copy_id = js(cli_run("promote", mid, "--json"))["memoryId"]
    copy = js(cli_run("show", copy_id, "--json"))
    assert (copy["type"], copy["level"], copy["namespace"]) == ("episodic", "distributed",
                                                                "common")
    assert (copy["subject"], copy["tags"], copy["importance"]) == ("topic:ci", tags, 0.7)
    assert "ttl" not in copy["current"]
    assert copy["current"]["content"] == "Bisect points at the cache refactor"
    assert [(link["rel"], link["to"]) for link in copy["links"]] == [("derives-from", mid)]
    original = js(cli_run("show", mid, "--json"))  # untouched: still working, still expiring
    assert (original["type"], original["namespace"], original["versions"]) == (
        "working", "session/s1", 1)
    assert original["current"]["ttl"] == "PT8H"
    assert [m["memoryId"] for m in js(cli_run("list", "--level", "distributed", "--json"))
            ] == [copy_id]


def test_a_second_promote_makes_no_second_copy(project, cli_run, git):
    """A memory whose promoted copy is live is not copied again; once the copy is forgotten,
    promote copies it anew."""
    import json as _json

    mid = _json.loads(cli_run("remember", "--type", "semantic", "--content",
                              "I prefer small PRs", "--json").stdout)["memoryId"]
    first = _json.loads(cli_run("promote", mid, "--json").stdout)
    before = git(project, "rev-list", "--count", "--glob=refs/notes/ynm")
    again = cli_run("promote", mid.lower())
    assert again.exit_code == 0
    assert again.stdout.strip() == (f"unchanged: {mid} is already promoted: "
                                    f"{first['memoryId']} in project")
    out = _json.loads(cli_run("promote", mid, "--json").stdout)
    assert out == {"memoryId": first["memoryId"], "mount": "project", "unchanged": True,
                   "note": f"{mid} is already promoted"}
    assert git(project, "rev-list", "--count", "--glob=refs/notes/ynm") == before
    assert cli_run("forget", first["memoryId"]).exit_code == 0
    third = _json.loads(cli_run("promote", mid, "--json").stdout)
    assert third["memoryId"] not in (first["memoryId"], mid) and "unchanged" not in third
