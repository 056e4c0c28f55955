"""Markdown projection of a mount (reference algorithms.md §5).

``generate`` is pure: folded memories and raw records in, ``{path: bytes}`` out.

Deviation from the reference: no two different subjects or tags ever write the same page. A
name whose slug is empty or already taken by a different name gets a suffix of the first 8 hex
digits of the sha256 of the name (see :func:`page_slugs`), stable on every rebuild and
independent of build order.
"""

from ynm.wiki.generate import generate, page_slugs, slug

__all__ = ["generate", "page_slugs", "slug"]
