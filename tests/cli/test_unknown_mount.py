"""A ``--mount`` that names no configured mount is refused the same way by every command that
takes one, read or write: exit 2 (refused input, as click's usage errors), the mounts there
are, and how to add one (docs/cli.md "Exit codes"). The reference answers a read with an
empty result (exit 0) and a write with exit 1 (reference/cli.md §6)."""

from __future__ import annotations

import json

import pytest

from tests.cli.conftest import jsonl, make_record, mount_org

ADD = ('; to add it: add {{"id":"nope","level":"distributed","provider":"git-notes",'
       '"path":"<store>","anchor":"<commit>"}} to mounts in {config} '
       "(`ynm init --bare <store>` makes a store and prints its anchor)")

COMMANDS = [
    ("recall", "deploys"), ("recall", "deploys", "--json"), ("context",), ("list",),
    ("list", "--json"), ("export",), ("reindex",), ("reindex", "--json"), ("compact",),
    ("sync",), ("sync", "--json"), ("wiki", "build"), ("review", "list"),
    ("remember", "--type", "semantic", "--content", "we deploy on Tuesdays"),
    # an id no memory has: the mount is refused before the memory is looked up
    ("review", "clear", "01JZ8Q6W3N5V2R4T7Y9B1C3D5E"), ("promote", "01JZ8Q6W3N5V2R4T7Y9B1C3D5E"),
]


def expected(ynm_home, have: str = "personal, project") -> str:
    return (f'Error: no mount "nope" (have: {have})'
            + ADD.format(config=ynm_home / "config.json") + "\n")


@pytest.mark.parametrize("args", COMMANDS, ids=" ".join)
def test_every_command_refuses_a_mount_that_is_not_configured(project, cli_run, ynm_home,
                                                               args):
    result = cli_run(*args, "--mount", "nope")
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", expected(ynm_home))


def test_import_and_promote_refuse_it_and_write_nothing(project, cli_run, ynm_home, git,
                                                        tmp_path):
    dump = tmp_path / "dump.jsonl"
    dump.write_text(jsonl(make_record(level="distributed", namespace="common")))
    result = cli_run("import", dump, "--mount", "nope")
    assert (result.exit_code, result.stderr) == (2, expected(ynm_home))
    mine = json.loads(cli_run("remember", "--type", "semantic", "--content",
                              "we deploy on Tuesdays", "--json").stdout)["memoryId"]
    result = cli_run("promote", mine, "--mount", "nope")
    assert (result.exit_code, result.stderr) == (2, expected(ynm_home))
    assert git(project, "for-each-ref", "refs/notes/ynm/distributed") == ""


def test_the_mounts_named_are_every_configured_one(project, cli_run, ynm_home, tmp_path):
    """A hosted store and a store that did not open are configured: both are named, and
    neither id is refused as unknown."""
    ynm_home.mkdir(exist_ok=True)
    (ynm_home / "config.json").write_text(json.dumps({"mounts": [
        {"id": "org", "level": "distributed", "provider": "git-notes",
         "path": str(tmp_path / "missing.git"), "anchor": "a" * 40},
        {"id": "team", "level": "distributed", "provider": "mcp",
         "url": "https://memory.example.com/mcp"}]}))
    result = cli_run("list", "--mount", "nope")
    assert (result.exit_code, result.stderr.splitlines()[-1] + "\n") == (
        2, expected(ynm_home, "personal, project, org, team"))
    for known in ("org", "team"):
        assert cli_run("list", "--mount", known).exit_code == 0


def test_a_configured_mount_is_still_read(project, cli_run):
    result = cli_run("list", "--mount", "project")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "no memories\n", "")


