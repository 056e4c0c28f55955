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
from ynm.model.words import counted

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


NO_WRITER_HINT = ("no writer configured: set dream.writer to claude-cli or "
                  "openai-compatible (or install the claude CLI, or set OPENAI_API_KEY or "
                  "YNM_OPENAI_BASE_URL, for dream.writer auto)")
"""What the text report says when reflect skipped subjects for lack of a writer."""
CAP_HINT = "the pair cap (--max-pairs, dream.maxPairsPerRun)"


def format_report(r: dict[str, Any]) -> str:
    """The human text of ``ynm dream`` (reference/cli.md §4.5): per pass in report order,
    ``<pass>: <changed>/<candidates> changed`` (``would change`` in a dry run); in a dry run
    without ``--judge``, a model pass with candidates reads ``<pass>: <n> candidates (not
    judged; add --judge)`` (``1 candidate``) plus ``, <n> would change`` when it lists changes;
    then ``nothing new since the last run; only expiry ran`` when nothing was fresh; ``no
    passes ran`` when no pass ran.

    Ours adds, so that the text says what the JSON says and what to do next (the reference's
    text leaves all of it out, so an uncalibrated or unavailable judge's run read as if it had
    found nothing):

    - to a pass's line what it flagged for review (``full.passes.<pass>.flagged``): ``, <n>
      memories flagged for review`` (``would be flagged`` in a dry run), each memory counted
      once; and what it left for the next run: ``, <n> left for the next run by the pair cap
      (--max-pairs, dream.maxPairsPerRun)`` (promote, dedupe, contradict) or ``, <n> subjects
      skipped: no writer configured: set dream.writer ...`` (reflect with the ``none``
      writer) or ``, <n> skipped`` (reflect, a writer or verification that failed);
    - under a pass's line, each of its notes as ``  note: <note>`` (``judge unavailable: ...;
      the heuristic judge answered instead``, a failed write, a verification), and
      ``  fallback: the heuristic judge (no model) answered: it only flags for review`` when
      the pass fell back to the no-model floor with no note saying why;
    - the run's own notes (``no memory is in namespace ...``) as ``note: <note>``;
    - after a run (not a dry run) that flagged memories: ``next: see them with `ynm review
      list`, decide, then `ynm review clear <id>```."""
    full = r.get("full") or {}
    judged = full.get("judged", True)
    dry = r["dryRun"]
    verb = "would change" if dry else "changed"
    flag_verb = "would be flagged" if dry else "flagged"
    no_writer = full.get("writer") == "none"
    lines = []
    any_flagged = False
    for name, p in r["passes"].items():
        fp = (full.get("passes") or {}).get(name, {})
        n = len(p["changed"])
        if not judged and name in MODEL_PASSES and p["candidates"] > 0:
            line = f"{name}: {counted(p['candidates'], 'candidate')} (not judged; add --judge)"
            if n:
                line += f", {n} would change"
        else:
            line = f"{name}: {n}/{p['candidates']} {verb}"
        flagged = len(set(fp.get("flagged") or ()))
        if flagged:
            any_flagged = True
            line += f", {counted(flagged, 'memory', 'memories')} {flag_verb} for review"
        skipped = fp.get("skipped") or 0
        if skipped and name == "reflect":
            if no_writer and fp.get("fallback"):
                line += f", {counted(skipped, 'subject')} skipped: {NO_WRITER_HINT}"
            else:
                line += f", {skipped} skipped"
        elif skipped:
            line += f", {skipped} left for the next run by {CAP_HINT}"
        lines.append(line)
        notes = list(fp.get("notes") or ())
        lines.extend(f"  note: {note}" for note in notes)
        if (fp.get("fallback") and not notes and fp.get("judged")
                and name in ("promote", "dedupe", "contradict")):
            lines.append("  fallback: the heuristic judge (no model) answered: it only flags "
                         "for review, never merges or forgets")
    lines.extend(f"note: {note}" for note in full.get("notes") or ())
    if lines and full.get("fresh", 1) == 0:
        lines.append("nothing new since the last run; only expiry ran")
    if any_flagged and not dry:
        lines.append("next: see them with `ynm review list`, decide, then "
                     "`ynm review clear <id>`")
    return "\n".join(lines) or "no passes ran"
