"""``import ynm.client`` stays light: no git library, no SQLite extension driver, no torch,
and not the service layer (DESIGN.md, ynm/client/); measured in a fresh interpreter."""

from __future__ import annotations

import json
import os
import subprocess
import sys

HEAVY = ("pygit2", "sqlean", "torch", "sqlalchemy", "mcp", "pydantic", "ynm.service",
         "ynm.index", "ynm.store", "ynm.cli", "numpy", "click")


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport sys, json\n"
                          "print(json.dumps(sorted(sys.modules)))"],
                         capture_output=True, text=True, env=dict(os.environ), timeout=60, check=False)
    assert out.returncode == 0, out.stderr
    return set(json.loads(out.stdout.splitlines()[-1]))


def _heavy(modules: set[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


def test_import_loads_nothing_heavy():
    assert _heavy(_modules_after("import ynm.client")) == []


def test_detect_loads_nothing_heavy(project):
    code = "from ynm.client import detect\nassert detect()[0] is not None"
    assert _heavy(_modules_after(code)) == []


def test_a_record_loads_the_rules_but_no_store_or_git():
    code = "from ynm.client import Record\nRecord(type='episodic', content='x')"
    heavy = _heavy(_modules_after(code))
    assert "pydantic" in heavy  # the same rules as ynm remember
    assert not [m for m in heavy if m.split(".")[0] in ("pygit2", "sqlean", "torch")]
    assert not [m for m in heavy if m.startswith(("ynm.service", "ynm.store", "ynm.index"))]
