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


def _pip_installs_outside_errors() -> list[str]:
    """Every string constant of ynm's source, docstrings aside, that says ``pip install``,
    other than in ynm/errors.py (``pip_install``): ``<file>:<line>``."""
    import ast

    root = Path(__file__).parent.parent / "ynm"
    found = []
    for path in sorted(root.rglob("*.py")):
        if path == root / "errors.py":
            continue
        tree = ast.parse(path.read_text())
        docstrings = {id(node.body[0].value) for node in ast.walk(tree)
                      if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                           ast.AsyncFunctionDef))
                      and node.body and isinstance(node.body[0], ast.Expr)}
        found += [f"{path.relative_to(root.parent)}:{node.lineno}" for node in ast.walk(tree)
                  if isinstance(node, ast.Constant) and isinstance(node.value, str)
                  and "pip install" in node.value and id(node) not in docstrings]
    return found


def test_install_messages_come_from_one_helper_that_names_the_readme_form() -> None:
    """A message telling the user to install an extra says it through
    ynm.errors.pip_install, whose checkout form is the README's (``.venv/bin/pip install
    -e '.[vector]'``), so the two cannot drift apart."""
    from ynm.errors import pip_install

    assert _pip_installs_outside_errors() == []
    readme = (Path(__file__).parent.parent / "README.md").read_text()
    assert ".venv/bin/pip install -e '.[vector]'" in readme
    assert "pip install -e '.[vector]' in a checkout" in pip_install("vector")
    assert pip_install("vector").startswith("pip install 'ynm[vector]' ")
