"""The web view at ``/ui/`` of a real ``ynm serve --http`` on 127.0.0.1, read with httpx: every
page, hostile content rendered inert, the same auth as ``/mcp`` (bearer header, or the sign-in
cookie of a browser), and ``ynm ui``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from html.parser import HTMLParser

import httpx
import pytest

from tests.support.serve import free_port, serve_http
from tests.web.conftest import TOKEN


class _Tags(HTMLParser):
    """Every start tag of a page with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def tags(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Tags()
    parser.feed(html)
    return parser.tags


def assert_inert(html: str) -> None:
    """No script element, no event-handler attribute, no URL with a scheme other than
    http/https/mailto in any href or src."""
    for tag, attrs in tags(html):
        assert tag != "script"
        for name, value in attrs.items():
            assert not name.startswith("on"), (tag, name)
            if name in ("href", "src", "action") and value:
                scheme = re.match(r"^\s*([a-zA-Z][a-zA-Z0-9+.\-]*):", re.sub(r"[\x00-\x20]", "", value))
                assert scheme is None or scheme.group(1).lower() in ("http", "https", "mailto"), value


@pytest.fixture
def open_server(store):
    with serve_http(store.path) as base:
        yield base


def test_index_counts_by_level_namespace_and_type_and_pages(store, open_server):
    with httpx.Client(base_url=open_server) as client:
        r = client.get("/ui/")
        assert r.status_code == 200
        assert r.headers["content-type"].startswith("text/html")
        assert "script-src" not in r.headers["content-security-policy"]  # default-src 'none'
        assert "default-src 'none'" in r.headers["content-security-policy"]
        html = r.text
        # 7 live memories: common holds 1 semantic + 5 episodic, team/api 1 procedural
        assert re.search(r'>distributed</a> <span class="count">7</span>', html)
        assert re.search(r'namespace=common">common</a> <span class="count">6</span>', html)
        assert re.search(r'type=episodic">episodic</a> <span class="count">5</span>', html)
        assert re.search(r'namespace=team/api">team/api</a> <span class="count">1</span>', html)
        assert_inert(html)

        # pages of 3: every memory exactly once, newest first, then no "older" link
        seen: list[str] = []
        url = "/ui/?n=3"
        while url:
            page = client.get(url)
            assert page.status_code == 200
            ids = re.findall(r'class="summary" href="/ui/m/([0-9A-Z]{26})"', page.text)
            assert 1 <= len(ids) <= 3
            seen.extend(ids)
            older = re.search(r'rel="next" href="([^"]+)"', page.text)
            url = older.group(1).replace("&amp;", "&") if older else None
        assert len(seen) == 7 and len(set(seen)) == 7
        assert set(seen) == {store.memory_id, store.other_id, *store.fillers}
        assert seen[0] == store.fillers[-1]  # the newest write

        filtered = client.get("/ui/", params={"namespace": "team/api"}).text
        assert re.findall(r'class="summary" href="/ui/m/([0-9A-Z]{26})"', filtered) == \
            [store.other_id]


def test_memory_page_lists_every_version_and_renders_content_inert(store, open_server):
    r = httpx.get(f"{open_server}/ui/m/{store.memory_id}")
    assert r.status_code == 200
    html = r.text
    assert re.findall(r'<span class="op">(\w+)</span>', html) == ["create", "supersede",
                                                                 "annotate"]
    assert html.count('<span class="actor">') == 3
    assert "Deploys go out on Tuesdays." in html and "Deploys moved to Wednesdays." in html
    assert "possible duplicate" in html
    # raw HTML in content is text, unsafe links are not links
    assert "<script>" not in html and "&lt;script&gt;document.title" in html
    assert "<img src=x" not in html and "&lt;img src=x onerror=alert(3)&gt;" in html
    assert 'href="https://example.com/run"' in html
    assert 'href="javascript' not in html and 'src="data:' not in html
    assert_inert(html)
    # links both ways: the other memory links here, and its page links back
    assert f'href="/ui/m/{store.other_id}"' in html
    assert 'href="/ui/entities/deploy%20pipeline"' in html
    assert 'href="/ui/topics/release"' in html
    back = httpx.get(f"{open_server}/ui/m/{store.other_id}").text
    assert f'supports → <a href="/ui/m/{store.memory_id}"' in back


def test_search_review_status_subject_and_tag_pages(store, open_server):
    with httpx.Client(base_url=open_server) as client:
        search = client.get("/ui/search", params={"q": "smoke tests deploy"})
        assert search.status_code == 200
        hits = re.findall(r'class="summary" href="/ui/m/([0-9A-Z]{26})"', search.text)
        assert hits[0] == store.other_id
        assert '<th>relevance</th>' in search.text and '<th>recency</th>' in search.text
        assert_inert(search.text)

        review = client.get("/ui/review").text
        assert re.findall(r'class="summary" href="/ui/m/([0-9A-Z]{26})"', review) == \
            [store.memory_id]
        assert '<p class="why">possible duplicate</p>' in review

        status = client.get("/ui/status").text
        assert "<td>project</td>" in status and "<td>yes</td>" in status

        subject = client.get("/ui/entities/deploy%20pipeline").text
        assert re.findall(r'class="summary" href="/ui/m/([0-9A-Z]{26})"', subject) == \
            [store.memory_id]
        topic = client.get("/ui/topics/ops").text
        assert re.findall(r'class="summary" href="/ui/m/([0-9A-Z]{26})"', topic) == \
            [store.memory_id]
        assert "Filler" not in topic


@pytest.mark.parametrize(("path", "status", "says"), [
    ("/ui/m/01K0000000000000000000000Z", 404, "unknown memory"),
    ("/ui/?level=galactic", 400, "level"),
    ("/ui/?n=0", 400, "page size"),
    ("/ui/?after=nocursor", 400, "cursor"),
])
def test_expected_failures_are_pages_with_their_status(store, open_server, path, status, says):
    r = httpx.get(open_server + path)
    assert r.status_code == status
    assert says in r.text
    assert "Traceback" not in r.text


@pytest.fixture
def token_server(store):
    with serve_http(store.path, "--token", TOKEN) as base:
        yield base


def test_without_credentials_pages_answer_401_and_no_memory_text(store, token_server):
    for path in ("/ui/", f"/ui/m/{store.memory_id}", "/ui/search?q=deploy", "/ui/review",
                 "/ui/status", "/ui/topics/ops", "/ui/entities/deploy%20pipeline"):
        r = httpx.get(token_server + path)
        assert r.status_code == 401, path
        assert r.headers["www-authenticate"].startswith("Bearer")
        assert 'name="token"' in r.text  # the sign-in form
        # the page names only the address asked for (where to return after signing in)
        body = r.text.replace(f'name="next" value="{path.replace("&", "&amp;")}"', "")
        for secret in ("Tuesdays", "Wednesdays", "smoke tests", "Filler", "deploy pipeline",
                       store.memory_id, store.other_id):
            assert secret not in body, (path, secret)
    wrong = httpx.get(token_server + "/ui/", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401 and "Filler" not in wrong.text
    # a script sends the same header as for /mcp
    ok = httpx.get(token_server + "/ui/", headers={"Authorization": f"Bearer {TOKEN}"})
    assert ok.status_code == 200 and "Filler note" in ok.text


def test_sign_in_sets_a_strict_http_only_cookie_that_is_not_the_token(store, token_server):
    with httpx.Client(base_url=token_server) as client:
        refused = client.post("/ui/login", data={"token": "wrong", "next": "/ui/review"})
        assert refused.status_code == 401 and "Filler" not in refused.text
        assert "set-cookie" not in refused.headers

        # a form posted from another site fails the Origin check before the token is read
        foreign = client.post("/ui/login", data={"token": TOKEN},
                              headers={"Origin": "https://evil.example"})
        assert foreign.status_code == 403
        assert "set-cookie" not in foreign.headers

        r = client.post("/ui/login", data={"token": TOKEN, "next": "/ui/review"},
                        headers={"Origin": token_server})
        assert r.status_code == 303 and r.headers["location"] == "/ui/review"
        cookie = r.headers["set-cookie"]
        attrs = [a.strip().lower() for a in cookie.split(";")]
        assert "httponly" in attrs and "samesite=strict" in attrs and "path=/ui" in attrs
        assert "secure" not in attrs  # served over plain http on loopback
        # the cookie lives as long as the server's session: a static token's hour
        [max_age] = [int(a.split("=")[1]) for a in attrs if a.startswith("max-age=")]
        assert 3590 <= max_age <= 3600
        value = cookie.split(";")[0].split("=", 1)[1]
        assert len(value) >= 40 and TOKEN not in value and value not in TOKEN

        page = client.get("/ui/review")
        assert page.status_code == 200 and "possible duplicate" in page.text
        assert "Sign out" in page.text

        # an off-site "next" is not followed
        elsewhere = client.post("/ui/login", data={"token": TOKEN, "next": "//evil.example/x"})
        assert elsewhere.headers["location"] == "/ui/"
        current = elsewhere.headers["set-cookie"].split(";")[0].split("=", 1)[1]
        assert current != value  # every sign-in is a session of its own

        out = client.post("/ui/logout")
        assert out.status_code == 303
        assert "max-age=0" in out.headers["set-cookie"].lower()
        client.cookies.set("ynm_ui", current, path="/ui")  # the id ended is no session now
        assert client.get("/ui/").status_code == 401
        client.cookies.set("ynm_ui", value, path="/ui")  # the first sign-in still is one
        assert client.get("/ui/").status_code == 200


def test_a_forged_or_foreign_host_is_refused_before_the_view(store, open_server):
    r = httpx.get(open_server + "/ui/", headers={"Host": "rebound.example:1"})
    assert r.status_code == 421 and "Filler" not in r.text
    r = httpx.get(open_server + "/ui/", headers={"Origin": "https://evil.example"})
    assert r.status_code == 403 and "Filler" not in r.text


def test_ynm_ui_serves_the_local_store_and_prints_its_url(store):
    port = free_port()
    proc = _ui(store, "--port", str(port))
    try:
        line = proc.stdout.readline()
        assert line.strip() == f"ynm ui: http://127.0.0.1:{port}/ui/"
        r = _get_when_up(proc, f"http://127.0.0.1:{port}/ui/")
        assert r.status_code == 200 and "Filler note number 4" in r.text
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _get_when_up(proc: subprocess.Popen, url: str) -> httpx.Response:
    """GET ``url`` once the server process answers (within 30 s, while it still runs)."""
    deadline = time.monotonic() + 30
    while True:
        try:
            return httpx.get(url, timeout=2)
        except httpx.TransportError:
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.1)


def _ui(store, *args: str) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "ynm", "ui", "--no-open", "--cwd",
                             str(store.path), *args], env=dict(os.environ),
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)


