"""``ynm remember`` (reference/cli.md §4.20, §2, §3.1, §7.5, §8 items 7, 9, 26)."""

from __future__ import annotations

import json
import re

import pytest

from .conftest import USER, make_record

ULID_RE = re.compile(r"^[0-9A-HJKMNP-TV-Z]{26}$")
FAKE_AWS = "AKIA" + "ABCDEFGHIJKLMNOP"


def exported(cli_run, *args: str) -> list[dict]:
    result = cli_run("export", *args)
    assert result.exit_code == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def only_record(cli_run, *args: str) -> dict:
    records = exported(cli_run, *args)
    assert len(records) == 1
    return records[0]


# ------------------------------------------------------------------------------ success


def test_human_output_and_personal_default(project, cli_run):
    result = cli_run("remember", "--type", "semantic", "--content", "We deploy on Tuesdays")
    assert result.exit_code == 0, result.stderr
    m = re.fullmatch(r"remembered (\S+) in personal\n", result.stdout)
    assert m and ULID_RE.match(m.group(1))
    assert result.stderr == ""
    rec = only_record(cli_run)
    assert rec["id"] == rec["memoryId"] == m.group(1)
    assert rec["op"] == "create" and rec["level"] == "personal"
    assert rec["namespace"] == f"user/{USER}"
    assert rec["summary"] == "We deploy on Tuesdays"
    assert rec["importance"] == 0.5 and rec["confidence"] == 1
    assert rec["provenance"] == {"actor": f"user:{USER}"}
    assert "ttl" not in rec


def test_json_write_result(project, cli_run, git, ynm_home):
    result = cli_run("remember", "--type", "semantic", "--content", "x y z", "--json")
    assert result.exit_code == 0
    assert result.stdout.endswith("}\n") and result.stdout.startswith("{\n  \"memoryId\"")
    out = json.loads(result.stdout)
    assert list(out) == ["memoryId", "recordId", "mount", "revision"]
    assert out["recordId"] == out["memoryId"]
    assert result.stdout.count('"memoryId"') == 1
    assert out["mount"] == "personal"
    rec = only_record(cli_run)
    ref = f"refs/notes/ynm/personal/user/{USER}/semantic/{rec['recordedAt'][:7]}"
    assert out["revision"] == git(ynm_home / "store.git", "rev-parse", ref)


def test_distributed_goes_to_project_with_common_namespace(project, cli_run, git):
    out = json.loads(cli_run("remember", "--type", "semantic", "--level", "distributed",
                             "--content", "Team fact", "--json").stdout)
    assert out["mount"] == "project"
    rec = only_record(cli_run, "--mount", "project")
    assert rec["level"] == "distributed" and rec["namespace"] == "common"
    ref = f"refs/notes/ynm/distributed/common/semantic/{rec['recordedAt'][:7]}"
    assert out["revision"] == git(project, "rev-parse", ref)


def test_personal_common_namespace_is_rewritten(project, cli_run):
    assert cli_run("remember", "--type", "semantic", "--namespace", "common",
                   "--content", "x").exit_code == 0
    assert only_record(cli_run)["namespace"] == f"user/{USER}"


def test_explicit_personal_namespace_is_kept(project, cli_run):
    assert cli_run("remember", "--type", "semantic", "--namespace", "team/pay",
                   "--content", "x").exit_code == 0
    assert only_record(cli_run)["namespace"] == "team/pay"


def test_distributed_namespace_flag(project, cli_run):
    assert cli_run("remember", "--type", "semantic", "--level", "distributed",
                   "--namespace", "org/team", "--content", "x").exit_code == 0
    assert only_record(cli_run, "--level", "distributed")["namespace"] == "org/team"


def test_working_memory_default_ttl(project, cli_run):
    result = cli_run("remember", "--type", "working", "--namespace", "session/abc",
                     "--content", "scratch")
    assert result.exit_code == 0, result.stderr
    rec = only_record(cli_run)
    assert rec["type"] == "working" and rec["namespace"] == "session/abc"
    assert rec["ttl"] == "PT8H"


def test_explicit_ttl(project, cli_run):
    assert cli_run("remember", "--type", "working", "--namespace", "session/abc",
                   "--content", "scratch", "--ttl", "P1DT2H").exit_code == 0
    assert only_record(cli_run)["ttl"] == "P1DT2H"


