"""Configuration layers, env files, git discovery and project files (reference/cli.md §5)."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from ynm.errors import ConfigError, InvalidInput
from ynm.service.config import (
    DEFAULT_REDACTION,
    Config,
    DreamConfig,
    MountConfig,
    discover_git,
    index_path,
    load_config,
    normalize_user_id,
    project_config_path,
    read_env_file,
    require_mount_anchor,
    write_project_anchor,
)

A1 = "1" * 40
A2 = "2" * 40
A3 = "3" * 40
A4 = "4" * 40
A64 = "a" * 64


# ---------------------------------------------------------------------------------- helpers


@pytest.fixture()
def git_env(tmp_path: Path) -> dict[str, str]:
    """Environment for the git executable: fixed identity, no user or system config."""
    return {
        **os.environ,
        "HOME": str(tmp_path / "userhome"),
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Test",
        "GIT_AUTHOR_EMAIL": "test@example.com",
        "GIT_COMMITTER_NAME": "Test",
        "GIT_COMMITTER_EMAIL": "test@example.com",
    }


@pytest.fixture()
def run_git(git_env: dict[str, str]):
    def run(*args: str, cwd: Path) -> str:
        done = subprocess.run(
            ["git", *args], cwd=cwd, env=git_env, check=True, capture_output=True, text=True
        )
        return done.stdout.strip()

    return run


@pytest.fixture()
def repo(tmp_path: Path, run_git) -> Path:
    """A work tree with one commit, resolved (tmp dirs may sit behind symlinks)."""
    path = tmp_path / "repo"
    path.mkdir()
    run_git("init", "-q", "-b", "main", cwd=path)
    run_git("commit", "-q", "--allow-empty", "-m", "root", cwd=path)
    return path.resolve()


@pytest.fixture()
def home(tmp_path: Path) -> Path:
    path = tmp_path / "ynmhome"
    path.mkdir()
    return path.resolve()


@pytest.fixture()
def env(home: Path, tmp_path: Path) -> dict[str, str]:
    """The mapping handed to load_config: a tmp YNM_HOME, a known user, nothing else."""
    return {"YNM_HOME": str(home), "HOME": str(tmp_path / "userhome"), "USER": "tester"}


def write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")


# ---------------------------------------------------------------------------------- layers


def test_defaults_outside_any_repo(tmp_path: Path, env: dict[str, str], home: Path) -> None:
    outside = tmp_path / "plain"
    outside.mkdir()
    loaded = load_config(outside, env)
    assert loaded.repo is None and loaded.worktree is None and loaded.git_common_dir is None
    assert loaded.bare is False
    assert loaded.files == []
    assert loaded.home == home
    config = loaded.config
    assert config.remote == "origin" and config.provider == "git-notes"
    assert config.index == "sqlite-fts" and config.hooks is True and config.embedder == "auto"
    assert config.redaction == list(DEFAULT_REDACTION) == []
    assert config.redaction_detectors == "default"
    assert config.mounts == []
    assert config.user_id == "tester" and config.actor == "user:tester"
    assert config.personal_store == str(home / "store.git")
    assert config.dream == DreamConfig()


def test_each_layer_overrides_the_previous_key_by_key(
    repo: Path, env: dict[str, str], home: Path
) -> None:
    write_json(home / "config.json", {"anchor": A1, "remote": "home-remote", "hooks": False,
                                      "redactionDetectors": "entropy",
                                      "userId": "from-home"})
    write_json(repo / ".ynm" / "config.json", {"anchor": A2, "remote": "repo-remote",
                                               "actor": "agent:repo"})
    write_json(repo / ".ynm" / "config.local.json", {"anchor": A3})
    loaded = load_config(repo, {**env, "YNM_REMOTE": "env-remote"})

    assert loaded.files == [
        str(home / "config.json"),
        str(repo / ".ynm" / "config.json"),
        str(repo / ".ynm" / "config.local.json"),
    ]
    c = loaded.config
    assert c.anchor == A3  # local beats repo beats home
    assert c.remote == "env-remote"  # env beats every file
    assert c.actor == "agent:repo"  # only the repo set it
    assert c.hooks is False and c.redaction_detectors == "entropy"  # only home set them
    assert c.user_id == "from-home"


def test_every_env_variable_maps_to_its_key(repo: Path, env: dict[str, str]) -> None:
    loaded = load_config(repo, {
        **env,
        "YNM_ANCHOR": A64,
        "YNM_REMOTE": "up",
        "YNM_PROVIDER": "git-notes",
        "YNM_PERSONAL_STORE": "/srv/personal.git",
        "YNM_USER": "alice",
        "YNM_ACTOR": "agent:bot",
        "YNM_INDEX": "sqlite-fts",
        "YNM_EMBEDDER": "none",
    })
    c = loaded.config
    assert (c.anchor, c.remote, c.provider, c.personal_store) == (
        A64, "up", "git-notes", "/srv/personal.git")
    assert (c.user_id, c.actor, c.index, c.embedder) == ("alice", "agent:bot", "sqlite-fts",
                                                         "none")
    # the values ynm does not implement are refused naming the variable (see below)
    for var, value in (("YNM_PROVIDER", "sqlite"), ("YNM_INDEX", "memory")):
        with pytest.raises(ConfigError, match=rf"^invalid input: {var}: "):
            load_config(repo, {**env, var: value})


def test_empty_env_values_count_as_unset(repo: Path, env: dict[str, str], home: Path) -> None:
    write_json(home / "config.json", {"remote": "home-remote"})
    loaded = load_config(repo, {**env, "YNM_REMOTE": "", "YNM_MOUNTS": "", "YNM_USER": ""})
    assert loaded.config.remote == "home-remote"
    assert loaded.config.user_id == "tester"


def test_empty_ynm_home_means_the_default(tmp_path: Path) -> None:
    user_home = tmp_path / "u"
    loaded = load_config(tmp_path, {"YNM_HOME": "", "HOME": str(user_home), "USER": "x"})
    assert loaded.home == user_home / ".ynm"
    assert loaded.config.personal_store == str(user_home / ".ynm" / "store.git")


def test_actor_follows_the_user_from_env(repo: Path, env: dict[str, str]) -> None:
    loaded = load_config(repo, {**env, "YNM_USER": "bob"})
    assert loaded.config.actor == "user:bob"


def test_dream_object_is_replaced_wholesale(repo: Path, env: dict[str, str], home: Path) -> None:
    write_json(home / "config.json", {"dream": {"judge": "heuristic", "rerankTopK": 30}})
    write_json(repo / ".ynm" / "config.json", {"dream": {"writer": "none"}})
    dream = load_config(repo, env).config.dream
    assert dream.writer == "none"
    assert dream.judge == "auto" and dream.rerank_top_k == 15  # home's dream is gone


# ---------------------------------------------------------------------------------- mounts


def test_mounts_are_replaced_wholesale(repo: Path, env: dict[str, str], home: Path) -> None:
    home_mounts = [
        {"id": "org", "level": "distributed", "path": "/srv/org.git", "anchor": A1},
        {"id": "notes", "level": "personal", "path": "/srv/notes.git", "anchor": A2},
    ]
    write_json(home / "config.json", {"mounts": home_mounts})
    assert [m.id for m in load_config(repo, env).config.mounts] == ["org", "notes"]

    write_json(repo / ".ynm" / "config.json",
               {"mounts": [{"id": "team", "level": "distributed", "provider": "git-notes",
                            "path": "/srv/team.git", "anchor": A3}]})
    assert [m.id for m in load_config(repo, env).config.mounts] == ["team"]

    hosted = [{"id": "hosted", "level": "distributed", "provider": "mcp",
               "url": "https://memory.example.com/mcp"}]
    loaded = load_config(repo, {**env, "YNM_MOUNTS": json.dumps(hosted)})
    assert [(m.id, m.provider, m.url) for m in loaded.config.mounts] == [
        ("hosted", "mcp", "https://memory.example.com/mcp")]

    assert load_config(repo, {**env, "YNM_MOUNTS": "[]"}).config.mounts == []


def test_ynm_mounts_not_json(repo: Path, env: dict[str, str]) -> None:
    with pytest.raises(ConfigError, match=r"^invalid input: YNM_MOUNTS: not valid JSON: ") as info:
        load_config(repo, {**env, "YNM_MOUNTS": "[{"})
    assert info.value.exit_code == 2  # refused input, like a bad value
    assert info.value.hint == MOUNTS_HINT


@pytest.mark.parametrize("text", ["{", '{"hooks": ', "[1, 2]", '"x"'])
def test_a_config_file_that_is_no_json_object_is_refused_input(repo: Path, env: dict[str, str],
                                                               text: str) -> None:
    path = repo / ".ynm" / "config.local.json"
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)
    with pytest.raises(ConfigError, match=rf"^invalid input: {path}: ") as info:
        load_config(repo, env)
    assert info.value.exit_code == 2


@pytest.mark.parametrize("value", ['{"id": "x"}', '"org"', "[1, 2]", "null"])
def test_ynm_mounts_not_an_array_of_mounts(repo: Path, env: dict[str, str], value: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(repo, {**env, "YNM_MOUNTS": value})
    assert str(info.value) == "invalid input: YNM_MOUNTS: must be a JSON array of mounts"
    assert info.value.hint == MOUNTS_HINT


MOUNTS_HINT = ("YNM_MOUNTS takes a JSON array of mount objects, quoted for the shell; e.g. "
               """YNM_MOUNTS='[{"id": "org", "level": "distributed", "provider": "git-notes", """
               """"path": "~/.ynm/org.git", "anchor": "<commit>"}]'""")


