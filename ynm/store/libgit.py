"""pygit2, imported on first use.

Importing pygit2 costs a process ~70 ms (its shared libraries, its enums and the TLS certificate
store it loads at import), a fifth of a ``ynm recall``. The store modules take ``pygit2`` from
here: a stand-in module that imports the real one the first time any of its attributes is read
(under a lock, so threads that meet it at once import it once), applies ynm's settings to it and
from then on holds the real module's attributes as its own. A read that needs no git object
(a recall answered from a fresh cache) never imports it.

Settings applied on import: objects are read without re-hashing them, as git itself reads them
(only fsck verifies): libgit2's strict verification costs ~20 ms on a 6 MB shard blob, on every
read.
"""

from __future__ import annotations

import importlib
import threading
import types
from typing import Any

__all__ = ["loaded", "pygit2"]

_LOCK = threading.Lock()


class _Pygit2(types.ModuleType):
    """The stand-in: an attribute it does not hold yet imports pygit2 (see the module)."""

    def __getattr__(self, name: str) -> Any:
        real = _import()
        return getattr(real, name)


def _import() -> types.ModuleType:
    with _LOCK:
        real = importlib.import_module("pygit2")
        if not pygit2.__dict__.get("_ynm_ready"):
            real.settings.enable_strict_hash_verification(False)
            # its public names, not its module attributes (``__name__``, ``__path__``, ...)
            pygit2.__dict__.update({k: v for k, v in vars(real).items()
                                    if not k.startswith("__")})
            pygit2.__dict__["_ynm_ready"] = True
    return real


def loaded() -> bool:
    """Whether pygit2 has been imported through :data:`pygit2` (for tests and diagnostics)."""
    return bool(pygit2.__dict__.get("_ynm_ready"))


pygit2: Any = _Pygit2("pygit2")
"""The stand-in for pygit2 (see the module docstring)."""
