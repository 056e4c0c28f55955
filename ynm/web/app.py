"""The routes of the read-only web view, a Starlette app mounted at ``/ui`` by
``ynm serve --http`` (and ``ynm ui``), behind the same Host and Origin checks as ``/mcp``.

Routes (all ``GET`` unless said; every page is HTML):

- ``/ui/``: live memories counted by level, namespace and type, and one page of memories,
  newest first (``?level=&namespace=&type=`` filter, ``?n=`` page size 1..200, default 50,
  ``?after=`` the cursor of the page before; :mod:`ynm.service.browse`);
- ``/ui/search?q=``: recall (``ynm recall --explain``'s ranking, limit 20) with each hit's
  score parts;
- ``/ui/m/<memoryId>``: one memory (``ynm show``) and every record of it (``ynm history``):
  op, time, actor, what changed; its links and the memories linking to it;
- ``/ui/review``: the review queue (``ynm review --list``) with each flag's reason and
  judgment;
- ``/ui/status``: ``ynm status``: mounts, shards, cache freshness, bad lines;
- ``/ui/entities/<subject>``, ``/ui/topics/<tag>``: memories of one subject, of one tag
  (the name URL-encoded as one path segment), paged like the index;
- ``/ui/login`` (``GET`` form, ``POST token=``), ``POST /ui/logout``;
- ``/ui/static/ui.css``: the one stylesheet (no script is served or fetched).

Auth: :mod:`ynm.web.session`. A request without credentials gets 401 and the sign-in form,
never memory text; a token refused for a missing scope gets 403. Every page is sent with a
``Content-Security-Policy`` that allows no script at all, ``X-Content-Type-Options: nosniff``,
``Referrer-Policy: same-origin``, ``Cache-Control: no-store`` and no framing.

Expected failures are pages, not tracebacks: an unknown memory is 404, a bad filter or cursor
400, any other store error 500 with its message.
"""

from __future__ import annotations

from importlib.resources import files
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from ynm.errors import InvalidInput, UnknownMemory, YnmError

if TYPE_CHECKING:
    from starlette.requests import Request
    from starlette.responses import Response

    from ynm.server.app import MemoryService
    from ynm.server.http import FrontDoor

__all__ = ["build_ui_app"]

SECURITY_HEADERS = {
    "content-security-policy": ("default-src 'none'; style-src 'self'; img-src 'self'; "
                                "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"),
    "x-content-type-options": "nosniff",
    # same-origin, not no-referrer: under no-referrer a browser posts a form with "Origin: null",
    # which the Origin check refuses; no address of the view leaves for another site either way
    "referrer-policy": "same-origin",
    "cache-control": "no-store",
    "x-frame-options": "DENY",
}
SEARCH_LIMIT = 20
OPEN_PATHS = ("/ui/login", "/ui/logout", "/ui/static/ui.css")


def build_ui_app(service: MemoryService, door: FrontDoor) -> Any:
    """The ASGI app of ``/ui`` (full request paths, ``/ui/...``), reading through
    ``service`` and letting in who ``door``'s auth lets in (:mod:`ynm.web.session`)."""
    from starlette.applications import Starlette
    from starlette.routing import Route

    from ynm.web.session import Sessions

    sessions = Sessions(door)
    pages = _Pages(service, sessions)
    routes = [
        Route("/ui", pages.to_index),
        Route("/ui/", pages.index),
        Route("/ui/search", pages.search),
        Route("/ui/m/{memory_id}", pages.memory),
        Route("/ui/review", pages.review),
        Route("/ui/status", pages.status),
        Route("/ui/entities/{name:path}", pages.entity),
        Route("/ui/topics/{name:path}", pages.topic),
        Route("/ui/login", pages.login_form, methods=["GET"]),
        Route("/ui/login", pages.login, methods=["POST"]),
        Route("/ui/logout", pages.logout, methods=["POST"]),
        Route("/ui/static/ui.css", pages.css),
    ]
    return Starlette(routes=routes)


def _page(name: str, status: int = 200, headers: dict[str, str] | None = None,
          **context: Any) -> Response:
    from starlette.responses import HTMLResponse

    from ynm.web.render import environment

    html = environment().get_template(name).render(**context)
    return HTMLResponse(html, status_code=status, headers={**SECURITY_HEADERS, **(headers or {})})


def _error(err: YnmError, signed_in: bool) -> Response:
    status = 404 if isinstance(err, UnknownMemory) else 400 if isinstance(err, InvalidInput) \
        else 500
    return _page("error.html", status, message=str(err), code=status, signed_in=signed_in)


