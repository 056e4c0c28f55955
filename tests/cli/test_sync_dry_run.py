"""``ynm sync --dry-run`` (docs/cli.md "ynm sync"): what a sync would fetch and push, with a
real bare remote, while no ref, note, object or configuration of the clone or the remote
changes; and the one line a failed ``git push`` leaves (a path that is no repository, a
pre-receive hook that refuses, an unreachable ssh host).
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.cli.test_sync import Net

DRY = "dry run: nothing was changed; would move:\n"


@pytest.fixture
def net(tmp_path, git, cli_run, monkeypatch) -> Net:
    return Net(tmp_path, git, cli_run, monkeypatch)


def state(repo: Path) -> tuple[str, bytes, list[str]]:
    """Every ref (with ``git for-each-ref``'s own bytes), the config file and every file under
    ``objects/``: what a dry run must leave as it found it."""
    git_dir = repo / ".git" if (repo / ".git").is_dir() else repo
    refs = subprocess.run(["git", "for-each-ref", "--format=%(refname) %(objectname)"],
                          cwd=repo, capture_output=True, text=True, check=True).stdout
    objects = sorted(str(p.relative_to(git_dir)) for p in (git_dir / "objects").rglob("*"))
    return refs, (git_dir / "config").read_bytes(), objects


def dry(net: Net, clone, *args: str) -> tuple[dict, str]:
    """The JSON and the human report of a dry run, asserting that neither the clone nor the
    origin changed."""
    before = state(clone.path), state(net.origin)
    report = net.sync(clone, "--dry-run", *args)
    human = net.ok(clone, "sync", "--dry-run", *args).stdout
    assert (state(clone.path), state(net.origin)) == before
    return report, human


def test_neither_side_has_anything_new(net):
    a = net.clone("a")
    net.remember(a, "Deploys go out on Tuesdays")
    net.sync(a)
    report, human = dry(net, a)
    assert report["fetched"] == report["pushed"] == {"shards": [], "records": 0}
    assert human == DRY + "project: up to date\n"


def test_local_ahead_lists_what_the_push_would_send(net):
    a = net.clone("a")
    net.remember(a, "Deploys go out on Tuesdays")
    net.remember(a, "The ledger service owns refunds", type_="reference")
    report, human = dry(net, a)
    assert report["fetched"] == {"shards": [], "records": 0}
    assert report["pushed"]["records"] == 2 and len(report["pushed"]["shards"]) == 2
    assert human == DRY + "project: nothing to fetch, pushed 2 records in 2 shards\n"
    net.remember(a, "Reviews need two approvals")  # one more in a shard origin already has
    net.sync(a)
    net.remember(a, "Staging resets nightly")
    report, human = dry(net, a)
    assert report["pushed"]["records"] == 1 and len(report["pushed"]["shards"]) == 1
    assert human == DRY + "project: nothing to fetch, pushed 1 record in 1 shard\n"
    # the push half alone, and what a real sync then does
    assert net.ok(a, "sync", "--dry-run", "--no-pull").stdout == (
        DRY + "project: pushed 1 record in 1 shard\n")
    assert net.sync(a)["pushed"] == report["pushed"]


def test_remote_ahead_lists_what_the_fetch_would_bring(net):
    a, b = net.clone("a"), net.clone("b")
    net.remember(a, "Deploys go out on Tuesdays")
    net.remember(a, "The ledger service owns refunds")
    net.sync(a)
    report, human = dry(net, b)
    assert report["fetched"]["records"] == 2 and report["pushed"]["records"] == 0
    assert human == DRY + "project: fetched 2 records in 1 shard (1 fast-forward), nothing to push\n"
    assert net.ok(b, "sync", "--dry-run", "--no-push").stdout == (
        DRY + "project: fetched 2 records in 1 shard (1 fast-forward)\n")
    assert net.sync(b)["fetched"] == report["fetched"]


def test_both_ahead_lists_both_halves(net):
    a, b = net.clone("a"), net.clone("b")
    net.remember(a, "Deploys go out on Tuesdays")
    net.sync(a)
    net.remember(b, "The ledger service owns refunds")
    net.remember(b, "Reviews need two approvals", type_="procedural")
    report, human = dry(net, b)
    assert report["fetched"]["records"] == 1 and report["merged"] == report["fetched"]["shards"]
    assert report["pushed"]["records"] == 2 and len(report["pushed"]["shards"]) == 2
    assert human == DRY + ("project: fetched 1 record in 1 shard (1 merge), "
                           "pushed 2 records in 2 shards\n")
    # without the pull, the push of the shard both sides changed would be rejected: say so
    nopull = net.ynm(b, "sync", "--dry-run", "--no-pull")
    assert nopull.exit_code == 0
    assert nopull.stdout == DRY + "project: pushed 1 record in 1 shard\n"
    assert "a push without a pull would be rejected; sync without --no-pull" in nopull.stderr
    real = net.sync(b)
    assert (real["fetched"], real["pushed"]) == (report["fetched"], report["pushed"])
    assert dry(net, b)[1] == DRY + "project: up to date\n"


def test_the_personal_store_a_bare_repository(net, git, tmp_path):
    a = net.clone("a")
    net.remember(a, "I prefer tabs", level=None)
    store = a.home / "store.git"
    backup = tmp_path / "backup.git"
    git(tmp_path, "init", "-q", "--bare", str(backup))
    git(tmp_path, f"--git-dir={store}", "remote", "add", "backup", str(backup))
    before = state(store), state(backup)
    out = net.json(a, "sync", "--mount", "personal", "--remote", "backup", "--dry-run")
    assert (state(store), state(backup)) == before
    assert out["personal"]["pushed"]["records"] == 1 and out["personal"]["conflicts"] == []
    real = net.json(a, "sync", "--mount", "personal", "--remote", "backup")["personal"]
    assert real["pushed"] == out["personal"]["pushed"]


# ------------------------------------------------------------------ a failed push, one line


def error_line(result) -> str:
    assert result.exit_code == 1, (result.stdout, result.stderr)
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr  # git's advice and blank lines are left out
    return lines[0]


def test_a_push_to_a_path_that_is_no_repository(net, git, tmp_path):
    a = net.clone("a")
    net.remember(a, "Deploys go out on Tuesdays")
    git(a.path, "remote", "add", "nowhere", str(tmp_path / "missing.git"))
    line = error_line(net.ynm(a, "sync", "--remote", "nowhere", "--no-pull"))
    assert line == (f"Error: git push to nowhere failed: fatal: '{tmp_path / 'missing.git'}' "
                    "does not appear to be a git repository")


def test_a_push_the_remote_refuses_is_not_retried(net):
    a = net.clone("a")
    net.remember(a, "Deploys go out on Tuesdays")
    hook = net.origin / "hooks" / "pre-receive"
    hook.write_text("#!/bin/sh\necho 'notes are frozen here' >&2\nexit 1\n")
    hook.chmod(0o755)
    line = error_line(net.ynm(a, "sync"))
    assert line.startswith("Error: git push to origin failed: the remote refused it "
                           "(pre-receive hook declined): remote: notes are frozen here")
    assert "error: failed to push some refs" in line and "rounds" not in line


def test_a_push_to_an_unreachable_ssh_host(net, git):
    a = net.clone("a")
    net.remember(a, "Deploys go out on Tuesdays")
    # port 1 on this machine refuses at once, offline too
    git(a.path, "remote", "add", "down", "ssh://127.0.0.1:1/team.git")
    result = net.ynm(a, "sync", "--remote", "down", "--no-pull")
    line = error_line(result)
    assert line.startswith("Error: git push to down failed: ")
    assert "Connection refused" in line  # the cause, from ssh, before git's own words
    assert "Could not read from remote repository" in line
    assert "Please make sure" not in line
