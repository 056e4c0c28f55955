"""``ynm init`` (reference/cli.md §4.10, §2, §8 item 13)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

INIT_KEYS = ["repo", "anchor", "anchorSource", "configFile", "configWritten", "configExists",
             "configWaiting", "refspecs",
             "fetched", "hooksInstalled", "notes", "clients", "commit", "local", "warnings", "also"]
EXCLUDE_NOTE = "added .ynm/wiki/ and .ynm/index/ to .git/info/exclude"
NO_REMOTE_NOTE = ('no remote "origin" yet; distributed memory stays in this clone until you '
                  "add one, then `ynm sync` shares it")
REFSPEC = "+refs/notes/ynm/distributed/*:refs/notes/ynm-remote/origin/distributed/*"


@pytest.fixture(autouse=True)
def _scratch_home(monkeypatch, tmp_path):
    """A home directory of the test's own: agent clients installed on this machine (its
    ``~/.claude`` ...) would otherwise show in init's ``also`` line."""
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)


@pytest.fixture
def in_repo(git_repo, monkeypatch):
    monkeypatch.chdir(git_repo)
    return git_repo


def snapshot(git, repo: Path) -> tuple[str, str, str]:
    """Every ref, the work tree status (``.ynm/`` aside) and HEAD."""
    refs = git(repo, "for-each-ref", "--format=%(refname) %(objectname)")
    status = "\n".join(line for line in git(repo, "status", "--porcelain").splitlines()
                       if line != "?? .ynm/")
    return refs, status, git(repo, "rev-parse", "HEAD")


def test_json_shape(in_repo, run_json, git):
    out = run_json("init")
    assert list(out) == INIT_KEYS
    assert out["repo"] == str(in_repo)
    assert out["anchor"] == git(in_repo, "rev-list", "--max-parents=0", "HEAD")
    assert out["anchorSource"] == "root-commit"
    assert out["configFile"] == str(in_repo / ".ynm" / "config.json")
    assert out["configWritten"] is True
    assert out["refspecs"] == [] and out["clients"] == [] and out["local"] == []
    assert out["fetched"] is None and out["warnings"] == []  # no remote: nothing to fetch
    assert out["notes"] == [EXCLUDE_NOTE, NO_REMOTE_NOTE]
    assert out["commit"] == [".ynm/config.json"]


def test_writes_config_and_excludes(in_repo, run_json, git):
    out = run_json("init")
    config = in_repo / ".ynm" / "config.json"
    assert config.read_text() == '{\n  "anchor": "' + out["anchor"] + '"\n}\n'
    exclude = (in_repo / ".git" / "info" / "exclude").read_text().splitlines()
    assert ".ynm/wiki/" in exclude and ".ynm/index/" in exclude
    assert git(in_repo, "check-ignore", ".ynm/index/ynm-cache/project.sqlite") == ".ynm/index/ynm-cache/project.sqlite"


def test_changes_no_ref_and_no_tracked_file(in_repo, cli_run, git):
    git(in_repo, "tag", "v1")
    git(in_repo, "branch", "feature")
    before = snapshot(git, in_repo)
    assert cli_run("init").exit_code == 0
    assert snapshot(git, in_repo) == before
    untracked = git(in_repo, "status", "--porcelain", "--untracked-files=all").splitlines()
    assert untracked == ["?? .ynm/config.json"]


def test_anchor_is_the_root_commit_with_several_roots(in_repo, run_json, git, monkeypatch):
    """A later parentless commit on another branch does not change the anchor (oldest root)."""
    root = git(in_repo, "rev-list", "--max-parents=0", "HEAD")
    tree = git(in_repo, "mktree", input=b"")
    monkeypatch.setenv("GIT_COMMITTER_DATE", "2099-01-01T00:00:00Z")
    monkeypatch.setenv("GIT_AUTHOR_DATE", "2099-01-01T00:00:00Z")
    orphan = git(in_repo, "commit-tree", tree, "-m", "orphan")
    git(in_repo, "update-ref", "refs/heads/orphan", orphan)
    assert run_json("init")["anchor"] == root


