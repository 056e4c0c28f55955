"""The write lifecycle end to end through the CLI: supersede, annotate, pin, forget, revive,
purge; sessions and working memory; review (reference/cli.md §4.1, §4.7, §4.15-§4.17, §4.21,
§4.23, §4.25; seed 000 fold rules)."""

from __future__ import annotations

import json
import subprocess
import time

import pytest


def ok(result) -> str:
    assert result.exit_code == 0, result.stderr
    return result.stdout


def js(result):
    return json.loads(ok(result))


def export_records(cli_run) -> list[dict]:
    return [json.loads(line) for line in ok(cli_run("export")).splitlines()]


def records_of(cli_run, memory_id: str) -> list[dict]:
    recs = [r for r in export_records(cli_run) if r["memoryId"] == memory_id]
    return sorted(recs, key=lambda r: (r["recordedAt"], r["id"]))


def folded(cli_run, memory_id: str) -> dict:
    return next(m for m in js(cli_run("list", "--json", "--include-tombstoned"))
                if m["memoryId"] == memory_id)


def test_the_whole_lifecycle_writes_exactly_the_prescribed_records(project, cli_run):
    w = js(cli_run("remember", "--type", "semantic", "--level", "distributed",
                   "--content", "Deploys go out on Tuesdays", "--importance", "0.8",
                   "--tags", "deploy", "--json"))
    mid = w["memoryId"]
    assert w["recordId"] == mid and w["mount"] == "project"
    [c] = records_of(cli_run, mid)
    assert (c["op"], c["id"], c["importance"], c["confidence"]) == ("create", mid, 0.8, 1)

    s1 = js(cli_run("supersede", "--memory-id", mid, "--content", "Deploys go out on Wednesdays",
                    "--json"))
    recs = records_of(cli_run, mid)
    assert [r["op"] for r in recs] == ["create", "supersede"]
    sup = recs[1]
    assert sup["id"] == s1["recordId"] and sup["links"] == [{"rel": "supersedes", "to": mid}]
    assert sup["summary"] == "Deploys go out on Wednesdays"
    # a supersede writes no importance/confidence the caller did not give (reference bug 7.18)
    assert "importance" not in sup and "confidence" not in sup and "pinned" not in sup
    assert (sup["type"], sup["level"], sup["namespace"]) == ("semantic", "distributed", "common")
    assert folded(cli_run, mid)["importance"] == 0.8

    ok(cli_run("supersede", "--memory-id", mid, "--content", "Deploys go out on Thursdays",
               "--subject", "topic:deploys"))
    ok(cli_run("annotate", "--memory-id", mid, "--tags", "release,ops", "--needs-review",
               "--reason", "check the day"))
    recs = records_of(cli_run, mid)
    assert [r["op"] for r in recs] == ["create", "supersede", "supersede", "annotate"]
    ann = recs[-1]
    assert ann["tags"] == ["release", "ops"] and ann["needsReview"] is True
    assert "content" not in ann and ann["reason"] == "check the day"
    m = folded(cli_run, mid)
    assert m["tags"] == ["deploy", "release", "ops"] and m["needsReview"] is True
    assert m["subject"] == "topic:deploys" and m["current"]["content"] == "Deploys go out on Thursdays"

    assert ok(cli_run("pin", mid)).strip() == f"pinned {mid}"
    pin = records_of(cli_run, mid)[-1]
    assert (pin["op"], pin["pinned"], pin["reason"]) == ("annotate", True, "pinned")

    out = ok(cli_run("forget", "--memory-id", mid, "--reason", "wrong day"))
    assert out.startswith(f"forgot {mid} (record ")
    tomb = records_of(cli_run, mid)[-1]
    assert (tomb["op"], tomb["reason"], tomb["tags"], tomb["links"]) == (
        "tombstone", "wrong day", [], [])
    assert js(cli_run("list", "--json")) == []
    assert js(cli_run("recall", "deploys", "--json")) == []
    m = folded(cli_run, mid)
    assert m["tombstoned"] is True and m["tombstoneReason"] == "wrong day" and m["versions"] == 6

    ok(cli_run("supersede", "--memory-id", mid, "--content", "Deploys go out on Fridays"))
    m = folded(cli_run, mid)
    assert m["tombstoned"] is False and m["versions"] == 7  # supersede revives
    assert m["tombstoneReason"] == "wrong day"  # ... and keeps the reason (storage.md §2.4)
    assert m["pinned"] is True and m["importance"] == 0.8  # kept across supersedes
    assert [h["memoryId"] for h in js(cli_run("recall", "fridays", "--json"))] == [mid]

    assert cli_run("purge", mid, "--reason", "gdpr").exit_code == 2  # no --yes: nothing changes
    assert len(records_of(cli_run, mid)) == 7
    p = js(cli_run("purge", mid, "--reason", "gdpr request", "--yes", "--json"))
    assert p == {"memoryId": mid, "removed": 7, "mount": "project"}
    [marker] = records_of(cli_run, mid)
    assert (marker["op"], marker["reason"]) == ("purge-marker", "gdpr request")
    assert js(cli_run("list", "--json", "--include-tombstoned")) == []
    again = cli_run("purge", mid, "--reason", "again", "--yes")  # the marker tells
    assert again.exit_code == 0 and again.stdout.strip() == f"unchanged: {mid} already purged"
    assert len(records_of(cli_run, mid)) == 1


