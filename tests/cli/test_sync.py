"""``ynm sync`` (reference/cli.md §4.26, §4.10 hook and refspec; storage.md §4, §7.23).

Real git throughout: a bare ``origin.git`` with one commit and clones made with ``git clone``,
each set up with ``ynm init``. Clones that act as different people get their own ``YNM_HOME``.
Commands run in-process through the CLI with ``--cwd``.
"""

from __future__ import annotations

import json
import os
import random
import stat
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

SPEC = "+refs/notes/ynm/distributed/*:refs/notes/ynm-remote/origin/distributed/*"
PERSONAL_REFUSAL = ("syncing the personal store needs an explicit --remote: personal memory "
                    "never goes to a project's remote")


@dataclass
class Clone:
    path: Path
    home: Path


class Net:
    """A bare origin with one commit, clones of it, and ``ynm`` run as each clone's person."""

    def __init__(self, tmp_path: Path, git, cli_run, monkeypatch: pytest.MonkeyPatch) -> None:
        self.tmp, self.git, self.cli_run, self.mp = tmp_path, git, cli_run, monkeypatch
        seed = tmp_path / "seed"
        seed.mkdir()
        git(seed, "init", "-q", "-b", "main")
        (seed / "README").write_text("hello\n")
        git(seed, "add", "README")
        git(seed, "commit", "-q", "-m", "initial")
        self.origin = tmp_path / "origin.git"
        git(tmp_path, "clone", "-q", "--bare", str(seed), str(self.origin))
        self.anchor = git(self.origin, "rev-list", "--max-parents=0", "main")

    def clone(self, name: str, *init_args: str) -> Clone:
        path = self.tmp / name
        self.git(self.tmp, "clone", "-q", str(self.origin), str(path))
        c = Clone(path, self.tmp / f"home-{name}")
        result = self.ynm(c, "init", "--no-clients", *init_args)
        assert result.exit_code == 0, result.stderr
        return c

    def ynm(self, c: Clone, *args: str):
        self.mp.setenv("YNM_HOME", str(c.home))
        return self.cli_run(*args, "--cwd", c.path)

    def ok(self, c: Clone, *args: str):
        result = self.ynm(c, *args)
        assert result.exit_code == 0, (args, result.stdout, result.stderr)
        return result

    def json(self, c: Clone, *args: str):
        return json.loads(self.ok(c, *args, "--json").stdout)

    def remember(self, c: Clone, content: str, type_: str = "semantic",
                 namespace: str = "common", level: str | None = "distributed") -> str:
        args = ["remember", "--type", type_, "--content", content]
        if level:
            args += ["--level", level, "--namespace", namespace]
        return self.json(c, *args)["recordId"]

    def sync(self, c: Clone, *args: str) -> dict:
        return self.json(c, "sync", *args)["project"]

    def export(self, c: Clone) -> list[str]:
        return self.ok(c, "export", "--level", "distributed").stdout.splitlines()

    def refs(self, repo: Path, prefix: str = "refs/notes/") -> dict[str, str]:
        out = self.git(repo, "for-each-ref", "--format=%(refname) %(objectname)", prefix)
        return dict(row.split(" ") for row in out.splitlines())

    def ids_on(self, repo: Path) -> list[str]:
        """Every record id in every ynm note blob of ``repo`` (a clone or the bare origin)."""
        ids = []
        for ref in self.refs(repo, "refs/notes/ynm/"):
            blob = self.git(repo, "cat-file", "blob", f"{ref}:{self.anchor}")
            ids += [json.loads(raw)["id"] for raw in blob.splitlines() if raw.strip()]
        return ids


@pytest.fixture
def net(tmp_path, git, cli_run, monkeypatch) -> Net:
    return Net(tmp_path, git, cli_run, monkeypatch)


def ids_of(lines: list[str]) -> list[str]:
    return [json.loads(raw)["id"] for raw in lines]


def fsck(repo: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "fsck", "--strict", "--no-dangling", "--no-progress"],
                          cwd=repo, capture_output=True, text=True, timeout=60)


# ------------------------------------------------------------------------------ round trips


def test_two_clones_exchange_records_both_ways(net):
    a, b = net.clone("a"), net.clone("b")
    ra = [net.remember(a, "Deploys go out on Tuesdays"),
          net.remember(a, "Run the linter before pushing", "procedural")]
    rb = [net.remember(b, "The ledger service owns refunds"),
          net.remember(b, "Payments uses idempotency keys", namespace="team/payments")]

    first = net.sync(a)
    assert first["fetched"] == {"shards": [], "records": 0} and first["conflicts"] == []
    assert first["merged"] == first["fastForwarded"] == []
    assert len(first["pushed"]["shards"]) == 2 and first["pushed"]["records"] == 2
    second = net.sync(b)
    # a's procedural shard fast-forwards, the semantic shard both wrote merges
    assert second["fetched"]["records"] == 2 and len(second["fetched"]["shards"]) == 2
    assert len(second["fastForwarded"]) == 1 and len(second["merged"]) == 1
    assert second["conflicts"] == [] and second["retries"] == 0
    # the merged semantic shard (b's record) and b's new team/payments shard
    assert len(second["pushed"]["shards"]) == 2 and second["pushed"]["records"] == 2
    third = net.sync(a)
    # both fast-forwards: b's merge commit and b's team/payments shard
    assert third["fetched"]["records"] == 2 and len(third["fastForwarded"]) == 2
    assert third["merged"] == [] and third["conflicts"] == []
    assert third["pushed"] == {"shards": [], "records": 0}  # a had nothing new for origin
    for c in (a, b):  # nothing moves any more
        again = net.sync(c)
        assert again["fetched"] == again["pushed"] == {"shards": [], "records": 0}
        assert again["fastForwarded"] == again["merged"] == []

    exported_a, exported_b = net.export(a), net.export(b)
    assert set(exported_a) == set(exported_b)
    assert sorted(ids_of(exported_a)) == sorted(ra + rb)
    assert net.ok(a, "list", "--json").stdout == net.ok(b, "list", "--json").stdout
    assert len(json.loads(net.ok(a, "list", "--json").stdout)) == 4
    assert net.refs(a.path, "refs/notes/ynm/") == net.refs(b.path, "refs/notes/ynm/") \
        == net.refs(net.origin)