def test_promote_and_import_name_a_hosted_store_as_one_they_cannot_write(project, cli_run,
                                                                         ynm_home, tmp_path):
    """A hosted store is configured, so it is not "no mount": promote and import write to
    local mounts only, and say so (exit 2)."""
    ynm_home.mkdir(exist_ok=True)
    (ynm_home / "config.json").write_text(json.dumps({"mounts": [
        {"id": "team", "level": "distributed", "provider": "mcp",
         "url": "https://memory.example.com/mcp"}]}))
    mine = json.loads(cli_run("remember", "--type", "semantic", "--content",
                              "we deploy on Tuesdays", "--json").stdout)["memoryId"]
    dump = tmp_path / "dump.jsonl"
    dump.write_text(jsonl(make_record(level="distributed", namespace="common")))
    for args, what in ((("promote", mine), "promote"), (("import", dump), "import")):
        result = cli_run(*args, "--mount", "team")
        assert (result.exit_code, result.stderr) == (
            2, (f'Error: mount "team" is a hosted store; {what} writes to local mounts only '
                "(local: personal, project)\n"))


def test_import_into_a_store_that_did_not_open_says_why(project, cli_run, ynm_home, tmp_path):
    missing = tmp_path / "org.git"
    mount_org(ynm_home, missing)
    dump = tmp_path / "dump.jsonl"
    dump.write_text(jsonl(make_record(level="distributed", namespace="common")))
    result = cli_run("import", dump, "--mount", "org")
    assert (result.exit_code, result.stderr.splitlines()) == (1, [
        (f'Error: mount "org" is configured but cannot be opened: not a git repository: '
         f"{missing}"),
        (f'hint: correct its "path" in {ynm_home / "config.json"} if it is mistyped; `ynm '
         "doctor` checks every mount")])


def flagged(cli_run, level: str) -> str:
    """A memory of ``level`` flagged for review; its id."""
    mid = json.loads(cli_run("remember", "--type", "semantic", "--level", level, "--content",
                             f"we deploy the {level} ledger on Tuesdays", "--json").stdout
                     )["memoryId"]
    assert cli_run("annotate", mid, "--needs-review").exit_code == 0
    return mid


def still_flagged(cli_run) -> list[str]:
    return [m["memoryId"] for m in json.loads(cli_run("review", "list", "--json").stdout)]


def test_review_clear_refuses_an_unknown_mount_and_clears_nothing(project, cli_run,
                                                                   ynm_home):
    mid = flagged(cli_run, "distributed")
    result = cli_run("review", "clear", mid, "--mount", "nope")
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", expected(ynm_home))
    assert still_flagged(cli_run) == [mid]


def test_review_clear_refuses_a_mount_that_does_not_hold_the_memory(project, cli_run):
    """The reference ignores --mount on review clear; ynm names the mount that holds the
    memory, and clears nothing."""
    shared, mine = flagged(cli_run, "distributed"), flagged(cli_run, "personal")
    for mid, named, holder in ((shared, "personal", "project"), (mine, "project", "personal")):
        result = cli_run("review", "clear", mid, "--mount", named)
        assert (result.exit_code, result.stdout, result.stderr) == (
            2, "", (f"Error: memory {mid} is in mount {holder}, not {named}\n"
                    f"hint: pass --mount {holder}, or leave --mount out\n"))
    assert sorted(still_flagged(cli_run)) == sorted([shared, mine])
    result = cli_run("review", "clear", shared, "--mount", "project")
    assert (result.exit_code, result.stdout) == (0, f"cleared review flag on {shared}\n")
    assert still_flagged(cli_run) == [mine]


def test_promote_checks_the_mount_before_the_memory(project, cli_run, ynm_home):
    """A mistyped or personal --mount is refused as such, not as "already distributed" or
    "unknown memory"."""
    shared = json.loads(cli_run("remember", "--type", "semantic", "--level", "distributed",
                                "--content", "we deploy on Tuesdays", "--json").stdout
                        )["memoryId"]
    result = cli_run("promote", shared, "--mount", "nope")
    assert (result.exit_code, result.stdout, result.stderr) == (2, "", expected(ynm_home))
    result = cli_run("promote", shared, "--mount", "personal")
    assert (result.exit_code, result.stderr) == (
        1, 'Error: mount "personal" is personal; cannot take a distributed record\n')
    ghost = "01JZ8Q6W3N5V2R4T7Y9B1C3D5E"
    result = cli_run("promote", ghost, "--mount", "nope")
    assert (result.exit_code, result.stderr) == (2, expected(ynm_home))
    result = cli_run("promote", shared, "--mount", "project")
    assert (result.exit_code, result.stderr) == (
        1, f"Error: memory {shared} is already distributed\n")
