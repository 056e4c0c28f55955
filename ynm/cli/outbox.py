"""``ynm outbox status|list|flush|drop``: look into, and empty, the durable queue of the
client port (``ynm.client``; seed 003_b7c8dac142c7aed9.txt) where programs keep the writes ynm
could not take yet, and drop the ones it refused for good."""

from __future__ import annotations

import os
import socket
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ynm.cli._common import common_options, emit

if TYPE_CHECKING:
    from ynm.client.stores import SQLQueueStore


def _open(store: str | None) -> SQLQueueStore:
    """The queue store ``--store`` names (or the default), which must exist: an operator's
    command never creates one (only ``Queue.remember`` creates the default store).

    Raises:
        InvalidInput: ``invalid input: --store: <problem>`` (exit 2) for a store that is
            missing or can never be one (:class:`ynm.client.stores.StoreUnusable`).
        MissingExtra: SQLAlchemy or the database's driver is not installed (exit 1).
    """
    from ynm.client.stores import SQLQueueStore, StoreUnusable
    from ynm.errors import InvalidInput

    try:
        return SQLQueueStore(store, create=False)
    except StoreUnusable as err:
        default = store is None and str(err).startswith("no queue store at ")
        note = " (the default store: nothing was queued here yet)" if default else ""
        raise InvalidInput(f"--store: {err}{note}") from None


def _store_error(store: SQLQueueStore, err: Exception) -> Exception:
    from ynm.client.stores import StoreUnusable
    from ynm.errors import InvalidInput, YnmError

    if isinstance(err, StoreUnusable):  # found by the first query (a database without the table)
        return InvalidInput(f"--store: {err}")
    if isinstance(err, YnmError):
        return err

    detail = str(getattr(err, "orig", None) or err).strip().splitlines()
    return YnmError(f"cannot use queue store {store.display_url}: "
                    f"{detail[0] if detail else type(err).__name__}")


def _state(row: dict[str, Any]) -> str:
    """One listed document's state, for people: ``queued``, ``claimed by <owner> since
    <time>`` (a worker is sending it, or was until its claim runs out), or ``refused:
    <reason>`` (moved aside; a claim left in an older document is not shown)."""
    if row["state"] == "refused":
        return f"refused: {row.get('error') or 'no reason kept'}"
    if row.get("claimedBy"):
        return f"claimed by {row['claimedBy']} since {row.get('claimedAt', '?')}"
    return "queued"


def _entries(store: SQLQueueStore) -> list[dict[str, Any]]:
    import json

    from ynm.client.queue import QUEUE_PREFIX, REFUSED_PREFIX

    out = []
    for prefix, state in ((QUEUE_PREFIX, "queued"), (REFUSED_PREFIX, "refused")):
        for key in store.keys(prefix):
            got = store.get(key)
            if got is None:
                continue
            try:
                doc = json.loads(got[0])
            except ValueError:
                doc = {"raw": got[0]}
            if not isinstance(doc, dict):
                doc = {"raw": got[0]}
            if state == "refused":  # moved aside: nobody holds it, whatever an old copy says
                doc.pop("claimedBy", None)
                doc.pop("claimedAt", None)
            out.append({"key": key, "state": state, **doc})
    return out


@click.command()
@click.argument("action", type=click.Choice(["status", "list", "flush", "drop"]))
@click.argument("ids", nargs=-1)
@click.option("--store", "store", envvar="YNM_OUTBOX", default=None,
              help="Queue store: a SQLite file or a database URL "
              "(default $YNM_OUTBOX, else $YNM_HOME/queue.sqlite).")
@click.option("--endpoint", help="flush: send to this hosted ynm's MCP URL instead of the "
              "ynm detected here.")
@click.option("--token", envvar="YNM_OUTBOX_TOKEN",
              help="flush: bearer token for --endpoint (default $YNM_OUTBOX_TOKEN).")
@click.option("--refused", "all_refused", is_flag=True, default=False,
              help="drop: every refused record, instead of the ids given.")
@click.option("--yes", is_flag=True, default=False,
              help="drop: confirm without asking (dropping is irreversible).")
@common_options
def outbox(as_json: bool, cwd: Path | None, action: str, ids: tuple[str, ...],
           store: str | None, endpoint: str | None, token: str | None, all_refused: bool,
           yes: bool) -> None:
    """The durable queue of writes that programs using ynm.client could not send yet: how
    many wait (status), which (list), send them now (flush; exit 1 when any are left), and
    delete the ones ynm refused for good (drop IDS... or drop --refused).

    \b
    Examples:
      ynm outbox status
      ynm outbox list --json
      ynm outbox flush --store postgresql+psycopg://ynm@db/factory
      ynm outbox drop --refused --yes
    """
    if action != "flush" and (endpoint or token):
        raise click.UsageError("--endpoint and --token only apply to flush")
    if action != "drop" and (ids or all_refused or yes):
        raise click.UsageError("ids, --refused and --yes only apply to drop")
    if action == "drop":
        _drop(as_json, store, list(ids), all_refused, yes)
        return
    {"status": _status, "list": _list, "flush": _flush}[action](as_json, cwd, store,
                                                                endpoint, token)


def _terminal() -> bool:
    """True when a person can answer a confirmation prompt (standard input is a terminal)."""
    import sys

    return bool(sys.stdin.isatty())


