"""``auto`` resolution of the writer, then the judge (reference/algorithms.md §4.17, cli.md
§5.6), and the calibrated judge of the read and write paths."""

from __future__ import annotations

import os
import sys
import types
from pathlib import Path

import pytest

from tests.support.embeddings_server import server  # noqa: F401 (a fixture)
from ynm.dream.judges import SimilarityJudge, TypesafeJudge, WriterEmulatedJudge
from ynm.dream.resolve import calibrated_judge, resolve, resolve_for
from ynm.dream.seams import ModelUnavailable, Question
from ynm.dream.writers import ClaudeCliWriter, OpenAICompatibleWriter
from ynm.errors import ConfigError
from ynm.service.config import DreamConfig


@pytest.fixture(autouse=True)
def floor(monkeypatch: pytest.MonkeyPatch):
    """The heuristic judge and the none writer; stand-ins where their modules are not there
    yet (they live in ynm.dream.heuristic and ynm.dream.writers_none)."""
    try:
        from ynm.dream.heuristic import HeuristicJudge
        from ynm.dream.writers_none import NoneWriter
        return
    except ImportError:
        pass

    class HeuristicJudge:
        name = "heuristic"
        calibrated = False

    class NoneWriter:
        name = "none"

        def write(self, *args, **kw):
            raise ModelUnavailable("no writer")

    monkeypatch.setitem(sys.modules, "ynm.dream.heuristic",
                        types.SimpleNamespace(HeuristicJudge=HeuristicJudge))
    monkeypatch.setitem(sys.modules, "ynm.dream.writers_none",
                        types.SimpleNamespace(NoneWriter=NoneWriter))


PAIR_SAME_FACT = Question(type="noul", instructions="Same fact?")


def dream(**kw) -> DreamConfig:
    return DreamConfig.model_validate(kw)


class Probe:
    def __init__(self, answer: bool):
        self.answer = answer
        self.calls = 0

    def __call__(self, env) -> bool:
        self.calls += 1
        return self.answer


def test_nothing_configured_is_heuristic_and_none():
    probe = Probe(False)
    judge, writer = resolve(dream(), {}, probe=probe)
    assert (judge.name, writer.name) == ("heuristic", "none")
    assert probe.calls == 1


def test_claude_cli_found_gives_an_emulated_judge():
    judge, writer = resolve(dream(claude={"model": "haiku"}), {"X": "1"}, probe=Probe(True))
    assert isinstance(writer, ClaudeCliWriter) and writer.model == "haiku"
    assert isinstance(judge, WriterEmulatedJudge) and judge.name == "writer-emulated:claude-cli"
    assert judge.writer is writer and judge.calibrated is False


@pytest.mark.parametrize("env", [
    {"OPENAI_API_KEY": "sk"},
    {"YNM_OPENAI_BASE_URL": "http://127.0.0.1:9/v1"},
    {"YNM_NO_CLAUDE_CLI": "1"},
])
def test_the_claude_probe_is_skipped(env):
    probe = Probe(True)
    _, writer = resolve(dream(), env, probe=probe)
    assert probe.calls == 0
    assert writer.name == ("none" if "YNM_NO_CLAUDE_CLI" in env else "openai-compatible")


def test_openai_compatible_under_auto_takes_the_variables():
    _, writer = resolve(dream(), {"OPENAI_API_KEY": "sk-1"}, probe=Probe(True))
    assert isinstance(writer, OpenAICompatibleWriter)
    assert (writer.base_url, writer.model, writer.api_key) == (
        "http://localhost:11434/v1", "qwen3:latest", "sk-1")
    env = {"YNM_OPENAI_BASE_URL": "http://127.0.0.1:9/v1/", "YNM_OPENAI_MODEL": "llama"}
    _, writer = resolve(dream(), env, probe=Probe(True))
    assert (writer.base_url, writer.model, writer.api_key) == (
        "http://127.0.0.1:9/v1", "llama", None)
    # the key variable is configurable
    _, writer = resolve(dream(openai={"apiKeyEnv": "MY_KEY"}), {"MY_KEY": "k2"},
                        probe=Probe(False))
    assert writer.api_key == "k2"


