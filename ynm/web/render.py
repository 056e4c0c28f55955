"""HTML for the web view: the Jinja2 environment (templates shipped in ``ynm/web/templates``,
autoescape on for every template) and memory content rendered as markdown.

Markdown is rendered by markdown-it-py in CommonMark mode with raw HTML off (a ``<script>`` in
content comes out as text) and with a link check that keeps only ``http:``, ``https:`` and
``mailto:`` URLs and relative ones: a ``javascript:``, ``data:``, ``vbscript:`` or ``file:``
link or image is left as its source text, never as an ``href`` or ``src``. Everything that is
not markdown output is escaped by Jinja2's autoescape.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from typing import Any
from urllib.parse import quote

__all__ = ["environment", "markdown", "safe_url"]

_SCHEME = re.compile(r"^\s*([a-zA-Z][a-zA-Z0-9+.\-]*):")
SAFE_SCHEMES = ("http", "https", "mailto")


def safe_url(url: str) -> bool:
    """True for a URL a page may link to: one with scheme ``http``, ``https`` or ``mailto``,
    or one without a scheme (relative, ``#anchor``). Control characters and whitespace inside
    the scheme (``java\\tscript:``) are removed before the check, as browsers do (WHATWG URL
    standard, "remove all ASCII tab or newline")."""
    cleaned = re.sub(r"[\x00-\x20\x7f]", "", url)
    match = _SCHEME.match(cleaned)
    if match is None:
        return True  # relative, or scheme-relative (the page's own scheme)
    return match.group(1).lower() in SAFE_SCHEMES


@lru_cache(maxsize=1)
def _md() -> Any:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False})
    md.validateLink = safe_url  # type: ignore[method-assign]
    return md


def markdown(text: str | None) -> Any:
    """``text`` as HTML (a ``markupsafe.Markup``, so Jinja2 does not escape it twice); raw
    HTML in it is shown as text and unsafe links are dropped (see the module docstring)."""
    from markupsafe import Markup

    return Markup(_md().render(text or ""))  # markdown-it escapes text; raw HTML is off


def _pretty(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return ", ".join(value)
    return json.dumps(value, ensure_ascii=False, indent=2, sort_keys=True)


def _segment(value: str) -> str:
    """One URL path segment: every reserved character percent-encoded (``/`` too)."""
    return quote(value, safe="")


@lru_cache(maxsize=1)
def environment() -> Any:
    """The Jinja2 environment of the templates in ``ynm/web/templates`` (autoescape on for
    every file; filters ``markdown``, ``pretty`` (JSON for non-strings) and ``segment`` (a
    URL path segment))."""
    from jinja2 import Environment, PackageLoader

    env = Environment(loader=PackageLoader("ynm.web", "templates"), autoescape=True,
                      trim_blocks=True, lstrip_blocks=True)
    env.filters["markdown"] = markdown
    env.filters["pretty"] = _pretty
    env.filters["segment"] = _segment
    return env
