"""The reports of a dream run (reference/algorithms.md §4.14) and their human text
(reference/cli.md §4.5).

- :class:`PassReport`: ``{candidates, judged, changed, flagged, skipped, fallback,
  uncalibrated, usage: {inputTokens, outputTokens}, notes}`` per pass.
- DreamReport (``full``): ``{dryRun, judged, judge: {name, calibrated}, writer, passes, fresh,
  dreamed, usage, estimatedCostUsd}``.
- ConsolidateReport (what ``ynm dream`` and ``memory_consolidate`` return): ``{dryRun,
  passes: {<pass>: {candidates, changed}}, full}``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ynm.dream.seams import Usage

__all__ = ["MODEL_PASSES", "PassReport", "consolidate_report", "format_report"]

# Passes whose candidates are only counted by a dry run without --judge.
MODEL_PASSES = ("promote", "dedupe", "contradict", "reflect")
# USD per million input tokens of a calibrated judge (reference/cli.md §4.5).
CALIBRATED_USD_PER_MTOK = 0.042


@dataclass
class PassReport:
    """What one pass did. ``changed``/``flagged`` hold memory ids (reflect's ``changed`` holds
    ``<mount>:<subject>`` keys); ``skipped`` counts judgments left out (pair cap, writer
    absent or failed); ``fallback``: a no-model path was used; ``uncalibrated``: an
    uncalibrated judge answered at least once. ``failed`` (ours): memories the pass could not
    write, ``{memoryId, error}``."""

    candidates: int = 0
    judged: int = 0
    changed: list[str] = field(default_factory=list)
    flagged: list[str] = field(default_factory=list)
    skipped: int = 0
    fallback: bool = False
    uncalibrated: bool = False
    usage: Usage = field(default_factory=Usage)
    notes: list[str] = field(default_factory=list)
    failed: list[dict[str, str]] = field(default_factory=list)

    def to_obj(self) -> dict[str, Any]:
        """The JSON shape of §4.14 (``failed`` only when some write failed)."""
        out: dict[str, Any] = {
            "candidates": self.candidates, "judged": self.judged, "changed": list(self.changed),
            "flagged": list(self.flagged), "skipped": self.skipped, "fallback": self.fallback,
            "uncalibrated": self.uncalibrated,
            "usage": {"inputTokens": self.usage.input_tokens,
                      "outputTokens": self.usage.output_tokens},
            "notes": list(self.notes),
        }
        if self.failed:
            out["failed"] = list(self.failed)
        return out


def consolidate_report(full: dict[str, Any]) -> dict[str, Any]:
    """The ConsolidateReport of a DreamReport: ``{dryRun, passes: {name: {candidates, changed
    [, failed]}}, full}``, passes in the order they ran."""
    passes: dict[str, Any] = {}
    for name, p in full["passes"].items():
        passes[name] = {"candidates": p["candidates"], "changed": p["changed"]}
        if p.get("failed"):
            passes[name]["failed"] = p["failed"]
    return {"dryRun": full["dryRun"], "passes": passes, "full": full}


def format_report(r: dict[str, Any]) -> str:
    """The human text of ``ynm dream`` (reference/cli.md §4.5): per pass in report order,
    ``<pass>: <changed>/<candidates> changed`` (``would change`` in a dry run); in a dry run
    without ``--judge``, a model pass with candidates reads ``<pass>: <n> candidates (not
    judged; add --judge)`` plus ``, <n> would change`` when it lists changes; then ``nothing new
    since the last run; only expiry ran`` when nothing was fresh; ``no passes ran`` when no
    pass ran.

    Ours adds to a pass's line what it flagged for review, as in the JSON's
    ``full.passes.<pass>.flagged`` (the reference's text leaves it out, so a run of an
    uncalibrated judge, which only flags, read as if it had found nothing): ``, <n> memories
    flagged for review`` (``would be flagged`` in a dry run), ``<n>`` counting each memory once
    (a memory in several flagged pairs, or both sides of one), nothing when none was."""
    full = r.get("full") or {}
    judged = full.get("judged", True)
    verb = "would change" if r["dryRun"] else "changed"
    flag_verb = "would be flagged" if r["dryRun"] else "flagged"
    lines = []
    for name, p in r["passes"].items():
        n = len(p["changed"])
        if not judged and name in MODEL_PASSES and p["candidates"] > 0:
            line = f"{name}: {p['candidates']} candidates (not judged; add --judge)"
            if n:
                line += f", {n} would change"
        else:
            line = f"{name}: {n}/{p['candidates']} {verb}"
        flagged = len(set((full.get("passes") or {}).get(name, {}).get("flagged") or ()))
        if flagged:
            line += (f", {flagged} {'memory' if flagged == 1 else 'memories'} {flag_verb} "
                     "for review")
        lines.append(line)
    if lines and full.get("fresh", 1) == 0:
        lines.append("nothing new since the last run; only expiry ran")
    return "\n".join(lines) or "no passes ran"
