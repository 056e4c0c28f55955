"""Worker processes for the client tests, run as ``python -m tests.client.workers <mode> ...``.

``flush <store> <owner> <project> <go-file>``: wait for ``<go-file>``, then flush the queue into
the project's ynm through the service in-process (a fast memory: the same append, lock and
compare-and-swap as ``ynm remember``, without a process per record) until nothing is left;
print ``{"sent": n}``.

``hang <store> <owner> <marker>``: flush with a memory that writes ``<marker>`` once it holds a
claim and then hangs, so the test can SIGKILL it mid-send.

``cli <store> <owner> <bin>``: flush through ``YnmCLI(bin=<bin>)`` (a stand-in executable),
so the test can kill this worker while its ``ynm remember`` child runs.

``write-hang <store> <owner> <project> <marker>``: flush with a memory that writes the record
through the real ``ynm`` (as ``YnmCLI`` would, idempotency tag included), then writes
``<marker>`` and hangs: the write is done but the claim is still held when the test kills it.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any

from ynm.client import Queue, Rejected, SQLQueueStore, Unavailable, YnmCLI


class ServiceMemory:
    """A :class:`ynm.client.Memory` that writes through ``ynm.service`` in this process."""

    def __init__(self, project: str | Path) -> None:
        from ynm.service.ynm import Ynm

        self.ynm = Ynm.open(project)

    def remember(self, record: Any) -> dict[str, Any]:
        from ynm.errors import YnmError
        from ynm.model.inputs import RememberInput, parse_input

        try:
            return self.ynm.remember(parse_input(RememberInput, record.to_json()))
        except YnmError as err:
            raise (Rejected if err.exit_code == 2 else Unavailable)(str(err)) from None


class HangingMemory:
    """Writes ``marker`` when asked to send (the record is claimed by then), then hangs."""

    def __init__(self, marker: str) -> None:
        self.marker = Path(marker)

    def remember(self, record: Any) -> dict[str, Any]:
        self.marker.write_text(record.content)
        time.sleep(600)
        raise Unavailable("hung")


class WrittenThenHanging(YnmCLI):
    """Writes the record through the real ynm, then writes ``marker`` and hangs."""

    def __init__(self, project: str, marker: str) -> None:
        super().__init__(cwd=project)
        self.marker = Path(marker)

    def remember(self, record: Any) -> dict[str, Any]:
        out = super().remember(record)
        self.marker.write_text(out["memoryId"])
        time.sleep(600)
        raise Unavailable("hung")


def main(argv: list[str]) -> int:
    mode, store_url, owner = argv[:3]
    store = SQLQueueStore(store_url)
    if mode == "hang":
        Queue(HangingMemory(argv[3]), store, owner=owner).flush()
        return 1
    if mode == "cli":
        Queue(YnmCLI(bin=argv[3]), store, owner=owner, target="user").flush()
        return 1
    if mode == "write-hang":
        memory = WrittenThenHanging(argv[3], argv[4])
        Queue(memory, store, owner=owner).flush()
        return 1
    memory = ServiceMemory(argv[3])
    go = Path(argv[4])
    deadline = time.monotonic() + 60
    while not go.exists():
        if time.monotonic() > deadline:
            return 3
        time.sleep(0.01)
    queue = Queue(memory, store, owner=owner)
    while queue.flush() > 0:
        time.sleep(0.02)  # the rest are claimed by the other workers
        if time.monotonic() > deadline + 240:
            return 4
    print(json.dumps({"sent": queue.sent}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
