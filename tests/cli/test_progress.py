"""Long work shows one progress bar on a terminal and nothing elsewhere; ``status`` shows the
memories still waiting for a vector; third-party output of the one-time model export is kept
out of a command's stderr.

- The service reports ``progress(phase, done, total)`` for import (``append``), embedding
  (``embed``, inside recall), reindex (``read``, ``fold``), sync and dream.
- The CLI draws a bar (click's progressbar) only when stderr is a terminal, and never with
  ``--json`` or ``--quiet``.
"""

from __future__ import annotations

import io
import json
import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.cli.conftest import jsonl, make_record
from ynm.cli import _common
from ynm.cli._common import TerminalProgress
from ynm.service.ynm import Ynm

N = 70  # more than one embedding batch (ynm.index.embedders.BATCH = 64)



def facts(n: int = N) -> str:
    return jsonl(*(make_record(content=f"Fact number {i} about the deploy pipeline.",
                               summary=f"Fact number {i}.") for i in range(n)))


class Recorder:
    def __init__(self) -> None:
        self.calls: list[tuple[str, int, int]] = []

    def __call__(self, phase: str, done: int, total: int) -> None:
        self.calls.append((phase, done, total))

    def phase(self, name: str) -> list[tuple[int, int]]:
        """The reports of one phase, those about no work (total 0, never drawn) left out."""
        return [(d, t) for p, d, t in self.calls if p == name and t]


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


# -- the service's progress seam ---------------------------------------------------------------


def test_import_recall_and_reindex_report_their_phases(project, server):
    with Ynm.open(project) as y:
        rec = Recorder()
        y.progress = rec
        assert y.import_jsonl(facts())["imported"] == N
        assert rec.phase("append") == [(0, N), (N, N)]
        assert rec.phase("embed") == []  # a write embeds nothing

        rec.calls.clear()
        from ynm.model.inputs import RecallQuery

        assert y.recall(RecallQuery(text="deploy pipeline"))
        assert rec.phase("embed") == [(0, N), (64, N), (N, N)]  # the vectors recall needed

        rec.calls.clear()
        assert y.reindex() == {"personal": N, "project": 0}
        assert rec.phase("read") == [(0, 1), (1, 1)]  # one shard
        assert rec.phase("fold") == [(0, N), (N, N)]
        assert rec.phase("embed") == []  # the vectors are kept by text: nothing re-embedded


def test_reindex_after_a_model_change_reports_embedding(project, server):
    with Ynm.open(project) as y:
        y.import_jsonl(facts(3))
    server.dim = 16  # another key: every memory needs a new vector
    with Ynm.open(project) as y:
        rec = Recorder()
        y.progress = rec
        y.reindex("personal")
    assert rec.phase("embed") == [(0, 3), (3, 3)]


def test_sync_and_dream_report_their_steps(project, git, tmp_path):
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(project, "remote", "add", "origin", str(remote))
    with Ynm.open(project) as y:
        rec = Recorder()
        y.progress = rec
        y.sync()
        assert rec.phase("sync") == [(0, 1), (1, 1)]
        rec.calls.clear()
        y.consolidate(["expire", "dedupe"], dry_run=True)
        assert rec.phase("dream") == [(0, 2), (1, 2), (2, 2)]


def test_a_mount_cache_rebuild_reports_to_the_service_progress(project, cli_run):
    cli_run("import", input=facts(5))
    with Ynm.open(project) as y:
        y.mount("personal").cache.conn.execute("DELETE FROM meta WHERE key = 'anchor'")
        rec = Recorder()
        y.progress = rec
        y.mount("personal").fresh_cache()  # the anchor moved: a full rebuild
    assert rec.phase("read") == [(0, 1), (1, 1)] and rec.phase("fold") == [(0, 5), (5, 5)]


# -- the terminal bar --------------------------------------------------------------------------


def test_a_terminal_gets_one_bar_per_phase():
    term = FakeTerminal()
    p = TerminalProgress(stream=term, delay=0)
    assert p.enabled
    p("embed", 0, 70)
    p("embed", 64, 70)
    p("embed", 70, 70)
    p("fold", 5, 5)  # complete at its first report: nothing drawn
    p.finish()
    out = term.getvalue()
    assert p.drawn == ["embed"]
    assert "embedding" in out and "64/70" in out and "70/70" in out and "folding" not in out
    assert out.endswith("\n")


def test_quick_work_draws_nothing():
    term = FakeTerminal()
    p = TerminalProgress(stream=term)  # the default delay: 0.5 s
    p("embed", 0, 70)
    p("embed", 70, 70)
    p("sync", 0, 1)  # a network step shows at once
    p.finish()
    assert p.drawn == ["sync"]
    assert "embedding" not in term.getvalue() and "syncing" in term.getvalue()


