"""``ynm wiki build|ingest`` against a real repository (reference/cli.md §4.29)."""

from __future__ import annotations

import json
import subprocess

from tests.cli.conftest import mount_org


def js(result):
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return json.loads(result.stdout)


def remember(cli_run, content, *extra):
    return js(cli_run("remember", "--type", "semantic", "--level", "distributed", "--content",
                      content, *extra, "--json"))["memoryId"]


def git(cwd, *args):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True).stdout


def test_build_directory_and_ingest_round_trip(project, cli_run):
    mid = remember(cli_run, "Deploys go out on Tuesdays", "--subject", "C++", "--tags", "deploy")
    gone = remember(cli_run, "Forgotten fact", "--subject", "C")
    js(cli_run("forget", gone, "--reason", "wrong", "--json"))
    out = js(cli_run("wiki", "build", "--mount", "project", "--json"))
    wiki = project / ".ynm" / "wiki"
    assert out == [{"mount": "project", "written": 5, "location": str(wiki)}]
    assert (wiki / ".gitignore").read_text() == "*\n"
    assert not (wiki / f"memories/{gone}.md").exists()
    assert sorted(p.name for p in (wiki / "entities").iterdir()) == ["c.md"]
    assert "# Memory: project\n" in (wiki / "index.md").read_text()
    page = wiki / f"memories/{mid}.md"
    text = page.read_text()
    assert "\n# Deploys go out on Tuesdays\n\nDeploys go out on Tuesdays\n" in text

    same = cli_run("wiki", "ingest", page)
    assert same.exit_code == 0 and same.stdout == f"no change for {mid}\n"

    page.write_text(text.replace("\nDeploys go out on Tuesdays\n", "\nDeploys go out on Wednesdays\n"))
    assert js(cli_run("wiki", "ingest", page, "--json")) == {"memoryId": mid, "changed": True}
    shown = js(cli_run("show", mid, "--json"))
    assert shown["current"]["content"] == "Deploys go out on Wednesdays"
    assert shown["current"]["summary"] == "Deploys go out on Wednesdays"  # re-derived
    hits = js(cli_run("recall", "Wednesdays", "--json"))
    assert [h["memoryId"] for h in hits] == [mid]
    assert hits[0]["content"] == "Deploys go out on Wednesdays"

    cli_run("wiki", "build", "--mount", "project")
    text = page.read_text()
    page.write_text(text.replace("# Deploys go out on Wednesdays\n", "# Release day\n")
                    .replace("\nDeploys go out on Wednesdays\n", "\nReleases go out on Wednesdays\n"))
    js(cli_run("wiki", "ingest", page, "--json"))
    assert js(cli_run("show", mid, "--json"))["current"]["summary"] == "Release day"


def test_ingest_refusals(project, cli_run, tmp_path):
    bare = tmp_path / "plain.md"
    bare.write_text("# Just a note\n\ntext\n")
    r = cli_run("wiki", "ingest", bare)
    assert r.exit_code == 1
    assert r.stderr == "Error: not a memory page: missing frontmatter with memoryId\n"
    r = cli_run("wiki", "ingest")
    assert r.exit_code == 2 and "file required" in r.stderr


def test_orphan_branch_second_build_writes_no_commit(project, cli_run):
    remember(cli_run, "Builds use uv", "--tags", "tools")
    status = git(project, "status", "--porcelain")
    head = git(project, "rev-parse", "HEAD")
    index = (project / ".git" / "index").read_bytes()
    out = js(cli_run("wiki", "build", "--mount", "project", "--target", "orphan-branch",
                     "--json"))
    tip = git(project, "rev-parse", "refs/heads/ynm/wiki").decode().strip()
    assert out == [{"mount": "project", "written": 4,
                    "location": f"refs/heads/ynm/wiki@{tip}", "repo": str(project)}]
    js(cli_run("wiki", "build", "--mount", "project", "--target", "orphan-branch", "--json"))
    assert git(project, "rev-parse", "refs/heads/ynm/wiki").decode().strip() == tip
    assert git(project, "status", "--porcelain") == status
    assert git(project, "rev-parse", "HEAD") == head
    assert (project / ".git" / "index").read_bytes() == index