def test_human_output(net):
    a, b = net.clone("a"), net.clone("b")
    net.remember(a, "Deploys go out on Tuesdays")
    result = net.ok(a, "sync")
    assert result.stdout == "project: nothing to fetch, pushed 1 record in 1 shard\n"
    assert net.ok(a, "sync").stdout == "project: up to date\n"
    net.remember(b, "The ledger service owns refunds")
    net.remember(b, "Payments uses idempotency keys", namespace="team/payments")
    result = net.ok(b, "sync")
    assert result.stdout == ("project: fetched 1 record in 1 shard (1 merge), "
                             "pushed 2 records in 2 shards\n")
    assert result.stderr == ""
    net.remember(b, "Refunds settle overnight")
    assert net.ok(b, "sync").stdout == "project: nothing to fetch, pushed 1 record in 1 shard\n"
    result = net.ok(a, "sync")
    assert result.stdout == ("project: fetched 3 records in 2 shards (2 fast-forwards), "
                             "nothing to push\n")
    assert net.ok(a, "sync").stdout == net.ok(b, "sync").stdout == "project: up to date\n"


def test_each_half_says_what_it_did_with_the_flags_given(net):
    a, b = net.clone("a"), net.clone("b")
    assert net.ok(a, "sync", "--no-push").stdout == "project: nothing to fetch\n"
    assert net.ok(a, "sync", "--no-pull").stdout == "project: nothing to push\n"
    assert net.ok(a, "sync", "--dry-run").stdout == (
        "dry run: nothing was changed; would move:\nproject: up to date\n")
    assert net.ok(a, "sync", "--no-pull", "--no-push").stdout == (
        "project: nothing tried (--no-pull and --no-push)\n")
    net.remember(a, "Deploys go out on Tuesdays")
    net.remember(a, "Refunds settle overnight", namespace="team/payments")
    assert net.ok(a, "sync", "--no-push").stdout == "project: nothing to fetch\n"
    assert net.ok(a, "sync", "--no-pull").stdout == "project: pushed 2 records in 2 shards\n"
    assert net.ok(b, "sync", "--no-push").stdout == (
        "project: fetched 2 records in 2 shards (2 fast-forwards)\n")


def test_the_same_records_committed_apart_say_nothing_new_moved(net):
    # Two clones that imported the same export hold the same records in other commits: the
    # sync merges and pushes history, and says that no record was new, instead of
    # "fetched 0 records in 2 shards (2 merges), pushed 0 records in 2 shards"
    a, b = net.clone("a"), net.clone("b")
    net.remember(a, "Deploys go out on Tuesdays")
    net.remember(a, "Refunds settle overnight", namespace="team/payments")
    exported = net.tmp / "export.jsonl"
    exported.write_text("\n".join(net.export(a)) + "\n")
    net.ok(a, "sync")
    net.mp.setenv("GIT_COMMITTER_EMAIL", "b@example.com")  # b's commits are b's own
    assert net.ok(b, "import", exported).stdout == "imported 2 record(s)\n"
    result = net.ok(b, "sync")
    assert result.stdout == (
        "project: nothing new fetched (2 shards took the remote's commits, no record new here: "
        "2 merges), nothing new pushed (2 shards sent commits, no record new to the remote)\n")
    out = net.ok(b, "sync", "--json")
    assert json.loads(out.stdout)["project"]["fetched"] == {"shards": [], "records": 0}
    assert net.ok(a, "sync").stdout == (
        "project: nothing new fetched (2 shards took the remote's commits, no record new here: "
        "2 fast-forwards), nothing to push\n")
    assert net.ok(a, "sync").stdout == net.ok(b, "sync").stdout == "project: up to date\n"
    again = net.ok(b, "import", exported)
    assert again.stdout == "imported 0 record(s); 2 already present\n"


def test_a_clone_without_the_config_says_why_nothing_synced(net, git):
    # the config was never committed: a clone has no project mount, whatever the notes hold
    a = net.clone("a")
    net.remember(a, "Deploys go out on Tuesdays")
    net.ok(a, "sync")
    bare = net.tmp / "bare"
    git(net.tmp, "clone", "-q", str(net.origin), str(bare))
    git(bare, "fetch", "-q", "origin", "refs/notes/*:refs/notes/*")  # the notes, by hand
    c = Clone(bare, net.tmp / "home-bare")
    result = net.ok(c, "sync")
    assert result.stdout == "nothing to sync (no replicating distributed mount)\n"
    assert result.stderr == (f"hint: {bare} has no .ynm/config.json: run `ynm init` there (a "
                             "clone gets it only when it is committed where ynm init ran)\n")
    # the personal store is a repository of its own: the fix names it
    store = str(c.home / "store.git")
    result = net.ynm(c, "sync", "--mount", "personal", "--remote", "origin")
    assert result.exit_code == 1  # asked for by name
    assert result.stdout == (f'personal: skipped: remote "origin" is not configured in {store}; '
                             f"add it with `git -C {store} remote add origin <url>` and sync "
                             "again\n")
    net.ok(c, "init", "--no-clients")  # now with a config of its own, as a teammate's would be
    assert net.ok(c, "sync").stdout == "project: up to date\n"


