"""``ynm outbox status|list|flush|retry|drop``: look into, and empty, the durable queue of
the client port (``ynm.client``; seed 003_b7c8dac142c7aed9.txt) where programs keep the writes
ynm could not take yet, queue again the ones it refused once the cause is fixed, and drop
records for good."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from ynm.cli._common import common_options, emit, say
from ynm.model.words import counted

if TYPE_CHECKING:
    from ynm.client.stores import SQLQueueStore


def _store_source() -> str:
    """How the store was named, for messages: ``--store``, ``$YNM_OUTBOX``, or ``default``
    (neither: ``$YNM_HOME/queue.sqlite``)."""
    from click.core import ParameterSource

    ctx = click.get_current_context(silent=True)
    source = ctx.get_parameter_source("store") if ctx is not None else None
    if source is ParameterSource.ENVIRONMENT:
        return "$YNM_OUTBOX"
    if source is ParameterSource.COMMANDLINE:
        return "--store"
    return "default"


def _open(store: str | None, *, missing_default_ok: bool = False) -> SQLQueueStore | None:
    """The queue store ``--store`` (or ``$YNM_OUTBOX``) names, or the default, which must
    exist: an operator's command never creates one (only ``Queue.remember`` creates the
    default store). The default store not created yet (nothing was ever queued on this
    machine) is None with ``missing_default_ok``: an empty queue.

    Raises:
        InvalidInput: ``invalid input: --store: <problem>`` (or ``$YNM_OUTBOX: ...`` when the
            variable named it; exit 2) for a store that is missing or can never be one
            (:class:`ynm.client.stores.StoreUnusable`).
        MissingExtra: SQLAlchemy or the database's driver is not installed (exit 1).
    """
    from ynm.client.stores import SQLQueueStore, StoreUnusable
    from ynm.errors import InvalidInput

    source = _store_source()
    try:
        return SQLQueueStore(store, create=False)
    except StoreUnusable as err:
        default = source == "default" and str(err).startswith("no queue store at ")
        if default and missing_default_ok:
            return None
        note = " (the default store: nothing was queued here yet)" if default else ""
        label = "--store" if source == "default" else source
        raise InvalidInput(f"{label}: {err}{note}") from None


def _default_url() -> str:
    from ynm.client.stores import default_url

    return default_url()


def _store_error(store: SQLQueueStore, err: Exception) -> Exception:
    from ynm.client.stores import StoreUnavailable, StoreUnusable
    from ynm.errors import InvalidInput, YnmError

    if isinstance(err, StoreUnusable):  # found by the first query (a database without the table)
        label = _store_source()
        return InvalidInput(f"{'--store' if label == 'default' else label}: {err}")
    if isinstance(err, YnmError):
        return err
    if isinstance(err, StoreUnavailable) and err.__cause__ is not None:
        err = err.__cause__
    detail = str(getattr(err, "orig", None) or err).strip().splitlines()
    return YnmError(f"cannot use queue store {store.display_url}: "
                    f"{detail[0] if detail else type(err).__name__}")


def _state(row: dict[str, Any]) -> str:
    """One listed document's state, for people: ``queued``, ``claimed by <owner> since
    <time>`` (a worker is sending it, or was until its claim runs out), or ``refused:
    <reason>`` (moved aside; a claim left in an older document is not shown; a reason that is
    itself ``refused: ...``, ynm's redaction message, is not prefixed twice)."""
    if row["state"] == "refused":
        reason = str(row.get("error") or "no reason kept")
        return reason if reason.startswith("refused:") else f"refused: {reason}"
    if row.get("claimedBy"):
        return f"claimed by {row['claimedBy']} since {row.get('claimedAt', '?')}"
    return "queued"


def _entries(store: SQLQueueStore | None) -> list[dict[str, Any]]:
    import json

    from ynm.client.queue import QUEUE_PREFIX, REFUSED_PREFIX

    out: list[dict[str, Any]] = []
    if store is None:
        return out
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
@click.argument("action", type=click.Choice(["status", "list", "flush", "drop", "retry"]))
@click.argument("ids", nargs=-1)
@click.option("--store", "store", envvar="YNM_OUTBOX", default=None,
              help="Queue store: a SQLite file or a database URL "
              "(default $YNM_OUTBOX, else $YNM_HOME/queue.sqlite).")
@click.option("--endpoint", help="flush: send to this hosted ynm's MCP URL instead of the "
              "ynm detected here.")
@click.option("--token", envvar="YNM_OUTBOX_TOKEN",
              help="flush: bearer token for --endpoint (default $YNM_OUTBOX_TOKEN).")
@click.option("--refused", "all_refused", is_flag=True, default=False,
              help="drop, retry: every refused record, instead of the ids given.")
@click.option("--orphaned", is_flag=True, default=False,
              help="drop: every queued record meant for a repository that no longer exists.")
@click.option("--queued", "any_queued", is_flag=True, default=False,
              help="drop: the ids given may name any queued record (it is never sent).")
@click.option("--yes", is_flag=True, default=False,
              help="drop: confirm without asking (dropping is irreversible).")
@common_options
def outbox(as_json: bool, cwd: Path | None, action: str, ids: tuple[str, ...],
           store: str | None, endpoint: str | None, token: str | None, all_refused: bool,
           orphaned: bool, any_queued: bool, yes: bool) -> None:
    """The durable queue of writes that programs using ynm.client could not send yet: how
    many wait (status), which (list), send them now (flush; exit 1 when any are left or
    refused), queue refused records again once their cause is fixed (retry IDS... or retry
    --refused), and delete records for good (drop IDS..., drop --refused, drop --orphaned).

    \b
    Examples:
      ynm outbox status
      ynm outbox list --json
      ynm outbox flush --store postgresql+psycopg://ynm@db/factory
      ynm outbox retry --refused
      ynm outbox drop --refused --yes
      ynm outbox drop --orphaned --yes
    """
    from click.core import ParameterSource

    ctx = click.get_current_context()
    token_given = ctx.get_parameter_source("token") is ParameterSource.COMMANDLINE
    if action != "flush" and (endpoint or token_given):
        raise click.UsageError("--endpoint and --token only apply to flush")
    if token_given and not endpoint:
        raise click.UsageError("--token needs --endpoint (the ynm detected here takes no "
                               "token)")
    if action not in ("drop", "retry") and (ids or all_refused):
        raise click.UsageError("ids and --refused only apply to drop and retry")
    if action != "drop" and (orphaned or any_queued or yes):
        raise click.UsageError("--orphaned, --queued and --yes only apply to drop")
    if action == "drop":
        _drop(as_json, store, list(ids), all_refused, orphaned, any_queued, yes)
        return
    if action == "retry":
        _retry(as_json, store, list(ids), all_refused)
        return
    if action == "flush" and endpoint:
        from ynm.client.memory import normalize_endpoint
        from ynm.errors import InvalidInput

        try:
            endpoint = normalize_endpoint(endpoint)
        except ValueError as err:
            raise InvalidInput(f"--endpoint: {err}") from None
    {"status": _status, "list": _list, "flush": _flush}[action](as_json, cwd, store,
                                                                endpoint, token)


def _terminal() -> bool:
    """True when a person can answer a confirmation prompt (standard input is a terminal)."""
    import sys

    return bool(sys.stdin.isatty())


def _drop(as_json: bool, store: str | None, ids: list[str], all_refused: bool,
          orphaned: bool, any_queued: bool, yes: bool) -> None:
    from ynm.client.queue import QUEUE_PREFIX, REFUSED_PREFIX, Queue
    from ynm.errors import Refused, YnmError

    if (bool(ids) + all_refused + orphaned) != 1:
        raise click.UsageError("drop needs the ids of records, or --refused for every refused "
                               "record, or --orphaned for every queued record whose repository "
                               "is gone (not both)")
    if any_queued and not ids:
        raise click.UsageError("--queued applies to the ids given")
    qs = _open(store)
    try:
        queue = Queue(None, qs, owner="outbox", target="outbox")
        if all_refused:
            count, what = len(qs.keys(REFUSED_PREFIX)), "refused record"
        elif orphaned:
            count = len([k for k in qs.keys(QUEUE_PREFIX) if queue._orphaned(k)])
            what = "queued record"
        else:
            count, what = len(set(ids)), "record"
        what = counted(count, what) + (" whose repository no longer exists" if orphaned else "")
        if not yes:
            if not _terminal():
                raise Refused("dropping records is irreversible; re-run with --yes to confirm")
            if count and not click.confirm(f"Drop {what} from {qs.display_url} for good?",
                                           err=True):
                raise YnmError("nothing dropped")
        dropped = queue.drop(ids, refused=all_refused, orphaned=orphaned, queued=any_queued)
    except YnmError:
        raise
    except Exception as err:  # noqa: BLE001
        raise _store_error(qs, err) from None
    finally:
        qs.close()
    result = {"store": qs.display_url, "dropped": dropped}
    emit(result, as_json, lambda r: f"dropped {counted(len(r['dropped']), 'record')}"
         + "".join(f"\n  {key}" for key in r["dropped"]))


def _retry(as_json: bool, store: str | None, ids: list[str], all_refused: bool) -> None:
    from ynm.client.queue import Queue
    from ynm.errors import YnmError

    if bool(ids) == all_refused:
        raise click.UsageError("retry needs the ids of refused records, or --refused for all "
                               "of them (not both)")
    qs = _open(store)
    try:
        back = Queue(None, qs, owner="outbox", target="outbox").retry(ids, refused=all_refused)
    except YnmError:
        raise
    except Exception as err:  # noqa: BLE001
        raise _store_error(qs, err) from None
    finally:
        qs.close()
    result = {"store": qs.display_url, "queued": back}
    emit(result, as_json, lambda r: f"queued {counted(len(r['queued']), 'refused record')} again "
         "(`ynm outbox flush` sends them)" + "".join(f"\n  {key}" for key in r["queued"]))


def _status(as_json: bool, cwd: Path | None, store: str | None, *_: Any) -> None:
    from ynm.client.queue import REFUSED_PREFIX, Queue, _iso

    qs = _open(store, missing_default_ok=True)
    if qs is None:  # the default store, never created: nothing was ever queued here
        count, oldest, refused, last, url = 0, None, [], None, _default_url()
    else:
        try:
            count, oldest = Queue(None, qs, owner="outbox", target="outbox").pending()
            refused = qs.keys(REFUSED_PREFIX)
            last = _reason(qs, refused[-1]) if refused else None
        except Exception as err:  # noqa: BLE001 - the database's own errors, in one line
            raise _store_error(qs, err) from None
        finally:
            qs.close()
        url = qs.display_url
    result = {"store": url, "pending": count,
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


def _target_text(row: dict[str, Any]) -> str:
    """Where a listed record is meant to go, for people: its ``target``, ``(gone)`` after a
    repository that no longer exists, ``any`` for a document without one."""
    from ynm.client.queue import target_gone

    target = str(row.get("target") or "any")
    return f"{target} (gone)" if target_gone(target) else target


def _list(as_json: bool, cwd: Path | None, store: str | None, *_: Any) -> None:
    qs = _open(store, missing_default_ok=True)
    try:
        entries = _entries(qs)
    except Exception as err:  # noqa: BLE001
        raise _store_error(qs, err) from None
    finally:
        if qs is not None:
            qs.close()

    def human(rows: list[dict[str, Any]]) -> str:
        if not rows:
            return "outbox is empty"
        lines = []
        for r in rows:
            rec = r.get("record") if isinstance(r.get("record"), dict) else {}
            what = rec.get("summary") or (rec.get("content") or "").strip().split("\n")[0]
            lines.append(f"{r['key']}  {_state(r)}  for {_target_text(r)}  queued "
                         f"{r.get('queued', '?')}  attempts {r.get('attempts', 0)}  "
                         f"{rec.get('type', '?')}  {what[:80]}")
        return "\n".join(lines)

    emit(entries, as_json, human)


def _flush(as_json: bool, cwd: Path | None, store: str | None, endpoint: str | None,
           token: str | None) -> None:
    import socket

    from ynm.client import Queue, YnmHTTP, detect
    from ynm.client.queue import target_gone
    from ynm.errors import YnmError

    # a store that cannot be used is refused before anything is sent
    qs = _open(store, missing_default_ok=True)
    if endpoint:
        memory: Any = YnmHTTP(endpoint, token)
    else:
        memory, reason = detect(cwd)
        if memory is None:
            if qs is not None:
                qs.close()
            raise YnmError(f"ynm is not available here: {reason}")
    if qs is None:  # the default store, never created: nothing to send
        emit({"store": _default_url(), "sent": 0, "refused": 0, "left": 0, "stopped": None},
             as_json, lambda r: "sent 0, refused 0, 0 left queued")
        return
    owner = f"outbox-{socket.gethostname()}-{os.getpid()}"
    try:
        queue = Queue(memory, qs, owner=owner)
        queue.flush()
        # every record still queued counts, those meant for another store (Queue's target)
        # included: they are left for a flush run where they belong
        rows = [r for r in _entries(qs) if r["state"] == "queued"]
        left = len(rows)
        mine = sum(1 for r in rows if r.get("target") in (None, "", queue.target))
        gone = sum(1 for r in rows if target_gone(str(r.get("target") or "")))
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
    if left - mine - gone > 0:
        reasons.append(f"{left - mine - gone} meant for another store")
    if gone:
        reasons.append(f"{gone} meant for a repository that no longer exists (`ynm outbox "
                       "drop --orphaned` deletes them)")
    result = {"store": qs.display_url, "sent": queue.sent, "refused": queue.refused,
              "left": left, "stopped": queue.stopped}
    emit(result, as_json, lambda r: f"sent {r['sent']}, refused {r['refused']}, "
         f"{r['left']} left queued")
    problems = []
    if left:
        why = "; ".join(reasons) or "queued by another worker meanwhile"
        problems.append(f"{counted(left, 'record')} left queued: {why}")
    if queue.refused:
        problems.append(f"{counted(queue.refused, 'record')} refused by ynm during this flush, "
                        "kept aside (`ynm outbox retry` once fixed, or `ynm outbox drop`)")
    if problems:
        say(f"Error: {'; '.join(problems)} (see `ynm outbox list`)", err=True)
        raise click.exceptions.Exit(1)