def test_explicit_writers_take_no_variables_and_no_probe():
    probe = Probe(True)
    env = {"YNM_OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "YNM_OPENAI_MODEL": "llama"}
    _, writer = resolve(dream(writer="openai-compatible",
                              openai={"baseUrl": "http://h/v1", "model": "m"}), env, probe=probe)
    assert (writer.base_url, writer.model) == ("http://h/v1", "m")
    _, writer = resolve(dream(writer="claude-cli", claude={"useApiKey": True}), {}, probe=probe)
    assert isinstance(writer, ClaudeCliWriter) and writer.use_api_key is True
    _, writer = resolve(dream(writer="none"), {"OPENAI_API_KEY": "k"}, probe=probe)
    assert writer.name == "none"
    assert probe.calls == 0


def test_typesafe_first_when_its_key_is_set():
    env = {"TYPESAFE_API_KEY": "ts", "OPENAI_API_KEY": "sk"}
    judge, writer = resolve(dream(), env, probe=Probe(True))
    assert isinstance(judge, TypesafeJudge) and judge.calibrated
    assert judge.base_url == "https://api.typesafe.ai" and judge.model == "jev-latest"
    assert writer.name == "openai-compatible"
    judge, _ = resolve(dream(typesafe={"model": "jev-2", "baseUrl": "http://ts.local"}),
                       env, probe=Probe(False))
    assert (judge.base_url, judge.model) == ("http://ts.local", "jev-2")
    judge, _ = resolve(dream(typesafe={"baseUrl": "http://ts.local"}),
                       {**env, "YNM_TYPESAFE_BASE_URL": "http://127.0.0.1:5"}, probe=Probe(False))
    assert judge.base_url == "http://127.0.0.1:5"
    judge, _ = resolve(dream(typesafe={"apiKeyEnv": "OTHER"}), env, probe=Probe(False))
    assert judge.name == "writer-emulated:openai-compatible"  # OTHER is not set


def test_similarity_when_vectors_are_on_and_no_model():
    embedder = types.SimpleNamespace(name="fake")
    judge, writer = resolve(dream(), {}, embedder=embedder, probe=Probe(False))
    assert isinstance(judge, SimilarityJudge) and writer.name == "none"
    assert judge.fallback.name == "heuristic" and judge.model == "similarity:fake"
    # a writer outranks it
    judge, _ = resolve(dream(), {}, embedder=embedder, probe=Probe(True))
    assert judge.name == "writer-emulated:claude-cli"


def test_explicit_judges():
    with pytest.raises(ConfigError, match="needs an API key: set TYPESAFE_API_KEY"):
        resolve(dream(judge="typesafe"), {}, probe=Probe(False))
    judge, _ = resolve(dream(judge="writer-emulated"), {}, probe=Probe(False))
    assert judge.name == "writer-emulated:none"
    judge, _ = resolve(dream(judge="heuristic"), {"TYPESAFE_API_KEY": "k"}, probe=Probe(True))
    assert judge.name == "heuristic"
    # without vectors the heuristic judges, under its own name (the dream version, §4.4)
    judge, _ = resolve(dream(judge="similarity"), {}, probe=Probe(False))
    assert judge.name == "heuristic" and not isinstance(judge, SimilarityJudge)


def test_calibrated_judge_of_the_read_and_write_paths():
    assert calibrated_judge(dream(), {}) is None
    assert isinstance(calibrated_judge(dream(), {"TYPESAFE_API_KEY": "k"}), TypesafeJudge)
    assert isinstance(calibrated_judge(dream(judge="typesafe"), {"TYPESAFE_API_KEY": "k"}),
                      TypesafeJudge)
    assert calibrated_judge(dream(judge="typesafe"), {}) is None  # dream reports that one
    for other in ("heuristic", "writer-emulated", "similarity"):
        assert calibrated_judge(dream(judge=other), {"TYPESAFE_API_KEY": "k"}) is None


def test_the_real_probe_finds_claude_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    bindir = tmp_path / "bin"
    bindir.mkdir()
    claude = bindir / "claude"
    claude.write_text("#!/bin/sh\necho 2.0.0\n")
    claude.chmod(0o755)
    env = {"PATH": f"{bindir}{os.pathsep}{os.environ['PATH']}"}
    assert resolve(dream(), env)[1].name == "claude-cli"
    claude.write_text("#!/bin/sh\nexit 1\n")
    assert resolve(dream(), env)[1].name == "none"


def test_config_accepts_the_new_keys():
    d = dream(judge="similarity", typesafe={"baseUrl": "http://x"})
    assert d.judge == "similarity" and d.typesafe.base_url == "http://x"
    assert DreamConfig().typesafe.base_url == "https://api.typesafe.ai"


def test_resolve_for_a_service(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from ynm.service.ynm import Ynm

    monkeypatch.setenv("YNM_USER", "tester")
    where = tmp_path / "outside"
    where.mkdir()
    with Ynm.open(where) as y:  # YNM_EMBEDDER=none in tests: no vectors
        judge, writer = resolve_for(y, y.mounts[0], probe=Probe(False))
        assert (judge.name, writer.name) == ("heuristic", "none")
    monkeypatch.setenv("TYPESAFE_API_KEY", "k")
    monkeypatch.setenv("YNM_NO_CLAUDE_CLI", "1")
    with Ynm.open(where) as y:
        judge, writer = resolve_for(y, probe=Probe(True))
        assert (judge.name, writer.name) == ("typesafe", "none")


def test_resolve_for_picks_similarity_when_vectors_are_on(server, tmp_path: Path,  # noqa: F811
                                                          monkeypatch: pytest.MonkeyPatch):
    from ynm.model.inputs import RecallQuery, RememberInput
    from ynm.service.ynm import Ynm

    monkeypatch.setenv("YNM_USER", "tester")
    monkeypatch.setenv("YNM_NO_CLAUDE_CLI", "1")
    where = tmp_path / "outside"
    where.mkdir()
    with Ynm.open(where) as y:
        y.remember(RememberInput(type="semantic", content="Deploys go out on Tuesdays."))
        y.recall(RecallQuery(text="deploys"))  # the mount's vectors, and so its centroid
        mount = y.mounts[0]
        judge, writer = resolve_for(y, mount, probe=Probe(True))
        assert isinstance(judge, SimilarityJudge) and writer.name == "none"
        assert judge.center is not None and judge.model == "similarity:openai-compatible:m"
        brief = {"summary": "s", "content": "same words"}
        same = judge.judge({"a": brief, "b": dict(brief)},
                           {"sameFact": PAIR_SAME_FACT}).answers["sameFact"].noul
        assert same > 0.99


@pytest.mark.parametrize("passes, probed, names", [
    (["expire"], 0, ("heuristic", "none")),
    (["expire", "expire"], 0, ("heuristic", "none")),
    (["expire", "dedupe"], 1, ("writer-emulated:claude-cli", "claude-cli")),
    (["normalise"], 1, ("writer-emulated:claude-cli", "claude-cli")),
    (None, 1, ("writer-emulated:claude-cli", "claude-cli")),
    ([], 1, ("writer-emulated:claude-cli", "claude-cli")),
])
def test_resolve_for_an_expire_only_run_asks_for_no_model(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          passes, probed, names):
    from ynm.service.ynm import Ynm

    monkeypatch.setenv("YNM_USER", "tester")
    where = tmp_path / "outside"
    where.mkdir()
    probe = Probe(True)
    with Ynm.open(where) as y:
        judge, writer = resolve_for(y, y.mounts[0], probe=probe, passes=passes)
    assert (judge.name, writer.name) == names
    assert probe.calls == probed


def test_an_expire_only_run_needs_no_key_for_a_configured_typesafe(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from ynm.service.ynm import Ynm

    monkeypatch.setenv("YNM_USER", "tester")
    monkeypatch.delenv("TYPESAFE_API_KEY", raising=False)
    where = tmp_path / "outside"
    where.mkdir()
    with Ynm.open(where) as y:
        y.config = y.config.model_copy(
            update={"dream": y.config.dream.model_copy(update={"judge": "typesafe"})})
        judge, writer = resolve_for(y, passes=["expire"], probe=Probe(False))
        assert (judge.name, writer.name) == ("heuristic", "none")
        with pytest.raises(ConfigError):
            resolve_for(y, passes=["expire", "promote"], probe=Probe(False))


def test_consolidate_of_expire_alone_probes_for_no_writer(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch):
    """Ynm.consolidate hands its passes to resolve_for: ``ynm dream --passes expire`` (and a
    session's end) never runs ``claude --version``; a run with a model pass does."""
    from ynm.dream import writers
    from ynm.service.ynm import Ynm

    monkeypatch.setenv("YNM_USER", "tester")
    probe = Probe(False)
    monkeypatch.setattr(writers, "claude_available", probe)
    where = tmp_path / "outside"
    where.mkdir()
    with Ynm.open(where) as y:
        out = y.consolidate(["expire"])
        assert probe.calls == 0 and out["full"]["writer"] == "none"
        assert list(out["passes"]) == ["expire", "retention"]
        y.consolidate(["expire", "dedupe"])
        assert probe.calls == 1
