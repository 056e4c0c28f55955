"""``ynm compact`` (docs/cli.md "ynm compact"): snapshots of each mount's folded state, shared by
``ynm sync`` and ``ynm init``, and cold caches that start from them.

Real git throughout: a bare origin and clones of it (tests/cli/test_sync.py's ``Net``), each set
up with ``ynm init``; commands run in-process through the CLI.
"""

from __future__ import annotations

import json
import sqlite3
import subprocess
from pathlib import Path

import pytest
import zstandard

from tests.cli.test_sync import Clone, Net
from ynm.index.schema import SCHEMA_VERSION
from ynm.index.snapshot import NAME

REF = f"refs/ynm/distributed/snapshots/{NAME}"
FACTS = [
    ("Deploys go out on Tuesdays after the release review", "semantic", "common"),
    ("Run the linter and the type checker before pushing", "procedural", "common"),
    ("The ledger service owns refunds and chargebacks", "semantic", "team/payments"),
    ("Payments uses idempotency keys on every retry", "semantic", "team/payments"),
    ("The release review happens on Monday afternoons", "episodic", "common"),
]
QUERIES = ["release review", "refunds", "pushing linter", "idempotency retry"]


@pytest.fixture
def net(tmp_path, git, cli_run, monkeypatch) -> Net:
    from ynm.index.schema import SCHEMA_VERSION

    assert REF.endswith(f"cache-v{SCHEMA_VERSION}")
    monkeypatch.setenv("YNM_EMBEDDER", "none")
    return Net(tmp_path, git, cli_run, monkeypatch)


def fill(net: Net, c: Clone) -> list[str]:
    ids = [net.remember(c, content, type_, ns) for content, type_, ns in FACTS]
    net.ok(c, "annotate", ids[0], "--tags", "deploy", "--importance", "0.9")
    net.ok(c, "forget", ids[4], "--reason", "moved to Mondays")
    return ids


def recalls(net: Net, c: Clone) -> list[list[str]]:
    """The ids each query recalls, in order (scores move with the clock: recency)."""
    return [[r["memoryId"] for r in net.json(c, "recall", q)] for q in QUERIES]


def compact(net: Net, c: Clone) -> dict:
    return net.json(c, "compact", "--mount", "project")[0]


def cache_meta(c: Clone) -> dict[str, str]:
    path = c.path / ".ynm" / "index" / "ynm-cache" / "project.sqlite"
    with sqlite3.connect(path) as conn:
        return dict(conn.execute("SELECT key, value FROM meta").fetchall())


def drop_cache(c: Clone) -> None:
    for f in (c.path / ".ynm" / "index" / "ynm-cache").glob("project.sqlite*"):
        f.unlink()


def test_compact_writes_a_snapshot_the_notes_unchanged(net):
    a = net.clone("a")
    fill(net, a)
    notes = net.refs(a.path, "refs/notes/")
    out = net.json(a, "compact", "--mount", "project")
    assert out == [{"mount": "project", "ref": REF, "commit": out[0]["commit"],
                    "written": True, "shards": 4, "records": 7, "memories": 5,
                    "bytes": out[0]["bytes"]}]
    assert out[0]["bytes"] > 0
    assert net.refs(a.path, "refs/notes/") == notes  # the shard logs are not touched
    assert net.refs(a.path, "refs/ynm/") == {REF: out[0]["commit"]}
    tree = net.git(a.path, "ls-tree", "--name-only", REF).split()
    assert tree == ["meta.json", "state.bin"]
    meta = json.loads(net.git(a.path, "show", f"{REF}:meta.json"))
    assert meta["cacheSchema"] == SCHEMA_VERSION and meta["format"] == 2 and meta["embedder"] is None
    assert meta["anchor"] == net.anchor and (meta["records"], meta["memories"]) == (7, 5)
    assert {ref: s["commit"] for ref, s in meta["shards"].items()} == notes
    assert sum(s["records"] for s in meta["shards"].values()) == 7
    assert net.git(a.path, "rev-list", "--count", REF) == "1"  # no parent: replaced, not piled


def test_compact_twice_with_nothing_new_writes_no_commit(net):
    a = net.clone("a")
    fill(net, a)
    first = compact(net, a)
    again = net.json(a, "compact")
    assert [(r["mount"], r["written"], r["commit"]) for r in again] == [
        ("personal", False, None), ("project", False, first["commit"])]
    assert net.refs(a.path, "refs/ynm/") == {REF: first["commit"]}
    assert net.ok(a, "compact").stdout == (
        "personal: nothing to compact (no records)\n"
        f"project: snapshot {first['commit'][:12]} unchanged (nothing new since it was "
        "written)\n")
    net.remember(a, "A new fact after the snapshot")
    third = compact(net, a)
    assert third["written"] and third["commit"] != first["commit"]
    assert net.ok(a, "compact", "--quiet").stdout == ""


