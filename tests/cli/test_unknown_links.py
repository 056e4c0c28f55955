"""Links to an id no memory here has (reference/storage.md §1.2: ``links[].to`` is any ULID):
``remember``, ``supersede`` and ``annotate`` keep them, and say so in one ``note:`` line on
stderr naming the unknown ids (never in ``--json``'s stdout); the MCP tools say it in the
guidance."""

from __future__ import annotations

import json

import pytest

from tests.support.records import ulid


NOTE = ("note: --links points at {ids}, which no memory here has; the {what} kept (a memory "
        "with {which} may arrive with `ynm sync`; check {each} id with `ynm show <id>`)\n")


def note(*ids: str) -> str:
    many = len(ids) > 1
    return NOTE.format(ids=", ".join(ids), what="links are" if many else "link is",
                       which="those ids" if many else "that id", each="each" if many else "the")


def links(*targets: str, rel: str = "about") -> str:
    return json.dumps([{"rel": rel, "to": t} for t in targets])


def remember(cli_run, content: str, *args: str):
    result = cli_run("remember", "--type", "semantic", "--content", content, *args, "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout), result.stderr


def stored_links(cli_run, memory_id: str) -> list[dict]:
    result = cli_run("show", memory_id, "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)["links"]


@pytest.fixture
def known(project, cli_run) -> str:
    return remember(cli_run, "The ledger closes at noon")[0]["memoryId"]


def test_remember_with_a_known_link_says_nothing(known, cli_run):
    out, err = remember(cli_run, "Refunds wait for the ledger", "--links", links(known))
    assert err == ""
    assert set(out) == {"memoryId", "recordId", "mount", "revision"}
    assert stored_links(cli_run, out["memoryId"]) == [{"rel": "about", "to": known}]


def test_remember_with_an_unknown_link_keeps_it_and_names_it(known, cli_run):
    ghost = ulid()
    out, err = remember(cli_run, "Refunds wait for the ledger", "--links", links(ghost))
    assert err == note(ghost)
    assert "unknownLinks" not in out and set(out) == {"memoryId", "recordId", "mount",
                                                      "revision"}
    assert stored_links(cli_run, out["memoryId"]) == [{"rel": "about", "to": ghost}]
    human = cli_run("remember", "--type", "semantic", "--content", "Payouts run at six",
                    "--links", links(ghost))
    assert human.exit_code == 0
    assert human.stdout.startswith("remembered ") and "note: --links" not in human.stdout
    assert human.stderr == note(ghost)


def test_a_mix_names_only_the_unknown_ids_once_each(known, cli_run):
    ghost, other = ulid(), ulid()
    out, err = remember(cli_run, "Refunds wait for the ledger", "--links",
                        json.dumps([{"rel": "about", "to": ghost}, {"rel": "supports", "to": known},
                                    {"rel": "supports", "to": ghost},
                                    {"rel": "about", "to": other}]))
    assert err == note(ghost, other)
    assert len(stored_links(cli_run, out["memoryId"])) == 4


def test_a_forgotten_memory_is_known(known, cli_run):
    assert cli_run("forget", known).exit_code == 0
    assert remember(cli_run, "Refunds wait for the ledger", "--links", links(known))[1] == ""


def test_supersede_and_annotate_name_unknown_link_targets(known, cli_run):
    ghost = ulid()
    result = cli_run("supersede", known, "--content", "The ledger closes at one",
                     "--links", links(ghost, known, rel="supports"), "--json")
    assert result.exit_code == 0, result.stderr
    assert "unknownLinks" not in json.loads(result.stdout)
    assert result.stderr == note(ghost)  # its own id (supersedes, supports) is known
    result = cli_run("supersede", known, "--content", "The ledger closes at two",
                     "--links", links(known, rel="supports"))
    assert result.exit_code == 0 and result.stderr == ""
    result = cli_run("annotate", known, "--links", links(ghost, rel="contradicts"))
    assert result.exit_code == 0
    assert result.stdout.startswith("annotated ") and result.stderr == note(ghost)
    result = cli_run("annotate", known, "--links", links(known, rel="about"), "--json")
    assert result.exit_code == 0 and result.stderr == ""
    # the same links again change nothing and write nothing: nothing new to say
    again = cli_run("annotate", known, "--links", links(ghost, rel="contradicts"))
    assert again.stdout.startswith("unchanged: ") and again.stderr == ""
    assert {"rel": "contradicts", "to": ghost} in stored_links(cli_run, known)
