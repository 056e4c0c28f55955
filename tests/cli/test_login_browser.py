"""``ynm login`` in a browser (reference/cli.md §4.12: OAuth with dynamic client registration,
PKCE and a loopback redirect) against a real ``ynm serve --http`` in JWT mode whose
authorization server is a local one (tests/support/oauth_server.py); the "browser" is a script
named by ``$BROWSER`` that follows the redirects as a person who approves would. Then the
kept token is renewed with its refresh token when it expires or is refused."""

from __future__ import annotations

import json
import os
import stat
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("mcp")
pytest.importorskip("joserfc")

from tests.cli.test_hosted import TOKEN, hosted_write, mount_team
from tests.support.blocked import run_without
from tests.support.oauth_server import AuthorizationServer
from tests.support.serve import free_port, serve_http


@pytest.fixture
def browser(tmp_path: Path) -> dict[str, str]:
    """``$BROWSER``: a script that opens the address as a person who approves would."""
    script = tmp_path / "browser"
    script.write_text(f"#!{sys.executable}\nimport sys, urllib.request\n"
                      "urllib.request.urlopen(sys.argv[1], timeout=30).read()\n")
    script.chmod(0o755)
    return {"BROWSER": str(script)}


@pytest.fixture
def idp_store(hosted_repo: Path, server_home: Path, tmp_path: Path,
              ynm_home: Path) -> Iterator[tuple[str, AuthorizationServer]]:
    """The hosted store in JWT mode, advertising the local authorization server, mounted
    as ``team`` (not signed in); yields ``(url, authorization server)``."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    auth = AuthorizationServer(audience=url)
    try:
        with serve_http(hosted_repo, "--no-personal", port=port,
                        env={"YNM_HOME": str(server_home), **auth.jwt_env()},
                        stderr=tmp_path / "server.log"):
            mount_team(ynm_home, url)
            yield url, auth
    finally:
        auth.stop()


def login(project: Path, browser: dict[str, str], *args: str):
    return run_without([], "login", "team", *args, cwd=project,
                       env={**os.environ, **browser})


def sign_in_file(ynm_home: Path) -> dict:
    return json.loads((ynm_home / "auth" / "team.json").read_text())


def test_login_in_a_browser_keeps_a_renewable_token(idp_store, project, ynm_home, browser,
                                                    hosted_repo, server_home, cli_run):
    url, auth = idp_store
    result = login(project, browser, "--browser", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"mount": "team", "url": url, "signedIn": True,
                                         "scopes": ["memory:read", "memory:write"]}
    # the client registered itself, and one code was exchanged with its PKCE verifier
    assert len(auth.clients) == 1 and auth.grants == ["authorization_code"]
    assert f"team: sign in at: {auth.issuer}/authorize?" in result.stderr
    kept = sign_in_file(ynm_home)
    path = ynm_home / "auth" / "team.json"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert kept["url"] == url and kept["oauth"]["tokenEndpoint"] == auth.issuer + "/token"
    assert kept["oauth"]["refreshToken"] in auth.refresh_tokens
    assert kept["oauth"]["resource"] == url
    for secret in (kept["token"], kept["oauth"]["refreshToken"]):
        assert secret not in result.stdout + result.stderr

    # the token reads the hosted store, as the signed-in person
    hid = hosted_write(hosted_repo, server_home, "The payments team deploys with helm")
    result = cli_run("recall", "deploys", "helm", "--mount", "team", "--json")
    assert result.exit_code == 0, result.stderr
    assert [h["memoryId"] for h in json.loads(result.stdout)] == [hid]


def test_an_expired_or_refused_token_is_renewed_with_the_refresh_token(
        idp_store, project, ynm_home, browser, hosted_repo, server_home, cli_run):
    _url, auth = idp_store
    assert login(project, browser, "--browser").returncode == 0
    hid = hosted_write(hosted_repo, server_home, "The payments team deploys with helm")

    def recall() -> list[str]:
        result = cli_run("recall", "deploys", "helm", "--mount", "team", "--json")
        assert result.exit_code == 0, result.stderr
        assert result.stderr == ""
        return [h["memoryId"] for h in json.loads(result.stdout)]

    # expired by the clock: renewed before the call
    path = ynm_home / "auth" / "team.json"
    kept = sign_in_file(ynm_home)
    kept["oauth"]["expiresAt"] = 1
    path.write_text(json.dumps(kept))
    assert recall() == [hid]
    renewed = sign_in_file(ynm_home)
    assert auth.grants == ["authorization_code", "refresh_token"]
    assert renewed["token"] != kept["token"]
    assert renewed["oauth"]["refreshToken"] != kept["oauth"]["refreshToken"]  # rotated
    assert renewed["oauth"]["expiresAt"] > 10**9
    assert stat.S_IMODE(path.stat().st_mode) == 0o600

    # refused before its time (revoked, say): renewed once, and the call made again
    revoked = {**renewed, "token": renewed["token"][:-8] + "AAAAAAAA"}
    path.write_text(json.dumps(revoked))
    assert recall() == [hid]
    assert auth.grants == ["authorization_code", "refresh_token", "refresh_token"]
    assert sign_in_file(ynm_home)["token"] not in (revoked["token"], renewed["token"])

    # a refresh the identity provider refuses: the store is named, with what to do
    path.write_text(json.dumps(revoked))
    auth.refresh_ok = False
    result = cli_run("recall", "deploys", "helm", "--json")
    assert result.exit_code == 0
    assert "shared memory left out: team" in result.stderr
    assert "would not renew it (HTTP 400 invalid_grant); sign in again: `ynm login team`" \
        in result.stderr


def test_a_refused_browser_sign_in_keeps_nothing(idp_store, project, ynm_home, browser):
    _url, auth = idp_store
    auth.deny = "access_denied"
    result = login(project, browser, "--browser")
    assert result.returncode == 1
    assert result.stderr.rstrip().endswith(
        "could not sign in to team (" + _url + "): the identity provider refused the sign-in: "
        "access_denied")
    assert "Traceback" not in result.stderr
    assert not (ynm_home / "auth" / "team.json").exists()


def test_browser_sign_in_needs_a_store_that_names_an_identity_provider(
        hosted_repo, server_home, tmp_path, project, ynm_home, browser):
    with serve_http(hosted_repo, "--token", TOKEN, "--no-personal",
                    env={"YNM_HOME": str(server_home)}) as base:
        mount_team(ynm_home, base + "/mcp")
        result = login(project, browser, "--browser")
        assert result.returncode == 2
        assert result.stderr.endswith(
            f"team ({base}/mcp) names no identity provider to sign in with in a browser; give "
            "the store's token instead: ynm login team --token ...\n")
        both = login(project, browser, "--browser", "--token", TOKEN)
        assert both.returncode == 2 and "give one way of signing in" in both.stderr
    assert not (ynm_home / "auth" / "team.json").exists()