def test_the_ynm_mounts_example_is_taken(repo: Path, env: dict[str, str], tmp_path: Path) -> None:
    """The hint's example, with a real store and its anchor, configures the mount."""
    import json
    import re

    example = re.search(r"YNM_MOUNTS='(.*)'$", MOUNTS_HINT).group(1)
    value = example.replace("~/.ynm/org.git", str(tmp_path / "org.git")).replace(
        "<commit>", "a" * 40)
    mounts = load_config(repo, {**env, "YNM_MOUNTS": value}).config.mounts
    assert [m.id for m in mounts] == ["org"] and json.loads(example)[0]["id"] == "org"


def test_ynm_mounts_entry_invalid(repo: Path, env: dict[str, str]) -> None:
    value = json.dumps([{"id": "x", "level": "distributed", "provider": "git-notes"}])
    with pytest.raises(ConfigError) as info:
        load_config(repo, {**env, "YNM_MOUNTS": value})
    assert str(info.value) == "invalid input: YNM_MOUNTS: 0: a git-notes mount needs a path"


def test_bad_env_value_names_the_variable(repo: Path, env: dict[str, str]) -> None:
    with pytest.raises(ConfigError, match=r"^invalid input: YNM_PROVIDER: "):
        load_config(repo, {**env, "YNM_PROVIDER": "s3"})
    with pytest.raises(ConfigError, match=r"^invalid input: YNM_ANCHOR: "):
        load_config(repo, {**env, "YNM_ANCHOR": "abc"})


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"id": "a", "level": "distributed"}, "a git-notes mount needs a path"),
        ({"id": "a", "level": "distributed", "provider": "mcp"}, "an mcp mount needs a url"),
        ({"id": "a", "level": "personal", "provider": "mcp", "url": "https://h/mcp"},
         "an mcp mount is distributed: a hosted store is shared"),
    ],
)
def test_mount_cross_field_rules(entry: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        MountConfig.model_validate(entry)


def test_mount_shapes_that_are_valid() -> None:
    hosted = MountConfig.model_validate(
        {"id": "team", "level": "distributed", "provider": "mcp",
         "url": "https://memory.example.com/mcp"})
    assert hosted.path is None and hosted.url == "https://memory.example.com/mcp"
    org = MountConfig.model_validate(
        {"id": "org", "level": "distributed", "path": "/srv/org.git", "anchor": A1,
         "remote": "origin"})
    assert org.provider == "git-notes" and require_mount_anchor(org) == A1


def test_git_notes_mount_anchor_is_checked_at_open() -> None:
    mount = MountConfig(id="org", level="distributed", path="/srv/org.git")
    with pytest.raises(ConfigError) as info:
        require_mount_anchor(mount)
    assert str(info.value) == "mount org: git-notes provider needs an anchor"


def test_mount_fields_are_strict() -> None:
    for bad in ({"id": "", "level": "personal", "path": "p"},
                {"id": "a", "level": "team", "path": "p"},
                {"id": "a", "level": "personal", "path": "p", "anchor": "ABC"},
                {"id": "a", "level": "personal", "path": 3}):
        with pytest.raises(ValueError):
            MountConfig.model_validate(bad)


# ---------------------------------------------------------------------------------- errors


def test_unknown_top_level_key(repo: Path, env: dict[str, str]) -> None:
    path = repo / ".ynm" / "config.json"
    write_json(path, {"anchr": A1})
    with pytest.raises(ConfigError) as info:
        load_config(repo, env)
    assert str(info.value) == f"invalid input: {path}: anchr: unknown key"
    assert info.value.exit_code == 2


@pytest.mark.parametrize(
    ("data", "where"),
    [
        ({"dream": {"judgeOnWrites": True}}, "dream.judgeOnWrites: unknown key"),
        ({"dream": {"thresholds": {"reflect": {"flagAt": 0.5, "x": 1}}}},
         "dream.thresholds.reflect.x: unknown key"),
        ({"mounts": [{"id": "a", "level": "personal", "path": "p", "colour": "red"}]},
         "mounts.0.colour: unknown key"),
        ({"user_id": "snake"}, "user_id: unknown key"),  # JSON keys are camelCase only
    ],
)
def test_unknown_nested_keys(home: Path, tmp_path: Path, env: dict[str, str], data: dict,
                             where: str) -> None:
    write_json(home / "config.json", data)
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path, env)
    assert str(info.value) == f"invalid input: {home / 'config.json'}: {where}"


