"""``ynm doctor`` against real repositories (reference/cli.md §4.4): the checks, their order,
levels, fixes and exit codes, and that doctor changes nothing."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import make_record, mount_org
from ynm.index.schema import SCHEMA_VERSION

URL = "https://memory.example.com/mcp"
# The ONNX exports of this machine's user (read before a test moves HOME).
MODELS = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "ynm" / "models"


@pytest.fixture(autouse=True)
def home(user_home: Path) -> Path:
    """Every test here runs with a user home of its own (``user_home``)."""
    return user_home


def doctor(cli_run, cwd: Path) -> tuple[int, dict, str]:
    """Exit code, JSON and human output of ``ynm doctor`` in ``cwd``."""
    as_json = cli_run("doctor", "--json", "-C", cwd)
    human = cli_run("doctor", "-C", cwd)
    assert as_json.exit_code == human.exit_code, as_json.stderr
    assert as_json.stderr == "" and human.stderr == ""
    return as_json.exit_code, json.loads(as_json.stdout), human.stdout


def named(result: dict, name: str) -> dict:
    found = [c for c in result["checks"] if c["name"] == name]
    assert len(found) == 1, [c["name"] for c in result["checks"]]
    return found[0]


def line(human: str, name: str) -> str:
    found = [x for x in human.splitlines() if x[6:].startswith(name + ":")]
    assert len(found) == 1, human
    return found[0]


def run_fix(fix: str, cwd: Path) -> None:
    subprocess.run(fix, shell=True, cwd=cwd, check=True, capture_output=True, timeout=60)


def snapshot(*roots: Path) -> dict[str, bytes]:
    """Every file under ``roots`` with its bytes."""
    return {str(p): p.read_bytes() for root in roots for p in sorted(root.rglob("*"))
            if p.is_file()}


def with_origin(project: Path, git, tmp_path: Path) -> Path:
    """Give ``project`` a remote ``origin`` and the distributed fetch refspec ``ynm init``
    adds for it."""
    origin = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(origin))
    git(project, "remote", "add", "origin", str(origin))
    git(project, "config", "--add", "remote.origin.fetch",
        "+refs/notes/ynm/distributed/*:refs/notes/ynm-remote/origin/distributed/*")
    return origin


def append_line(git, project: Path, text: str) -> str:
    """Append ``text`` to the project's first shard as another tool would (``git notes
    append``), bypassing ynm and its cache. Returns the shard ref."""
    ref = git(project, "for-each-ref", "--format=%(refname)",
              "refs/notes/ynm/distributed").splitlines()[0]
    anchor = json.loads((project / ".ynm" / "config.json").read_text())["anchor"]
    git(project, "notes", f"--ref={ref}", "append", "-m", text, anchor)
    return ref


def remember(cli_run, content: str = "We deploy on Tuesdays") -> None:
    r = cli_run("remember", "--type", "semantic", "--level", "distributed", "--content", content)
    assert r.exit_code == 0, r.stderr


# -- a healthy project -------------------------------------------------------------------------


def test_a_healthy_project_passes_every_check_in_the_reference_order(project, cli_run, git,
                                                                     tmp_path, ynm_home):
    with_origin(project, git, tmp_path)
    remember(cli_run)
    code, result, human = doctor(cli_run, project)
    assert code == 0 and result["ok"] is True
    assert list(result) == ["ok", "checks"]
    assert [c["name"] for c in result["checks"]] == [
        "git available", "config files", "mount personal (git-notes)",
        "mount project (git-notes)", "project anchor configured", "distributed fetch refspec",
        "personal refs never pushed", "no personal refs in project repo", "pre-push hook",
        "cache personal", "cache project", "bad lines personal", "bad lines project",
        "snapshot personal", "snapshot project", "vector model", "cache size personal",
        "cache size project"]
    assert all(c["ok"] for c in result["checks"])
    assert all(list(c) == ["name", "ok", "level", "detail"] for c in result["checks"])
    assert named(result, "config files")["detail"] == str(project / ".ynm" / "config.json")
    anchor = git(project, "rev-list", "--max-parents=0", "HEAD")
    mount = named(result, "mount project (git-notes)")
    assert mount["detail"] == (
        f'{project}: {{"repo":"{project / ".git"}","anchor":"{anchor}","remote":"origin",'
        '"anchorPresent":true,"shards":1,"badLines":0}')
    assert named(result, "distributed fetch refspec")["detail"] == (
        "+refs/notes/ynm/distributed/*:refs/notes/ynm-remote/origin/distributed/*")
    assert named(result, "pre-push hook")["detail"] == str(project / ".git" / "hooks" / "pre-push")
    assert named(result, "cache project")["detail"] == f"schema {SCHEMA_VERSION}, fresh (1 shard, 1 memory)"
    assert named(result, "bad lines project") == {
        "name": "bad lines project", "ok": True, "level": "info", "detail": "none"}
    size = named(result, "cache size project")["detail"]
    assert size.startswith(f"{(project / '.ynm/index/ynm-cache/project.sqlite').stat().st_size / 1024:.1f} KiB cache for ")
    assert "of records in 1 shard (" in size
    lines = human.splitlines()
    assert len(lines) == len(result["checks"])
    assert lines[0].startswith("ok    git available: git version ")
    assert all(x.startswith("ok    ") for x in lines)


def test_a_fresh_clone_before_init_warns_and_exits_0(git_repo, cli_run, git, tmp_path, ynm_home):
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(git_repo), str(clone))
    code, result, human = doctor(cli_run, clone)
    assert code == 0 and result["ok"] is True
    assert named(result, "project initialised") == {
        "name": "project initialised", "ok": False, "level": "warn",
        "detail": "no .ynm/config.json; run `ynm init` to add a distributed project mount",
        "fix": "ynm init"}
    assert line(human, "project initialised") == (
        "warn  project initialised: no .ynm/config.json; run `ynm init` to add a distributed "
        "project mount")
    # doctor does not create the personal store: it says the first personal write will
    assert named(result, "mount personal (git-notes)")["detail"] == (
        f"{ynm_home / 'store.git'}: not created yet; the first personal write creates it")
    assert not (ynm_home / "store.git").exists()
    assert named(result, "config files")["detail"] == "none (defaults)"


def test_outside_a_repository_only_the_personal_store(tmp_path, cli_run):
    folder = tmp_path / "plain"
    folder.mkdir()
    code, result, _ = doctor(cli_run, folder)
    assert code == 0
    assert named(result, "git repository") == {
        "name": "git repository", "ok": True, "level": "info",
        "detail": "not inside a git repository; only the personal store is mounted"}


# -- refspecs and personal refs ----------------------------------------------------------------


@pytest.mark.parametrize("key, spec", [
    ("remote.origin.push", "refs/notes/ynm/personal/*:refs/notes/ynm/personal/*"),
    ("remote.origin.fetch", "+refs/notes/ynm/personal/*:refs/notes/ynm-remote/origin/personal/*"),
])
def test_a_personal_refspec_fails_and_its_fix_removes_only_it(project, cli_run, git, tmp_path,
                                                              key, spec):
    with_origin(project, git, tmp_path)
    git(project, "config", "--add", "remote.origin.push", "HEAD")
    assert doctor(cli_run, project)[0] == 0
    git(project, "config", "--add", key, spec)
    code, result, human = doctor(cli_run, project)
    assert code == 1 and result["ok"] is False
    check = named(result, "personal refs never pushed")
    assert check == {"name": "personal refs never pushed", "ok": False, "level": "error",
                     "detail": f"personal memory would leave this machine: {key} = {spec}",
                     "fix": f"git config --unset-all {key} personal"}
    assert line(human, "personal refs never pushed") == (
        f"FAIL  personal refs never pushed: personal memory would leave this machine: {key} = "
        f"{spec}  fix: git config --unset-all {key} personal")
    run_fix(check["fix"], project)
    code, result, _ = doctor(cli_run, project)
    assert code == 0 and named(result, "personal refs never pushed")["ok"] is True
    assert git(project, "config", "--get-all", "remote.origin.push") == "HEAD"
    assert "distributed" in git(project, "config", "--get-all", "remote.origin.fetch")


def test_a_personal_refspec_of_any_remote_fails(project, cli_run, git, tmp_path):
    with_origin(project, git, tmp_path)
    git(project, "remote", "add", "mirror", str(tmp_path / "mirror.git"))
    git(project, "config", "--add", "remote.mirror.push", "refs/notes/*:refs/notes/*")
    git(project, "config", "--add", "remote.mirror.push", "+refs/notes/ynm/personal/x:refs/x")
    code, result, _ = doctor(cli_run, project)
    assert code == 1
    assert named(result, "personal refs never pushed")["fix"] == (
        "git config --unset-all remote.mirror.push personal")


def test_a_missing_fetch_refspec_fails_and_its_fix_adds_it(project, cli_run, git, tmp_path):
    with_origin(project, git, tmp_path)
    git(project, "config", "--unset-all", "remote.origin.fetch", "ynm")
    code, result, _ = doctor(cli_run, project)
    assert code == 1
    check = named(result, "distributed fetch refspec")
    assert check["detail"] == "missing; `ynm sync` adds it" and check["level"] == "error"
    run_fix(check["fix"], project)
    assert doctor(cli_run, project)[0] == 0


def test_no_remote_is_a_warning_that_says_how_to_add_one(project, cli_run, git, tmp_path):
    """The reference passes this check (ok, level warn), so it prints `ok`; memory that
    cannot be shared is something to act on: a failing warning, exit 0 (docs/cli.md)."""
    code, result, human = doctor(cli_run, project)
    assert code == 0 and result["ok"] is True
    detail = ('remote "origin" not configured; sync unavailable: add it with `git remote add '
              'origin <url>`, then run `ynm sync`')
    assert named(result, "remote") == {"name": "remote", "ok": False, "level": "warn",
                                       "detail": detail}
    assert line(human, "remote") == f"warn  remote: {detail}"
    assert "distributed fetch refspec" not in human
    with_origin(project, git, tmp_path)
    result = doctor(cli_run, project)[1]
    assert "remote" not in [c["name"] for c in result["checks"]]
    assert named(result, "distributed fetch refspec")["ok"] is True


def test_a_remote_named_in_the_config_is_the_one_to_add(project, cli_run):
    (project / ".ynm" / "config.local.json").write_text('{"remote": "team"}\n')
    assert named(doctor(cli_run, project)[1], "remote")["detail"].endswith(
        "add it with `git remote add team <url>`, then run `ynm sync`")


def test_a_personal_ref_in_the_project_repo_fails(project, cli_run, git):
    git(project, "update-ref", "refs/notes/ynm/personal/leak", "HEAD")
    code, result, _ = doctor(cli_run, project)
    assert code == 1
    check = named(result, "no personal refs in project repo")
    assert check == {"name": "no personal refs in project repo", "ok": False, "level": "error",
                     "detail": "refs/notes/ynm/personal/leak",
                     "fix": "git update-ref -d refs/notes/ynm/personal/leak"}
    run_fix(check["fix"], project)
    code, result, _ = doctor(cli_run, project)
    assert code == 0
    assert named(result, "no personal refs in project repo")["detail"] == "ok"


def test_a_missing_pre_push_hook_warns(project, cli_run):
    (project / ".git" / "hooks" / "pre-push").unlink()
    code, result, _ = doctor(cli_run, project)
    assert code == 0
    assert named(result, "pre-push hook") == {"name": "pre-push hook", "ok": False,
                                              "level": "warn", "detail": "not installed",
                                              "fix": "ynm init"}
    assert cli_run("init").exit_code == 0
    assert named(doctor(cli_run, project)[1], "pre-push hook")["ok"] is True


def test_a_pre_push_hook_that_is_not_executable_warns(project, cli_run, git, tmp_path):
    """git ignores a hook that is not executable, so a push would not share memory: not
    `ok`, however right its text; the fix (or `ynm init`) makes it executable again."""
    hook = project / ".git" / "hooks" / "pre-push"
    hook.chmod(0o644)
    code, result, human = doctor(cli_run, project)
    assert code == 0
    assert named(result, "pre-push hook") == {
        "name": "pre-push hook", "ok": False, "level": "warn",
        "detail": f"{hook} is not executable, so git ignores it and a push does not share "
                  "memory", "fix": f"chmod +x {hook}"}
    assert line(human, "pre-push hook").startswith("warn  pre-push hook: ")
    run_fix(named(result, "pre-push hook")["fix"], project)
    assert named(doctor(cli_run, project)[1], "pre-push hook")["ok"] is True
    hook.chmod(0o644)
    init = json.loads(cli_run("init", "--json").stdout)
    assert init["hooksInstalled"] == [str(hook)] and os.access(hook, os.X_OK)
    assert named(doctor(cli_run, project)[1], "pre-push hook")["ok"] is True


def test_a_missing_anchor_in_the_project_config_fails(project, cli_run):
    (project / ".ynm" / "config.json").write_text("{}\n")
    code, result, _ = doctor(cli_run, project)
    assert code == 1
    assert named(result, "project anchor configured") == {
        "name": "project anchor configured", "ok": False, "level": "error",
        "detail": "missing anchor in .ynm/config.json", "fix": "ynm init"}


@pytest.mark.parametrize("kind", ["tree", "blob", "absent"])
def test_an_anchor_that_is_no_commit_fails_and_names_why(project, cli_run, git, kind):
    sha = {"tree": lambda: git(project, "write-tree"),
           "blob": lambda: git(project, "hash-object", "-w", "--stdin", input=b"x\n"),
           "absent": lambda: "1" * 40}[kind]()
    (project / ".ynm" / "config.json").write_text(json.dumps({"anchor": sha}) + "\n")
    code, result, human = doctor(cli_run, project)
    assert code == 1
    got = named(result, "mount project anchor object")
    assert got["ok"] is False and got["level"] == "error"
    assert got["detail"].startswith(f"anchor {sha} (from ") and "is not a commit" in got["detail"]
    assert "ynm init --anchor" in got["fix"]
    assert line(human, "mount project anchor object").startswith("FAIL  ")


# -- shallow clone -----------------------------------------------------------------------------


def test_a_shallow_clone_without_the_anchor_object_warns_as_the_reference(project, cli_run, git,
                                                                          tmp_path):
    anchor = json.loads((project / ".ynm" / "config.json").read_text())["anchor"]
    git(project, "add", ".ynm/config.json")
    git(project, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "ynm config")
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{project}", str(clone))
    assert git(clone, "rev-parse", "--is-shallow-repository") == "true"
    code, result, human = doctor(cli_run, clone)
    # the clone's origin has no distributed fetch refspec yet: the one error
    assert code == 1 and [c["name"] for c in result["checks"] if not c["ok"]
                          and c["level"] == "error"] == ["distributed fetch refspec"]
    mount = named(result, "mount project (git-notes)")
    assert mount["ok"] is True and f'"anchor":"{anchor}"' in mount["detail"]
    assert '"anchorPresent":false' in mount["detail"]
    assert named(result, "mount project anchor object") == {
        "name": "mount project anchor object", "ok": True, "level": "warn",
        "detail": "not present locally (shallow clone); plumbing does not need it"}
    names = [c["name"] for c in result["checks"]]
    assert names.index("mount project anchor object") == names.index(
        "mount project (git-notes)") + 1
    assert line(human, "mount project anchor object").startswith("ok    ")


def test_a_notes_only_store_without_the_anchor_object_is_not_called_shallow(project, cli_run,
                                                                           git, ynm_home,
                                                                           tmp_path):
    """A ``git init --bare`` org store holds notes only: its anchor commit is absent, but it is
    no shallow clone (git says so), and doctor must not say it is."""
    org = tmp_path / "org.git"
    git(tmp_path, "init", "-q", "--bare", str(org))
    assert git(org, "rev-parse", "--is-shallow-repository") == "false"
    anchor = json.loads((project / ".ynm" / "config.json").read_text())["anchor"]
    ynm_home.mkdir(exist_ok=True)
    (ynm_home / "config.json").write_text(json.dumps({"mounts": [
        {"id": "org", "level": "distributed", "provider": "git-notes", "path": str(org),
         "anchor": anchor}]}))
    _, result, human = doctor(cli_run, project)
    assert '"anchorPresent":false' in named(result, "mount org (git-notes)")["detail"]
    assert named(result, "mount org anchor object") == {
        "name": "mount org anchor object", "ok": True, "level": "info",
        "detail": "not present locally (the store holds notes only, no history of its own); "
                  "plumbing does not need it"}
    assert "shallow" not in human


def test_a_worktree_of_a_shallow_clone_is_shallow(project, cli_run, git, tmp_path):
    """git keeps ``shallow`` in the common dir, shared by every worktree; doctor run in a
    linked worktree of a shallow clone says shallow clone, as ``git rev-parse`` does there."""
    git(project, "add", ".ynm/config.json")
    git(project, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "ynm config")
    git(project, "-c", "commit.gpgsign=false", "commit", "-q", "--allow-empty", "-m", "two")
    clone = tmp_path / "shallow"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{project}", str(clone))
    linked = tmp_path / "linked"
    git(clone, "worktree", "add", "-q", str(linked))
    assert git(linked, "rev-parse", "--is-shallow-repository") == "true"
    _, result, _ = doctor(cli_run, linked)
    assert named(result, "mount project anchor object")["detail"] == (
        "not present locally (shallow clone); plumbing does not need it")


# -- ynm's own: cache, bad lines, cache size ---------------------------------------------------


def test_a_bad_line_is_reported_with_its_shard_and_line(project, cli_run, git):
    remember(cli_run)
    ref = append_line(git, project, "not json")
    lines = git(project, "notes", f"--ref={ref}", "show",
                json.loads((project / ".ynm/config.json").read_text())["anchor"]).split("\n")
    number = lines.index("not json") + 1
    code, result, _ = doctor(cli_run, project)
    assert code == 0  # a bad line is skipped on every read: a warning
    check = named(result, "bad lines project")
    assert check["ok"] is False and check["level"] == "warn"
    assert check["detail"].startswith(f"1 line skipped (every other record is read): "
                                      f"{ref}:{number} ")
    assert check["fix"].startswith(f"git -C {project / '.git'} notes --ref {ref} edit ")
    assert '"badLines":1' in named(result, "mount project (git-notes)")["detail"]
    # once a read has refreshed the cache, doctor takes the line from it: the same report
    assert cli_run("list").exit_code == 0
    assert named(doctor(cli_run, project)[1], "bad lines project") == check


def test_a_stale_cache_is_reported_and_left_as_it_is(project, cli_run, git):
    remember(cli_run)
    cache = project / ".ynm" / "index" / "ynm-cache" / "project.sqlite"
    append_line(git, project, json.dumps(make_record(level="distributed", namespace="common"),
                                         separators=(",", ":")))
    before = snapshot(cache.parent)
    code, result, human = doctor(cli_run, project)
    assert code == 0
    check = named(result, "cache project")
    assert check["ok"] is False and check["level"] == "warn"
    assert check["detail"] == (f"{cache}: stale (shard distributed/common/semantic/"
                               f"{check['detail'].split('/semantic/')[1].split(' ')[0]} "
                               "changed); the next read refreshes it")
    assert check["fix"] == "ynm reindex --mount project"
    assert line(human, "cache project").endswith("  fix: ynm reindex --mount project")
    assert snapshot(cache.parent) == before  # not rebuilt, not refreshed
    run_fix(f"{sys.executable} -m ynm reindex --mount project", project)
    assert named(doctor(cli_run, project)[1], "cache project")["detail"] == (
        f"schema {SCHEMA_VERSION}, fresh (1 shard, 2 memories)")


def test_a_cache_of_another_schema_version_is_reported(project, cli_run):
    import sqlite3

    cache = project / ".ynm" / "index" / "ynm-cache" / "project.sqlite"
    assert cli_run("list").exit_code == 0
    with sqlite3.connect(cache) as conn:
        conn.execute("UPDATE meta SET value = '7' WHERE key = 'schema_version'")
    conn.close()
    check = named(doctor(cli_run, project)[1], "cache project")
    assert check["detail"] == (f"{cache}: schema version 7, this ynm uses {SCHEMA_VERSION}; the next read "
                               "rebuilds it")
    assert check["fix"] == "ynm reindex --mount project"


SNAP = f"refs/ynm/distributed/snapshots/cache-v{SCHEMA_VERSION}"


def test_no_snapshot_is_fine(project, cli_run):
    remember(cli_run)
    assert named(doctor(cli_run, project)[1], "snapshot project") == {
        "name": "snapshot project", "ok": True, "level": "info",
        "detail": f"none ({SNAP}); `ynm compact` writes one, which a fresh clone's first read "
                  "starts from"}


def test_a_usable_snapshot_says_what_it_covers_and_how_far_behind_it_is(project, cli_run, git):
    remember(cli_run)
    remember(cli_run, "Releases are tagged from main")
    assert cli_run("compact", "--mount", "project").exit_code == 0
    commit = git(project, "rev-parse", SNAP)
    check = named(doctor(cli_run, project)[1], "snapshot project")
    assert check == {"name": "snapshot project", "ok": True, "level": "info",
                     "detail": f"{SNAP} {commit[:12]}: covers 2 records in 1 shard, "
                               "0 records behind the tips"}
    remember(cli_run, "The changelog is written by hand")
    append_line(git, project, json.dumps(make_record(level="distributed", namespace="common"),
                                         separators=(",", ":")))
    assert named(doctor(cli_run, project)[1], "snapshot project")["detail"] == (
        f"{SNAP} {commit[:12]}: covers 2 records in 1 shard, 2 records behind the tips")


@pytest.mark.parametrize("how", ["code commit", "flipped bytes"])
def test_an_unusable_snapshot_warns_with_why_and_the_fix(project, cli_run, git, how):
    remember(cli_run)
    assert cli_run("compact", "--mount", "project").exit_code == 0
    if how == "code commit":
        git(project, "update-ref", SNAP, "HEAD")
        why = (f"snapshot {SNAP} is not a snapshot commit (it points at commit "
               f"{git(project, 'rev-parse', 'HEAD')[:12]}, which holds no meta.json file)")
    else:
        state = subprocess.run(["git", "cat-file", "blob", f"{SNAP}:state.bin"], cwd=project,
                               capture_output=True, check=True).stdout
        blob = git(project, "hash-object", "-w", "--stdin",
                   input=state[:-1] + bytes([state[-1] ^ 1]))
        meta = git(project, "rev-parse", f"{SNAP}:meta.json")
        tree = git(project, "mktree", input=(f"100644 blob {meta}\tmeta.json\n"
                                             f"100644 blob {blob}\tstate.bin\n").encode())
        git(project, "update-ref", SNAP, git(project, "commit-tree", tree, "-m", "x"))
        why = (f"snapshot {SNAP}: state.bin is damaged (its SHA-256 is not the one meta.json "
               "records)")
    before = snapshot(project / ".git" / "refs", project / ".ynm")
    code, result, human = doctor(cli_run, project)
    assert code == 0  # a warning: reads build the cache from the notes
    assert named(result, "snapshot project") == {
        "name": "snapshot project", "ok": False, "level": "warn",
        "detail": f"{why}; a fresh cache is built from the notes, not from it; `ynm compact` "
                  "writes it again", "fix": "ynm compact"}
    assert line(human, "snapshot project").startswith("warn  snapshot project: snapshot ")
    assert snapshot(project / ".git" / "refs", project / ".ynm") == before
    run_fix(f"{sys.executable} -m ynm compact", project)
    assert named(doctor(cli_run, project)[1], "snapshot project")["ok"] is True


def test_doctor_changes_nothing(project, cli_run, git, tmp_path, ynm_home):
    """A repository with a bit of everything doctor reports: neither it (refs, config, hooks,
    .ynm/ with the cache) nor ynm's home changes by a byte."""
    with_origin(project, git, tmp_path)
    remember(cli_run)
    assert cli_run("compact").exit_code == 0
    remember(cli_run, "Written after the snapshot")
    append_line(git, project, "not json")
    git(project, "config", "--add", "remote.origin.push", "refs/notes/ynm/personal/*")
    git(project, "update-ref", "refs/notes/ynm/personal/leak", "HEAD")
    (project / ".claude").mkdir()
    before = snapshot(project, ynm_home)
    assert doctor(cli_run, project)[0] == 1
    assert snapshot(project, ynm_home) == before


