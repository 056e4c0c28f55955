"""The HTTP front door's rules without a server: Host and Origin matching (host names and
schemes case-insensitive, ports exact, RFC 9110 §4.2.3) and the start-up settings of
``ynm serve --http`` (reference/server.md §2.1, §2.3, §6)."""

from __future__ import annotations

import hashlib

import pytest

from ynm.errors import InvalidInput, Refused
from ynm.server.auth.settings import UNSUPPORTED_AUTH_ENV
from ynm.server.http import (
    FrontDoor,
    http_settings,
    is_loopback,
    split_host,
    split_origin,
)

# -- Host ----------------------------------------------------------------------------------

DOOR = FrontDoor(allowed_hosts=["DEVBOX", "Api.Example.com:8443", "mem.example.com.", "fe80::1"],
                 allowed_origins=["https://App.Example.com", "http://tool.test:8080/ignored/path"])


@pytest.mark.parametrize("host", [
    "devbox:3000", "DevBox:3000", "devbox", "DEVBOX.:1",          # any case, trailing dot
    "api.example.com:8443", "API.EXAMPLE.COM:8443",                # the named port only
    "MEM.example.com:80", "mem.example.com",                       # entry given with a dot
    "[FE80::1]:3000", "[fe80:0:0:0:0:0:0:1]:3000",                  # IPv6, any spelling
    "localhost:3000", "LOCALHOST:3000", "localhost.:3000", "LocalHost",
    "127.0.0.1:1", "127.0.0.2:3000", "[::1]:3000", "[0:0:0:0:0:0:0:1]:3000",
])
def test_allowed_hosts_match_whatever_the_case(host):
    assert DOOR.host_ok(host)


@pytest.mark.parametrize("host", [
    "api.example.com:443", "api.example.com:8444", "api.example.com",  # port mismatch
    "evil.example:3000", "devbox.evil.example:3000", "xdevbox:3000",
    "devbox:", "devbox:port", "devbox:99999", "devbox/x", "user@devbox", "", None,
    "[fe80::2]:3000", "[::1", "[::1]x",
])
def test_other_hosts_are_refused(host):
    assert not DOOR.host_ok(host)


def test_a_host_without_port_means_the_default_port_of_the_scheme():
    door = FrontDoor(allowed_hosts=["Proxy.Example.com:443", "plain.example.com:80"])
    assert door.host_ok("proxy.example.com", "https")
    assert not door.host_ok("proxy.example.com", "http")
    assert door.host_ok("PLAIN.example.com", "http")
    assert door.host_ok("proxy.example.com:443", "http")


def test_star_turns_the_host_check_off():
    assert FrontDoor(allowed_hosts=["*"]).host_ok("anything.example:1")


@pytest.mark.parametrize("entry", ["https://devbox", "devbox/path", "devbox:http", ""])
def test_an_allowed_host_that_is_not_one_is_refused(entry):
    with pytest.raises(InvalidInput, match="--allow-host"):
        FrontDoor(allowed_hosts=[entry])


@pytest.mark.parametrize(("value", "parsed"), [
    ("Example.COM:80", ("example.com", 80)),
    ("[::1]", ("::1", None)),
    ("[::1]:3000", ("::1", 3000)),
    ("::1", ("::1", None)),
    ("localhost.", ("localhost", None)),
])
def test_split_host(value, parsed):
    assert split_host(value) == parsed


# -- Origin --------------------------------------------------------------------------------


@pytest.mark.parametrize("origin", [
    "https://app.example.com", "https://APP.EXAMPLE.COM", "HTTPS://App.Example.com",
    "https://app.example.com:443", "https://app.example.com.",
    "https://app.example.com/any/path",                            # path irrelevant
    "http://tool.test:8080", "HTTP://TOOL.test:8080",
    "http://localhost:5173", "http://LOCALHOST:5173", "https://127.0.0.1", "http://[::1]:3000",
    None, "",
])
def test_allowed_origins_match_whatever_the_case(origin):
    assert DOOR.origin_ok(origin)


@pytest.mark.parametrize("origin", [
    "https://app.example.com:8443", "http://app.example.com",       # port, scheme differ
    "http://tool.test", "http://tool.test:8081", "https://tool.test:8080",
    "https://evil.example", "https://app.example.com.evil.example", "null",
    "file://localhost", "https://app.example.com:badport",
])
def test_other_origins_are_refused(origin):
    assert not DOOR.origin_ok(origin)


@pytest.mark.parametrize("entry", ["app.example.com", "null", "https://", "https://x:port"])
def test_an_allowed_origin_that_is_not_one_is_refused(entry):
    with pytest.raises(InvalidInput, match="--allow-origin"):
        FrontDoor(allowed_origins=[entry])


def test_split_origin_uses_default_ports_and_ignores_the_path():
    assert split_origin("HTTPS://Example.com/x?y") == ("https", "example.com", 443)
    assert split_origin("http://example.com") == ("http", "example.com", 80)
    assert split_origin("http://[::1]:8080") == ("http", "::1", 8080)


# -- loopback ------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "loopback"), [
    ("localhost", True), ("LOCALHOST", True), ("localhost.", True), ("127.0.0.1", True),
    ("127.1.2.3", True), ("::1", True), ("[::1]", True), ("::ffff:127.0.0.1", True),
    ("0.0.0.0", False), ("::", False), ("10.0.0.1", False), ("192.168.1.5", False),
    ("devbox", False), ("localhost.example.com", False),
])
def test_is_loopback(name, loopback):
    assert is_loopback(name) is loopback


