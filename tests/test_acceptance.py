"""End-to-end checks of ynm's core promises, driving the real `ynm` executable and real git.

Each test names the promise it holds (issue acceptance list; reference/storage.md §3, §6).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

YNM = str(Path(sys.executable).with_name("ynm"))


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    e = dict(os.environ)
    e.update({
        "YNM_HOME": str(tmp_path / "home"), "YNM_USER": "tester",
        "GIT_AUTHOR_NAME": "T", "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "T", "GIT_COMMITTER_EMAIL": "t@example.com",
        "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1",
    })
    return e


def git(repo: Path, *args: str, env: dict[str, str], check: bool = True) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], env=env, check=check,
                          capture_output=True, text=True).stdout


def ynm(repo: Path, *args: str, env: dict[str, str], code: int = 0) -> subprocess.CompletedProcess:
    proc = subprocess.run([YNM, *args], cwd=repo, env=env, capture_output=True, text=True)
    assert proc.returncode == code, (proc.stdout, proc.stderr)
    return proc


@pytest.fixture
def repo(tmp_path: Path, env: dict[str, str]) -> Path:
    path = tmp_path / "repo"
    path.mkdir()
    git(path, "init", "-q", "-b", "main", env=env)
    (path / "a.txt").write_text("one\n")
    git(path, "add", "a.txt", env=env)
    git(path, "commit", "-q", "-m", "first", env=env)
    (path / "a.txt").write_text("two\n")
    git(path, "commit", "-q", "-am", "second", env=env)
    git(path, "tag", "v1", env=env)
    return path


def refs_and_status(repo: Path, env: dict[str, str]) -> tuple[str, str, str]:
    return (git(repo, "for-each-ref", "--format=%(refname) %(objectname)", env=env),
            git(repo, "symbolic-ref", "HEAD", env=env),
            git(repo, "status", "--porcelain", "--untracked-files=no", env=env))


def test_init_changes_no_branch_tag_or_tracked_file_and_anchors_on_the_root(repo, env):
    before = refs_and_status(repo, env)
    out = json.loads(ynm(repo, "init", "--json", env=env).stdout)
    assert refs_and_status(repo, env) == before
    root = git(repo, "rev-list", "--max-parents=0", "HEAD", env=env).strip()
    assert out["anchor"] == root
    assert json.loads((repo / ".ynm" / "config.json").read_text())["anchor"] == root
    # the cache folder is ignored by git through .git/info/exclude
    assert ".ynm/index/" in (repo / ".git" / "info" / "exclude").read_text()


def test_a_record_reads_back_with_plain_git_notes_show(repo, env):
    ynm(repo, "init", env=env)
    w = json.loads(ynm(repo, "remember", "--type", "semantic", "--level", "distributed",
                       "--content", "Ledger deploys on Tuesdays", "--json", env=env).stdout)
    anchor = json.loads((repo / ".ynm" / "config.json").read_text())["anchor"]
    refs = git(repo, "for-each-ref", "--format=%(refname)", "refs/notes/ynm", env=env).split()
    assert len(refs) == 1 and refs[0].startswith("refs/notes/ynm/distributed/common/semantic/")
    shown = git(repo, "notes", f"--ref={refs[0]}", "show", anchor, env=env)
    record = json.loads(shown)
    assert record["id"] == w["memoryId"] and record["content"] == "Ledger deploys on Tuesdays"
    assert shown.startswith('{"v":1,"id":"')
    subject = git(repo, "log", "-1", "--format=%s", refs[0], env=env).strip()
    assert subject == f"ynm: 1 record {refs[0][len('refs/notes/ynm/'):]}"


def test_porcelain_append_is_found_without_reindex_and_broken_line_is_reported(repo, env):
    ynm(repo, "init", env=env)
    ynm(repo, "remember", "--type", "reference", "--level", "distributed",
        "--content", "Runbooks live in the ops wiki", env=env)
    assert "Runbooks" in ynm(repo, "recall", "runbooks", env=env).stdout  # cache built now
    ref = git(repo, "for-each-ref", "--format=%(refname)", "refs/notes/ynm", env=env).strip()
    anchor = json.loads((repo / ".ynm" / "config.json").read_text())["anchor"]
    foreign = {"v": 1, "id": "01M8PK3G3MAP30Z07F5K1NND24", "memoryId": "01M8PK3G3MAP30Z07F5K1NND24",
               "op": "create", "type": "reference", "level": "distributed", "namespace": "common",
               "content": "Dashboards are in Grafana under ledger", "recordedAt": "2026-11-02T10:00:00.000Z",
               "provenance": {"actor": "user:other"}}
    git(repo, "notes", f"--ref={ref}", "append", "-m", json.dumps(foreign), anchor, env=env)
    hits = json.loads(ynm(repo, "recall", "grafana dashboards", "--json", env=env).stdout)
    assert [h["memoryId"] for h in hits] == [foreign["id"]]
    git(repo, "notes", f"--ref={ref}", "append", "-m", "{broken", anchor, env=env)
    listed = json.loads(ynm(repo, "list", "--json", "--level", "distributed", env=env).stdout)
    assert len(listed) == 2  # the bad line hides nothing else
    status = json.loads(ynm(repo, "status", "--json", env=env).stdout)
    project = next(m for m in status["mounts"] if m["id"] == "project")
    assert project["badLines"] == 1
    assert len(status["problems"]) == 1 and status["problems"][0].startswith(f"{ref}:")
    assert "invalid JSON" in status["problems"][0]
    assert "bad line" in ynm(repo, "status", env=env).stdout


def test_deleting_the_cache_gives_the_same_hits_and_scores(repo, env, tmp_path):
    ynm(repo, "init", env=env)
    data = Path(__file__).parent.parent / "examples" / "team-store.jsonl"
    ynm(repo, "import", str(data), env=env)
    # reference and procedural memories never decay, so their scores do not depend on the clock
    queries = ["deploy", "migration review", "runbook", "on-call rota"]
    args = ["--type", "reference", "--type", "procedural", "--json", "--limit", "20"]
    before = [json.loads(ynm(repo, "recall", q, *args, env=env).stdout) for q in queries]
    assert any(before)
    shutil.rmtree(repo / ".ynm" / "index")
    after = [json.loads(ynm(repo, "recall", q, *args, env=env).stdout) for q in queries]
    assert after == before


def test_four_processes_writing_to_one_shard_lose_nothing(repo, env, tmp_path):
    ynm(repo, "init", env=env)
    script = (
        "import sys\n"
        "from ynm.service.ynm import Ynm\n"
        "from ynm.model.inputs import RememberInput\n"
        "w = sys.argv[1]\n"
        "with Ynm.open(sys.argv[2]) as y:\n"
        "    for i in range(8):\n"
        "        y.remember(RememberInput(type='semantic', level='distributed',\n"
        "                   content=f'writer {w} note {i}'))\n"
    )
    procs = [subprocess.Popen([sys.executable, "-c", script, str(w), str(repo)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for w in range(4)]
    for p in procs:
        out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err.decode()
    refs = git(repo, "for-each-ref", "--format=%(refname)", "refs/notes/ynm", env=env).split()
    assert len(refs) == 1
    listed = json.loads(ynm(repo, "list", "--json", "--level", "distributed", env=env).stdout)
    assert len(listed) == 32
    assert sorted(m["current"]["content"] for m in listed) == sorted(
        f"writer {w} note {i}" for w in range(4) for i in range(8))
    fsck = subprocess.run(["git", "-C", str(repo), "fsck", "--strict"], env=env,
                          capture_output=True, text=True)
    assert fsck.returncode == 0, fsck.stderr


def test_a_worktree_shares_its_main_repository_store(repo, env, tmp_path):
    ynm(repo, "init", env=env)
    wt = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", str(wt), "-b", "side", env=env)
    ynm(wt, "remember", "--type", "semantic", "--level", "distributed",
        "--content", "Written from the worktree", env=env)
    hits = json.loads(ynm(repo, "recall", "worktree", "--json", env=env).stdout)
    assert [h["content"] for h in hits] == ["Written from the worktree"]
    assert not (wt / ".ynm" / "index").exists()  # one cache, in the main work tree


def test_a_configured_org_store_takes_writes_and_is_recalled(repo, env, tmp_path):
    out = json.loads(ynm(repo, "init", "--bare", str(tmp_path / "org.git"), "--json",
                         env=env).stdout)
    assert out["created"] is True
    home = Path(env["YNM_HOME"])
    home.mkdir(parents=True, exist_ok=True)
    (home / "config.json").write_text(json.dumps({"mounts": [{
        "id": "org", "level": "distributed", "provider": "git-notes",
        "path": str(tmp_path / "org.git"), "anchor": out["anchor"]}]}))
    w = json.loads(ynm(repo, "remember", "--type", "procedural", "--level", "distributed",
                       "--mount", "org", "--content", "Rotate the signing keys every quarter",
                       "--json", env=env).stdout)
    assert w["mount"] == "org"
    hits = json.loads(ynm(repo, "recall", "signing keys", "--json", env=env).stdout)
    assert [(h["memoryId"], h["mount"]) for h in hits] == [(w["memoryId"], "org")]
    refs = git(tmp_path / "org.git", "for-each-ref", "--format=%(refname)", env=env).split()
    assert any(r.startswith("refs/notes/ynm/distributed/common/procedural/") for r in refs)
    # a personal write never lands in the org store
    ynm(repo, "remember", "--type", "semantic", "--content", "my own note", env=env)
    refs = git(tmp_path / "org.git", "for-each-ref", "--format=%(refname)", env=env).split()
    assert not any("/personal/" in r for r in refs)