def test_file_must_hold_an_object(home: Path, tmp_path: Path, env: dict[str, str]) -> None:
    (home / "config.json").write_text("[1]\n", encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path, env)
    assert str(info.value) == (f"invalid input: {home / 'config.json'}: expected a JSON object, "
                               "got an array")
    assert info.value.hint == ('a configuration file holds one JSON object of keys, e.g. '
                               '{"remote": "origin"}')


def test_invalid_json_names_the_file(repo: Path, env: dict[str, str]) -> None:
    path = repo / ".ynm" / "config.local.json"
    path.parent.mkdir()
    path.write_text("{oops", encoding="utf-8")
    with pytest.raises(ConfigError,
                       match="^" + re.escape(f"invalid input: {path}: not valid JSON: ")):
        load_config(repo, env)


def test_values_are_strict(home: Path, tmp_path: Path, env: dict[str, str]) -> None:
    write_json(home / "config.json", {"hooks": "yes"})
    with pytest.raises(ConfigError, match=r"config.json: hooks: must be true or false"):
        load_config(tmp_path, env)
    write_json(home / "config.json", {"provider": "s3"})  # s3 is a mount provider only
    with pytest.raises(ConfigError, match=r"config.json: provider: "):
        load_config(tmp_path, env)


def test_redaction_patterns_must_compile_and_detectors_be_known() -> None:
    assert Config.model_validate({"redaction": ["secret-[0-9]+"]}).redaction == ["secret-[0-9]+"]
    with pytest.raises(ValueError, match="invalid pattern"):
        Config.model_validate({"redaction": ["(unclosed"]})
    for value in ("default", "entropy", "none"):
        assert Config.model_validate({"redactionDetectors": value}).redaction_detectors == value
    with pytest.raises(ValueError, match="redactionDetectors"):
        Config.model_validate({"redactionDetectors": "all"})


