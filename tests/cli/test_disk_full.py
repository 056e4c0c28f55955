"""A full disk is named as such, with what to do, not as an unexpected failure."""

from __future__ import annotations

import errno

import pytest
import sqlean

from ynm.service.ynm import Ynm


def _sqlite_full() -> Exception:
    """SQLite's SQLITE_FULL as the driver raises it."""
    with sqlean.connect(":memory:") as conn:
        conn.execute("PRAGMA max_page_count = 2")
        conn.execute("CREATE TABLE t (x)")
        try:
            conn.execute("INSERT INTO t VALUES (randomblob(100000))")
        except sqlean.OperationalError as err:
            return err
    raise AssertionError("SQLite did not fill up")


@pytest.mark.parametrize("make", [_sqlite_full,
                                  lambda: OSError(errno.ENOSPC, "No space left on device")])
def test_a_full_disk_says_so(project, ynm_home, cli_run, monkeypatch, make):
    err = make()

    def fail(self, *args, **kwargs):
        raise err

    monkeypatch.setattr(Ynm, "reindex", fail)
    result = cli_run("reindex")
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: the disk is full (")
    assert result.stderr.rstrip().endswith("free some space and run the command again")
    assert "YNM_DEBUG" not in result.stderr


def test_another_database_error_is_still_unexpected(project, ynm_home, cli_run, monkeypatch):
    def fail(self, *args, **kwargs):
        raise sqlean.OperationalError("no such table: x")

    monkeypatch.setattr(Ynm, "reindex", fail)
    result = cli_run("reindex")
    assert result.exit_code == 1
    assert result.stderr == ("Error: OperationalError: no such table: x "
                             "(set YNM_DEBUG=1 for the traceback)\n")
