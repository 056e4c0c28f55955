"""Shard ref <-> key vectors (reference/storage.md §3.2) and how tips() applies them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.git import git
from ynm.model.shards import ShardKey, key_from_ref, ref_prefix_for
from ynm.store.gitnotes import GitNotesLog

EXAMPLE = ShardKey("distributed", "org/eyelock/project/ynm", "semantic", "2026-09")
EXAMPLE_REF = "refs/notes/ynm/distributed/org/eyelock/project/ynm/semantic/2026-09"

REJECTED = [
    "refs/notes/ynm/distributed/x/semantic",
    "refs/notes/ynm/distributed/x/nope/2026-09",
    "refs/notes/ynm/distributed/x/semantic/2026-13",
    "refs/notes/other/shared/x/semantic/2026-09",
]


def test_key_to_ref_example() -> None:
    assert EXAMPLE.ref == EXAMPLE_REF
    assert EXAMPLE.shard_id == "distributed/org/eyelock/project/ynm/semantic/2026-09"


def test_ref_to_key_example() -> None:
    assert key_from_ref(EXAMPLE_REF) == EXAMPLE


def test_parse_from_the_end_keeps_type_and_date_like_namespace_segments() -> None:
    ref = "refs/notes/ynm/personal/proj/semantic/2026-01/episodic/2026-10"
    assert key_from_ref(ref) == ShardKey("personal", "proj/semantic/2026-01", "episodic", "2026-10")


@pytest.mark.parametrize("ref", REJECTED)
def test_rejected_refs(ref: str) -> None:
    assert key_from_ref(ref) is None


def test_ref_prefix() -> None:
    assert ref_prefix_for("distributed", "org") == "refs/notes/ynm/distributed/org/"


def test_remote_ref() -> None:
    assert EXAMPLE.remote_ref("origin") == (
        "refs/notes/ynm-remote/origin/distributed/org/eyelock/project/ynm/semantic/2026-09"
    )


def test_tips_skip_unparseable_and_other_level_refs(repo: Path, anchor: str) -> None:
    head = git(repo, "rev-parse", "HEAD")
    good = ShardKey("distributed", "org/x", "semantic", "2026-09")
    strays = [
        "refs/notes/ynm/distributed/y/semantic",  # too short
        REJECTED[1],
        REJECTED[2],
        "refs/notes/ynm/distributed/x/semantic/2026-09/extra",  # bucket not last
        "refs/notes/ynm/personal/user/a/semantic/2026-09",  # other level
    ]
    for ref in [good.ref, *strays]:
        git(repo, "update-ref", ref, head)
    log = GitNotesLog(repo, level="distributed", anchor=anchor)
    tips = log.tips()
    assert list(tips) == [good.ref]
    assert tips[good.ref].key == good
    assert tips[good.ref].commit == head
