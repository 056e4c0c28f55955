"""A cache write stopped part-way (SQLite's interrupt, as Ctrl-C or a busy handler can cause)
keeps the cache as it was and reports the real cause: SQLite may already have rolled the
transaction back itself, and a second ROLLBACK must not replace the error with "cannot
rollback - no transaction is active"."""

from __future__ import annotations

import itertools

import sqlean as sqlite3

from ynm.index.schema import rollback

from .conftest import rec

STEP = 97  # SQLite VM steps between two interrupt points; a refresh here takes ~6,000


def memory_ids(cache) -> set[str]:
    return {r[0] for r in cache.conn.execute("SELECT memory_id FROM memories")}


def test_a_refresh_interrupted_anywhere_reports_it_and_changes_nothing(log, cache, append):
    first = rec(content="alpha kept")
    append(first, own=False)
    cache.refresh(log)
    later = [rec(content=f"beta {i} arrives later") for i in range(30)]
    append(*later, own=False)  # a foreign write: the cache has not seen it
    interrupted = 0
    for at in itertools.count(1, STEP):  # interrupt once at step `at`; then at a later one
        steps = itertools.count(1)
        cache.conn.set_progress_handler(lambda: next(steps) == at, 1)  # noqa: B023
        try:
            report = cache.refresh(log)
        except sqlite3.OperationalError as err:
            # SQLite's own word for it ("interrupted", or "vtable constructor failed: fts"
            # when the FTS table was being opened), never the failed ROLLBACK's
            assert "cannot rollback" not in str(err)
            assert not cache.conn.in_transaction
            assert memory_ids(cache) == {first["id"]}  # nothing half-applied
            interrupted += 1
            continue
        finally:
            cache.conn.set_progress_handler(None, 1)
        break
    assert interrupted > 50  # every stage of the refresh was tried, its commit among them
    assert report.records_added == 30
    assert memory_ids(cache) == {first["id"]} | {r["id"] for r in later}
    assert cache.is_fresh(log)


def test_rollback_without_a_transaction_is_quiet(tmp_path):
    conn = sqlite3.connect(tmp_path / "x.sqlite", isolation_level=None)
    conn.execute("CREATE TABLE t(x)")
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("INSERT INTO t VALUES (1)")
    rollback(conn)
    assert conn.execute("SELECT count(*) FROM t").fetchone()[0] == 0
    rollback(conn)  # none open: nothing to do, no "cannot rollback"
    conn.close()
