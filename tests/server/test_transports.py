"""``ynm serve`` end to end with the SDK's own client: stdio (a subprocess) and streamable HTTP
(a subprocess on 127.0.0.1 and a free port). Reference: server.md §1.1, §2.1-§2.5."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import AbstractContextManager
from pathlib import Path

import anyio
import pytest

from tests.server.conftest import run, text
from tests.support.serve import free_port, serve_http
from ynm.errors import ShareRequired

TOKEN = "s3cret-token"


def _stdio_params(repo: Path, *extra: str):
    from mcp.client.stdio import StdioServerParameters

    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "ynm", "serve", "--cwd", str(repo), *extra],
                                 env=dict(os.environ), cwd=str(repo))


def test_stdio_serves_every_tool_kind(project):
    from mcp import Client

    async def go():
        async with Client(_stdio_params(project)) as c:
            tools = await c.list_tools()
            wrote = await c.call_tool("memory_remember",
                                      {"type": "semantic", "content": "stdio works"})
            bad = await c.call_tool("memory_remember", {"type": "working", "content": "x"})
            hits = await c.call_tool("memory_recall", {"text": "stdio"})
            return c.instructions, tools, wrote, bad, hits

    instructions, tools, wrote, bad, hits = run(go, timeout=30)
    assert "memory_remember" in instructions
    assert len(tools.tools) == 11
    assert not wrote.is_error and wrote.structured_content["data"]["mount"] == "personal"
    assert bad.is_error
    assert text(bad) == "invalid input: namespace: working memory must live in session/<id>"
    assert hits.structured_content["data"][0]["content"] == "stdio works"


def test_stdio_no_personal(project):
    from mcp import Client

    async def go():
        async with Client(_stdio_params(project, "--no-personal")) as c:
            return await c.call_tool("memory_remember",
                                     {"type": "semantic", "content": "nope"})

    result = run(go, timeout=30)
    assert result.is_error and text(result) == str(ShareRequired())


# -- HTTP ----------------------------------------------------------------------------------


def _get(url: str, headers: dict[str, str] | None = None) -> tuple[int, dict, bytes]:
    req = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def _post(url: str, body: dict, headers: dict[str, str] | None = None) -> tuple[int, dict, bytes]:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream",
        **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


def _serving(project: Path, *args: str, env: dict[str, str] | None = None,
             host: str = "127.0.0.1") -> AbstractContextManager[str]:
    """``ynm serve --http --host <host> --port <free> <args>`` in a subprocess
    (tests.support.serve.serve_http); yields the base URL (always reached on 127.0.0.1)."""
    return serve_http(project, *args, env=env, host=host, wait_s=20)


@pytest.fixture
def http_server(project) -> Iterator[str]:
    """``ynm serve --http --token`` on 127.0.0.1; yields the base URL."""
    with _serving(project, "--token", TOKEN) as base:
        yield base


def _client(base: str, token: str | None = TOKEN):
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(10))
    return Client(streamable_http_client(base + "/mcp", http_client=http)), http


def test_health_needs_no_token(http_server):
    status, _, body = _get(http_server + "/health")
    assert status == 200
    assert json.loads(body) == {"status": "ok", "name": "ynm", "auth": "bearer",
                                "scheduler": None}


def test_without_the_token_mcp_answers_401(http_server):
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    status, headers, body = _post(http_server + "/mcp", ping)
    assert status == 401
    assert json.loads(body)["error"] == "invalid_token"
    assert headers.get("www-authenticate", headers.get("WWW-Authenticate", "")).startswith(
        "Bearer")
    status, _, _ = _post(http_server + "/mcp", ping, {"Authorization": "Bearer wrong"})
    assert status == 401
    status, _, _ = _post(http_server + "/mcp", ping, {"Authorization": f"Bearer {TOKEN}"})
    assert status == 200


def test_host_and_origin_checks(http_server):
    ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    auth = {"Authorization": f"Bearer {TOKEN}"}
    assert _post(http_server + "/mcp", ping, {**auth, "Origin": "https://evil.example"})[0] == 403
    assert _post(http_server + "/mcp", ping, {**auth, "Origin": "http://localhost:5173"})[0] == 200
    assert _post(http_server + "/mcp", ping, {**auth, "Host": "evil.example"})[0] == 421
    req = urllib.request.Request(http_server + "/mcp", method="OPTIONS")
    with urllib.request.urlopen(req, timeout=5) as resp:
        assert resp.status == 204
        assert "Authorization" in resp.headers["Access-Control-Allow-Headers"]


def test_http_write_carries_token_static_actor(http_server, project):
    from ynm.service.ynm import Ynm

    async def go():
        client, http = _client(http_server)
        async with http, client as c:
            return await c.call_tool("memory_remember", {
                "type": "semantic", "content": "written over http", "level": "distributed"})

    result = run(go, timeout=30)
    assert not result.is_error, text(result)
    mid = result.structured_content["data"]["memoryId"]
    with Ynm.open(project) as ynm:
        _, state = ynm.find(mid)
    assert state["current"]["provenance"]["actor"] == "token:static"


def test_http_client_without_token_cannot_connect(http_server):
    async def go():
        client, http = _client(http_server, token=None)
        async with http, client as c:
            await c.list_tools()

    with pytest.raises(Exception):  # noqa: B017 - the SDK's error type for a 401 varies
        run(go, timeout=15)


def test_two_http_clients_interleave_writes_and_all_land(http_server, project):
    from ynm.model.inputs import RecallQuery
    from ynm.service.ynm import Ynm

    n = 6

    async def writer(name: str, ids: list[str]) -> None:
        client, http = _client(http_server)
        async with http, client as c:
            for i in range(n):
                r = await c.call_tool("memory_remember", {
                    "type": "episodic", "content": f"{name} note {i}", "tags": [name]})
                assert not r.is_error, text(r)
                ids.append(r.structured_content["data"]["memoryId"])

    async def go():
        a: list[str] = []
        b: list[str] = []
        async with anyio.create_task_group() as tg:
            tg.start_soon(writer, "alpha", a)
            tg.start_soon(writer, "beta", b)
        return a, b

    a, b = run(go, timeout=60)
    assert len(set(a + b)) == 2 * n
    with Ynm.open(project) as ynm:
        for tag, ids in (("alpha", a), ("beta", b)):
            hits = ynm.recall(RecallQuery(tags=[tag], limit=50))
            assert sorted(h["memoryId"] for h in hits) == sorted(ids)


# -- Host/Origin case, open servers, token lists (reference/server.md §2.1-§2.3, §6) -------

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


def test_host_and_origin_compare_names_and_schemes_case_insensitively(project):
    with _serving(project, "--allow-host", "DEVBOX", "--allow-origin",
                  "https://App.Example.com") as base:
        port = base.rsplit(":", 1)[1]

        def status(**headers: str) -> int:
            return _post(base + "/mcp", PING, headers)[0]

        assert status(Host=f"devbox:{port}") == 200
        assert status(Host=f"DevBox.:{port}") == 200
        assert status(Host=f"LOCALHOST:{port}") == 200
        assert status(Host=f"[::1]:{port}") == 200
        assert status(Host=f"devbox.evil.example:{port}") == 421
        assert status(Origin="https://app.example.com") == 200
        assert status(Origin="HTTPS://APP.EXAMPLE.COM:443") == 200
        assert status(Origin="https://app.example.com:8443") == 403
        assert status(Origin="http://app.example.com") == 403
        code, headers, _ = _post(base + "/mcp", PING, {"Origin": "https://APP.example.com"})
        assert headers.get("access-control-allow-origin") == "https://APP.example.com"
        with urllib.request.urlopen(urllib.request.Request(base + "/health"), timeout=5) as r:
            assert json.loads(r.read())["auth"] == "none"


def _refused_start(project: Path, *args: str, env: dict[str, str] | None = None):
    """``ynm serve --http <args>`` in a subprocess that must stop by itself (a server that
    starts instead fails the test at the timeout rather than hanging it)."""
    return subprocess.run(
        [sys.executable, "-m", "ynm", "serve", "--http", "--port", str(free_port()),
         "--cwd", str(project), *args],
        env={**os.environ, **(env or {})}, capture_output=True, text=True, timeout=20)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10"])
def test_open_non_loopback_server_refuses_to_start(project, host):
    result = _refused_start(project, "--host", host)
    assert result.returncode == 2
    assert result.stderr.startswith(f"Error: refusing to serve {host} without auth")
    assert "--allow-open" in result.stderr and "Traceback" not in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize("name", ["YNM_AUTH", "YNM_AUTH_PROVIDER", "YNM_OAUTH_ISSUER",
                                  "YNM_JWT_ANYTHING"])
def test_unsupported_auth_variable_stops_start_up_by_name(project, name):
    result = _refused_start(project, "--token", TOKEN, env={name: "value"})
    assert result.returncode == 2
    assert result.stderr.startswith(f"Error: {name} is set, but ynm serve does not support")


def test_allow_open_serves_without_auth_keeps_host_check_and_no_personal_store(project):
    with _serving(project, "--allow-open", host="0.0.0.0") as base:
        assert json.loads(_get(base + "/health")[2])["auth"] == "none"
        assert _post(base + "/mcp", PING, {"Host": "evil.example"})[0] == 421

        async def go():
            client, http = _client(base, token=None)
            async with http, client as c:
                return (await c.call_tool("memory_remember",
                                          {"type": "semantic", "content": "no level"}),
                        await c.call_tool("memory_status", {}))

        refused, status = run(go, timeout=30)
    assert refused.is_error and text(refused) == str(ShareRequired())
    mounts = [m["id"] for m in status.structured_content["data"]["mounts"]]
    assert "personal" not in mounts and mounts


@pytest.mark.parametrize(("args", "env"), [(("--token", "one,two"), {}),
                                           ((), {"YNM_MCP_TOKEN": "one, two"})])
def test_token_list_accepts_each_token(project, args, env):
    with _serving(project, *args, env=env) as base:
        assert json.loads(_get(base + "/health")[2])["auth"] == "bearer"
        for token, want in (("one", 200), ("two", 200), ("one,two", 401), ("three", 401)):
            assert _post(base + "/mcp", PING, {"Authorization": f"Bearer {token}"})[0] == want


def test_auth_settings_in_env_files_are_not_ignored(project, ynm_home):
    (project / ".env").write_text("YNM_JWT_AUDIENCE=https://mem.example\n")
    result = _refused_start(project)
    assert result.returncode == 2
    assert result.stderr.startswith("Error: YNM_JWT_AUDIENCE is set but YNM_JWKS_URL is not")
    (project / ".env").unlink()
    ynm_home.mkdir(parents=True, exist_ok=True)
    (ynm_home / "env").write_text("export YNM_MCP_TOKEN='from-file,other'\n")
    with _serving(project) as base:
        assert json.loads(_get(base + "/health")[2])["auth"] == "bearer"
        assert _post(base + "/mcp", PING)[0] == 401
        assert _post(base + "/mcp", PING, {"Authorization": "Bearer from-file"})[0] == 200