# -- hosted stores, clients, environment -------------------------------------------------------


def test_a_hosted_mount_without_a_sign_in(project, cli_run, ynm_home):
    from ynm.service.remote import save_sign_in

    ynm_home.mkdir(exist_ok=True)
    (ynm_home / "config.json").write_text(json.dumps({"mounts": [
        {"id": "team", "level": "distributed", "provider": "mcp", "url": URL}]}))
    code, result, human = doctor(cli_run, project)
    assert code == 0
    assert named(result, "mount team (mcp)") == {
        "name": "mount team (mcp)", "ok": False, "level": "warn",
        "detail": f"{URL}: not signed in; run `ynm login team`", "fix": "ynm login team"}
    assert line(human, "mount team (mcp)") == (
        f"warn  mount team (mcp): {URL}: not signed in; run `ynm login team`")
    save_sign_in(ynm_home, "team", URL, "a-token")
    assert named(doctor(cli_run, project)[1], "mount team (mcp)") == {
        "name": "mount team (mcp)", "ok": True, "level": "info", "detail": f"{URL}, signed in"}
    auth = ynm_home / "auth" / "team.json"
    auth.chmod(0o644)
    check = named(doctor(cli_run, project)[1], "mount team (mcp)")
    assert check["ok"] is False and check["level"] == "warn"
    assert check["detail"].startswith(f"{URL}, signed in, but sign-in file {auth} can be read by "
                                      "other users (mode 0644)")
    assert check["fix"] == f"chmod 600 {auth}"
    run_fix(check["fix"], project)
    assert named(doctor(cli_run, project)[1], "mount team (mcp)")["ok"] is True


