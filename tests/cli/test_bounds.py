"""A ``--since`` later than ``--until`` can match nothing: every command and MCP tool that
takes both refuses it, exit 2, naming both values (docs/cli.md, date-time flags). The
reference takes it and answers nothing."""

from __future__ import annotations

import json

import pytest

LATER = "since: 2026-12-01T00:00:00.000Z is later than until 2026-11-01T00:00:00.000Z, so "
REST = "nothing can match; swap them, or leave one out"


@pytest.mark.parametrize("command", [("list",), ("list", "--json"), ("recall", "deploys"),
                                     ("recall", "--json")])
def test_list_and_recall_refuse_a_since_after_the_until(project, cli_run, command):
    result = cli_run(*command, "--since", "2026-12-01", "--until", "2026-11-01")
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", f"Error: invalid input: {LATER}{REST}\n")


def test_equal_bounds_are_an_instant_and_taken(project, cli_run):
    result = cli_run("list", "--since", "2026-11-01", "--until", "2026-11-01T00:00:00Z")
    assert (result.exit_code, result.stdout) == (0, "no memories\n")


@pytest.mark.parametrize(("since", "until", "named"), [
    ("2026-12", "2026-11", "since: 2026-12 is later than until 2026-11, so "),
    ("2026-11-02", "2026-11-01T00:00:00Z",
     "since: 2026-11-02T00:00:00.000Z is later than until 2026-11-01T00:00:00.000Z, so "),
    ("2026-12-01T00:00:00Z", "2026-11",
     "since: 2026-12-01T00:00:00.000Z is later than until 2026-11, so "),
])
def test_export_refuses_it_with_months_read_as_spans(project, cli_run, since, until, named):
    result = cli_run("export", "--since", since, "--until", until)
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", f"Error: invalid input: {named}{REST}\n")


@pytest.mark.parametrize(("since", "until"), [("2026-11-20", "2026-11"), ("2026-11", "2026-11"),
                                              ("2026-11", "2026-11-01T00:00:00Z")])
def test_export_takes_a_bound_inside_the_other_bounds_month(project, cli_run, since, until):
    assert cli_run("export", "--since", since, "--until", until).exit_code == 0


def test_audit_refuses_it(cli_run, tmp_path):
    audit = tmp_path / "audit.jsonl"
    audit.write_text(json.dumps({"at": "2026-11-15T00:00:00.000Z", "outcome": "ok"}) + "\n")
    result = cli_run("audit", "search", "--file", audit, "--since", "2026-12-01", "--until",
                     "2026-11-01")
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", ("Error: invalid input: --since: 2026-12-01T00:00:00.000Z is later than --until "
                f"2026-11-01T00:00:00.000Z, so {REST}\n"))