def _next_path(value: str | None) -> str:
    """Where to go after signing in: a path of the view only (never another site)."""
    if value and value.startswith("/ui/") and not value.startswith("//") and "\\" not in value:
        return value
    return "/ui/"


class _Pages:
    """The route handlers; each checks who is calling first (:meth:`_gate`)."""

    def __init__(self, service: MemoryService, sessions: Any) -> None:
        self.service = service
        self.sessions = sessions

    # -- auth ----------------------------------------------------------------------------

    async def _gate(self, request: Request) -> Response | None:
        """None when the request may read; else the 401/403 page to send."""
        from ynm.server.auth import AuthError
        from ynm.web.session import COOKIE

        if self.sessions.open:
            return None
        authorization = request.headers.get("authorization")
        # the caller goes where the request log and audit read it (ynm.server.audit)
        if authorization is None:
            signed_in, info = self.sessions.caller(request.cookies.get(COOKIE))
            if signed_in:
                request.scope["ynm.auth"] = info
                return None
            err = AuthError("invalid_token", "sign in to read this store")
        else:
            try:
                request.scope["ynm.auth"] = await self.sessions.verify(authorization)
                return None
            except AuthError as refused:
                if refused.info is not None:
                    request.scope["ynm.auth"] = refused.info
                err = refused
        request.scope["ynm.refusal"] = err.error
        raw = request.scope.get("raw_path")  # as sent: a name in it stays percent-encoded
        path = raw.decode("latin-1").split("?")[0] if raw else request.url.path
        target = path + (f"?{request.url.query}" if request.url.query else "")
        return _page("login.html", err.status,
                     {"www-authenticate": f'Bearer error="{err.error}"'},
                     next=_next_path(target), message=err.description, signed_in=False)

    @property
    def _signed_in(self) -> bool:
        return not self.sessions.open

    async def _call(self, fn: Any) -> Any:
        return await self.service.call(fn)

    # -- pages ---------------------------------------------------------------------------

    async def to_index(self, request: Request) -> Response:
        from starlette.responses import RedirectResponse

        return RedirectResponse("/ui/", status_code=308)

    async def index(self, request: Request) -> Response:
        return await self._listing(request, "index.html", facets=True)

    async def entity(self, request: Request) -> Response:
        return await self._listing(request, "listing.html", subject=request.path_params["name"])

    async def topic(self, request: Request) -> Response:
        return await self._listing(request, "listing.html", tag=request.path_params["name"])

    async def _listing(self, request: Request, template: str, *, facets: bool = False,
                       subject: str | None = None, tag: str | None = None) -> Response:
        if (refusal := await self._gate(request)) is not None:
            return refusal
        from ynm.service import browse

        q = request.query_params
        try:
            flt = _filter(q.get("level"), q.get("namespace"), q.get("type"), subject, tag)
            size = _page_size(q.get("n"))
            after = q.get("after") or None
            browse.parse_cursor(after)

            def read(y: Any) -> tuple[Any, Any]:
                return (browse.facets(y) if facets else None,
                        browse.page(y, flt, after=after, limit=size))

            counts, page = await self._call(read)
        except YnmError as err:
            return _error(err, self._signed_in)
        keep = {k: v for k, v in (("level", flt.level), ("namespace", flt.namespace),
                                  ("type", flt.type)) if v}
        if q.get("n"):
            keep["n"] = str(size)
        next_url = (request.url.path + "?" + urlencode({**keep, "after": page.next})
                    if page.next else None)
        return _page(template, facets=_facet_tree(counts) if counts is not None else None,
                     page=page, filter=flt, next_url=next_url, first=after is None,
                     first_url=request.url.path + ("?" + urlencode(keep) if keep else ""),
                     subject=subject, tag=tag, signed_in=self._signed_in)

    async def search(self, request: Request) -> Response:
        if (refusal := await self._gate(request)) is not None:
            return refusal
        from ynm.model.inputs import RecallQuery, parse_input

        text = (request.query_params.get("q") or "").strip()
        hits: list[dict[str, Any]] = []
        if text:
            try:
                query = parse_input(RecallQuery, {"text": text, "limit": SEARCH_LIMIT,
                                                  "explain": True})
                hits = await self._call(lambda y: y.recall(query))
            except YnmError as err:
                return _error(err, self._signed_in)
        return _page("search.html", q=text, hits=hits, signed_in=self._signed_in)

    async def memory(self, request: Request) -> Response:
        if (refusal := await self._gate(request)) is not None:
            return refusal
        memory_id = request.path_params["memory_id"]
        try:
            memory, versions = await self._call(
                lambda y: (y.show(memory_id), y.history(memory_id)))
        except YnmError as err:
            return _error(err, self._signed_in)
        return _page("memory.html", m=memory, versions=versions, signed_in=self._signed_in)

    async def review(self, request: Request) -> Response:
        if (refusal := await self._gate(request)) is not None:
            return refusal
        from ynm.service.review import why_line

        try:
            queue = await self._call(lambda y: y.review_list())
        except YnmError as err:
            return _error(err, self._signed_in)
        for item in queue:
            item["why"] = why_line(item)
        return _page("review.html", queue=queue, signed_in=self._signed_in)

    async def status(self, request: Request) -> Response:
        if (refusal := await self._gate(request)) is not None:
            return refusal
        try:
            status = await self._call(lambda y: y.status())
        except YnmError as err:
            return _error(err, self._signed_in)
        return _page("status.html", s=status, signed_in=self._signed_in)

    # -- sign-in -------------------------------------------------------------------------

    async def login_form(self, request: Request) -> Response:
        from starlette.responses import RedirectResponse

        if self.sessions.open:
            return RedirectResponse("/ui/", status_code=303)
        return _page("login.html", next=_next_path(request.query_params.get("next")),
                     message=None, signed_in=False)

    async def login(self, request: Request) -> Response:
        from starlette.responses import RedirectResponse

        from ynm.server.auth import AuthError
        from ynm.web.session import cookie_header

        form = await request.form()
        target = _next_path(str(form.get("next") or ""))
        if self.sessions.open:
            return RedirectResponse(target, status_code=303)
        token = str(form.get("token") or "")
        try:
            sid, lifetime_s = await self.sessions.sign_in(token)
        except AuthError as err:
            request.scope["ynm.refusal"] = err.error
            return _page("login.html", err.status, next=target,
                         message="that token is not accepted", signed_in=False)
        response = RedirectResponse(target, status_code=303, headers=SECURITY_HEADERS)
        response.headers["set-cookie"] = cookie_header(
            sid, secure=request.url.scheme == "https", max_age=lifetime_s)
        return response

    async def logout(self, request: Request) -> Response:
        from starlette.responses import RedirectResponse

        from ynm.web.session import COOKIE, cookie_header

        self.sessions.sign_out(request.cookies.get(COOKIE))
        response = RedirectResponse("/ui/login", status_code=303, headers=SECURITY_HEADERS)
        response.headers["set-cookie"] = cookie_header(
            "", secure=request.url.scheme == "https", max_age=0)
        return response

    async def css(self, request: Request) -> Response:
        from starlette.responses import Response

        return Response(_stylesheet(), media_type="text/css",
                        headers={"cache-control": "max-age=3600",
                                 "x-content-type-options": "nosniff"})