def test_human_output(in_repo, cli_run, git):
    anchor = git(in_repo, "rev-list", "--max-parents=0", "HEAD")
    result = cli_run("init")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[:8] == [
        f"initialised {in_repo}",
        f"  anchor    {anchor} (root-commit)",
        f"  config    {in_repo / '.ynm' / 'config.json'}",
        f"  hooks     {in_repo / '.git' / 'hooks' / 'pre-push'}",
        f"  note      {EXCLUDE_NOTE}",
        f"  note      {NO_REMOTE_NOTE}",
        "  commit    .ynm/config.json",
        "            the team shares these; commit and push them so every clone gets the same setup",
    ]
    assert lines[8] == ("  memory    lives in git notes, not in files; `ynm sync` and the "
                        "pre-push hook share it")
    assert lines[9].startswith('next: `ynm remember --type semantic --content "..."` and `ynm ')
    assert len(lines) == 10


def test_twice_reports_config_unchanged(in_repo, cli_run, run_json):
    first = run_json("init")
    second = run_json("init")
    assert second["anchor"] == first["anchor"]
    assert second["configWritten"] is False
    assert EXCLUDE_NOTE not in second["notes"]
    human = cli_run("init").stdout.splitlines()
    assert human[2] == f"  config    {in_repo / '.ynm' / 'config.json'} (unchanged)"
    exclude = (in_repo / ".git" / "info" / "exclude").read_text()
    assert exclude.count(".ynm/index/") == 1


def test_committed_config_is_not_in_commit_advice(in_repo, run_json, git):
    run_json("init")
    git(in_repo, "add", ".ynm/config.json")
    git(in_repo, "commit", "-q", "-m", "ynm")
    assert run_json("init")["commit"] == []


def test_outside_a_repository(tmp_path, cli_run, monkeypatch):
    where = tmp_path / "plain"
    where.mkdir()
    monkeypatch.chdir(where)
    result = cli_run("init")
    assert result.exit_code == 1
    assert result.stderr.strip() == f"Error: {where} is not inside a git repository"
    assert not (where / ".ynm").exists()


def test_outside_a_repository_with_cwd(tmp_path, cli_run):
    where = tmp_path / "plain"
    where.mkdir()
    result = cli_run("init", "--cwd", where)
    assert result.exit_code == 1
    assert result.stderr.strip() == f"Error: {where} is not inside a git repository"


def test_empty_repository_gets_a_root_commit(tmp_path, run_json, git, monkeypatch):
    repo = tmp_path / "empty"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "main")
    monkeypatch.chdir(repo)
    out = run_json("init")
    assert out["anchorSource"] == "created"
    assert out["anchor"] == git(repo, "rev-list", "--max-parents=0", "HEAD")
    assert git(repo, "rev-list", "--count", "HEAD") == "1"
    assert git(repo, "ls-tree", "HEAD") == ""
    assert any(n.startswith("the repository had no commits; created the empty root commit "
                            "`ynm: root` on branch main") for n in out["notes"])


def test_anchor_flag(in_repo, run_json, git):
    head = git(in_repo, "rev-parse", "HEAD")
    out = run_json("init", "--anchor", head)
    assert out["anchor"] == head
    assert json.loads((in_repo / ".ynm" / "config.json").read_text()) == {"anchor": head}


def test_bad_anchor_flag(in_repo, cli_run):
    result = cli_run("init", "--anchor", "not-a-sha")
    assert result.exit_code in (1, 2)
    assert result.stderr.startswith("Error: ")
    assert "not-a-sha" in result.stderr


