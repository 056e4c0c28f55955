"""A read-only web view of a store, at ``/ui/`` of ``ynm serve --http`` and ``ynm ui``: Starlette
routes (:mod:`ynm.web.app`), Jinja2 templates and one stylesheet shipped in this package, memory
content rendered as markdown with raw HTML off and unsafe links dropped (:mod:`ynm.web.render`),
and the same auth as ``/mcp`` plus a sign-in cookie for browsers (:mod:`ynm.web.session`).

Pages carry no JavaScript and fetch nothing from elsewhere. Everything they show is read
through the service (:class:`ynm.server.app.MemoryService`): ``recall``, ``show``,
``history``, ``review_list``, ``status`` and :mod:`ynm.service.browse` for the paged index.
"""

from __future__ import annotations

__all__ = ["build_ui_app"]


def build_ui_app(service, door):  # type: ignore[no-untyped-def]
    """The ASGI app of ``/ui`` (see :func:`ynm.web.app.build_ui_app`)."""
    from ynm.web.app import build_ui_app as build

    return build(service, door)
