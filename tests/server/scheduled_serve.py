"""``ynm`` with ``Ynm.consolidate`` and ``Ynm.sync`` traced, for the scheduler tests: run as
``python scheduled_serve.py serve --http ...`` in a subprocess.

Environment:
    SCHED_TRACE: a file that gets one JSON line ``[job, start, end]`` per run (monotonic
        seconds, comparable between runs of one process).
    SCHED_DREAM_DELAY_S / SCHED_SYNC_DELAY_S: seconds each run sleeps before doing its work
        (a slow run).
    SCHED_DREAM_FAIL_FIRST: when set, the first consolidation raises ``RuntimeError: boom``.
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time

import ynm.service.ynm as service

_lock = threading.Lock()
_calls = {"dream": 0, "sync": 0}


def _traced(job: str, fn):
    def run(self, *args, **kwargs):
        start = time.monotonic()
        with _lock:
            _calls[job] += 1
            first = _calls[job] == 1
        try:
            time.sleep(float(os.environ.get(f"SCHED_{job.upper()}_DELAY_S", "0")))
            if job == "dream" and first and os.environ.get("SCHED_DREAM_FAIL_FIRST"):
                raise RuntimeError("boom")
            return fn(self, *args, **kwargs)
        finally:
            with _lock, open(os.environ["SCHED_TRACE"], "a") as f:
                f.write(json.dumps([job, start, time.monotonic()]) + "\n")

    return run


service.Ynm.consolidate = _traced("dream", service.Ynm.consolidate)
service.Ynm.sync = _traced("sync", service.Ynm.sync)

if __name__ == "__main__":
    from ynm.cli import main

    sys.argv[0] = "ynm"
    main()