def test_edits_of_unknown_and_malformed_ids(project, cli_run):
    unknown = "01HF7YAT00AAAAAAAAAAAAAAAA"
    for args in (["supersede", "--memory-id", unknown, "--content", "x"],
                 ["annotate", "--memory-id", unknown, "--tags", "x"],
                 ["forget", "--memory-id", unknown], ["pin", unknown], ["promote", unknown],
                 ["purge", unknown, "--reason", "r", "--yes"], ["review", "clear", unknown]):
        r = cli_run(*args)
        assert r.exit_code == 1 and f"unknown memory {unknown}" in r.stderr, args
    for args in (["supersede", "--memory-id", "nope", "--content", "x"], ["pin", "nope"],
                 ["forget", "--memory-id", "81HF7YAT00AAAAAAAAAAAAAAAA"], ["forget", "01HF7"],
                 ["annotate", "01HF7YAT00AAAAAAAAAAAAAAAU", "--tags", "x"]):
        r = cli_run(*args)
        assert r.exit_code == 2 and "invalid input: memoryId: must be a ULID" in r.stderr, args


ID_COMMANDS = [
    ("supersede", ["--content", "Deploys moved to Wednesdays"], "superseded"),
    ("annotate", ["--tags", "ledger"], "annotated"),
    ("pin", [], "pinned"),
    ("forget", ["--reason", "wrong"], "forgot"),
]


@pytest.mark.parametrize(("command", "extra", "verb"), ID_COMMANDS)
@pytest.mark.parametrize("form", ["positional", "flag", "both"])
@pytest.mark.parametrize("case", [str.upper, str.lower])
def test_every_edit_takes_the_id_either_way_in_either_case(project, cli_run, command, extra,
                                                           verb, form, case):
    """Every command that acts on one memory takes its id as the argument or ``--memory-id``,
    and takes lower-case ULIDs (as session ids are printed), writing them in upper case."""
    mid = js(cli_run("remember", "--type", "semantic", "--level", "distributed", "--content",
                     "Deploys go out on Tuesdays", "--json"))["memoryId"]
    given = case(mid)
    args = {"positional": [given], "flag": ["--memory-id", given],
            "both": [given, "--memory-id", mid]}[form]
    out = js(cli_run(command, *args, *extra, "--json"))
    assert out["memoryId"] == mid
    line = [json.loads(x) for x in cli_run("export").stdout.splitlines()][-1]
    assert line["memoryId"] == mid


@pytest.mark.parametrize(("command", "extra"), [
    ("supersede", ["--content", "x"]), ("annotate", []), ("forget", []), ("pin", []),
    ("promote", []), ("purge", ["--reason", "r", "--yes"])])