def test_a_detected_client_says_how_to_install_then_is_in_place(project, cli_run):
    (project / ".claude").mkdir()
    code, result, human = doctor(cli_run, project)
    assert code == 0
    assert named(result, "client claude-code") == {
        "name": "client claude-code", "ok": True, "level": "info",
        "detail": "detected (.claude); ynm not registered; run `ynm client install claude-code`",
        "fix": "ynm client install claude-code"}
    assert line(human, "client claude-code") == (
        "ok    client claude-code: detected (.claude); ynm not registered; run `ynm client "
        "install claude-code`")
    assert cli_run("client", "install", "claude-code", "--yes").exit_code == 0
    check = named(doctor(cli_run, project)[1], "client claude-code")
    assert check["ok"] is True and check["level"] == "info"
    assert check["detail"] == f"server, guidance and hooks in place ({project / '.mcp.json'})"
    # hooks removed: a warning that says what is missing and how to put it back
    (project / ".claude" / "settings.local.json").unlink()
    check = named(doctor(cli_run, project)[1], "client claude-code")
    assert check == {"name": "client claude-code", "ok": False, "level": "warn",
                     "detail": "hooks missing; run `ynm client install claude-code`",
                     "fix": "ynm client install claude-code"}


def test_no_client_check_for_a_client_nobody_uses(project, cli_run):
    assert not [c for c in doctor(cli_run, project)[1]["checks"]
                if c["name"].startswith("client ")]