# ---------------------------------------------------------------------------------- dream


def test_dream_defaults_fill_nested_objects() -> None:
    dream = DreamConfig.model_validate({"thresholds": {"dedupe": {"act": 0.9, "review": 0.7}}})
    t = dream.thresholds
    assert (t.dedupe.act, t.dedupe.review) == (0.9, 0.7)
    assert (t.contradict.act, t.contradict.review) == (0.85, 0.6)
    assert (t.promote.act, t.promote.review) == (0.7, 0.5)
    assert (t.reflect.min_episodes, t.reflect.flag_at) == (3, 0.7)
    assert dream.occurrence_retention == "P90D" and dream.max_pairs_per_run == 2000
    assert dream.candidates_per_memory == 5 and dream.rerank is True
    assert dream.typesafe.api_key_env == "TYPESAFE_API_KEY" and dream.typesafe.model is None
    assert dream.openai.base_url == "http://localhost:11434/v1"
    assert dream.openai.model == "qwen3:latest" and dream.openai.api_key_env == "OPENAI_API_KEY"
    assert dream.claude.model is None and dream.claude.use_api_key is False
    partial_reflect = DreamConfig.model_validate({"thresholds": {"reflect": {"minEpisodes": 5}}})
    assert partial_reflect.thresholds.reflect.flag_at == 0.7


