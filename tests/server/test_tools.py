"""Every MCP tool with valid and invalid input, in process (reference/server.md §1.3, §1.4)."""

from __future__ import annotations

import json

import pytest

from tests.server.conftest import USER, text
from tests.support.expired import import_expired_working
from tests.support.secrets import SECRETS
from ynm.errors import ShareRequired
from ynm.server.tools import TOOL_SPECS

BAD_ID = "not-a-ulid"


def call_tool(mcp_call, name, args):
    return mcp_call(lambda c: c.call_tool(name, args))


def ok(result):
    assert not result.is_error, text(result)
    data = result.structured_content["data"]
    body = text(result)
    head = body.split("\n\nGuidance: ")[0]
    assert json.loads(head) == data
    guidance = result.structured_content["guidance"]
    if guidance is None:
        assert "\n\nGuidance: " not in body
    else:
        assert body.endswith(f"\n\nGuidance: {guidance}")
    return data


def err(result):
    assert result.is_error
    assert result.structured_content is None
    return text(result)


def remember(mcp_call, **args):
    return ok(call_tool(mcp_call, "memory_remember", {"type": "semantic", **args}))


def test_list_tools_schemas_and_annotations(mcp_call):
    tools = {t.name: t for t in mcp_call(lambda c: c.list_tools()).tools}
    assert set(tools) == set(TOOL_SPECS)
    for name, tool in tools.items():
        spec = TOOL_SPECS[name]
        assert tool.input_schema["additionalProperties"] is False
        assert tool.annotations.read_only_hint is spec.read_only
        assert tool.annotations.idempotent_hint is spec.read_only
        assert tool.annotations.destructive_hint is (name == "memory_forget")
    assert "memoryId" in tools["memory_forget"].input_schema["properties"]
    assert "budgetTokens" in tools["memory_context"].input_schema["properties"]


def test_initialize_identity_and_instructions(service):
    from mcp import Client

    from tests.server.conftest import run
    from ynm.server.app import build_server

    async def go():
        async with Client(build_server(service)) as c:
            return c.server_info, c.instructions, c.server_capabilities

    info, instructions, caps = run(go)
    assert (info.name, info.title) == ("ynm", "ynm: your named memory")
    assert "memory_remember" in instructions and "memory_recall" in instructions
    assert "personal (private" in instructions
    assert caps.tools is not None and caps.resources is not None and caps.prompts is not None


def test_remember_then_recall(mcp_call):
    data = remember(mcp_call, content="Ledger deploys go out on Tuesdays", tags=["deploy"])
    assert set(data) == {"memoryId", "recordId", "mount", "revision"}
    assert data["mount"] == "personal"
    hits = ok(call_tool(mcp_call, "memory_recall", {"text": "ledger deploys", "limit": 5}))
    assert hits[0]["memoryId"] == data["memoryId"]
    assert hits[0]["namespace"] == f"user/{USER}"


def test_remember_similar_gives_guidance_naming_memory_supersede(mcp_call):
    first = remember(mcp_call, content="Ledger deploys go out on Tuesdays after standup")
    result = call_tool(mcp_call, "memory_remember",
                       {"type": "semantic", "content": "Ledger deploys go out on Tuesdays"})
    ok(result)
    guidance = result.structured_content["guidance"]
    assert first["memoryId"] in guidance
    assert "memory_supersede" in guidance and "ynm supersede" not in guidance


@pytest.mark.parametrize("args, message", [
    ({"type": "working", "content": "x"},
     "invalid input: namespace: working memory must live in session/<id>"),
    ({"type": "semantic"}, "invalid input: content: required"),
    ({"type": "semantic", "content": "x", "importance": 2},
     "invalid input: importance: must be at most 1"),
    ({"type": "semantic", "content": "x", "namespace": "Bad NS"}, None),
    ({"type": "semantic", "content": "x", "bogus": 1},
     "invalid input: bogus: unknown field"),
    ({"type": "semantic", "content": "x", "data_schema": "s"},
     "invalid input: data_schema: unknown field"),
    ({"type": "semantic", "content": "x", "data": {"n": [1, 10**400]}},
     "invalid input: data: key n.1 is NaN, Infinity or a number out of range, which JSON "
     "cannot hold"),
])
def test_remember_invalid_input_is_the_cli_message(mcp_call, cli_run, args, message):
    got = err(call_tool(mcp_call, "memory_remember", args))
    assert got.startswith("invalid input: ")
    if message is not None:
        assert got == message