def test_remote_gets_fetch_refspec(in_repo, run_json, cli_run, git, tmp_path):
    git(in_repo, "remote", "add", "origin", str(tmp_path / "nowhere.git"))
    out = run_json("init")
    assert out["refspecs"] == [REFSPEC]
    assert NO_REMOTE_NOTE not in out["notes"]
    fetch = git(in_repo, "config", "--get-all", "remote.origin.fetch").splitlines()
    assert REFSPEC in fetch
    # not added twice
    assert run_json("init")["refspecs"] == []
    assert git(in_repo, "config", "--get-all", "remote.origin.fetch").splitlines() == fetch


def test_no_push_refspec(in_repo, run_json, git, tmp_path):
    git(in_repo, "remote", "add", "origin", str(tmp_path / "nowhere.git"))
    run_json("init")
    config = (in_repo / ".git" / "config").read_text()
    assert "push =" not in config


def test_refspecs_human_line(in_repo, cli_run, git, tmp_path):
    git(in_repo, "remote", "add", "origin", str(tmp_path / "nowhere.git"))
    lines = cli_run("init").stdout.splitlines()
    assert f"  refspecs  {REFSPEC}" in lines


def test_remote_flag(in_repo, run_json, git, tmp_path):
    git(in_repo, "remote", "add", "upstream", str(tmp_path / "nowhere.git"))
    out = run_json("init", "--remote", "upstream")
    assert out["refspecs"] == [
        "+refs/notes/ynm/distributed/*:refs/notes/ynm-remote/upstream/distributed/*"]


def test_missing_named_remote_note(in_repo, run_json):
    out = run_json("init", "--remote", "upstream")
    assert ('no remote "upstream" yet; distributed memory stays in this clone until you add '
            "one, then `ynm sync` shares it") in out["notes"]


@pytest.mark.parametrize("flag", ["--no-hooks", "--no-clients", "--clients"])
def test_flags_accepted(in_repo, cli_run, flag):
    assert cli_run("init", flag).exit_code == 0


def test_no_hooks_installs_nothing(in_repo, run_json):
    out = run_json("init", "--no-hooks")
    assert out["hooksInstalled"] == []
    assert not (in_repo / ".git" / "hooks" / "pre-push").exists()