def test_summary_given(project, cli_run):
    assert cli_run("remember", "--type", "semantic", "--content", "long body",
                   "--summary", "short").exit_code == 0
    assert only_record(cli_run)["summary"] == "short"


def test_summary_derived_from_first_non_blank_line(project, cli_run):
    assert cli_run("remember", "--type", "semantic",
                   "--content", "\n  \n## Deploys  \nbody text").exit_code == 0
    assert only_record(cli_run)["summary"] == "Deploys"


def test_summary_derived_is_capped(project, cli_run):
    assert cli_run("remember", "--type", "semantic", "--content", "w" * 300).exit_code == 0
    assert only_record(cli_run)["summary"] == "w" * 277 + "..."


def test_all_optional_fields(project, cli_run):
    target = make_record()["id"]
    result = cli_run(
        "remember", "--type", "reference", "--content", "body", "--subject", "entity:ledger",
        "--tags", "a, b,", "--tags", "c", "--data", '{"k": "v", "n": 2}',
        "--data-schema", "shape/v1", "--importance", "0.9", "--confidence", "0.25",
        "--valid-from", "2026-01-01", "--valid-to", "2026-02-01T10:00:00Z",
        "--session", "sess-1", "--source", "https://example.com/t/1",
        "--links", json.dumps([{"rel": "about", "to": target}]),
    )
    assert result.exit_code == 0, result.stderr
    rec = only_record(cli_run)
    assert rec["subject"] == "entity:ledger"
    assert rec["tags"] == ["a", "b", "c"]
    assert rec["data"] == {"k": "v", "n": 2}
    assert rec["dataSchema"] == "shape/v1"
    assert rec["importance"] == 0.9 and rec["confidence"] == 0.25
    assert rec["validFrom"] == "2026-01-01T00:00:00.000Z"
    assert rec["validTo"] == "2026-02-01T10:00:00Z"
    assert rec["provenance"] == {"actor": f"user:{USER}", "session": "sess-1",
                                 "source": "https://example.com/t/1"}
    assert rec["links"] == [{"rel": "about", "to": target}]


def test_mount_flag(project, cli_run):
    out = json.loads(cli_run("remember", "--type", "semantic", "--level", "distributed",
                             "--mount", "project", "--content", "x", "--json").stdout)
    assert out["mount"] == "project"


