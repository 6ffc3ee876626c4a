"""The HTML portal's routes: ``/`` (search with facets), ``/browse?iri=…`` (a dataset or node), ``/static/``.

Each route parses its parameters (:mod:`.params`), asks the library or the
search index, and renders a template (:mod:`.render`) from the view models
of :mod:`.node_page` and :mod:`.search_page`. Pages work without JavaScript and
load nothing from elsewhere.

Browsers get HTML for errors too: every failure of these routes (a malformed
IRI, an unknown node, invalid search parameters, an overloaded server) is
answered with an error page carrying the status and one line, never a JSON
body or a stack trace.
"""

from __future__ import annotations

from fastapi import APIRouter, Request
from starlette.responses import HTMLResponse, Response

from catalogue.api import Catalogue
from catalogue.discovery.query import QueryError, SearchQuery, SearchResult
from catalogue.discovery.stats import Totals

from ..http.errors import HTTPError
from ..http.params import parse_query_string
from ..search_cache import search_cache, search_recheck
from .node_page import node_page
from .params import iri_param, parse_search
from .render import STATIC, error_page, guard, mount_base, render
from .search_page import search_view

router = APIRouter(include_in_schema=False)

#: Seconds a digested graph is trusted before its triple count is checked again.
GRAPH_RECHECK = 2.0


def _search(cat: Catalogue, query: SearchQuery) -> tuple[SearchResult, Totals]:
    """The search's result and the catalogue's counts (from the index: no scan)."""
    try:
        return cat.search(query), cat.totals()
    except QueryError as exc:
        raise HTTPError(400, str(exc)) from None


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
        recheck = GRAPH_RECHECK
        page = await request.app.state.pool.run(lambda cat: node_page(cat, iri, base=base, recheck=recheck))
        return await render(request, "node.html", page=page, page_title=page.title)

    return await guard(request, build)


@router.api_route("/", methods=["GET", "HEAD"], response_class=HTMLResponse)
async def search(request: Request) -> Response:
    """The search page: a search box, facets with counts, results, paging."""

    async def build() -> Response:
        params = _params(request)
        query = parse_search(params)
        result, totals = await search_cache(request.app).answer(
            request.app.state.pool, "portal", query, _search, recheck=search_recheck(request.app),
            size=lambda answer: 2_000 * (1 + len(answer[0].hits)))
        view = search_view(query, result, base=mount_base(request), totals=totals)
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
