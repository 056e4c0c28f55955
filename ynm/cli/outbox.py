"""``ynm outbox status|flush|list``: look into, and empty, the durable queue of the client
port (``ynm.client``; seed 003_b7c8dac142c7aed9.txt) where programs keep the writes ynm could
not take yet."""

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
    from ynm.client.stores import SQLQueueStore, store_url
    from ynm.errors import InvalidInput, YnmError

    url = store_url(store)
    if (store is None or "://" not in store) and not Path(url[len("sqlite:///"):]).is_file():
        # a file path (or the default) that is not there: say so rather than create it
        raise YnmError(f"no queue store at {url[len('sqlite:///'):]}")
    try:
        return SQLQueueStore(url)
    except ValueError as err:
        raise InvalidInput(f"--store: {err}") from None


def _store_error(store: SQLQueueStore, err: Exception) -> Exception:
    from ynm.errors import YnmError

    detail = str(getattr(err, "orig", None) or err).strip().splitlines()
    return YnmError(f"cannot use queue store {store.display_url}: "
                    f"{detail[0] if detail else type(err).__name__}")


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
            out.append({"key": key, "state": state, **doc})
    return out


@click.command()
@click.argument("action", type=click.Choice(["status", "list", "flush"]))
@click.option("--store", "store", envvar="YNM_OUTBOX", default=None,
              help="Queue store: a SQLite file or a database URL "
              "(default $YNM_OUTBOX, else $YNM_HOME/queue.sqlite).")
@click.option("--endpoint", help="flush: send to this hosted ynm's MCP URL instead of the "
              "ynm detected here.")
@click.option("--token", envvar="YNM_OUTBOX_TOKEN",
              help="flush: bearer token for --endpoint (default $YNM_OUTBOX_TOKEN).")
@common_options
def outbox(as_json: bool, cwd: Path | None, action: str, store: str | None,
           endpoint: str | None, token: str | None) -> None:
    """The durable queue of writes that programs using ynm.client could not send yet: how
    many wait (status), which (list), and send them now (flush; exit 1 when any are left).

    \b
    Examples:
      ynm outbox status
      ynm outbox list --json
      ynm outbox flush --store postgresql+psycopg://ynm@db/factory
    """
    if action != "flush" and (endpoint or token):
        raise click.UsageError("--endpoint and --token only apply to flush")
    {"status": _status, "list": _list, "flush": _flush}[action](as_json, cwd, store,
                                                                endpoint, token)


def _status(as_json: bool, cwd: Path | None, store: str | None, *_: Any) -> None:
    from ynm.client.queue import REFUSED_PREFIX, Queue, _iso

    qs = _open(store)
    try:
        count, oldest = Queue(None, qs, owner="outbox").pending()
        refused = len(qs.keys(REFUSED_PREFIX))
    except Exception as err:  # noqa: BLE001 - the database's own errors, reported in one line
        raise _store_error(qs, err) from None
    finally:
        qs.close()
    result = {"store": qs.display_url, "pending": count,
              "oldest": _iso(oldest) if oldest else None, "refused": refused}
    emit(result, as_json, lambda r: (
        f"{r['pending']} queued" + (f" (oldest {r['oldest']})" if r["oldest"] else "")
        + f", {r['refused']} refused, in {r['store']}"))


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
            rec = r.get("record") or {}
            what = rec.get("summary") or (rec.get("content") or "").strip().split("\n")[0]
            claim = f" claimed by {r['claimedBy']}" if r.get("claimedBy") else ""
            error = f" error: {r['error']}" if r.get("error") else ""
            lines.append(f"{r['key']}  {r['state']}  {r.get('queued', '?')}  attempts "
                         f"{r.get('attempts', 0)}{claim}  {rec.get('type', '?')}  "
                         f"{what[:80]}{error}")
        return "\n".join(lines)

    emit(entries, as_json, human)


def _flush(as_json: bool, cwd: Path | None, store: str | None, endpoint: str | None,
           token: str | None) -> None:
    from ynm.client import Queue, YnmHTTP, detect
    from ynm.errors import YnmError

    if endpoint:
        memory: Any = YnmHTTP(endpoint, token)
    else:
        memory, reason = detect(cwd)
        if memory is None:
            raise YnmError(f"ynm is not available here: {reason}")
    qs = _open(store)
    owner = f"outbox-{socket.gethostname()}-{os.getpid()}"
    try:
        queue = Queue(memory, qs, owner=owner)
        queue.flush()
        # every record still queued counts, those meant for another store (Queue's target)
        # included: they are left for a flush run where they belong
        left = queue.pending()[0]
    except YnmError:
        raise
    except Exception as err:  # noqa: BLE001
        raise _store_error(qs, err) from None
    finally:
        qs.close()
    result = {"store": qs.display_url, "sent": queue.sent, "refused": queue.refused,
              "left": left}
    emit(result, as_json, lambda r: f"sent {r['sent']}, refused {r['refused']}, "
         f"{r['left']} left queued")
    if left:
        click.echo(f"Error: {left} record(s) left queued (ynm unavailable, claimed by "
                   "another worker, or meant for another store: see `ynm outbox list`)",
                   err=True)
        raise click.exceptions.Exit(1)