def _stylesheet() -> bytes:
    return files("ynm.web").joinpath("static", "ui.css").read_bytes()


def _filter(level: str | None, namespace: str | None, mtype: str | None,
            subject: str | None, tag: str | None) -> Any:
    """The :class:`~ynm.service.browse.Filter` of a page's query, validated as ``ynm list``'s
    filters are (:class:`~ynm.model.inputs.ListQuery`).

    Raises:
        InvalidInput: an unknown level or type, a bad namespace."""
    from ynm.model.inputs import ListQuery, parse_input
    from ynm.service.browse import Filter

    q = parse_input(ListQuery, {"level": level or None, "namespace": namespace or None,
                                "type": mtype or None})
    if subject is not None and not subject.strip():
        raise InvalidInput("empty subject")
    if tag is not None and not tag.strip():
        raise InvalidInput("empty tag")
    return Filter(level=q.level, namespace=q.namespace, type=q.type, subject=subject, tag=tag)


def _page_size(text: str | None) -> int:
    from ynm.service.browse import PAGE_MAX

    if not text:
        return 50
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= PAGE_MAX:
        raise InvalidInput(f"n: {text!r} is not a page size (1..{PAGE_MAX})")
    return int(text)


def _facet_tree(counts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The counts as ``[{level, count, namespaces: [{namespace, count, types: [{type,
    count}]}]}]``."""
    levels: dict[str, dict[str, Any]] = {}
    for row in counts:
        lv = levels.setdefault(row["level"], {"level": row["level"], "count": 0,
                                              "namespaces": {}})
        ns = lv["namespaces"].setdefault(row["namespace"], {"namespace": row["namespace"],
                                                            "count": 0, "types": []})
        ns["types"].append({"type": row["type"], "count": row["count"]})
        ns["count"] += row["count"]
        lv["count"] += row["count"]
    return [{**lv, "namespaces": list(lv["namespaces"].values())} for lv in levels.values()]

