"""``ynm serve --http`` end to end with JWT and introspection auth against a local identity
provider on 127.0.0.1 (reference/server.md §2.2, §2.3; per-tool scopes: ADR-017's proposal,
built), ``--modern-only`` over stdio and the ``ynm-mcp`` console script (§1.1, §2.1)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("joserfc")

from tests.server.conftest import run  # noqa: E402
from tests.support.idp import AUDIENCE, ISSUER, Idp  # noqa: E402
from tests.support.serve import serve_http  # noqa: E402


@pytest.fixture
def idp() -> Iterator[Idp]:
    provider = Idp()
    yield provider
    provider.stop()


def _http(method: str, url: str, body: Any = None,
          token: str | None = None) -> tuple[int, dict[str, str], Any]:
    headers = {"Content-Type": "application/json", "Accept": "application/json, "
               "text/event-stream", **({"Authorization": f"Bearer {token}"} if token else {})}
    req = urllib.request.Request(url, method=method, headers=headers,
                                 data=json.dumps(body).encode() if body is not None else None)
    try:
        with urllib.request.urlopen(req, timeout=15) as resp:
            status, head, raw = resp.status, resp.headers, resp.read()
    except urllib.error.HTTPError as e:
        status, head, raw = e.code, e.headers, e.read()
    return status, {k.lower(): v for k, v in head.items()}, json.loads(raw) if raw else None


def _tool(base: str, token: str | None, name: str, **args: Any) -> tuple[int, dict, Any]:
    return _http("POST", base + "/mcp", {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                                         "params": {"name": name, "arguments": args}}, token)


def _data(answer: tuple[int, dict, Any]) -> Any:
    status, _, body = answer
    assert status == 200, answer
    result = body["result"]
    assert not result.get("isError"), result
    return result["structuredContent"]["data"]


def test_jwt_server_reads_and_writes_by_scope(project, idp):
    with serve_http(project, env=idp.jwt_env()) as base:
        assert _http("GET", base + "/health")[2]["auth"] == "jwt"
        status, headers, doc = _http("GET", base + "/.well-known/oauth-protected-resource")
        assert status == 200 and doc["authorization_servers"] == [ISSUER]
        assert doc["resource"] == AUDIENCE and headers["access-control-allow-origin"] == "*"

        writer = idp.mint(sub="alice", azp="claude", scope="memory:read memory:write")
        wrote = _data(_tool(base, writer, "memory_remember", type="semantic",
                            content="deploys run on Tuesdays", level="distributed"))
        worker = idp.mint(drop=("sub",), client_id="nightly", scope="memory:write")
        worked = _data(_tool(base, worker, "memory_remember", type="semantic",
                             content="the nightly worker writes too", level="distributed"))

        reader = idp.mint(sub="bob", scope="memory:read")
        hits = _data(_tool(base, reader, "memory_recall", text="Tuesdays"))
        assert [h["memoryId"] for h in hits] == [wrote["memoryId"]]
        status, headers, body = _tool(base, reader, "memory_remember", type="semantic",
                                      content="a reader cannot write", level="distributed")
        assert status == 403 and body["error"] == "insufficient_scope"
        assert headers["www-authenticate"].startswith('Bearer error="insufficient_scope"')
        assert 'scope="memory:write"' in headers["www-authenticate"]
        assert 'resource_metadata="https://mem.example/.well-known/oauth-protected-resource' \
               '/mcp"' in headers["www-authenticate"]
        assert _data(_tool(base, reader, "memory_recall", text="reader")) == []

        for bad in (idp.mint(exp=1), idp.mint(iss="https://evil.example"),
                    idp.mint(aud="https://other.example")):
            status, headers, body = _tool(base, bad, "memory_recall", text="Tuesdays")
            assert status == 401 and body["error"] == "invalid_token"
            assert "resource_metadata=" in headers["www-authenticate"]

        new = idp.rotate("k2")  # rotated at the issuer: nothing restarts
        assert _data(_tool(base, idp.mint(new, scope="memory:read"), "memory_recall",
                           text="Tuesdays"))

    # who each write is stamped as (reference/server.md §2.4, §2.5): a signed-in person writes
    # as user:<person id> into user/<person id> with the token's client; a token naming only a
    # client writes as client:<id> into common
    from ynm.model.people import person_id

    alice = person_id(ISSUER, "alice")
    records = {r["memoryId"]: r for r in map(json.loads, _ynm("export", cwd=project)
                                             .stdout.splitlines()) if r.get("op") == "create"}
    mine, theirs = records[wrote["memoryId"]], records[worked["memoryId"]]
    assert mine["provenance"]["actor"] == f"user:{alice}"
    assert mine["provenance"]["client"] == "claude"
    assert mine["namespace"] == f"user/{alice}"
    assert theirs["provenance"]["actor"] == "client:nightly"
    assert theirs["namespace"] == "common"


def _ynm(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ynm", *args], cwd=cwd, capture_output=True,
                          text=True, check=True, env={**os.environ, "YNM_EMBEDDER": "none"})


def test_introspection_server(project, idp):
    idp.introspection["good"] = {"active": True, "sub": "carol", "client_id": "cli"}
    idp.introspection["off"] = {"active": False}
    with serve_http(project, env=idp.introspection_env()) as base:
        assert _http("GET", base + "/health")[2]["auth"] == "introspection"
        assert _data(_tool(base, "good", "memory_status"))["mounts"]
        status, headers, body = _tool(base, "off", "memory_status")
        assert status == 401 and body["error"] == "invalid_token"
        assert "resource_metadata" not in headers["www-authenticate"]
        assert _http("GET", base + "/.well-known/oauth-protected-resource")[0] == 401


# -- --modern-only and ynm-mcp -------------------------------------------------------------


def _stdio(repo: Path, *extra: str):
    from mcp.client.stdio import StdioServerParameters

    return StdioServerParameters(command=sys.executable,
                                 args=["-m", "ynm", "serve", "--cwd", str(repo), *extra],
                                 env=dict(os.environ), cwd=str(repo))


@pytest.mark.parametrize("flags", [(), ("--modern-only",), ("--stdio", "--modern-only")])
def test_stdio_modern_only_refuses_handshake_clients(project, flags):
    from mcp import Client

    async def status(mode: str) -> Any:
        async with Client(_stdio(project, *flags), mode=mode) as c:
            return await c.call_tool("memory_status", {})

    modern = run(lambda: status("2026-07-28"), timeout=40)
    assert modern.structured_content["data"]["mounts"]
    if not flags:
        assert run(lambda: status("legacy"), timeout=40).structured_content["data"]["mounts"]
        return
    with pytest.raises(BaseException) as refused:  # the SDK's error, in a task group
        run(lambda: status("legacy"), timeout=40)
    leaves = [refused.value]
    while any(isinstance(e, BaseExceptionGroup) for e in leaves):
        leaves = [x for e in leaves for x in (e.exceptions if isinstance(
            e, BaseExceptionGroup) else [e])]
    assert any("serving the 2026-07-28 protocol; the initialize handshake is not accepted"
               in str(e) for e in leaves), leaves


def _ynm_mcp(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    code = "import sys; from ynm.cli.serve import mcp_main; mcp_main()"
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, capture_output=True,
                          text=True, timeout=30, env={**os.environ, "YNM_HTTP_HOST": ""})


def test_ynm_mcp_is_ynm_serve_under_its_own_name(project):
    from ynm import __version__

    assert _ynm_mcp("--version", cwd=project).stdout == f"ynm-mcp {__version__}\n"
    refused = _ynm_mcp("--http", "--host", "0.0.0.0", "--port", "1", cwd=project)
    assert refused.returncode == 2
    assert refused.stderr.startswith("Error: refusing to serve 0.0.0.0 without auth")
    both = _ynm_mcp("--http", "--stdio", cwd=project)
    assert both.returncode == 2 and both.stderr == ("Error: invalid input: --stdio and "
                                                    "--http: choose one transport\n")
    helped = _ynm_mcp("--help", cwd=project)
    assert helped.returncode == 0 and helped.stdout.startswith("Usage: ynm-mcp [OPTIONS]")
    assert "--modern-only" in helped.stdout


def test_the_console_scripts_are_declared():
    import importlib
    import tomllib

    root = Path(__file__).resolve().parents[2]
    scripts = tomllib.loads((root / "pyproject.toml").read_text())["project"]["scripts"]
    assert scripts["ynm-mcp"] == "ynm.cli.serve:mcp_main"
    module, attr = scripts["ynm-mcp"].split(":")
    assert callable(getattr(importlib.import_module(module), attr))


def test_http_modern_only_serves_modern_clients_and_refuses_handshake_ones(project):
    import httpx2
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client

    async def status(base: str, mode: str) -> Any:
        http = httpx2.AsyncClient(timeout=httpx2.Timeout(10))
        async with http, Client(streamable_http_client(base + "/mcp", http_client=http),
                                mode=mode) as c:
            return (await c.call_tool("memory_status", {})).structured_content["data"]

    with serve_http(project, "--modern-only") as base:
        assert run(lambda: status(base, "2026-07-28"), timeout=40)["mounts"]
        assert run(lambda: status(base, "auto"), timeout=40)["mounts"]
        with pytest.raises(BaseException):  # noqa: B017 - the SDK's error for a 400
            run(lambda: status(base, "legacy"), timeout=40)
        status_code, _, body = _http("POST", base + "/mcp", {
            "jsonrpc": "2.0", "id": 5, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "old", "version": "1"}}})
        assert status_code == 400 and body["error"]["code"] == -32022


# -- start-up lines ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("issuer", "audience", "warned"),
    [(None, "api", ["iss"]), ("https://idp", None, ["aud"]), (None, None, ["iss", "aud"]),
     ("https://idp", "api", [])])
def test_a_waived_jwt_check_is_a_start_up_warning(issuer, audience, warned):
    from ynm.server.auth.jwt import JwtVerifier
    from ynm.server.http import FrontDoor, start_lines

    door = FrontDoor(verifier=JwtVerifier("https://idp/jwks", issuer=issuer,
                                          audience=audience))
    lines = start_lines(door, "127.0.0.1", 8080)
    assert lines[:3] == ["listening on http://127.0.0.1:8080/mcp (health: "
                         "http://127.0.0.1:8080/health)", "auth: jwt", "audit: off"]
    waivers = {"iss": "YNM_JWT_ALLOW_ANY_ISSUER", "aud": "YNM_JWT_ALLOW_ANY_AUDIENCE"}
    assert [line for line in lines if line.startswith("warning:")] == [
        f"warning: the token's {c} claim is not checked ({waivers[c]}): any "
        f"{'issuer' if c == 'iss' else 'audience'} that signs with these keys is accepted"
        for c in warned]


@pytest.mark.parametrize(
    ("host", "allowed", "named"),
    [("0.0.0.0", ["0.0.0.0"], "loopback"), ("::", ["::"], "loopback"),
     ("0.0.0.0", ["0.0.0.0", "mem.example"], "loopback, mem.example")])
def test_a_wildcard_bind_says_which_host_names_are_served(host, allowed, named):
    from ynm.server.http import FrontDoor, start_lines

    lines = start_lines(FrontDoor(tokens=["t"], allowed_hosts=allowed), host, 9000)
    assert lines[-1] == (
        f"listening on every interface, but only these Host names are served: {named}; name "
        "the one clients use with --allow-host (e.g. --allow-host memory.example.com), and "
        "give them http://<that name>:9000/mcp")
    assert len([x for x in start_lines(FrontDoor(), "127.0.0.1", 9000)]) == 3
