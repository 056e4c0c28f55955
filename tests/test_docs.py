"""docs/cli.md documents every command and every flag the CLI has (users read it)."""

from __future__ import annotations

from pathlib import Path

import click
import pytest

from ynm.cli import COMMANDS, cli

DOC = (Path(__file__).parent.parent / "docs" / "cli.md").read_text()


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_and_flag_is_documented(name: str) -> None:
    assert f"## ynm {name}" in DOC
    command = cli.get_command(click.Context(cli), name)
    for param in command.params:
        if not isinstance(param, click.Option) or param.name in ("as_json", "cwd"):
            continue
        for opt in param.opts + param.secondary_opts:
            if opt.startswith("--no-"):
                continue
            assert f"`{opt}" in DOC, f"{name}: {opt} is not in docs/cli.md"


def test_readme_opens_with_the_two_commands() -> None:
    readme = (Path(__file__).parent.parent / "README.md").read_text().splitlines()
    block = readme[readme.index("```sh") + 1: readme.index("```", readme.index("```sh") + 1)]
    assert [line.split("#")[0].strip() for line in block] == ["make demo", "make test"]