@pytest.mark.parametrize("seed", [20260901])
def test_three_clones_in_random_order_converge(net, seed):
    rng = random.Random(seed)
    clones = [net.clone(n) for n in ("a", "b", "c")]
    written: list[str] = []
    for i in range(36):
        c = rng.choice(clones)
        written.append(net.remember(c, f"fact number {i} about the build",
                                    rng.choice(["semantic", "episodic"]),
                                    rng.choice(["common", "team/build"])))
        if rng.random() < 0.35:
            net.sync(rng.choice(clones))
    for _ in range(4):  # until a whole pass is quiet
        moved = [net.sync(c)["fetched"]["shards"] for c in clones]
        if not any(moved):
            break
    else:
        pytest.fail("sync did not settle in four passes")
    assert len(set(written)) == 36
    for c in clones:
        lines = net.export(c)
        assert sorted(ids_of(lines)) == sorted(written)  # every id exactly once
        assert sorted(net.ids_on(c.path)) == sorted(written)
        proc = fsck(c.path)
        assert proc.returncode == 0 and proc.stdout == proc.stderr == "", proc.stderr
    assert sorted(net.ids_on(net.origin)) == sorted(written)
    proc = fsck(net.origin)
    assert proc.returncode == 0 and proc.stdout == proc.stderr == "", proc.stderr
    assert len(net.refs(net.origin)) == 4  # 2 types x 2 namespaces, one month
    lists = {net.ok(c, "list", "--json").stdout for c in clones}
    assert len(lists) == 1


def test_no_push_keeps_the_unpushed_record_and_takes_the_remotes(net):
    a, b = net.clone("a"), net.clone("b")
    theirs = net.remember(a, "Deploys go out on Tuesdays")
    net.sync(a)
    mine = net.remember(b, "The ledger service owns refunds")
    result = net.sync(b, "--no-push")
    assert result["pushed"] == {"shards": [], "records": 0}
    assert len(result["merged"]) == 1 and result["fetched"]["records"] == 1
    assert sorted(ids_of(net.export(b))) == sorted([theirs, mine])
    assert net.ids_on(net.origin) == [theirs]


def test_no_pull_pushes_without_fetching(net):
    a = net.clone("a")
    net.remember(a, "Deploys go out on Tuesdays")
    result = net.sync(a, "--no-pull")
    assert result["fetched"] == {"shards": [], "records": 0}
    assert len(result["pushed"]["shards"]) == 1 and result["pushed"]["records"] == 1
    assert len(net.refs(net.origin)) == 1


# ---------------------------------------------------------------------------------- personal


def test_personal_memory_never_reaches_the_origin(net):
    a = net.clone("a")
    net.remember(a, "I prefer tabs", level=None)
    net.remember(a, "Deploys go out on Tuesdays")
    result = net.sync(a)
    assert [r.split("/")[3] for r in result["pushed"]["shards"]] == ["distributed"]
    assert net.refs(net.origin, "refs/notes/ynm/personal/") == {}
    assert net.refs(a.path, "refs/notes/ynm/personal/") == {}
    assert len(net.refs(a.home / "store.git", "refs/notes/ynm/personal/")) == 1


def test_personal_sync_needs_an_explicit_remote(net):
    a = net.clone("a")
    result = net.ynm(a, "sync", "--mount", "personal")
    assert result.exit_code == 2
    assert result.stdout == ""
    assert PERSONAL_REFUSAL in result.stderr
    assert not (a.home / "store.git").exists()  # refused before opening the store
    assert net.ynm(a, "sync", "--mount", "personal", "--json").exit_code == 2


def test_personal_sync_goes_to_the_named_private_remote_only(net, git, tmp_path):
    a = net.clone("a")
    mine = net.remember(a, "I prefer tabs", level=None)
    shared = net.remember(a, "Deploys go out on Tuesdays")
    store = a.home / "store.git"
    backup = tmp_path / "backup.git"
    git(tmp_path, "init", "-q", "--bare", str(backup))
    git(tmp_path, f"--git-dir={store}", "remote", "add", "backup", str(backup))

    out = net.json(a, "sync", "--mount", "personal", "--remote", "backup")
    assert list(out) == ["personal"]
    assert out["personal"]["conflicts"] == []
    personal_refs = list(net.refs(backup))
    assert out["personal"]["pushed"] == {"shards": personal_refs, "records": 1}
    assert len(personal_refs) == 1 and personal_refs[0].startswith(
        "refs/notes/ynm/personal/user/tester/semantic/")
    anchor = git(tmp_path, f"--git-dir={store}", "rev-list", "--max-parents=0",
                 "--exclude=refs/notes/*", "--exclude=refs/ynm/*", "--all")
    blob = git(tmp_path, f"--git-dir={backup}", "cat-file", "blob", f"{personal_refs[0]}:{anchor}")
    assert [json.loads(raw)["id"] for raw in blob.splitlines()] == [mine]
    assert net.refs(net.origin) == {}  # neither the personal nor the unsynced shared record
    net.sync(a)
    assert net.ids_on(net.origin) == [shared]
    assert net.refs(backup, "refs/notes/ynm/distributed/") == {}


# --------------------------------------------------------------------------- missing remote


def test_missing_remote_is_skipped_not_a_conflict(project, cli_run):
    cli_run("remember", "--type", "semantic", "--level", "distributed", "--content", "x y")
    reason = ('remote "origin" is not configured; add it with '
              "`git remote add origin <url>` and sync again")
    result = cli_run("sync")
    assert result.exit_code == 0, result.stderr  # the default remote: a local-only project
    assert result.stdout == f"project: skipped: {reason}\n"
    result = cli_run("sync", "--json")
    assert result.exit_code == 0
    out = json.loads(result.stdout)
    assert out == {"project": {
        "remote": "origin", "fetched": {"shards": [], "records": 0}, "fastForwarded": [],
        "merged": [], "pushed": {"shards": [], "records": 0}, "conflicts": [], "retries": 0,
        "skipped": reason,
    }}
    assert cli_run("sync", "--quiet").stdout == ""
    named = cli_run("sync", "--remote", "origin")  # asked for by name: a failure
    assert named.exit_code == 1 and named.stdout == f"project: skipped: {reason}\n"
    quiet = cli_run("sync", "--quiet", "--remote", "origin")
    assert quiet.exit_code == 1 and quiet.stdout == f"project: skipped: {reason}\n"