def test_a_ynh_worker_without_ynm_home_warns(tmp_path, cli_run, monkeypatch):
    folder = tmp_path / "work"
    folder.mkdir()
    monkeypatch.setenv("YNH_AGENT_SESSION", "s1")
    assert named(doctor(cli_run, folder)[1], "git repository")  # YNM_HOME set: no warning
    assert "ynh worker environment" not in doctor(cli_run, folder)[2]
    monkeypatch.delenv("YNM_HOME")
    code, result, _ = doctor(cli_run, folder)
    assert code == 0
    check = named(result, "ynh worker environment")
    assert check["ok"] is False and check["level"] == "warn"
    assert "env_passthrough" in check["detail"] and "`ynh update ynm`" in check["detail"]
    assert check["fix"] == "ynm client install ynh"


def test_a_local_launcher_off_path_warns(project, cli_run, ynm_home, monkeypatch):
    (ynm_home / "bin").mkdir(parents=True)
    (ynm_home / "bin" / "ynm").write_text("#!/bin/sh\n")
    check = named(doctor(cli_run, project)[1], "local install on PATH")
    assert check == {"name": "local install on PATH", "ok": False, "level": "warn",
                     "detail": f"{ynm_home / 'bin'} holds a ynm launcher but is not on PATH",
                     "fix": f'export PATH="{ynm_home / "bin"}:$PATH"'}
    monkeypatch.setenv("PATH", os.pathsep.join([str(ynm_home / "bin"), os.environ["PATH"]]))
    assert named(doctor(cli_run, project)[1], "local install on PATH") == {
        "name": "local install on PATH", "ok": True, "level": "info",
        "detail": str(ynm_home / "bin")}