def test_dream_partial_threshold_is_invalid(home: Path, tmp_path: Path,
                                            env: dict[str, str]) -> None:
    write_json(home / "config.json", {"dream": {"thresholds": {"promote": {"act": 0.9}}}})
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path, env)
    where = "dream.thresholds.promote.review: required"
    assert str(info.value) == f"invalid input: {home / 'config.json'}: {where}"


def test_dream_review_must_not_exceed_act() -> None:
    with pytest.raises(ValueError, match="review threshold must not exceed act threshold"):
        DreamConfig.model_validate({"thresholds": {"contradict": {"act": 0.5, "review": 0.6}}})
    same = DreamConfig.model_validate({"thresholds": {"contradict": {"act": 0.5, "review": 0.5}}})
    assert same.thresholds.contradict.review == 0.5


@pytest.mark.parametrize(
    "dream",
    [
        {"judge": "gpt"},
        {"thresholds": {"dedupe": {"act": 1.5, "review": 0.5}}},
        {"thresholds": {"reflect": {"minEpisodes": 1}}},
        {"candidatesPerMemory": 21},
        {"rerankTopK": 0},
        {"maxPairsPerRun": 0},
        {"occurrenceRetention": "90 days"},
        {"occurrenceRetention": "P"},
        # whole numbers only, as the reference's durationMs reads them (algorithms.md §8 #35)
        {"occurrenceRetention": "P1DT0.5S"},
        # a window of no length would forget every occurrence at the next dream
        {"occurrenceRetention": "P0D"},
        {"occurrenceRetention": "PT0S"},
    ],
)
def test_dream_bounds(dream: dict) -> None:
    with pytest.raises(ValueError):
        DreamConfig.model_validate(dream)


def test_dream_retention_of_no_length_says_how_to_keep_occurrences() -> None:
    with pytest.raises(ValueError, match=re.escape(
            "must be longer than zero, got 'P0D': it would forget every occurrence at the next "
            "dream; use null to keep them forever")):
        DreamConfig.model_validate({"occurrenceRetention": "P0D"})


def test_dream_retention_accepts_durations_and_null() -> None:
    assert DreamConfig.model_validate({"occurrenceRetention": None}).occurrence_retention is None
    for value in ("P30D", "P1Y2M", "PT12H", "P2W", "P1DT1S"):
        assert DreamConfig.model_validate({"occurrenceRetention": value}).occurrence_retention


# ---------------------------------------------------------------------------------- env files


def test_env_file_parsing(tmp_path: Path) -> None:
    path = tmp_path / "env"
    path.write_text(
        "# a comment\n"
        "\n"
        "PLAIN=value\n"
        "export EXPORTED=yes\n"
        "DOUBLE=\"two words\"\n"
        "SINGLE='it''s'\n"
        "MISMATCHED=\"open'\n"
        "  SPACED  =  padded  \n"
        "EMPTY=\n"
        "EQUALS=a=b\n"
        "no equals sign\n"
        "1BAD=x\n",
        encoding="utf-8",
    )
    assert read_env_file(path) == {
        "PLAIN": "value",
        "EXPORTED": "yes",
        "DOUBLE": "two words",
        "SINGLE": "it''s",
        "MISMATCHED": "\"open'",
        "SPACED": "padded",
        "EMPTY": "",
        "EQUALS": "a=b",
    }
    assert read_env_file(tmp_path / "missing") == {}


