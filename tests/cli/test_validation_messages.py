"""Every validation failure a user can meet reads ``invalid input: <field path>: <plain
message>`` on one line: no pydantic wording, ``[type=...]``, input dumps or URLs. CLI flags,
configuration files and variables, imported lines, MCP tool inputs and hook input all go
through the one formatter (ynm.model.records.validation_message; reference/cli.md §2)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from pydantic import BaseModel, ValidationError

from ynm.model.records import validation_message

from .conftest import make_record

NOISE = ("Input should", "type=", "pydantic", "http", "validation error", "Field required",
         "Extra inputs", "input_value", "String should")


def clean(text: str) -> str:
    assert "\n" not in text.strip(), text
    for word in NOISE:
        assert word not in text, (word, text)
    return text.strip()


@pytest.mark.parametrize(("args", "message"), [
    (("remember", "--type", "semantic", "--content", "x", "--confidence", "7"),
     "confidence: must be at most 1"),
    (("remember", "--type", "semantic", "--content", "x", "--data", "[1]"),
     "data: must be an object, got an array"),
    (("remember", "--type", "semantic", "--content", "x", "--links", "[1]"),
     "links.0: must be an object"),
    (("remember", "--type", "semantic", "--content", "x", "--links",
      '[{"rel": "likes", "to": "01ARZ3NDEKTSV4RRFFQ69G5FAV"}]'),
     "links.0.rel: must be one of supersedes, derives-from, contradicts, supports, about, "
     "in-session"),
    (("remember", "--type", "semantic", "--content", "x", "--summary", "s" * 281),
     "summary: must be at most 280 characters"),
    (("recall", "x", "--limit", "0"), "limit: must be at least 1"),
    (("context", "--budget-tokens", "0"), "budgetTokens: must be at least 1"),
])
def test_cli_flags(project, cli_run, args, message):
    result = cli_run(*args)
    assert result.exit_code == 2
    # the message is one line; a line after it can only be a hint (what the flag takes)
    first, *rest = result.stderr.splitlines()
    assert clean(first) == f"Error: invalid input: {message}"
    assert all(line.startswith("hint: ") for line in rest), rest


@pytest.mark.parametrize(("config", "message"), [
    ({"bogus": 1}, "bogus: unknown key"),
    ({"hooks": "maybe"}, "hooks: must be true or false"),
    ({"redactionDetectors": "all"}, "redactionDetectors: must be one of default, entropy, none"),
    ({"remote": 5}, "remote: must be text (a string)"),
    ({"anchor": "abc1234"}, ("anchor: must be a full commit id (40 or 64 lowercase hex digits; "
                             "`git rev-parse <abbreviated id>` prints it); `ynm init --anchor "
                             "<commit>` replaces it (an abbreviated id is resolved; `git "
                             "rev-list --max-parents=0 HEAD` prints the root commit)")),
    ({"mounts": [{"id": "org", "level": "team", "path": "/x"}]},
     "mounts.0.level: must be one of personal, distributed"),
])
def test_config_files(project, cli_run, config, message):
    path = project / ".ynm" / "config.json"
    path.write_text(json.dumps(config))
    result = cli_run("list")
    assert result.exit_code == 2
    assert clean(result.stderr) == f"Error: invalid input: {path}: {message}"


def test_config_variables(project, cli_run, monkeypatch):
    monkeypatch.setenv("YNM_MOUNTS", json.dumps([{"id": 1, "colour": "red"}]))
    result = cli_run("list")
    assert result.exit_code == 2
    assert clean(result.stderr) == (
        "Error: invalid input: YNM_MOUNTS: 0.id: must be text (a string); YNM_MOUNTS: "
        "0.level: required; YNM_MOUNTS: 0.colour: unknown key")


@pytest.mark.parametrize(("change", "message"), [
    ({"type": "bogus"}, "type: must be one of working, episodic, semantic, procedural, "
                        "reflective, reference"),
    ({"tags": "x"}, "tags: must be a list"),
    ({"colour": "red"}, "colour: unknown field"),
    ({"importance": "high"}, "importance: must be a number"),
    ({"provenance": {}}, "provenance.actor: required"),
])
def test_import_lines(project, cli_run, change, message):
    line = json.dumps(make_record(**change))
    out = json.loads(cli_run("import", "--json", input=line + "\n").stdout)
    assert out["imported"] == 0
    assert [clean(p) for p in out["problems"]] == [f"line 1: {message}"]


def test_hook_input_and_config(project):
    (project / ".ynm" / "config.json").write_text('{"hooks": "maybe"}')
    proc = subprocess.run([sys.executable, "-m", "ynm", "hook", "session-start"],
                          input=json.dumps({"session_id": "s1", "cwd": str(project)}),
                          capture_output=True, text=True, timeout=30, cwd=project)
    assert proc.returncode == 0 and proc.stdout == "{}\n"
    assert clean(proc.stderr) == (f"ynm hook: invalid input: {project}/.ynm/config.json: "
                                  "hooks: must be true or false")


class _Probe(BaseModel):
    level: int


def test_a_validation_error_that_escapes_a_command_is_one_line(project, cli_run, monkeypatch):
    from ynm.service.ynm import Ynm

    def boom(self, q):
        _Probe.model_validate({"level": "high"})

    monkeypatch.setattr(Ynm, "list", boom)
    result = cli_run("list")
    assert result.exit_code == 2
    assert clean(result.stderr) == "Error: invalid input: level: must be a whole number"


def test_the_formatter_drops_union_members_and_keeps_one_failure_per_field():
    class M(BaseModel):
        when: int | list[int]
        name: str

    with pytest.raises(ValidationError) as info:
        M.model_validate({"when": "soon", "name": None, "extra_ok": 1})
    assert validation_message(info.value) == "when: must be a whole number; name: must be text (a string)"


EMOJI = "\U0001F600"  # outside the Basic Multilingual Plane: two UTF-16 code units


@pytest.mark.parametrize(("args", "field", "limit"), [
    (("remember", "--content", "x", "--summary", EMOJI * 141), "summary", 280),
    (("remember", "--content", EMOJI * 32769), "content", 65536),
    (("remember", "--content", "x", "--subject", EMOJI * 101), "subject", 200),
    (("recall", "x", "--subject", EMOJI * 101), "subject", 200),
])
def test_limits_count_utf16_units_and_refuse_with_exit_2(project, cli_run, args, field, limit):
    # The store counts lengths in UTF-16 code units as the reference does; the input check
    # counted characters, so 141 emoji passed it and failed when the record was built (exit 1)
    extra = ("--type", "semantic", "--level", "distributed") if args[0] == "remember" else ()
    result = cli_run(*args, *extra)
    assert result.exit_code == 2, result.stderr
    assert f"invalid input: {field}: must be at most {limit} characters" in clean(result.stderr)


def test_emoji_within_the_limits_are_written(project, cli_run):
    result = cli_run("remember", "--type", "semantic", "--level", "distributed",
                     "--content", EMOJI * 10, "--summary", EMOJI * 140, "--tags", EMOJI * 32)
    assert result.exit_code == 0, result.stderr
    long_tag = cli_run("remember", "--type", "semantic", "--level", "distributed",
                       "--content", "x", "--tags", EMOJI * 33)
    assert long_tag.exit_code == 2 and "each tag must be 1..64 characters" in long_tag.stderr