def test_a_configuration_that_cannot_be_read_fails_config_files(project, cli_run, ynm_home):
    (project / ".ynm" / "config.json").write_text("{not json")
    code, result, human = doctor(cli_run, project)
    assert code == 1
    check = named(result, "config files")
    assert check["ok"] is False and check["level"] == "error"
    assert check["detail"].startswith(
        f"invalid input: {project / '.ynm' / 'config.json'}: not valid JSON")
    assert "Traceback" not in human


def test_a_configured_store_that_is_not_there(project, cli_run, ynm_home, tmp_path):
    missing = tmp_path / "org.git"
    mount_org(ynm_home, missing)
    code, result, _ = doctor(cli_run, project)
    assert code == 1
    check = named(result, "mount org (git-notes)")
    assert check["ok"] is False and check["level"] == "error"
    assert check["detail"] == f"not a git repository: {missing}"
    assert check["fix"] == (f'correct "path" of mount org in the configuration if it is '
                            f"mistyped; to make a new store there: ynm init --bare {missing}")
    assert not missing.exists()


def test_reads_and_writes_say_a_configured_mount_did_not_open(project, cli_run, ynm_home,
                                                              tmp_path):
    """A mount whose path holds no repository (a typo, a store not cloned here) is left out of
    every read with a warning, and a write that names it says why, not that it is unknown."""
    missing = tmp_path / "orgg.git"
    mount_org(ynm_home, missing)
    left_out = (f"warning: mount org is left out: not a git repository: {missing}; correct "
                f'its "path" in {ynm_home / "config.json"} if it is mistyped (`ynm doctor` '
                "checks every mount)")
    read = cli_run("recall", "org fact", "--cwd", project)
    assert read.exit_code == 0, read.stderr
    assert left_out in read.stderr.splitlines()
    write = cli_run("remember", "--type", "semantic", "--level", "distributed", "--mount",
                    "org", "--content", "an org fact", "--cwd", project)
    assert write.exit_code == 1
    assert write.stderr.splitlines() == [
        (f'Error: mount "org" is configured but cannot be opened: not a git repository: '
         f"{missing}"),
        (f'hint: correct its "path" in {ynm_home / "config.json"} if it is mistyped; '
         "`ynm doctor` checks every mount")]
    assert not missing.exists()
    other = cli_run("remember", "--type", "semantic", "--level", "distributed", "--mount",
                    "nope", "--content", "an org fact", "--cwd", project)
    assert other.exit_code == 2
    assert ('Error: no mount "nope" (have: personal, project, org); to add it: add '
            '{"id":"nope",') in other.stderr


