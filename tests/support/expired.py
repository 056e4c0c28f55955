"""Working memory whose ttl has already run out, for the tests of expiry.

No input can write one any more (a ttl of no length, ``PT0S``, is refused: it would expire the
memory the moment it is written), so :func:`import_expired_working` imports a record written
long ago with a ttl of one hour, through ``ynm import``, as a store the reference wrote or an
old session would hold it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ynm.model.ids import new_ulid

RECORDED_MS = 1_767_261_600_000  # 2026-01-01T10:00:00.000Z
RECORDED_AT = "2026-01-01T10:00:00.000Z"
TTL = "PT1H"  # ran out at 11:00 that day


def import_expired_working(cli_run: Any, folder: Path, session: str, content: str,
                           *args: Any) -> str:
    """Import one personal working memory of ``session/<session>`` recorded at
    :data:`RECORDED_AT` with ttl :data:`TTL` (so expired by the wall clock), through
    ``cli_run("import", <file>, *args)``; ``args`` may carry ``--cwd``. Returns its memory id."""
    rid = new_ulid(RECORDED_MS, os.urandom)
    record = {"v": 1, "id": rid, "memoryId": rid, "op": "create", "type": "working",
              "level": "personal", "namespace": f"session/{session}", "tags": [],
              "content": content, "summary": content, "recordedAt": RECORDED_AT, "ttl": TTL,
              "provenance": {"actor": "user:tester", "session": session}, "links": []}
    path = folder / f"expired-{rid}.jsonl"
    path.write_text(json.dumps(record) + "\n")
    result = cli_run("import", path, *args)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "imported 1 record(s)\n", result.stdout
    return rid