def test_unknown_mount(net):
    a = net.clone("a")
    result = net.ynm(a, "compact", "--mount", "nope")
    assert result.exit_code == 2
    assert result.stderr.startswith('Error: no mount "nope" (have: ')


def test_a_fresh_clone_gets_the_snapshot_and_recalls_the_same(net):
    a = net.clone("a")
    fill(net, a)
    commit = compact(net, a)["commit"]
    pushed = net.sync(a)
    assert pushed["snapshots"] == {"fetched": [], "pushed": [NAME]}
    assert net.refs(net.origin, "refs/ynm/") == {REF: commit}
    net.remember(a, "Written after the snapshot: the release review moved")  # a tail
    net.sync(a)
    want = recalls(net, a)

    b = net.clone("b")  # ynm init fetches and merges the notes, and takes the snapshot
    assert net.refs(b.path, "refs/ynm/")[REF] == commit
    assert recalls(net, b) == want
    meta = cache_meta(b)
    assert meta["snapshot"] == commit  # the first read started from the snapshot
    drop_cache(a)
    net.ok(a, "reindex")  # a full read gives the same answers
    assert recalls(net, a) == want
    assert "snapshot" not in cache_meta(a)


def test_sync_takes_the_newer_snapshot_and_pushes_with_a_lease(net):
    a, b = net.clone("a"), net.clone("b")
    fill(net, a)
    net.ok(a, "compact")
    net.sync(a)
    got = net.sync(b)
    assert got["snapshots"]["fetched"] == [NAME]
    net.remember(b, "Another fact from b")
    newer = compact(net, b)["commit"]
    assert net.sync(b)["snapshots"]["pushed"] == [NAME]  # leased on a's copy
    assert net.refs(net.origin, "refs/ynm/") == {REF: newer}
    took = net.sync(a)
    assert took["snapshots"] == {"fetched": [NAME], "pushed": []}
    assert net.refs(a.path, "refs/ynm/")[REF] == newer
    # an older local snapshot never replaces the remote's newer one
    assert "snapshots" not in net.sync(a)
    net.remember(a, "A fact from a")
    net.ok(a, "compact")
    assert net.ok(a, "sync").stdout == ("project: nothing to fetch, pushed 1 record in 1 shard, "
                                        f"pushed the snapshot {NAME}\n")
    assert net.ok(b, "sync").stdout == ("project: fetched 1 record in 1 shard (1 fast-forward),"
                                        f" fetched the snapshot {NAME}, nothing to push\n")


def test_a_corrupt_snapshot_is_ignored_with_a_warning(net):
    a = net.clone("a")
    fill(net, a)
    net.ok(a, "compact")
    want = recalls(net, a)
    git = net.git
    blob = git(a.path, "hash-object", "-w", "--stdin", input=b"not zstd at all")
    meta = git(a.path, "rev-parse", f"{REF}:meta.json")
    tree = git(a.path, "mktree", input=(f"100644 blob {meta}\tmeta.json\n"
                                        f"100644 blob {blob}\tstate.bin\n").encode())
    bad = git(a.path, "commit-tree", tree, "-m", "damaged")
    git(a.path, "update-ref", REF, bad)
    drop_cache(a)
    result = net.ynm(a, "recall", QUERIES[0], "--json")
    assert result.exit_code == 0
    assert result.stderr == (
        f"ynm: snapshot {REF}: state.bin is damaged (its SHA-256 is not the one meta.json "
        "records); the project cache is built from the notes; `ynm compact` rewrites it, or "
        f"`git update-ref -d {REF}` removes it\n")
    assert [r["memoryId"] for r in json.loads(result.stdout)] == want[0]
    assert "snapshot" not in cache_meta(a)
    # a compaction replaces the damaged one
    assert compact(net, a)["written"]


def test_purge_writes_the_snapshot_again_without_the_purged_text(net):
    a = net.clone("a")
    ids = fill(net, a)
    old = compact(net, a)["commit"]
    net.ok(a, "purge", ids[2], "--reason", "customer data", "--yes")
    new = net.refs(a.path, "refs/ynm/")[REF]
    assert new != old
    meta = json.loads(net.git(a.path, "show", f"{REF}:meta.json"))
    assert meta["memories"] == 4
    drop_cache(a)
    assert net.json(a, "recall", "refunds chargebacks") == []
    assert cache_meta(a)["snapshot"] == new


def test_docs_list_compact():
    text = (Path(__file__).parents[2] / "docs" / "cli.md").read_text()
    assert "## ynm compact" in text


