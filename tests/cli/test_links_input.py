"""``--links`` takes JSON arrays of ``{"rel", "to"}`` objects and nothing else (docs/cli.md):
a single object, ``null``, ``""`` or a number is refused (exit 2, with the hint of what
``--links`` takes), where they were once stored as a one-link array or as no links. The
option repeats, and the arrays are joined (the reference is silent on a repeated ``--links``;
its parser kept the last alone). An exact repeat of a link is dropped without an error, on the
CLI and on the MCP tools alike."""

from __future__ import annotations

import json

import pytest

from ynm.model.links import links_hint

HINT = f"hint: {links_hint()}\n"
WRITES = ("remember", "supersede", "annotate")


def created(cli_run, content: str, *args: str) -> str:
    result = cli_run("remember", "--type", "semantic", "--content", content, *args, "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)["memoryId"]


def write(cli_run, command: str, *args: str):
    """Run ``command`` (remember, supersede or annotate) of a fresh memory with ``args``."""
    if command == "remember":
        return cli_run("remember", "--type", "semantic", "--content", "Refunds wait", *args,
                       "--json")
    mid = created(cli_run, "Refunds wait for the ledger")
    more = ("--content", "Refunds wait for the ledger close") if command == "supersede" else ()
    return cli_run(command, mid, *more, *args, "--json")


def links_of(cli_run, memory_id: str) -> list[tuple[str, str]]:
    shown = json.loads(cli_run("show", memory_id, "--json").stdout)
    return [(lk["rel"], lk["to"]) for lk in shown["links"] if lk["rel"] != "supersedes"]


@pytest.fixture
def targets(project, cli_run) -> tuple[str, str]:
    return (created(cli_run, "The ledger closes at noon"),
            created(cli_run, "Payouts run at six"))


@pytest.mark.parametrize("command", WRITES)
@pytest.mark.parametrize(("given", "kind"), [
    ('{"rel": "about", "to": "01JZ8Q6W3N5V2R4T7Y9B1C3D5E"}', "an object"), ("null", "null"),
    ('""', "a string"), ("5", "a number"), ("true", "true")])
def test_a_value_that_is_no_array_is_refused(project, cli_run, command, given, kind):
    result = write(cli_run, command, "--links", given)
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", f"Error: invalid input: links: must be an array, got {kind}\n{HINT}")


def test_a_refused_value_writes_nothing(project, cli_run):
    cli_run("remember", "--type", "semantic", "--content", "Refunds wait", "--links", "null")
    assert cli_run("list").stdout == "no memories\n"


@pytest.mark.parametrize("command", WRITES)
def test_repeated_links_options_are_joined(targets, cli_run, command):
    first, second = targets
    result = write(cli_run, command, "--links", json.dumps([{"rel": "about", "to": first}]),
                   "--links", json.dumps([{"rel": "supports", "to": second}]))
    assert result.exit_code == 0, result.stderr
    assert links_of(cli_run, json.loads(result.stdout)["memoryId"]) == [
        ("about", first), ("supports", second)]


@pytest.mark.parametrize("command", WRITES)
def test_an_exact_repeat_is_dropped_without_an_error(targets, cli_run, command):
    """The same rel to the same id (in any case) once, whether repeated in one array or across
    options; the same id with another rel is another link."""
    first, _ = targets
    result = write(cli_run, command,
                   "--links", json.dumps([{"rel": "about", "to": first},
                                          {"rel": "about", "to": first.lower()},
                                          {"rel": "supports", "to": first}]),
                   "--links", json.dumps([{"rel": "about", "to": first}]))
    assert (result.exit_code, result.stderr) == (0, "")
    mid = json.loads(result.stdout)["memoryId"]
    assert links_of(cli_run, mid) == [("about", first), ("supports", first)]


def test_the_stored_record_holds_each_link_once(targets, cli_run):
    first, _ = targets
    mid = created(cli_run, "Refunds wait", "--links",
                  json.dumps([{"rel": "about", "to": first}] * 3))
    current = json.loads(cli_run("show", mid, "--json").stdout)["current"]
    assert current["links"] == [{"rel": "about", "to": first}]


def test_supersede_writes_its_supersedes_link_once(targets, cli_run):
    mid = created(cli_run, "Refunds wait for the ledger")
    result = cli_run("supersede", mid, "--content", "Refunds wait for the close", "--links",
                     json.dumps([{"rel": "supersedes", "to": mid}]), "--json")
    assert result.exit_code == 0, result.stderr
    shown = json.loads(cli_run("show", mid, "--json").stdout)
    assert shown["current"]["links"] == [{"rel": "supersedes", "to": mid}]
