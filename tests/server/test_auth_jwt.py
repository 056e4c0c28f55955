"""Auth mode ``jwt`` (reference/server.md §2.3): tokens minted with joserfc by a local
identity provider on 127.0.0.1 whose JWK set the verifier fetches; key rotation by ``kid``
without a restart; each kind of bad token refused with 401 ``invalid_token``."""

from __future__ import annotations

import time
from collections.abc import Iterator

import anyio
import pytest

pytest.importorskip("joserfc")

from tests.support.idp import AUDIENCE, ISSUER, Idp, new_key  # noqa: E402
from ynm.server.auth import AuthError, AuthInfo  # noqa: E402
from ynm.server.auth.jwt import JwksError, JwtVerifier  # noqa: E402


@pytest.fixture
def idp() -> Iterator[Idp]:
    provider = Idp()
    yield provider
    provider.stop()


def verifier(idp: Idp, **kw) -> JwtVerifier:
    v = JwtVerifier(idp.jwks_url, issuer=kw.pop("issuer", ISSUER),
                    audience=kw.pop("audience", AUDIENCE), **kw)
    v.load()
    return v


def verify(v: JwtVerifier, token: str) -> AuthInfo:
    return anyio.run(v.verify, token)


def refused(v: JwtVerifier, token: str) -> AuthError:
    with pytest.raises(AuthError) as err:
        verify(v, token)
    assert err.value.error == "invalid_token" and err.value.status == 401
    assert token not in str(err.value)
    return err.value


def test_a_valid_token_gives_its_caller(idp):
    exp = int(time.time()) + 600
    info = verify(verifier(idp), idp.mint(sub="alice", azp="claude-code", exp=exp,
                                          scope="memory:read memory:write"))
    assert info == AuthInfo(mode="jwt", client_id="claude-code",
                            scopes=("memory:read", "memory:write"), expires_at=exp,
                            subject="alice", issuer=ISSUER, client="claude-code")


@pytest.mark.parametrize(("claims", "drop", "client_id", "client", "subject", "scopes"), [
    ({"client_id": "nightly-worker", "scope": "memory:write"}, ("sub",), "nightly-worker",
     "nightly-worker", None, ("memory:write",)),                 # client credentials, no sub
    ({"azp": "web", "client_id": "other"}, (), "web", "web", "alice", ()),   # azp first
    ({}, (), "alice", None, "alice", ()),                        # client_id falls back to sub
    ({"scp": ["memory:read", "extra"]}, ("sub",), "jwt", None, None,
     ("memory:read", "extra")),                                   # scp array; nothing named
])
def test_client_id_client_subject_and_scopes_follow_the_reference(
        idp, claims, drop, client_id, client, subject, scopes):
    info = verify(verifier(idp), idp.mint(drop=drop, **claims))
    assert (info.client_id, info.client, info.subject, info.scopes) == (
        client_id, client, subject, scopes)
    assert info.issuer == ISSUER and not info.static


def test_an_audience_list_holding_ours_is_accepted(idp):
    assert verify(verifier(idp), idp.mint(aud=["other", AUDIENCE])).subject == "alice"


def _tampered(token: str) -> str:
    import base64
    import json

    head, body, sig = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    claims["sub"] = "mallory"
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    return f"{head}.{forged}.{sig}"


@pytest.mark.parametrize(("make", "reason"), [
    (lambda idp: idp.mint(exp=int(time.time()) - 600), "token expired"),
    (lambda idp: idp.mint(iss="https://evil.example"), "token issuer not accepted"),
    (lambda idp: idp.mint(aud="https://other.example/mcp"), "token audience not accepted"),
    (lambda idp: idp.mint(drop=("aud",)), "token audience not accepted"),
    (lambda idp: idp.mint(new_key("k9")), "token signed by an unknown key"),
    (lambda idp: idp.mint(new_key("k1")), "token signature is not valid"),  # same kid, other key
    (lambda idp: _tampered(idp.mint()), "token signature is not valid"),
    (lambda idp: idp.mint(drop=("exp",)), "token has no valid exp"),
    (lambda idp: idp.mint(nbf=int(time.time()) + 600), "token not valid yet"),
    (lambda idp: "not-a-jwt", "malformed token (not a signed JWT)"),
    (lambda idp: idp.mint().rsplit(".", 1)[0] + ".", "token signature is not valid"),
])
def test_each_kind_of_bad_token_is_refused(idp, make, reason):
    assert refused(verifier(idp), make(idp)).description == reason


