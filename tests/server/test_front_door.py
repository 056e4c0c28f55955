"""The HTTP front door's rules without a server: Host and Origin matching (host names and
schemes case-insensitive, ports exact, RFC 9110 §4.2.3) and the start-up settings of
``ynm serve --http`` (reference/server.md §2.1, §2.3, §6)."""

from __future__ import annotations

import pytest

from ynm.errors import InvalidInput
from ynm.server.http import FrontDoor, is_loopback, split_host, split_origin

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
