"""ynm's integration with agent clients: register the MCP server, write the memory guidance,
install the hooks, and report what is in place (reference/cli.md §4.2, reference/server.md §4.1).

One module per client (:mod:`.claude_code`, :mod:`.copilot_cli`, :mod:`.opencode`, :mod:`.pi`,
:mod:`.ynh`), each with ``NAME``, ``plan(target) -> [Change]``, ``detect(target) -> Detection``
and ``status(target) -> ClientStatus``; :mod:`.common` holds the shared plan/apply machinery.

For ``ynm doctor`` and other callers, :func:`status` is the plain entry point::

    status(work_tree, home, name=None) -> list[ClientStatus]
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from ynm.errors import Refused
from ynm.integrations import claude_code, copilot_cli, opencode, pi, ynh
from ynm.integrations.common import Change, ClientStatus, Target, apply

CLIENTS: dict[str, ModuleType] = {m.NAME: m for m in (claude_code, copilot_cli, opencode, pi, ynh)}
NAMES = tuple(CLIENTS)

__all__ = [
    "CLIENTS",
    "NAMES",
    "Change",
    "ClientResult",
    "ClientStatus",
    "Target",
    "apply_for_init",
    "client",
    "configure_for_init",
    "install",
    "plan",
    "plan_for_init",
    "project_clients",
    "resolve",
    "status",
]


def client(name: str) -> ModuleType:
    """The module of client ``name``. Raises Refused (exit 2) for an unknown name."""
    try:
        return CLIENTS[name]
    except KeyError:
        raise Refused(f'unknown client "{name}" (have: {", ".join(NAMES)})') from None


def project_clients(work_tree: Path, home: Path, env: Mapping[str, str] | None = None) -> list[str]:
    """The clients a directory is set up for when none is named: ``ynh`` in a ynh harness,
    otherwise every client whose own files are in the project (reference/cli.md §4.2)."""
    if ynh.is_harness(work_tree):
        return ["ynh"]
    t = Target(Path(work_tree), Path(home), env=dict(env if env is not None else os.environ))
    return [n for n, m in CLIENTS.items() if n != "ynh" and m.detect(t).project]


def resolve(work_tree: Path, home: Path, name: str | None,
            env: Mapping[str, str] | None = None) -> list[str]:
    """``[name]``, or :func:`project_clients`. Raises Refused (exit 2) when there are none:
    ``no agent client is configured in <cwd>; name one: ynm client install <a|b|...>``."""
    if name is not None:
        client(name)
        return [name]
    names = project_clients(work_tree, home, env)
    if not names:
        raise Refused(f"no agent client is configured in {work_tree}; name one: ynm client "
                      f"install <{'|'.join(NAMES)}>")
    return names


@dataclass
class ClientResult:
    """One client's plan (changes still to make), what was done, and, when nothing is left to
    do, the checks that show it is in place (``inPlace``)."""

    client: str
    plan: list[Change]
    done: list[str] = field(default_factory=list)
    in_place: list[str] = field(default_factory=list)

    def to_obj(self) -> dict[str, Any]:
        return {"client": self.client, "plan": [c.to_obj() for c in self.plan],
                "done": self.done, "inPlace": self.in_place}


def plan(target: Target, names: list[str]) -> list[ClientResult]:
    """Each client's changes for ``target``, no-ops dropped; touches nothing. Raises YnmError
    for a config file that is not valid JSON."""
    out = []
    for name in names:
        mod = client(name)
        changes = [c for c in mod.plan(target) if not c.is_noop()]
        in_place = [] if changes else mod.status(target).checked
        out.append(ClientResult(name, changes, [], in_place))
    return out


def install(target: Target, names: list[str], *, yes: bool = False) -> list[ClientResult]:
    """Plan and apply each client's changes (commands run only with ``yes``; see
    :func:`ynm.integrations.common.apply` for the done lines and errors)."""
    results = plan(target, names)
    for r in results:
        r.done = apply(r.plan, yes=yes)
    return results


def status(work_tree: Path | str, home: Path | str, name: str | None = None,
           env: Mapping[str, str] | None = None) -> list[ClientStatus]:
    """Every known client's setup (or just ``name``'s) in ``work_tree`` with user files under
    ``home``: detected or not, server registered, guidance present, hooks installed (None where
    the client has none). Reads files only; an unreadable config counts as not registered."""
    t = Target(Path(work_tree), Path(home), env=dict(env if env is not None else os.environ))
    return [client(n).status(t) for n in ([name] if name else NAMES)]


def configure_for_init(work_tree: Path, home: Path, names: list[str], *,
                       command: tuple[str, ...] = ("ynm",),
                       env: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """:func:`plan_for_init` then :func:`apply_for_init`."""
    return apply_for_init(plan_for_init(work_tree, home, names, command=command, env=env))


def plan_for_init(work_tree: Path, home: Path, names: list[str], *,
                  command: tuple[str, ...] = ("ynm",),
                  env: Mapping[str, str] | None = None) -> list[dict[str, Any]]:
    """``ynm init``'s client step (reference/cli.md §4.10 step 6, reference/server.md §4.1),
    planned without touching anything: for the named clients (or, with ``names`` empty, every
    client the project already uses; never ynh unless named) the project-scope changes that
    land inside the work tree. Changes outside it and commands become ``run`` lines; clients
    only on this machine are listed with ``skipped: "machine-only"`` and the install command
    to run. Values that are not ynm's, and a hosted server entry, are left alone with a line in
    ``notes`` (``Target.init``).

    Returns ``[{client, detected, applied: [relative paths], run: [lines], local: [paths],
    notes: [lines], skipped?}]``; ``applied`` lists what :func:`apply_for_init` will write.

    Raises:
        InvalidInput: a client file that is not valid JSON, or a malformed guidance block
            (exit 2); nothing has been written.
    """
    env = dict(env if env is not None else os.environ)
    t = Target(Path(work_tree), Path(home), command=tuple(command), env=env, init=True)
    root = Path(work_tree).resolve()
    out: list[dict[str, Any]] = []
    wanted = names or [n for n in NAMES if n != "ynh"]
    for name in wanted:
        mod = client(name)
        d = mod.detect(t)
        if not names:
            if not d.found:
                continue
            if not d.project:
                out.append({"client": name, "detected": d.how, "applied": [],
                            "run": [f"ynm client install {name}"], "local": [], "notes": [],
                            "skipped": "machine-only"})
                continue
        changes = [c for c in mod.plan(t) if not c.is_noop()]

        def inside(c: Change) -> bool:
            return c.path is not None and c.path.resolve().is_relative_to(root)

        local = [c for c in changes if c.kind in ("write", "merge-json") and inside(c)]
        run = []
        if any(c.kind in ("write", "merge-json") and not inside(c) for c in changes):
            run.append(f"ynm client install {name}")
        run += [" ".join(c.argv or []) for c in changes if c.kind == "command"]
        out.append({"client": name, "detected": d.how if d.found else "requested",
                    "applied": [str(c.path.resolve().relative_to(root)) for c in local],
                    "run": run, "local": list(mod.LOCAL_FILES),
                    "notes": [c.text or "" for c in changes if c.kind == "note"],
                    "changes": local})
    return out


def apply_for_init(setups: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Write what :func:`plan_for_init` planned (every file rendered before the first write)
    and return the setups without their ``changes``."""
    apply([c for s in setups for c in s.get("changes", [])])
    for s in setups:
        s.pop("changes", None)
    return setups
