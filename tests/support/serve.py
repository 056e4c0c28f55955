"""``ynm serve --http`` in a subprocess for tests, on 127.0.0.1, waited for until ``/health``
answers 200 and stopped (terminate, then kill) afterwards."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def free_port() -> int:
    """A port of 127.0.0.1 free at the time of asking."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextmanager
def serve_http(project: Path, *args: str, port: int | None = None,
               env: dict[str, str] | None = None, host: str = "127.0.0.1",
               wait_s: float = 30.0, stderr: Path | None = None,
               stdout: Path | None = None) -> Iterator[str]:
    """``ynm serve --http --host <host> --port <port or a free one> --cwd <project> <args>``
    with the process environment plus ``env``; yields the base URL (reached on 127.0.0.1).
    The server's stderr (one request log line per request) is appended to the file ``stderr`` (a
    temporary file when not given: a pipe nobody reads would fill up and stall the server);
    its stdout to the file ``stdout``, else nowhere.

    Raises:
        AssertionError: the server exited or did not answer ``/health`` within ``wait_s``
            seconds (with its stderr)."""
    import tempfile

    port = port or free_port()
    err_file = stderr.open("a+b") if stderr is not None else tempfile.TemporaryFile()
    out_file = stdout.open("wb") if stdout is not None else subprocess.DEVNULL
    proc = subprocess.Popen(
        [sys.executable, "-m", "ynm", "serve", "--http", "--host", host, "--port",
         str(port), "--cwd", str(project), *args],
        env={**os.environ, **(env or {})}, stdout=out_file, stderr=err_file)
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + wait_s
        while True:
            try:
                with urllib.request.urlopen(base + "/health", timeout=2) as resp:
                    if resp.status == 200:
                        break
            except OSError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                err_file.seek(0)
                raise AssertionError(f"server did not start: {err_file.read().decode()}")
            time.sleep(0.05)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:  # pragma: no cover
            proc.kill()
            proc.wait()
        err_file.close()
        if out_file is not subprocess.DEVNULL:
            out_file.close()
