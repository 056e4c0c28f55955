"""``ynm dream``: consolidation passes (reference/cli.md §4.5). The expire pass runs; the
model-backed passes are reported as not available in this version."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ynm.cli._common import common_options, emit, open_ynm

PASSES = ("expire", "promote", "dedupe", "contradict", "reflect", "normalise")


def format_dream(r: dict[str, Any]) -> str:
    """``<pass>: <changed>/<candidates> changed`` (or ``would change`` on a dry run) per pass;
    passes that cannot run say so."""
    lines = []
    verb = "would change" if r["dryRun"] else "changed"
    for name, p in r["passes"].items():
        if p.get("available") is False:
            lines.append(f"{name}: not available ({p['reason']})")
        else:
            n = len(p.get("due", p["changed"])) if r["dryRun"] else len(p["changed"])
            lines.append(f"{name}: {n}/{p['candidates']} {verb}")
    return "\n".join(lines) or "no passes ran"


@click.command()
@click.option("--passes", multiple=True, type=click.Choice(PASSES),
              help="Passes to run (repeatable; default all).")
@click.option("--namespace", help="Namespace prefix.")
@click.option("--dry-run/--no-dry-run", default=False, help="Report candidates; change nothing.")
@click.option("--max-pairs", type=int, help="Cap on judged pairs (model passes; none yet).")
@common_options
def dream(as_json: bool, cwd: Path | None, passes: tuple[str, ...], namespace: str | None,
          dry_run: bool, max_pairs: int | None) -> None:
    """Consolidate memory: forget working memory past its ttl (other passes need a model).

    \b
    Example:
      ynm dream --passes expire
      ynm dream --dry-run
    """
    from ynm.errors import InvalidInput
    from ynm.model.namespaces import normalize_filter_namespace

    try:
        namespace = normalize_filter_namespace(namespace)
    except ValueError as err:  # the write rule's refusal, before any store is opened
        raise InvalidInput(f"namespace: {err}") from None
    with open_ynm(cwd) as ynm:
        result = ynm.consolidate(list(passes) or None, namespace, dry_run)
    emit(result, as_json, format_dream)
