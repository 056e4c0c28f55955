"""A full disk is named as such, with where and what to do, not as an unexpected failure."""

from __future__ import annotations

import errno
import tempfile

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
                                  lambda: OSError(errno.ENOSPC, "No space left on device",
                                                  "/tmp/x/cache.sqlite")])
def test_a_full_disk_says_so(project, ynm_home, cli_run, monkeypatch, make):
    err = make()

    def fail(self, *args, **kwargs):
        raise err

    monkeypatch.setattr(Ynm, "reindex", fail)
    result = cli_run("reindex")
    assert result.exit_code == 1
    assert result.stderr.startswith("Error: a disk is full (")
    assert result.stderr.rstrip().endswith("free some space there and run the command again")
    assert "YNM_DEBUG" not in result.stderr
    if isinstance(err, OSError):  # the file it names
        assert "/tmp/x/cache.sqlite" in result.stderr
    else:  # SQLite does not say which file: the cache's disk or the temporary folder
        assert f"temporary folder {tempfile.gettempdir()} (TMPDIR)" in result.stderr


def test_another_database_error_is_still_unexpected(project, ynm_home, cli_run, monkeypatch):
    def fail(self, *args, **kwargs):
        raise sqlean.OperationalError("no such table: x")

    monkeypatch.setattr(Ynm, "reindex", fail)
    result = cli_run("reindex")
    assert result.exit_code == 1
    assert result.stderr == ("Error: OperationalError: no such table: x "
                             "(set YNM_DEBUG=1 for the traceback)\n")