def test_no_bar_where_stderr_is_not_a_terminal():
    pipe = io.StringIO()
    p = TerminalProgress(stream=pipe, delay=0)
    p("embed", 0, 70)
    p("embed", 70, 70)
    p.finish()
    assert not p.enabled and pipe.getvalue() == ""


@pytest.fixture
def terminal(monkeypatch):
    """stderr counts as a terminal and bars show at once."""
    monkeypatch.setattr(_common, "stderr_is_terminal", lambda: True)
    monkeypatch.setattr(TerminalProgress, "DELAY", 0.0)


def test_the_cli_draws_bars_on_a_terminal(project, cli_run, server, terminal):
    imported = cli_run("import", input=facts())
    assert imported.exit_code == 0, imported.stderr
    assert "writing records" in imported.stderr
    assert imported.stdout == f"imported {N} record(s)\n"
    recall = cli_run("recall", "deploy pipeline")
    assert recall.exit_code == 0, recall.stderr
    assert "embedding" in recall.stderr  # the embedding inside recall
    reindex = cli_run("reindex")
    assert "folding records" in reindex.stderr


@pytest.mark.parametrize("flag", ["--json", "--quiet", "-q"])
def test_json_and_quiet_draw_no_bar(project, cli_run, server, terminal, flag):
    imported = cli_run("import", flag, input=facts())
    assert imported.exit_code == 0 and imported.stderr == ""
    recall = cli_run("recall", "deploy pipeline", flag)
    assert recall.exit_code == 0 and recall.stderr == ""
    reindex = cli_run("reindex", flag)
    assert reindex.exit_code == 0 and reindex.stderr == ""


def test_no_bar_when_stderr_is_not_a_terminal(project, cli_run, server):
    for args, kw in ((("import",), {"input": facts()}), (("recall", "deploy"), {}),
                     (("reindex",), {}), (("dream", "--dry-run"), {})):
        result = cli_run(*args, **kw)
        assert result.exit_code == 0, result.stderr
        assert result.stderr == "", args


def test_sync_quiet_still_prints_nothing(project, cli_run, git, tmp_path, terminal):
    remote = tmp_path / "remote.git"
    git(tmp_path, "init", "-q", "--bare", str(remote))
    git(project, "remote", "add", "origin", str(remote))
    quiet = cli_run("sync", "--quiet")
    assert quiet.exit_code == 0 and quiet.stdout == "" and quiet.stderr == ""
    loud = cli_run("sync")
    assert loud.exit_code == 0 and "syncing" in loud.stderr and loud.stdout


# -- status: pending embeddings and the model ---------------------------------------------------


def test_status_shows_memories_waiting_for_a_vector(project, cli_run, server):
    cli_run("import", input=facts(3))
    s = json.loads(cli_run("status", "--json").stdout)
    assert s["vectors"]["model"] == "openai-compatible:m"
    personal = next(e for e in s["index"] if e["mount"] == "personal")
    assert personal["pendingVectors"] == 3
    human = cli_run("status").stdout
    assert "3 waiting to be embedded" in human
    assert "vectors: on (openai-compatible:m)" in human

    assert cli_run("recall", "deploy").exit_code == 0
    s = json.loads(cli_run("status", "--json").stdout)
    personal = next(e for e in s["index"] if e["mount"] == "personal")
    assert personal["pendingVectors"] == 0 and personal["vectors"] == 3
    assert "waiting to be embedded" not in cli_run("status").stdout

    cli_run("import", input=facts(2))
    server.dim = 16  # another model key: all five wait again
    s = json.loads(cli_run("status", "--json").stdout)
    personal = next(e for e in s["index"] if e["mount"] == "personal")
    assert personal["pendingVectors"] == 2  # status cannot know the new dimension unasked
    assert cli_run("recall", "deploy").exit_code == 0
    s = json.loads(cli_run("status", "--json").stdout)
    assert next(e for e in s["index"] if e["mount"] == "personal")["pendingVectors"] == 0


def test_status_names_the_default_model(project, monkeypatch):
    from ynm.index.embedders import model_name

    assert model_name("auto") == "sentence-transformers:all-MiniLM-L6-v2"
    assert model_name("sentence-transformers:BAAI/bge-small-en") == \
        "sentence-transformers:BAAI/bge-small-en"
    assert model_name("openai-compatible:nomic@http://h:1") == "openai-compatible:nomic"
    assert model_name("none") is None and model_name("bogus") is None
    with Ynm.open(project) as y:  # embedder none (tests): no model, no pending count
        s = y.status()
    assert "model" not in s["vectors"]
    assert all("pendingVectors" not in e for e in s["index"])