def test_two_different_ids_or_none_are_refused(project, cli_run, command, extra):
    a, b = "01HF7YAT00AAAAAAAAAAAAAAAA", "01HF7YAT00BBBBBBBBBBBBBBBB"
    r = cli_run(command, a, "--memory-id", b, *extra)
    assert r.exit_code == 2 and "two memory ids given" in r.stderr
    r = cli_run(command, *extra)
    assert r.exit_code == 2
    assert "missing the memory id: give it as the argument or --memory-id" in r.stderr


def test_promote_purge_and_review_take_lower_case_ids(project, cli_run):
    mid = js(cli_run("remember", "--type", "procedural", "--content", "Run make check first",
                     "--json"))["memoryId"]
    copy = js(cli_run("promote", "--memory-id", mid.lower(), "--json"))
    assert copy["memoryId"] != mid
    links = js(cli_run("annotate", copy["memoryId"].lower(), "--links",
                       json.dumps([{"rel": "about", "to": mid.lower()}]), "--needs-review",
                       "--json"))
    assert links["memoryId"] == copy["memoryId"]
    line = [json.loads(x) for x in cli_run("export").stdout.splitlines()
            if json.loads(x)["memoryId"] == copy["memoryId"]][-1]
    assert line["links"] == [{"rel": "about", "to": mid}]
    assert js(cli_run("review", "clear", "--memory-id", copy["memoryId"].lower(),
                      "--json"))["memoryId"] == copy["memoryId"]
    out = js(cli_run("purge", copy["memoryId"].lower(), "--reason", "r", "--yes", "--json"))
    assert out["memoryId"] == copy["memoryId"]
    r = cli_run("review", "clear")
    assert r.exit_code == 2 and "missing the memory id" in r.stderr
    # two different ids are refused as every other command refuses them; list takes none
    r = cli_run("review", "clear", "--memory-id", copy["memoryId"], mid)
    assert r.exit_code == 2 and "two memory ids given" in r.stderr
    r = cli_run("review", "list", mid)
    assert r.exit_code == 2 and "review list takes no memory id" in r.stderr
    r = cli_run("session", "end")
    assert r.exit_code == 2 and "session end needs a sessionId" in r.stderr


def test_human_and_json_outputs(project, cli_run):
    mid = js(cli_run("remember", "--type", "reference", "--content", "Runbooks: ops/runbooks",
                     "--json"))["memoryId"]
    a = js(cli_run("annotate", "--memory-id", mid, "--importance", "0.9", "--json"))
    assert list(a) == ["memoryId", "recordId", "mount", "revision"] and a["mount"] == "personal"
    assert ok(cli_run("pin", mid)).strip() == f"pinned {mid}"
    assert ok(cli_run("pin", mid, "--unpin")).strip() == f"unpinned {mid}"
    assert ok(cli_run("annotate", "--memory-id", mid, "--needs-review")).startswith(
        f"annotated {mid} (record ")
    listed = ok(cli_run("review", "list"))
    assert listed == ("ID                          TYPE       MOUNT     NAMESPACE    SUMMARY\n"
                      f"{mid}  reference  personal  user/tester  Runbooks: ops/runbooks\n")
    assert [m["memoryId"] for m in js(cli_run("review", "list", "--json"))] == [mid]
    assert ok(cli_run("review", "clear", mid)).strip() == f"cleared review flag on {mid}"
    assert ok(cli_run("review", "list")).strip() == "nothing to review"
    assert js(cli_run("list", "--needs-review", "--json")) == []


def test_promote_copies_a_personal_memory_into_the_project(project, cli_run):
    mid = js(cli_run("remember", "--type", "procedural", "--content", "Run make check first",
                     "--subject", "topic:ci", "--tags", "ci", "--importance", "0.7",
                     "--json"))["memoryId"]
    out = ok(cli_run("promote", mid))
    assert out.startswith(f"promoted {mid} -> ") and out.strip().endswith(" in project")
    copy = next(m for m in js(cli_run("list", "--json", "--level", "distributed")))
    assert copy["namespace"] == "common" and copy["level"] == "distributed"
    assert copy["links"] == [{"rel": "derives-from", "to": mid}]
    assert copy["current"]["provenance"]["source"] == "promoted:personal"
    assert (copy["subject"], copy["tags"], copy["importance"]) == ("topic:ci", ["ci"], 0.7)
    assert folded(cli_run, mid)["versions"] == 1  # the original is untouched
    r = cli_run("promote", copy["memoryId"])
    assert r.exit_code == 1 and "is already distributed" in r.stderr