def test_env_files_feed_config_without_overriding(
    repo: Path, env: dict[str, str], home: Path
) -> None:
    (home / "env").write_text("YNM_REMOTE=from-home-env\nTOKEN=home\nSHARED=home\n",
                              encoding="utf-8")
    (repo / ".env").write_text("export YNM_ACTOR='agent:env'\nSHARED=repo\nREPO_ONLY=1\n"
                               "YNM_REMOTE=from-repo-env\n", encoding="utf-8")
    given = {**env, "TOKEN": "process"}
    snapshot = dict(given)
    loaded = load_config(repo, given)

    assert given == snapshot  # the mapping handed in is not mutated
    assert loaded.env["TOKEN"] == "process"  # already set: never overridden
    assert loaded.env["SHARED"] == "home"  # $YNM_HOME/env is read before <repo>/.env
    assert loaded.env["REPO_ONLY"] == "1"
    assert loaded.config.remote == "from-home-env"
    assert loaded.config.actor == "agent:env"
    assert "REPO_ONLY" not in os.environ


def test_default_env_is_os_environ_and_untouched(monkeypatch, tmp_path: Path) -> None:
    home = tmp_path / "h"
    home.mkdir()
    (home / "env").write_text("YNM_TEST_ONLY_VAR=1\n", encoding="utf-8")
    monkeypatch.setenv("YNM_HOME", str(home))
    monkeypatch.setenv("YNM_USER", "osenv")
    loaded = load_config(tmp_path)
    assert loaded.config.user_id == "osenv"
    assert loaded.env["YNM_TEST_ONLY_VAR"] == "1"
    assert "YNM_TEST_ONLY_VAR" not in os.environ


# ---------------------------------------------------------------------------------- user id


@pytest.mark.parametrize(
    ("name", "user_id"),
    [
        ("alice", "alice"),
        ("Alice.Smith", "alice.smith"),
        ("DOMAIN\\Bob Jones", "domain-bob-jones"),
        ("x_y-z.0", "x_y-z.0"),
        ("é@host", "--host"),
        ("", "me"),
        (None, "me"),
    ],
)
def test_user_id_normalisation(name: str | None, user_id: str) -> None:
    assert normalize_user_id(name) == user_id


def test_user_id_comes_from_the_os_user(tmp_path: Path, home: Path) -> None:
    loaded = load_config(tmp_path, {"YNM_HOME": str(home), "USER": "Jane Doe"})
    assert loaded.config.user_id == "jane-doe"
    assert loaded.config.actor == "user:jane-doe"


# ---------------------------------------------------------------------------------- git


def test_subdirectory_resolves_to_the_repo(repo: Path, env: dict[str, str]) -> None:
    sub = repo / "src" / "pkg"
    sub.mkdir(parents=True)
    loaded = load_config(sub, env)
    assert loaded.repo == repo and loaded.worktree == repo
    assert loaded.git_common_dir == repo / ".git"
    assert loaded.bare is False


def test_linked_worktree(repo: Path, run_git, tmp_path: Path, env: dict[str, str],
                         home: Path) -> None:
    linked = tmp_path / "linked"
    run_git("worktree", "add", "-q", "-b", "feature", str(linked), cwd=repo)
    linked = linked.resolve()
    write_json(repo / ".ynm" / "config.json", {"anchor": A1, "remote": "repo-remote"})
    write_json(linked / ".ynm" / "config.local.json", {"remote": "linked-remote"})
    # a local file in the main work tree is not this worktree's
    write_json(repo / ".ynm" / "config.local.json", {"actor": "agent:main-tree"})

    loaded = load_config(linked / ".", env)
    assert loaded.repo == repo
    assert loaded.worktree == linked
    assert loaded.git_common_dir == repo / ".git"
    assert loaded.bare is False
    assert loaded.files == [str(repo / ".ynm" / "config.json"),
                            str(linked / ".ynm" / "config.local.json")]
    assert loaded.config.anchor == A1 and loaded.config.remote == "linked-remote"
    assert loaded.config.actor == "user:tester"
    # same answers as git itself
    common = run_git("rev-parse", "--path-format=absolute", "--git-common-dir", cwd=linked)
    assert Path(common).resolve() == loaded.git_common_dir
    assert Path(run_git("rev-parse", "--show-toplevel", cwd=linked)).resolve() == linked
    # both work trees share one project index
    assert index_path(loaded, "project") == index_path(load_config(repo, env), "project")


