"""``Record``: the seed's fields, refused at construction by the rules of ``ynm remember``
(reference/cli.md §4.20) so a record that could never be written is never queued."""

from __future__ import annotations

import json

import pytest

from ynm.client import Record
from ynm.errors import InvalidInput

GOOD = {"type": "episodic", "namespace": "factory/host/owner/repo", "level": "distributed",
            "subject": "step:build", "summary": "Build passed", "content": "Built in **1.2 s**",
            "tags": ["ci", "build"], "data_schema": "ynf.step.v1", "data": {"ms": 1200},
            "source": "build"}

BAD = [
    ({"type": "working", "content": "x"}, "namespace: working memory must live in session/<id>"),
    ({"type": "episodic", "content": "x", "namespace": "Factory/Host"}, "namespace"),
    ({"type": "episodic", "content": "x", "level": "public"}, "level"),
    ({"type": "episodic", "content": "   "}, "content: must not be blank"),
    ({"type": "episodic", "content": "x" * 65537}, "content"),
    ({"type": "episodic", "content": "x", "summary": "s" * 281}, "summary"),
    ({"type": "episodic", "content": "x", "subject": "s" * 201}, "subject"),
    ({"type": "episodic", "content": "x", "tags": ["t" * 65]}, "tags"),
    ({"type": "episodic", "content": "x", "data_schema": "d" * 101}, "dataSchema"),
]


def _argv(kw: dict) -> list[str]:
    """The ``ynm remember`` flags for ``kw``, as YnmCLI would pass them."""
    argv = ["remember", "--json", "--type", kw["type"], "--content", kw["content"]]
    for name in ("namespace", "level", "subject", "summary", "data_schema", "source"):
        if name in kw:
            argv.append(f"--{name.replace('_', '-')}={kw[name]}")
    argv += [f"--tags={t}" for t in kw.get("tags", [])]
    if "data" in kw:
        argv.append("--data=" + json.dumps(kw["data"]))
    return argv


@pytest.mark.parametrize(("kw", "where"), BAD, ids=[w for _, w in BAD])
def test_refused_at_once_as_ynm_remember_refuses_it(kw, where, cli_run, project):
    with pytest.raises(InvalidInput) as err:
        Record(**kw)
    assert str(err.value).startswith("invalid input: ")
    assert where in str(err.value)
    result = cli_run(*_argv(kw))
    assert result.exit_code == 2
    if kw.get("level") != "public":  # click's own choice message for a bad enum value
        # the message; the CLI may add a ``hint:`` line of its own after it
        assert result.stderr.strip().split("\n")[0] == f"Error: {err.value}"


@pytest.mark.parametrize(("kw", "message"), [
    ({"type": "episodic", "content": "x", "tags": ["a,b"]}, "tags: 'a,b': a tag cannot hold a comma"),
    ({"type": "episodic", "content": "x", "tags": "ci"}, "tags: expected a list of strings"),
    ({"type": "episodic", "content": "x", "data": {"t": object()}}, "data: not JSON"),
    ({"type": "episodic", "content": "x", "data": {"n": float("nan")}}, "data: not JSON"),
])
def test_refused_what_the_cli_could_not_carry(kw, message):
    with pytest.raises(InvalidInput, match="invalid input: " + message.replace("(", r"\(")):
        Record(**kw)


def test_good_record_round_trips_and_becomes_flags():
    rec = Record(**GOOD)
    assert rec.tags == ("ci", "build")
    wire = rec.to_json()
    assert wire == {"type": "episodic", "namespace": "factory/host/owner/repo",
                    "level": "distributed", "subject": "step:build", "summary": "Build passed",
                    "content": "Built in **1.2 s**", "tags": ["ci", "build"],
                    "dataSchema": "ynf.step.v1", "data": {"ms": 1200}, "source": "build"}
    assert Record.from_json(wire) == rec
    assert rec.cli_args() == [
        "--type", "episodic", "--content", "-", "--namespace=factory/host/owner/repo",
        "--level=distributed", "--subject=step:build", "--summary=Build passed",
        "--data-schema=ynf.step.v1", "--source=build", "--tags=ci", "--tags=build",
        '--data={"ms": 1200}']
    with pytest.raises(InvalidInput, match="bogus: unknown field"):
        Record.from_json({**wire, "bogus": 1})


def test_flags_starting_with_a_dash_reach_ynm_intact(project):
    from ynm.client import YnmCLI

    rec = Record(type="episodic", content="- a list item\n- another\n", summary="--not-a-flag",
                 subject="-x")
    out = YnmCLI(cwd=project).remember(rec)
    from tests.client.conftest import listed

    [got] = [r for r in listed(project) if r["id"] == out["memoryId"]]
    assert (got["summary"], got["subject"], got["content"]) == (
        "--not-a-flag", "-x", "- a list item\n- another\n")  # the content exactly