def test_same_message_as_the_cli(mcp_call, cli_run):
    got = err(call_tool(mcp_call, "memory_remember", {"type": "working", "content": "x"}))
    cli = cli_run("remember", "--type", "working", "--content", "x")
    assert cli.exit_code == 2
    first, hint = cli.stderr.strip().split("\n")  # the CLI adds what to do on a line of its own
    assert first == f"Error: {got}"
    assert hint.startswith("hint: give the session with --session <id>")


def test_remember_refuses_a_secret_with_the_cli_message(mcp_call, cli_run):
    for name in ("github fine-grained", "openai project"):
        detector, secret = SECRETS[name]
        got = err(call_tool(mcp_call, "memory_remember",
                            {"type": "semantic", "content": secret, "level": "distributed"}))
        assert got == f"refused: content matches 1 secret detector: {detector}"
        cli = cli_run("remember", "--type", "semantic", "--level", "distributed",
                      "--content", secret)
        assert cli.exit_code == 2 and cli.stderr.strip() == f"Error: {got}"
    ordinary = "Use the risk-based-authentication-flow for admin logins"
    assert remember(mcp_call, content=ordinary, level="distributed")["mount"] == "project"


def test_recall_and_context(mcp_call):
    remember(mcp_call, content="Use tabs in Makefiles", level="distributed",
             namespace="common")
    assert ok(call_tool(mcp_call, "memory_recall", {"text": "makefiles tabs"}))
    none = call_tool(mcp_call, "memory_recall", {"text": "zebra quantum"})
    assert ok(none) == [] and none.structured_content["guidance"]
    for text in ("C++", "?!", "--", "*"):  # nothing to search: said, not the whole store
        none = call_tool(mcp_call, "memory_recall", {"text": text})
        assert ok(none) == []
        assert "no searchable words" in none.structured_content["guidance"]
    assert "no searchable words" not in call_tool(
        mcp_call, "memory_recall", {"text": "zebra quantum"}).structured_content["guidance"]
    block = ok(call_tool(mcp_call, "memory_context", {"budgetTokens": 500}))
    assert "Use tabs in Makefiles" in block["markdown"]
    assert set(block) >= {"markdown", "included", "tokens", "truncated"}
    assert err(call_tool(mcp_call, "memory_recall", {"limit": 0})).startswith(
        "invalid input: limit:")
    assert err(call_tool(mcp_call, "memory_context", {"budgetTokens": 0})).startswith(
        "invalid input: budgetTokens:")
    assert err(call_tool(mcp_call, "memory_recall", {"type": ["nope"]})).startswith(
        "invalid input: type.0:")


@pytest.mark.parametrize("tool, args", [
    ("memory_recall", {"text": "deploys"}), ("memory_context", {}), ("memory_sync", {}),
    ("memory_remember", {"type": "semantic", "content": "We deploy on Tuesdays"}),
])
def test_a_mount_that_is_not_configured_is_an_error_result(mcp_call, ynm_home, tool, args):
    """Every tool that takes a mount refuses one configured nowhere with the CLI's message
    (it names the mounts there are and how to add one), as an error result, not a crash and
    not an empty answer."""
    message = err(call_tool(mcp_call, tool, {**args, "mount": "nope"}))
    assert message == (
        'no mount "nope" (have: personal, project); to add it: add {"id":"nope",'
        '"level":"distributed","provider":"git-notes","path":"<store>","anchor":"<commit>"} '
        f'to mounts in {ynm_home / "config.json"} (`ynm init --bare <store>` makes a store '
        "and prints its anchor)")


def test_recall_refuses_a_since_after_the_until_as_an_error_result(mcp_call):
    assert err(call_tool(mcp_call, "memory_recall", {
        "text": "deploys", "since": "2026-12-01", "until": "2026-11-01"})) == (
        "invalid input: since: 2026-12-01T00:00:00.000Z is later than until "
        "2026-11-01T00:00:00.000Z, so nothing can match; swap them, or leave one out")


