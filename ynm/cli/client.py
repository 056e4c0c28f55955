"""``ynm client install|plan|status [name]``: ynm's integration in an agent client (MCP server,
memory guidance, hooks). Source: reference/cli.md §4.2."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ynm.cli._common import common_options, emit, say

NAMES = ("claude-code", "copilot-cli", "opencode", "pi", "ynh")


def _human(results: list[Any], action: str, headed: bool) -> str:
    lines: list[str] = []
    for r in results:
        if headed:
            lines.append(f"{r.client}:")
        if action == "plan" and r.plan:
            lines += [f"{c.kind:<10} {c.target}  ({c.reason})" for c in r.plan]
        elif action == "install" and r.done:
            lines += r.done
        else:
            lines.append("already in place, nothing changed:")
            lines += [f"  {line}" for line in r.in_place]
    return "\n".join(lines)


@click.command()
@click.argument("action", type=click.Choice(["install", "plan", "status"]))
@click.argument("name", required=False, type=click.Choice(NAMES))
@click.option("--scope", type=click.Choice(["project", "user"]), default="project",
              show_default=True, help="Install into the project's files or your user files.")
@click.option("--http", "url", metavar="URL",
              help="Register this hosted ynm server URL instead of a local `ynm serve`.")
@click.option("--token", help="Bearer token sent to the --http server.")
@click.option("--yes", is_flag=True, default=False,
              help="Run the command-type changes (otherwise they are printed).")
@click.option("--hooks/--no-hooks", default=True, show_default=True,
              help="Install the client's agent hooks (`ynm hook`).")
@click.option("--force", is_flag=True, default=False,
              help="Replace values in client files that are not ynm's (another `ynm` server "
                   "entry, a non-object where ynm needs an object); otherwise refused.")
@common_options
def client(as_json: bool, cwd: Path | None, action: str, name: str | None, scope: str,
           url: str | None, token: str | None, yes: bool, hooks: bool, force: bool) -> None:
    """Install, plan or inspect ynm in an agent client.

    NAME is one of claude-code, copilot-cli, opencode, pi, ynh; without it: ynh in a ynh
    harness, else every client the project already uses. `plan` touches nothing; `install`
    merges into existing configs (other settings and comments kept) and is a no-op the second
    time; `status` reports every client and exits 1 when one has an error (a config file
    that is not valid JSON, a server entry no client can use).

    \b
    Examples:
      ynm client plan claude-code
      ynm client install opencode --scope user
      ynm client install copilot-cli --http https://mem.example.com/mcp --token "$TOKEN"
      ynm client status --json
    """
    from ynm.errors import Refused
    from ynm.service.clients import (
        client_status,
        client_target,
        install_clients,
        plan_clients,
        results_json,
    )

    where = cwd or Path.cwd()
    if token is not None and url is None:
        raise Refused("--token needs --http <url>")
    if action == "status":
        reports = client_status(where, name)
        emit([r.to_obj() for r in reports], as_json,
             lambda _: "\n".join(r.line() for r in reports))
        if any(r.level == "error" for r in reports):  # the reference's §4.2 sets no code
            click.get_current_context().exit(1)
        return
    command = ["ynm"]
    machine_note = None
    if url is None:
        from ynm.cli.init import ynm_command

        command, machine_note = ynm_command()
    target = client_target(where, scope=scope, url=url, token=token, hooks=hooks,
                           command=command, force=force)
    results = (plan_clients(target, name) if action == "plan"
               else install_clients(target, name, yes=yes))
    single = name is not None
    emit(results_json(results, action, single), as_json,
         lambda _: _human(results, action, not single or len(results) > 1))
    if machine_note and scope == "project" and any(
            c.path is not None and c.path.name == ".mcp.json"
            for r in results for c in getattr(r, "plan", None) or []):
        # the shared .mcp.json would name this machine's ynm: say so before it is committed
        say(f"note: {machine_note.replace('run `ynm init` again', 'run this again')}, and do "
            "not commit .mcp.json until it does", err=True)