# -- start-up settings ---------------------------------------------------------------------


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.168.1.5", "devbox", "[fe80::1]"])
def test_no_auth_on_a_non_loopback_address_is_refused(host):
    with pytest.raises(Refused) as err:
        http_settings(host=host, env={})
    assert "--allow-open" in str(err.value) and "--token" in str(err.value)
    assert err.value.exit_code == 2


def test_the_bind_address_may_come_from_the_environment():
    with pytest.raises(Refused):
        http_settings(env={"YNM_HTTP_HOST": "0.0.0.0"})


@pytest.mark.parametrize("host", ["localhost", "LOCALHOST", "127.0.0.1", "::1", "[::1]"])
def test_no_auth_on_loopback_starts_with_the_personal_store(host):
    s = http_settings(host=host, env={})
    assert s.door.auth_mode == "none" and s.personal and not s.notes
    assert s.host == host.strip("[]")


def test_allow_open_serves_without_auth_and_without_the_personal_store():
    s = http_settings(host="0.0.0.0", allow_open=True, env={})
    assert s.door.auth_mode == "none"
    assert s.personal is False
    assert any("personal store not mounted" in n for n in s.notes)
    assert any("auth is off" in n for n in s.notes)


def test_a_token_on_a_non_loopback_address_starts_without_the_personal_store():
    s = http_settings(host="192.168.1.5", token="t", env={})
    assert s.door.auth_mode == "bearer" and s.personal is False


def test_the_host_check_stays_on_for_a_wildcard_bind():
    s = http_settings(host="0.0.0.0", token="t", env={})
    assert not s.door.host_ok("evil.example:3000")
    assert s.door.host_ok("localhost:3000")
    s = http_settings(host="::", token="t", allow_host=["Mem.Example.com"], env={})
    assert s.door.host_ok("mem.example.com:3000") and not s.door.host_ok("other.example")
    s = http_settings(host="0.0.0.0", token="t", env={"YNM_ALLOWED_HOSTS": "a.test, B.test"})
    assert s.door.host_ok("b.test:3000") and not s.door.host_ok("c.test:3000")


@pytest.mark.parametrize(("bind", "host"), [("192.168.1.5", "192.168.1.5:3000"),
                                            ("Devbox", "DEVBOX:3000"),
                                            ("fe80::1", "[fe80::1]:3000")])
def test_a_specific_bind_address_is_an_allowed_host(bind, host):
    s = http_settings(host=bind, token="t", env={})
    assert s.door.host_ok(host) and not s.door.host_ok("evil.example:3000")


@pytest.mark.parametrize("name", [*UNSUPPORTED_AUTH_ENV, "YNM_JWT_ANYTHING", "YNM_OAUTH_ISSUER",
                                  "YNM_AUTH_PROVIDER", "YNM_AUTH_CLIENT_SECRET",
                                  "YNM_OAUTH_SCOPE"])
def test_each_unsupported_auth_variable_is_refused_by_name(name):
    with pytest.raises(Refused) as err:
        http_settings(host="localhost", token="t", env={name: "https://idp.example"})
    assert str(err.value).startswith(f"{name} is set, but ynm serve does not support it")
    assert err.value.exit_code == 2


def test_unsupported_auth_variables_are_all_named_and_empty_ones_ignored():
    with pytest.raises(Refused, match="^YNM_AUTH, YNM_JWT_KEYS are set"):
        http_settings(env={"YNM_JWT_KEYS": "x", "YNM_AUTH": "y", "YNM_JWKS_URL": ""})
    assert http_settings(env={"YNM_JWKS_URL": "", "YNM_AUTHOR": "x"}).door.auth_mode == "none"


def _accepts(door: FrontDoor, token: str) -> bool:
    return door.token_ok(f"Bearer {token}")


@pytest.mark.parametrize(("token", "env"), [("a,b", {}), (" a , b ,", {}),
                                            (None, {"YNM_MCP_TOKEN": "a,b"}),
                                            ("a,b", {"YNM_MCP_TOKEN": "c"})])
def test_a_token_list_accepts_each_token(token, env):
    door = http_settings(token=token, env=env).door
    assert door.auth_mode == "bearer"
    assert _accepts(door, "a") and _accepts(door, "b")
    assert not _accepts(door, "a,b") and not _accepts(door, "c") and not _accepts(door, "")
    assert door.token_ok("bearer b")


def test_tokens_are_kept_as_sha256_digests():
    door = http_settings(token="a,b", env={}).door
    assert door.verifier._hashes == {hashlib.sha256(b"a").digest(), hashlib.sha256(b"b").digest()}


@pytest.mark.parametrize(("token", "env", "where"), [("", {}, "--token"), (" , ", {}, "--token"),
                                                     (None, {"YNM_MCP_TOKEN": " ,"},
                                                      "YNM_MCP_TOKEN")])
def test_an_empty_token_list_is_refused(token, env, where):
    with pytest.raises(InvalidInput, match=where):
        http_settings(token=token, env=env)


@pytest.mark.parametrize(("port", "env", "message"), [(None, {"PORT": "http"}, "PORT"),
                                                      (70000, {}, "--port")])
def test_a_bad_port_is_refused(port, env, message):
    with pytest.raises(InvalidInput, match=message):
        http_settings(port=port, env=env)
