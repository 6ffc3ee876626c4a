"""The STAC API's routes: shells over the library and its search index.

``/stac`` (landing page), ``/stac/conformance``, ``/stac/collections`` (every dataset,
or a collection search: ``q``, ``bbox``, ``datetime``, ``sortby``, ``limit``, ``offset``)
and ``/stac/collections/{collection_id}``. The search runs on the search index that
``/datasets`` uses, and the page's collections are built from their graphs, in one
library call each on a pooled connection. Written by hand rather than with stac-fastapi:
that builds an application of its own around item search (``/search``, items routes),
which the catalogue has no items for, with its own parameter parsing and error bodies,
while these four routes share the catalogue's (``where_when``, one-line JSON errors,
the hostile-parameter tests that read the OpenAPI document).
"""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import urlencode

from fastapi import APIRouter, Path, Query, Request
from starlette.responses import JSONResponse

from catalogue.api import Catalogue
from catalogue.rdf.stac import StacLinks

from ..http.links import public_base
from ..http.params import check_query_string
from .landing import CONFORMS_TO, landing_page
from .search import DEFAULT_LIMIT, MAX_LIMIT, collection_query, page_links

router = APIRouter(prefix="/stac", tags=["stac"])


def _links(request: Request) -> StacLinks:
    return StacLinks(public_base(request))


@router.get("", summary="STAC API landing page (a STAC Catalog with conformsTo)")
async def landing(request: Request) -> JSONResponse:
    return JSONResponse(landing_page(_links(request)))


@router.get("/conformance", summary="The STAC API and OGC API conformance classes implemented")
async def conformance() -> JSONResponse:
    return JSONResponse({"conformsTo": CONFORMS_TO})


@router.get("/collections", summary="The catalogued datasets as STAC Collections, with collection search")
async def collections(
    request: Request,
    q: Annotated[str | None, Query(description="Free text, as /datasets' q: every term must match.")] = None,
    bbox: Annotated[str | None, Query(description="west,south,east,north in CRS84 degrees (west > east "
                                                  "crosses the antimeridian).", max_length=200)] = None,
    datetime: Annotated[str | None, Query(description="RFC 3339 instant or interval start/end, '..' for an "
                                                      "open end.", max_length=200)] = None,
    sortby: Annotated[str | None, Query(description="title, datetime or -datetime (start_datetime too).",
                                        max_length=200)] = None,
    limit: Annotated[int, Query(description=f"Collections per page, 1..{MAX_LIMIT}.")] = DEFAULT_LIMIT,
    offset: Annotated[int, Query(description="Collections to skip (the next link carries it).")] = 0,
) -> JSONResponse:
    """Every dataset as a STAC Collection; filtered, sorted and paged when asked."""
    check_query_string(request.scope.get("query_string", b""))
    query = collection_query(q=q, bbox=bbox, datetime=datetime, limit=limit, offset=offset, sortby=sortby)
    links = _links(request)

    def work(cat: Catalogue) -> tuple[int, list[dict[str, Any]]]:
        result = cat.search(query)
        return result.total, cat.stac_collections([hit.iri for hit in result.hits], links)

    total, found = await request.app.state.pool.run(work)
    params = {name: value for name, value in (("q", q), ("bbox", bbox), ("datetime", datetime),
                                               ("sortby", sortby)) if value is not None}
    params["limit"] = str(limit)
    page = {**params, "offset": str(offset)} if offset else params
    return JSONResponse({
        "collections": found,
        "links": [
            {"rel": "self", "href": _url(links.collections, page), "type": "application/json"},
            {"rel": "root", "href": links.root, "type": "application/json"},
            *page_links(links.collections, params, offset=offset, limit=limit, total=total),
        ],
        "numberMatched": total,
        "numberReturned": len(found),
    })


def _url(base: str, params: dict[str, str]) -> str:
    return f"{base}?{urlencode(params)}" if params else base


@router.get("/collections/{collection_id}", summary="One dataset as a STAC Collection")
async def collection(
    request: Request,
    collection_id: Annotated[str, Path(description="The collection id (see /stac/collections).", max_length=200)],
) -> JSONResponse:
    links = _links(request)

    def work(cat: Catalogue) -> dict[str, Any]:
        return cat.stac_collection(collection_id, links)  # NotFound: a 404

    return JSONResponse(await request.app.state.pool.run(work))