# -- the one-time model export --------------------------------------------------------------------


def test_third_party_bars_and_logging_are_kept_out(capsys):
    tqdm = pytest.importorskip("tqdm")
    from ynm.index.embedders import quiet_third_party

    log = logging.getLogger("transformers")
    handler = logging.StreamHandler(sys.stderr)
    log.addHandler(handler)
    try:
        before = os.environ.get("TQDM_DISABLE")
        with quiet_third_party():
            for _ in tqdm.tqdm(range(3), desc="Loading checkpoint shards"):
                pass
            log.warning("Some weights of BertModel were not initialized")
            print("stray text", file=sys.stderr)
        assert os.environ.get("TQDM_DISABLE") == before
        log.warning("after the block")
    finally:
        log.removeHandler(handler)
    err = capsys.readouterr().err
    assert "Loading checkpoint" not in err and "not initialized" not in err
    assert "stray" not in err and "after the block" in err


def test_a_failure_keeps_the_third_party_detail(capsys):
    from ynm.index.embedders import quiet_third_party

    with pytest.raises(RuntimeError):
        with quiet_third_party():
            print("the detail", file=sys.stderr)
            raise RuntimeError("export failed")
    assert "the detail" in capsys.readouterr().err


def test_the_export_prints_one_line_of_its_own(tmp_path, monkeypatch, capsys):
    pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    tqdm = pytest.importorskip("tqdm")
    from ynm.index import embedders

    class Config:
        hidden_size = 8

    class FakeModel:
        config = Config()

        def eval(self) -> None:
            print("eval noise", file=sys.stderr)

    def from_pretrained(path: str) -> FakeModel:
        for _ in tqdm.tqdm(range(2), desc="Loading weights"):
            pass
        logging.getLogger("transformers").warning("weights not initialized")
        return FakeModel()

    def export(torch, module, dummy, axes, path) -> None:
        print("torch.onnx export warning", file=sys.stderr)
        Path(path).write_bytes(b"onnx")

    monkeypatch.setattr(transformers.AutoModel, "from_pretrained", from_pretrained)
    monkeypatch.setattr(embedders, "_export", export)
    model_dir = tmp_path / "all-MiniLM-L6-v2"
    model_dir.mkdir()
    (model_dir / "tokenizer.json").write_text("{}")
    capsys.readouterr()
    embedders._export_onnx(model_dir, tmp_path / "out")
    err = capsys.readouterr().err
    assert (tmp_path / "out" / "model.onnx").read_bytes() == b"onnx"
    assert [line for line in err.splitlines() if line and "eval noise" not in line] == [
        f"ynm: exporting all-MiniLM-L6-v2 to ONNX once (kept in {tmp_path / 'out'})"]


# -- --json everywhere, shell completion ------------------------------------------------------------


def test_every_printing_command_takes_json_and_quiet():
    from ynm.cli import COMMANDS, cli

    import click

    ctx = click.Context(cli)
    missing = []
    for name in COMMANDS:
        if name in ("hook", "serve"):  # a hook prints its JSON line always; serve speaks MCP
            continue
        command = cli.get_command(ctx, name)
        # a group's options are its subcommands' (``wiki build``, ``wiki ingest``)
        leaves = ({f"{name} {sub}": c for sub, c in command.commands.items()}
                  if isinstance(command, click.Group) else {name: command})
        for label, leaf in leaves.items():
            opts = {o for p in leaf.params for o in getattr(p, "opts", [])}
            missing += [f"{label} {flag}" for flag in ("--json", "--quiet") if flag not in opts]
    assert missing == []


@pytest.mark.parametrize("args", [
    ("status",), ("list",), ("recall", "deploy"), ("context",), ("review", "list"),
    ("dream", "--dry-run"), ("reindex",), ("session", "start"), ("import",),
])
def test_json_output_parses(project, cli_run, args):
    result = cli_run(*args, "--json", input=facts(2) if args[0] == "import" else None)
    assert result.exit_code == 0, result.stderr
    json.loads(result.stdout)


def _complete(env: dict[str, str]) -> subprocess.CompletedProcess:
    root = str(Path(_common.__file__).resolve().parents[2])
    full = {**os.environ, **env, "PYTHONPATH": root}
    return subprocess.run([sys.executable, "-m", "ynm"], env=full, capture_output=True,
                          text=True, timeout=60)


