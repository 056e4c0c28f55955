"""Who a request writes as (reference/server.md §2.5) and the ``memory_people`` tool (§1.4):
``caller_for`` over every row of the table, and the tool wrapper given verified callers
(``scope["ynm.auth"]``) as the HTTP front door leaves them."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from tests.server.conftest import USER, text
from tests.server.test_tools import call_tool, err, ok
from ynm.model.people import person_id
from ynm.server import app as app_module
from ynm.server.app import MemoryService, build_server, request_auth
from ynm.server.auth import AuthInfo
from ynm.server.identity import caller_for

ISS = "https://idp.example.com/"
PA = person_id(ISS, "alice")
LINKED = "p" + "z" * 16


def jwt(sub: str | None = "alice", iss: str | None = ISS, client: str | None = "claude-code",
        client_id: str | None = None) -> AuthInfo:
    return AuthInfo(mode="jwt", client_id=client_id or client or sub or "jwt",
                    scopes=("memory:read", "memory:write"), expires_at=2_000_000_000,
                    subject=sub, issuer=iss, client=client)


STATIC = AuthInfo(mode="bearer", client_id="static", scopes=(), expires_at=2_000_000_000,
                  static=True)


class Linked:
    """A people document that links ``ISS bob`` to LINKED."""

    def person_for(self, issuer: str, subject: str) -> str:
        return LINKED if (issuer, subject) == (ISS, "bob") else person_id(issuer, subject)


@pytest.mark.parametrize(("auth", "people", "expected"), [
    # signed-in person: both sub and iss
    (jwt(), None, {"actor": f"user:{PA}", "client": "claude-code", "person": PA,
                       "namespace": f"user/{PA}", "may_use_people": True, "login": (ISS, "alice")}),
    (jwt(sub="bob"), Linked(), {"actor": f"user:{LINKED}", "client": "claude-code",
                                    "person": LINKED, "namespace": f"user/{LINKED}",
                                    "may_use_people": True, "login": (ISS, "bob")}),
    # client_id falls back to sub when the token names no client (reference §2.3)
    (jwt(client=None), None, {"actor": f"user:{PA}", "client": "alice", "person": PA,
                                  "namespace": f"user/{PA}", "may_use_people": True,
                                  "login": (ISS, "alice")}),
    (AuthInfo(mode="introspection", client_id="web", scopes=(), expires_at=1, subject="alice",
              issuer=ISS, client="web"), None,
     {"actor": f"user:{PA}", "client": "web", "person": PA, "namespace": f"user/{PA}",
          "may_use_people": True, "login": (ISS, "alice")}),
    # static token: one shared identity, common
    (STATIC, Linked(), {"actor": "token:static", "client": None, "person": None,
                            "namespace": "common", "may_use_people": False, "login": None}),
    # client-only token (client credentials): client:<id>, common
    (jwt(sub=None, client="ci-bot"), None, {"actor": "client:ci-bot", "client": None,
                                                "person": None, "namespace": "common",
                                                "may_use_people": False, "login": None}),
    # a subject without an issuer is no login
    (jwt(iss=None, client="ci-bot"), None, {"actor": "client:ci-bot", "client": None,
                                                "person": None, "namespace": "common",
                                                "may_use_people": False, "login": None}),
    # verified, but neither a person nor a client: the server's own actor, common
    (jwt(sub=None, client=None), None, {"actor": "user:server", "client": None, "person": None,
                                            "namespace": "common", "may_use_people": False,
                                            "login": None}),
    # no auth, stdio, CLI: the server's own actor and the service's default namespace
    (None, Linked(), {"actor": "user:server", "client": None, "person": None, "namespace": None,
                          "may_use_people": False, "login": None}),
])
def test_caller_for_follows_the_table(auth, people, expected):
    assert vars(caller_for(auth, "user:server", people)) == expected


def test_request_auth_reads_the_scope_the_front_door_filled():
    ctx = SimpleNamespace(request_context=SimpleNamespace(
        request=SimpleNamespace(scope={"type": "http", "ynm.auth": STATIC})))
    assert request_auth(ctx) is STATIC
    empty = SimpleNamespace(request_context=SimpleNamespace(request=SimpleNamespace(scope={})))
    assert request_auth(empty) is None

    class NoRequest:
        @property
        def request_context(self):
            raise ValueError("no request")

    assert request_auth(NoRequest()) is None


# ------------------------------------------------------------------------------ the wrapper


@pytest.fixture
def hosted(project):
    """A shared server's service: no personal store, the project's distributed mount."""
    svc = MemoryService(project, personal=False)
    svc.open()
    yield svc
    svc.close()


@pytest.fixture
def as_caller(hosted, monkeypatch):
    """``as_caller(auth)`` -> ``call(name, args)`` running a tool of a fresh in-process server
    with the request's verified caller ``auth``."""
    from tests.server.conftest import run

    def make(auth: AuthInfo | None):
        monkeypatch.setattr(app_module, "request_auth", lambda ctx: auth)
        server = build_server(hosted)

        def call(name: str, args: dict):
            from mcp import Client

            async def go():
                async with Client(server) as client:
                    return await client.call_tool(name, args)

            return run(go)

        return call

    return make


