"""``ynm dream``: consolidation passes (reference/cli.md §4.5; the engine is
:mod:`ynm.dream.engine`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from ynm.cli._common import common_options, emit, json_on_failure, open_ynm

PASSES = ("expire", "promote", "dedupe", "contradict", "reflect", "normalise")
JUDGE_NEEDS_DRY_RUN = "--judge: only applies to a dry run; add --dry-run"
"""The refusal of ``ynm dream --judge`` without ``--dry-run`` (exit 2). The reference prints
the MCP tool's words (``judge: ... add dryRun``, reference/cli.md §2); the CLI names its own
flags, ``memory_consolidate`` its own fields (ynm.server.tools.ConsolidateInput)."""


def format_dream(r: dict[str, Any]) -> str:
    """The human report (reference/cli.md §4.5): see :func:`ynm.dream.report.format_report`."""
    from ynm.dream.report import format_report

    return format_report(r)


def _passes(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[str]:
    """``--passes`` given repeatedly and/or as comma lists: every name must be a pass, and
    a ``--passes`` that names none (``""``, ``","``) is refused rather than read as all six
    (exit 2)."""
    out: list[str] = []
    for value in values:
        names = [v.strip() for v in value.split(",") if v.strip()]
        if not names:
            raise click.BadParameter(
                f"{value!r} names no pass; give one or more of {', '.join(PASSES)} (leave "
                "--passes out to run all six).")
        for name in names:
            if name not in PASSES:
                raise click.BadParameter(
                    f"{name!r} is not one of {', '.join(repr(p) for p in PASSES)}.")
            out.append(name)
    return list(dict.fromkeys(out))


JUDGE_TAKES_NO_VALUE = (
    "--judge takes no value (it asks the configured judge in a dry run); the judge is chosen "
    "by the config key dream.judge (auto, heuristic, similarity, typesafe or writer-emulated) "
    "in .ynm/config.json or $YNM_HOME/config.json")
"""The refusal of ``ynm dream --judge typesafe`` and any other stray argument (exit 2)."""


@click.command(context_settings={"allow_extra_args": True})
@click.option("--passes", multiple=True, callback=_passes, metavar="PASS[,PASS...]",
              help="Passes to run: expire, promote, dedupe, contradict, reflect, normalise "
                   "(repeatable or comma-separated; default all six). Retention runs with "
                   "expire.")
@click.option("--namespace", help="Only memories in this namespace (a prefix). A run limited "
                                  "by --passes or --namespace marks nothing as dreamed.")
@click.option("--dry-run/--no-dry-run", default=False,
              help="Report what would change; write nothing. Model passes only count their "
                   "candidates unless --judge is given.")
@click.option("--judge/--no-judge", default=False,
              help="With --dry-run: judge the candidates and report what would change (calls "
                   "the judge; writes nothing). Refused without --dry-run.")
@click.option("--max-pairs", type=click.IntRange(min=1),
              help="Cap on judgments per pass (default: config dream.maxPairsPerRun, 2000); "
                   "memories past the cap are judged next run.")
@common_options
@click.pass_context
def dream(ctx: click.Context, as_json: bool, cwd: Path | None, passes: list[str],
          namespace: str | None, dry_run: bool, judge: bool, max_pairs: int | None) -> None:
    """Consolidate memory: expire, promote, dedupe, contradict, reflect, normalise.

    Only memories new or changed since the last full run with this judge are judged. With no
    model configured the heuristic judge only flags for review (see `ynm review list`), and
    reflect is skipped.

    \b
    Examples:
      ynm dream
      ynm dream --dry-run --judge
      ynm dream --passes expire,normalise --namespace team/payments
    """
    from ynm.errors import InvalidInput
    from ynm.model.namespaces import normalize_filter_namespace

    extra = ctx.args
    if extra:
        if judge:
            raise click.UsageError(f"Got unexpected extra argument ({' '.join(extra)}): "
                                   + JUDGE_TAKES_NO_VALUE)
        raise click.UsageError(f"Got unexpected extra argument ({' '.join(extra)}); "
                               "ynm dream takes options only")
    if judge and not dry_run:  # the CLI names its own flags (the MCP tool says dryRun)
        raise InvalidInput(JUDGE_NEEDS_DRY_RUN)
    if namespace is not None and not namespace.strip().strip("/"):
        raise InvalidInput(f"--namespace: {namespace!r} names no namespace (leave --namespace "
                           "out for all memories)")
    try:
        namespace = normalize_filter_namespace(namespace)
    except ValueError as err:  # the write rule's refusal, before any store is opened
        raise InvalidInput(f"namespace: {err}") from None
    # --json: Ctrl-C (or a lock that stayed taken) still prints the passes that ended
    with open_ynm(cwd) as ynm, json_on_failure(as_json):
        result = ynm.consolidate(passes or None, namespace, dry_run, judge=judge,
                                 max_pairs=max_pairs)
    emit(result, as_json, format_dream)
