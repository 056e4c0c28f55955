"""Fixtures for the client port: a PostgreSQL database (``YNM_TEST_DATABASE_URL``, else a
throwaway server started here, else the tests that need one skip with the reason), ``ynm serve
--http`` on a chosen port, worker subprocesses, and reading a project back through ``ynm list``."""

from __future__ import annotations

import glob
import json
import os
import pwd
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.serve import free_port, serve_http

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "client-token"
# read at import: the autouse fixture of tests/conftest.py clears YNM_* for each test
DATABASE_URL = os.environ.get("YNM_TEST_DATABASE_URL")


@contextmanager
def serving(project: Path, port: int) -> Iterator[str]:
    """``ynm serve --http --token TOKEN`` on 127.0.0.1:``port``; yields the MCP endpoint."""
    with serve_http(project, "--token", TOKEN, port=port) as base:
        yield base + "/mcp"


def listed(project: Path) -> list[dict]:
    """Every memory of the project, through the real ``ynm list --all --json``, oldest first."""
    proc = subprocess.run(["ynm", "list", "--all", "--json"], cwd=project, capture_output=True,
                          text=True, timeout=120, check=False)
    assert proc.returncode == 0, proc.stderr
    return sorted((m["current"] for m in json.loads(proc.stdout)), key=lambda r: r["id"])


def worker(*args: str, cwd: Path) -> subprocess.Popen:
    """``python -m tests.client.workers <args>`` with this checkout importable."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [env.get("PYTHONPATH")])])
    return subprocess.Popen([sys.executable, "-m", "tests.client.workers", *args], cwd=cwd,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


# -- PostgreSQL ----------------------------------------------------------------------------


def _pg_bindir() -> Path | None:
    """The directory holding ``initdb`` and ``pg_ctl``: on PATH, else the newest
    ``/usr/lib/postgresql/<version>/bin`` (Debian's layout, not on PATH)."""
    found = shutil.which("initdb")
    if found and shutil.which("pg_ctl"):
        return Path(found).resolve().parent
    dirs = sorted(glob.glob("/usr/lib/postgresql/*/bin"),
                  key=lambda d: int(Path(d).parent.name) if Path(d).parent.name.isdigit() else 0)
    for d in reversed(dirs):
        if (Path(d) / "initdb").exists() and (Path(d) / "pg_ctl").exists():
            return Path(d)
    return None


def _as_server_user() -> tuple[list[str], str | None]:
    """How to run the server's commands: as ourselves, or (initdb refuses root) as the
    ``postgres`` user, else ``nobody``, through ``runuser`` or ``su``."""
    if os.geteuid() != 0:
        return [], None
    for name in ("postgres", "nobody"):
        try:
            pwd.getpwnam(name)
        except KeyError:
            continue
        if shutil.which("runuser"):
            return ["runuser", "-u", name, "--"], name
        return ["su", name, "-s", "/bin/sh", "-c", '"$0" "$@"'], name  # pragma: no cover
    pytest.skip("running as root and no postgres or nobody user to run PostgreSQL as")


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """A SQLAlchemy URL of an empty PostgreSQL database: ``YNM_TEST_DATABASE_URL`` when set,
    else a throwaway server (initdb in a temporary directory, 127.0.0.1 and a free port,
    stopped afterwards), else skip saying why."""
    if DATABASE_URL:
        yield DATABASE_URL
        return
    bindir = _pg_bindir()
    if bindir is None:
        pytest.skip("PostgreSQL not found (no initdb/pg_ctl on PATH or in "
                    "/usr/lib/postgresql/*/bin) and YNM_TEST_DATABASE_URL is not set")
    prefix, user = _as_server_user()
    tmp = Path(tempfile.mkdtemp(prefix="ynm-pg-"))
    data, sock = tmp / "data", tmp / "sock"
    sock.mkdir()
    if user is not None:
        for path in (tmp, sock):
            shutil.chown(path, user)
    port = free_port()

    def run(*argv: str) -> subprocess.CompletedProcess:
        return subprocess.run([*prefix, *argv], capture_output=True, text=True, timeout=120,
                              cwd=tmp, check=False)

    init = run(str(bindir / "initdb"), "-D", str(data), "-U", "ynm", "--auth=trust",
               "-E", "UTF8", "--no-sync")
    if init.returncode != 0:
        shutil.rmtree(tmp, ignore_errors=True)
        pytest.skip(f"initdb failed: {init.stderr.strip()[-300:]}")
    opts = f"-h 127.0.0.1 -p {port} -k {sock} -c fsync=off -c full_page_writes=off"
    start = run(str(bindir / "pg_ctl"), "-D", str(data), "-l", str(tmp / "log"), "-w",
                "-t", "60", "-o", opts, "start")
    if start.returncode != 0:
        log = (tmp / "log").read_text() if (tmp / "log").exists() else ""
        shutil.rmtree(tmp, ignore_errors=True)
        pytest.skip(f"PostgreSQL did not start: {start.stderr.strip()} {log[-300:]}")
    try:
        import psycopg

        with psycopg.connect(f"host=127.0.0.1 port={port} user=ynm dbname=postgres",
                             autocommit=True) as conn:
            conn.execute("CREATE DATABASE ynm_test")
        yield f"postgresql+psycopg://ynm@127.0.0.1:{port}/ynm_test"
    finally:
        run(str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop")
        shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture
def postgres_url(postgres_server: str) -> str:
    """``postgres_server`` with the queue table dropped, so each test starts empty."""
    import sqlalchemy as sa

    from ynm.client.stores import TABLE

    engine = sa.create_engine(postgres_server)
    with engine.begin() as conn:
        conn.execute(sa.text(f"DROP TABLE IF EXISTS {TABLE}"))
    engine.dispose()
    return postgres_server
