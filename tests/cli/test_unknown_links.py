"""Links to an id no memory here has (reference/storage.md §1.2: ``links[].to`` is any ULID):
``remember``, ``supersede`` and ``annotate`` keep them, and say so in one ``note:`` line on
stderr naming the unknown ids (never in ``--json``'s stdout); the MCP tools say it in the
guidance."""

from __future__ import annotations

import json

import pytest

from tests.support.records import ulid
from ynm.model.links import RELS

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


# --- a malformed --links value: the message, then what --links takes -------------------------

LINKS_HINT = (
    'hint: --links takes a JSON array of {"rel", "to"} objects: rel is one of supersedes, '
    "derives-from, contradicts, supports, about, in-session; to is the id of the memory linked "
    "to; e.g. --links '[{\"rel\": \"about\", \"to\": \"01JZ8Q6W3N5V2R4T7Y9B1C3D5E\"}]'")


@pytest.mark.parametrize(("value", "said"), [
    ("about:01JZ8Q6W3N5V2R4T7Y9B1C3D5E",
     "--links: not valid JSON (Expecting value: line 1 column 1 (char 0))"),
    ('[{"rel": "related", "to": "TARGET"}]',
     f"links.0.rel: must be one of {', '.join(RELS)}"),
    ('[{"rel": "about"}]', "links.0.to: required"),
    ('[{"rel": "about", "to": "not-an-id"}]', "links.0.to: must be a ULID"),
    ('["TARGET"]', "links.0: must be an object"),
])
def test_a_malformed_links_value_is_answered_with_the_form_the_rels_and_an_example(
        project, cli_run, value, said):
    """remember, supersede and annotate: the reference's message (cli.md §1.3), then a hint
    line naming the form, every rel (ynm.model.records.Rel) and an example; exit 2."""
    target = remember(cli_run, "Deploys go out on Tuesdays")[0]["memoryId"]
    value = value.replace("TARGET", target)
    for args in (("remember", "--type", "semantic", "--content", "x"),
                 ("supersede", target, "--content", "Deploys go out on Wednesdays"),
                 ("annotate", target)):
        result = cli_run(*args, "--links", value)
        assert (result.exit_code, result.stdout) == (2, ""), args
        assert result.stderr == f"Error: invalid input: {said}\n{LINKS_HINT}\n", args


def test_a_links_error_of_working_memory_gets_the_links_hint_not_the_session_one(project,
                                                                                 cli_run):
    result = cli_run("remember", "--type", "working", "--content", "x", "--links", "[1")
    assert result.exit_code == 2
    assert result.stderr.splitlines()[1] == LINKS_HINT


def test_the_help_of_every_links_flag_names_the_form_the_rels_and_an_example(cli_run):
    from typing import get_args

    from ynm.model.records import Rel

    assert get_args(Rel) == RELS  # the rels the help names are the ones a link may have
    for command in ("remember", "supersede", "annotate"):
        # compared without white space: click wraps the help, and breaks words at hyphens
        text = "".join(cli_run(command, "--help").stdout.split())
        said = ('a JSON array of {"rel", "to"} objects: rel is one of supersedes, derives-from, '
                "contradicts, supports, about, in-session; to is the id of the memory linked "
                "to; e.g. '[{\"rel\": \"about\", \"to\": \"01JZ8Q6W3N5V2R4T7Y9B1C3D5E\"}]'")
        assert "".join(said.split()) in text, command
