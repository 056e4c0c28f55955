"""Choosing the auth mode of ``ynm serve --http`` at start (reference/server.md §2.3: ``--token``
→ ``YNM_JWKS_URL`` → ``YNM_OAUTH_INTROSPECTION_URL`` → ``YNM_MCP_TOKEN`` → none) and the
refusals to start (exit 2, naming the variable and the cause) when a set auth variable cannot
be used, instead of starting open (ADR-017's proposal, built by ynm)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest

pytest.importorskip("joserfc")

from tests.support.idp import AUDIENCE, CLIENT_ID, ISSUER, Idp  # noqa: E402
from tests.support.serve import free_port  # noqa: E402
from ynm.errors import Refused  # noqa: E402
from ynm.server.auth.settings import auth_settings  # noqa: E402
from ynm.server.http import http_settings  # noqa: E402


@pytest.fixture
def idp() -> Iterator[Idp]:
    provider = Idp()
    yield provider
    provider.stop()


def refusal(env: dict[str, str], token: str | None = None, **kw) -> str:
    with pytest.raises(Refused) as err:
        http_settings(token=token, env=env, **kw)
    assert err.value.exit_code == 2
    return str(err.value)


# -- the order -----------------------------------------------------------------------------


def test_modes_are_chosen_in_the_references_order(idp):
    both = {**idp.jwt_env(), **idp.introspection_env(), "YNM_MCP_TOKEN": "static"}
    s = auth_settings(token="flag", env=both)
    assert s.mode == "bearer"
    assert any(n.startswith("YNM_JWKS_URL is set but not used: --token") for n in s.notes)
    s = auth_settings(token=None, env=both)
    assert s.mode == "jwt"
    assert "YNM_OAUTH_INTROSPECTION_URL is set but not used: YNM_JWKS_URL (JWT auth) comes " \
           "first" in s.notes
    assert any(n.startswith("YNM_MCP_TOKEN is set but not used") for n in s.notes)
    s = auth_settings(token=None, env={**idp.introspection_env(), "YNM_MCP_TOKEN": "static"})
    assert s.mode == "introspection"
    assert auth_settings(token=None, env={"YNM_MCP_TOKEN": "static"}).mode == "bearer"
    assert auth_settings(token=None, env={}).mode == "none"


def test_health_mode_and_discovery_follow_the_settings(idp):
    door = http_settings(env=idp.jwt_env(YNM_REQUIRED_SCOPES="team, memory:read")).door
    assert door.auth_mode == "jwt" and door.required_scopes == ("team", "memory:read")
    assert door.resource is not None and door.resource.issuer == ISSUER
    assert door.resource.resource == AUDIENCE  # the audience is an http(s) URL
    assert door.resource.scopes == ("memory:read", "memory:write", "team")
    door = http_settings(env=idp.jwt_env(YNM_PUBLIC_URL="https://mem.example/team/mcp")).door
    assert door.resource.resource == "https://mem.example/team/mcp"
    waived = {"YNM_JWKS_URL": idp.jwks_url, "YNM_JWT_ALLOW_ANY_ISSUER": "1",
              "YNM_JWT_AUDIENCE": "ynm"}
    door = http_settings(env=waived).door
    assert door.auth_mode == "jwt" and door.resource is None  # no issuer: no document
    assert door.verifier.issuer is None and door.verifier.audience == "ynm"
    assert http_settings(env=idp.introspection_env()).door.auth_mode == "introspection"


def test_real_auth_lets_a_non_loopback_address_start(idp):
    s = http_settings(host="0.0.0.0", env=idp.jwt_env())
    assert s.door.auth_mode == "jwt" and s.personal is False


# -- refusals ------------------------------------------------------------------------------


@pytest.mark.parametrize(("env", "starts"), [
    ({"YNM_JWKS_URL": "http://127.0.0.1:1/nothing", "YNM_JWT_ISSUER": ISSUER,
      "YNM_JWT_AUDIENCE": AUDIENCE},
     "YNM_JWKS_URL: cannot fetch http://127.0.0.1:1/nothing: ConnectError"),
    ({"YNM_JWKS_URL": "idp.example/jwks", "YNM_JWT_ISSUER": ISSUER},
     "YNM_JWKS_URL: 'idp.example/jwks' is not an http(s) URL"),
    ({"YNM_JWKS_URL": "ftp://idp.example/jwks"}, "YNM_JWKS_URL: 'ftp://idp.example/jwks' is not"),
])
def test_a_jwk_set_url_that_cannot_be_used_stops_the_start(env, starts):
    message = refusal(env)
    assert message.startswith(starts)
    assert message.endswith("(ynm serve does not start with an auth setting it cannot use)")


def test_an_unreachable_jwk_set_names_every_other_problem_too():
    message = refusal({"YNM_JWKS_URL": "http://127.0.0.1:1/nothing"})
    assert message.startswith("YNM_JWKS_URL: cannot fetch http://127.0.0.1:1/nothing")
    assert "YNM_JWKS_URL is set but YNM_JWT_ISSUER is not" in message
    assert "YNM_JWKS_URL is set but YNM_JWT_AUDIENCE is not" in message


def test_a_jwk_set_without_keys_stops_the_start(idp):
    idp.keys = []
    assert refusal(idp.jwt_env()).startswith(f"YNM_JWKS_URL: {idp.jwks_url} holds no signing "
                                             "key ynm can use")


@pytest.mark.parametrize(("drop", "extra", "starts"), [
    ("YNM_JWT_ISSUER", {}, ("YNM_JWKS_URL is set but YNM_JWT_ISSUER is not: JWT auth checks "
                           "the token's iss claim; set YNM_JWT_ISSUER to the issuer's URL, or "
                           "YNM_JWT_ALLOW_ANY_ISSUER=1 to accept any")),
    ("YNM_JWT_AUDIENCE", {}, "YNM_JWKS_URL is set but YNM_JWT_AUDIENCE is not"),
    ("YNM_JWT_AUDIENCE", {"YNM_JWT_ALLOW_ANY_AUDIENCE": "0"},
     "YNM_JWKS_URL is set but YNM_JWT_AUDIENCE is not"),
    (None, {"YNM_JWT_ALLOW_ANY_ISSUER": "1"}, ("YNM_JWT_ISSUER and YNM_JWT_ALLOW_ANY_ISSUER are "
                                              "both set")),
    ("YNM_JWT_AUDIENCE", {"YNM_JWT_ALLOW_ANY_AUDIENCE": "always"},
     "YNM_JWT_ALLOW_ANY_AUDIENCE: 'always' is not 1 or 0"),
    (None, {"YNM_PUBLIC_URL": "mem.example"}, "YNM_PUBLIC_URL: 'mem.example' is not an http(s)"),
])
def test_jwt_mode_needs_issuer_and_audience_unless_explicitly_waived(idp, drop, extra, starts):
    env = {k: v for k, v in idp.jwt_env(**extra).items() if k != drop}
    assert refusal(env).startswith(starts)


def test_the_waivers_are_accepted_when_explicit(idp):
    env = {"YNM_JWKS_URL": idp.jwks_url, "YNM_JWT_ALLOW_ANY_ISSUER": "true",
           "YNM_JWT_ALLOW_ANY_AUDIENCE": "1"}
    v = http_settings(env=env).door.verifier
    assert (v.issuer, v.audience) == (None, None)


@pytest.mark.parametrize(("drop", "starts"), [
    ("YNM_OAUTH_CLIENT_SECRET", ("YNM_OAUTH_INTROSPECTION_URL is set but YNM_OAUTH_CLIENT_SECRET "
                                "is not: the introspection endpoint needs ynm's client "
                                "credentials")),
    ("YNM_OAUTH_CLIENT_ID", "YNM_OAUTH_INTROSPECTION_URL is set but YNM_OAUTH_CLIENT_ID is not"),
])
def test_introspection_needs_both_client_credentials(idp, drop, starts):
    env = {k: v for k, v in idp.introspection_env().items() if k != drop}
    assert refusal(env).startswith(starts)


def test_an_introspection_endpoint_that_cannot_be_used_stops_the_start(idp):
    message = refusal(idp.introspection_env(YNM_OAUTH_CLIENT_SECRET="zz-never-shown-zz"))
    assert message.startswith("YNM_OAUTH_CLIENT_ID, YNM_OAUTH_CLIENT_SECRET: ")
    assert "zz-never-shown-zz" not in message
    assert refusal(idp.introspection_env(
        YNM_OAUTH_INTROSPECTION_URL="http://127.0.0.1:1/introspect")).startswith(
        "YNM_OAUTH_INTROSPECTION_URL: cannot reach http://127.0.0.1:1/introspect")
    assert refusal(idp.introspection_env(YNM_OAUTH_INTROSPECTION_URL="/introspect")).startswith(
        "YNM_OAUTH_INTROSPECTION_URL: '/introspect' is not an http(s) URL")


@pytest.mark.parametrize(("env", "starts"), [
    ({"YNM_JWT_ISSUER": ISSUER}, "YNM_JWT_ISSUER is set but YNM_JWKS_URL is not"),
    ({"YNM_JWT_AUDIENCE": AUDIENCE, "YNM_MCP_TOKEN": "t"},
     "YNM_JWT_AUDIENCE is set but YNM_JWKS_URL is not"),
    ({"YNM_JWT_ALLOW_ANY_ISSUER": "1"}, "YNM_JWT_ALLOW_ANY_ISSUER is set but YNM_JWKS_URL"),
    ({"YNM_OAUTH_CLIENT_ID": CLIENT_ID, "YNM_OAUTH_CLIENT_SECRET": "x"},
     ("YNM_OAUTH_CLIENT_ID, YNM_OAUTH_CLIENT_SECRET are set but YNM_OAUTH_INTROSPECTION_URL is "
     "not")),
    ({"YNM_REQUIRED_SCOPES": "memory:read"}, ("YNM_REQUIRED_SCOPES is set, but the server runs "
                                             "with no auth")),
    ({"YNM_REQUIRED_SCOPES": "memory:read", "YNM_MCP_TOKEN": "t"},
     "YNM_REQUIRED_SCOPES is set, but the server runs with static bearer tokens"),
])
def test_a_setting_without_its_mode_stops_the_start(env, starts):
    assert refusal(env).startswith(starts)


def test_token_flag_overrides_the_environment_and_says_so():
    s = http_settings(token="t", env={"YNM_JWT_ISSUER": ISSUER, "YNM_REQUIRED_SCOPES": "x"})
    assert s.door.auth_mode == "bearer"
    assert [n.split(":")[0] for n in s.notes] == ["YNM_JWT_ISSUER is set but not used",
                                                  "YNM_REQUIRED_SCOPES is set but not used"]


def test_an_unused_public_url_is_named():
    s = http_settings(env={"YNM_MCP_TOKEN": "t", "YNM_PUBLIC_URL": "https://mem.example"})
    assert s.notes == [("YNM_PUBLIC_URL is set but not used: it names the resource advertised "
                       "by JWT auth with an issuer")]


# -- the command ---------------------------------------------------------------------------


def _start(project, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "ynm", "serve", "--http", "--port", str(free_port()),
         "--cwd", str(project), *args],
        env={**os.environ, **env}, capture_output=True, text=True, timeout=30)


def test_an_unreachable_jwks_url_refuses_to_start(project):
    result = _start(project, env={"YNM_JWKS_URL": "http://127.0.0.1:1/nothing"})
    assert result.returncode == 2
    assert result.stderr.startswith("Error: YNM_JWKS_URL: cannot fetch "
                                    "http://127.0.0.1:1/nothing")
    assert "Traceback" not in result.stderr and result.stdout == ""


def test_a_missing_client_secret_refuses_to_start(project, idp):
    env = {k: v for k, v in idp.introspection_env().items() if k != "YNM_OAUTH_CLIENT_SECRET"}
    result = _start(project, env=env)
    assert result.returncode == 2
    assert result.stderr.startswith("Error: YNM_OAUTH_INTROSPECTION_URL is set but "
                                    "YNM_OAUTH_CLIENT_SECRET is not")
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