# -- vector model ------------------------------------------------------------------------------


def test_the_vector_model_off_by_choice_is_fine(project, cli_run):
    assert named(doctor(cli_run, project)[1], "vector model") == {
        "name": "vector model", "ok": True, "level": "info",
        "detail": "off (embedder is none): full-text recall only"}


def test_a_remote_model_is_not_called(project, cli_run, monkeypatch):
    monkeypatch.setenv("YNM_EMBEDDER", "openai-compatible:nomic-embed-text@http://127.0.0.1:9")
    check = named(doctor(cli_run, project)[1], "vector model")
    assert check == {"name": "vector model", "ok": True, "level": "info",
                     "detail": "openai-compatible:nomic-embed-text at http://127.0.0.1:9: not "
                               "called (doctor works offline)"}


def _vector_packages_missing() -> list[str]:
    import importlib.util

    from ynm.doctor.cache import VECTOR_PACKAGES

    return [p for p in VECTOR_PACKAGES if importlib.util.find_spec(p) is None]


def test_a_local_model_not_exported_yet_warns(project, cli_run, monkeypatch, tmp_path):
    if _vector_packages_missing():
        pytest.skip("the vector extra is not installed")
    monkeypatch.setenv("YNM_EMBEDDER", "auto")
    monkeypatch.setenv("YNM_MODELS", str(tmp_path / "models"))
    check = named(doctor(cli_run, project)[1], "vector model")
    onnx = tmp_path / "models" / "sentence-transformers-all-MiniLM-L6-v2" / "model.onnx"
    assert check == {"name": "vector model", "ok": False, "level": "warn",
                     "detail": f"sentence-transformers:all-MiniLM-L6-v2 is not exported yet "
                               f"({onnx}); the first recall exports it once (needs torch)",
                     "fix": "ynm reindex"}
    assert not (tmp_path / "models").exists()


