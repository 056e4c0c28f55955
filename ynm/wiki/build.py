"""Build one mount's wiki: read its records from git, fold, generate, write (reference
algorithms.md §5, cli.md §4.29)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from ynm.errors import YnmError
from ynm.model.fold import fold
from ynm.model.ids import iso_ms
from ynm.model.jsonl import parse_jsonl
from ynm.model.records import Record
from ynm.wiki.generate import generate
from ynm.wiki.targets import write_directory, write_orphan_branch

if TYPE_CHECKING:
    from ynm.service.mounts import Mount

TARGETS = ("directory", "orphan-branch")


def mount_records(mount: Mount) -> list[Record]:
    """Every record of ``mount`` read from git (not the cache), snapshots left out."""
    out: list[Record] = []
    for blob in mount.log.read_all().values():
        out.extend(r for r in parse_jsonl(blob.data).records if r.op != "snapshot")
    return out


def mount_pages(mount: Mount) -> dict[str, bytes]:
    """The pages of ``mount`` titled ``Memory: <mountId>``. Folds from the full record list,
    so snapshots are not needed.

    ``generatedAt`` is the newest ``recordedAt`` of the mount (the moment the pages describe;
    ``1970-01-01T00:00:00.000Z`` for an empty mount), not the wall clock: a rebuild of an
    unchanged store gives the same bytes, so the orphan branch gains no commit (ynm
    refinement of §5)."""
    records = mount_records(mount)
    newest = max((r.recorded_at for r in records), default=iso_ms(0))
    return generate(fold(records).memories.values(), records, title=f"Memory: {mount.id}",
                    generated_at=newest)


def default_dir(mount: Mount, repo: Path | None, home: Path) -> Path:
    """``<repo>/.ynm/wiki`` for the ``project`` mount, else ``<YNM_HOME>/wiki/<mountId>``."""
    if mount.id == "project" and repo is not None:
        return repo / ".ynm" / "wiki"
    return home / "wiki" / mount.id


def build(mount: Mount, *, target: str, folder: Path | None, repo: Path | None, home: Path) -> dict[str, Any]:
    """Build and write one mount's wiki; returns ``{"mount", "written", "location"}``
    (reference/cli.md §4.29) and, for the orphan-branch target, ``"repo"``: the repository the
    branch is in (the mount's location: the project's work tree, ``$YNM_HOME/store.git`` for
    ``personal``), since ``location`` (``refs/heads/ynm/wiki@<commit>``) does not say.

    Raises:
        YnmError: ``mount <id> is not a git repository; use the directory target`` (exit 1)
            for orphan-branch on a mount that is not git notes; StoreConflict if the wiki ref
            moved meanwhile; OSError from the folder target.
    """
    pages = mount_pages(mount)
    if target == "orphan-branch":
        if mount.provider != "git-notes":
            raise YnmError(f"mount {mount.id} is not a git repository; use the directory target")
        result = write_orphan_branch(mount.log.repo, pages)
        return {"mount": mount.id, "written": result.written, "location": result.location,
                "repo": mount.location}
    result = write_directory(folder or default_dir(mount, repo, home), pages)
    return {"mount": mount.id, "written": result.written, "location": result.location}
