"""A count printed in a message agrees with its noun, for 0, 1 and 2 (``0 records``,
``1 record``, ``2 records``); the reference's literal templates stay as they are
(``imported <n> record(s)``, ``<n> shard(s)`` in status, ``<n> memories indexed``: reference/
cli.md §12)."""

from __future__ import annotations

import json

import pytest

from tests.support.expired import import_expired_working
from ynm.model.words import counted

from .conftest import make_record


@pytest.mark.parametrize("n,one,many,said", [
    (0, "record", None, "0 records"), (1, "record", None, "1 record"),
    (2, "record", None, "2 records"), (0, "memory", "memories", "0 memories"),
    (1, "memory", "memories", "1 memory"), (2, "memory", "memories", "2 memories"),
    (1, "bad line", None, "1 bad line"), (12, "fast-forward", None, "12 fast-forwards"),
])
def test_counted(n, one, many, said):
    assert counted(n, one, many) == said


def _bad_lines(git, project, n: int) -> None:
    """Append ``n`` lines that are no record to the project's first shard, as another tool
    would (``git notes append``)."""
    ref = git(project, "for-each-ref", "--format=%(refname)",
              "refs/notes/ynm/distributed").splitlines()[0]
    anchor = json.loads((project / ".ynm" / "config.json").read_text())["anchor"]
    for i in range(n):
        git(project, "notes", f"--ref={ref}", "append", "-m", f"not json {i}", anchor)


@pytest.mark.parametrize("n", [0, 1, 2])
def test_status_and_doctor_count_bad_lines(project, cli_run, git, n):
    r = cli_run("remember", "--type", "semantic", "--level", "distributed", "--content", "x y")
    assert r.exit_code == 0, r.stderr
    _bad_lines(git, project, n)
    human = cli_run("status").stdout
    project_line = next(x for x in human.splitlines() if x.startswith("  project "))
    assert "1 shard(s)" in project_line  # the reference's template, kept
    if n:
        assert f"  {counted(n, 'bad line')}" in project_line
    else:
        assert "bad line" not in project_line
    checks = json.loads(cli_run("doctor", "--json").stdout)["checks"]
    bad = next(c for c in checks if c["name"] == "bad lines project")["detail"]
    assert bad == "none" if n == 0 else bad.startswith(
        f"{'1 line' if n == 1 else '2 lines'} skipped (every other record is read): ")


@pytest.mark.parametrize("n", [0, 1, 2])
def test_session_end_counts_working_memory(project, cli_run, tmp_path, n):
    for i in range(n):
        import_expired_working(cli_run, tmp_path, "task", f"trying idea {i}")
    out = cli_run("session", "end", "task").stdout
    assert out == (f"ended task; expired {n} working "
                   f"{'memory' if n == 1 else 'memories'}\n")


@pytest.mark.parametrize("n", [1, 2])
def test_compact_and_append_commits_count(project, cli_run, load, git, n):
    load(*[make_record(level="distributed", namespace="common", content=f"fact {i}",
                       summary=f"fact {i}") for i in range(n)])
    ref = git(project, "for-each-ref", "--format=%(refname)",
              "refs/notes/ynm/distributed").splitlines()[0]
    subject = git(project, "log", "-1", "--format=%s", ref)
    assert subject == f"ynm: {counted(n, 'record')} distributed/common/semantic/2026-01"
    out = cli_run("compact", "--mount", "project").stdout
    assert f" written ({counted(n, 'memory', 'memories')}, {counted(n, 'record')}, 1 shard, " \
           in out
    assert cli_run("reindex", "--mount", "project").stdout == (
        f"project: {n} memories indexed\n")  # the reference's words for any n


@pytest.mark.parametrize("n", [0, 1, 2])
def test_import_says_how_many_were_already_there(project, cli_run, tmp_path, n):
    records = [make_record(content=f"fact {i}", summary=f"fact {i}") for i in range(2)]
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records[:n]))
    if n:
        assert cli_run("import", path).exit_code == 0
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    result = cli_run("import", path)
    # the reference's template, then what the store held already
    assert result.stdout == (f"imported {2 - n} record(s)"
                             + (f"; {n} already present" if n else "") + "\n")
    assert result.stderr == ""


@pytest.mark.parametrize("n", [1, 2])
def test_a_level_refusal_counts_the_other_lines(git_repo, cli_run, tmp_path, monkeypatch, n):
    # no distributed mount outside a project: one problem for all of the level's records
    monkeypatch.chdir(git_repo)
    shared = [make_record(level="distributed", namespace="common") for _ in range(n + 1)]
    path = tmp_path / "in.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in [make_record(), *shared]))
    result = cli_run("import", path, "--mount", "personal", "--json")
    [problem] = json.loads(result.stdout)["problems"]
    assert problem.endswith(f"(and {counted(n, 'more distributed record')}, the last on line "
                            f"{n + 2})")


@pytest.mark.parametrize("kind,ctx,said", [
    ("too_long", {"max_length": 0}, "must have at most 0 items"),
    ("too_long", {"max_length": 1}, "must have at most 1 item"),
    ("too_short", {"min_length": 2}, "must have at least 2 items"),
    ("string_too_long", {"max_length": 1}, "must be at most 1 character"),
    ("string_too_long", {"max_length": 280}, "must be at most 280 characters"),
])
def test_validation_limits_count_their_nouns(kind, ctx, said):
    from ynm.model.records import plain_message

    assert plain_message({"type": kind, "ctx": ctx, "msg": "pydantic's words"}) == said


def test_a_real_limit_reads_as_before(project, cli_run):
    result = cli_run("remember", "--type", "semantic", "--content", "x", "--summary", "s" * 281)
    assert result.exit_code == 2
    assert "summary: must be at most 280 characters" in result.stderr
