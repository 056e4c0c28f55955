"""The audit log and the request log of ``ynm serve --http`` (reference/server.md §2.7, §2.8):
``YNM_AUDIT`` settings, the file sink (0600, rotation), event contents (metadata only: never
content, queries, tokens, subjects), refused requests audited, events written before the
response, sink failures never failing a request, the sanitised request log line, and 100
requests of several callers giving 100 events with the right person, client and outcome."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import stat
import sys
import threading
import time
import types
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import anyio
import pytest

from tests.support.serve import free_port, serve_http
from ynm.errors import InvalidConfig
from ynm.model.ids import is_ulid, ulid_time
from ynm.server.audit import (
    ROTATE_BYTES,
    AuditMiddleware,
    EventFilter,
    FileSink,
    StdoutSink,
    audit_setting,
    audit_sink,
    build_event,
    call_counts,
    read_events,
    record_call,
    request_line,
    resource_call,
    rpc_names,
    safe_name,
    safe_path,
    select_events,
)
from ynm.server.auth import AuthInfo

ISSUER = "https://idp.example.test"
ALICE = AuthInfo(mode="jwt", client_id="cli-app", scopes=("memory:read", "memory:write"),
                 expires_at=2_000_000_000, subject="alice@example.com", issuer=ISSUER,
                 client="cli-app")
BOB = AuthInfo(mode="jwt", client_id="bob-subject-7", scopes=(), expires_at=2_000_000_000,
               subject="bob-subject-7", issuer=ISSUER)  # no azp/client_id: no client
WORKER = AuthInfo(mode="jwt", client_id="ci-worker", scopes=(), expires_at=2_000_000_000,
                  client="ci-worker")  # client credentials, no sub: no person
STATIC = AuthInfo(mode="bearer", client_id="static", scopes=(), expires_at=2_000_000_000,
                  static=True)


def person_formula(issuer: str, subject: str) -> str:
    """The person id of reference/server.md §2.4, written out here to check against."""
    digest = hashlib.sha256(f"{issuer}\n{subject}".encode()).digest()
    return "p" + base64.b32encode(digest).decode().lower()[:16]


@pytest.fixture
def person_ids(monkeypatch: pytest.MonkeyPatch) -> None:
    """Person ids available to the audit: ``ynm.service.people.person_id`` when ynm has it,
    else the formula above stands in for it."""
    try:
        from ynm.service.people import person_id  # type: ignore[attr-defined]  # noqa: F401
    except ImportError:
        fake = types.ModuleType("ynm.service.people")
        fake.person_id = person_formula  # type: ignore[attr-defined]
        monkeypatch.setitem(sys.modules, "ynm.service.people", fake)


# -- YNM_AUDIT ----------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "named"), [
    ('{"sink":"s3","bucket":"b"}', 'sink: ynm has no "s3" audit sink'),
    ('{"sink":"otel"}', 'sink: ynm has no "otel" audit sink'),
    ('{"sink":"file","path":"/tmp/a.jsonl","bucket":"b"}', "bucket: only an s3 sink takes it"),
    ('{"sink":"stdout","region":"eu-west-1"}', "region: only an s3 sink takes it"),
    ('{"sink":"stdout","level":"info"}', "level: unknown key"),
    ('{"sink":"syslog"}', 'sink: "syslog" is not one of off, stdout, file'),
    ('{"path":"/tmp/a.jsonl"}', "sink: missing"),
    ('{"sink":"stdout","path":"/tmp/a.jsonl"}', "path: only the file sink takes a path"),
    ('{"sink":"file"}', "path: the file sink needs"),
    ('{"sink":"file","path":"audit.jsonl"}', "path: 'audit.jsonl' is relative"),
    ('{"sink":"file","path":"/nonexistent-dir-ynm/a.jsonl"}',
     "path: directory /nonexistent-dir-ynm does not exist"),
    ('stdout', "not valid JSON"),
    ('["file"]', "expected a JSON object"),
])
def test_a_setting_ynm_cannot_use_is_refused_by_key(value, named):
    with pytest.raises(InvalidConfig) as err:
        audit_setting({"YNM_AUDIT": value})
    assert str(err.value).startswith(f"invalid input: YNM_AUDIT: {named}")
    assert err.value.exit_code == 2


def test_default_sink_is_stdout_with_auth_and_off_without(tmp_path):
    assert isinstance(audit_sink({}, "bearer"), StdoutSink)
    assert isinstance(audit_sink({"YNM_AUDIT": "  "}, "jwt"), StdoutSink)
    assert audit_sink({}, "none") is None
    assert audit_sink({"YNM_AUDIT": '{"sink":"off"}'}, "bearer") is None
    assert isinstance(audit_sink({"YNM_AUDIT": '{"sink":"stdout"}'}, "none"), StdoutSink)
    file = audit_sink({"YNM_AUDIT": json.dumps({"sink": "file", "path": str(tmp_path / "a")})},
                      "none")
    assert isinstance(file, FileSink) and file.path == tmp_path / "a"


@pytest.mark.parametrize("value", ['{"sink":"s3"}', '{"sink":"file","path":"rel.jsonl"}'])
def test_serve_refuses_to_start_on_a_setting_it_cannot_use(project, value):
    import subprocess

    result = subprocess.run(
        [sys.executable, "-m", "ynm", "serve", "--http", "--port", str(free_port()),
         "--token", "t0k", "--cwd", str(project)],
        env={**os.environ, "YNM_AUDIT": value}, capture_output=True, text=True,
        timeout=60, check=False)
    assert result.returncode == 2
    assert result.stderr.startswith("Error: invalid input: YNM_AUDIT: ")
    assert "Traceback" not in result.stderr


# -- the file sink --------------------------------------------------------------------------


def test_file_sink_is_created_0600(tmp_path):
    sink = FileSink(tmp_path / "audit.jsonl")
    sink.write('{"at":"x"}')
    assert stat.S_IMODE((tmp_path / "audit.jsonl").stat().st_mode) == 0o600
    assert (tmp_path / "audit.jsonl").read_text() == '{"at":"x"}\n'


def test_file_sink_rotates_to_dot_1_before_passing_the_limit(tmp_path):
    assert ROTATE_BYTES == 10 * 1024 * 1024
    path = tmp_path / "audit.jsonl"
    sink = FileSink(path, max_bytes=100)
    lines = [json.dumps({"at": f"2026-12-01T00:00:{i:02d}.000Z", "n": i}) for i in range(9)]
    for line in lines:  # 43 bytes each with the newline: two per file
        sink.write(line)
    rotated = path.with_name("audit.jsonl.1")
    assert path.read_text().splitlines() == lines[8:]
    assert rotated.read_text().splitlines() == lines[6:8]
    assert path.stat().st_size <= 100 and rotated.stat().st_size <= 100
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    # the reader takes the rotated file first, so events stay oldest first
    assert [e["n"] for e in read_events(path)] == [6, 7, 8]


def test_a_line_longer_than_the_limit_is_still_written(tmp_path):
    path = tmp_path / "audit.jsonl"
    sink = FileSink(path, max_bytes=10)
    sink.write('{"at":"a","pad":"................"}')
    sink.write('{"at":"b"}')
    assert path.read_text() == '{"at":"b"}\n'
    assert path.with_name("audit.jsonl.1").read_text().startswith('{"at":"a"')


# -- events and lines -----------------------------------------------------------------------


def _event(auth, status=200, refusal=None, calls=()):
    return build_event(at_ms=1_764_547_200_000, method="POST", path="/mcp", status=status,
                       auth=auth, refusal=refusal, calls=list(calls), duration_ms=7)


def test_event_of_each_kind_of_caller(person_ids):
    alice = _event(ALICE, calls=[{"tool": "memory_recall", "status": "ok", "resultCount": 2}])
    assert list(alice) == ["at", "id", "person", "client", "method", "path", "status",
                           "outcome", "calls", "durationMs"]
    assert alice["at"] == "2025-12-01T00:00:00.000Z"
    assert is_ulid(alice["id"]) and ulid_time(alice["id"]) == 1_764_547_200_000
    assert alice["person"] == person_formula(ISSUER, "alice@example.com")
    assert (alice["client"], alice["outcome"], alice["durationMs"]) == ("cli-app", "ok", 7)
    bob = _event(BOB)  # client_id is his subject: not shown
    assert bob["person"] == person_formula(ISSUER, "bob-subject-7") and "client" not in bob
    worker = _event(WORKER)
    assert "person" not in worker and worker["client"] == "ci-worker"
    static = _event(STATIC)
    assert "person" not in static and static["client"] == "static"
    none = _event(None, status=404)
    assert "person" not in none and "client" not in none and none["outcome"] == "error"
    for event in (alice, bob, worker, static, none):
        text = json.dumps(event)
        assert "alice@example.com" not in text and "bob-subject-7" not in text
        assert ISSUER not in text


@pytest.mark.parametrize(("status", "refusal", "reason"), [
    (401, "invalid_token", "invalid_token"), (403, "insufficient_scope", "insufficient_scope"),
    (421, "host", "host"), (403, "origin", "origin"), (401, None, "invalid_token"),
])
def test_refusals_are_refused_with_their_reason(status, refusal, reason):
    event = _event(None, status=status, refusal=refusal)
    assert (event["outcome"], event["reason"], event["status"]) == ("refused", reason, status)
    assert event["calls"] == []


def test_record_call_is_a_no_op_outside_a_request():
    record_call("memory_remember", "ok", memory_ids=["01KBC0000000000000000000AA"])


def test_call_counts_keep_ids_and_counts_only():
    mid = "01KBC0000000000000000000AA"
    assert call_counts({"memoryId": mid, "mount": "project", "revision": "abc"}) == {
        "memory_ids": [mid]}
    assert call_counts([{"memoryId": mid, "content": "x"}] * 3) == {"result_count": 3}
    assert call_counts({"markdown": "# secret", "included": [mid, mid]}) == {"result_count": 2}
    assert call_counts({"memoryId": "not-an-id; secret"}) == {}
    assert call_counts(None) == {}


@pytest.mark.parametrize(("value", "shown"), [
    ("memory_recall", "memory_recall"), ("tools/call", "tools/call"),
    ("resource:memory://{mount}/{memoryId}", "?"), ("has space", "?"), ("a" * 65, "?"),
    ("a" * 64, "a" * 64), ("mémoire", "?"), ("x\ny", "?"), ("", "?"), (None, "?"), (7, "?"),
])
def test_names_outside_the_pattern_print_as_a_question_mark(value, shown):
    assert safe_name(value) == shown


@pytest.mark.parametrize(("path", "shown"), [
    ("/mcp?token=abc", "/mcp"), ("/mcp\x1b[31m\r\n", "/mcp[31m"), ("/" + "x" * 300, "/" + "x" * 199),
    ("/a\x85b", "/ab"),
])
def test_paths_lose_queries_and_control_characters_and_are_capped(path, shown):
    assert safe_path(path) == shown


def test_rpc_and_tool_names_from_headers_else_body():
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "memory_recall", "arguments": {"text": "secret query"}}}
    assert rpc_names({}, json.dumps(call).encode()) == (["tools/call"], ["memory_recall"])
    batch = [call, {"jsonrpc": "2.0", "method": "notifications/initialized"},
             {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "bad name"}}]
    assert rpc_names({}, json.dumps(batch).encode()) == (
        ["tools/call", "notifications/initialized"], ["memory_recall", "?"])
    assert rpc_names({"mcp-method": "tools/call", "mcp-name": "memory_status"},
                     json.dumps(call).encode()) == (["tools/call"], ["memory_status"])
    assert rpc_names({}, b"not json") == ([], [])
    assert rpc_names({}, None) == ([], [])


def test_request_line_format():
    assert request_line(method="POST", path="/mcp?x=1", status=200, duration_ms=12,
                        rpcs=["tools/call"], tools=["memory_recall"], auth="signed-in",
                        client="cli-app") == (
        "request POST /mcp 200 12ms rpc=tools/call tool=memory_recall auth=signed-in "
        "client=cli-app")
    assert request_line(method="GET", path="/health", status=200, duration_ms=0, rpcs=[],
                        tools=[], auth="public", client=None) == (
        "request GET /health 200 0ms auth=public")


# -- the middleware, driven directly ---------------------------------------------------------


class _ListSink:
    describe = "a list"

    def __init__(self, order: list[str] | None = None, fail: bool = False) -> None:
        self.lines: list[str] = []
        self.order = order if order is not None else []
        self.fail = fail

    def write(self, line: str) -> None:
        self.order.append("event")
        if self.fail:
            raise OSError(28, "No space left on device")
        self.lines.append(line)


def _drive(app, path="/mcp", method="POST", body=b"{}", headers=()) -> list[dict[str, Any]]:
    sent: list[dict[str, Any]] = []

    async def go() -> None:
        messages = [{"type": "http.request", "body": body, "more_body": False}]

        async def receive():
            return messages.pop(0) if messages else {"type": "http.disconnect"}

        async def send(message):
            sent.append(message)

        scope = {"type": "http", "method": method, "path": path, "headers": list(headers)}
        await app(scope, receive, send)

    anyio.run(go)
    return sent


def _answering(status: int, auth: Any = None, refusal: str | None = None, parts: int = 1):
    async def inner(scope, receive, send):
        await receive()
        if refusal:
            scope["ynm.refusal"] = refusal
        else:
            scope["ynm.auth"] = auth
            record_call("memory_status", "ok", input_bytes=2)
        await send({"type": "http.response.start", "status": status, "headers": []})
        for i in range(parts):
            await send({"type": "http.response.body", "body": b"x",
                        "more_body": i < parts - 1})
    return inner


def test_the_event_is_written_before_any_of_the_response_is_sent():
    order: list[str] = []
    sink = _ListSink(order)
    inner = _answering(200, STATIC, parts=3)

    async def recording(scope, receive, send):
        async def send_logged(message):
            await send(message)
        await inner(scope, receive, send_logged)

    app = AuditMiddleware(recording, sink, log=lambda line: order.append("log"))

    sent = _drive(app)
    order += [m["type"] for m in sent]
    assert order == ["event", "log", "http.response.start", "http.response.body",
                     "http.response.body", "http.response.body"]
    event = json.loads(sink.lines[0])
    assert event["calls"] == [{"tool": "memory_status", "status": "ok", "inputBytes": 2}]


def test_a_failing_sink_never_fails_the_request(capsys):
    sink = _ListSink(fail=True)
    sent = _drive(AuditMiddleware(_answering(200, STATIC), sink, log=lambda line: None))
    assert [m["type"] for m in sent] == ["http.response.start", "http.response.body"]
    assert sent[0]["status"] == 200
    err = capsys.readouterr().err
    assert re.fullmatch(r"\[ynm-mcp audit\] cannot write event [0-9A-Z]{26} to a list: "
                        r"OSError: \[Errno 28\] No space left on device\n", err)


def test_a_handler_that_raises_still_gets_a_500_event():
    sink = _ListSink()
    lines: list[str] = []

    async def boom(scope, receive, send):
        scope["ynm.auth"] = STATIC
        record_call("memory_recall", "ok")
        raise RuntimeError("bug")

    with pytest.raises(RuntimeError):
        _drive(AuditMiddleware(boom, sink, log=lines.append))
    event = json.loads(sink.lines[0])
    assert (event["status"], event["outcome"], event["client"]) == (500, "error", "static")
    assert event["calls"] == [{"tool": "memory_recall", "status": "ok"}]
    assert lines == [f"request POST /mcp 500 {event['durationMs']}ms auth=static client=static"]


@pytest.mark.parametrize(("method", "path"), [
    ("GET", "/health"), ("OPTIONS", "/mcp"), ("GET", "/.well-known/oauth-protected-resource"),
    ("GET", "/.well-known/oauth-protected-resource/mcp"),
])
def test_public_requests_are_logged_but_not_audited(method, path):
    sink = _ListSink()
    lines: list[str] = []
    _drive(AuditMiddleware(_answering(200), sink, log=lines.append), path=path, method=method)
    assert sink.lines == []
    assert lines[0].startswith(f"request {method} {path} 200 ") and lines[0].endswith(
        "auth=public")


def test_a_refused_public_request_is_audited():
    sink = _ListSink()
    _drive(AuditMiddleware(_answering(421, refusal="host"), sink, log=lambda line: None),
           path="/health", method="GET")
    event = json.loads(sink.lines[0])
    assert (event["outcome"], event["reason"], event["path"]) == ("refused", "host", "/health")


def test_without_a_sink_requests_are_still_logged():
    lines: list[str] = []
    sent = _drive(AuditMiddleware(_answering(200), None, log=lines.append),
                  body=b'{"jsonrpc":"2.0","id":1,"method":"ping"}')
    assert sent[0]["status"] == 200
    assert re.fullmatch(r"request POST /mcp 200 \d+ms rpc=ping auth=none", lines[0])


# -- 100 requests through an MCP server -----------------------------------------------------

SECRETS = {  # caller -> its bearer token (never to appear in a sink or a log)
    "alice": "tok-alice-3f9c1e7a5b",
    "bob": "tok-bob-8d2e4f6a1c",
    "static": "tok-static-5a7b9c1d3e",
    "worker": "tok-worker-2b4d6f8a0c",
}


@contextmanager
def _mcp_server(service, sink, callers: dict[str, AuthInfo]) -> Iterator[tuple[str, list[str]]]:
    """The MCP app of ``service`` behind a test front door that knows ``callers`` by bearer
    token (anyone else: 401 ``invalid_token``), inside :class:`AuditMiddleware`, under uvicorn
    on 127.0.0.1 in a thread. Yields the base URL and the request log lines."""
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    from ynm.server.app import build_server

    mcp_app = build_server(service).streamable_http_app(
        streamable_http_path="/mcp", stateless_http=True, json_response=True,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False))
    by_token = {SECRETS[name]: auth for name, auth in callers.items()}

    async def door(scope, receive, send):
        if scope["type"] == "http":
            header = dict(scope["headers"]).get(b"authorization", b"").decode()
            auth = by_token.get(header.removeprefix("Bearer "))
            if auth is None:
                scope["ynm.refusal"] = "invalid_token"
                await send({"type": "http.response.start", "status": 401, "headers": [
                    (b"content-type", b"application/json")]})
                await send({"type": "http.response.body", "body": b'{"error":"invalid_token"}'})
                return
            scope["ynm.auth"] = auth
        await mcp_app(scope, receive, send)

    lines: list[str] = []
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(AuditMiddleware(door, sink, log=lines.append),
                                           host="127.0.0.1", port=port, lifespan="on",
                                           log_level="warning", access_log=False))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert time.monotonic() < deadline and thread.is_alive(), "server did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}", lines
    finally:
        server.should_exit = True
        thread.join(10)


def _call(base: str, tool: str, arguments: dict, token: str | None, n: int = 1,
          headers: dict[str, str] | None = None, path: str = "/mcp",
          method: str = "tools/call") -> tuple[int, dict]:
    """POST one JSON-RPC request (``tools/call`` of ``tool`` by default; another ``method``
    takes ``arguments`` as its params); ``(HTTP status, JSON body or {})``."""
    body = {"jsonrpc": "2.0", "id": n, "method": method,
            "params": {"name": tool, "arguments": arguments} if method == "tools/call"
            else arguments}
    req = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST",
                                 headers={"Content-Type": "application/json",
                                          "Accept": "application/json, text/event-stream",
                                          **({"Authorization": f"Bearer {token}"} if token
                                             else {}), **(headers or {})})
    try:
        with urllib.request.urlopen(req, timeout=30) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, {}


def _plan(callers: list[str], refused: int, total: int = 100) -> list[tuple[str, str, dict, str]]:
    """``total`` requests ``(caller, tool, arguments, secret words)``: the callers in turn
    remembering, recalling and reading their status, then ``refused`` with unknown tokens."""
    plan = []
    for i in range(total - refused):
        who = callers[i % len(callers)]
        kind = i // len(callers) % 3
        if kind == 0:
            words = f"{who} remembers the okapi fact {i}"
            plan.append((who, "memory_remember", {"type": "semantic", "content": words,
                                                  "level": "distributed"}, words))
        elif kind == 1:
            words = f"quokka question {i} from {who}"
            plan.append((who, "memory_recall", {"text": words}, words))
        else:
            plan.append((who, "memory_status", {}, ""))
    for i in range(refused):
        plan.append((f"intruder-{i}", "memory_recall", {"text": f"stolen query {i}"},
                     f"stolen query {i}"))
    return plan


def _assert_secret_free(texts: list[str], plan, tokens: list[str]) -> None:
    """No text holds a token, a content or query of the plan, a subject or an email."""
    for text in texts:
        for token in tokens:
            assert token not in text
        for *_, words in plan:
            if words:
                assert words not in text
        for word in ("okapi", "quokka", "stolen", "@example.com", "bob-subject-7", "Bearer"):
            assert word not in text


def test_100_requests_of_two_people_a_worker_and_the_static_token(service, tmp_path,
                                                                  person_ids):
    """Two signed-in people, a client-credentials worker and the static token, 90 requests
    among them and 10 refused: 100 events in order, each with the right person, client,
    outcome and tool; the sink and the request log hold no content, query or token."""
    sink = FileSink(tmp_path / "audit.jsonl")
    callers = {"alice": ALICE, "bob": BOB, "worker": WORKER, "static": STATIC}
    plan = _plan(list(callers), refused=10)
    with _mcp_server(service, sink, callers) as (base, lines):
        for n, (who, tool, args, _) in enumerate(plan, 1):
            status, body = _call(base, tool, args, SECRETS.get(who, f"tok-{who}-x9"), n)
            assert status == (200 if who in callers else 401)
            if status == 200:
                assert not body["result"]["isError"], body
    events = list(read_events(tmp_path / "audit.jsonl"))
    assert len(events) == 100
    expected_person = {"alice": person_formula(ISSUER, "alice@example.com"),
                       "bob": person_formula(ISSUER, "bob-subject-7")}
    expected_client = {"alice": "cli-app", "worker": "ci-worker", "static": "static"}
    for (who, tool, _, _), event in zip(plan, events):
        assert event.get("person") == expected_person.get(who), (who, event)
        assert event.get("client") == expected_client.get(who), (who, event)
        if who in callers:
            assert (event["status"], event["outcome"]) == (200, "ok")
            assert [c["tool"] for c in event["calls"]] == [tool]
            assert event["calls"][0]["status"] == "ok" and event["calls"][0]["inputBytes"] > 0
            if tool == "memory_remember":
                assert len(event["calls"][0]["memoryIds"]) == 1
            if tool == "memory_recall":
                assert isinstance(event["calls"][0]["resultCount"], int)
        else:
            assert (event["status"], event["outcome"], event["reason"], event["calls"]) == (
                401, "refused", "invalid_token", [])
    assert len({e["id"] for e in events}) == 100
    assert len(lines) == 100
    for (who, tool, _, _), line in zip(plan, lines):
        kind = {"alice": "signed-in", "bob": "signed-in", "worker": "token",
                "static": "static"}.get(who, "refused")
        assert re.fullmatch(rf"request POST /mcp (200|401) \d+ms (rpc=tools/call "
                            rf"tool={tool} )?auth={kind}( client=[\w-]+)?", line), line
    _assert_secret_free([(tmp_path / "audit.jsonl").read_text(), *lines], plan,
                        [*SECRETS.values(), *(f"tok-intruder-{i}-x9" for i in range(10))])


def test_resource_reads_are_calls_of_the_event(service, tmp_path):
    from ynm.model.inputs import RememberInput

    mid = service.run_sync(lambda ynm: ynm.remember(RememberInput(
        type="semantic", level="distributed", content="a resource read")))["memoryId"]
    sink = _ListSink()
    with _mcp_server(service, sink, {"static": STATIC}) as (base, lines):
        token = SECRETS["static"]
        for n, uri in enumerate(["memory://status", f"memory://project/{mid}",
                                 "memory://project/01KBC0000000000000000000AA"], 1):
            status, body = _call(base, "", {"uri": uri}, token, n, method="resources/read")
            assert status == 200 and ("result" in body) == (n < 3), body
    calls = [json.loads(line)["calls"] for line in sink.lines]
    assert calls == [
        [{"tool": "resource:memory://status", "status": "ok"}],
        [{"tool": "resource:memory://{mount}/{memoryId}", "status": "ok", "memoryIds": [mid]}],
        [{"tool": "resource:memory://{mount}/{memoryId}", "status": "error",
          "memoryIds": ["01KBC0000000000000000000AA"]}],
    ]
    assert all(line.endswith("rpc=resources/read auth=static client=static") for line in lines)


@pytest.mark.parametrize(("uri", "call"), [
    ("memory://context", ("resource:memory://context", None)),
    ("memory://status", ("resource:memory://status", None)),
    ("memory://project/01KBC0000000000000000000AA",
     ("resource:memory://{mount}/{memoryId}", ["01KBC0000000000000000000AA"])),
    ("memory://project/not-an-id", ("resource:memory://{mount}/{memoryId}", None)),
    ("memory://project/wiki/memories/01KBC0000000000000000000AA.md",
     ("resource:memory://{mount}/wiki/{+path}", None)),
    ("file:///etc/passwd", ("resource:?", None)),
])
def test_resource_call_names_the_template(uri, call):
    assert resource_call(uri) == call


# -- a real ynm serve --http ----------------------------------------------------------------


def test_real_server_with_the_static_token(project, tmp_path):
    """``ynm serve --http --token`` with a file sink: 100 requests (tool calls with the token,
    a wrong token, no token, a foreign Host, a foreign Origin) give 100 events; health and
    preflights give none; the audit file, stderr and stdout hold no token, content or query."""
    token = SECRETS["static"]
    audit_file, err, out = tmp_path / "audit.jsonl", tmp_path / "stderr", tmp_path / "stdout"
    plan = _plan(["static"], refused=0, total=88)
    refusals = [({"Authorization": "Bearer tok-wrong-7e5c3a"}, 401, "invalid_token")] * 4 + [
        ({}, 401, "invalid_token")] * 3 + [
        ({"path": f"/mcp?access_token={token}"}, 401, "invalid_token")] + [
        ({"Authorization": f"Bearer {token}", "Host": "evil.example"}, 421, "host")] * 2 + [
        ({"Authorization": f"Bearer {token}", "Origin": "https://evil.example"}, 403,
         "origin")] * 2
    with serve_http(project, "--token", token, stderr=err, stdout=out,
                    env={"YNM_AUDIT": json.dumps({"sink": "file", "path": str(audit_file)})}
                    ) as base:
        for n, (_, tool, args, _) in enumerate(plan, 1):
            status, body = _call(base, tool, args, token, n)
            assert status == 200 and not body["result"]["isError"], body
        for n, (headers, code, _) in enumerate(refusals):
            headers = dict(headers)
            status, _ = _call(base, "memory_recall", {"text": f"stolen query {n}"}, None,
                              headers=headers, path=headers.pop("path", "/mcp"))
            assert status == code
        for _ in range(3):
            assert urllib.request.urlopen(base + "/health", timeout=5).status == 200
        urllib.request.urlopen(urllib.request.Request(base + "/mcp", method="OPTIONS"),
                               timeout=5)
    events = list(read_events(audit_file))
    assert len(events) == 100
    assert stat.S_IMODE(audit_file.stat().st_mode) == 0o600
    for (_, tool, _, _), event in zip(plan, events[:88]):
        assert (event["client"], event["outcome"], event["status"]) == ("static", "ok", 200)
        assert "person" not in event and [c["tool"] for c in event["calls"]] == [tool]
    for (_, code, reason), event in zip(refusals, events[88:]):
        assert (event["status"], event["outcome"], event["reason"]) == (code, "refused", reason)
        assert event["calls"] == []
    log = [line for line in err.read_text().splitlines() if " request " in line]
    assert all(line.startswith("[ynm-mcp] request ") for line in log)
    health = [line for line in log if " GET /health 200 " in line]
    assert len(health) >= 3 and all(line.endswith(" auth=public") for line in health)
    log = [line for line in log if line not in health]
    assert len(log) == 101  # 100 audited requests and the preflight
    assert log[0].startswith("[ynm-mcp] request POST /mcp 200 ") and log[0].endswith(
        "rpc=tools/call tool=memory_remember auth=static client=static")
    assert log[-1].startswith("[ynm-mcp] request OPTIONS /mcp 204 ")
    assert sum(line.endswith("auth=refused") for line in log) == 12
    assert out.read_text() == ""
    _assert_secret_free([audit_file.read_text(), err.read_text()],
                        plan + [("", "", {}, f"stolen query {n}") for n in range(12)],
                        [token, "tok-wrong-7e5c3a"])


def test_real_server_audits_to_stdout_by_default_with_auth(project, tmp_path):
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    with serve_http(project, "--token", "tok-default-1", stdout=out, stderr=err) as base:
        status, _ = _call(base, "memory_status", {}, "tok-default-1")
        assert status == 200
        assert _call(base, "memory_status", {}, "nope")[0] == 401
    events = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(e["client" if e["outcome"] == "ok" else "reason"], e["outcome"]) for e in events
            ] == [("static", "ok"), ("invalid_token", "refused")]
    assert "[ynm-mcp] audit: stdout" in err.read_text()


def test_real_server_without_auth_audits_nothing_but_logs(project, tmp_path):
    out, err = tmp_path / "stdout", tmp_path / "stderr"
    with serve_http(project, stdout=out, stderr=err) as base:
        assert _call(base, "memory_status", {}, None)[0] == 200
    assert out.read_text() == ""
    text = err.read_text()
    assert "[ynm-mcp] audit: off" in text
    assert re.search(r"^\[ynm-mcp\] request POST /mcp 200 \d+ms rpc=tools/call "
                     r"tool=memory_status auth=none$", text, re.MULTILINE)


# -- JWT mode, end to end (runs once ynm serve has it) --------------------------------------


def _jwt_mode_available() -> bool:
    """ynm serve has a JWT mode (``ynm.server.auth.jwt``, joserfc) and person ids
    (``ynm.service.people``)."""
    import importlib.util

    try:
        return all(importlib.util.find_spec(name) is not None for name in (
            "ynm.server.auth.jwt", "joserfc", "ynm.service.people"))
    except ImportError:
        return False


@contextmanager
def _jwks_server(keys: dict) -> Iterator[str]:
    """A JWK set served on 127.0.0.1 (``http.server`` in a thread); yields its URL."""
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            data = json.dumps(keys).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: Any) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/jwks.json"
    finally:
        httpd.shutdown()
        httpd.server_close()


@pytest.mark.skipif(not _jwt_mode_available(),
                    reason="ynm serve has no JWT mode or no person ids here")
def test_real_server_with_two_signed_in_people(project, tmp_path):
    """``ynm serve --http`` in JWT mode against a local JWK set, tokens minted with joserfc:
    two people (one through an app with ``azp``) and a client-credentials worker, 100
    requests among them and refused ones; 100 events with the right person, client and
    outcome, and no token, subject, content or query in the sink or the log."""
    from joserfc import jwt
    from joserfc.jwk import RSAKey

    issuer, audience = "https://idp.example.test", "https://mem.example.test/mcp"
    key = RSAKey.generate_key(2048, parameters={"kid": "k1"}, private=True)

    def mint(claims: dict) -> str:
        now = int(time.time())
        return jwt.encode({"alg": "RS256", "kid": "k1"}, {
            "iss": issuer, "aud": audience, "iat": now, "exp": now + 600,
            "scope": "memory:read memory:write", **claims}, key)

    tokens = {"alice": mint({"sub": "alice@example.com", "azp": "cli-app"}),
              "bob": mint({"sub": "bob-subject-7"}),
              "worker": mint({"client_id": "ci-worker"})}
    expired = jwt.encode({"alg": "RS256", "kid": "k1"}, {
        "iss": issuer, "aud": audience, "sub": "alice@example.com", "exp": 1_000_000}, key)
    audit_file, err = tmp_path / "audit.jsonl", tmp_path / "stderr"
    plan = _plan(["alice", "bob", "worker"], refused=10)
    with _jwks_server({"keys": [key.as_dict(private=False)]}) as jwks, serve_http(
            project, stderr=err, env={
                "YNM_JWKS_URL": jwks, "YNM_JWT_ISSUER": issuer, "YNM_JWT_AUDIENCE": audience,
                "YNM_AUDIT": json.dumps({"sink": "file", "path": str(audit_file)})}) as base:
        for n, (who, tool, args, _) in enumerate(plan, 1):
            token = tokens.get(who, expired if n % 2 else tokens["alice"][:-4] + "AAAA")
            status, _ = _call(base, tool, args, token, n)
            assert status == (200 if who in tokens else 401), (who, status)
    events = list(read_events(audit_file))
    assert len(events) == 100
    expected_person = {"alice": person_formula(issuer, "alice@example.com"),
                       "bob": person_formula(issuer, "bob-subject-7")}
    expected_client = {"alice": "cli-app", "worker": "ci-worker"}
    for (who, tool, _, _), event in zip(plan, events):
        assert event.get("person") == expected_person.get(who), (who, event)
        assert event.get("client") == expected_client.get(who), (who, event)
        if who in tokens:
            assert event["outcome"] == "ok" and [c["tool"] for c in event["calls"]] == [tool]
        else:
            assert (event["outcome"], event["reason"]) == ("refused", "invalid_token")
    _assert_secret_free([audit_file.read_text(), err.read_text()], plan,
                        [*tokens.values(), expired])


# -- filters (ynm audit) --------------------------------------------------------------------


def test_event_filter_each_field():
    events = [
        {"at": "2026-12-01T10:00:00.000Z", "person": "paaaa", "client": "cli", "outcome": "ok",
         "calls": [{"tool": "memory_recall", "status": "ok"}]},
        {"at": "2026-12-01T11:00:00.000Z", "client": "static", "outcome": "ok",
         "calls": [{"tool": "memory_remember", "status": "ok"}]},
        {"at": "2026-12-02T09:00:00.000Z", "outcome": "refused", "calls": []},
    ]

    def kept(**where: Any) -> list[int]:
        return [events.index(e) for e in select_events(events, EventFilter(**where))]

    assert kept() == [0, 1, 2]
    assert kept(person="paaaa") == [0]
    assert kept(client="static") == [1]
    assert kept(tool="memory_remember") == [1]
    assert kept(outcome="refused") == [2]
    assert kept(since="2026-12-01T10:00:00.001Z") == [1, 2]
    assert kept(until="2026-12-01T11:00:00.000Z") == [0, 1]
    assert kept(since="2026-12-01T10:30:00.000Z", until="2026-12-01T12:00:00.000Z") == [1]
    assert [events.index(e) for e in select_events(events, EventFilter(), last=2)] == [1, 2]
    assert select_events(events, EventFilter(), last=0) == []
