"""The front door's auth answers, in process (httpx's ASGI transport, an inner app that
records what reached it): 401 ``invalid_token`` / 403 ``insufficient_scope`` with
``WWW-Authenticate`` and ``resource_metadata`` (RFC 6750 §3, RFC 9728 §5.1), the verified
caller in ``scope["ynm.auth"]``, the refusal in ``scope["ynm.refusal"]``, per-tool scopes, the
protected-resource document and ``--modern-only`` (reference/server.md §2.2, §2.3, §2.6)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import anyio
import pytest

pytest.importorskip("joserfc")

from tests.support.idp import AUDIENCE, ISSUER, Idp  # noqa: E402
from ynm.server.auth import AuthInfo  # noqa: E402
from ynm.server.http import front_door_app, http_settings  # noqa: E402

MODERN = "2026-07-28"


@pytest.fixture
def idp() -> Iterator[Idp]:
    provider = Idp()
    yield provider
    provider.stop()


class Inner:
    """An ASGI app standing for the MCP handler: answers 200 ``{"reached": true}`` and keeps
    the scope and body of every request that reached it."""

    def __init__(self) -> None:
        self.reached: list[tuple[dict[str, Any], bytes]] = []

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        self.reached.append((scope, body))
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": b'{"reached": true}'})


class Door:
    """The front door of ``http_settings(**settings)`` around an :class:`Inner`; ``post`` and
    ``get`` return ``(status, headers, json body, scope seen by the outer middleware)``."""

    def __init__(self, **settings: Any) -> None:
        self.inner = Inner()
        self.app = front_door_app(http_settings(**settings).door, self.inner)

    def request(self, method: str, path: str, body: Any = None, token: str | None = None,
                headers: dict[str, str] | None = None) -> tuple[int, Any, Any, dict[str, Any]]:
        import httpx

        seen: dict[str, Any] = {}

        async def outer(scope: dict[str, Any], receive: Any, send: Any) -> None:
            seen.update(scope=scope)  # what an audit middleware around the door sees
            await self.app(scope, receive, send)

        async def go() -> Any:
            transport = httpx.ASGITransport(app=outer)
            async with httpx.AsyncClient(transport=transport,
                                         base_url="http://localhost:3000") as client:
                head = {**({"Authorization": f"Bearer {token}"} if token else {}),
                        **(headers or {})}
                return await client.request(method, path, headers=head,
                                            content=json.dumps(body) if body is not None
                                            else None)

        r = anyio.run(go)
        return r.status_code, r.headers, r.json() if r.content else None, seen["scope"]

    def post(self, body: Any, token: str | None = None, **kw: Any):
        return self.request("POST", "/mcp", body, token, **kw)


def call(tool: str, **args: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": tool, "arguments": args}}


PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
METADATA = "https://mem.example/.well-known/oauth-protected-resource/mcp"  # AUDIENCE's


def test_a_valid_token_reaches_the_handler_with_its_caller(idp):
    door = Door(env=idp.jwt_env())
    status, _, body, scope = door.post(PING, idp.mint(sub="alice", azp="claude"))
    assert status == 200 and body == {"reached": True}
    info = scope["ynm.auth"]
    assert isinstance(info, AuthInfo)
    assert (info.mode, info.subject, info.issuer, info.client) == ("jwt", "alice", ISSUER,
                                                                   "claude")
    assert "ynm.refusal" not in scope


@pytest.mark.parametrize(("token", "description"), [
    (None, "Missing or invalid bearer token"),
    ("garbage", "malformed token (not a signed JWT)"),
    ("expired", "token expired"),
    ("issuer", "token issuer not accepted"),
])
def test_a_refused_token_gets_401_with_the_resource_metadata(idp, token, description):
    door = Door(env=idp.jwt_env())
    made = {"expired": idp.mint(exp=1), "issuer": idp.mint(iss="https://x.example")}
    status, headers, body, scope = door.post(PING, made.get(token, token))
    assert status == 401
    assert body == {"error": "invalid_token", "error_description": description}
    assert headers["www-authenticate"] == (f'Bearer error="invalid_token", error_description='
                                           f'"{description}", resource_metadata="{METADATA}"')
    assert scope["ynm.refusal"] == "invalid_token" and "ynm.auth" not in scope
    assert not door.inner.reached


def test_static_tokens_challenge_without_resource_metadata():
    door = Door(env={}, token="s3cret")
    status, headers, _, scope = door.post(PING, "wrong")
    assert status == 401 and "resource_metadata" not in headers["www-authenticate"]
    status, _, _, scope = door.post(PING, "s3cret")
    assert status == 200 and scope["ynm.auth"].static and scope["ynm.auth"].client_id == "static"


def test_no_auth_passes_none_as_the_caller():
    status, _, _, scope = Door(env={}).post(PING)
    assert status == 200 and scope["ynm.auth"] is None


def test_required_scopes_apply_to_every_request(idp):
    door = Door(env=idp.jwt_env(YNM_REQUIRED_SCOPES="team:ynm"))
    status, headers, body, scope = door.post(PING, idp.mint(scope="memory:read"))
    assert status == 403 and body["error"] == "insufficient_scope"
    assert headers["www-authenticate"].startswith('Bearer error="insufficient_scope", '
                                                  'error_description="token lacks the scope '
                                                  'team:ynm')
    assert 'scope="team:ynm"' in headers["www-authenticate"]
    assert f'resource_metadata="{METADATA}"' in headers["www-authenticate"]
    assert scope["ynm.refusal"] == "insufficient_scope" and scope["ynm.auth"].subject == "alice"
    assert door.post(PING, idp.mint(scope="team:ynm memory:read"))[0] == 200
    assert door.post(PING, idp.mint(scp=["team:ynm", "memory:write"]))[0] == 200
    # a token carrying scopes needs memory:read (or write) besides the required ones
    status, headers, _, _ = door.post(PING, idp.mint(scope="team:ynm"))
    assert status == 403 and 'scope="memory:read"' in headers["www-authenticate"]


@pytest.mark.parametrize(("scopes", "allowed"), [
    ("memory:read", {"memory_recall", "memory_context", "memory_status", "ping"}),
    ("memory:write", {"memory_recall", "memory_context", "memory_status", "ping",
                      "memory_remember", "memory_forget", "memory_sync", "memory_session"}),
    ("openid profile", set()),
    (None, {"memory_recall", "memory_context", "memory_status", "ping", "memory_remember",
            "memory_forget", "memory_sync", "memory_session"}),   # no scopes: no per-tool rule
])
def test_per_tool_scopes_when_the_token_carries_scopes(idp, scopes, allowed):
    door = Door(env=idp.jwt_env())
    token = idp.mint(**({"scope": scopes} if scopes else {}))
    for name in ("memory_recall", "memory_context", "memory_status", "ping", "memory_remember",
                 "memory_forget", "memory_sync", "memory_session"):
        status, headers, body, scope = door.post(PING if name == "ping" else call(name), token)
        assert (status == 200) is (name in allowed), (name, status)
        if status == 403:
            need = "memory:read" if name in ("memory_recall", "memory_context",
                                             "memory_status", "ping") else "memory:write"
            assert f'scope="{need}"' in headers["www-authenticate"]
            assert body["error"] == "insufficient_scope"
            assert scope["ynm.refusal"] == "insufficient_scope"
            assert scope["ynm.auth"].subject == "alice"  # who was refused


def test_the_handler_gets_the_body_the_scope_check_read(idp):
    door = Door(env=idp.jwt_env())
    payload = call("memory_recall", text="deploy " * 5000)
    assert door.post(payload, idp.mint(scope="memory:read"))[0] == 200
    assert json.loads(door.inner.reached[-1][1]) == payload


def test_a_batch_or_an_unknown_tool_needs_write(idp):
    door = Door(env=idp.jwt_env())
    reader = idp.mint(scope="memory:read")
    assert door.post([call("memory_recall"), call("memory_remember")], reader)[0] == 403
    assert door.post(call("memory_unknown"), reader)[0] == 403
    assert door.post(call("memory_unknown"), idp.mint(scope="memory:write"))[0] == 200
    assert door.request("GET", "/mcp", token=idp.mint(scope="openid"))[0] == 403


def test_the_protected_resource_document(idp):
    door = Door(env=idp.jwt_env(YNM_REQUIRED_SCOPES="team"))
    for path in ("/.well-known/oauth-protected-resource",
                 "/.well-known/oauth-protected-resource/mcp"):
        status, headers, body, scope = door.request("GET", path,
                                                    headers={"Origin": "https://app.example"})
        assert status == 200 and headers["access-control-allow-origin"] == "*"
        assert body == {"resource": AUDIENCE, "authorization_servers": [ISSUER],
                        "scopes_supported": ["memory:read", "memory:write", "team"],
                        "bearer_methods_supported": ["header"]}
        assert "ynm.refusal" not in scope and "ynm.auth" not in scope
    assert not door.inner.reached
    assert door.request("GET", "/.well-known/oauth-protected-resource",
                        headers={"Host": "evil.example"})[0] == 421


def test_without_an_audience_url_the_resource_is_the_request_origin(idp):
    door = Door(env=idp.jwt_env(YNM_JWT_AUDIENCE="ynm-api"))
    body = door.request("GET", "/.well-known/oauth-protected-resource")[2]
    assert body["resource"] == "http://localhost:3000/mcp"
    door = Door(env=idp.jwt_env(YNM_PUBLIC_URL="https://mem.example/team"))
    _, headers, _, _ = door.post(PING)
    assert headers["www-authenticate"].endswith(
        'resource_metadata="https://mem.example/.well-known/oauth-protected-resource/team"')


@pytest.mark.parametrize("env", [{"YNM_MCP_TOKEN": "t"}, {}])
def test_no_document_without_a_jwt_issuer(env):
    status = Door(env=env).request("GET", "/.well-known/oauth-protected-resource")[0]
    assert status == (401 if env else 200)  # not answered by the door: auth, then the handler


def test_modern_only_refuses_legacy_protocol_versions():
    door = Door(env={}, modern_only=True)
    initialize = {"jsonrpc": "2.0", "id": 3, "method": "initialize",
                  "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                             "clientInfo": {"name": "old", "version": "1"}}}
    status, _, body, _ = door.post(initialize)
    assert status == 400
    assert body["id"] == 3 and body["error"]["code"] == -32022
    assert body["error"]["data"] == {"supported": [MODERN], "requested": "2025-06-18"}
    status, _, body, _ = door.post(PING, headers={"MCP-Protocol-Version": "2025-11-25"})
    assert status == 400 and body["error"]["data"]["requested"] == "2025-11-25"
    assert door.request("GET", "/mcp")[0] == 400
    assert not door.inner.reached
    assert door.post(call("memory_status"), headers={"MCP-Protocol-Version": MODERN})[0] == 200
    assert Door(env={}).post(initialize)[0] == 200  # without the flag: served


def test_a_body_over_the_sdks_limit_is_refused_before_it_is_kept(idp):
    from mcp.server.transport_security import DEFAULT_MAX_REQUEST_BODY_SIZE

    door = Door(env=idp.jwt_env())
    huge = call("memory_remember", content="x" * (DEFAULT_MAX_REQUEST_BODY_SIZE + 1))
    assert door.post(huge, idp.mint(scope="memory:write"))[0] == 413
    assert not door.inner.reached
