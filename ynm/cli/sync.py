"""``ynm sync``: fetch, merge and push memory through git remotes (reference/cli.md §4.26)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from ynm.cli._common import (
    SILENT_HELP,
    check_mount,
    common_options,
    emit,
    json_on_failure,
    open_ynm,
    say,
)
from ynm.model.words import counted


def format_sync(results: dict[str, Any], *, pull: bool = True, push: bool = True,
                dry_run: bool = False) -> str:
    """One line per mount (docs/cli.md "ynm sync") saying what moved, each half (fetch, push)
    for itself: ``<mount>: skipped: <reason>``; ``<mount>: up to date`` when both ran and
    nothing moved; else what the fetch brought (``fetched <r> records in <s> shards (<f>
    fast-forwards, <m> merges)``, the documents and snapshots it fetched) or ``nothing to
    fetch``, then what the push sent (``pushed <r> records in <s> shards``, the documents and
    snapshots it pushed) or ``nothing to push``; a half that did not run is left out
    (``--no-pull``, ``--no-push``). A dry run's lines say the same of what would move (its
    push half is computed, not tried: :func:`ynm.store.sync.sync_log`). Shards
    that moved without a record new to their side (a merge of records both sides had, a
    purge) say so: ``nothing new fetched (<s> shards took the remote's commits, no record
    new here: <how>)``, ``nothing new pushed (<s> shards sent commits, no record new to the
    remote)``. Documents read ``fetched the people document[ (merged)]``, ``pushed the
    people document``; snapshots (ynm compact) ``fetched the snapshot <name>``, ``pushed the
    snapshot <name>``. Then ``, retries <n>`` and ``, conflicts: <c1>; <c2>`` when any.
    ``pull``, ``push``, ``dry_run``: the flags the sync ran with. Counts agree with their
    nouns (``1 record``)."""
    if not results:
        return "nothing to sync (no replicating distributed mount)"
    lines = []
    for mount, r in results.items():
        if r.get("skipped"):
            lines.append(f"{mount}: skipped: {r['skipped']}")
            continue
        fetched, pushed = r["fetched"], r["pushed"]
        docs = r.get("documents") or {}
        snaps = r.get("snapshots") or {}
        got, sent = [], []  # what the fetch brought, what the push sent
        if fetched["shards"]:
            how = []
            if r["fastForwarded"]:
                how.append(counted(len(r["fastForwarded"]), "fast-forward"))
            if r["merged"]:
                how.append(counted(len(r["merged"]), "merge"))
            shards = counted(len(fetched["shards"]), "shard")
            got.append(f"fetched {counted(fetched['records'], 'record')} in {shards} "
                       f"({', '.join(how)})" if fetched["records"] else
                       f"nothing new fetched ({shards} took the remote's commits, no record "
                       f"new here: {', '.join(how)})")
        for name in docs.get("fetched", []):
            how = " (merged)" if name in docs.get("merged", []) else ""
            got.append(f"fetched the {name} document{how}")
        got += [f"fetched the snapshot {name}" for name in snaps.get("fetched", [])]
        if pushed["shards"]:
            shards = counted(len(pushed["shards"]), "shard")
            sent.append(f"pushed {counted(pushed['records'], 'record')} in {shards}"
                        if pushed["records"] else
                        f"nothing new pushed ({shards} sent commits, no record new to the "
                        "remote)")
        sent += [f"pushed the {name} document" for name in docs.get("pushed", [])]
        sent += [f"pushed the snapshot {name}" for name in snaps.get("pushed", [])]
        if pull and push and not got and not sent:
            parts = ["up to date"]
        else:
            parts = ((got or ["nothing to fetch"]) if pull else got) + \
                    ((sent or ["nothing to push"]) if push else sent)
            parts = parts or ["nothing tried (--no-pull and --no-push)"]
        if r["retries"]:
            parts.append(f"retries {r['retries']}")
        line = f"{mount}: " + ", ".join(parts)
        if r["conflicts"]:
            line += ", conflicts: " + "; ".join(r["conflicts"])
        lines.append(line)
    return "\n".join(lines)


def failed(results: dict[str, Any], remote: str | None) -> bool:
    """A sync failed (exit 1) when a mount reports conflicts, or was skipped although the
    remote was named with ``--remote`` (docs/cli.md "ynm sync")."""
    return any(r["conflicts"] or (remote is not None and r.get("skipped"))
               for r in results.values())


@click.command()
@click.option("--remote", help="Remote name (default: the mount's, else config remote, origin).")
@click.option("--push/--no-push", default=True, show_default=True, help="Push after merging.")
@click.option("--pull/--no-pull", default=True, show_default=True, help="Fetch and merge first.")
@click.option("--dry-run", is_flag=True, default=False, help="Report what would change only.")
@click.option("--mount", help="Only this mount; needed (with --remote) for the personal store.")
@common_options(quiet_help=SILENT_HELP)
def sync(as_json: bool, cwd: Path | None, remote: str | None, push: bool, pull: bool,
         dry_run: bool, mount: str | None, quiet: bool) -> None:
    """Share memory: fetch, merge (cat_sort_uniq) and push the notes of each distributed mount.

    \b
    Examples:
      ynm sync
      ynm sync --no-push
      ynm sync --mount personal --remote backup

    --quiet prints nothing (no progress bar, no report, no warning) unless the sync failed.
    """
    from ynm.errors import Refused

    if mount == "personal" and not remote:
        raise Refused("syncing the personal store needs an explicit --remote: personal memory "
                      "never goes to a project's remote")
    with open_ynm(cwd) as ynm:
        check_mount(ynm, mount)
        # --json: the mounts synced and the one that failed also when a git step fails
        with json_on_failure(as_json):
            results = ynm.sync(mount, remote, push=push, pull=pull, dry_run=dry_run)
        # a clone without the project's config has no mount to sync: say why, not only that
        hint = None if results else ynm.no_project_hint()
    bad = failed(results, remote)
    if not (quiet and not bad):
        for r in results.values():
            for warning in r.get("warnings", []):
                click.echo(f"ynm: {warning}", err=True)
    if dry_run and not as_json and not (quiet and not bad):
        say("dry run: nothing was changed; would move:")
    if not (quiet and not bad):
        emit(results, as_json,
             lambda r: format_sync(r, pull=pull, push=push, dry_run=dry_run))
        if hint is not None:
            say(f"hint: {hint}", err=True)
    if bad:
        sys.exit(1)