def stored(service: MemoryService, memory_id: str) -> dict:
    return service.run_sync(lambda ynm: ynm.find(memory_id)[1])


def remember(call, content: str, **extra) -> str:
    result = ok(call("memory_remember", {"type": "semantic", "content": content,
                                         "level": "distributed", **extra}))
    return result["memoryId"]


@pytest.mark.parametrize(("auth", "actor", "client", "namespace"), [
    (jwt(), f"user:{PA}", "claude-code", f"user/{PA}"),
    (STATIC, "token:static", None, "common"),
    (jwt(sub=None, client="ci-bot"), "client:ci-bot", None, "common"),
    (jwt(sub=None, client=None), f"user:{USER}", None, "common"),
    (None, f"user:{USER}", None, "common"),
])
def test_writes_carry_the_caller_s_actor_client_and_namespace(hosted, as_caller, auth, actor,
                                                              client, namespace):
    call = as_caller(auth)
    state = stored(hosted, remember(call, "Deploys go out on Tuesdays"))
    provenance = state["current"]["provenance"]
    assert provenance["actor"] == actor
    assert provenance.get("client") == client
    assert state["namespace"] == namespace
    # a named namespace is kept whoever writes
    named = stored(hosted, remember(call, "The ledger owns refunds", namespace="team/payments"))
    assert named["namespace"] == "team/payments"
    # edits are the caller's too
    mid = remember(call, "Staging is slow on Mondays")
    ok(call("memory_annotate", {"memoryId": mid, "tags": ["infra"]}))
    records = hosted.run_sync(lambda ynm: ynm.history(mid))
    assert [r["actor"] for r in records] == [actor, actor]
    # the next call without a caller is the server's own again
    assert hosted.run_sync(lambda ynm: ynm.caller) is None


def test_memory_people_for_a_signed_in_person(hosted, as_caller, project, git):
    call = as_caller(jwt())
    assert ok(call("memory_people", {"action": "whoami"})) == {
        "person": PA, "nickname": None, "client": "claude-code",
        "login": {"issuer": ISS, "subject": "alice"}}
    assert ok(call("memory_people", {"action": "nickname", "nickname": " ada "})) == {
        "person": PA, "nickname": "ada"}
    doc = json.loads(git(project, "show", "refs/ynm/distributed/documents/people:people.json"))
    assert doc["people"][PA]["nickname"] == "ada"
    assert ok(call("memory_people", {"action": "whoami"}))["nickname"] == "ada"
    # what they write shows their nickname as author
    remember(call, "Ada deploys the ledger on Tuesdays")
    hits = ok(call("memory_recall", {"text": "ledger Tuesdays"}))
    assert hits[0]["author"] == "ada"
    assert ok(call("memory_people", {"action": "clear"})) == {"person": PA, "nickname": None}
    assert "nickname" not in json.loads(git(
        project, "show", "refs/ynm/distributed/documents/people:people.json"))["people"][PA]
    assert err(call("memory_people", {"action": "nickname"})) == (
        "invalid input: nickname: needed for action nickname")
    assert err(call("memory_people", {"action": "nickname", "nickname": "a\nb"})) == (
        "invalid input: nickname: must be one line")
    assert err(call("memory_people", {"action": "rename"})).startswith("invalid input: action")
    assert err(call("memory_people", {"action": "whoami", "person": PA})) == (
        "invalid input: person: unknown field")


def test_a_linked_login_writes_as_the_person_it_is_linked_to(hosted, as_caller, cli_run):
    assert cli_run("people", "link", LINKED, "--issuer", ISS, "--subject", "bob").exit_code == 0
    call = as_caller(jwt(sub="bob"))
    state = stored(hosted, remember(call, "Bob prefers small pull requests"))
    assert state["current"]["provenance"]["actor"] == f"user:{LINKED}"
    assert state["namespace"] == f"user/{LINKED}"
    assert ok(call("memory_people", {"action": "whoami"}))["person"] == LINKED


@pytest.mark.parametrize(("auth", "who"), [
    (None, f"writing as user:{USER}"),
    (STATIC, "writing as token:static"),
    (jwt(sub=None, client="ci-bot"), "writing as client:ci-bot"),
    (jwt(sub=None, client=None), f"writing as user:{USER}"),
])
def test_memory_people_is_refused_without_a_signed_in_person(hosted, as_caller, project, git,
                                                              auth, who):
    call = as_caller(auth)
    for args in ({"action": "whoami"}, {"action": "nickname", "nickname": "x"},
                 {"action": "clear"}):
        message = err(call("memory_people", args))
        assert f"this connection is {who}" in message
        assert "`ynm people list|nickname|clear|link`" in message
    assert git(project, "for-each-ref", "refs/ynm/") == ""


def test_memory_people_over_stdio_style_service_is_refused(mcp_call):
    # the in-process client carries no request: no caller, as over stdio
    result = call_tool(mcp_call, "memory_people", {"action": "whoami"})
    assert result.is_error and f"this connection is writing as user:{USER}" in text(result)


def test_hosted_instructions_say_where_an_unnamed_namespace_goes():
    from ynm.server.guidance import instructions

    level_line = instructions({"distributed"}).splitlines()[-1]
    assert "under user/<person id> once the user is signed in" in level_line
    assert "else under common" in level_line