def test_supersede_annotate_forget(mcp_call):
    mid = remember(mcp_call, content="Deploys on Tuesdays")["memoryId"]
    out = ok(call_tool(mcp_call, "memory_supersede",
                       {"memoryId": mid, "content": "Deploys on Wednesdays"}))
    assert out["memoryId"] == mid
    ok(call_tool(mcp_call, "memory_annotate", {"memoryId": mid, "tags": ["deploy"],
                                               "pinned": True}))
    hits = ok(call_tool(mcp_call, "memory_recall", {"text": "deploys"}))
    assert hits[0]["content"] == "Deploys on Wednesdays" and hits[0]["pinned"]
    assert hits[0]["tags"] == ["deploy"]
    ok(call_tool(mcp_call, "memory_forget", {"memoryId": mid, "reason": "wrong"}))
    assert ok(call_tool(mcp_call, "memory_recall", {"text": "deploys"})) == []


def test_supersede_names_the_data_it_dropped(mcp_call):
    mid = remember(mcp_call, content="Deploys on Tuesdays", data={"day": "tue"})["memoryId"]
    out = call_tool(mcp_call, "memory_supersede",
                    {"memoryId": mid, "content": "Deploys on Wednesdays"})
    assert ok(out)["dropped"] == ["data"]
    assert out.structured_content["guidance"] == (
        "The new version dropped the previous version's data (a supersede carries none "
        "over); pass them again to keep them.")
    kept = call_tool(mcp_call, "memory_supersede",
                     {"memoryId": mid, "content": "Deploys on Fridays", "data": {"day": "fri"}})
    assert "dropped" not in ok(kept) and not kept.structured_content.get("guidance")


def _commits(project, ynm_home) -> int:
    """Commits on every ynm shard ref of the personal store and the project repository."""
    import subprocess

    total = 0
    for repo in (ynm_home / "store.git", project):
        out = subprocess.run(["git", "-C", str(repo), "rev-list", "--count",
                              "--glob=refs/notes/ynm"], capture_output=True, text=True)
        total += int(out.stdout.strip() or 0) if out.returncode == 0 else 0
    return total


@pytest.mark.parametrize("tool, noop, note, change", [
    ("memory_annotate", {"tags": ["deploy"], "pinned": False}, "nothing to change",
     {"tags": ["deploy"], "pinned": True}),
    ("memory_annotate", {"importance": 0.5, "reason": "checked"}, "nothing to change",
     {"importance": 0.6, "reason": "checked"}),
    ("memory_annotate", {"needsReview": False}, "nothing to change", {"needsReview": True}),
    ("memory_supersede", {"content": "Deploys on Tuesdays", "tags": ["deploy"]},
     "same content and fields", {"content": "Deploys on Wednesdays"}),
    ("memory_forget", {"reason": "wrong"}, None, None),
])
def test_a_tool_write_that_changes_nothing_writes_nothing(mcp_call, project, ynm_home, tool,
                                                          noop, note, change):
    mid = remember(mcp_call, content="Deploys on Tuesdays", tags=["deploy"])["memoryId"]
    if tool == "memory_forget":  # the first forget is the change, the second the no-op
        ok(call_tool(mcp_call, tool, {"memoryId": mid, **noop}))
        note = "already forgotten"
    before = _commits(project, ynm_home)
    result = call_tool(mcp_call, tool, {"memoryId": mid, **noop})
    assert ok(result) == {"memoryId": mid, "mount": "personal", "unchanged": True,
                          "note": note}
    assert result.structured_content["guidance"] == f"Unchanged: {note}; nothing was written."
    assert _commits(project, ynm_home) == before
    if change is not None:
        out = ok(call_tool(mcp_call, tool, {"memoryId": mid, **change}))
        assert "unchanged" not in out and out["recordId"] != mid
        assert _commits(project, ynm_home) == before + 1


@pytest.mark.parametrize("tool, extra", [
    ("memory_supersede", {"content": "x"}), ("memory_annotate", {}), ("memory_forget", {}),
])
def test_edits_with_bad_or_unknown_ids(mcp_call, tool, extra):
    assert err(call_tool(mcp_call, tool, {"memoryId": BAD_ID, **extra})) == \
        "invalid input: memoryId: must be a ULID"
    unknown = "01K00000000000000000000000"
    assert err(call_tool(mcp_call, tool, {"memoryId": unknown, **extra})) == \
        f"unknown memory {unknown}"


