"""Hosted stores mounted from the CLI (provider ``mcp``): ``ynm login``/``logout``, recall and
context beside the local mounts, ``ynm status``, writes, and what happens when the store is
down or refuses the token. A real ``ynm serve --http --token`` runs on 127.0.0.1 over a second
repository. Reference: algorithms.md §2.7, §3.4; cli.md §1, §4.12, §4.13; storage.md §5.3;
server.md §3.1, §6."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from tests.support.serve import free_port, serve_http
from ynm.errors import pip_install

TOKEN = "hosted-s3cret-7f1d2c9a"
OTHER_TOKEN = "another-s3cret-0b4e"


def hosted_write(repo: Path, server_home: Path, content: str, **extra) -> str:
    """Remember ``content`` (semantic, distributed) straight into the hosted repository, as
    the server would; returns its memory id."""
    from ynm.model.inputs import RememberInput
    from ynm.service.ynm import Ynm

    env = {**os.environ, "YNM_HOME": str(server_home)}
    with Ynm.open(repo, env, personal=False) as y:
        return y.remember(RememberInput(type="semantic", level="distributed", content=content,
                                        **extra))["memoryId"]


@pytest.fixture
def serving(hosted_repo: Path, server_home: Path, tmp_path: Path):
    """``serving()`` -> a context manager running the hosted server (``--token TOKEN
    --no-personal``) and yielding its ``/mcp`` url; its stderr goes to
    ``tmp_path/server.log``."""
    def start(port: int | None = None):
        return serve_http(hosted_repo, "--token", TOKEN, "--no-personal", port=port,
                          env={"YNM_HOME": str(server_home)},
                          stderr=tmp_path / "server.log")
    return start


def mount_team(ynm_home: Path, url: str, mount_id: str = "team") -> None:
    """Configure the hosted mount in the CLI's home config (url only, never a token)."""
    ynm_home.mkdir(parents=True, exist_ok=True)
    (ynm_home / "config.json").write_text(json.dumps({"mounts": [
        {"id": mount_id, "level": "distributed", "provider": "mcp", "url": url}]}))


@pytest.fixture
def team(serving, ynm_home: Path, cli_run, project: Path) -> Iterator[str]:
    """The hosted server running, mounted as ``team`` and signed in; yields its url."""
    with serving() as base:
        url = base + "/mcp"
        mount_team(ynm_home, url)
        result = cli_run("login", "team", "--token", TOKEN)
        assert result.exit_code == 0, result.stderr
        yield url