def test_ynm_ui_json_prints_one_line_once_the_port_listens(store):
    port = free_port()
    proc = _ui(store, "--port", str(port), "--json")
    try:
        line = proc.stdout.readline()
        assert json.loads(line) == {"url": f"http://127.0.0.1:{port}/ui/", "pid": proc.pid}
        # printed only once listening: the first request, with no retry, is answered
        r = httpx.get(f"http://127.0.0.1:{port}/ui/", timeout=30)
        assert r.status_code == 200 and "Filler note number 4" in r.text
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=10)
    assert out == ""  # nothing after the one line


def test_ynm_ui_quiet_prints_no_address(store):
    port = free_port()
    proc = _ui(store, "--port", str(port), "--quiet")
    try:
        r = _get_when_up(proc, f"http://127.0.0.1:{port}/ui/")
        assert r.status_code == 200
    finally:
        proc.terminate()
        out, _ = proc.communicate(timeout=10)
    assert out == ""


def test_ynm_ui_on_a_busy_port_prints_no_address_and_fails(store, cli_run):
    import socket

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        result = cli_run("ui", "--no-open", "--port", port, "--cwd", store.path)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.endswith(f"Error: cannot listen on 127.0.0.1:{port}: address in use; "
                                  "pass another --port, or stop what is using it\n")
    assert "listening" not in result.stderr