@pytest.mark.parametrize("ttl", ["PT0S", "P0D", "PT0M", "P0Y0M0W0DT0H0M0S"])
def test_a_ttl_of_no_length_is_refused_by_the_tools(mcp_call, ttl):
    """A working memory with such a ttl would expire the moment it is written: memory_remember,
    memory_supersede and memory_session refuse it as the CLI does (ynm.model.durations)."""
    said = (f"invalid input: ttl: must be longer than zero: {ttl} would expire the working "
            "memory at once; give one such as PT8H (8 hours), P30D (30 days), P1W or P1DT12H")
    assert err(call_tool(mcp_call, "memory_remember", {
        "type": "working", "namespace": "session/s1", "content": "scratch", "ttl": ttl})) == said
    mid = remember(mcp_call, type="working", namespace="session/s1", content="scratch",
                   ttl="PT1S")["memoryId"]
    assert err(call_tool(mcp_call, "memory_supersede", {
        "memoryId": mid, "content": "more scratch", "ttl": ttl})) == said
    assert err(call_tool(mcp_call, "memory_session", {"action": "start", "ttl": ttl})) == said


def test_session_start_and_end(mcp_call, cli_run, tmp_path):
    start = call_tool(mcp_call, "memory_session", {"action": "start", "sessionId": "My Task!"})
    data = ok(start)
    assert data["sessionId"] == "my-task-" and data["namespace"] == "session/my-task-"
    assert data["ttl"] == "PT8H" and "markdown" in data["context"]
    assert "session/my-task-" in start.structured_content["guidance"]
    import_expired_working(cli_run, tmp_path, "my-task-", "scratch")
    end = ok(call_tool(mcp_call, "memory_session", {"action": "end", "sessionId": "My Task!"}))
    assert end["sessionId"] == "My Task!" and len(end["expired"]) == 1
    assert err(call_tool(mcp_call, "memory_session", {"action": "end"})) == \
        "session end needs a sessionId"
    assert err(call_tool(mcp_call, "memory_session", {"action": "pause"})).startswith(
        "invalid input: action:")
    assert err(call_tool(mcp_call, "memory_session", {"action": "start", "ttl": "8h"})) == (
        "invalid input: ttl: must be an ISO 8601 duration in whole numbers (no fractions) "
        "such as PT8H (8 hours), P30D (30 days), P1W or P1DT12H")
    assert err(call_tool(mcp_call, "memory_session", {"action": "start", "ttl": "P0D"})) == (
        "invalid input: ttl: must be longer than zero: P0D would expire the working memory "
        "at once; give one such as PT8H (8 hours), P30D (30 days), P1W or P1DT12H")
    generated = ok(call_tool(mcp_call, "memory_session", {"action": "start"}))
    assert generated["namespace"] == "session/" + generated["sessionId"]


def test_expired_and_other_sessions_working_memory_in_recall_context_and_session(
        mcp_call, cli_run, tmp_path):
    def working(session, content, ttl):
        return remember(mcp_call, type="working", namespace=f"session/{session}",
                        content=content, ttl=ttl)["memoryId"]

    # its ttl ran out long ago, and no sweep ran
    gone = import_expired_working(cli_run, tmp_path, "run-a", "staging DB is down until the "
                                  "restart")
    live = working("run-a", "staging deploy is paused", "PT8H")
    own = working("run-b", "run-b staging scratch", "PT8H")
    for args in ({"text": "staging"}, {"type": ["working"]}):
        got = [h["memoryId"] for h in ok(call_tool(mcp_call, "memory_recall", args))]
        assert gone not in got and live in got and own in got
    marked = ok(call_tool(mcp_call, "memory_recall",
                          {"text": "staging", "includeTombstoned": True}))
    assert [h.get("expired") for h in marked if h["memoryId"] == gone] == [True]
    block = ok(call_tool(mcp_call, "memory_context", {}))
    assert gone not in block["included"] and live in block["included"]
    start = ok(call_tool(mcp_call, "memory_session", {"action": "start", "sessionId": "run-b"}))
    assert start["context"]["included"] == [own]
    assert err(call_tool(mcp_call, "memory_session",
                         {"action": "start", "sessionId": "!!!"})).startswith(
        "invalid input: sessionId: session id '!!!' has no letter or digit")
    odd = ok(call_tool(mcp_call, "memory_session", {"action": "start", "sessionId": "a..b"}))
    assert odd["namespace"] == "session/a.b"