def test_bare_repository(tmp_path: Path, run_git, env: dict[str, str]) -> None:
    bare = tmp_path / "org.git"
    run_git("init", "-q", "--bare", "-b", "main", str(bare), cwd=tmp_path)
    bare = bare.resolve()
    for cwd in (bare, bare / "refs"):
        loaded = load_config(cwd, env)
        assert loaded.repo == bare and loaded.worktree is None
        assert loaded.git_common_dir == bare and loaded.bare is True


def test_discover_git_inside_the_git_dir(repo: Path) -> None:
    found = discover_git(repo / ".git" / "refs")
    assert found is not None and found.repo == repo and found.worktree == repo


def test_discover_git_outside(tmp_path: Path) -> None:
    assert discover_git(tmp_path) is None


# ---------------------------------------------------------------------------------- files


def test_write_project_anchor_writes_once(repo: Path) -> None:
    path = project_config_path(repo)
    assert path == repo / ".ynm" / "config.json"
    assert write_project_anchor(repo, A1) is True
    assert path.read_text(encoding="utf-8") == f'{{\n  "anchor": "{A1}"\n}}\n'
    assert write_project_anchor(repo, A1) is False

    path.write_text(json.dumps({"remote": "up", "anchor": A1, "hooks": False}), encoding="utf-8")
    assert write_project_anchor(repo, A2) is True
    assert json.loads(path.read_text(encoding="utf-8")) == {
        "remote": "up", "anchor": A2, "hooks": False}
    assert list(json.loads(path.read_text(encoding="utf-8"))) == ["remote", "anchor", "hooks"]
    assert path.read_text(encoding="utf-8").endswith("}\n")
    before = path.stat().st_mtime_ns
    assert write_project_anchor(repo, A2) is False
    assert path.stat().st_mtime_ns == before


def test_write_project_anchor_rejects_bad_input(repo: Path) -> None:
    with pytest.raises(InvalidInput):
        write_project_anchor(repo, "HEAD")
    write_json(project_config_path(repo), ["not", "an", "object"])
    with pytest.raises(ConfigError, match="expected a JSON object"):
        write_project_anchor(repo, A4)


def test_index_paths(repo: Path, env: dict[str, str], home: Path, tmp_path: Path) -> None:
    loaded = load_config(repo, env)
    assert index_path(loaded, "project") == repo / ".ynm" / "index" / "ynm-cache" / "project.sqlite"
    assert index_path(loaded, "personal") == home / "index" / "ynm-cache" / "personal.sqlite"
    assert index_path(loaded, "org") == home / "index" / "ynm-cache" / "org.sqlite"
    outside = tmp_path / "plain"
    outside.mkdir()
    with pytest.raises(ConfigError, match="the project mount needs a git repository"):
        index_path(load_config(outside, env), "project")


# ------------------------------------------------------------- values ynm does not implement


UNSUPPORTED = [
    ({"provider": "fs"}, "provider",
     "the fs provider is not supported by this ynm, which keeps memory in git notes: "
     "use git-notes"),
    ({"provider": "sqlite"}, "provider", "the sqlite provider is not supported"),
    ({"provider": "memory"}, "provider", "the memory provider is not supported"),
    ({"provider": "s3"}, "provider", "the s3 provider is not supported"),
    ({"provider": "mcp"}, "provider", "the mcp provider is not supported"),
    ({"provider": "postgres"}, "provider", "unknown provider 'postgres': use git-notes"),
    ({"index": "memory"}, "index", "the memory index is not supported by this ynm"),
    ({"index": "elastic"}, "index", "unknown index 'elastic': use sqlite-fts"),
    ({"mounts": [{"id": "n", "level": "personal", "provider": "fs", "path": "/srv/n"}]},
     "mounts.0.provider", "the fs provider is not supported by this ynm, which keeps memory "
     "in git notes: use git-notes or mcp (a hosted store is mounted with provider mcp and a "
     "url)"),
    ({"mounts": [{"id": "t", "level": "distributed", "provider": "sqlite",
                  "path": "/srv/t.sqlite"}]}, "mounts.0.provider",
     "the sqlite provider is not supported"),
    ({"mounts": [{"id": "m", "level": "distributed", "provider": "memory", "path": "x"}]},
     "mounts.0.provider", "the memory provider is not supported"),
    ({"mounts": [{"id": "org", "level": "distributed", "path": "/o.git", "anchor": A1},
                 {"id": "b", "level": "distributed", "provider": "s3", "bucket": "mem"}]},
     "mounts.1.provider", "the s3 provider is not supported"),
    ({"mounts": [{"id": "x", "level": "distributed", "provider": "nfs", "path": "/x"}]},
     "mounts.0.provider", "unknown provider 'nfs': use git-notes or mcp"),
]


