"""Start-up stays light: ``ynm --help`` loads no heavy library, and a full-text ``ynm recall``
builds only the models it validates, never the embedder's HTTP client nor the tokenizer's
patterns of Han, kana and Hangul (DESIGN.md, "Interfaces"; STYLE.md, "Fast start-up through
lazy imports"). Each check runs in a fresh interpreter, since imports are once per process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# What a look at the commands must not pay for: pydantic, the git library, the SQLite driver,
# the network, and the layers under the CLI.
HEAVY = ("pydantic", "pygit2", "sqlean", "socket", "ynm.service", "ynm.store", "ynm.index")

# Run by the child after the code under test: its modules, the ynm models whose pydantic
# validator was built, and whether each pattern of Han, kana and Hangul was compiled.
REPORT = """
import json, sys
from pydantic import BaseModel
built = sorted(v.__name__ for name in ("ynm.model.records", "ynm.model.inputs")
               if name in sys.modules for v in vars(sys.modules[name]).values()
               if isinstance(v, type) and issubclass(v, BaseModel) and v.__pydantic_complete__)
text = sys.modules.get("ynm.model.text")
cjk = {f: getattr(text, f).cache_info().currsize
       for f in ("_cjk_char_re", "_cjk_run_re", "_cjk_edge_re")} if text else {}
print(json.dumps({"loaded": globals().get("loaded") or sorted(sys.modules), "built": built,
                  "cjk": cjk}))
"""


def _child(code: str, cwd: Path) -> tuple[dict, str]:
    """The child's report (its last line) and what it printed before."""
    out = subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True,
                         env=dict(os.environ), timeout=120, check=False)
    assert out.returncode == 0, out.stderr
    *printed, report = out.stdout.splitlines()
    return json.loads(report), "\n".join(printed)


def _run_cli(*args: str) -> str:
    """Child code running ``ynm <args>`` in-process, then reporting (pydantic loaded only for
    the report, after the snapshot of the modules the command loaded)."""
    return (f"import sys\nfrom ynm.cli import cli\ntry:\n    cli({list(args)!r}, "
            "standalone_mode=False)\nexcept SystemExit:\n    pass\n"
            "loaded = sorted(sys.modules)\n" + REPORT)


def _heavy(modules: list[str]) -> list[str]:
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


def test_help_loads_nothing_heavy(tmp_path: Path):
    report, printed = _child(_run_cli("--help"), tmp_path)
    loaded = report["loaded"]
    assert "Commands:" in printed
    assert "ynm.cli.outbox" in loaded  # --help reads every command's help
    assert _heavy(loaded) == []


def test_importing_the_models_builds_no_validator(tmp_path: Path):
    report, _ = _child("import ynm.model.inputs\n" + REPORT, tmp_path)
    assert report["built"] == []
    report, _ = _child("from ynm.model.inputs import RecallQuery\nRecallQuery(text='deploys')\n"
                    + REPORT, tmp_path)
    assert report["built"] == ["RecallQuery"]


def test_a_deferred_model_still_validates(tmp_path: Path):
    code = ("from ynm.model.inputs import RememberInput, parse_input\n"
            "from ynm.errors import InvalidInput\n"
            "try:\n    parse_input(RememberInput, {'type': 'semantic', 'content': ' '})\n"
            "except InvalidInput as err:\n    print(err)\n" + REPORT)
    report, printed = _child(code, tmp_path)
    assert printed == "invalid input: content: must not be blank"
    assert report["built"] == ["RememberInput"]


def test_full_text_recall_loads_only_what_it_uses(project: Path, cli_run):
    cli_run("remember", "--type", "semantic", "--level", "distributed",
            "--content", "We deploy the ledger on Tuesdays")
    report, printed = _child(_run_cli("recall", "deploy ledger", "--json"), project)
    assert [hit["content"] for hit in json.loads(printed)] == ["We deploy the ledger on Tuesdays"]
    assert report["built"] == ["RecallQuery"]
    assert "ynm.index.embedders" not in report["loaded"]  # YNM_EMBEDDER=none (conftest)
    assert "urllib.request" not in report["loaded"]
    assert report["cjk"] == {"_cjk_char_re": 0, "_cjk_run_re": 0, "_cjk_edge_re": 0}


def test_a_question_in_chinese_compiles_the_patterns_it_needs(project: Path, cli_run):
    cli_run("remember", "--type", "semantic", "--level", "distributed",
            "--content", "设备清单在机房")
    report, printed = _child(_run_cli("recall", "设备清单", "--json"), project)
    assert [hit["content"] for hit in json.loads(printed)] == ["设备清单在机房"]
    assert report["cjk"]["_cjk_char_re"] == 1
    assert report["cjk"]["_cjk_run_re"] == 1