def test_orphan_branch_lines_name_the_repository_of_each_mount(project, cli_run, ynm_home):
    remember(cli_run, "Builds use uv")
    r = cli_run("wiki", "build", "--target", "orphan-branch")
    assert r.exit_code == 0, r.stderr
    store = ynm_home / "store.git"
    mine = git(store, "rev-parse", "refs/heads/ynm/wiki").decode().strip()
    ours = git(project, "rev-parse", "refs/heads/ynm/wiki").decode().strip()
    assert r.stdout.splitlines() == [
        f"personal: 2 pages -> refs/heads/ynm/wiki@{mine} in {store}",
        f"project: 3 pages -> refs/heads/ynm/wiki@{ours} in {project}",
    ]
    assert r.stderr == ""


def test_outside_a_repository_the_note_says_only_personal_was_built(tmp_path, cli_run, ynm_home,
                                                                   monkeypatch):
    plain = tmp_path / "plain"
    plain.mkdir()
    monkeypatch.chdir(plain)
    r = cli_run("wiki", "build", "--target", "orphan-branch")
    assert r.exit_code == 0, r.stderr
    assert r.stdout.startswith("personal: 2 pages -> refs/heads/ynm/wiki@")
    assert r.stdout.endswith(f" in {ynm_home / 'store.git'}\n")
    assert r.stderr == ("note: no project wiki (not inside a git repository); built the wiki "
                        "of personal only\n")


def test_in_a_repository_without_init_the_note_says_to_run_init(git_repo, cli_run,
                                                                 monkeypatch):
    monkeypatch.chdir(git_repo)
    r = cli_run("wiki", "build")
    assert r.exit_code == 0, r.stderr
    assert r.stderr == (f"note: no project wiki ({git_repo} has no .ynm/config.json (run "
                        "`ynm init` there)); built the wiki of personal only\n")


def test_quiet_prints_nothing_on_success(project, cli_run):
    mid = remember(cli_run, "Deploys go out on Tuesdays")
    r = cli_run("wiki", "build", "--mount", "project", "--quiet")
    assert (r.exit_code, r.stdout, r.stderr) == (0, "", "")
    page = project / ".ynm" / "wiki" / "memories" / f"{mid}.md"
    page.write_text(page.read_text().replace("\nDeploys go out on Tuesdays\n",
                                             "\nDeploys go out on Wednesdays\n"))
    r = cli_run("wiki", "ingest", page, "--quiet")
    assert (r.exit_code, r.stdout, r.stderr) == (0, "", "")
    assert js(cli_run("show", mid, "--json"))["current"]["content"] == \
        "Deploys go out on Wednesdays"
    r = cli_run("wiki", "ingest", "--quiet")
    assert r.exit_code == 2 and "file required" in r.stderr  # failures still speak


def test_a_named_mount_that_did_not_open_prints_nothing_on_stdout(project, cli_run, ynm_home,
                                                                  tmp_path):
    """Nothing was built: stdout holds no empty line (with --json, the JSON of what was
    built, ``[]``); the warning on stderr says why."""
    missing = tmp_path / "org.git"
    mount_org(ynm_home, missing)
    warning = (f"warning: mount org is left out: not a git repository: {missing}; correct its "
               f'"path" in {ynm_home / "config.json"} if it is mistyped (`ynm doctor` checks '
               "every mount)\n")
    for target in ("directory", "orphan-branch"):
        r = cli_run("wiki", "build", "--mount", "org", "--target", target)
        assert (r.exit_code, r.stdout, r.stderr) == (0, "", warning)
    r = cli_run("wiki", "build", "--mount", "org", "--json")
    assert (r.exit_code, r.stdout, r.stderr) == (0, "[]\n", warning)