def test_no_replicating_mount(git_repo, cli_run, tmp_path, monkeypatch):
    """In a repository where ynm init never ran (or whose config is not committed) the
    report stays the reference's, and a hint says why there is nothing to sync."""
    hint = (f"hint: {git_repo} has no .ynm/config.json: run `ynm init` there (a clone gets it "
            "only when it is committed where ynm init ran)\n")
    result = cli_run("sync", "--cwd", git_repo)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "nothing to sync (no replicating distributed mount)\n"
    assert result.stderr == hint
    result = cli_run("sync", "--json", "--cwd", git_repo)
    assert result.exit_code == 0 and json.loads(result.stdout) == {}
    assert result.stderr == hint
    assert cli_run("sync", "--quiet", "--cwd", git_repo).stderr == ""
    outside = tmp_path / "outside"
    outside.mkdir()
    monkeypatch.chdir(outside)
    assert cli_run("sync").stderr == ""  # outside a repository there is nothing to init


def test_a_named_remote_that_does_not_exist(net):
    a = net.clone("a")
    net.remember(a, "Deploys go out on Tuesdays")
    result = net.ynm(a, "sync", "--remote", "upstream")
    assert result.exit_code == 1
    assert result.stdout == ('project: skipped: remote "upstream" is not configured; add it '
                             "with `git remote add upstream <url>` and sync again\n")
    assert net.refs(net.origin) == {}


@pytest.mark.parametrize("flags", [("--no-push",), (), ("--json", "--no-push")])
def test_an_unreachable_remote_is_a_failure_not_up_to_date(net, git, tmp_path, flags):
    a = net.clone("a")
    net.remember(a, "Deploys go out on Tuesdays")
    git(a.path, "remote", "add", "gone", str(tmp_path / "does-not-exist.git"))
    result = net.ynm(a, "sync", "--remote", "gone", *flags)
    assert result.exit_code == 1
    assert "up to date" not in result.stdout
    assert "git fetch from gone failed" in result.stderr
    assert "does not appear to be a git repository" in result.stderr


def test_an_unreachable_ssh_remote_names_the_cause(net, git, monkeypatch):
    """git's own line (``Could not read from remote repository``) does not say why; the line
    the transport printed before it does, and the error keeps it."""
    a = net.clone("a")
    net.remember(a, "Deploys go out on Tuesdays")
    git(a.path, "remote", "add", "far", "ssh://git@example.invalid/team/memory.git")
    monkeypatch.setenv("GIT_SSH_COMMAND", "sh -c 'echo \"ssh: connect to host example.invalid "
                       "port 22: Connection refused\" >&2; exit 255'")
    result = net.ynm(a, "sync", "--remote", "far", "--no-push")
    assert result.exit_code == 1
    assert ("git fetch from far failed: ssh: connect to host example.invalid port 22: "
            "Connection refused; fatal: Could not read from remote repository.") in result.stderr


# ------------------------------------------------------------------ dry run, quiet, refspec


def test_dry_run_reports_and_changes_no_ref(net):
    a, b = net.clone("a"), net.clone("b")
    net.remember(a, "Deploys go out on Tuesdays")
    net.sync(a)
    net.remember(b, "The ledger service owns refunds")
    before_b, before_origin = net.refs(b.path, "refs/notes/ynm/"), net.refs(net.origin)
    result = net.sync(b, "--dry-run")
    assert result["merged"] == list(before_b) and result["fetched"]["shards"] == list(before_b)
    assert result["pushed"] == {"shards": list(before_b), "records": 1}
    assert result["fetched"]["records"] == 1 and result["conflicts"] == []
    assert net.refs(b.path, "refs/notes/ynm/") == before_b
    assert net.refs(net.origin) == before_origin
    human = net.ok(b, "sync", "--dry-run").stdout
    assert human == ("dry run: nothing was changed; would move:\n"
                     "project: fetched 1 record in 1 shard (1 merge), "
                     "pushed 1 record in 1 shard\n")


def test_quiet_prints_nothing_on_success(net):
    a = net.clone("a")
    net.remember(a, "Deploys go out on Tuesdays")
    result = net.ok(a, "sync", "--quiet")
    assert result.stdout == "" and result.stderr == ""
    assert len(net.refs(net.origin)) == 1
    assert net.ok(a, "sync", "--quiet", "--json").stdout == ""


def test_quiet_still_reports_a_failure(net):
    a, b = net.clone("a"), net.clone("b")
    net.remember(a, "Deploys go out on Tuesdays")
    net.sync(a)
    net.remember(b, "The ledger service owns refunds")
    result = net.ynm(b, "sync", "--quiet", "--no-pull")  # behind origin and not fetching
    assert result.exit_code == 1
    assert "rejected" in result.stdout + result.stderr


def test_fetch_refspec_added_by_init_and_restored_by_sync(net, git):
    a = net.clone("a")

    def fetch() -> list[str]:
        return git(a.path, "config", "--get-all", "remote.origin.fetch").splitlines()

    assert fetch() == ["+refs/heads/*:refs/remotes/origin/*", SPEC]
    git(a.path, "config", "--unset", "remote.origin.fetch", r"^\+refs/notes/")
    assert SPEC not in fetch()
    net.sync(a, "--dry-run")
    assert SPEC not in fetch()  # a dry run changes no configuration
    net.sync(a)
    assert fetch() == ["+refs/heads/*:refs/remotes/origin/*", SPEC]
    net.sync(a)
    assert fetch().count(SPEC) == 1


# ------------------------------------------------------------------------------------ hooks


