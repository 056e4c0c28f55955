"""Every MCP tool has a CLI twin with the same fields (reference/server.md §1.4): each input
field, in kebab-case, is an option or argument of the mirrored command."""

from __future__ import annotations

import re

import click
import pytest

from ynm.cli import COMMANDS, cli
from ynm.server.tools import TOOL_SPECS

# Tools whose CLI twin is not built yet.
NO_TWIN_YET: dict[str, str] = {}


def kebab(camel: str) -> str:
    return re.sub(r"(?<!^)(?=[A-Z])", "-", camel).lower()


def cli_names(command: click.Command) -> set[str]:
    names = set()
    for p in command.params:
        if isinstance(p, click.Argument):
            names.add(p.name.replace("_", "-"))
        else:
            names.update(o.lstrip("-") for o in p.opts if o.startswith("--"))
    return names


@pytest.mark.parametrize("name", sorted(TOOL_SPECS))
def test_every_tool_field_is_a_cli_flag(name: str) -> None:
    spec = TOOL_SPECS[name]
    if spec.command not in COMMANDS:
        assert NO_TWIN_YET.get(name) == spec.command, f"{name}: no `ynm {spec.command}`"
        pytest.skip(f"ynm {spec.command} is not built yet")
    command = cli.get_command(click.Context(cli), spec.command)
    fields = {kebab(f.alias or n) for n, f in spec.input.model_fields.items()}
    missing = fields - cli_names(command)
    assert not missing, f"{name}: ynm {spec.command} lacks {sorted(missing)}"


def test_tool_names_and_commands() -> None:
    assert {s.command for s in TOOL_SPECS.values()} == {
        "remember", "recall", "context", "supersede", "annotate", "forget", "session", "dream",
        "sync", "status", "people"}
    for name, spec in TOOL_SPECS.items():
        assert name == f"memory_{'consolidate' if spec.command == 'dream' else spec.command}"