def test_ynm_ui_help(cli_run):
    result = cli_run("ui", "--help")
    assert result.exit_code == 0
    assert "--no-open" in result.stdout and "--port" in result.stdout


def test_the_request_log_names_the_caller_of_each_page(store, tmp_path):
    log = tmp_path / "serve.log"
    with serve_http(store.path, "--token", TOKEN, stderr=log) as base, \
            httpx.Client(base_url=base) as client:
        assert client.get("/ui/status").status_code == 401
        client.get("/ui/status", headers={"Authorization": f"Bearer {TOKEN}"})
        client.post("/ui/login", data={"token": TOKEN})
        client.get("/ui/review")
    lines = [line for line in log.read_text().splitlines() if "request " in line]
    assert any("GET /ui/status 401" in line and "auth=refused" in line for line in lines)
    assert any("GET /ui/status 200" in line and "auth=static" in line for line in lines)
    assert any("GET /ui/review 200" in line and "auth=static" in line for line in lines)
    assert TOKEN not in log.read_text()


def _count_records(path) -> str:
    """Every notes ref of the store with its commit: changes whenever anything is written."""
    return subprocess.run(["git", "-C", str(path), "for-each-ref", "refs/notes/"],
                          capture_output=True, text=True, check=True).stdout


def test_ynm_ui_port_0_prints_the_port_bound_and_serves_no_mcp(store):
    proc = _ui(store, "--port", "0", "--json")
    try:
        shown = json.loads(proc.stdout.readline())
        port = int(re.fullmatch(r"http://127\.0\.0\.1:(\d+)/ui/", shown["url"]).group(1))
        assert port != 0
        r = httpx.get(shown["url"], timeout=30)
        assert r.status_code == 200 and "Filler note number 4" in r.text
        before = _count_records(store.path)
        call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
                "params": {"name": "memory_remember",
                           "arguments": {"type": "semantic", "content": "written via ui"}}}
        for path in ("/mcp", "/mcp/"):
            r = httpx.post(f"http://127.0.0.1:{port}{path}", json=call, timeout=30,
                           headers={"Accept": "application/json, text/event-stream",
                                    "MCP-Protocol-Version": "2025-06-18"})
            assert r.status_code == 404, r.text
            assert r.json()["error"] == "not_found"
        assert _count_records(store.path) == before
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


