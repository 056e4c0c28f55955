"""Markdown of memory content in the web view: raw HTML shown as text, links kept only for
http, https, mailto and relative URLs (ynm.web.render)."""

from __future__ import annotations

import pytest

pytest.importorskip("markdown_it")

from ynm.web.render import environment, markdown, safe_url


@pytest.mark.parametrize(("url", "ok"), [
    ("https://example.com/a?b=c", True), ("http://x", True), ("mailto:a@example.com", True),
    ("/ui/m/01K", True), ("#part", True), ("notes/next.md", True), ("//cdn.example/x", True),
    ("javascript:alert(1)", False), ("JavaScript:alert(1)", False),
    (" javascript:alert(1)", False), ("java\tscript:alert(1)", False),
    ("java\nscript:alert(1)", False), ("data:text/html,<b>x</b>", False),
    ("data:image/png;base64,AAAA", False), ("vbscript:msgbox", False), ("file:///etc/passwd", False),
])
def test_safe_url(url, ok):
    assert safe_url(url) is ok


def test_markdown_keeps_safe_links_and_drops_the_rest():
    html = str(markdown("[a](https://example.com) [b](javascript:alert(1)) "
                        "![c](data:image/png;base64,AAAA) [d](JAVASCRIPT:x) <b>bold</b>"))
    assert '<a href="https://example.com">a</a>' in html
    assert "href=\"javascript" not in html.lower() and "src=\"data:" not in html
    assert "[b](javascript:alert(1))" in html  # left as text
    assert "&lt;b&gt;bold&lt;/b&gt;" in html and "<b>" not in html


def test_markdown_renders_markdown():
    html = str(markdown("# Title\n\n- one\n- `two`\n\n```\n<x>\n```"))
    assert "<h1>Title</h1>" in html and "<li><code>two</code></li>" in html
    assert "<pre><code>&lt;x&gt;\n</code></pre>" in html


def test_templates_escape_everything_that_is_not_markdown():
    page = environment().from_string("{{ s }}|{{ s | segment }}").render(s="<a b='c'>/d e")
    assert page == "&lt;a b=&#39;c&#39;&gt;/d e|%3Ca%20b%3D%27c%27%3E%2Fd%20e"