def test_cwd_flag(project, cli_run, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = cli_run("remember", "--type", "semantic", "--level", "distributed",
                     "--content", "x", "--cwd", project)
    assert result.exit_code == 0, result.stderr
    assert result.stdout.endswith(" in project\n")


def test_personal_write_outside_a_repository(tmp_path, cli_run, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = cli_run("remember", "--type", "semantic", "--content", "x")
    assert result.exit_code == 0, result.stderr
    assert result.stdout.endswith(" in personal\n")


def test_redaction_does_not_apply_to_personal(project, cli_run):
    result = cli_run("remember", "--type", "semantic", "--content", f"key {FAKE_AWS}")
    assert result.exit_code == 0, result.stderr
    assert only_record(cli_run)["content"] == f"key {FAKE_AWS}"


def test_similar_memory_note(project, cli_run):
    """§4.20 / algorithms §2.10: a second near-identical memory prints a note line."""
    first = json.loads(cli_run("remember", "--type", "semantic", "--content",
                               "The ledger service deploys every Tuesday morning",
                               "--json").stdout)
    result = cli_run("remember", "--type", "semantic", "--content",
                     "The ledger service deploys every Tuesday morning")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert len(lines) == 2
    assert lines[1] == (
        f"note: 1 similar memory exists: {first['memoryId']} "
        "(The ledger service deploys every Tuesday morning). If one of them is the same fact, "
        "prefer `ynm supersede` over a duplicate."
    )


def test_similar_memory_guidance_in_json(project, cli_run):
    cli_run("remember", "--type", "semantic", "--content", "alpha beta gamma delta")
    out = json.loads(cli_run("remember", "--type", "semantic", "--content",
                             "alpha beta gamma delta", "--json").stdout)
    assert list(out) == ["memoryId", "recordId", "mount", "revision", "guidance"]
    assert out["guidance"].startswith("1 similar memory exists: ")


def test_no_note_for_unrelated_memory(project, cli_run):
    cli_run("remember", "--type", "semantic", "--content", "alpha beta gamma delta")
    out = json.loads(cli_run("remember", "--type", "semantic", "--content",
                             "unrelated words entirely", "--json").stdout)
    assert "guidance" not in out


def test_similar_note_for_chinese_and_japanese(project, cli_run):
    """Overlap words include the character pairs of Han and kana, so a repeated note in
    Chinese is similar, and two sharing only a Latin word are not."""
    for text in ["设备清单：NAS 在机房二号柜", "サーバーの設定を変更した"]:
        first = json.loads(cli_run("remember", "--type", "semantic", "--content", text,
                                   "--json").stdout)
        out = json.loads(cli_run("remember", "--type", "semantic", "--content", text,
                                 "--json").stdout)
        assert out["guidance"].startswith(f"1 similar memory exists: {first['memoryId']} ")
    out = json.loads(cli_run("remember", "--type", "semantic", "--content",
                             "NAS 的密码在保险箱里", "--json").stdout)
    assert "guidance" not in out


# ------------------------------------------------------------------------------- errors


def err(result) -> str:
    return result.stderr.strip()


def test_working_without_session_namespace(project, cli_run):
    result = cli_run("remember", "--type", "working", "--content", "x")
    assert result.exit_code == 2
    assert err(result) == "Error: invalid input: namespace: working memory must live in session/<id>"
    assert result.stdout == ""


def test_importance_not_a_number(project, cli_run):
    result = cli_run("remember", "--type", "semantic", "--content", "x", "--importance", "abc")
    assert result.exit_code == 2
    assert err(result).startswith("Error: invalid input: importance: ")


def test_importance_out_of_range(project, cli_run):
    result = cli_run("remember", "--type", "semantic", "--content", "x", "--importance", "1.5")
    assert result.exit_code == 2
    assert err(result).startswith("Error: invalid input: importance: ")


def test_confidence_not_a_number(project, cli_run):
    result = cli_run("remember", "--type", "semantic", "--content", "x", "--confidence", "nope")
    assert result.exit_code == 2
    assert err(result).startswith("Error: invalid input: confidence: ")


def test_data_bad_json(project, cli_run):
    result = cli_run("remember", "--type", "semantic", "--content", "x", "--data", "{bad")
    assert result.exit_code == 2
    assert re.fullmatch(r"Error: invalid input: --data: not valid JSON \(.+\)", err(result))
    assert exported(cli_run) == []


def test_data_not_an_object(project, cli_run):
    result = cli_run("remember", "--type", "semantic", "--content", "x", "--data", "[1, 2]")
    assert result.exit_code == 2
    assert err(result).startswith("Error: invalid input: data: ")


def test_links_bad_json(project, cli_run):
    result = cli_run("remember", "--type", "semantic", "--content", "x", "--links", "[oops")
    assert result.exit_code == 2
    assert re.fullmatch(r"Error: invalid input: --links: not valid JSON \(.+\)", err(result))


def test_links_unknown_rel(project, cli_run):
    link = [{"rel": "likes", "to": make_record()["id"]}]
    result = cli_run("remember", "--type", "semantic", "--content", "x",
                     "--links", json.dumps(link))
    assert result.exit_code == 2
    assert err(result).startswith("Error: invalid input: links.0.rel: ")


def test_bad_ttl(project, cli_run):
    result = cli_run("remember", "--type", "semantic", "--content", "x", "--ttl", "8 hours")
    assert result.exit_code == 2
    assert err(result) == "Error: invalid input: ttl: must be an ISO 8601 duration"


def test_bad_valid_from(project, cli_run):
    result = cli_run("remember", "--type", "semantic", "--content", "x", "--valid-from", "soon")
    assert result.exit_code == 2
    # the path is the schema field name (camelCase), as for every other field (cli.md §1.3)
    assert err(result) == "Error: invalid input: validFrom: expected an ISO 8601 date-time"


def test_bad_namespace(project, cli_run):
    result = cli_run("remember", "--type", "semantic", "--content", "x", "--namespace", "Bad NS")
    assert result.exit_code == 2
    assert err(result).startswith("Error: invalid input: namespace: ")


def test_type_required(project, cli_run):
    result = cli_run("remember", "--content", "x")
    assert result.exit_code == 2
    assert "--type" in result.stderr


def test_content_required(project, cli_run):
    result = cli_run("remember", "--type", "semantic")
    assert result.exit_code == 2
    assert "--content" in result.stderr


def test_empty_content(project, cli_run):
    result = cli_run("remember", "--type", "semantic", "--content", "")
    assert result.exit_code == 2
    assert err(result).startswith("Error: invalid input: content: ")


def test_unknown_type(project, cli_run):
    result = cli_run("remember", "--type", "fact", "--content", "x")
    assert result.exit_code == 2


def test_unknown_level(project, cli_run):
    result = cli_run("remember", "--type", "semantic", "--level", "team", "--content", "x")
    assert result.exit_code == 2


def test_unknown_mount(project, cli_run):
    result = cli_run("remember", "--type", "semantic", "--content", "x", "--mount", "nope")
    assert result.exit_code == 1
    assert err(result) == 'Error: no mount "nope" (have: personal, project)'


def test_mount_level_mismatch(project, cli_run):
    result = cli_run("remember", "--type", "semantic", "--content", "x", "--mount", "project")
    assert result.exit_code == 1
    assert err(result) == 'Error: mount "project" is distributed; cannot take a personal record'


def test_distributed_without_init(git_repo, cli_run, monkeypatch):
    monkeypatch.chdir(git_repo)
    result = cli_run("remember", "--type", "semantic", "--level", "distributed", "--content", "x")
    assert result.exit_code == 1
    assert err(result) == (
        "Error: no distributed mount: run `ynm init` in the project (or configure a mount)"
    )


def test_distributed_redaction_refused(project, cli_run, git):
    result = cli_run("remember", "--type", "semantic", "--level", "distributed",
                     "--content", f"aws key {FAKE_AWS} here")
    assert result.exit_code == 2
    assert err(result) == "Error: refused: content matches 1 redaction pattern: AKIA[0-9A-Z]{16}"
    assert result.stdout == ""
    assert git(project, "for-each-ref", "refs/notes") == ""
    assert exported(cli_run) == []


def test_distributed_redaction_checks_summary_and_data(project, cli_run, git):
    for extra in (["--summary", FAKE_AWS], ["--data", json.dumps({"k": FAKE_AWS})]):
        result = cli_run("remember", "--type", "semantic", "--level", "distributed",
                         "--content", "clean", *extra)
        assert result.exit_code == 2
        assert "refused: content matches 1 redaction pattern" in result.stderr
    assert git(project, "for-each-ref", "refs/notes") == ""


def test_distributed_redaction_two_patterns(project, cli_run):
    result = cli_run("remember", "--type", "semantic", "--level", "distributed",
                     "--content", f"{FAKE_AWS} and ghp_{'a' * 24}")
    assert result.exit_code == 2
    assert err(result) == ("Error: refused: content matches 2 redaction patterns: "
                           "AKIA[0-9A-Z]{16}, gh[pousr]_[A-Za-z0-9]{20,}")


def test_data_schema_too_long(project, cli_run):
    result = cli_run("remember", "--type", "semantic", "--content", "x",
                     "--data-schema", "a" * 101)
    assert result.exit_code == 2
    assert err(result).startswith("Error: invalid input: dataSchema: ")


@pytest.mark.parametrize("flag", ["--tags", "--subject", "--source", "--session", "--summary"])
def test_redaction_reads_every_text_of_a_distributed_record(project, cli_run, flag):
    """ynm gates every text a record carries, not only content, summary and data (README)."""
    secret = "AKIA" + "ABCDEFGHIJKLMNOP"
    result = cli_run("remember", "--type", "semantic", "--level", "distributed",
                     "--content", "harmless", flag, f"x-{secret}")
    assert result.exit_code == 2
    assert "refused: content matches 1 redaction pattern: AKIA[0-9A-Z]{16}" in result.stderr
    assert cli_run("list", "--json", "--level", "distributed").stdout.strip() == "[]"


def test_a_non_number_importance_says_so(project, cli_run):
    result = cli_run("remember", "--type", "semantic", "--content", "x", "--importance", "abc")
    assert result.exit_code == 2
    assert "invalid input: importance: expected a number" in result.stderr


def test_blank_content_is_refused(project, cli_run):
    for content in ("", "   ", "\n\n"):
        result = cli_run("remember", "--type", "semantic", "--content", content)
        assert result.exit_code == 2
        assert "invalid input: content: must not be blank" in result.stderr
