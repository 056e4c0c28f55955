"""Agent clients, for ``ynm doctor`` (``client <name>`` checks, reference/cli.md §4.4 item 7)
and ``ynm validate`` (reference/cli.md §4.28), both from the client integrations' own status
(:func:`ynm.integrations.status`): nothing is detected twice."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ynm.doctor import Check, check
from ynm.errors import YnmError


def client_checks(work_tree: Path, home: Path, env: Mapping[str, str]) -> list[Check]:
    """``client <name>`` for every client detected in ``work_tree`` or under ``home`` (or set
    up, or broken, without being detected): a problem (:class:`ynm.integrations.common.Problem`:
    a config file that is not valid JSON, an unusable server entry, a malformed guidance
    block): FAIL (level ``error``) or warn at the problem's level, detail ``<problem>; fix:
    <fix>`` for each, ``fix`` the first problem's; not registered: ok/info ``detected (<how>);
    ynm not registered; run `ynm client install <name>``` (as the reference: a client on the
    machine that this project does not use is no fault); server without guidance or hooks:
    warn with the advice; complete: ``server, guidance and hooks in place (<detail>)`` or, for
    a client without hooks, ``server and guidance in place (<detail>)``. ``fix`` is the
    install command wherever something is missing."""
    from ynm.integrations import status

    out = []
    for r in status(work_tree, home, None, env):
        if not r.detected and not r.server:  # e.g. a shared AGENTS.md: shown for its users
            continue
        fix = f"ynm client install {r.client}"
        name = f"client {r.client}"
        if r.problems:
            out.append(check(name, False, r.advice or "", r.level, fix=r.fix))
        elif r.level == "off":
            out.append(check(name, True, f"detected ({r.detection}); ynm not registered; run "
                             f"`{fix}`", fix=fix))
        elif r.level == "warn":
            out.append(check(name, False, r.advice or r.detail, "warn", fix=fix))
        else:
            parts = "server, guidance and hooks" if r.hooks else "server and guidance"
            out.append(check(name, True, f"{parts} in place ({r.detail})"))
    return out


def validation_lines(r: Any) -> list[dict[str, Any]]:
    """A client status's checks (:attr:`ynm.integrations.common.ClientStatus.checked`, one
    ``<what> <detail>`` line per piece) as ``ynm validate`` lines ``{"ok", "what", "detail",
    "fix"?}``: ``server``, ``guidance`` and ``hooks`` are ok as the status says (hooks: all of
    them); any other piece (a ynh harness's ``manifest``) is ok unless ``missing``. A piece
    with a problem fails with the problem as its detail and the problem's fix (a second
    problem of the same piece adds a line); a failing line without one gets ``ynm client
    install <client>``, ``(after the other fixes)`` when there are problems."""
    flags = {"server": r.server, "guidance": r.guidance, "hooks": r.hooks is not False}
    # an install refuses a file with a problem, so it comes after the problems' own fixes
    after = " (after the other fixes)" if r.problems else ""
    by_piece: dict[str, list[Any]] = {}
    for p in r.problems:
        by_piece.setdefault(p.what, []).append(p)
    out = []
    for line in r.checked:
        what, _, detail = line.partition(" ")
        detail = detail.strip()
        found = by_piece.pop(what, [])
        if found:
            out += [{"ok": False, "what": what, "detail": p.detail, "fix": p.fix}
                    for p in found]
            continue
        ok = bool(flags.get(what, detail != "missing"))
        out.append({"ok": ok, "what": what, "detail": detail,
                    **({} if ok else {"fix": f"ynm client install {r.client}" + after})})
    out += [{"ok": False, "what": p.what, "detail": p.detail, "fix": p.fix}
            for found in by_piece.values() for p in found]
    return out


def validate(folder: Path, home: Path, env: Mapping[str, str],
             fix_prefix: str = "ynm") -> dict[str, Any]:
    """``ynm validate``: the setup of every agent client ``folder`` is configured for (a ynh
    harness, else the clients whose files are in it), as ``{"ok", "clients": [{"client",
    "ok", "lines": [{"ok", "what", "detail", "fix"?}]}]}``; a failing line's ``fix`` is the
    problem's (:func:`validation_lines`), its ``ynm`` replaced by ``fix_prefix``.

    Raises:
        YnmError: (exit 1) ``nothing to validate in <folder>: no ynh harness and no agent
            client configured here``.
    """
    from ynm.integrations import project_clients, status

    names = project_clients(folder, home, env)
    if not names:
        raise YnmError(f"nothing to validate in {folder}: no ynh harness and no agent client "
                       "configured here")
    clients = []
    for name in names:
        r = status(folder, home, name, env)[0]
        lines = validation_lines(r)
        for line in lines:
            if fix_prefix != "ynm" and line.get("fix", "").startswith("ynm client "):
                line["fix"] = fix_prefix + line["fix"].removeprefix("ynm")
        clients.append({"client": name, "ok": all(line["ok"] for line in lines),
                        "lines": lines})
    return {"ok": all(c["ok"] for c in clients), "clients": clients}


def format_validation(result: dict[str, Any]) -> str:
    """Human ``ynm validate``: per client ``<client>: valid`` or ``<client>: problems found``,
    then per line ``  <ok  |FAIL>  <what padded to 8>  <detail>`` (reference/cli.md §4.28),
    with ``  fix: <command>`` after a failing line."""
    out = []
    for c in result["clients"]:
        out.append(f"{c['client']}: {'valid' if c['ok'] else 'problems found'}")
        for line in c["lines"]:
            tag = "ok" if line["ok"] else "FAIL"
            text = f"  {tag:<4}  {line['what']:<8}  {line['detail']}"
            if line.get("fix"):
                text += f"  fix: {line['fix']}"
            out.append(text)
    return "\n".join(out)
