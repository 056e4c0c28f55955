"""The client port: how another program (a build factory, a CI job, a pool of workers) writes
what only it can see into ynm, when ynm is there, and loses nothing when it is not
(seed 003_b7c8dac142c7aed9.txt).

```python
from ynm.client import detect, Record, Queue, SQLQueueStore

memory, reason = detect()                      # (YnmCLI | None, why)
queue = Queue(memory, SQLQueueStore(), owner="worker-1")   # $YNM_HOME/queue.sqlite
queue.remember(Record(type="episodic", namespace="factory/host/owner/repo",
                      level="distributed", subject="step:build", summary="Build passed",
                      content="...", tags=["ci"], data_schema="ynf.step.v1",
                      data={"ms": 1200}, source="build"))
```

Light on purpose: importing it loads no git library, no SQLite extension, no model and no
SQLAlchemy (a store imports SQLAlchemy when it is made; a record imports the validation rules
when it is built; ``YnmHTTP`` imports the ``mcp`` SDK when it sends).
"""

from __future__ import annotations

from ynm.client.detect import detect
from ynm.client.memory import (
    OUTBOX_TAG,
    Memory,
    NotYet,
    Rejected,
    Unavailable,
    YnmCLI,
    YnmHTTP,
)
from ynm.client.queue import (
    CLAIM_TTL,
    QUEUE_CAP,
    QUEUE_PREFIX,
    REFUSED_PREFIX,
    Queue,
    Queued,
)
from ynm.client.record import Record
from ynm.client.stores import QueueStore, SQLQueueStore, StoreUnavailable, StoreUnusable

__all__ = [
    "CLAIM_TTL",
    "OUTBOX_TAG",
    "QUEUE_CAP",
    "QUEUE_PREFIX",
    "REFUSED_PREFIX",
    "Memory",
    "NotYet",
    "Queue",
    "QueueStore",
    "Queued",
    "Record",
    "Rejected",
    "SQLQueueStore",
    "StoreUnavailable",
    "StoreUnusable",
    "Unavailable",
    "YnmCLI",
    "YnmHTTP",
    "detect",
]
