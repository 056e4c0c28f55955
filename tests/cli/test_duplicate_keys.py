"""A JSON flag (``--data``, ``--links``) whose object names a key twice, at any depth, is
refused (exit 2, naming the key, with the flag's hint), and nothing is written: JSON parsers
keep the last value silently (``{"a": 1, "a": 2}`` was stored as ``{"a": 2}``), so which
value was meant cannot be told. The MCP tools take ``data`` as an object, never as JSON text
(tests/server/test_data_input.py)."""

from __future__ import annotations

import json

import pytest

from ynm.cli._common import DATA_HINT
from ynm.model.links import links_hint

WRITES = ("remember", "supersede", "annotate")


def write(cli_run, command: str, *args: str):
    if command == "remember":
        return cli_run("remember", "--type", "semantic", "--content", "Refunds wait", *args)
    made = cli_run("remember", "--type", "semantic", "--content", "Refunds wait for the ledger",
                   "--json")
    mid = json.loads(made.stdout)["memoryId"]
    more = ("--content", "Refunds wait for the close") if command == "supersede" else ()
    return cli_run(command, mid, *more, *args)


@pytest.mark.parametrize("command", WRITES)
@pytest.mark.parametrize(("given", "key"), [
    ('{"a": 1, "a": 2}', "a"), ('{"ticket": {"id": 1, "id": 1}}', "id"),
    ('{"a": [{"ü": 1, "ü": 2}]}', "ü")])
def test_data_naming_a_key_twice_is_refused(project, cli_run, command, given, key):
    before = cli_run("list", "--json").stdout
    result = write(cli_run, command, "--data", given)
    assert (result.exit_code, result.stdout, result.stderr) == (
        2, "", (f'Error: invalid input: --data: duplicate key "{key}"; give each key once\n'
                f"hint: {DATA_HINT}\n"))
    if command == "remember":
        assert cli_run("list", "--json").stdout == before


def test_a_link_naming_a_key_twice_is_refused(project, cli_run):
    given = '[{"rel": "about", "rel": "supports", "to": "01JZ8Q6W3N5V2R4T7Y9B1C3D5E"}]'
    result = write(cli_run, "remember", "--links", given)
    assert (result.exit_code, result.stderr) == (
        2, (f'Error: invalid input: --links: duplicate key "rel"; give each key once\n'
            f"hint: {links_hint()}\n"))


def test_the_same_value_under_two_keys_is_kept(project, cli_run):
    result = write(cli_run, "remember", "--data", '{"a": 1, "b": 1}', "--json")
    assert result.exit_code == 0, result.stderr
    shown = json.loads(cli_run("show", json.loads(result.stdout)["memoryId"], "--json").stdout)
    assert shown["current"]["data"] == {"a": 1, "b": 1}

