"""``ynm show`` and ``ynm history``: one memory whole, and every record of it in fold order."""

from __future__ import annotations

import json

import pytest

from .conftest import make_record


def js(result):
    assert result.exit_code == 0, (result.stdout, result.stderr)
    return json.loads(result.stdout)


def remember(cli_run, content, *extra):
    return js(cli_run("remember", "--type", "semantic", "--level", "distributed", "--content",
                      content, *extra, "--json"))["memoryId"]


def test_show_gives_the_memory_whole_with_links_both_ways(project, cli_run):
    long = "Ledger deploys go out on Tuesdays.\n\n" + "Details follow. " * 40
    mid = remember(cli_run, long, "--tags", "deploy", "--subject", "service:ledger")
    other = remember(cli_run, "Wednesday sync owner is Ana",
                     "--links", json.dumps([{"rel": "about", "to": mid}]))
    cli_run("supersede", mid, "--content", long + "Now Wednesdays.")
    out = js(cli_run("show", mid, "--json"))
    assert out["memoryId"] == mid and out["mount"] == "project" and out["versions"] == 2
    assert out["current"]["content"] == long + "Now Wednesdays."
    assert out["linked"] == []  # the supersede's link to itself is not listed
    assert out["linkedFrom"] == [{"memoryId": other, "rel": "about",
                                  "summary": "Wednesday sync owner is Ana"}]
    text = cli_run("show", mid.lower()).stdout
    assert text.startswith(f"{mid}  semantic  distributed  common  (project)\n")
    assert "subject     service:ledger\n" in text and "tags        deploy\n" in text
    assert long + "Now Wednesdays." in text  # the content in full, not cut
    assert f"<- about {other}  Wednesday sync owner is Ana" in text
    back = js(cli_run("show", "--memory-id", other, "--json"))
    assert back["linked"] == [{"rel": "about", "to": mid,
                               "summary": "Ledger deploys go out on Tuesdays."}]
    assert f"-> about {mid}  Ledger deploys go out on Tuesdays." in cli_run("show", other).stdout


def test_show_of_a_link_to_a_memory_no_mount_has(project, cli_run):
    ghost = "01HF7YAT00AAAAAAAAAAAAAAAA"
    mid = remember(cli_run, "Refers to a memory elsewhere",
                   "--links", json.dumps([{"rel": "supports", "to": ghost}]))
    assert js(cli_run("show", mid, "--json"))["linked"] == [
        {"rel": "supports", "to": ghost, "summary": None}]
    assert f"-> supports {ghost}  (not found)" in cli_run("show", mid).stdout


@pytest.mark.parametrize("command", ["show", "history"])
def test_unknown_and_malformed_ids(project, cli_run, command):
    r = cli_run(command, "01HF7YAT00AAAAAAAAAAAAAAAA")
    assert r.exit_code == 1 and r.stderr.strip() == "Error: unknown memory 01HF7YAT00AAAAAAAAAAAAAAAA"
    r = cli_run(command, "nope")
    assert r.exit_code == 2 and "invalid input: memoryId: must be a ULID" in r.stderr
    assert cli_run(command).exit_code == 2


def test_history_lists_every_record_in_fold_order_with_what_changed(project, cli_run, load):
    """Records are listed in recordedAt order whatever order the lines arrived in, across
    shards of different months, each with its op, actor and changes."""
    mid = "01HF7YAT00AAAAAAAAAAAAAAAA"
    base = dict(level="distributed", namespace="team/ledger", memoryId=mid)
    create = make_record(id=mid, content="Deploys on Tuesdays", summary="Deploys on Tuesdays",
                         recordedAt="2026-09-01T10:00:00.000Z", tags=["deploy"],
                         provenance={"actor": "user:ana"}, **{k: v for k, v in base.items()
                                                              if k != "memoryId"})
    annotate = make_record(id="01HF7YAT01AAAAAAAAAAAAAAAA", op="annotate", content=None,
                           summary=None, recordedAt="2026-10-02T09:00:00.000Z", pinned=True,
                           reason="pinned", provenance={"actor": "agent:claude-code",
                                                        "session": "s1"}, **base)
    supersede = make_record(id="01HF7YAT02AAAAAAAAAAAAAAAA", op="supersede",
                            content="Deploys on Wednesdays", summary="Deploys on Wednesdays",
                            recordedAt="2026-10-05T09:00:00.000Z",
                            links=[{"rel": "supersedes", "to": mid}],
                            provenance={"actor": "user:bo"}, **base)
    tomb = make_record(id="01HF7YAT03AAAAAAAAAAAAAAAA", op="tombstone", content=None,
                       summary=None, recordedAt="2026-11-01T00:00:00.000Z", reason="wrong",
                       provenance={"actor": "user:ana"}, **base)
    load(tomb, supersede, create, annotate)
    out = js(cli_run("history", mid, "--json"))
    assert [r["op"] for r in out] == ["create", "annotate", "supersede", "tombstone"]
    assert [r["actor"] for r in out] == ["user:ana", "agent:claude-code", "user:bo", "user:ana"]
    assert [r["shard"] for r in out] == [
        "distributed/team/ledger/semantic/2026-09", "distributed/team/ledger/semantic/2026-10",
        "distributed/team/ledger/semantic/2026-10", "distributed/team/ledger/semantic/2026-11"]
    assert out[0]["changes"] == {"summary": "Deploys on Tuesdays",
                                 "content": "Deploys on Tuesdays", "type": "semantic",
                                 "namespace": "team/ledger", "tags": ["deploy"]}
    assert out[1]["changes"] == {"pinned": True, "reason": "pinned"}
    assert out[1]["session"] == "s1"
    assert out[2]["changes"]["summary"] == "Deploys on Wednesdays"
    assert out[3]["changes"] == {"reason": "wrong"}
    header, *lines = cli_run("history", mid).stdout.splitlines()
    assert header == "RECORDED AT               OP         ACTOR              CHANGES"
    assert lines[0].startswith("2026-09-01T10:00:00.000Z  create     user:ana           "
                               'summary="Deploys on Tuesdays"')
    assert lines[1].endswith('pinned=true reason="pinned"')
    assert lines[3].endswith('tombstone  user:ana           reason="wrong"')


