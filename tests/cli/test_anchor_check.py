"""An anchor that is no commit of the repository: writes are refused (exit 2, nothing
written), reads warn once, status shows it; a shallow clone lacking it stays allowed
(reference/storage.md §3.3, reference/cli.md §4.4 "not present locally (shallow clone)")."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.conftest import jsonl, make_record

ABSENT = "1" * 40


def _configure(project: Path, anchor: str) -> Path:
    path = project / ".ynm" / "config.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps({"anchor": anchor}) + "\n")
    return path


def _notes(git, repo: Path) -> str:
    return git(repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/notes/")


def test_a_write_on_an_absent_anchor_is_refused_and_writes_nothing(project, cli_run, git):
    config = _configure(project, ABSENT)
    before = _notes(git, project)
    result = cli_run("remember", "--type", "semantic", "--level", "distributed",
                     "--content", "Deploys go out on Tuesdays.")
    assert result.exit_code == 2
    assert result.stderr == (
        f"Error: invalid input: anchor {ABSENT} (from {config}) is not a commit in {project}: "
        "no such object, and this clone is not shallow; run `ynm init --anchor <commit>` with "
        "the project's anchor (`git rev-list --max-parents=0 HEAD` prints the root commit), "
        "or fetch the history that holds it\n")
    assert _notes(git, project) == before


def test_an_object_of_another_kind_from_the_environment_is_named(project, cli_run, git,
                                                                 monkeypatch):
    tree = git(project, "rev-parse", "HEAD^{tree}")
    monkeypatch.setenv("YNM_ANCHOR", tree)
    result = cli_run("remember", "--type", "semantic", "--level", "distributed",
                     "--content", "x")
    assert result.exit_code == 2
    assert result.stderr.startswith(
        f"Error: invalid input: anchor {tree} (from YNM_ANCHOR) is not a commit in {project}: "
        "it is a tree, not a commit; unset YNM_ANCHOR, or set it to a commit of this "
        "repository")
    assert "warning" not in result.stderr  # the error says it; no second copy


def test_a_malformed_anchor_is_refused_by_every_command(project, cli_run, monkeypatch):
    monkeypatch.setenv("YNM_ANCHOR", "abc123")
    for args in (("recall", "x"), ("remember", "--type", "semantic", "--content", "x")):
        result = cli_run(*args)
        assert result.exit_code == 2
        assert result.stderr.startswith("Error: invalid input: YNM_ANCHOR: must be a full "
                                        "commit id (40 or 64 lowercase hex digits")


def test_reads_warn_once_naming_the_anchor_and_status_shows_it(project, cli_run):
    config = _configure(project, ABSENT)
    result = cli_run("recall", "deploys")
    assert result.exit_code == 0
    assert result.stdout == "no matches\n"
    warning = (f"warning: anchor {ABSENT} (from {config}) is not a commit in {project}: no "
               "such object, and this clone is not shallow: mount project refuses writes; run "
               "`ynm init --anchor <commit>`")
    assert result.stderr.count(warning) == 1
    status = cli_run("status", "--json")
    assert status.exit_code == 0
    [mount] = [m for m in json.loads(status.stdout)["mounts"] if m["id"] == "project"]
    assert mount["anchorProblem"].startswith(f"anchor {ABSENT} (from {config}) is not a commit")
    assert "anchor unusable" in cli_run("status").stdout


def test_a_personal_write_still_works_beside_it(project, cli_run):
    _configure(project, ABSENT)
    result = cli_run("remember", "--type", "semantic", "--content", "Mine alone.", "--json")
    assert result.exit_code == 0
    assert json.loads(result.stdout)["mount"] == "personal"


@pytest.mark.parametrize("args", [
    ("sync",),
    ("dream",),
    ("import", "--json"),
    ("promote", "PERSONAL"),
    ("session", "end", "s1"),
])
def test_every_write_to_the_mount_is_refused(project, cli_run, git, args):
    mine = cli_run("remember", "--type", "semantic", "--content", "Promote me.", "--json")
    memory_id = json.loads(mine.stdout)["memoryId"]
    _configure(project, ABSENT)
    before = _notes(git, project)
    stdin = jsonl(make_record(level="distributed", namespace="common"))
    result = cli_run(*[memory_id if a == "PERSONAL" else a for a in args], input=stdin)
    assert result.exit_code == 2, result.output
    assert f"invalid input: anchor {ABSENT} (from " in result.stderr
    assert _notes(git, project) == before


def test_init_refuses_an_anchor_that_is_no_commit(project, cli_run):
    config = _configure(project, ABSENT)
    result = cli_run("init")
    assert result.exit_code == 2
    assert result.stderr.startswith(f"Error: invalid input: anchor {ABSENT} (from {config}) is "
                                    "not a commit in")
    result = cli_run("init", "--anchor", "2" * 40)
    assert result.exit_code == 2
    assert "(from --anchor)" in result.stderr and "give a commit of this repository" in result.stderr
    assert json.loads(config.read_text()) == {"anchor": ABSENT}  # nothing written


def test_a_shallow_clone_lacking_the_anchor_reads_and_writes(tmp_path, git, cli_run,
                                                             monkeypatch):
    source = tmp_path / "source"
    source.mkdir()
    git(source, "init", "-q", "-b", "main")
    for i in range(3):
        (source / f"f{i}").write_text(f"{i}\n")
        git(source, "add", f"f{i}")
        git(source, "-c", "commit.gpgsign=false", "commit", "-q", "-m", f"c{i}")
    root = git(source, "rev-list", "--max-parents=0", "HEAD")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--depth", "1", f"file://{source}", str(clone))
    monkeypatch.chdir(clone)
    _configure(clone, root)
    result = cli_run("remember", "--type", "semantic", "--level", "distributed",
                     "--content", "Shallow clones keep their notes on the anchor.")
    assert result.exit_code == 0, result.stderr
    assert "warning" not in result.stderr
    recall = cli_run("recall", "shallow", "--json")
    assert [h["mount"] for h in json.loads(recall.stdout)] == ["project"]
    assert recall.stderr == ""


def test_an_extra_mount_is_checked_in_its_own_repository(project, tmp_path, git, cli_run,
                                                         monkeypatch):
    org = tmp_path / "org.git"
    git(tmp_path, "init", "-q", "--bare", "-b", "main", str(org))  # notes only: no history
    other = tmp_path / "other"
    git(tmp_path, "init", "-q", "-b", "main", str(other))
    git(other, "-c", "commit.gpgsign=false", "commit", "-q", "--allow-empty", "-m", "root")
    mounts = [{"id": "org", "level": "distributed", "path": str(org), "anchor": ABSENT},
              {"id": "other", "level": "distributed", "path": str(other), "anchor": ABSENT}]
    monkeypatch.setenv("YNM_MOUNTS", json.dumps(mounts))
    ok = cli_run("remember", "--type", "semantic", "--level", "distributed", "--mount", "org",
                 "--content", "Org stores start empty.")
    assert ok.exit_code == 0, ok.stderr
    refused = cli_run("remember", "--type", "semantic", "--level", "distributed",
                      "--mount", "other", "--content", "x")
    assert refused.exit_code == 2
    assert refused.stderr.startswith(
        f"Error: invalid input: anchor {ABSENT} (from mount other in YNM_MOUNTS) is not a "
        f"commit in {other}: no such object, and this clone is not shallow; set the anchor "
        "of mount other in YNM_MOUNTS to the commit")
    assert _notes(git, other) == ""


def test_an_anchor_from_the_home_configuration_names_that_file(project, cli_run, tmp_path,
                                                              monkeypatch):
    (project / ".ynm" / "config.json").write_text("{}\n")
    home = tmp_path / "user" / ".ynm"  # ~/.ynm/config.json: not the project's .ynm/config.json
    monkeypatch.setenv("YNM_HOME", str(home))
    home_config = home / "config.json"
    home_config.parent.mkdir(parents=True, exist_ok=True)
    home_config.write_text(json.dumps({"anchor": ABSENT}) + "\n")
    result = cli_run("remember", "--type", "semantic", "--level", "distributed",
                     "--content", "x")
    assert result.exit_code == 2
    assert result.stderr.startswith(
        f"Error: invalid input: anchor {ABSENT} (from {home_config}) is not a commit in "
        f"{project}: no such object, and this clone is not shallow; correct or remove "
        f"\"anchor\" in {home_config}")


REMEMBER = ("remember", "--type", "semantic", "--level", "distributed", "--content",
            "Deploys go out on Tuesdays.")


@pytest.mark.parametrize(("bad", "why", "replaced"), [
    ("SHORT", ("must be a full commit id (40 or 64 lowercase hex digits; `git rev-parse "
               "<abbreviated id>` prints it)"), "(not a full commit id)"),
    (42, "must be text (a string)", "(not a full commit id)"),
    ("TREE", None, "(it is a tree, not a commit)"),
    (ABSENT, None, "(no such object, and this clone is not shallow)")])
def test_init_anchor_repairs_an_unusable_configured_anchor(project, cli_run, git, bad, why,
                                                           replaced):
    root = git(project, "rev-list", "--max-parents=0", "HEAD")
    bad = {"SHORT": root[:7], "TREE": git(project, "rev-parse", "HEAD^{tree}")}.get(bad, bad)
    config = project / ".ynm" / "config.json"
    config.write_text(json.dumps({"anchor": bad, "remote": "origin"}) + "\n")
    failed = cli_run(*REMEMBER)
    assert failed.exit_code == 2
    if why is not None:  # the configuration cannot even be loaded: every command says so
        assert failed.stderr == (
            f"Error: invalid input: {config}: anchor: {why}; `ynm init --anchor <commit>` "
            "replaces it (an abbreviated id is resolved; `git rev-list --max-parents=0 HEAD` "
            "prints the root commit)\n")
    else:
        assert "run `ynm init --anchor <commit>`" in failed.stderr
    # the fix the message names, with an abbreviated id as it allows
    result = cli_run("init", "--anchor", root[:10], "--json")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    shown = json.dumps(bad) if why else bad  # a value that is no id is shown as JSON
    assert (f"replaced the unusable anchor {shown} in .ynm/config.json {replaced} with {root}"
            in out["notes"])
    assert json.loads(config.read_text()) == {"anchor": root, "remote": "origin"}
    assert cli_run(*REMEMBER).exit_code == 0  # the original command now succeeds


def test_a_malformed_anchor_elsewhere_names_a_fix_that_works(project, cli_run, git, tmp_path,
                                                             monkeypatch):
    root = git(project, "rev-list", "--max-parents=0", "HEAD")
    local = project / ".ynm" / "config.local.json"
    local.write_text('{"anchor": "abc1234"}\n')
    failed = cli_run(*REMEMBER)
    assert failed.exit_code == 2
    assert failed.stderr.endswith(f'; correct or remove "anchor" in {local}\n')
    local.write_text("{}\n")  # the fix
    assert cli_run(*REMEMBER).exit_code == 0
    monkeypatch.setenv("YNM_ANCHOR", root[:8])
    failed = cli_run(*REMEMBER)
    assert failed.exit_code == 2
    assert failed.stderr.endswith("; unset YNM_ANCHOR, or set it to a full commit id\n")
    monkeypatch.setenv("YNM_ANCHOR", root)
    assert cli_run(*REMEMBER).exit_code == 0


def test_init_names_a_local_override_it_cannot_replace(project, cli_run, git):
    local = project / ".ynm" / "config.local.json"
    local.write_text(json.dumps({"anchor": ABSENT}) + "\n")
    result = cli_run("init")
    assert result.exit_code == 2
    assert result.stderr.rstrip("\n").endswith(f'correct or remove "anchor" in {local} '
                                               "(`git rev-list --max-parents=0 HEAD` prints the "
                                               "root commit)")
    local.write_text("{}\n")
    assert cli_run("init").exit_code == 0


def test_memories_left_on_an_anchor_a_history_rewrite_dropped_still_read(project, cli_run, git):
    """After the anchor commit is gone from history (an orphan branch, the old one deleted,
    pruned), the warning says the mount refuses writes, its memories still read (to be
    exported and imported under a new anchor), and an edit of one is refused, not 'unknown'."""
    made = cli_run("remember", "--type", "semantic", "--level", "distributed",
                   "--content", "Ledger deploys go out on Tuesdays.", "--json")
    memory_id = json.loads(made.stdout)["memoryId"]
    anchor = json.loads((project / ".ynm" / "config.json").read_text())["anchor"]
    git(project, "checkout", "-q", "--orphan", "fresh")
    git(project, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "fresh root")
    git(project, "branch", "-q", "-D", "main")
    git(project, "reflog", "expire", "--expire=now", "--all")
    git(project, "gc", "-q", "--prune=now")
    read = cli_run("recall", "ledger deploys")
    assert read.exit_code == 0 and memory_id in read.stdout
    assert (f"is not a commit in {project}: no such object, and this clone is not shallow: "
            "mount project refuses writes; run `ynm init --anchor <commit>`") in read.stderr
    assert f"anchor {anchor} (from " in read.stderr
    before = _notes(git, project)
    edit = cli_run("forget", memory_id)
    assert edit.exit_code == 2
    assert edit.stderr.startswith(f"Error: invalid input: anchor {anchor} (from ")
    assert _notes(git, project) == before


def test_notes_left_on_another_object_after_the_anchor_changed_are_named(project, cli_run,
                                                                        git):
    """`ynm init --anchor` to another commit leaves the notes where they hang: reads then
    show none of them, and say where they are and how to set the anchor back."""
    wrote = cli_run("remember", "--type", "semantic", "--level", "distributed", "--content",
                    "the gateway uses mTLS", "--json")
    assert wrote.exit_code == 0, wrote.stderr
    root = git(project, "rev-list", "--max-parents=0", "HEAD")
    head = git(project, "rev-parse", "HEAD")
    assert root != head
    assert cli_run("init", "--anchor", head).exit_code == 0
    listed = cli_run("list", "--level", "distributed", "--json")
    assert listed.exit_code == 0 and json.loads(listed.stdout) == []
    assert listed.stderr.splitlines() == [
        f"warning: mount project: 1 shard(s) hold notes on {root}, none on its anchor {head}: "
        "reads show none of their memories; if the anchor was changed by mistake, set it "
        f"back (`ynm init --anchor {root}`)"]
    assert cli_run("init", "--anchor", root).exit_code == 0
    back = cli_run("list", "--level", "distributed", "--json")
    assert [m["memoryId"] for m in json.loads(back.stdout)] == [
        json.loads(wrote.stdout)["memoryId"]]
    assert back.stderr == ""
