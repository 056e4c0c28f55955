"""Auth mode ``introspection`` (RFC 7662, reference/server.md §2.3) against a local endpoint on
127.0.0.1 that checks ynm's client credentials: active tokens give their caller, inactive ones
401; positive answers cached min(60 s, exp) by the token's SHA-256, negative ones not."""

from __future__ import annotations

import hashlib
import time
from collections.abc import Iterator

import anyio
import pytest

from tests.support.idp import CLIENT_ID, CLIENT_SECRET, Idp
from ynm.server.auth import AuthError, AuthInfo
from ynm.server.auth.introspection import IntrospectionError, IntrospectionVerifier


@pytest.fixture
def idp() -> Iterator[Idp]:
    provider = Idp()
    yield provider
    provider.stop()


def verifier(idp: Idp, secret: str = CLIENT_SECRET) -> IntrospectionVerifier:
    return IntrospectionVerifier(idp.introspection_url, CLIENT_ID, secret)


def verify(v: IntrospectionVerifier, token: str) -> AuthInfo:
    return anyio.run(v.verify, token)


def refused(v: IntrospectionVerifier, token: str) -> AuthError:
    with pytest.raises(AuthError) as err:
        verify(v, token)
    assert err.value.error == "invalid_token" and err.value.status == 401
    return err.value


def test_an_active_token_gives_its_caller(idp):
    exp = int(time.time()) + 600
    idp.introspection["tok-alice"] = {"active": True, "sub": "alice", "client_id": "cli",
                                      "iss": "https://idp.example", "exp": exp,
                                      "scope": "memory:read memory:write",
                                      "username": "alice@example.com"}
    assert verify(verifier(idp), "tok-alice") == AuthInfo(
        mode="introspection", client_id="cli", scopes=("memory:read", "memory:write"),
        expires_at=exp, subject="alice", issuer="https://idp.example", client="cli")


@pytest.mark.parametrize(("answer", "client_id", "client", "subject", "issuer"), [
    ({"client_id": "nightly"}, "nightly", "nightly", None, None),   # client credentials
    ({"sub": "bob"}, "bob", None, "bob", None),
    ({}, "unknown", None, None, None),
])
def test_client_id_and_issuer_fall_back_as_the_reference(idp, answer, client_id, client,
                                                         subject, issuer):
    idp.introspection["t"] = {"active": True, **answer}
    info = verify(verifier(idp), "t")
    assert (info.client_id, info.client, info.subject) == (client_id, client, subject)
    assert info.issuer == (issuer or idp.url)  # the origin of the introspection URL
    assert abs(info.expires_at - (time.time() + 3600)) < 5


def test_inactive_unknown_and_expired_tokens_are_refused(idp):
    idp.introspection["off"] = {"active": False, "sub": "x"}
    idp.introspection["old"] = {"active": True, "sub": "x", "exp": int(time.time()) - 5}
    idp.introspection["odd"] = {"active": "true", "sub": "x"}
    v = verifier(idp)
    assert refused(v, "off").description == "token is not active"
    assert refused(v, "never-issued").description == "token is not active"
    assert refused(v, "old").description == "token expired"
    assert refused(v, "odd").description == "token is not active"


def test_positive_answers_are_cached_and_negative_ones_are_not(idp):
    v = verifier(idp)
    refused(v, "later")
    refused(v, "later")
    assert idp.introspection_requests == 2
    idp.introspection["later"] = {"active": True, "sub": "carol"}
    assert verify(v, "later").subject == "carol"
    assert idp.introspection_requests == 3
    idp.introspection["later"] = {"active": False}  # revoked: the cache still holds it
    for _ in range(3):
        assert verify(v, "later").subject == "carol"
    assert idp.introspection_requests == 3
    assert list(v._cache) == [hashlib.sha256(b"later").digest()]  # keyed by hash, not token


def test_the_cache_ends_at_the_tokens_exp(idp):
    v = verifier(idp)
    exp = int(time.time()) + 4
    idp.introspection["short"] = {"active": True, "sub": "dan", "exp": exp}
    assert verify(v, "short").subject == "dan"
    assert verify(v, "short").subject == "dan"
    assert idp.introspection_requests == 1
    time.sleep(max(0.0, exp - time.time()) + 0.2)
    assert refused(v, "short").description == "token expired"
    assert idp.introspection_requests == 2


def test_an_endpoint_that_fails_at_request_time_gives_401(idp):
    v = IntrospectionVerifier("http://127.0.0.1:1/introspect", CLIENT_ID, CLIENT_SECRET)
    assert refused(v, "anything").description == "token introspection unavailable"
    assert refused(verifier(idp, secret="wrong"), "t").description == "token not accepted"


def test_the_start_probe_checks_reachability_and_credentials(idp):
    verifier(idp).probe()
    with pytest.raises(IntrospectionError, match="^YNM_OAUTH_CLIENT_ID, "
                                                 "YNM_OAUTH_CLIENT_SECRET: .* refused the "
                                                 r"client credentials \(HTTP 401\)"):
        verifier(idp, secret="wrong").probe()
    with pytest.raises(IntrospectionError, match="^YNM_OAUTH_INTROSPECTION_URL: cannot reach"):
        IntrospectionVerifier("http://127.0.0.1:1/x", CLIENT_ID, CLIENT_SECRET).probe()
    with pytest.raises(IntrospectionError, match="is not an RFC 7662 introspection endpoint"):
        IntrospectionVerifier(idp.url + "/elsewhere", CLIENT_ID, CLIENT_SECRET).probe()