def test_the_local_model_reports_its_start_up_time(project, cli_run, monkeypatch):
    if _vector_packages_missing():
        pytest.skip("the vector extra is not installed")
    onnx = MODELS / "sentence-transformers-all-MiniLM-L6-v2" / "model.onnx"
    if not onnx.is_file():
        pytest.skip(f"the local model is not exported here ({onnx})")
    monkeypatch.setenv("YNM_EMBEDDER", "auto")
    monkeypatch.setenv("YNM_MODELS", str(MODELS))
    check = named(doctor(cli_run, project)[1], "vector model")
    prefix = "sentence-transformers:all-MiniLM-L6-v2 ready, starts in "
    assert check["ok"] is True and check["level"] == "info"
    assert check["detail"].startswith(prefix) and check["detail"].endswith(" ms (384 dimensions)")
    assert int(check["detail"][len(prefix):].split(" ")[0]) > 0


@pytest.mark.parametrize("pages", ["one full-text leaf", "all but the first"])
def test_a_cache_damaged_inside_fails_and_names_the_rebuild(project, cli_run, pages):
    # Overwritten pages behind a valid header: SQLite opens the file, and reads that do not
    # touch those pages still answer, so only a check of every page finds it.
    import sqlean

    for n in range(120):
        remember(cli_run, f"ledger deploys {n} " + "filler " * 60)
    cache = project / ".ynm" / "index" / "ynm-cache" / "project.sqlite"
    assert cli_run("status").exit_code == 0  # the WAL checkpointed into the file on close
    conn = sqlean.connect(cache)
    size = conn.execute("PRAGMA page_size").fetchone()[0]
    leaves = [n for (n,) in conn.execute(
        "SELECT pageno FROM dbstat WHERE name = 'fts_data' AND pagetype = 'leaf'")]
    conn.close()
    data = bytearray(cache.read_bytes())
    assert len(data) > 8 * size and leaves
    if pages == "one full-text leaf":  # its b-tree page header (page numbers count from 1)
        start = (leaves[len(leaves) // 2] - 1) * size
        data[start: start + 12] = b"\xa5" * 12
    else:
        for page in range(1, len(data) // size):
            data[page * size + 100: page * size + 900] = b"\xa5" * 800
    cache.write_bytes(bytes(data))
    code, result, human = doctor(cli_run, project)
    assert code == 1
    check = named(result, "cache project")
    assert check["ok"] is False and check["level"] == "error"
    assert line(human, "cache project").startswith("FAIL  cache project: ")
    assert check["detail"].startswith(f"{cache}: cache file is damaged: ")
    assert "\n" not in check["detail"] and "***" not in check["detail"]
    assert check["detail"].endswith("; the next command that reads the damaged part rebuilds "
                                    "it, or run `ynm reindex --mount project` (memories live "
                                    "in git notes: nothing is lost)")
    assert check["fix"] == "ynm reindex --mount project"
    run_fix(f"{sys.executable} -m ynm reindex --mount project", project)
    assert named(doctor(cli_run, project)[1], "cache project")["detail"] == (
        f"schema {SCHEMA_VERSION}, fresh (1 shard, 120 memories)")
