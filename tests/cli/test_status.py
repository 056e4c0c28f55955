"""``ynm status`` (reference/cli.md §4.24, §8 items 13, 29)."""

from __future__ import annotations

import json
import shutil

import pytest

from ynm import __version__

from .conftest import make_record


def test_json_shape(project, run_json, load, ynm_home):
    load(make_record(), make_record(level="distributed", namespace="common"))
    s = run_json("status")
    assert list(s)[:6] == ["name", "version", "config", "repo", "mounts", "index"]
    assert s["name"] == "ynm" and s["version"] == __version__
    assert s["config"] == [str(project / ".ynm" / "config.json")]
    assert s["repo"] == str(project)
    personal, proj = s["mounts"]
    assert list(personal)[:5] == ["id", "level", "provider", "location", "shards"]
    assert {k: personal[k] for k in list(personal)[:5]} == {
        "id": "personal", "level": "personal", "provider": "git-notes",
        "location": str(ynm_home / "store.git"), "shards": 1}
    assert {k: proj[k] for k in list(proj)[:5]} == {
        "id": "project", "level": "distributed", "provider": "git-notes",
        "location": str(project), "shards": 1}
    assert "error" not in personal and "error" not in proj
    assert s["index"] == [{"mount": "personal", "fresh": True, "indexed": 1},
                          {"mount": "project", "fresh": True, "indexed": 1}]


def test_config_lists_only_existing_files(project, run_json, ynm_home):
    ynm_home.mkdir(parents=True, exist_ok=True)
    (ynm_home / "config.json").write_text('{"remote": "upstream"}\n')
    s = run_json("status")
    assert s["config"] == [str(ynm_home / "config.json"), str(project / ".ynm" / "config.json")]