def test_init_installs_the_pre_push_hook(net):
    a = net.clone("a")
    hook = a.path / ".git" / "hooks" / "pre-push"
    assert stat.S_IMODE(hook.stat().st_mode) == 0o755
    text = hook.read_text()
    assert text.startswith("#!/bin/sh\n")
    assert "\nynm=ynm\n" in text  # ynm is on PATH here: the plain name
    assert '"$ynm" sync --quiet --mount project --remote "$remote"' in text
    assert '[ -n "$YNM_SYNC_IN_PROGRESS" ] && exit 0' in text
    assert text.index("YNM_SYNC_IN_PROGRESS") < text.index("sync --quiet")
    again = net.json(a, "init", "--no-clients")
    assert again["hooksInstalled"] == [] and not any("pre-push" in n for n in again["notes"])
    # the hook exits early (and successfully) while a sync is running
    proc = subprocess.run([str(hook)], cwd=a.path, capture_output=True, text=True,
                          env={**os.environ, "YNM_SYNC_IN_PROGRESS": "1", "PATH": "/nonexistent"})
    assert proc.returncode == 0 and proc.stdout == proc.stderr == ""


def test_foreign_pre_push_hook_is_left_alone(net, git, tmp_path):
    path = tmp_path / "a"
    git(tmp_path, "clone", "-q", str(net.origin), str(path))
    hook = path / ".git" / "hooks" / "pre-push"
    hook.write_text("#!/bin/sh\necho mine\n")
    c = Clone(path, tmp_path / "home-a")
    out = net.json(c, "init", "--no-clients")
    assert out["hooksInstalled"] == []
    assert f"pre-push hook exists and was left alone: {hook}" in out["notes"]
    assert hook.read_text() == "#!/bin/sh\necho mine\n"


def test_no_hooks_installs_nothing(net):
    a = net.clone("a", "--no-hooks")
    assert not (a.path / ".git" / "hooks" / "pre-push").exists()
    out = net.json(a, "init", "--no-clients", "--no-hooks")
    assert out["hooksInstalled"] == []


