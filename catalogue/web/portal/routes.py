"""The HTML portal's routes: ``/`` (search with facets), ``/browse?iri=…`` (a dataset or node), ``/static/``.

Each route parses its parameters (:mod:`.params`), asks the library or the
discovery index, and renders a template (:mod:`.render`) from the view models
of :mod:`.node_page` and :mod:`.search_page`. Pages work without JavaScript and
load nothing from elsewhere.

Browsers get HTML for errors too: every failure of these routes (a malformed
IRI, an unknown node, invalid search parameters, an overloaded server) is
answered with an error page carrying the status and one line, never a JSON
body or a stack trace.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.concurrency import run_in_threadpool
from starlette.responses import HTMLResponse, Response

from catalogue.discovery.index import INLINE_LIMIT, QueryError
from catalogue.discovery.refresh import current_index, refresh_interval

from ..http.errors import HTTPError
from ..http.params import parse_query_string
from .node_page import node_page
from .params import iri_param, parse_search
from .render import STATIC, error_page, guard, mount_base, render
from .search_page import search_view

router = APIRouter(include_in_schema=False)


def _params(request: Request) -> dict[str, list[str]]:
    return parse_query_string(request.scope.get("query_string", b""))


# --------------------------------------------------------------------------- routes
@router.api_route("/browse", methods=["GET", "HEAD"], response_class=HTMLResponse)
async def browse(request: Request) -> Response:
    """The dataset/node page: tree, layout, attributes, findings, provenance, snippets."""

    async def build() -> Response:
        params = _params(request)
        iri = iri_param(params.get("iri"))
        base = mount_base(request)
        recheck = refresh_interval(request.app)
        page = await request.app.state.pool.run(lambda cat: node_page(cat, iri, base=base, recheck=recheck))
        return await render(request, "node.html", page=page, page_title=page.title)

    return await guard(request, build)


@router.api_route("/", methods=["GET", "HEAD"], response_class=HTMLResponse)
async def search(request: Request) -> Response:
    """The search page: a search box, facets with counts, results, paging."""

    async def build() -> Response:
        params = _params(request)
        query = parse_search(params)
        index = await current_index(request)
        try:
            if len(index) <= INLINE_LIMIT:  # tens of microseconds: not worth a thread
                result = index.search(query)
            else:
                result = await run_in_threadpool(index.search, query)
        except QueryError as exc:
            raise HTTPError(400, str(exc)) from None
        view = search_view(query, result, base=mount_base(request), catalogue_size=len(index))
        title = f"“{query.q}” · search" if query.q else "Search"
        return await render(request, "search.html", view=view, query=query, page_title=title,
                            active_nav="search")

    return await guard(request, build)


@router.api_route("/static/{name:path}", methods=["GET", "HEAD"])
async def static(request: Request, name: str) -> Response:
    """The portal's CSS, script and icon; long-lived caching when asked by version."""
    found = STATIC.get(name)
    if found is None:
        return await error_page(request, 404, "no such static file")
    etag = f'"{found.etag}"'
    versioned = request.query_params.get("v") == found.etag
    headers = {
        "ETag": etag,
        "Cache-Control": "public, max-age=31536000, immutable" if versioned else "public, max-age=300",
        "X-Content-Type-Options": "nosniff",
    }
    if request.headers.get("if-none-match", "").strip() in (etag, "W/" + etag):
        return Response(status_code=304, headers=headers)
    return Response(found.body, media_type=found.media_type, headers=headers)