def test_history_of_a_purged_memory_shows_its_marker(project, cli_run):
    mid = remember(cli_run, "Something to purge")
    assert cli_run("purge", mid, "--reason", "mistake", "--yes").exit_code == 0
    out = js(cli_run("history", mid, "--json"))
    assert [r["op"] for r in out] == ["purge-marker"]
    assert out[0]["changes"] == {"reason": "mistake"}
    assert cli_run("show", mid).exit_code == 1


def test_show_derives_the_summary_of_a_record_imported_without_one(project, cli_run, load):
    rec = make_record(level="distributed", namespace="common", summary=None,
                      content="# Ledger runbook\n\nRestart the ledger with care.")
    load(rec)
    out = js(cli_run("show", rec["id"], "--json"))
    assert out["summary"] == "Ledger runbook" and "summary" not in out["current"]
    assert "summary     Ledger runbook\n" in cli_run("show", rec["id"]).stdout


def test_supersede_says_what_it_dropped_and_history_reads_it(project, cli_run):
    """A supersede carries no data, data schema or valid-from/-to over (reference cli.md
    §4.25): it says so, and history shows the drop, without the supersede's own link."""
    made = js(cli_run("remember", "--type", "semantic", "--content", "Deploys on Tuesdays",
                      "--data", '{"day": "tue"}', "--data-schema", "deploy", "--json"))
    mid = made["memoryId"]
    result = cli_run("supersede", mid, "--content", "Deploys on Wednesdays")
    assert result.exit_code == 0, result.stderr
    first, note = result.stdout.splitlines()
    assert first.startswith(f"superseded {mid} (record ")
    assert note == "note: data, dataSchema dropped (pass --data, --data-schema to keep them)"
    assert "data" not in js(cli_run("show", mid, "--json"))["current"]
    # given again, nothing is dropped: no note, no "dropped"
    again = js(cli_run("supersede", mid, "--content", "Deploys on Thursdays", "--data",
                       '{"day": "thu"}', "--json"))
    assert "dropped" not in again
    out = js(cli_run("history", mid, "--json"))
    assert [r["op"] for r in out] == ["create", "supersede", "supersede"]
    assert out[1]["changes"] == {"summary": "Deploys on Wednesdays",
                                 "content": "Deploys on Wednesdays", "data": None,
                                 "dataSchema": None}
    assert out[2]["changes"] == {"summary": "Deploys on Thursdays",
                                 "content": "Deploys on Thursdays", "data": {"day": "thu"}}
    lines = cli_run("history", mid).stdout.splitlines()
    assert lines[2].endswith('summary="Deploys on Wednesdays" data=(dropped) '
                             "dataSchema=(dropped)")
    assert lines[3].endswith('summary="Deploys on Thursdays" data={"day":"thu"}')
    assert "supersedes" not in "\n".join(lines)
    # a supersede of a memory without data drops nothing and says nothing
    plain = js(cli_run("remember", "--type", "semantic", "--content", "Plain fact", "--json"))
    quiet = cli_run("supersede", plain["memoryId"], "--content", "Plain fact, revised")
    assert quiet.stdout.count("\n") == 1 and "note" not in quiet.stdout


def test_show_says_a_working_memory_past_its_ttl_is_expired(project, cli_run, tmp_path):
    """Working memory whose ttl ran out and that no sweep has forgotten yet is shown as
    expired, as list and recall mark it (``expired: true``; a header flag), and a live one is
    not."""
    from tests.support.expired import import_expired_working

    gone = import_expired_working(cli_run, tmp_path, "run-a", "staging is down")
    shown = js(cli_run("show", gone, "--json"))
    assert shown["expired"] is True and shown["tombstoned"] is False
    human = cli_run("show", gone)
    assert human.exit_code == 0
    [header] = [line for line in human.stdout.splitlines() if line.startswith("importance")]
    assert header.endswith("expired (ttl ran out; the next sweep forgets it)"), header
    live = remember(cli_run, "deploys go out on Tuesdays")
    assert "expired" not in js(cli_run("show", live, "--json"))
    assert "expired" not in cli_run("show", live).stdout
