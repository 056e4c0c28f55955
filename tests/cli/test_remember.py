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
    assert rec["validTo"] == "2026-02-01T10:00:00.000Z"  # canonical UTC, as ynm stamps
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
    assert err(result) == (
        "Error: invalid input: namespace: working memory must live in session/<id>\n"
        "hint: give the session with --session <id>: the memory then lives in session/<id> "
        "(`ynm session start` makes one)")
    assert result.stdout == ""


def test_working_with_another_namespace_gets_no_session_hint(project, cli_run):
    result = cli_run("remember", "--type", "working", "--content", "x", "--namespace", "team/x")
    assert result.exit_code == 2
    assert err(result) == "Error: invalid input: namespace: working memory must live in session/<id>"


def test_ctrl_c_exits_130_with_one_line(project, cli_run, monkeypatch):
    from ynm.service.ynm import Ynm

    def interrupted(*_args, **_kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(Ynm, "remember", interrupted)
    result = cli_run("remember", "--type", "semantic", "--content", "x")
    assert result.exit_code == 130
    assert err(result) == "Error: interrupted"


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


DATA_HINT = ("hint: --data takes a JSON object of keys and values, quoted for the shell; e.g. "
             """--data '{"ticket": "ABC-1"}'""")


@pytest.mark.parametrize("command", [
    ("remember", "--type", "semantic", "--content", "x"),
    ("supersede", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "--content", "x"),
    ("annotate", "01ARZ3NDEKTSV4RRFFQ69G5FAV"),
])
def test_data_bad_json_says_what_data_takes(project, cli_run, command):
    result = cli_run(*command, "--data", "{bad")
    assert result.exit_code == 2
    first, hint = err(result).splitlines()
    assert first == ("Error: invalid input: --data: not valid JSON (Expecting property name "
                     "enclosed in double quotes: line 1 column 2 (char 1))")
    assert hint == DATA_HINT
    assert exported(cli_run) == []


@pytest.mark.parametrize(("command", "data", "got"), [
    (("remember", "--type", "semantic", "--content", "x"), "[1, 2]", "an array"),
    (("remember", "--type", "semantic", "--content", "x"), '"ABC-1"', "a string"),
    (("remember", "--type", "semantic", "--content", "x"), "3", "a number"),
    (("remember", "--type", "semantic", "--content", "x"), "true", "true"),
    (("remember", "--type", "semantic", "--content", "x"), "null", "null"),
    (("supersede", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "--content", "x"), "[]", "an array"),
    (("annotate", "01ARZ3NDEKTSV4RRFFQ69G5FAV"), "null", "null"),
])
def test_data_not_an_object_says_what_it_got_and_gives_an_example(project, cli_run, command,
                                                                  data, got):
    result = cli_run(*command, "--data", data)
    assert result.exit_code == 2
    assert err(result).splitlines() == [f"Error: invalid input: data: must be an object, got {got}",
                                        DATA_HINT]
    assert exported(cli_run) == []


@pytest.mark.parametrize("command", [
    ("remember", "--type", "semantic", "--content", "x"),
    ("supersede", "01ARZ3NDEKTSV4RRFFQ69G5FAV", "--content", "x"),
    ("annotate", "01ARZ3NDEKTSV4RRFFQ69G5FAV"),
])
@pytest.mark.parametrize(("data", "where"), [
    ('{"n": NaN}', "n"), ('{"n": Infinity}', "n"), ('{"n": -Infinity}', "n"),
    ('{"n": 1e400}', "n"), ('{"a": [1, {"b": -1e999}]}', "a.1.b"),
    ('{"big": 1' + "0" * 400 + "}", "big"),
])
def test_data_with_a_number_json_cannot_hold_is_refused(project, cli_run, command, data,
                                                         where):
    """Python's json reads NaN, Infinity and 1e400; JSON holds none of them, nor a number no
    double holds, and no record holding one could be written."""
    result = cli_run(*command, "--data", data)
    assert result.exit_code == 2
    assert err(result).splitlines() == [
        f"Error: invalid input: data: key {where} is NaN, Infinity or a number out of range, "
        "which JSON cannot hold", DATA_HINT]
    assert exported(cli_run) == []


def test_the_example_data_is_taken(project, cli_run):
    result = cli_run("remember", "--type", "semantic", "--content", "x", "--data",
                     '{"ticket": "ABC-1"}', "--json")
    assert result.exit_code == 0, result.stderr
    assert exported(cli_run)[0]["data"] == {"ticket": "ABC-1"}


def test_links_bad_json(project, cli_run):
    result = cli_run("remember", "--type", "semantic", "--content", "x", "--links", "[oops")
    assert result.exit_code == 2
    first, hint = err(result).splitlines()
    assert re.fullmatch(r"Error: invalid input: --links: not valid JSON \(.+\)", first)
    assert hint.startswith('hint: --links takes a JSON array of {"rel", "to"} objects')


def test_links_unknown_rel(project, cli_run):
    link = [{"rel": "likes", "to": make_record()["id"]}]
    result = cli_run("remember", "--type", "semantic", "--content", "x",
                     "--links", json.dumps(link))
    assert result.exit_code == 2
    assert err(result).startswith("Error: invalid input: links.0.rel: ")


def test_bad_ttl(project, cli_run):
    result = cli_run("remember", "--type", "semantic", "--content", "x", "--ttl", "8 hours")
    assert result.exit_code == 2
    assert err(result) == ("Error: invalid input: ttl: must be an ISO 8601 duration in whole numbers (no fractions) "
        "such as PT8H (8 hours), P30D (30 days), P1W or P1DT12H")


@pytest.mark.parametrize("ttl", ["PT0S", "P0D", "PT0M", "P0Y0M0W0DT0H0M0S"])
def test_a_ttl_of_no_length_is_refused_everywhere_a_ttl_is_taken(project, cli_run, tmp_path,
                                                                  ttl):
    """A working memory with a ttl of no length would expire the moment it is written
    (updatedAt + ttl <= now): remember, supersede and session start refuse it, exit 2, as any
    invalid input. The reference takes it (reference/cli.md §1.3 gives only the grammar)."""
    said = (f"Error: invalid input: ttl: must be longer than zero: {ttl} would expire the "
            "working memory at once; give one such as PT8H (8 hours), P30D (30 days), P1W or "
            "P1DT12H")
    r = cli_run("remember", "--type", "working", "--session", "s1", "--content", "x",
                "--ttl", ttl)
    assert (r.exit_code, err(r), r.stdout) == (2, said, "")
    made = cli_run("remember", "--type", "working", "--session", "s1", "--content", "x",
                   "--ttl", "PT1S", "--json")
    mid = json.loads(made.stdout)["memoryId"]
    r = cli_run("supersede", mid, "--content", "y", "--ttl", ttl)
    assert (r.exit_code, err(r), r.stdout) == (2, said, "")
    r = cli_run("session", "start", "s2", "--ttl", ttl)
    assert (r.exit_code, err(r), r.stdout) == (2, said, "")
    assert len(cli_run("export").stdout.splitlines()) == 1  # nothing of them was written
    # a record stored with such a ttl (by the reference) still reads
    rec = make_record(type="working", namespace="session/s3", ttl=ttl)
    (tmp_path / "zero.jsonl").write_text(json.dumps(rec) + "\n")
    assert cli_run("import", tmp_path / "zero.jsonl").stdout == "imported 1 record(s)\n"
    assert cli_run("show", rec["id"]).exit_code == 0


def test_bad_valid_from(project, cli_run):
    result = cli_run("remember", "--type", "semantic", "--content", "x", "--valid-from", "soon")
    assert result.exit_code == 2
    # the path is the schema field name (camelCase), as for every other field (cli.md §1.3)
    assert err(result) == ("Error: invalid input: validFrom: expected an ISO 8601 date-time "
        "such as 2026-11-30T12:00:00Z, 2026-11-30T17:30:00.250+05:30, 20261130T120000Z "
        "(basic format) or a date 2026-11-30 (midnight UTC)" ", got 'soon'")


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
    assert result.exit_code == 2
    assert err(result).startswith('Error: no mount "nope" (have: personal, project); to add it: ')


def test_mount_level_mismatch(project, cli_run):
    result = cli_run("remember", "--type", "semantic", "--content", "x", "--mount", "project")
    assert result.exit_code == 1
    assert err(result) == 'Error: mount "project" is distributed; cannot take a personal record'


def test_distributed_without_init(git_repo, cli_run, monkeypatch):
    monkeypatch.chdir(git_repo)
    result = cli_run("remember", "--type", "semantic", "--level", "distributed", "--content", "x")
    assert result.exit_code == 1
    assert result.stderr == (
        "Error: no distributed mount: run `ynm init` in the project (or configure a mount)\n"
        f"hint: {git_repo} has no .ynm/config.json: run `ynm init` there (a clone gets it only "
        "when it is committed where ynm init ran)\n")


def test_distributed_redaction_refused(project, cli_run, git):
    result = cli_run("remember", "--type", "semantic", "--level", "distributed",
                     "--content", f"aws key {FAKE_AWS} here")
    assert result.exit_code == 2
    assert err(result) == "Error: refused: content matches 1 secret detector: AWS Access Key"
    assert result.stdout == ""
    assert git(project, "for-each-ref", "refs/notes") == ""
    assert exported(cli_run) == []


def test_distributed_redaction_checks_summary_and_data(project, cli_run, git):
    for extra in (["--summary", FAKE_AWS], ["--data", json.dumps({"k": FAKE_AWS})]):
        result = cli_run("remember", "--type", "semantic", "--level", "distributed",
                         "--content", "clean", *extra)
        assert result.exit_code == 2
        assert "refused: content matches 1 secret detector: AWS Access Key" in result.stderr
    assert git(project, "for-each-ref", "refs/notes") == ""


def test_distributed_redaction_two_detectors(project, cli_run):
    result = cli_run("remember", "--type", "semantic", "--level", "distributed",
                     "--content", f"{FAKE_AWS} and ghp_{'a1' * 18}")
    assert result.exit_code == 2
    assert err(result) == ("Error: refused: content matches 2 secret detectors: "
                           "AWS Access Key, GitHub Token")


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
    assert "refused: content matches 1 secret detector: AWS Access Key" in result.stderr
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


@pytest.mark.parametrize("make", [
    lambda month: f"docs/reference/{month}",
    lambda month: f"docs/semantic/{month}/archive",
    lambda month: f"team/x/episodic/{month}",
])
@pytest.mark.parametrize("parent_first", [True, False])
def test_namespace_colliding_with_another_namespaces_shards_is_refused(
        project, cli_run, git, make, parent_first):
    """A namespace that holds ``<type>/<yyyy-mm>`` after its first segment could need a shard
    ref where another namespace has a ref file (storage.md §7.22): refused with exit 2 in
    either order, and the other namespace keeps working."""
    from datetime import datetime, timezone

    month = datetime.now(timezone.utc).strftime("%Y-%m")
    bad = make(month)
    parent = bad.split("/")[0] if not bad.startswith("team/") else "team/x"

    def write_parent():
        r = cli_run("remember", "--type", "reference", "--level", "distributed",
                    "--namespace", parent, "--content", "API docs live in the wiki")
        assert r.exit_code == 0, r.stderr

    if parent_first:
        write_parent()
    before = git(project, "for-each-ref", "refs/notes")
    r = cli_run("remember", "--type", "reference", "--level", "distributed", "--namespace", bad,
                "--content", "Monthly archive index")
    assert r.exit_code == 2
    assert r.stderr.startswith("Error: invalid input: namespace: namespace must not contain a "
                               "type segment followed by a month")
    assert f"collide with those of namespace '{parent}'" in r.stderr
    assert "Traceback" not in r.stderr
    assert git(project, "for-each-ref", "refs/notes") == before
    if not parent_first:
        write_parent()


def test_namespace_with_type_or_month_segments_alone_is_accepted(project, cli_run):
    for ns in ("reference/2026-12", "docs/reference", "docs/2026-12", "docs/reference-2026-12"):
        r = cli_run("remember", "--type", "semantic", "--level", "distributed",
                    "--namespace", ns, "--content", f"note in {ns}")
        assert r.exit_code == 0, (ns, r.stderr)


def test_existing_colliding_ref_gives_a_clear_error(project, cli_run, git):
    """A store that already holds a colliding ref (written before the rule) gets a one-line
    error naming both refs, exit 1, not git's lock message."""
    from datetime import datetime, timezone

    month = datetime.now(timezone.utc).strftime("%Y-%m")
    head = git(project, "rev-parse", "HEAD")
    foreign = f"refs/notes/ynm/distributed/docs/reference/{month}/semantic/{month}"
    git(project, "update-ref", foreign, head)
    r = cli_run("remember", "--type", "reference", "--level", "distributed", "--namespace",
                "docs", "--content", "API docs live in the wiki")
    assert r.exit_code == 1
    assert r.stderr.strip() == (
        f"Error: cannot create refs/notes/ynm/distributed/docs/reference/{month}: it collides "
        f"with the existing ref {foreign} (a namespace must not be another namespace followed "
        "by <type>/<yyyy-mm>); write to another namespace")


# ----------------------------------------------------------------- content from stdin or a file

BIG = ("Ünïcödé 内容 — " * 4700)[:65536]  # 64 KiB characters of non-ASCII text


@pytest.mark.parametrize("how", ["stdin", "file", "file-bom"])
def test_content_from_stdin_or_a_file(project, cli_run, tmp_path, how):
    path = tmp_path / "content.md"
    path.write_bytes((b"\xef\xbb\xbf" if how == "file-bom" else b"") + BIG.encode())
    args = ["--content", "-"] if how == "stdin" else ["--content-file", path]
    result = cli_run("remember", "--type", "semantic", "--level", "distributed", *args,
                     "--json", input=BIG.encode() if how == "stdin" else None)
    assert result.exit_code == 0, result.stderr
    mid = json.loads(result.stdout)["memoryId"]
    shown = json.loads(cli_run("show", mid, "--json").stdout)
    assert shown["current"]["content"] == BIG


@pytest.mark.parametrize("sent,stored", [
    (b"Deploys go out on Tuesdays.\n", "Deploys go out on Tuesdays."),  # echo, heredoc
    (b"Deploys go out on Tuesdays.\r\n", "Deploys go out on Tuesdays."),
    (b"Two lines.\nThe second.\n\n", "Two lines.\nThe second.\n"),  # only one goes
    (b"No line break", "No line break"),
])
@pytest.mark.parametrize("how", ["stdin", "file"])
def test_one_final_line_break_of_stdin_or_a_file_is_dropped(project, cli_run, tmp_path, how,
                                                             sent, stored):
    path = tmp_path / "content.md"
    path.write_bytes(sent)
    args = ["--content", "-"] if how == "stdin" else ["--content-file", path]
    result = cli_run("remember", "--type", "semantic", *args, "--json",
                     input=sent if how == "stdin" else None)
    assert result.exit_code == 0, result.stderr
    mid = json.loads(result.stdout)["memoryId"]
    assert json.loads(cli_run("show", mid, "--json").stdout)["current"]["content"] == stored
    result = cli_run("supersede", mid, *args, "--summary", "again", "--json",
                     input=sent if how == "stdin" else None)
    assert result.exit_code == 0, result.stderr
    assert json.loads(cli_run("show", mid, "--json").stdout)["current"]["content"] == stored


def test_supersede_content_from_a_file(project, cli_run, tmp_path):
    mid = json.loads(cli_run("remember", "--type", "semantic", "--content", "old",
                             "--json").stdout)["memoryId"]
    path = tmp_path / "new.md"
    path.write_text("# New version\n\nwith détails\n", encoding="utf-8")
    assert cli_run("supersede", mid, "--content-file", path).exit_code == 0
    state = json.loads(cli_run("show", mid, "--json").stdout)
    assert state["current"]["content"] == "# New version\n\nwith détails"
    assert state["current"]["summary"] == "New version"


@pytest.mark.parametrize(("args", "stdin", "message"), [
    (["--content", "x", "--content-file", "FILE"], None, "give --content or --content-file, not both"),
    ([], None, "missing --content (text, or - for standard input) or --content-file"),
    (["--content-file", "LATIN1"], None, "invalid input: content: --content-file is not UTF-8"),
    (["--content", "-"], b"caf\xe9", "invalid input: content: --content - is not UTF-8"),
    (["--content", "-"], b"   \n", "invalid input: content: must not be blank"),
])
def test_content_input_problems_are_refused(project, cli_run, tmp_path, git, args, stdin,
                                            message):
    (tmp_path / "f.md").write_text("fine")
    (tmp_path / "l1.md").write_bytes("café".encode("latin-1"))
    args = [{"FILE": tmp_path / "f.md", "LATIN1": tmp_path / "l1.md"}.get(a, a) for a in args]
    result = cli_run("remember", "--type", "semantic", "--level", "distributed", *args,
                     input=stdin)
    assert result.exit_code == 2
    assert message in result.stderr
    assert git(project, "for-each-ref", "refs/notes") == ""


@pytest.mark.parametrize("where", ["before", "after", "short-before", "short-after"])
def test_cwd_before_or_after_the_command_name(project, cli_run, tmp_path, monkeypatch, where):
    monkeypatch.chdir(tmp_path)
    flag = "--cwd" if where.startswith("b") or where == "after" else "-C"
    remember = ["remember", "--type", "semantic", "--level", "distributed", "--content",
                "Deploys on Tuesdays", "--json"]
    args = ([flag, project, *remember] if where.endswith("before") else [*remember, flag, project])
    result = cli_run(*args)
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["mount"] == "project"
    listed = json.loads(cli_run("-C", project, "list", "--json").stdout)
    assert [m["memoryId"] for m in listed] == [json.loads(result.stdout)["memoryId"]]


def test_cwd_after_the_command_wins_and_a_missing_one_is_refused(project, cli_run, tmp_path):
    assert cli_run("-C", tmp_path, "list", "--cwd", project, "--json").exit_code == 0
    r = cli_run("-C", tmp_path / "nope", "list")
    assert r.exit_code == 2 and "does not exist" in r.stderr


@pytest.mark.parametrize("memory_type", ["semantic", "episodic", "procedural", "reference",
                                         "reflective"])
def test_a_ttl_on_memory_that_never_expires_is_refused(project, cli_run, git, memory_type):
    """Only working memory expires (seed 000: ttl is for working memory only): a ttl on any
    other type would be stored and never acted on, so it is refused, on remember and
    supersede alike."""
    r = cli_run("remember", "--type", memory_type, "--level", "distributed", "--content",
                "Deploys go out on Tuesdays", "--ttl", "PT1S")
    assert r.exit_code == 2
    assert err(r) == (f"Error: invalid input: ttl: only working memory expires; a "
                      f"{memory_type} memory takes no ttl")
    assert git(project, "for-each-ref", "refs/notes") == ""
    mid = json.loads(cli_run("remember", "--type", memory_type, "--content", "Deploys",
                             "--json").stdout)["memoryId"]
    r = cli_run("supersede", mid, "--content", "Deploys on Wednesdays", "--ttl", "PT1H")
    assert r.exit_code == 2 and "only working memory expires" in err(r)


@pytest.mark.parametrize("command", ["remember", "annotate"])
def test_a_link_with_a_key_it_does_not_take_is_refused(project, cli_run, command):
    """--links is strict as the reference's input schemas are (cli.md §1.3): an unknown key
    in a link is refused, not dropped; a stored record's unknown link keys are still dropped
    (storage.md §7.11, tests/model/test_records.py)."""
    target = json.loads(cli_run("remember", "--type", "semantic", "--content", "target",
                                "--json").stdout)["memoryId"]
    links = json.dumps([{"rel": "about", "to": target, "note": "why"}])
    args = (["remember", "--type", "semantic", "--content", "linked"] if command == "remember"
            else ["annotate", target])
    result = cli_run(*args, "--links", links)
    assert result.exit_code == 2
    assert err(result).splitlines()[0] == "Error: invalid input: links.0.note: unknown field"
    fine = cli_run(*args, "--links", json.dumps([{"rel": "about", "to": target}]))
    assert fine.exit_code == 0, fine.stderr