def test_a_clone_with_the_same_embedder_embeds_no_memory_again(tmp_path, git, cli_run,
                                                                monkeypatch, server):
    net = Net(tmp_path, git, cli_run, monkeypatch)  # the embedder: the server fixture's
    a = net.clone("a")
    fill(net, a)
    net.json(a, "recall", "release review")  # vectors made
    assert any(t.startswith("Deploys go out") for body in server.seen for t in body["input"])
    meta_key = compact(net, a)
    assert meta_key["written"]
    meta = json.loads(net.git(a.path, "show", f"{REF}:meta.json"))
    assert meta["embedder"] == f"openai-compatible:m@{server.url}/v1/embeddings (8 dims)"
    net.sync(a)
    asked = len(server.seen)
    b = net.clone("b")
    assert net.json(b, "recall", "release review")[0]["memoryId"] == net.json(
        a, "recall", "release review")[0]["memoryId"]
    texts = [t for body in server.seen[asked:] for t in body["input"]]
    assert not [t for t in texts if any(fact[0] in t for fact in FACTS)]
    assert cache_meta(b)["snapshot"] == meta_key["commit"]


def test_a_purge_a_merge_brings_back_rewrites_the_snapshot(net):
    a, b = net.clone("a"), net.clone("b")
    ids = fill(net, a)
    net.sync(a)
    net.sync(b)  # b holds every record, and no purge
    net.ok(a, "compact")
    net.ok(a, "purge", ids[2], "--reason", "customer data", "--yes")
    net.sync(a)  # the purge and the snapshot without the purged text
    net.remember(b, "Refunds over 500 need a second approver", namespace="team/payments")
    got = net.sync(b)  # the merge brings the purged lines back into b's shard; b purges again
    assert got["conflicts"] == []
    assert got["snapshots"]["fetched"] == [NAME]
    assert got["snapshots"]["pushed"] == [NAME]  # written again, without the text
    ref_b = net.refs(b.path, "refs/ynm/")[REF]
    assert net.refs(net.origin, "refs/ynm/") == {REF: ref_b}
    packed = subprocess.run(["git", "cat-file", "blob", f"{REF}:state.bin"], cwd=b.path,
                            capture_output=True, check=True).stdout
    raw = zstandard.ZstdDecompressor().decompressobj().decompress(packed)
    assert b"second approver" in raw
    assert b"ledger service owns refunds" not in raw


# ------------------------------------------------------------------- damaged snapshots and sync