def test_purge_forget_history_leaves_no_reachable_copy(project, cli_run, git):
    secret = "the staging password is hunter2-purge-me"
    keep = js(cli_run("remember", "--type", "semantic", "--level", "distributed",
                      "--content", "Keep this one", "--json"))["memoryId"]
    mid = js(cli_run("remember", "--type", "semantic", "--level", "distributed",
                     "--content", secret, "--json"))["memoryId"]
    ok(cli_run("annotate", "--memory-id", mid, "--tags", "oops"))
    ok(cli_run("remember", "--type", "semantic", "--level", "distributed",
               "--content", "Keep this too"))
    before = {r["id"]: r for r in export_records(cli_run) if r["memoryId"] != mid}
    [ref] = git(project, "for-each-ref", "--format=%(refname)", "refs/notes/ynm").split()
    anchor = json.loads((project / ".ynm" / "config.json").read_text())["anchor"]
    old_blob = git(project, "notes", f"--ref={ref}", "show", anchor)
    kept_lines = [line for line in old_blob.splitlines() if mid not in line]

    ok(cli_run("purge", mid, "--reason", "leaked secret", "--forget-history", "--yes"))

    # every blob reachable from any ref: none holds the secret
    objects = git(project, "rev-list", "--objects", "--all").split("\n")
    for entry in objects:
        sha = entry.split(" ")[0]
        if sha and git(project, "cat-file", "-t", sha) == "blob":
            assert "hunter2" not in git(project, "cat-file", "blob", sha)
    assert "hunter2" not in git(project, "log", "-p", ref)
    # the other memories' lines survive byte for byte, in order, before the purge marker
    new_blob = git(project, "notes", f"--ref={ref}", "show", anchor)
    assert new_blob.splitlines()[: len(kept_lines)] == kept_lines
    after = {r["id"]: r for r in export_records(cli_run) if r["memoryId"] != mid}
    assert after == before
    marker = [r for r in export_records(cli_run) if r["memoryId"] == mid]
    assert [(r["op"], r["reason"]) for r in marker] == [
        ("purge-marker", "leaked secret (history dropped)")]
    assert [m["memoryId"] for m in js(cli_run("list", "--json", "--level", "distributed"))
            ] != [] and keep in {m["memoryId"] for m in js(cli_run("list", "--json"))}
    # the cache holds no copy either
    assert b"hunter2" not in (project / ".ynm" / "index" / "ynm-cache" / "project.sqlite").read_bytes()
    assert "hunter2" not in ok(cli_run("recall", "staging password", "--json"))
    fsck = subprocess.run(["git", "-C", str(project), "fsck", "--strict"], capture_output=True)
    assert fsck.returncode == 0, fsck.stderr


def test_purge_without_forget_history_keeps_the_ref_history(project, cli_run, git):
    mid = js(cli_run("remember", "--type", "semantic", "--level", "distributed",
                     "--content", "short lived", "--json"))["memoryId"]
    [ref] = git(project, "for-each-ref", "--format=%(refname)", "refs/notes/ynm").split()
    ok(cli_run("purge", mid, "--reason", "tidy", "--yes"))
    subjects = git(project, "log", "--format=%s", ref).splitlines()
    assert subjects[1] == f"ynm: purge {mid} from {ref[len('refs/notes/ynm/'):]}"
    assert len(subjects) == 3  # remember, purge, purge marker