@pytest.mark.parametrize("shell,marker", [
    ("bash", "complete -o nosort -F _ynm_completion ynm"),
    ("zsh", "#compdef ynm"),
    ("fish", "complete --no-files --command ynm"),
])
def test_shell_completion_scripts(shell, marker):
    proc = _complete({"_YNM_COMPLETE": f"{shell}_source"})
    assert proc.returncode == 0, proc.stderr
    assert marker in proc.stdout


def test_completion_offers_commands_and_options():
    proc = _complete({"_YNM_COMPLETE": "bash_complete", "COMP_WORDS": "ynm rec",
                      "COMP_CWORD": "1"})
    assert proc.stdout.split() == ["plain,recall"]
    proc = _complete({"_YNM_COMPLETE": "bash_complete", "COMP_WORDS": "ynm recall --qu",
                      "COMP_CWORD": "2"})
    assert proc.stdout.split() == ["plain,--quiet"]


# -- loading the embedding model is announced -------------------------------------------------


@pytest.fixture
def local_model(monkeypatch):
    """A stand-in for the local sentence-transformers model (embedder ``auto``): opening it
    writes ``MODEL-LOADED`` on stderr, so a test can see what was printed before."""
    import numpy as np

    from ynm.index import embedders

    class FakeLocal(embedders.Embedder):
        def __init__(self, model, home):
            sys.stderr.write("MODEL-LOADED\n")
            self.name, self.dim = f"sentence-transformers:{model}", 8

        def embed(self, texts):
            out = np.ones((len(texts), self.dim), dtype=np.float32)
            return out / np.linalg.norm(out, axis=1, keepdims=True)

    monkeypatch.setattr(embedders, "LocalEmbedder", FakeLocal)
    monkeypatch.setenv("YNM_EMBEDDER", "auto")
    return "loading embedding model sentence-transformers:all-MiniLM-L6-v2…"


@pytest.mark.parametrize("args", [
    ("recall", "deploy pipeline"),
    ("reindex",),
    ("context", "--text", "deploy"),
])
def test_the_model_load_is_announced_before_it_starts(project, cli_run, local_model, terminal,
                                                      args):
    assert cli_run("import", "--quiet", input=facts(3)).exit_code == 0
    result = cli_run(*args)
    assert result.exit_code == 0, result.stderr
    lines = result.stderr.splitlines()
    assert "MODEL-LOADED" in lines, args
    assert lines.index(local_model) == lines.index("MODEL-LOADED") - 1
    assert lines.count(local_model) == 1


@pytest.mark.parametrize("args", [
    ("import",), ("status",), ("list",),
    # its similar-memory note is full text: a write embeds nothing
    ("remember", "--type", "semantic", "--content", "Fact about the deploy pipeline."),
])
def test_commands_that_load_no_model_announce_none(project, cli_run, local_model, terminal,
                                                   args):
    result = cli_run(*args, input=facts(3) if args[0] == "import" else None)
    assert result.exit_code == 0, result.stderr
    assert "MODEL-LOADED" not in result.stderr and local_model not in result.stderr


@pytest.mark.parametrize("flag", ["--json", "--quiet"])
def test_json_and_quiet_announce_nothing(project, cli_run, local_model, terminal, flag):
    cli_run("import", "--quiet", input=facts(3))
    for args in (("recall", "deploy"), ("reindex",)):
        result = cli_run(*args, flag)
        assert result.exit_code == 0
        assert result.stderr.splitlines() == ["MODEL-LOADED"], args


def test_no_announcement_off_a_terminal_or_for_a_remote_model(project, cli_run, local_model,
                                                              server, monkeypatch):
    monkeypatch.setenv("YNM_EMBEDDER", "auto")  # the server fixture named itself
    cli_run("import", input=facts(3))
    assert cli_run("recall", "deploy").stderr.splitlines() == ["MODEL-LOADED"]
    monkeypatch.setattr(_common, "stderr_is_terminal", lambda: True)
    monkeypatch.setenv("YNM_EMBEDDER", f"openai-compatible:m@{server.url}")
    assert "loading embedding model" not in cli_run("recall", "deploy").stderr


def test_a_note_ends_the_bar_and_prints_one_line():
    term = FakeTerminal()
    p = TerminalProgress(stream=term, delay=0)
    p("read", 0, 5)
    p.note("loading embedding model x…")
    assert term.getvalue().endswith("\nloading embedding model x…\n")
    quiet = FakeTerminal()
    TerminalProgress(enabled=False, stream=quiet).note("loading embedding model x…")
    assert quiet.getvalue() == ""