def test_git_push_with_the_hook_pushes_the_notes_too(net, git):
    a = net.clone("a")
    rid = net.remember(a, "Deploys go out on Tuesdays")
    (a.path / "new.txt").write_text("new\n")
    git(a.path, "add", "new.txt")
    git(a.path, "commit", "-q", "-m", "code change")
    bindir = Path(sys.executable).parent
    assert (bindir / "ynm").exists()
    env = {**os.environ, "YNM_HOME": str(a.home),
           "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.run(["git", "push", "-q", "origin", "main"], cwd=a.path, env=env,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert git(net.origin, "rev-parse", "main") == git(a.path, "rev-parse", "HEAD")
    assert net.ids_on(net.origin) == [rid]


def test_a_purge_survives_a_sync_with_a_clone_that_still_has_the_memory(
        tmp_path, git, cli_run, monkeypatch):
    """A purge in one clone is not undone by merging a remote that still holds the records:
    sync purges again before it pushes, and the other clone loses the records too."""
    net = Net(tmp_path, git, cli_run, monkeypatch)
    a, b = net.clone("a"), net.clone("b")
    mid = net.remember(a, "secret plan zebra")
    net.sync(a)
    net.sync(b)
    assert "zebra" in net.ok(b, "export").stdout
    net.ok(a, "purge", mid, "--reason", "leak", "--yes", "--forget-history")
    net.sync(a)
    assert net.json(a, "list", "--include-tombstoned") == []
    net.sync(b)
    for clone in (a, b):
        lines = [json.loads(x) for x in net.ok(clone, "export").stdout.splitlines()]
        assert [r["op"] for r in lines if r["memoryId"] == mid] == ["purge-marker"], clone
        assert net.json(clone, "list") == []
    assert "zebra" not in git(a.path, "notes", "--ref=refs/notes/ynm-remote/origin/distributed/"
                              f"common/semantic/{lines[0]['recordedAt'][:7]}", "show", net.anchor)


def _push(git_path: Path, *args: str, path_dirs: list[str], home: Path):
    env = {**os.environ, "YNM_HOME": str(home), "PATH": os.pathsep.join(path_dirs)}
    return subprocess.run(["git", "push", "-q", *args], cwd=git_path, env=env,
                          capture_output=True, text=True, timeout=60)


def _system_path_without_ynm() -> list[str]:
    bindir = str(Path(sys.executable).parent)
    return [d for d in os.environ.get("PATH", "").split(os.pathsep) if d and d != bindir]


def test_the_hook_syncs_with_the_remote_being_pushed_to(net, git, tmp_path):
    """``git push fork main`` shares memory with fork and leaves origin alone, even when
    origin is unreachable."""
    a = net.clone("a")
    fork = tmp_path / "fork.git"
    git(tmp_path, "clone", "-q", "--bare", str(net.origin), str(fork))
    git(a.path, "remote", "add", "fork", str(fork))
    rid = net.remember(a, "Deploys go out on Tuesdays")
    git(a.path, "remote", "set-url", "--push", "origin", str(tmp_path / "nowhere.git"))
    bindir = str(Path(sys.executable).parent)
    proc = _push(a.path, "fork", "main", path_dirs=[bindir, *_system_path_without_ynm()],
                 home=a.home)
    assert proc.returncode == 0, proc.stderr
    assert "failed" not in proc.stderr
    assert net.ids_on(fork) == [rid]
    assert net.ids_on(net.origin) == []


def test_init_without_ynm_on_path_writes_the_command_it_ran_as(net, git, monkeypatch):
    """With the virtualenv not on PATH, init writes the full path of its ynm into the hook and
    the agent client files, says so, and a later ``git push`` still shares memory."""
    monkeypatch.setenv("PATH", os.pathsep.join(_system_path_without_ynm()))
    a = net.clone("a", "--client", "claude-code")
    script = str(Path(sys.executable).parent / "ynm")
    out = net.json(a, "init", "--client", "claude-code")
    assert any(n.startswith("ynm is not on PATH: hooks and agent clients call " + script)
               for n in out["notes"])
    hook = (a.path / ".git" / "hooks" / "pre-push").read_text()
    assert f"\nynm={script}\n" in hook
    mcp = json.loads((a.path / ".mcp.json").read_text())
    assert mcp["mcpServers"]["ynm"] == {"command": script, "args": ["serve"]}
    assert ".mcp.json" not in out["commit"]  # it holds a path of this machine only
    assert any(n.startswith(".mcp.json names this machine's ynm") for n in out["notes"])
    settings = json.loads((a.path / ".claude" / "settings.local.json").read_text())
    commands = [h["command"] for groups in settings["hooks"].values() for g in groups
                for h in g["hooks"]]
    assert commands == [f"{script} hook session-start", f"{script} hook prompt",
                        f"{script} hook stop"]
    rid = net.remember(a, "Deploys go out on Tuesdays")
    (a.path / "x.txt").write_text("x\n")
    git(a.path, "add", "x.txt")
    git(a.path, "commit", "-q", "-m", "x")
    proc = _push(a.path, "origin", "main", path_dirs=_system_path_without_ynm(), home=a.home)
    assert proc.returncode == 0, proc.stderr
    assert net.ids_on(net.origin) == [rid]
    # With ynm on PATH again, init writes the plain name and replaces its own entries.
    monkeypatch.setenv("PATH", os.pathsep.join([str(Path(sys.executable).parent),
                                                *_system_path_without_ynm()]))
    again = net.json(a, "init", "--client", "claude-code")
    assert not any("not on PATH" in n for n in again["notes"])
    assert "\nynm=ynm\n" in (a.path / ".git" / "hooks" / "pre-push").read_text()
    settings = json.loads((a.path / ".claude" / "settings.local.json").read_text())
    commands = [h["command"] for groups in settings["hooks"].values() for g in groups
                for h in g["hooks"]]
    assert commands == ["ynm hook session-start", "ynm hook prompt", "ynm hook stop"]


def test_the_hook_says_so_when_it_cannot_run_ynm(net, git, tmp_path):
    a = net.clone("a")
    hook = a.path / ".git" / "hooks" / "pre-push"
    hook.write_text(hook.read_text().replace("\nynm=ynm\n", "\nynm=/nonexistent/ynm\n"))
    proc = _push(a.path, "origin", "main", path_dirs=_system_path_without_ynm(), home=a.home)
    assert proc.returncode == 0  # the code push goes on
    assert "ynm pre-push hook: cannot run ynm (/nonexistent/ynm is gone and ynm is not on " \
           "PATH): memory was not synced" in proc.stderr


def test_the_hook_says_so_when_the_push_goes_to_a_url(net, git, tmp_path):
    a = net.clone("a")
    net.remember(a, "Deploys go out on Tuesdays")
    bindir = str(Path(sys.executable).parent)
    proc = _push(a.path, str(net.origin), "main", path_dirs=[bindir, *_system_path_without_ynm()],
                 home=a.home)
    assert proc.returncode == 0, proc.stderr
    assert "pushing to a URL, not a named remote: memory was not synced" in proc.stderr
    assert net.ids_on(net.origin) == []


def test_a_purge_that_fails_again_is_reported_per_memory_and_the_sync_goes_on(
        tmp_path, git, cli_run, monkeypatch):
    """Re-purging one memory that a merge brought back can fail; that memory is reported (exit
    1), the other purges and the push still happen, and the next sync purges it again."""
    from ynm.errors import StoreConflict
    from ynm.store.gitnotes import GitNotesLog

    net = Net(tmp_path, git, cli_run, monkeypatch)
    a, b = net.clone("a"), net.clone("b")
    m1 = net.remember(a, "secret plan zebra")
    m2 = net.remember(a, "secret plan yak")
    net.sync(a)
    net.sync(b)
    for mid in (m1, m2):
        net.ok(a, "purge", mid, "--reason", "leak", "--yes", "--forget-history")
    real = GitNotesLog.purge_locked

    def flaky(self, memory_id, *args, **kwargs):
        if memory_id == m1:
            raise StoreConflict("shard moved during the purge")
        return real(self, memory_id, *args, **kwargs)

    monkeypatch.setattr(GitNotesLog, "purge_locked", flaky)
    result = net.ynm(a, "sync", "--json")
    assert result.exit_code == 1, result.stderr
    out = json.loads(result.stdout)["project"]
    assert out["conflicts"] == [f"purge of {m1} not re-applied: shard moved during the purge; "
                                "the next sync tries again"]
    assert out["pushed"]["shards"]  # the sync went on
    exported = net.ok(a, "export").stdout
    assert "yak" not in exported and "zebra" in exported
    monkeypatch.setattr(GitNotesLog, "purge_locked", real)
    again = net.sync(a)
    assert again["conflicts"] == [] and again["fetched"]["shards"] == []  # nothing moved
    assert again["pushed"]["records"] == 0 and again["pushed"]["shards"]  # the purge commit
    assert "zebra" not in net.ok(a, "export").stdout
    net.sync(b)
    assert "zebra" not in net.ok(b, "export").stdout and "yak" not in net.ok(b, "export").stdout


def test_fetched_but_unmerged_shards_are_pointed_out_until_sync(net, git):
    """After ``git fetch`` a clone's tracking refs hold teammates' shards; list, recall and
    status say how many wait for ``ynm sync`` (a note on stderr; a status field), and stop
    once sync merged them or when local is ahead of what was fetched."""
    a, b = net.clone("a"), net.clone("b")
    net.remember(a, "Deploys go out on Tuesdays")
    net.remember(a, "Run the linter before pushing", "procedural")
    net.sync(a)
    note = "note: 2 shards fetched but not merged into project: run `ynm sync`\n"
    for args in (("list",), ("list", "--json")):
        assert net.ok(b, *args).stderr == "", args  # nothing fetched yet
    assert net.ok(b, "recall", "deploys").stderr == (
        'hint: no memory holds "deploys"; ask in the words your memories use\n')
    git(b.path, "fetch", "-q", "origin")  # the refspec ynm init added brings the shards
    listed = net.ok(b, "list")
    assert listed.stderr == note and "Tuesdays" not in listed.stdout
    assert net.ok(b, "recall", "deploys").stderr == note
    assert net.ok(b, "list", "--json").stderr == note
    status = net.json(b, "status")
    assert [m.get("unmerged") for m in status["mounts"] if m["id"] == "project"] == [2]
    assert "2 shards fetched but not merged: run `ynm sync`" in net.ok(b, "status").stdout
    net.remember(a, "Refunds settle overnight")  # one shard moves again
    net.sync(a)
    git(b.path, "fetch", "-q", "origin")
    assert net.ok(b, "list").stderr == note  # still two shards, whatever their history
    net.sync(b)
    assert net.ok(b, "list").stderr == "" and net.ok(b, "recall", "deploys").stderr == ""
    assert all("unmerged" not in m for m in net.json(b, "status")["mounts"])
    net.remember(b, "The ledger service owns refunds")  # local ahead of the tracking ref
    assert net.ok(b, "list").stderr == ""
    net.remember(a, "Payments uses idempotency keys", namespace="team/payments")
    net.sync(a)
    git(b.path, "fetch", "-q", "origin")
    assert net.ok(b, "list").stderr == (
        "note: 1 shard fetched but not merged into project: run `ynm sync`\n")


# ------------------------------------------------------------------------------ fresh clones


def _second_commit(net: Net) -> str:
    """Push a second commit to origin's main and return its id (an anchor that is not the
    root commit, so a clone choosing on its own would pick another)."""
    work = net.tmp / "seed-work"
    net.git(net.tmp, "clone", "-q", str(net.origin), str(work))
    (work / "NOTES").write_text("more\n")
    net.git(work, "add", "NOTES")
    net.git(work, "commit", "-q", "-m", "second")
    net.git(work, "push", "-q", "origin", "main")
    return net.git(work, "rev-parse", "HEAD")


def _plain_clone(net: Net, name: str) -> Clone:
    net.git(net.tmp, "clone", "-q", str(net.origin), str(net.tmp / name))
    return Clone(net.tmp / name, net.tmp / f"home-{name}")


def test_init_adopts_the_anchor_committed_on_the_remote_and_leaves_the_pull_clear(net):
    second = _second_commit(net)
    b = _plain_clone(net, "b")  # cloned before the teammate committed the config
    a = net.clone("a", "--anchor", second)
    net.git(a.path, "add", ".ynm/config.json")
    net.git(a.path, "commit", "-q", "-m", "ynm config")
    net.git(a.path, "push", "-q", "origin", "main")
    mid = net.remember(a, "Deploys go out on Tuesdays")
    net.sync(a)

    net.git(b.path, "fetch", "-q", "origin")
    out = net.json(b, "init", "--no-clients")
    assert (out["anchor"], out["anchorSource"]) == (second, "remote-config")
    assert out["configWritten"] is False and out["commit"] == []
    assert any(n.startswith("origin/main already has .ynm/config.json") and "run `git pull` to "
               "get it" in n for n in out["notes"])  # main tracks origin/main
    assert out["configWaiting"] == {"branch": "origin/main", "run": "git pull"}
    assert not (b.path / ".ynm" / "config.json").exists()
    assert out["fetched"] == {"remote": "origin", "shards": 1, "records": 1}  # merged already
    net.git(b.path, "pull", "-q", "origin", "main")  # nothing untracked in its way
    assert json.loads((b.path / ".ynm" / "config.json").read_text())["anchor"] == second
    assert [m["memoryId"] for m in net.json(b, "list")] == [mid]  # no sync needed
    assert net.ok(b, "list").stderr == ""


def test_a_clone_without_a_checkout_is_told_to_check_out_the_branch(net):
    a = net.clone("a")
    net.git(a.path, "add", ".ynm/config.json")
    net.git(a.path, "commit", "-q", "-m", "ynm config")
    net.git(a.path, "push", "-q", "origin", "main")
    mid = net.remember(a, "Deploys go out on Tuesdays")
    net.sync(a)
    # the remote's HEAD names a branch that does not exist: `git clone` checks nothing out
    net.git(net.origin, "symbolic-ref", "HEAD", "refs/heads/gone")
    b = _plain_clone(net, "b")
    assert [p.name for p in b.path.iterdir()] == [".git"]
    human = net.ok(b, "init", "--no-clients").stdout.splitlines()
    config = b.path / ".ynm" / "config.json"
    assert not config.exists()
    assert human[2] == (f"  config    {config} (not written: origin/main has it; run "
                        "`git checkout main`)")
    assert "(unchanged)" not in "\n".join(human)
    assert ("  fetched   1 shard, 1 record from origin, merged (shown once `git checkout main` "
            "brings .ynm/config.json)") in human
    assert (f"  note      origin/main already has .ynm/config.json (anchor {net.anchor}), "
            "committed by a teammate: run `git checkout main` to get it; ynm wrote none here, "
            "so nothing stands in its way, and until then ynm shows none of the project's "
            "memory") in human
    assert human[-1] == "next: `git checkout main`, then `ynm list` and `ynm status`"
    out = net.json(b, "init", "--no-clients")
    assert (out["configWritten"], out["configExists"]) == (False, False)
    assert out["configWaiting"] == {"branch": "origin/main", "run": "git checkout main"}
    net.git(b.path, "checkout", "-q", "main")  # the command init named works in this state
    assert json.loads(config.read_text())["anchor"] == net.anchor
    assert [m["memoryId"] for m in net.json(b, "list")] == [mid]
    again = net.ok(b, "init", "--no-clients").stdout.splitlines()
    assert again[2] == f"  config    {config} (unchanged)"


def test_init_before_the_pull_says_to_remove_the_untracked_config(net):
    b = net.clone("b")  # b ran init first: an untracked .ynm/config.json
    a = net.clone("a")
    net.git(a.path, "add", ".ynm/config.json")
    net.git(a.path, "commit", "-q", "-m", "ynm config")
    net.git(a.path, "push", "-q", "origin", "main")
    net.git(b.path, "fetch", "-q", "origin")
    out = net.json(b, "init", "--no-clients")
    assert (out["anchor"], out["anchorSource"]) == (net.anchor, "config")
    assert ("origin/main already has .ynm/config.json (the same anchor): `git pull` refuses to "
            "overwrite an untracked copy, so remove yours (`rm .ynm/config.json`), then run "
            "`git pull`") in out["notes"]
    human = net.ok(b, "init", "--no-clients").stdout
    assert "rm .ynm/config.json" in human


def test_init_adopts_the_anchor_the_remotes_notes_annotate(net):
    second = _second_commit(net)
    a = net.clone("a", "--anchor", second)  # config not committed: only the notes travel
    mid = net.remember(a, "Deploys go out on Tuesdays")
    net.sync(a)
    b = _plain_clone(net, "b")
    net.git(b.path, "config", "--add", "remote.origin.fetch", SPEC)
    net.git(b.path, "fetch", "-q", "origin")
    out = net.json(b, "init", "--no-clients")
    assert (out["anchor"], out["anchorSource"]) == (second, "remote-notes")
    assert out["configWritten"] is True
    net.sync(b)
    assert [m["memoryId"] for m in net.json(b, "list")] == [mid]


def test_init_in_a_fresh_clone_fetches_the_memory_and_the_anchor(net):
    """A plain ``git clone`` then ``ynm init``: init fetches the remote's notes itself (no
    push), takes the anchor they hang off, merges them and says how much came in; the clone
    does not look empty. Later, a plain ``git fetch`` (the refspec init added) leaves shards
    unmerged, and list, recall and status say so until ``ynm sync``."""
    second = _second_commit(net)
    a = net.clone("a", "--anchor", second)  # the config is never committed: notes only
    ids = [net.remember(a, "Deploys go out on Tuesdays"),
           net.remember(a, "Run the linter before pushing", "procedural")]
    net.sync(a)
    origin_refs = net.refs(net.origin)
    b = _plain_clone(net, "b")
    out = net.json(b, "init", "--no-clients")
    assert (out["anchor"], out["anchorSource"]) == (second, "remote-notes")
    assert out["fetched"] == {"remote": "origin", "shards": 2, "records": 2}
    assert out["warnings"] == [] and out["refspecs"] == [SPEC]
    assert sorted(m["memoryId"] for m in net.json(b, "list")) == sorted(ids)
    assert net.refs(net.origin) == origin_refs  # nothing was pushed
    assert net.ok(b, "list").stderr == ""  # all merged: no hint

    human = net.ok(b, "init", "--no-clients").stdout.splitlines()
    assert "  fetched   no new memory on origin" in human
    net.remember(a, "Refunds settle overnight")
    net.sync(a)
    human = net.ok(b, "init", "--no-clients").stdout.splitlines()
    assert "  fetched   1 shard, 1 record from origin, merged" in human

    net.remember(a, "Payments uses idempotency keys", namespace="team/payments")
    net.sync(a)
    net.git(b.path, "fetch", "-q", "origin")  # plain git: the refspec init configured
    note = "note: 1 shard fetched but not merged into project: run `ynm sync`\n"
    assert net.ok(b, "list").stderr == note
    assert net.ok(b, "recall", "idempotency").stderr == note
    assert "1 shard fetched but not merged: run `ynm sync`" in net.ok(b, "status").stdout
    net.sync(b)
    assert net.ok(b, "list").stderr == ""


def test_init_replaces_a_draft_anchor_with_the_teams(net):
    """A clone that ran init before anyone shared memory wrote an uncommitted config with an
    anchor of its own; once the remote's notes hang off another, init takes the team's, unless
    the clone already holds shards of its own (then it says how to move them)."""
    second = _second_commit(net)
    b = net.clone("b")  # its draft: the root commit
    c = net.clone("c")
    net.remember(c, "my own note")  # a local shard under the draft anchor
    a = net.clone("a", "--anchor", second)
    mid = net.remember(a, "Deploys go out on Tuesdays")
    net.sync(a)

    out = net.json(b, "init", "--no-clients")
    assert (out["anchor"], out["anchorSource"]) == (second, "remote-notes")
    assert (f"took the team's anchor {second} from origin's notes (this clone's uncommitted "
            f".ynm/config.json had {net.anchor})") in out["notes"]
    assert json.loads((b.path / ".ynm" / "config.json").read_text())["anchor"] == second
    assert [m["memoryId"] for m in net.json(b, "list")] == [mid]

    out = net.json(c, "init", "--no-clients")
    assert (out["anchor"], out["anchorSource"]) == (net.anchor, "config")
    assert any(n.startswith(f"origin's memory hangs off anchor {second}, this clone's off "
                            f"{net.anchor}") for n in out["notes"])


def test_init_keeps_a_committed_or_given_anchor(net):
    second = _second_commit(net)
    a = net.clone("a", "--anchor", second)
    net.remember(a, "Deploys go out on Tuesdays")
    net.sync(a)
    b = _plain_clone(net, "b")
    out = net.json(b, "init", "--no-clients", "--anchor", net.anchor)  # given: kept
    assert (out["anchor"], out["anchorSource"]) == (net.anchor, "config")
    assert out["fetched"]["shards"] == 1  # the shard still came in (under its own anchor)


def test_init_in_a_shallow_clone_takes_the_anchor_from_the_fetched_notes(net):
    """A shallow clone has no root commit to choose; the remote's notes name the anchor."""
    second = _second_commit(net)
    a = net.clone("a", "--anchor", second)
    mid = net.remember(a, "Deploys go out on Tuesdays")
    net.sync(a)
    path = net.tmp / "shallow"
    net.git(net.tmp, "clone", "-q", "--depth", "1", f"file://{net.origin}", str(path))
    b = Clone(path, net.tmp / "home-shallow")
    out = net.json(b, "init", "--no-clients")
    assert (out["anchor"], out["anchorSource"]) == (second, "remote-notes")
    assert out["fetched"] == {"remote": "origin", "shards": 1, "records": 1}
    assert [m["memoryId"] for m in net.json(b, "list")] == [mid]