def test_ynm_ui_port_0_address_line(store):
    proc = _ui(store, "--port", "0")
    try:
        line = proc.stdout.readline().strip()
        port = int(re.fullmatch(r"ynm ui: http://127\.0\.0\.1:(\d+)/ui/", line).group(1))
        assert port != 0
        assert httpx.get(f"http://127.0.0.1:{port}/health", timeout=30).status_code == 200
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


def test_serve_http_port_0_logs_the_port_bound(store, tmp_path):
    proc = subprocess.Popen([sys.executable, "-m", "ynm", "serve", "--http", "--host",
                             "127.0.0.1", "--port", "0", "--cwd", str(store.path)],
                            env=dict(os.environ), stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        found = None
        while found is None and time.monotonic() < deadline:
            line = proc.stderr.readline()
            assert line, "server exited"
            found = re.search(r"listening on http://127\.0\.0\.1:(\d+)/mcp ", line)
        assert found is not None and int(found.group(1)) != 0
        port = int(found.group(1))
        r = httpx.post(f"http://127.0.0.1:{port}/mcp", timeout=30,
                       json={"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}},
                       headers={"Accept": "application/json, text/event-stream",
                                "MCP-Protocol-Version": "2025-06-18"})
        assert r.status_code != 404  # serve --http keeps /mcp
    finally:
        proc.terminate()
        proc.communicate(timeout=10)


def test_ynm_ui_with_a_token_still_has_no_mcp(store):
    proc = subprocess.Popen([sys.executable, "-m", "ynm", "ui", "--no-open", "--json", "--port",
                             "0", "--cwd", str(store.path)],
                            env={**os.environ, "YNM_MCP_TOKEN": TOKEN}, stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    try:
        base = json.loads(proc.stdout.readline())["url"].removesuffix("/ui/")
        assert httpx.get(f"{base}/ui/", timeout=30).status_code == 401  # the view asks
        for auth in ({}, {"Authorization": f"Bearer {TOKEN}"}):
            r = httpx.post(f"{base}/mcp", timeout=30, headers=auth,
                           json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
            assert r.status_code == 404 and r.json()["error"] == "not_found"
    finally:
        proc.terminate()
        proc.communicate(timeout=10)