def test_cwd(git_repo, tmp_path, run_json, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = run_json("init", "--cwd", git_repo)
    assert out["repo"] == str(git_repo)
    assert (git_repo / ".ynm" / "config.json").exists()


def test_cwd_subdirectory(git_repo, run_json):
    sub = git_repo / "sub"
    sub.mkdir()
    assert run_json("init", "--cwd", sub)["repo"] == str(git_repo)


# ---------------------------------------------------------------------------------- --bare


def test_bare_creates(tmp_path, run_json, cli_run, git):
    path = tmp_path / "org.git"
    out = run_json("init", "--bare", path)
    assert list(out) == ["repo", "anchor", "created"]
    assert out["repo"] == str(path) and out["created"] is True
    assert git(path, "rev-parse", "--is-bare-repository") == "true"
    assert out["anchor"] == git(path, "rev-list", "--max-parents=0", "main")
    result = cli_run("init", "--bare", path)
    assert result.stdout == f"adopted bare memory repo {path} (anchor {out['anchor'][:12]})\n"
    assert run_json("init", "--bare", path)["created"] is False


def test_bare_human_created(tmp_path, cli_run, git):
    path = tmp_path / "org.git"
    result = cli_run("init", "--bare", path)
    assert result.exit_code == 0
    anchor = git(path, "rev-list", "--max-parents=0", "main")
    assert result.stdout == f"created bare memory repo {path} (anchor {anchor[:12]})\n"


def test_bare_relative_path_uses_cwd(tmp_path, run_json, monkeypatch):
    monkeypatch.chdir(tmp_path)
    out = run_json("init", "--bare", "rel.git")
    assert out["repo"] == str(tmp_path / "rel.git")


def test_bare_existing_empty_repo_gets_root_commit(tmp_path, run_json, git):
    """``created`` is false only when a root commit already existed (cli.md §4.10)."""
    path = tmp_path / "empty.git"
    path.mkdir()
    git(path, "init", "-q", "--bare", "-b", "main")
    out = run_json("init", "--bare", path)
    assert out["anchor"] == git(path, "rev-list", "--max-parents=0", "main")
    assert out["created"] is True


def test_bare_adopts_existing_history(tmp_path, run_json, git, git_repo):
    path = tmp_path / "clone.git"
    git(tmp_path, "clone", "-q", "--bare", str(git_repo), str(path))
    out = run_json("init", "--bare", path)
    assert out["created"] is False
    assert out["anchor"] == git(git_repo, "rev-list", "--max-parents=0", "HEAD")


# ------------------------------------------------------------------------------ --personal


def test_personal_creates_then_ready(tmp_path, run_json, cli_run, ynm_home, git, monkeypatch):
    monkeypatch.chdir(tmp_path)
    store = ynm_home / "store.git"
    out = run_json("init", "--personal")
    assert list(out) == ["repo", "anchor", "created"]
    assert out == {"repo": str(store), "created": True,
                   "anchor": git(store, "rev-list", "--max-parents=0", "main")}
    assert cli_run("init", "--personal").stdout == f"personal store ready at {store}\n"


def test_personal_human_created(tmp_path, cli_run, ynm_home, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = cli_run("init", "--personal")
    assert result.exit_code == 0
    assert result.stdout == f"personal store created at {ynm_home / 'store.git'}\n"


def test_personal_store_config_key(tmp_path, run_json, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("YNM_PERSONAL_STORE", str(tmp_path / "mine.git"))
    assert run_json("init", "--personal")["repo"] == str(tmp_path / "mine.git")


def test_personal_does_not_touch_the_repository(in_repo, cli_run):
    assert cli_run("init", "--personal").exit_code == 0
    assert not (in_repo / ".ynm").exists()


@pytest.mark.parametrize(("given", "message"), [
    ("deadbeef", "anchor: no commit starts with deadbeef in this repository; give the full "
                 "40-hex id (a shallow clone may lack the commit)"),
    ("not-a-sha", "anchor: 'not-a-sha' is not a commit id (40 or 64 hex digits, or an "
                  "unambiguous abbreviation of at least 4)"),
    ("HEAD", "anchor: 'HEAD' is not a commit id (40 or 64 hex digits, or an unambiguous "
             "abbreviation of at least 4)"),
    ("abc", "anchor: abc is too short to name a commit; give at least 4 hex digits "
            "(`git rev-parse abc` prints the full id)"),
])
def test_a_malformed_anchor_is_refused_input(in_repo, cli_run, given, message):
    result = cli_run("init", "--anchor", given)
    assert result.exit_code == 2
    assert result.stderr.strip() == f"Error: invalid input: {message}"
    assert not (in_repo / ".ynm" / "config.json").exists()


@pytest.mark.parametrize("digits", [4, 7, 12, 39])
def test_an_abbreviated_anchor_is_resolved_to_the_full_commit_id(in_repo, run_json, git,
                                                                  digits):
    git(in_repo, "commit", "-q", "--allow-empty", "-m", "second")
    head = git(in_repo, "rev-parse", "HEAD")
    out = run_json("init", "--anchor", head[:digits].upper() if digits == 7 else head[:digits])
    assert (out["anchor"], out["anchorSource"]) == (head, "config")
    assert json.loads((in_repo / ".ynm" / "config.json").read_text()) == {"anchor": head}


def test_an_ambiguous_or_non_commit_anchor_is_refused(in_repo, cli_run, git):
    import pygit2

    repo = pygit2.Repository(str(in_repo))
    seen: dict[str, str] = {}
    i = 0
    while True:  # blobs until two share their first four hex digits (a few hundred at most)
        oid = str(repo.create_blob(f"blob {i}".encode()))
        i += 1
        if oid[:4] in seen:
            prefix = oid[:4]
            break
        seen[oid[:4]] = oid
    result = cli_run("init", "--anchor", prefix)
    assert result.exit_code == 2
    assert result.stderr.strip() == (f"Error: invalid input: anchor: {prefix} is ambiguous: "
                                     "several objects in this repository start with it; give "
                                     "more digits")
    tree = git(in_repo, "rev-parse", "HEAD^{tree}")
    result = cli_run("init", "--anchor", tree[:10])
    assert result.exit_code == 2
    assert result.stderr.strip() == (f"Error: invalid input: anchor: {tree[:10]} is a tree "
                                     f"({tree}), not a commit")
    assert not (in_repo / ".ynm" / "config.json").exists()


@pytest.mark.parametrize("name", ["upstream", "origin"])
def test_init_remote_is_kept_for_sync(in_repo, run_json, git, tmp_path, name):
    """``init --remote <name>`` is written to .ynm/config.json, so sync and status use that
    remote afterwards (absent means origin)."""
    bare = tmp_path / f"{name}.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(in_repo, "remote", "add", name, str(bare))
    run_json("init", "--remote", name, "--no-clients")
    config = json.loads((in_repo / ".ynm" / "config.json").read_text())
    assert config.get("remote", "origin") == name
    project = next(m for m in run_json("status")["mounts"] if m["id"] == "project")
    assert project["remote"] == name and "remoteMissing" not in project
    assert run_json("sync")["project"]["remote"] == name


def test_init_in_a_clone_fetches_first(in_repo, cli_run, git, tmp_path):
    bare = tmp_path / "origin.git"
    git(tmp_path, "init", "-q", "--bare", str(bare))
    git(in_repo, "remote", "add", "origin", str(bare))
    result = cli_run("init", "--no-clients")
    assert result.exit_code == 0 and result.stderr == ""
    out = result.stdout.splitlines()
    assert "  fetched   no new memory on origin" in out
    assert out[-1] == 'next: `ynm remember --type semantic --content "..."` and `ynm status`'


@pytest.mark.parametrize("url", ["does-not-exist.git", "https://127.0.0.1:9/nothing.git"])
def test_init_succeeds_with_one_warning_when_the_fetch_fails(in_repo, cli_run, run_json, git,
                                                            tmp_path, url):
    git(in_repo, "remote", "add", "origin", str(tmp_path / url) if "//" not in url else url)
    result = cli_run("init", "--no-clients")
    assert result.exit_code == 0
    [warning] = result.stderr.splitlines()
    assert warning.startswith("warning: could not fetch memory from origin (")
    assert warning.endswith("); init went on without it: run `ynm sync` once the remote is "
                            "reachable")
    assert result.stdout.splitlines()[-1].startswith("next: `ynm sync` to bring in the memory "
                                                     "teammates already pushed, then ")
    out = run_json("init", "--no-clients")
    assert out["fetched"] is None and len(out["warnings"]) == 1
    assert out["anchorSource"] == "config" and (in_repo / ".ynm" / "config.json").exists()


def test_a_clone_that_never_ran_init_keeps_its_cache_out_of_git_status(project, cli_run, git,
                                                                       tmp_path):
    """The project's .ynm/config.json is committed; a clone reads memories without running
    ynm init, and its cache folder ignores itself as init's does."""
    git(project, "add", ".ynm")
    git(project, "-c", "commit.gpgsign=false", "commit", "-q", "-m", "ynm")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(project), str(clone))
    assert not (clone / ".ynm" / "index").exists()
    assert cli_run("list", "--cwd", clone).exit_code == 0
    assert (clone / ".ynm" / "index" / "ynm-cache" / "project.sqlite").exists()
    assert (clone / ".ynm" / "index" / ".gitignore").read_text() == "*\n"
    assert git(clone, "status", "--porcelain") == ""
