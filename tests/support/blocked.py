"""Run the ``ynm`` command line in a subprocess where some packages look uninstalled: the
import system's path finder answers "not found" for them, so ``import x`` raises
``ModuleNotFoundError`` and ``importlib.util.find_spec("x")`` is None, as on a machine
without the extra."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

PRELUDE = """
import importlib.machinery, sys
BLOCKED = set(sys.argv.pop(1).split(","))
class _Hidden:
    @classmethod
    def find_spec(cls, name, path=None, target=None):
        if any(name == b or name.startswith(b + ".") for b in BLOCKED):
            return None
        return importlib.machinery.PathFinder.find_spec(name, path, target)
    @classmethod
    def find_distributions(cls, *args, **kwargs):
        return importlib.machinery.PathFinder.find_distributions(*args, **kwargs)
    @classmethod
    def invalidate_caches(cls):
        importlib.machinery.PathFinder.invalidate_caches()
sys.meta_path[:] = [_Hidden if f is importlib.machinery.PathFinder else f for f in sys.meta_path]
for loaded in [m for m in sys.modules if any(m == b or m.startswith(b + ".") for b in BLOCKED)]:
    del sys.modules[loaded]
from ynm.cli import main
sys.argv[0] = "ynm"
main()
"""

ROOT = Path(__file__).resolve().parents[2]


def run_without(blocked: Iterable[str], *args: str, cwd: Path | str,
                env: Mapping[str, str] | None = None,
                timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``ynm <args>`` with the modules ``blocked`` (and their submodules) hidden; stdout and
    stderr as text."""
    full = dict(os.environ if env is None else env)
    full["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), full.get("PYTHONPATH")) if p)
    return subprocess.run([sys.executable, "-c", PRELUDE, ",".join(blocked), *args],
                          cwd=cwd, env=full, capture_output=True, text=True, timeout=timeout,
                          stdin=subprocess.DEVNULL)