def test_working_memory_expires_at_session_end(project, cli_run):
    start = js(cli_run("session", "start", "Fix Bug #12", "--json"))
    assert start["sessionId"] == "fix-bug-12" and start["namespace"] == "session/fix-bug-12"
    assert start["ttl"] == "PT8H" and start["context"] == {
        "markdown": "", "included": [], "tokens": 0, "truncated": False}
    ns = start["namespace"]
    short = js(cli_run("remember", "--type", "working", "--namespace", ns, "--content",
                       "trying the retry path", "--ttl", "PT1S", "--json"))["memoryId"]
    lasting = js(cli_run("remember", "--type", "working", "--namespace", ns, "--content",
                         "default ttl note", "--json"))["memoryId"]
    revised = js(cli_run("remember", "--type", "working", "--namespace", ns, "--content",
                         "first idea", "--ttl", "PT1S", "--json"))["memoryId"]
    ok(cli_run("supersede", "--memory-id", revised, "--content", "second idea"))
    assert [r.get("ttl") for r in records_of(cli_run, lasting)] == ["PT8H"]
    time.sleep(1.2)
    end = js(cli_run("session", "end", "Fix Bug #12", "--json"))
    assert end["sessionId"] == "Fix Bug #12"
    assert sorted(end["expired"]) == sorted([short, revised])  # a superseded one still expires
    assert folded(cli_run, short)["tombstoneReason"] == "expired"
    assert folded(cli_run, lasting)["tombstoned"] is False
    out = ok(cli_run("session", "end", "fix-bug-12"))
    assert out.strip() == "ended fix-bug-12; expired 0 working memories"


def test_session_start_human_output_and_bad_ids(project, cli_run):
    out = ok(cli_run("session", "start", "abc"))
    assert out == "session abc\nworking namespace session/abc (ttl PT8H)\n\nno memory yet\n"
    out = ok(cli_run("session", "start", "a..b"))
    assert out.startswith("session a.b\nworking namespace session/a.b (ttl PT8H)\n")
    r = cli_run("session", "start", "!!!")
    assert r.exit_code == 2 and "invalid input: sessionId:" in r.stderr
    r = cli_run("session", "start", "x", "--ttl", "8h")
    assert r.exit_code == 2 and "ttl: must be an ISO 8601 duration" in r.stderr
    generated = js(cli_run("session", "start", "--json"))["sessionId"]
    assert len(generated) == 26 and generated == generated.lower()


def test_dream_expires_working_memory_and_runs_the_other_passes(project, cli_run):
    ns = js(cli_run("session", "start", "dreamy", "--json"))["namespace"]
    mid = js(cli_run("remember", "--type", "working", "--namespace", ns, "--content", "tmp",
                     "--ttl", "PT1S", "--json"))["memoryId"]
    time.sleep(1.2)
    dry = js(cli_run("dream", "--passes", "expire", "--dry-run", "--json"))
    assert dry["passes"]["expire"]["changed"] == [mid]
    assert folded(cli_run, mid)["tombstoned"] is False
    out = ok(cli_run("dream"))
    assert out.splitlines()[:3] == ["expire: 1/1 changed", "retention: 0/0 changed",
                                    "promote: 0/0 changed"]
    assert folded(cli_run, mid)["tombstoneReason"] == "expired"


def test_init_sets_up_claude_code_where_the_project_uses_it(project, cli_run, git):
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text('{"tracked": true}\n')
    out = js(cli_run("init", "--json"))
    assert out["clients"][0]["client"] == "claude-code"
    assert out["local"] == [".claude/settings.local.json"]
    settings = json.loads((project / ".claude" / "settings.local.json").read_text())
    commands = {e: [h["command"] for g in groups for h in g["hooks"]]
                for e, groups in settings["hooks"].items()}
    assert commands == {"SessionStart": ["ynm hook session-start"],
                        "UserPromptSubmit": ["ynm hook prompt"], "Stop": ["ynm hook stop"]}
    assert (project / ".claude" / "settings.json").read_text() == '{"tracked": true}\n'
    mcp = json.loads((project / ".mcp.json").read_text())
    assert mcp["mcpServers"]["ynm"] == {"command": "ynm", "args": ["serve"]}
    again = js(cli_run("init", "--json"))
    assert again["clients"][0]["applied"] == []  # nothing twice
    assert ".claude/settings.local.json" in (project / ".git" / "info" / "exclude").read_text()
    assert "settings.local.json" not in git(project, "status", "--porcelain")
