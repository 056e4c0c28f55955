"""``ynm people``: the people document of a store: person ids, nicknames, linked logins
(reference/cli.md §4.14; its MCP twin for one's own entry is ``memory_people``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ynm.cli._common import common_options, emit, open_ynm
from ynm.model.words import counted

ACTIONS = ("list", "whoami", "nickname", "clear", "link")
WHOAMI = ("{actor} on this machine; on a hosted store you write as the person your sign-in "
          "resolves to (ask the agent for memory_people whoami)")
NO_PEOPLE_YET = ("no people yet: a person appears once they set a nickname or a login is "
                 "linked to them")


def format_people(doc: dict[str, Any]) -> str:
    """One line per person: ``<person id>  <nickname or '-' padded to 20> <n> linked
    login[s]`` (``login`` when n is 1), or ``no people yet: ...`` (reference/cli.md §4.14)."""
    people = doc["people"]
    if not people:
        return NO_PEOPLE_YET
    lines = []
    for pid, entry in people.items():
        n = len(entry.get("logins", []))
        nick = entry.get("nickname") or "-"
        lines.append(f"{pid}  {nick:<20} {counted(n, 'linked login')}")
    return "\n".join(lines)


@click.command()
@click.argument("action", type=click.Choice(ACTIONS))
@click.argument("person", required=False)
@click.option("--nickname", help="nickname: how the person appears (1..64 characters, one line).")
@click.option("--issuer", help="link: the identity provider's issuer (token iss).")
@click.option("--subject", help="link: the subject it issued (token sub).")
@common_options
def people(as_json: bool, cwd: Path | None, action: str, person: str | None,
           nickname: str | None, issuer: str | None, subject: str | None) -> None:
    """Manage the people of a store: person ids, nicknames and linked logins.

    A person id (p + 16 characters) is derived from the login a person signs in to a hosted
    store with; `link` makes another login write as an existing person. The document is kept
    by the distributed mount (project) and travels with `ynm sync`.

    \b
    Examples:
      ynm people list
      ynm people nickname pabcdefghijklmnop --nickname ada
      ynm people link pabcdefghijklmnop --issuer https://idp.example.com --subject 42
    """
    from ynm.errors import Refused

    if action == "whoami":
        from ynm.service.config import load_config

        actor = load_config(cwd or Path.cwd()).config.actor
        emit({"actor": actor}, as_json, lambda r: WHOAMI.format(actor=r["actor"]))
        return
    # refusals before the store is opened, in the reference's order (cli.md §4.14)
    if action == "nickname" and nickname is None:
        raise Refused("nickname needs --nickname")
    if action == "link" and (issuer is None or subject is None):
        raise Refused("link needs --issuer and --subject")
    if action != "list" and not person:
        raise Refused(f"{action} needs a person id")
    if action != "list":
        from ynm.model.people import check_new_nickname, check_person_id

        check_person_id(person)
        if nickname is not None:
            check_new_nickname(nickname)
    with open_ynm(cwd) as ynm:
        if action == "list":
            emit(ynm.people_list(), as_json, format_people)
        elif action == "nickname":
            entry = ynm.people_nickname(person, nickname)
            emit(entry, as_json, lambda e: f"{person} is now shown as {e['nickname']}")
        elif action == "clear":
            entry = ynm.people_nickname(person, None)
            emit(entry, as_json, lambda e: f"cleared the nickname of {person}")
        else:
            entry = ynm.people_link(person, issuer, subject)
            emit(entry, as_json,
                 lambda e: f"linked {issuer} {subject} to {person}: it now writes as that "
                           "person")