def test_recall_shows_a_derived_summary_for_a_record_without_one(mcp_call, cli_run, tmp_path):
    line = {"v": 1, "id": "01K00000000000000000000001", "memoryId": "01K00000000000000000000001",
            "op": "create", "type": "semantic", "level": "personal", "namespace": "user/tester",
            "tags": [], "links": [], "content": "## Ledger freeze\nno deploys on Fridays",
            "recordedAt": "2026-03-01T00:00:00.000Z", "provenance": {"actor": "user:tester"}}
    path = tmp_path / "in.jsonl"
    path.write_text(json.dumps(line) + "\n")
    assert cli_run("import", path).exit_code == 0
    (hit,) = ok(call_tool(mcp_call, "memory_recall", {"text": "ledger freeze"}))
    assert hit["summary"] == "Ledger freeze"
    block = ok(call_tool(mcp_call, "memory_context", {}))
    assert "- (semantic) Ledger freeze\n" in block["markdown"] + "\n"


def test_consolidate_runs_the_engine_and_refuses_what_the_cli_refuses(mcp_call, cli_run,
                                                                      tmp_path):
    mid = import_expired_working(cli_run, tmp_path, "s1", "old scratch")
    dry = call_tool(mcp_call, "memory_consolidate", {"dryRun": True})
    data = ok(dry)
    assert data["dryRun"] is True
    # a dry run lists what expire would change (reference/algorithms.md §4.14)
    assert data["passes"]["expire"] == {"candidates": 1, "changed": [mid]}
    assert data["full"]["judge"] == {"name": "heuristic", "calibrated": False}
    assert data["full"]["writer"] == "none" and data["full"]["judged"] is False
    real = ok(call_tool(mcp_call, "memory_consolidate", {"passes": ["expire"]}))
    assert real["passes"] == {"expire": {"candidates": 1, "changed": [mid]},
                              "retention": {"candidates": 0, "changed": []}}
    again = ok(call_tool(mcp_call, "memory_consolidate", {"passes": ["expire"]}))
    assert again["passes"]["expire"]["changed"] == []
    assert err(call_tool(mcp_call, "memory_consolidate", {"passes": ["sleep"]})).startswith(
        "invalid input: passes.0:")
    assert err(call_tool(mcp_call, "memory_consolidate", {"maxPairs": 0})).startswith(
        "invalid input: maxPairs:")
    assert err(call_tool(mcp_call, "memory_consolidate", {"judge": True})) == (
        "invalid input: judge: judge only applies to a dry run; add dryRun")
    judged = ok(call_tool(mcp_call, "memory_consolidate", {"judge": True, "dryRun": True}))
    assert judged["full"]["judged"] is True


def test_sync_and_status(mcp_call):
    reply = call_tool(mcp_call, "memory_sync", {"dryRun": True})
    result = ok(reply)
    reason = ('remote "origin" is not configured; add it with `git remote add origin <url>` '
              "and sync again")
    assert result == {"project": {  # the CLI's shape: what moved, skipped not a conflict
        "remote": "origin", "fetched": {"shards": [], "records": 0}, "fastForwarded": [],
        "merged": [], "pushed": {"shards": [], "records": 0}, "conflicts": [], "retries": 0,
        "skipped": reason}}
    assert reply.structured_content["guidance"] == f"Not synced: project: {reason}"
    assert err(call_tool(mcp_call, "memory_sync", {"mount": "personal"})).startswith(
        "syncing the personal store needs an explicit --remote")
    assert err(call_tool(mcp_call, "memory_sync", {"push": "maybe"})).startswith(
        "invalid input: push:")
    status = ok(call_tool(mcp_call, "memory_status", {}))
    assert [m["id"] for m in status["mounts"]] == ["personal", "project"]
    assert err(call_tool(mcp_call, "memory_status", {"x": 1})) == \
        "invalid input: x: unknown field"


def test_resources_and_prompts(mcp_call):
    mid = remember(mcp_call, content="Pinned rule", level="distributed")["memoryId"]
    ok(call_tool(mcp_call, "memory_annotate", {"memoryId": mid, "pinned": True}))

    async def body(c):
        ctx = await c.read_resource("memory://context")
        status = await c.read_resource("memory://status")
        one = await c.read_resource(f"memory://project/{mid}")
        prompts = await c.list_prompts()
        prompt = await c.get_prompt("memory-when-to-remember")
        return ctx, status, one, prompts, prompt

    ctx, status, one, prompts, prompt = mcp_call(body)
    assert "Pinned rule" in ctx.contents[0].text
    assert ctx.contents[0].mime_type == "text/markdown"
    assert json.loads(status.contents[0].text)["mounts"]
    memory = json.loads(one.contents[0].text)
    assert memory["memoryId"] == mid and memory["mount"] == "project"
    assert {p.name for p in prompts.prompts} == {
        "memory-session-start", "memory-when-to-remember", "memory-when-to-promote"}
    assert all(p.description.startswith("ynm guidance: ") for p in prompts.prompts)
    assert "memory_remember" in prompt.messages[0].content.text


