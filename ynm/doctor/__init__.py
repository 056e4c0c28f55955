"""``ynm doctor``'s checks and ``ynm validate``'s client lines.

Each module holds one group of checks; each function returns :class:`Check` objects and reads
what it needs without changing anything (doctor is read-only and offline):

- :mod:`.setup`: git on PATH, the local install, the configuration files, the project
  repository (anchor, refspecs, personal refs, pre-push hook), a ynh worker's environment.
- :mod:`.mounts`: each store's health and its anchor object, hosted stores' sign-ins.
- :mod:`.cache`: each cache's schema and freshness, bad record lines, each mount's snapshot
  (``ynm compact``), the vector model, cache size against the records' bytes.
- :mod:`.clients`: agent clients (doctor's ``client <name>`` checks, ``ynm validate``).

The checks, names, order, levels and JSON shape follow reference/cli.md §4.4; ``fix`` (the
command that mends a check) is ynm's addition.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass
class Check:
    """One doctor check: ``name`` (exact, reference/cli.md §4.4), ``ok``, ``level``
    (``error``, ``warn`` or ``info``), ``detail`` and, where a command mends it, ``fix``."""

    name: str
    ok: bool
    level: str
    detail: str
    fix: str | None = None

    def to_obj(self) -> dict[str, Any]:
        """``{"name", "ok", "level", "detail"}`` (the reference's keys, in its order), then
        ``"fix"`` when there is one."""
        obj: dict[str, Any] = {"name": self.name, "ok": self.ok, "level": self.level,
                               "detail": self.detail}
        if self.fix:
            obj["fix"] = self.fix
        return obj

    @property
    def tag(self) -> str:
        """``ok`` for any passing check (whatever its level), ``warn`` for a failing warning,
        else ``FAIL`` (reference/cli.md §8.11)."""
        if self.ok:
            return "ok"
        return "warn" if self.level == "warn" else "FAIL"

    def line(self) -> str:
        """``<tag padded to 4>  <name>: <detail>``, then ``  fix: <command>`` unless the detail
        already names the command."""
        text = f"{self.tag:<4}  {self.name}: {self.detail}"
        if self.fix and self.fix not in self.detail:
            text += f"  fix: {self.fix}"
        return text


def check(name: str, ok: bool, detail: str, level: str | None = None,
          fix: str | None = None) -> Check:
    """A :class:`Check`; ``level`` defaults to ``info`` when ok and ``error`` when not (as the
    reference's ``add``)."""
    return Check(name, ok, level or ("info" if ok else "error"), detail, fix)


def report(checks: list[Check]) -> dict[str, Any]:
    """The doctor JSON: ``{"ok", "checks"}``; ``ok`` is false only when an ``error`` check
    failed (reference/cli.md §4.4)."""
    return {"ok": all(c.ok or c.level != "error" for c in checks),
            "checks": [c.to_obj() for c in checks]}


def format_report(result: dict[str, Any]) -> str:
    """The human lines of a :func:`report` result, one per check (see :meth:`Check.line`)."""
    return "\n".join(Check(**c).line() for c in result["checks"])