def test_an_unsigned_or_hmac_token_is_refused(idp):
    import base64
    import json

    def part(obj):
        return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()

    claims = {"iss": ISSUER, "aud": AUDIENCE, "sub": "x", "exp": int(time.time()) + 60}
    v = verifier(idp)
    refused(v, f"{part({'alg': 'none', 'kid': 'k1'})}.{part(claims)}.")
    from joserfc import jwt
    from joserfc.jwk import OctKey

    secret = OctKey.import_key(b"k" * 32, {"kid": "k1"})
    refused(v, jwt.encode({"alg": "HS256", "kid": "k1"}, claims, secret, algorithms=["HS256"]))


def test_a_rotated_key_is_picked_up_without_a_restart(idp):
    v = verifier(idp)
    assert verify(v, idp.mint()).subject == "alice" and idp.jwks_requests == 1
    new = idp.rotate("k2")
    assert verify(v, idp.mint(new, sub="bob")).subject == "bob"
    assert idp.jwks_requests == 2
    assert verify(v, idp.mint(new, sub="carol")).subject == "carol"
    assert idp.jwks_requests == 2  # known now: no fetch


def test_unknown_kids_refetch_the_set_at_most_once_per_interval(idp):
    v = verifier(idp, refetch_every=60)
    for i in range(5):
        refused(v, idp.mint(new_key(f"junk{i}")))
    assert idp.jwks_requests == 2  # the start, then one refetch for the first unknown kid
    idp.rotate("k2")
    refused(v, idp.mint())  # inside the interval: the new key is not fetched yet
    v.refetch_every = 0
    assert verify(v, idp.mint()).subject == "alice"


def test_a_key_the_issuer_dropped_stops_being_accepted_once_the_set_is_old(idp):
    v = verifier(idp, max_age=0)
    old = idp.mint()
    assert verify(v, old).subject == "alice"
    idp.rotate("k2")
    refused(v, old)


def test_a_failed_refetch_keeps_the_keys_held(idp):
    v = verifier(idp, max_age=0)
    idp.jwks_status = 503
    assert verify(v, idp.mint()).subject == "alice"


def test_a_token_without_kid_uses_the_only_key(idp):
    bare = idp.mint(header={"kid": None})
    v = verifier(idp)
    assert verify(v, bare).subject == "alice"
    idp.rotate("k2", keep_old=True)
    refused(verifier(idp), bare)  # two keys: which one is not said


def test_waived_issuer_and_audience_accept_any(idp):
    v = verifier(idp, issuer=None, audience=None)
    info = verify(v, idp.mint(iss="https://other-idp.example", aud="anything"))
    assert info.issuer == "https://other-idp.example"


@pytest.mark.parametrize(("status", "body", "message"), [
    (200, None, "holds no signing key"),
    (500, None, "answered HTTP 500"),
])
def test_a_jwk_set_that_cannot_be_used_is_an_error(idp, status, body, message):
    idp.jwks_status = status
    if status == 200:
        idp.keys = []
    with pytest.raises(JwksError, match=message):
        JwtVerifier(idp.jwks_url, issuer=ISSUER, audience=AUDIENCE).load()


def test_an_unreachable_jwk_set_is_an_error():
    with pytest.raises(JwksError, match=r"cannot fetch http://127\.0\.0\.1:1/nothing"):
        JwtVerifier("http://127.0.0.1:1/nothing", issuer=ISSUER, audience=AUDIENCE).load()


def test_a_set_never_fetched_refuses_rather_than_failing(idp):
    v = JwtVerifier("http://127.0.0.1:1/nothing", issuer=ISSUER, audience=AUDIENCE)
    assert refused(v, idp.mint()).description == "token signed by an unknown key"
    lazy = JwtVerifier(idp.jwks_url, issuer=ISSUER, audience=AUDIENCE)  # not loaded: fetches
    assert verify(lazy, idp.mint()).subject == "alice"