def test_no_personal_refuses_a_levelless_remember(project):
    from mcp import Client

    from tests.server.conftest import run
    from ynm.server.app import MemoryService, build_server
    from ynm.service.ynm import Ynm

    svc = MemoryService(project, personal=False)
    svc.open()
    try:
        server = build_server(svc)
        assert "shared with every user" in server.instructions

        async def go():
            async with Client(server) as c:
                refused = await c.call_tool("memory_remember",
                                            {"type": "semantic", "content": "secret-ish"})
                shared = await c.call_tool("memory_remember", {
                    "type": "semantic", "content": "team fact", "level": "distributed"})
                return refused, shared

        refused, shared = run(go)
    finally:
        svc.close()
    assert err(refused) == str(ShareRequired())
    assert ok(shared)["mount"] == "project"
    with Ynm.open(project) as ynm:
        contents = [h["content"] for h in ynm.recall(
            __import__("ynm.model.inputs", fromlist=["RecallQuery"]).RecallQuery(limit=50))]
    assert contents == ["team fact"]


def test_a_service_failure_is_a_tool_error_not_a_crash(service, mcp_call, monkeypatch):
    from ynm.service.ynm import Ynm

    def boom(self, q):
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(Ynm, "recall", boom)
    assert "disk on fire" in err(call_tool(mcp_call, "memory_recall", {}))
    assert ok(call_tool(mcp_call, "memory_status", {}))  # still serving


def test_wiki_resource(mcp_call):
    mid = remember(mcp_call, content="Wiki rule", level="distributed", tags=["rules"])["memoryId"]

    async def body(c):
        index = await c.read_resource("memory://project/wiki/index.md")
        page = await c.read_resource(f"memory://project/wiki/memories/{mid}.md")
        topic = await c.read_resource("memory://project/wiki/topics/rules.md")
        try:
            await c.read_resource("memory://project/wiki/nothing.md")
        except Exception as err:  # noqa: BLE001 - the client raises the server's refusal
            missing = str(err)
        else:
            missing = None
        return index, page, topic, missing

    index, page, topic, missing = mcp_call(body)
    assert index.contents[0].text.splitlines()[7] == "# Memory: project"
    assert f"- [Wiki rule](memories/{mid}.md)" in index.contents[0].text
    assert f'memoryId: "{mid}"' in page.contents[0].text
    assert page.contents[0].text.endswith("# Wiki rule\n\nWiki rule\n")
    assert f"- [Wiki rule](memories/{mid}.md)" in topic.contents[0].text
    assert missing == "no wiki page nothing.md in mount project"


def test_links_to_no_memory_here_are_kept_and_said_in_the_guidance(mcp_call):
    from tests.support.records import ulid

    known = remember(mcp_call, content="The ledger closes at noon")["memoryId"]
    for tool, args in (
            ("memory_remember", {"type": "semantic", "content": "Refunds wait for the ledger"}),
            ("memory_supersede", {"memoryId": known, "content": "The ledger closes at one"}),
            ("memory_annotate", {"memoryId": known})):
        good = call_tool(mcp_call, tool, {**args, "links": [{"rel": "about", "to": known}]})
        assert ok(good) and "no memory here has" not in (
            good.structured_content["guidance"] or "")
        args = {**args, "content": args["content"] + " again"} if "content" in args else args
        ghost = ulid()  # a new one each time: the same link twice would change nothing
        said = (f"Note: links point at {ghost}, which no memory here has; kept as given "
                "(check the ids).")
        bad = call_tool(mcp_call, tool, {**args, "links": [{"rel": "about", "to": ghost},
                                                           {"rel": "supports", "to": known}]})
        data = ok(bad)
        assert "unknownLinks" not in data and data["memoryId"]
        assert bad.structured_content["guidance"].endswith(said)


def test_a_link_with_a_key_it_does_not_take_is_refused_by_the_tools(mcp_call):
    """The tools' links are strict too (reference/cli.md §1.3), the same message as the CLI."""
    target = remember(mcp_call, content="target")["memoryId"]
    refused = call_tool(mcp_call, "memory_remember", {
        "type": "semantic", "content": "linked",
        "links": [{"rel": "about", "to": target, "note": "why"}]})
    assert err(refused) == "invalid input: links.0.note: unknown field"
