"""Which auth mode ``ynm serve --http`` runs with, decided once at start from ``--token`` and
the environment (reference/server.md §2.3), and the refusals that keep a misconfigured server
from starting open (ynm's rule, ADR-017's proposal built; the reference falls back silently).

Order (the reference's, first match wins): ``--token`` → ``YNM_JWKS_URL`` (``jwt``) →
``YNM_OAUTH_INTROSPECTION_URL`` (``introspection``) → ``YNM_MCP_TOKEN`` (``bearer``) → ``none``.

Variables:

========================================  ====================================================
``YNM_MCP_TOKEN``                         static tokens, a comma list (rotation)
``YNM_JWKS_URL``                          the issuer's JWK set (http or https URL)
``YNM_JWT_ISSUER``                        the required ``iss`` (also the advertised
                                          authorization server)
``YNM_JWT_AUDIENCE``                      the required ``aud``
``YNM_JWT_ALLOW_ANY_ISSUER=1``            waive the issuer check (explicitly)
``YNM_JWT_ALLOW_ANY_AUDIENCE=1``          waive the audience check (explicitly)
``YNM_PUBLIC_URL``                        the resource URL advertised in JWT mode
``YNM_OAUTH_INTROSPECTION_URL``           the RFC 7662 endpoint
``YNM_OAUTH_CLIENT_ID``, ``..._SECRET``   ynm's client credentials there (both required)
``YNM_REQUIRED_SCOPES``                   scopes every request's token must carry (comma list)
========================================  ====================================================

Refused at start (exit 2, naming the variable and the cause): any other ``YNM_AUTH``,
``YNM_AUTH_*``, ``YNM_JWT_*`` or ``YNM_OAUTH_*`` variable (ADR-017's never-built names among
them); a URL that is not http(s); a JWK set that cannot be fetched or holds no usable key; an
introspection endpoint that cannot be reached or refuses the client credentials; a missing
client id or secret; JWT mode without an issuer or an audience and without its waiver; a
setting of a mode whose main variable is not set (``YNM_JWT_ISSUER`` without
``YNM_JWKS_URL``); ``YNM_REQUIRED_SCOPES`` with static tokens or no auth (no scopes to check).
Settings of a mode that a higher one overrides (``--token`` over everything, ``YNM_JWKS_URL``
over introspection and static tokens) are not used and are named in a start-up note.
Empty values count as unset.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from ynm.errors import InvalidInput, Refused
from ynm.server.auth import READ_SCOPE, WRITE_SCOPE, Verifier
from ynm.server.auth.discovery import ProtectedResource, http_url

JWT_ENV = ("YNM_JWKS_URL", "YNM_JWT_ISSUER", "YNM_JWT_AUDIENCE", "YNM_JWT_ALLOW_ANY_ISSUER",
           "YNM_JWT_ALLOW_ANY_AUDIENCE")
INTROSPECTION_ENV = ("YNM_OAUTH_INTROSPECTION_URL", "YNM_OAUTH_CLIENT_ID",
                     "YNM_OAUTH_CLIENT_SECRET")
SUPPORTED_AUTH_ENV = ("YNM_MCP_TOKEN", *JWT_ENV, *INTROSPECTION_ENV, "YNM_REQUIRED_SCOPES",
                      "YNM_PUBLIC_URL")
# Auth variables ynm does not implement (ADR-017's proposal, never built by the reference
# either): set, they would be silently ignored, so the server refuses to start.
UNSUPPORTED_AUTH_ENV = ("YNM_AUTH",)
UNSUPPORTED_AUTH_ENV_PREFIXES = ("YNM_JWT_", "YNM_OAUTH_", "YNM_AUTH_")
Get = Callable[[str], str]
STARTUP = "ynm serve does not start with an auth setting it cannot use"
TRUE = ("1", "true", "yes", "on")
FALSE = ("0", "false", "no", "off")


@dataclass
class AuthSettings:
    """The auth of one server.

    Attributes:
        verifier: the mode's verifier (None: mode ``none``).
        required_scopes: ``YNM_REQUIRED_SCOPES``.
        resource: the protected-resource metadata (JWT mode with an issuer), else None.
        notes: start-up lines (settings not used, and why).
    """

    verifier: Verifier | None = None
    required_scopes: tuple[str, ...] = ()
    resource: ProtectedResource | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def mode(self) -> str:
        """``bearer`` | ``jwt`` | ``introspection`` | ``none``."""
        return self.verifier.mode if self.verifier is not None else "none"


def split_list(*values: str | None) -> list[str]:
    """The non-blank items of comma-separated values, stripped (``"a, b"`` -> ``[a, b]``)."""
    return [p.strip() for v in values if v for p in v.split(",") if p.strip()]


def auth_settings(*, token: str | None, env: Mapping[str, str],
                  check: bool = True) -> AuthSettings:
    """Decide the auth mode (see the module docstring for the order and the refusals).

    Args:
        token: ``--token`` (a comma list), or None.
        env: the environment (with ``$YNM_HOME/env`` and the repository's ``.env``).
        check: fetch the JWK set / probe the introspection endpoint now (a start), so a
            setting that cannot work stops the start rather than every request.

    Raises:
        Refused: an unsupported auth variable, or a set one that cannot be used (exit 2).
        InvalidInput: an empty token list.
    """
    def value(name: str) -> str:
        return (env.get(name) or "").strip()

    unsupported = sorted(k for k, v in env.items() if v.strip() and k not in SUPPORTED_AUTH_ENV
                         and (k in UNSUPPORTED_AUTH_ENV
                              or k.startswith(UNSUPPORTED_AUTH_ENV_PREFIXES)))
    if unsupported:
        one = len(unsupported) == 1
        raise Refused(f"{', '.join(unsupported)} {'is' if one else 'are'} set, but ynm serve "
                      f"does not support {'it' if one else 'them'}; unset "
                      f"{'it' if one else 'them'} (in the environment, $YNM_HOME/env or the "
                      "repository's .env). Auth settings ynm reads: "
                      + ", ".join(SUPPORTED_AUTH_ENV))
    set_ = [name for name in SUPPORTED_AUTH_ENV if value(name)]
    scopes = tuple(s for part in split_list(value("YNM_REQUIRED_SCOPES"))
                   for s in part.split())

    def unused(names: list[str], why: str) -> list[str]:
        return [f"{name} is set but not used: {why}" for name in names]

    if token is not None:
        tokens = split_list(token)
        if not tokens:
            raise InvalidInput("--token: no token given")
        from ynm.server.auth.static import StaticVerifier

        return AuthSettings(StaticVerifier(tokens), notes=unused(
            set_, "--token chooses static bearer tokens over every auth setting of the "
                  "environment"))

    if value("YNM_JWKS_URL"):
        notes = unused([n for n in set_ if n in INTROSPECTION_ENV or n == "YNM_MCP_TOKEN"],
                       "YNM_JWKS_URL (JWT auth) comes first")
        return _jwt(value, scopes, notes, check)
    _refuse_orphans(set_, JWT_ENV, "YNM_JWKS_URL", "JWT auth needs the issuer's JWK set URL")

    if value("YNM_OAUTH_INTROSPECTION_URL"):
        notes = unused([n for n in set_ if n == "YNM_MCP_TOKEN"],
                       "YNM_OAUTH_INTROSPECTION_URL (introspection) comes first")
        notes += _public_url_unused(value)
        return _introspection(value, scopes, notes, check)
    _refuse_orphans(set_, INTROSPECTION_ENV, "YNM_OAUTH_INTROSPECTION_URL",
                    "token introspection needs the endpoint's URL")

    mode = "static bearer tokens (YNM_MCP_TOKEN)" if value("YNM_MCP_TOKEN") else "no auth"
    if scopes:
        raise Refused(f"YNM_REQUIRED_SCOPES is set, but the server runs with {mode}, which "
                      "carries no scopes: every request would be refused. Scopes need JWT "
                      f"(YNM_JWKS_URL) or introspection (YNM_OAUTH_INTROSPECTION_URL); {STARTUP}")
    notes = _public_url_unused(value)
    if value("YNM_MCP_TOKEN"):
        tokens = split_list(value("YNM_MCP_TOKEN"))
        if not tokens:
            raise InvalidInput("YNM_MCP_TOKEN: no token given (a comma list of tokens)")
        from ynm.server.auth.static import StaticVerifier

        return AuthSettings(StaticVerifier(tokens), notes=notes)
    return AuthSettings(notes=notes)


def _public_url_unused(value: Get) -> list[str]:
    if value("YNM_PUBLIC_URL"):
        return [("YNM_PUBLIC_URL is set but not used: it names the resource advertised by JWT "
                "auth with an issuer")]
    return []


def _refuse_orphans(set_: list[str], family: tuple[str, ...], main: str, why: str) -> None:
    orphans = [n for n in set_ if n in family and n != main]
    if orphans:
        one = len(orphans) == 1
        raise Refused(f"{', '.join(orphans)} {'is' if one else 'are'} set but {main} is not: "
                      f"{why}; set {main} or unset {'it' if one else 'them'} ({STARTUP})")


def _flag(value: Get, name: str) -> bool:
    text = value(name).lower()
    if not text or text in FALSE:
        return False
    if text in TRUE:
        return True
    raise Refused(f"{name}: {text!r} is not 1 or 0 ({STARTUP})")


def _url(value: Get, name: str) -> str:
    url = value(name)
    if not http_url(url) or re.search(r"\s", url):
        raise Refused(f"{name}: {url!r} is not an http(s) URL ({STARTUP})")
    return url


def _jwt(value: Get, scopes: tuple[str, ...], notes: list[str],
         check: bool) -> AuthSettings:
    """JWT mode. Every problem is named at once: the JWK set that cannot be fetched first,
    then a missing issuer or audience."""
    from ynm.server.auth.jwt import JwksError, JwtVerifier

    url = _url(value, "YNM_JWKS_URL")
    problems: list[str] = []
    keys = None
    if check:
        try:
            keys = JwtVerifier(url, issuer=None, audience=None)
            keys.load()
        except JwksError as err:
            problems.append(f"YNM_JWKS_URL: {err}")
    checked: dict[str, str | None] = {}
    for claim, name, waiver, what in (
            ("iss", "YNM_JWT_ISSUER", "YNM_JWT_ALLOW_ANY_ISSUER", "the issuer's URL"),
            ("aud", "YNM_JWT_AUDIENCE", "YNM_JWT_ALLOW_ANY_AUDIENCE",
             "this server's audience (its resource URL)")):
        required = value(name)
        waived = _flag(value, waiver)
        if required and waived:
            problems.append(f"{name} and {waiver} are both set: check the {claim} claim "
                            f"against {name} or waive the check, not both")
        elif not required and not waived:
            problems.append(f"YNM_JWKS_URL is set but {name} is not: JWT auth checks the "
                            f"token's {claim} claim; set {name} to {what}, or {waiver}=1 to "
                            "accept any")
        checked[claim] = required or None
    public = value("YNM_PUBLIC_URL")
    if public:
        _url(value, "YNM_PUBLIC_URL")
    if problems:
        raise Refused(f"{'; '.join(problems)} ({STARTUP})")
    issuer, audience = checked["iss"], checked["aud"]
    if public and issuer is None:
        notes = [*notes, ("YNM_PUBLIC_URL is set but not used: the protected-resource "
                         "document is served only with YNM_JWT_ISSUER")]
    verifier = JwtVerifier(url, issuer=issuer, audience=audience)
    if keys is not None:
        verifier.adopt(keys)
    resource = None
    if issuer is not None:
        named = public or (audience if audience and http_url(audience) else None)
        resource = ProtectedResource(issuer=issuer, resource=named,
                                     scopes=tuple(dict.fromkeys((READ_SCOPE, WRITE_SCOPE,
                                                                 *scopes))))
    return AuthSettings(verifier, scopes, resource, notes)


def _introspection(value: Get, scopes: tuple[str, ...], notes: list[str],
                   check: bool) -> AuthSettings:
    from ynm.server.auth.introspection import IntrospectionError, IntrospectionVerifier

    url = _url(value, "YNM_OAUTH_INTROSPECTION_URL")
    for name in ("YNM_OAUTH_CLIENT_ID", "YNM_OAUTH_CLIENT_SECRET"):
        if not value(name):
            raise Refused(f"YNM_OAUTH_INTROSPECTION_URL is set but {name} is not: the "
                          "introspection endpoint needs ynm's client credentials "
                          f"(RFC 7662 §2.1) ({STARTUP})")
    verifier = IntrospectionVerifier(url, value("YNM_OAUTH_CLIENT_ID"),
                                     value("YNM_OAUTH_CLIENT_SECRET"))
    if check:
        try:
            verifier.probe()
        except IntrospectionError as err:
            raise Refused(f"{err} ({STARTUP})") from None
    return AuthSettings(verifier, scopes, None, notes)
