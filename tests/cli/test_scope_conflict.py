"""``--mount`` and ``--level`` together, the mount being of a level ``--level`` leaves out,
select no mount: recall, list, context and export read nothing, and say why on stderr
(naming the mount's level), as ``--level`` or ``--mount`` alone say which mounts they
searched; the MCP tools say it in the guidance. The reference answers an empty result."""

from __future__ import annotations

import pytest

from tests.cli.conftest import mount_org

HINT = ("hint: --mount and --level select no mount: mount {mount} is {level}, not {asked}; "
        "drop one of them\n")
READS = [("recall", "deploys"), ("list",), ("context",), ("export",)]
EMPTY = {"recall": "no matches\n", "list": "no memories\n", "context": "no memory yet\n",
         "export": ""}


@pytest.fixture
def stored(project, cli_run) -> None:
    for level in ("personal", "distributed"):
        result = cli_run("remember", "--type", "semantic", "--level", level, "--content",
                         f"the {level} deploys go out on Tuesdays")
        assert result.exit_code == 0, result.stderr


@pytest.mark.parametrize("args", READS, ids=" ".join)
@pytest.mark.parametrize(("mount", "level", "asked"), [
    ("project", "distributed", "personal"), ("personal", "personal", "distributed")])
def test_a_mount_of_a_level_left_out_is_named_with_its_level(stored, cli_run, args, mount,
                                                              level, asked):
    result = cli_run(*args, "--mount", mount, "--level", asked)
    assert (result.exit_code, result.stdout, result.stderr) == (
        0, EMPTY[args[0]], HINT.format(mount=mount, level=level, asked=asked))


@pytest.mark.parametrize("args", READS, ids=" ".join)
def test_a_pair_that_agrees_says_nothing_of_it(stored, cli_run, args):
    result = cli_run(*args, "--mount", "project", "--level", "distributed")
    assert result.exit_code == 0
    assert "select no mount" not in result.stderr
    assert result.stdout != EMPTY[args[0]]


def test_a_configured_mount_that_did_not_open_is_named_too(stored, cli_run, ynm_home,
                                                           tmp_path):
    mount_org(ynm_home, tmp_path / "org.git")
    result = cli_run("list", "--mount", "org", "--level", "personal")
    assert (result.exit_code, result.stdout) == (0, "no memories\n")
    assert HINT.format(mount="org", level="distributed", asked="personal") in (
        line + "\n" for line in result.stderr.splitlines())