def remember_local(cli_run, content: str) -> str:
    result = cli_run("remember", "--type", "semantic", "--level", "distributed", "--content",
                     content, "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout)["memoryId"]


def recall_json(cli_run, *args: str):
    result = cli_run("recall", *args, "--json")
    assert result.exit_code == 0, result.stderr
    return json.loads(result.stdout), result.stderr


# -- login / logout ------------------------------------------------------------------------


def test_login_keeps_the_token_in_a_0600_file_bound_to_the_url(serving, ynm_home, cli_run,
                                                                project):
    with serving() as base:
        url = base + "/mcp"
        mount_team(ynm_home, url)
        result = cli_run("login", "team", input=TOKEN + "\n", )  # the token on stdin
        assert result.exit_code == 0, result.stderr
        assert result.stdout == f"signed in to team ({url})\n"
        assert TOKEN not in result.stdout + result.stderr
        auth = ynm_home / "auth" / "team.json"
        assert stat.S_IMODE(auth.stat().st_mode) == 0o600
        assert stat.S_IMODE(auth.parent.stat().st_mode) == 0o700
        assert json.loads(auth.read_text()) == {"v": 1, "url": url, "token": TOKEN}
        # the token is never in configuration
        assert TOKEN not in (ynm_home / "config.json").read_text()

        result = cli_run("login", url, "--token", TOKEN, "--json")  # by url, JSON
        assert result.exit_code == 0, result.stderr
        assert json.loads(result.stdout) == {"mount": "team", "url": url, "signedIn": True,
                                             "scopes": []}
        assert TOKEN not in result.stdout + result.stderr

        # the same mount id pointed elsewhere is not signed in: the token stays with its url
        from ynm.service.remote import read_sign_in

        assert read_sign_in(ynm_home, "team", url) == TOKEN
        assert read_sign_in(ynm_home, "team", url.replace("/mcp", "/other/mcp")) is None


def test_login_refusals_write_nothing(serving, ynm_home, cli_run, project):
    with serving() as base:
        mount_team(ynm_home, base + "/mcp")
        result = cli_run("login", "nope", "--token", TOKEN)
        assert result.exit_code == 2
        assert result.stderr == (
            'Error: no remote mount "nope": add {"id":"nope","level":"distributed",'
            '"provider":"mcp","url":"…"} to mounts in ~/.ynm/config.json\n')
        result = cli_run("login", "team", "--token", OTHER_TOKEN)
        assert result.exit_code == 1
        assert result.stderr == (
            f"Error: could not sign in to team ({base}/mcp): the hosted store refused the "
            "sign-in (401 invalid_token: Missing or invalid bearer token); get a new token "
            "(from the store's operator or your identity provider) and sign in with it: "
            "`ynm login team`\n")
        assert OTHER_TOKEN not in result.stderr
        result = cli_run("login", "team", input="\n")
        assert result.exit_code == 2 and "token: empty" in result.stderr
        assert not (ynm_home / "auth" / "team.json").exists()
    # the server is down: signing in fails, nothing kept
    result = cli_run("login", "team", "--token", TOKEN)
    assert result.exit_code == 1 and "cannot reach it" in result.stderr
    assert not (ynm_home / "auth" / "team.json").exists()


def test_logout_forgets_the_sign_in_and_always_exits_0(team, ynm_home, cli_run):
    assert (ynm_home / "auth" / "team.json").exists()
    result = cli_run("logout", "team")
    assert (result.exit_code, result.stdout) == (0, "signed out of team\n")
    assert not (ynm_home / "auth" / "team.json").exists()
    result = cli_run("logout", "team", "--json")
    assert (result.exit_code, json.loads(result.stdout)) == (
        0, {"mount": "team", "signedOut": False})
    result = cli_run("logout", "gone")
    assert (result.exit_code, result.stdout) == (0, "not signed in to gone\n")


# -- reads ---------------------------------------------------------------------------------


def test_recall_returns_local_and_hosted_hits_together(team, hosted_repo, server_home,
                                                       cli_run):
    hid = hosted_write(hosted_repo, server_home, "The payments team deploys with helm")
    lid = remember_local(cli_run, "Our service deploys with helm as well")
    hits, stderr = recall_json(cli_run, "deploys", "helm")
    assert {(h["memoryId"], h["mount"]) for h in hits} == {(hid, "team"), (lid, "project")}
    assert stderr == ""
    hosted = next(h for h in hits if h["mount"] == "team")
    assert hosted["summary"] == "The payments team deploys with helm"
    assert "explain" not in hosted  # asked of the store to weigh it, not shown unasked
    # --mount team reads only the hosted store; --level personal leaves it out
    hits, _ = recall_json(cli_run, "deploys", "helm", "--mount", "team")
    assert [h["memoryId"] for h in hits] == [hid]
    hits, _ = recall_json(cli_run, "deploys", "helm", "--level", "personal")
    assert hits == []
    # human output names the hosted mount in its column
    result = cli_run("recall", "deploys", "helm")
    assert result.exit_code == 0 and " team " in result.stdout
    # a recall that finds nothing names the words no local memory holds (the hosted store's
    # words are not known here)
    hits, stderr = recall_json(cli_run, "zebra", "crossing")
    assert hits == []
    assert stderr == ('hint: no local memory holds "zebra", "crossing"; ask in the words your '
                      "memories use\n")


FILLERS = ("Lunch is at noon on Fridays", "The wiki lives in Confluence",
           "Our office dog is called Biscuit", "Standup starts at half past nine",
           "Expenses are filed by the end of the month", "The printer is on floor two")


@pytest.mark.parametrize(("local", "hosted", "local_newer", "query", "first"), [
    # the hosted memory holds every word; the newer local one two of three
    ("The helm release of the ledger is pinned",
     "Roll back a bad helm release with helm rollback",
     True, ("helm", "release", "rollback"), "hosted"),
    # the local memory holds every word; the newer hosted one three of four
    ("Canary analysis gates every production deploy",
     "Canary analysis gates use the SLO budget",
     False, ("canary", "analysis", "gates", "deploy"), "local"),
])
def test_relevance_across_local_and_hosted_stays_comparable(
        team, hosted_repo, server_home, cli_run, local, hosted, local_newer, query, first):
    """A full match outranks a partial one whichever store holds it and whichever is newer,
    as across local mounts. The reference's reciprocal-rank fusion (algorithms.md §2.7) gives
    both first hits 1/61 and lets the newer win; so did scoring hosted hits as they came."""
    for text in FILLERS:
        hosted_write(hosted_repo, server_home, text)
        remember_local(cli_run, text)
    ids = {}
    if local_newer:
        ids["hosted"] = hosted_write(hosted_repo, server_home, hosted)
        ids["local"] = remember_local(cli_run, local)
    else:
        ids["local"] = remember_local(cli_run, local)
        ids["hosted"] = hosted_write(hosted_repo, server_home, hosted)
    hits, _ = recall_json(cli_run, *query, "--explain")
    by_id = {h["memoryId"]: h for h in hits}
    order = [h["memoryId"] for h in hits]
    other = "local" if first == "hosted" else "hosted"
    assert order[:2] == [ids[first], ids[other]]
    assert by_id[ids["hosted"]]["mount"] == "team" and by_id[ids["local"]]["mount"] == "project"
    assert by_id[ids[first]]["explain"]["relevance"] == pytest.approx(1.0)
    assert by_id[ids[other]]["explain"]["relevance"] < 0.8
    assert by_id[ids[first]]["score"] > by_id[ids[other]]["score"]


def test_with_the_server_stopped_recall_answers_locally_and_names_the_mount(
        serving, ynm_home, cli_run, project, hosted_repo, server_home):
    port = free_port()
    with serving(port) as base:
        url = base + "/mcp"
        mount_team(ynm_home, url)
        assert cli_run("login", "team", "--token", TOKEN).exit_code == 0
        hosted_write(hosted_repo, server_home, "The payments team deploys with helm")
        lid = remember_local(cli_run, "Our service deploys with helm as well")
        hits, _ = recall_json(cli_run, "helm")
        assert len(hits) == 2
    # stopped
    left = f"shared memory left out: team ({url}): cannot reach it"
    result = cli_run("recall", "helm")
    assert result.exit_code == 0
    assert lid in result.stdout and " team " not in result.stdout
    assert result.stderr.startswith(left)
    hits, stderr = recall_json(cli_run, "helm")
    assert [h["memoryId"] for h in hits] == [lid]  # stdout stays the JSON array
    assert stderr.startswith(left)
    result = cli_run("context", "--json")
    assert result.exit_code == 0
    block = json.loads(result.stdout)
    assert block["included"] == [lid]
    assert block["leftOut"] == [{"mount": "team", "url": url,
                                 "reason": block["leftOut"][0]["reason"]}]
    assert block["leftOut"][0]["reason"].startswith("cannot reach it")
    result = cli_run("status", "--json")
    assert result.exit_code == 0
    team = next(m for m in json.loads(result.stdout)["mounts"] if m["id"] == "team")
    assert team["provider"] == "mcp" and team["location"] == url and team["signedIn"] is True
    assert team["shards"] == -1 and team["error"].startswith("cannot reach it")
    result = cli_run("status")
    assert "team" in result.stdout and "cannot reach it" in result.stdout


def test_a_refused_or_missing_sign_in_is_named_not_dropped(team, ynm_home, hosted_repo,
                                                           server_home, cli_run):
    hosted_write(hosted_repo, server_home, "The payments team deploys with helm")
    lid = remember_local(cli_run, "Our service deploys with helm as well")
    from ynm.service.remote import save_sign_in

    save_sign_in(ynm_home, "team", team, OTHER_TOKEN)
    hits, stderr = recall_json(cli_run, "helm")
    assert [h["memoryId"] for h in hits] == [lid]
    assert stderr == (f"shared memory left out: team ({team}): the hosted store refused the "
                      "sign-in (401 invalid_token: Missing or invalid bearer token); get a new "
                      "token (from the store's operator or your identity provider) and sign "
                      "in with it: `ynm login team`\n")
    # every hosted call gives the store's reason: context, status, remember
    for args in (("context", "--json"), ("status", "--json")):
        out = cli_run(*args)
        assert "401 invalid_token: Missing or invalid bearer token" in out.stdout + out.stderr
    out = cli_run("remember", "--mount", "team", "--level", "distributed", "--type",
                  "semantic", "--content", "Refused writes say why")
    assert out.exit_code == 1
    assert "401 invalid_token: Missing or invalid bearer token" in out.stderr
    assert OTHER_TOKEN not in stderr
    assert cli_run("logout", "team").exit_code == 0
    hits, stderr = recall_json(cli_run, "helm")
    assert [h["memoryId"] for h in hits] == [lid]
    assert stderr == (f"shared memory left out: team ({team}): not signed in; run "
                      "`ynm login team`\n")
    status = json.loads(cli_run("status", "--json").stdout)
    team_entry = next(m for m in status["mounts"] if m["id"] == "team")
    assert team_entry["signedIn"] is False and "not signed in" in team_entry["error"]


def test_context_gives_the_hosted_store_a_shared_section(team, hosted_repo, server_home,
                                                         cli_run):
    hid = hosted_write(hosted_repo, server_home, "The payments team deploys with helm")
    lid = remember_local(cli_run, "Our service deploys on Tuesdays")
    result = cli_run("context", "--json")
    assert result.exit_code == 0, result.stderr
    block = json.loads(result.stdout)
    assert block["markdown"] == ("## Memory\n- (semantic) Our service deploys on Tuesdays\n\n"
                                 "## Shared memory (team)\n"
                                 "- (semantic) The payments team deploys with helm\n")
    assert block["included"] == [lid, hid]
    assert block["truncated"] is False and "leftOut" not in block
    # the hosted section gets at most 40% of the budget: 12 of 30 tokens cannot hold its
    # heading and line (3 + 12), so it is dropped and the local block has the whole budget
    block = json.loads(cli_run("context", "--json", "--budget-tokens", "30").stdout)
    assert block["included"] == [lid] and block["tokens"] == 14
    block = json.loads(cli_run("context", "--json", "--budget-tokens", "38").stdout)
    assert block["included"] == [lid, hid] and block["tokens"] == 29  # 15 of 15 hosted


def test_remember_to_the_hosted_mount_writes_there(team, hosted_repo, server_home, cli_run):
    from ynm.service.ynm import Ynm

    result = cli_run("remember", "--type", "semantic", "--level", "distributed", "--mount",
                     "team", "--content", "Written from the CLI into the team store", "--json")
    assert result.exit_code == 0, result.stderr
    out = json.loads(result.stdout)
    assert out["mount"] == "team"
    with Ynm.open(hosted_repo, {**os.environ, "YNM_HOME": str(server_home)},
                  personal=False) as y:
        _, state = y.find(out["memoryId"])
    assert state["current"]["content"] == "Written from the CLI into the team store"
    assert state["current"]["provenance"]["actor"] == "token:static"
    # a personal record cannot go to a hosted (distributed) store
    result = cli_run("remember", "--type", "semantic", "--level", "personal", "--mount", "team",
                     "--content", "private")
    assert result.exit_code == 1
    assert result.stderr == 'Error: mount "team" is distributed; cannot take a personal record\n'


def test_no_token_in_any_output_or_log(team, tmp_path, hosted_repo, server_home, cli_run):
    hosted_write(hosted_repo, server_home, "The payments team deploys with helm")
    outputs = []
    for args in (("recall", "helm"), ("recall", "helm", "--json"), ("context",),
                 ("status",), ("status", "--json"), ("login", "team", "--token", TOKEN)):
        result = cli_run(*args)
        assert result.exit_code == 0, (args, result.stderr)
        outputs.append(result.stdout + result.stderr)
    assert all(TOKEN not in text for text in outputs)
    log = (tmp_path / "server.log").read_text()
    assert "POST /mcp" in log or "listening" in log  # the server did log
    assert TOKEN not in log


def test_edits_of_a_hosted_memory_go_to_the_hosted_store(team, hosted_repo, server_home,
                                                         cli_run):
    from ynm.service.ynm import Ynm

    hid = hosted_write(hosted_repo, server_home, "The payments team deploys with helm")
    result = cli_run("supersede", "--memory-id", hid, "--content",
                     "The payments team deploys with argo", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["mount"] == "team"
    result = cli_run("annotate", "--memory-id", hid, "--tags", "deploy", "--json")
    assert result.exit_code == 0, result.stderr
    assert json.loads(result.stdout)["mount"] == "team"
    result = cli_run("forget", "--memory-id", hid, "--json")
    assert result.exit_code == 0, result.stderr
    with Ynm.open(hosted_repo, {**os.environ, "YNM_HOME": str(server_home)},
                  personal=False) as y:
        _, state = y.find(hid)
    assert state["current"]["content"] == "The payments team deploys with argo"
    assert "deploy" in state["tags"] and state["tombstoned"] is True
    # a memory neither the local mounts nor the hosted store hold is unknown, exit 1
    missing = "01" + "A" * 24
    result = cli_run("annotate", "--memory-id", missing, "--tags", "x")
    assert (result.exit_code, result.stderr) == (1, f"Error: unknown memory {missing}\n")


def test_an_edit_that_cannot_ask_the_hosted_store_says_so(serving, ynm_home, cli_run, project):
    with serving() as base:
        url = base + "/mcp"
    mount_team(ynm_home, url)  # stopped: the hosted store cannot be asked
    missing = "01" + "B" * 24
    result = cli_run("annotate", "--memory-id", missing, "--tags", "x")
    assert result.exit_code == 1
    assert result.stderr.startswith(
        f"Error: unknown memory {missing} in the mounts that answered; not asked: team ({url}): "
        "cannot reach it (")


def test_the_mcp_tools_name_a_left_out_hosted_store_in_the_guidance(
        serving, ynm_home, cli_run, project, hosted_repo, server_home):
    """An agent's local server (stdio) reads the hosted mount too, and its guidance names a
    hosted store it could not reach (reference/algorithms.md §2.7)."""
    from tests.server.conftest import run
    from ynm.server.app import MemoryService, build_server

    lid = remember_local(cli_run, "Our service deploys with helm as well")
    with serving() as base:
        url = base + "/mcp"
        mount_team(ynm_home, url)
        assert cli_run("login", "team", "--token", TOKEN).exit_code == 0
        hid = hosted_write(hosted_repo, server_home, "The payments team deploys with helm")
        service = MemoryService(project)
        service.open()
        from mcp import Client

        async def ask():
            async with Client(build_server(service)) as c:
                return (await c.call_tool("memory_recall", {"text": "helm"}),
                        await c.call_tool("memory_context", {}))

        try:
            recall, context = run(ask, timeout=60)
        except BaseException:
            service.close()
            raise
        assert {h["memoryId"] for h in recall.structured_content["data"]} == {lid, hid}
        assert recall.structured_content["guidance"] is None
        assert hid in context.structured_content["data"]["included"]
    try:  # the hosted server stopped
        recall, context = run(ask, timeout=60)
    finally:
        service.close()
    assert [h["memoryId"] for h in recall.structured_content["data"]] == [lid]
    assert recall.structured_content["guidance"].startswith(
        f"Shared memory left out: team ({url}): cannot reach it")
    assert context.structured_content["data"]["included"] == [lid]
    assert "Shared memory left out: team" in context.structured_content["guidance"]


def test_without_the_server_extra_a_ynm_store_is_still_called(team, hosted_repo, server_home,
                                                              project, cli_run):
    """The one-request call goes out with httpx, a core dependency: neither the mcp client
    nor its httpx2 is needed to read a ``ynm serve --http`` store."""
    from tests.support.blocked import run_without

    hid = hosted_write(hosted_repo, server_home, "The payments team deploys with helm")
    lid = remember_local(cli_run, "Our service deploys with helm as well")
    result = run_without(["mcp", "httpx2"], "recall", "deploys", "helm", "--json",
                         cwd=project)
    assert result.returncode == 0, result.stderr
    assert {(h["memoryId"], h["mount"]) for h in json.loads(result.stdout)} == {
        (hid, "team"), (lid, "project")}
    assert result.stderr == ""


@pytest.fixture
def legacy_team(serving, ynm_home: Path, cli_run, project: Path) -> Iterator[tuple[str, list]]:
    """The hosted server behind a proxy that speaks only the handshake-era protocol, mounted
    as ``team`` and signed in; yields ``(url, proxy log)``."""
    from tests.support.legacy_proxy import legacy_proxy

    with serving() as base, legacy_proxy(base) as (proxied, log):
        url = proxied + "/mcp"
        mount_team(ynm_home, url)
        assert cli_run("login", "team", "--token", TOKEN).exit_code == 0
        yield url, log


def test_a_handshake_era_store_is_asked_again_with_the_mcp_client(
        legacy_team, hosted_repo, server_home, cli_run):
    _url, log = legacy_team
    hid = hosted_write(hosted_repo, server_home, "The payments team deploys with helm")
    lid = remember_local(cli_run, "Our service deploys with helm as well")
    log.clear()
    hits, stderr = recall_json(cli_run, "deploys", "helm")
    assert {(h["memoryId"], h["mount"]) for h in hits} == {(hid, "team"), (lid, "project")}
    assert stderr == ""
    # the one-request call was refused, then the mcp client's handshake got through
    assert log[0] == "POST refused"
    assert "POST 200" in log[1:]
    # context and a write take the same way
    result = cli_run("context", "--text", "helm deploys", "--json")
    assert result.exit_code == 0, result.stderr
    assert hid in json.loads(result.stdout)["included"]
    result = cli_run("remember", "--type", "semantic", "--level", "distributed", "--mount",
                     "team", "--content", "Helm charts live in the deploy repo", "--json")
    assert result.exit_code == 0, result.stderr
    written = json.loads(result.stdout)["memoryId"]
    hits, _ = recall_json(cli_run, "helm", "charts", "--mount", "team")
    assert written in [h["memoryId"] for h in hits]


def test_a_handshake_era_store_without_the_server_extra_names_what_to_install(
        legacy_team, project, cli_run):
    from tests.support.blocked import run_without

    url, _ = legacy_team
    lid = remember_local(cli_run, "Our service deploys with helm as well")
    result = run_without(["mcp"], "recall", "helm", cwd=project)
    assert result.returncode == 0, result.stderr
    assert lid in result.stdout and "Traceback" not in result.stderr
    assert result.stderr == (
        f"shared memory left out: team ({url}): a hosted (mcp) mount needs the server extra "
        f"(mcp is not installed): {pip_install('server')}\n")


def test_without_the_mcp_client_an_unreachable_store_is_named(project, ynm_home, cli_run):
    """A tool call is one HTTP request: the mcp package is not imported."""
    from tests.support.blocked import run_without

    lid = remember_local(cli_run, "Our service deploys with helm as well")
    mount_team(ynm_home, "http://127.0.0.1:9/mcp")
    result = run_without(["mcp", "httpx2"], "recall", "helm", cwd=project)
    assert result.returncode == 0 and lid in result.stdout
    assert result.stderr.startswith(
        "shared memory left out: team (http://127.0.0.1:9/mcp): cannot reach it")


def test_a_recall_with_nothing_local_and_a_store_left_out_says_it_is_incomplete(
        project, ynm_home, cli_run):
    import socket

    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        url = f"http://127.0.0.1:{silent.getsockname()[1]}/mcp"
        ynm_home.mkdir(parents=True, exist_ok=True)
        (ynm_home / "config.json").write_text(json.dumps({"mounts": [
            {"id": "team", "level": "distributed", "provider": "mcp", "url": url,
             "timeout": 0.5}]}))
        result = cli_run("recall", "helm")
    assert result.exit_code == 0
    assert result.stdout == ("No matches in the stores that answered; the answer is "
                             "incomplete: shared memory was left out (below)\n")
    assert result.stderr == (f"shared memory left out: team ({url}): no answer within 0.5 s "
                             "(give a slow store more with \"timeout\" in its mount's "
                             "configuration)\n")


@pytest.mark.parametrize(("content", "mode", "said"), [
    ("not json", 0o600, "is damaged (not JSON), so team is not signed in: run `ynm login team` "
                        "to replace it"),
    ('["x"]', 0o600, "is damaged (not a ynm sign-in), so team is not signed in: run `ynm login "
                     "team` to replace it"),
    ('{"v": 1, "url": "URL", "token": "a b"}', 0o600,
     "is damaged (no token that can be sent), so team is not signed in: run `ynm login team` "
     "to replace it"),
    ('{"v": 1, "url": "URL", "token": "tok"}', 0o644,
     "can be read by other users (mode 0644): run `chmod 600 PATH`"),
])
def test_a_damaged_or_open_sign_in_file_is_named_with_its_fix(project, ynm_home, cli_run,
                                                               content, mode, said):
    url = "http://127.0.0.1:9/mcp"
    mount_team(ynm_home, url)
    path = ynm_home / "auth" / "team.json"
    path.parent.mkdir(mode=0o700)
    path.write_text(content.replace("URL", url))
    os.chmod(path, mode)
    result = cli_run("recall", "helm")
    assert result.exit_code == 0
    assert f"warning: sign-in file {path} {said.replace('PATH', str(path))}\n" in result.stderr
    path.write_text(json.dumps({"v": 1, "url": url, "token": "tok"}))
    os.chmod(path, 0o600)
    assert "sign-in file" not in cli_run("recall", "helm").stderr


@pytest.mark.parametrize(("name", "mount_id", "url"), [
    ("http://localhost:9/mcp", "team", "http://localhost:9/mcp"),
    ("https://memory.example.com/mcp", "example", "https://memory.example.com/mcp"),
    ("https://mcp.acme.io:8443/mcp", "acme", "https://mcp.acme.io:8443/mcp"),
    ("http://devbox:3000/mcp", "devbox", "http://devbox:3000/mcp"),
    ("http://127.0.0.1:8080/mcp", "team", "http://127.0.0.1:8080/mcp"),
    ("http://[::1]:8080/mcp", "team", "http://[::1]:8080/mcp"),
    ("https://project.example.com/mcp", "team", "https://project.example.com/mcp"),
    ("https://Team_Mem.Corp.example/mcp", "team_mem", "https://Team_Mem.Corp.example/mcp"),
    ("team", "team", "…"),
])
def test_login_of_an_unknown_mount_suggests_a_sane_entry(project, ynm_home, cli_run, name,
                                                         mount_id, url):
    result = cli_run("login", name, "--token", "x")
    assert (result.exit_code, result.stderr) == (2, (
        f'Error: no remote mount "{name}": add {{"id":"{mount_id}","level":"distributed",'
        f'"provider":"mcp","url":"{url}"}} to mounts in ~/.ynm/config.json\n'))


@pytest.mark.parametrize("command", [("list",), ("export",), ("reindex",)])
def test_local_reads_name_a_hosted_mount_as_one_they_cannot_reach(project, ynm_home, cli_run,
                                                                  command):
    mount_team(ynm_home, "http://127.0.0.1:9/mcp")
    result = cli_run(*command, "--mount", "team")
    assert result.exit_code == 0
    assert ('warning: "team" is a hosted store; this command reads local mounts only: '
            "`ynm recall --mount team` shows its memories\n") in result.stderr
    assert 'no mount "team"' not in result.stderr


@pytest.mark.parametrize("command", ["show", "history"])
def test_show_of_an_unknown_id_with_a_hosted_mount_says_how_to_see_it(project, ynm_home,
                                                                       cli_run, command):
    mount_team(ynm_home, "http://127.0.0.1:9/mcp")
    mid = "01M8R9HWGXR3G0PYYEREVCDXGW"
    result = cli_run(command, mid)
    assert result.exit_code == 1
    assert result.stderr == (f"Error: unknown memory {mid}; ynm {command} reads local mounts "
                             "only: a memory of a hosted store (team) is shown in full by "
                             "`ynm recall --mount <id> --json`\n")
