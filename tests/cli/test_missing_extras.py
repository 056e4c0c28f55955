"""A missing optional dependency is named with the extra that brings it, on one line, never
as a traceback; an unexpected exception in any command is one ``Error: <type>: <message>``
line with a hint to set ``YNM_DEBUG`` (which then shows the traceback)."""

from __future__ import annotations

import json
import os

import pytest

from tests.support.blocked import run_without
from ynm.errors import pip_install
from ynm.service.ynm import Ynm


def server_hint(command: str, blocked: str) -> str:
    """What a command that needs the server extra says without it (docs/cli.md, errors)."""
    return (f"{command} needs the server extra ({blocked} is not installed): "
            f"{pip_install('server')}")


def _one_error_line(stderr: str) -> str:
    assert "Traceback" not in stderr
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


@pytest.mark.parametrize("blocked, args", [
    ("anyio", ["serve"]),
    ("mcp", ["serve"]),
    ("mcp", ["serve", "--http"]),
    ("uvicorn", ["serve", "--http"]),
    ("starlette", ["serve", "--http"]),
])
def test_serve_without_the_server_extra_names_it(project, blocked, args):
    result = run_without([blocked], *args, "--cwd", str(project), cwd=project)
    assert result.returncode == 1
    assert _one_error_line(result.stderr) == (
        f"Error: {server_hint('ynm serve', blocked)}")
    assert result.stdout == ""


@pytest.mark.parametrize("blocked", ["mcp", "uvicorn", "jinja2"])
def test_ui_without_the_server_extra_names_itself(project, blocked):
    result = run_without([blocked], "ui", "--no-open", "--port", "0", "--cwd", str(project),
                         cwd=project)
    assert result.returncode == 1
    assert _one_error_line(result.stderr) == (
        f"Error: {server_hint('ynm ui', blocked)}")
    assert result.stdout == ""


@pytest.mark.parametrize("blocked", ["numpy", "onnxruntime", "tokenizers", "sqlite_vec"])
def test_without_the_vector_extra_status_names_it_and_recall_still_answers(project, blocked):
    env = {**os.environ, "YNM_EMBEDDER": "auto"}
    stored = run_without([blocked], "remember", "--type", "semantic", "--content",
                         "otters hold hands while sleeping", cwd=project, env=env)
    assert stored.returncode == 0, stored.stderr
    assert "Traceback" not in stored.stderr
    status = run_without([blocked], "status", cwd=project, env=env)
    assert status.returncode == 0, status.stderr
    vectors = [line for line in status.stdout.splitlines() if line.startswith("vectors:")]
    assert pip_install("vector") in vectors[0]
    recall = run_without([blocked], "recall", "otters", cwd=project, env=env)
    assert recall.returncode == 0, recall.stderr
    assert "otters hold hands" in recall.stdout
    assert "Traceback" not in recall.stderr


# The vector extra's own packages (numpy is a dependency of ynm itself: the dream passes need it).
VECTOR_ONLY = ["onnxruntime", "tokenizers", "sqlite_vec", "torch", "sentence_transformers"]


def test_dream_without_the_vector_extra_finds_duplicates_by_their_words(project):
    env = {**os.environ, "YNM_EMBEDDER": "auto"}
    ids = []
    for text in ("Deploys go out on Tuesdays after the release review",
                 "Deploys go out on Tuesdays after release review",
                 "The ledger service pages the payments team"):
        stored = run_without(VECTOR_ONLY, "remember", "--type", "semantic", "--level",
                             "distributed", "--content", text, "--json", cwd=project, env=env)
        assert stored.returncode == 0, stored.stderr
        ids.append(json.loads(stored.stdout)["memoryId"])
    dry = run_without(VECTOR_ONLY, "dream", "--dry-run", "--judge", "--json", cwd=project,
                      env=env)
    assert dry.returncode == 0, dry.stderr
    assert "Traceback" not in dry.stderr
    assert "word overlap" in dry.stderr  # the warning says which judge stands in
    dedupe = json.loads(dry.stdout)["full"]["passes"]["dedupe"]
    assert sorted(dedupe["flagged"]) == sorted(ids[:2])  # the two deploy notes only
    done = run_without(VECTOR_ONLY, "dream", cwd=project, env=env)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("blocked, embedder, said", [
    ("sentence_transformers", "sentence-transformers:paraphrase-MiniLM-L3-v2",
     f"sentence-transformers is not installed: {pip_install('vector')}"),
    ("torch", "sentence-transformers:{model}",
     f"torch/transformers are not installed to do it: {pip_install('vector')}"),
])
def test_model_packages_of_the_vector_extra_are_named(project, tmp_path, blocked, embedder,
                                                      said):
    model = tmp_path / "local-model"
    model.mkdir()
    env = {**os.environ, "YNM_EMBEDDER": embedder.format(model=model),
           "YNM_MODELS": str(tmp_path / "models")}
    run_without([blocked], "remember", "--type", "semantic", "--content", "otters float",
                cwd=project, env=env)
    recall = run_without([blocked], "recall", "otters", cwd=project, env=env)
    assert recall.returncode == 0
    assert "otters float" in recall.stdout
    assert "Traceback" not in recall.stderr
    assert said in recall.stderr


@pytest.mark.parametrize("method, args", [
    ("status", ["status"]),
    ("recall", ["recall", "anything"]),
    ("remember", ["remember", "--type", "semantic", "--content", "x marks the spot"]),
])
def test_unexpected_exception_is_one_line_with_the_debug_hint(project, cli_run, monkeypatch,
                                                              method, args):
    def boom(*_a, **_k):
        raise RuntimeError("the disk caught fire\nsecond line of detail")

    monkeypatch.setattr(Ynm, method, boom)
    result = cli_run(*args)
    assert result.exit_code == 1
    assert result.stderr == ("Error: RuntimeError: the disk caught fire "
                             "(set YNM_DEBUG=1 for the traceback)\n")


def test_unexpected_exception_without_a_message_names_its_type(project, cli_run, monkeypatch):
    def boom(*_a, **_k):
        raise KeyError()

    monkeypatch.setattr(Ynm, "status", boom)
    result = cli_run("status")
    assert result.exit_code == 1
    assert result.stderr == "Error: KeyError (set YNM_DEBUG=1 for the traceback)\n"


def test_ynm_debug_lets_the_traceback_through(project, cli_run, monkeypatch):
    def boom(*_a, **_k):
        raise RuntimeError("the disk caught fire")

    monkeypatch.setattr(Ynm, "status", boom)
    monkeypatch.setenv("YNM_DEBUG", "1")
    with pytest.raises(RuntimeError, match="the disk caught fire"):
        cli_run("status")


def test_ynm_debug_traceback_in_a_real_process(project):
    # a command module that cannot be imported: a real, unforeseen failure in a subprocess
    env = {**os.environ, "YNM_DEBUG": "1"}
    result = run_without(["ynm.cli.status"], "status", cwd=project, env=env)
    assert result.returncode == 1
    assert "Traceback (most recent call last)" in result.stderr
    plain = run_without(["ynm.cli.status"], "status", cwd=project)
    assert plain.returncode == 1
    assert _one_error_line(plain.stderr) == (
        "Error: ModuleNotFoundError: No module named 'ynm.cli.status' "
        "(set YNM_DEBUG=1 for the traceback)")