@pytest.mark.parametrize(("layer", "key", "message"), UNSUPPORTED)
def test_a_value_ynm_does_not_implement_is_refused_naming_its_key(
        repo: Path, env: dict[str, str], home: Path, layer: dict, key: str, message: str
) -> None:
    """The reference's fs/sqlite/memory/s3 providers and its in-process index were accepted
    and then ignored (a mount skipped, the value never read): each is now refused input
    (exit 2) with the file and the key."""
    path = repo / ".ynm" / "config.local.json"
    write_json(path, layer)
    with pytest.raises(ConfigError) as info:
        load_config(repo, env)
    assert str(info.value).startswith(f"invalid input: {path}: {key}: {message}")
    assert info.value.exit_code == 2


@pytest.mark.parametrize(("var", "value", "message"), [
    ("YNM_PROVIDER", "fs", "YNM_PROVIDER: the fs provider is not supported"),
    ("YNM_INDEX", "memory", "YNM_INDEX: the memory index is not supported"),
    ("YNM_MOUNTS", json.dumps([{"id": "t", "level": "distributed", "provider": "s3",
                                "bucket": "b"}]),
     "YNM_MOUNTS: 0.provider: the s3 provider is not supported"),
])
def test_an_unimplemented_value_in_the_environment_names_the_variable(
        repo: Path, env: dict[str, str], var: str, value: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_config(repo, {**env, var: value})
    assert str(info.value).startswith(f"invalid input: {message}")
    assert info.value.exit_code == 2


def _hosted(mount_id: str, url: str = "https://h.example/mcp") -> dict:
    return {"id": mount_id, "level": "distributed", "provider": "mcp", "url": url}


@pytest.mark.parametrize(
    "url", ["localhost:8080/mcp", "memory.example.com/mcp", "/mcp", "ftp://h.example/mcp",
            "http:///mcp", "https://"])
def test_a_hosted_url_without_scheme_or_host_is_refused_at_load(
        url: str, repo: Path, env: dict[str, str]) -> None:
    env["YNM_MOUNTS"] = json.dumps([_hosted("team", url)])
    with pytest.raises(InvalidInput, match=r"YNM_MOUNTS: 0\.url: expected an http:// or "
                                           r"https:// url with a host, got " + re.escape(repr(url))):
        load_config(repo, env=env)


@pytest.mark.parametrize(
    "mounts",
    [
        [_hosted("project")],
        [_hosted("personal")],
        [{"id": "project", "level": "distributed", "path": "/srv/org.git"}],
        [_hosted("team"), _hosted("team", "https://other.example/mcp")],
        [{"id": "team", "level": "distributed", "path": "/srv/org.git"}, _hosted("team")],
    ],
)
def test_mount_ids_are_unique_whatever_the_providers(
        mounts: list, home: Path, tmp_path: Path, env: dict[str, str]) -> None:
    (home / "config.json").write_text(json.dumps({"mounts": mounts}))
    with pytest.raises(InvalidInput, match=rf"config\.json: mounts: mount id '{mounts[0]['id']}'"):
        load_config(tmp_path, env=env)


@pytest.mark.parametrize(("timeout", "ok"), [(30, True), (0.5, True), (0, False), (-1, False),
                                             (601, False), ("10", False)])
def test_a_hosted_mounts_timeout_is_seconds_over_0_up_to_600(timeout, ok) -> None:
    entry = {**_hosted("team"), "timeout": timeout}
    if ok:
        assert MountConfig.model_validate(entry).timeout == timeout
    else:
        with pytest.raises(ValueError, match="timeout"):
            MountConfig.model_validate(entry)
