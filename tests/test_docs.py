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
    assert pip_install("vector") == (
        "pip install 'ynm[vector]', or pip install -e '.[vector]' in a checkout")
    assert pip_install() == "pip install ynm, or pip install -e . in a checkout"


def _paren_depth(text: str) -> int:
    """How deep parentheses nest in ``text`` (0: none, 1: no parentheses inside others)."""
    depth = deepest = 0
    for ch in text:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        deepest = max(deepest, depth)
    return deepest


def _pip_installs_in_parentheses() -> list[str]:
    """Every f-string of ynm's source that puts ``pip_install(...)`` inside parentheses of its
    own (``... is not installed ({pip_install('vector')})``): ``<file>:<line>``."""
    import ast

    root = Path(__file__).parent.parent / "ynm"
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.JoinedStr):
                continue
            depth = 0
            for part in node.values:
                if isinstance(part, ast.Constant) and isinstance(part.value, str):
                    depth = max(0, depth + part.value.count("(") - part.value.count(")"))
                elif (isinstance(part, ast.FormattedValue) and isinstance(part.value, ast.Call)
                      and getattr(part.value.func, "id", None) == "pip_install" and depth):
                    found.append(f"{path.relative_to(root.parent)}:{node.lineno}")
    return found


def test_install_messages_never_nest_parentheses() -> None:
    """``pip_install`` has no parentheses, no message puts it inside some, and a missing
    extra's message has one pair at most (``ynm serve needs the server extra (mcp is not
    installed): pip install 'ynm[server]', or pip install -e '.[server]' in a checkout``)."""
    from ynm.errors import MissingExtra, pip_install

    for extra in (None, "vector", "server", "client"):
        assert _paren_depth(pip_install(extra)) == 0
    assert _pip_installs_in_parentheses() == []
    message = str(MissingExtra("ynm serve", "server", "mcp"))
    assert message == ("ynm serve needs the server extra (mcp is not installed): pip install "
                       "'ynm[server]', or pip install -e '.[server]' in a checkout")
    assert _paren_depth(message) == 1
    flat = " ".join(DOC.split())  # docs/cli.md quotes the message as it is
    assert str(MissingExtra("ynm serve", "server", "anyio")) in flat
    assert f"full-text recall only; {pip_install('vector')})" in flat