def _drop(as_json: bool, store: str | None, ids: list[str], all_refused: bool,
          yes: bool) -> None:
    from ynm.client.queue import REFUSED_PREFIX, Queue
    from ynm.errors import Refused, YnmError

    if bool(ids) == all_refused:
        raise click.UsageError("drop needs the ids of refused records, or --refused for all "
                               "of them (not both)")
    qs = _open(store)
    try:
        queue = Queue(None, qs, owner="outbox", target="outbox")
        count = len(qs.keys(REFUSED_PREFIX)) if all_refused else len(set(ids))
        if not yes:
            if not _terminal():
                raise Refused("dropping refused records is irreversible; re-run with --yes "
                              "to confirm")
            if count and not click.confirm(f"Drop {count} refused record(s) from "
                                           f"{qs.display_url} for good?", err=True):
                raise YnmError("nothing dropped")
        dropped = queue.drop(ids, refused=all_refused)
    except YnmError:
        raise
    except Exception as err:  # noqa: BLE001
        raise _store_error(qs, err) from None
    finally:
        qs.close()
    result = {"store": qs.display_url, "dropped": dropped}
    emit(result, as_json, lambda r: f"dropped {len(r['dropped'])} refused record(s)"
         + "".join(f"\n  {key}" for key in r["dropped"]))


def _status(as_json: bool, cwd: Path | None, store: str | None, *_: Any) -> None:
    from ynm.client.queue import REFUSED_PREFIX, Queue, _iso

    qs = _open(store)
    try:
        count, oldest = Queue(None, qs, owner="outbox").pending()
        refused = qs.keys(REFUSED_PREFIX)
        last = _reason(qs, refused[-1]) if refused else None
    except Exception as err:  # noqa: BLE001 - the database's own errors, reported in one line
        raise _store_error(qs, err) from None
    finally:
        qs.close()
    result = {"store": qs.display_url, "pending": count,
              "oldest": _iso(oldest) if oldest else None, "refused": len(refused),
              "lastRefusal": last}
    emit(result, as_json, lambda r: (
        f"{r['pending']} queued" + (f" (oldest {r['oldest']})" if r["oldest"] else "")
        + f", {r['refused']} refused"
        + (f" (latest: {r['lastRefusal']})" if r["lastRefusal"] else "")
        + f", in {r['store']}"))


def _reason(store: SQLQueueStore, key: str) -> str | None:
    """The ``error`` kept with the refused record ``key``."""
    import json

    got = store.get(key)
    try:
        doc = json.loads(got[0]) if got else None
    except ValueError:
        return None
    return str(doc.get("error")) if isinstance(doc, dict) and doc.get("error") else None


def _list(as_json: bool, cwd: Path | None, store: str | None, *_: Any) -> None:
    qs = _open(store)
    try:
        entries = _entries(qs)
    except Exception as err:  # noqa: BLE001
        raise _store_error(qs, err) from None
    finally:
        qs.close()

    def human(rows: list[dict[str, Any]]) -> str:
        if not rows:
            return "outbox is empty"
        lines = []
        for r in rows:
            rec = r.get("record") if isinstance(r.get("record"), dict) else {}
            what = rec.get("summary") or (rec.get("content") or "").strip().split("\n")[0]
            lines.append(f"{r['key']}  {_state(r)}  queued {r.get('queued', '?')}  attempts "
                         f"{r.get('attempts', 0)}  {rec.get('type', '?')}  {what[:80]}")
        return "\n".join(lines)

    emit(entries, as_json, human)


def _flush(as_json: bool, cwd: Path | None, store: str | None, endpoint: str | None,
           token: str | None) -> None:
    from ynm.client import Queue, YnmHTTP, detect
    from ynm.errors import YnmError

    qs = _open(store)  # a store that cannot be used is refused before anything is sent
    if endpoint:
        memory: Any = YnmHTTP(endpoint, token)
    else:
        memory, reason = detect(cwd)
        if memory is None:
            qs.close()
            raise YnmError(f"ynm is not available here: {reason}")
    owner = f"outbox-{socket.gethostname()}-{os.getpid()}"
    try:
        queue = Queue(memory, qs, owner=owner)
        queue.flush()
        # every record still queued counts, those meant for another store (Queue's target)
        # included: they are left for a flush run where they belong
        rows = [r for r in _entries(qs) if r["state"] == "queued"]
        left = len(rows)
        mine = sum(1 for r in rows if r.get("target") in (None, "", queue.target))
    except YnmError:
        raise
    except Exception as err:  # noqa: BLE001
        raise _store_error(qs, err) from None
    finally:
        qs.close()
    reasons = []  # why records are left, the flush's last reason first
    if queue.stopped:
        reasons.append(f"stopped: {queue.stopped}")
    elif mine:
        reasons.append(f"{mine} claimed by another worker")
    if left > mine:
        reasons.append(f"{left - mine} meant for another store")
    result = {"store": qs.display_url, "sent": queue.sent, "refused": queue.refused,
              "left": left, "stopped": queue.stopped}
    emit(result, as_json, lambda r: f"sent {r['sent']}, refused {r['refused']}, "
         f"{r['left']} left queued")
    if left:
        why = "; ".join(reasons) or "queued by another worker meanwhile"
        click.echo(f"Error: {left} record(s) left queued: {why} (see `ynm outbox list`)",
                   err=True)
        raise click.exceptions.Exit(1)