def damage(net: Net, c: Clone, how: str) -> str:
    """Point ``c``'s snapshot ref at something unusable; returns the commit (or tree) it now
    points at."""
    git = net.git
    if how == "code commit":
        git(c.path, "update-ref", REF, "HEAD")
        return git(c.path, "rev-parse", "HEAD")
    meta = git(c.path, "rev-parse", f"{REF}:meta.json")
    state = git(c.path, "rev-parse", f"{REF}:state.bin")
    if how == "flipped bytes":
        data = bytearray(subprocess.run(["git", "cat-file", "blob", state], cwd=c.path,
                                        capture_output=True, check=True).stdout)
        data[len(data) // 2] ^= 0xFF
        state = git(c.path, "hash-object", "-w", "--stdin", input=bytes(data))
    rows = f"100644 blob {state}\tstate.bin\n"
    if how != "missing meta.json":
        rows = f"100644 blob {meta}\tmeta.json\n" + rows
    tree = git(c.path, "mktree", input=rows.encode())
    bad = git(c.path, "commit-tree", tree, "-m", "damaged")
    git(c.path, "update-ref", REF, bad)
    return bad


WHY = {
    "code commit": "is not a snapshot commit (it points at commit ",
    "flipped bytes": ": state.bin is damaged (its SHA-256 is not the one meta.json records)",
    "missing meta.json": "which holds no meta.json file)",
}


def sync_out(net: Net, c: Clone) -> tuple[dict, str]:
    result = net.ynm(c, "sync", "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)["project"], result.stderr


@pytest.mark.parametrize("how", list(WHY))
def test_sync_replaces_a_damaged_local_snapshot_and_never_pushes_it(net, how):
    a = net.clone("a")
    fill(net, a)
    good = compact(net, a)["commit"]
    net.sync(a)
    b = net.clone("b")
    assert net.refs(b.path, "refs/ynm/")[REF] == good
    damage(net, b, how)
    got, err = sync_out(net, b)
    assert got["snapshots"] == {"fetched": [NAME], "pushed": []}
    assert got["warnings"] == [err.removeprefix("ynm: ").rstrip("\n")]
    assert err.startswith(f"ynm: snapshot {REF}") and WHY[how] in err
    assert err.endswith("; replaced by the remote's copy\n")
    assert "peeled" not in err and "'meta.json'" not in err
    assert net.refs(b.path, "refs/ynm/")[REF] == good
    assert net.refs(net.origin, "refs/ynm/") == {REF: good}
    for _ in range(2):  # converged: nobody pushes, nothing is said
        for c in (a, b):
            again, err = sync_out(net, c)
            assert "snapshots" not in again and "warnings" not in again and err == ""
    assert net.refs(net.origin, "refs/ynm/") == {REF: good}


@pytest.mark.parametrize("how", list(WHY))
def test_a_damaged_snapshot_the_remote_lacks_is_dropped_not_pushed(net, how):
    a = net.clone("a")
    fill(net, a)
    net.ok(a, "compact")
    damage(net, a, how)
    got, err = sync_out(net, a)
    assert "snapshots" not in got
    assert WHY[how] in err and err.endswith(
        "; the remote has no usable copy, so it is dropped here and never pushed; "
        "`ynm compact` writes a new one\n")
    assert REF not in net.refs(a.path, "refs/ynm/")
    assert net.refs(net.origin, "refs/ynm/") == {}
    assert sync_out(net, a)[1] == ""
    good = compact(net, a)["commit"]  # the fix
    assert net.sync(a)["snapshots"]["pushed"] == [NAME]
    assert net.refs(net.origin, "refs/ynm/") == {REF: good}


def test_a_damaged_remote_snapshot_is_not_taken_and_a_usable_one_replaces_it(net):
    a, b = net.clone("a"), net.clone("b")
    fill(net, a)
    net.ok(a, "compact")
    net.sync(a)
    bad = damage(net, a, "flipped bytes")  # as an older ynm would have pushed it
    net.git(a.path, "push", "-q", "--no-verify", "--force", "origin", f"{REF}:{REF}")
    net.git(a.path, "update-ref", "-d", REF)
    got, err = sync_out(net, b)  # b has none: not taken
    assert "snapshots" not in got and REF not in net.refs(b.path, "refs/ynm/")
    assert err == (f"ynm: the remote's snapshot {REF}: state.bin is damaged (its SHA-256 is "
                   "not the one meta.json records); it is not taken; `ynm compact` writes a "
                   "new one, which the next sync pushes\n")
    assert net.refs(net.origin, "refs/ynm/") == {REF: bad}
    good = compact(net, b)["commit"]
    got, err = sync_out(net, b)
    assert got["snapshots"] == {"fetched": [], "pushed": [NAME]}
    assert err.endswith("; it is not taken; the local one replaces it\n")
    assert net.refs(net.origin, "refs/ynm/") == {REF: good}
    assert net.sync(a)["snapshots"] == {"fetched": [NAME], "pushed": []}
    for c in (a, b):
        again, err = sync_out(net, c)
        assert "snapshots" not in again and err == ""


def test_two_usable_snapshots_the_newer_wins_and_syncs_converge(net):
    a, b = net.clone("a"), net.clone("b")
    fill(net, a)
    net.sync(a)
    net.sync(b)
    older = compact(net, a)["commit"]
    net.remember(b, "Another fact from b")
    newer = compact(net, b)["commit"]  # written later, before either synced its snapshot
    assert net.sync(a)["snapshots"] == {"fetched": [], "pushed": [NAME]}
    got = net.sync(b)  # b's is newer: it stays, and replaces a's on the remote
    assert got["snapshots"] == {"fetched": [], "pushed": [NAME]}
    assert net.refs(net.origin, "refs/ynm/") == {REF: newer}
    assert net.sync(a)["snapshots"] == {"fetched": [NAME], "pushed": []}  # a takes it
    assert net.refs(a.path, "refs/ynm/")[REF] == newer != older
    for _ in range(2):  # the second sync of each pushes nothing, the ref stays
        for c in (a, b):
            again, err = sync_out(net, c)
            assert "snapshots" not in again and err == ""
    assert net.refs(net.origin, "refs/ynm/") == {REF: newer}
    assert net.refs(b.path, "refs/ynm/")[REF] == newer


def test_the_same_damaged_copy_on_both_sides_is_dropped_here(net):
    a = net.clone("a")
    fill(net, a)
    net.ok(a, "compact")
    bad = damage(net, a, "missing meta.json")
    # pushed as an older ynm did
    net.git(a.path, "push", "-q", "--no-verify", "--force", "origin", f"{REF}:{REF}")
    dry = net.ynm(a, "sync", "--dry-run")
    assert dry.exit_code == 0 and "so it would be dropped here" in dry.stderr
    assert net.refs(a.path, "refs/ynm/")[REF] == bad  # a dry run changes nothing
    got, err = sync_out(net, a)
    assert "snapshots" not in got and REF not in net.refs(a.path, "refs/ynm/")
    assert err.endswith("which holds no meta.json file); the remote holds the same copy, so it "
                        "is dropped here and never pushed; `ynm compact` writes a new one\n")
    good = compact(net, a)["commit"]
    assert net.sync(a)["snapshots"]["pushed"] == [NAME]
    assert net.refs(net.origin, "refs/ynm/") == {REF: good}
    assert sync_out(net, a)[1] == ""