def test_outside_a_repository(tmp_path, cli_run, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = cli_run("status", "--json")
    s = json.loads(result.stdout)
    assert s["repo"] is None
    assert s["config"] == []
    assert [m["id"] for m in s["mounts"]] == ["personal"]
    human = cli_run("status").stdout
    assert human.splitlines()[1] == "config: defaults"


def test_human(project, cli_run, load, ynm_home):
    load(make_record(), make_record(level="distributed", namespace="common"))
    result = cli_run("status")
    assert result.exit_code == 0
    assert result.stdout == (
        f"ynm {__version__}\n"
        f"config: {project / '.ynm' / 'config.json'}\n"
        f"  personal   personal     git-notes  1 shard(s)  index fresh (1)  "
        f"{ynm_home / 'store.git'}\n"
        f"  project    distributed  git-notes  1 shard(s)  index fresh (1)  {project}  "
        "remote origin (not a git remote here: sync skips it)\n"
        "vectors: off (embedder is none: full-text recall only)\n"
    )


def test_the_sync_remote_is_flagged_until_git_knows_it(project, cli_run, run_json, git, tmp_path):
    proj = next(m for m in run_json("status")["mounts"] if m["id"] == "project")
    assert proj["remote"] == "origin" and proj["remoteMissing"] is True
    git(project, "remote", "add", "origin", str(tmp_path / "origin.git"))
    proj = next(m for m in run_json("status")["mounts"] if m["id"] == "project")
    assert proj["remote"] == "origin" and "remoteMissing" not in proj
    assert cli_run("status").stdout.splitlines()[3].endswith("remote origin")


def test_stale_index_after_a_foreign_write(project, cli_run, load, git):
    """A write by another tool moves a shard ref; status reports the cache as stale (and
    refreshes it)."""
    b = make_record(level="distributed", namespace="common")
    load(b)
    cli_run("status")
    ref = git(project, "for-each-ref", "--format=%(refname)", "refs/notes/ynm").splitlines()[0]
    anchor = git(project, "rev-list", "--max-parents=0", "HEAD")
    c = make_record(level="distributed", namespace="common")
    git(project, "notes", f"--ref={ref}", "append", "-m",
        json.dumps(c, separators=(",", ":")), anchor)
    s = json.loads(cli_run("status", "--json").stdout)
    proj = next(e for e in s["index"] if e["mount"] == "project")
    assert proj["fresh"] is False
    assert proj["reason"]
    again = json.loads(cli_run("status", "--json").stdout)
    assert next(e for e in again["index"] if e["mount"] == "project") == {
        "mount": "project", "fresh": True, "indexed": 2}


def test_cwd(project, cli_run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    s = json.loads(cli_run("status", "--cwd", project, "--json").stdout)
    assert s["repo"] == str(project)
    assert [m["id"] for m in s["mounts"]] == ["personal", "project"]


def test_a_cwd_that_does_not_exist_is_refused(cli_run, tmp_path):
    result = cli_run("status", "--cwd", str(tmp_path / "nowhere"))
    assert result.exit_code == 2 and "does not exist" in result.stderr


@pytest.mark.parametrize("spec, model", [
    ("openai-compatible:nomic-embed-text@http://127.0.0.1:9", "openai-compatible:nomic-embed-text"),
    ("sentence-transformers:paraphrase-MiniLM-L3-v2",
     "sentence-transformers:paraphrase-MiniLM-L3-v2"),
])
def test_vectors_line_names_the_model(project, cli_run, run_json, monkeypatch, spec, model):
    """``vectors: on (<model>)``, the model the embedder value names (status never calls the
    embedder), as the name its vectors are kept under."""
    monkeypatch.setenv("YNM_EMBEDDER", spec)
    vectors = run_json("status")["vectors"]
    if not vectors["enabled"]:
        pytest.skip(f"vectors off here: {vectors['reason']}")
    assert vectors == {"enabled": True, "embedder": spec, "model": model}
    assert list(vectors) == ["enabled", "embedder", "model"]
    assert f"vectors: on ({model})" in cli_run("status").stdout.splitlines()


def test_no_model_when_vectors_are_off_by_choice(project, run_json):
    assert run_json("status")["vectors"] == {
        "enabled": False, "embedder": "none", "reason": "embedder is none: full-text recall only"}


def test_mount_columns_widen_for_a_long_mount_id():
    from ynm.cli.status import format_status

    mounts = [{"id": mid, "level": "distributed", "provider": "git-notes", "location": f"/{mid}",
               "shards": 1, "badLines": 0} for mid in ("project", "payments-team-shared")]
    lines = format_status({"version": "x", "config": [], "mounts": mounts, "index": [],
                           "problems": []}).splitlines()
    assert lines[2] == "  project" + " " * 15 + "distributed  git-notes  1 shard(s)  /project"
    assert lines[3].index("distributed") == lines[2].index("distributed")


def test_a_new_store_is_fresh_from_the_first_status(project, cli_run, ynm_home):
    """Right after ``ynm init`` no cache was ever built, and none is needed: nothing to
    index. The first status says fresh (0), in JSON and in the human line."""
    assert not (project / ".ynm" / "index" / "ynm-cache" / "project.sqlite").exists()
    first = json.loads(cli_run("status", "--json").stdout)["index"]
    assert first == [{"mount": "personal", "fresh": True, "indexed": 0},
                     {"mount": "project", "fresh": True, "indexed": 0}]
    for folder in (project / ".ynm" / "index", ynm_home / "index"):
        shutil.rmtree(folder)  # never built again, for the human line
    rows = [line for line in cli_run("status").stdout.splitlines() if "shard(s)" in line]
    assert [" index fresh (0) " in row for row in rows] == [True, True]


def test_a_stale_cache_says_status_caught_it_up(project, cli_run, load, git):
    """After a foreign append the human line names the reason and that status caught up;
    after a remember and after a reindex it is fresh."""
    load(make_record(level="distributed", namespace="common"))
    assert "index fresh (1)" in cli_run("status").stdout
    ref = git(project, "for-each-ref", "--format=%(refname)", "refs/notes/ynm").splitlines()[0]
    anchor = git(project, "rev-list", "--max-parents=0", "HEAD")
    c = make_record(level="distributed", namespace="common")
    git(project, "notes", f"--ref={ref}", "append", "-m",
        json.dumps(c, separators=(",", ":")), anchor)
    shard = ref.removeprefix("refs/notes/ynm/")
    row = next(line for line in cli_run("status").stdout.splitlines() if "distributed" in line)
    assert f" index fresh (2), caught up now (shard {shard} had changed) " in row
    assert "index stale" not in row
    assert cli_run("remember", "--type", "semantic", "--level", "distributed", "--content",
                   "release train leaves on Thursdays").exit_code == 0
    assert "index fresh (3)" in cli_run("status").stdout
    assert cli_run("reindex").exit_code == 0
    assert "index fresh (3)" in cli_run("status").stdout


def test_after_an_import_stopped_by_ctrl_c_status_says_one_thing(project, cli_run, tmp_path,
                                                                 monkeypatch):
    """Ctrl-C after the import's notes were written but before the cache took them in: the
    cache is behind (no shard indexed), status catches it up before counting, and its line
    says so once (fresh, the count now, why it was behind), never ``stale`` beside a count
    taken after catching up. The JSON keeps the reference's keys: ``fresh`` as status found
    it, ``reason`` in the reference's words, ``indexed`` now."""
    from ynm.index.cache import MountCache

    from .conftest import jsonl

    path = tmp_path / "three.jsonl"
    months = ("2026-01", "2026-02", "2026-03")
    path.write_text(jsonl(*(make_record(level="distributed", namespace="common",
                                        recordedAt=f"{m}-01T10:00:00.000Z") for m in months)))

    def interrupted(self, *args, **kwargs):
        raise KeyboardInterrupt

    real = MountCache.apply_append
    monkeypatch.setattr(MountCache, "apply_append", interrupted)
    assert cli_run("import", path).exit_code == 130
    monkeypatch.setattr(MountCache, "apply_append", real)
    row = next(line for line in cli_run("status").stdout.splitlines() if "distributed" in line)
    assert (" index fresh (3), caught up now (only 0 of the log's 3 shards were indexed) "
            in row)
    assert "index stale" not in row
    assert json.loads(cli_run("status", "--json").stdout)["index"][1] == {
        "mount": "project", "fresh": True, "indexed": 3}


@pytest.mark.parametrize(("reason", "words"), [
    ("3 shards in log, 0 indexed", "only 0 of the log's 3 shards were indexed"),
    ("3 shards in log, 1 indexed", "only 1 of the log's 3 shards was indexed"),
    ("1 shards in log, 2 indexed", "it held 2 shards, the log 1"),
    ("shard semantic/common/2026-01 changed", "shard semantic/common/2026-01 had changed"),
    ("never built", "it had never been built"),
    ("anchor changed", "the anchor had changed"),
    ("something new", "something new"),
    (None, "it was behind the notes"),
])
def test_why_a_cache_was_behind_reads_in_the_past(reason, words):
    from ynm.cli.status import behind_words

    assert behind_words(reason) == words
