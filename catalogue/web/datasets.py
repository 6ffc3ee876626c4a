"""``GET /datasets``: dataset search for portals (free text, filters, facets, paging, sort).

The work is done by the search index in the catalogue's database
(:mod:`catalogue.discovery.query`; semantics and design there and in
``docs/web.md``), through :meth:`catalogue.api.Catalogue.search` on a pooled
connection. This module validates the parameters and writes the JSON: each
hit's JSON is stored by the index as it is returned, so a response costs little
more than joining strings, and answers are kept per process until the index
changes (:mod:`catalogue.web.search_cache`), gzip-compressed once
(:mod:`catalogue.web.http.encoding`) for the cache and for every client that
accepts gzip.

Every bad parameter is a 400 with one line: unknown sort, limit outside
1..200, offset outside 0..10,000, a value that is too long or repeated too
often, a date that is not ISO 8601, a ``bbox`` or ``datetime`` that is not what the
STAC API accepts (:mod:`catalogue.web.http.where_when`), or a query string that is longer than
16,384 bytes, not valid UTF-8 once percent-decoded or holds control
characters. The portal's search page parses its parameters with the same
functions (:func:`catalogue.web.http.params.check_query_string`,
:func:`catalogue.web.search_params.search_query`), so both accept and refuse
the same searches.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Annotated, Any, Literal

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field
from starlette.responses import Response

from catalogue.api import Catalogue
from catalogue.discovery.normalise import tokenize
from catalogue.discovery.query import FACETS, QueryError, SearchQuery

from .http.encoding import Encoded, encode, encoded_response
from .http.errors import HTTPError
from .http.params import check_query_string
from .search_cache import search_cache, search_recheck
from .search_params import DEFAULT_LIMIT, MAX_LIMIT, MAX_OFFSET, MAX_Q_CHARS, search_query

router = APIRouter()


# ------------------------------------------------------------------ response models (OpenAPI)
class VariableOut(BaseModel):
    """One array of the dataset."""

    iri: str = Field(description="The array's IRI (dereferenceable through /node?iri=).")
    path: str = Field(description="Path of the array in its hierarchy.")
    name: str = Field(description="Last path segment.")
    long_name: str | None = Field(description="CF long_name attribute.")
    standard_name: str | None = Field(description="CF standard_name attribute.")
    units: str | None = Field(description="CF units attribute.")
    dtype: str | None = Field(description="Data type in the Zarr v3 vocabulary (v2 '<f4' is 'float32').")
    native_dtype: str | None = Field(description="Data type as the metadata writes it.")
    shape: list[int] | None
    dimensions: list[str] = Field(description="Dimension names ('' for an unnamed one).")
    chunks: list[int] | None = Field(description="Chunk shape (the shard shape for sharded arrays).")
    codecs: list[str] = Field(description="Codec names in chain order; a sharding codec's inner codecs follow it.")
    valid: bool | None = Field(description="zarr:valid of the array (None: not validated).")


class LinksOut(BaseModel):
    node: str = Field(description="The root node, content-negotiated.")
    portal: str = Field(description="The dataset's portal page.")
    metadata: str = Field(description="The root's rebuilt Zarr metadata (JSON).")
    turtle: str = Field(description="The root node as Turtle.")


class ExtentOut(BaseModel):
    """Where and when the dataset's root covers, as harvested (null fields: not declared)."""

    bbox: list[float] | None = Field(description="[west, south, east, north] in CRS84 degrees; west > east "
                                                 "crosses the antimeridian.")
    start: str | None = Field(description="Start of the time span, ISO 8601 as the store gave it (a date or a "
                                          "date-time).")
    end: str | None = Field(description="End of the time span, ISO 8601.")
    calendar: str | None = Field(description="The CF calendar of start and end when it is not the standard "
                                             "(Gregorian) one, e.g. 360_day; null otherwise.")


class HitOut(BaseModel):
    iri: str = Field(description="The dataset's IRI: its root node, also the name of its graph.")
    title: str
    summary: str | None
    keywords: list[str]
    zarr_format: int | None
    harvested: datetime | None = Field(description="End of the harvest run that generated the current version.")
    valid: bool | None = Field(description="False when any node is invalid; None when nothing was validated.")
    groups: int
    arrays: int
    rules: list[str] = Field(description="Rule ids of the error and warning findings in the hierarchy.")
    extent: ExtentOut | None = Field(description="The root's box and time span; null when the store declares "
                                                 "neither (nothing is invented).")
    variables: list[VariableOut]
    axis_types: list[str] = Field(default=[], description="Axis types of the dataset's multiscale pyramids "
                                                          "(OME-Zarr: space, time, channel, ...).")
    axis_units: list[str] = Field(default=[], description="Axis units of its multiscale pyramids (micrometer, "
                                                          "second, ...).")
    links: LinksOut


class FacetValueOut(BaseModel):
    value: str
    count: int = Field(description="Datasets with this value, under every other filter (disjunctive).")


class DatasetsPage(BaseModel):
    total: int = Field(description="Datasets matching the query and every filter.")
    limit: int
    offset: int
    sort: str = Field(description="The order applied (relevance falls back to title without q).")
    hits: list[HitOut]
    facets: dict[str, list[FacetValueOut]] = Field(
        description="Facet name (dtype, dimension, standard_name, units, zarr_format, codec, valid, axis_type, "
                    "axis_unit) "
                    "-> values by count (descending) then value."
    )


class ErrorOut(BaseModel):
    error: str
    status: int


def _facets_bytes(facets: dict[str, list[tuple[str, int]]]) -> bytes:
    """``{"name": [{"value": ..., "count": n}, ...], ...}``."""
    parts = []
    for name in FACETS:
        items = ",".join(f'{{"value":{json.dumps(value, ensure_ascii=False)},"count":{count}}}'
                         for value, count in facets[name])
        parts.append(f'"{name}":[{items}]')
    return ("{" + ",".join(parts) + "}").encode("utf-8")


def datasets_body(cat: Catalogue, query: SearchQuery) -> bytes:
    """Run the search (:meth:`catalogue.api.Catalogue.search`) and write the response body;
    each hit's JSON is the index's, as stored."""
    try:
        result = cat.search(query)
    except QueryError as exc:
        raise HTTPError(400, str(exc)) from None
    sort = query.sort if query.sort != "relevance" or tokenize(query.q) else "title"
    head = json.dumps({"total": result.total, "limit": query.limit, "offset": query.offset, "sort": sort},
                      separators=(",", ":"))
    return b"".join((head[:-1].encode(), b',"hits":[', b",".join(hit.json for hit in result.hits),
                     b'],"facets":', _facets_bytes(result.facets), b"}"))


def datasets_encoded(cat: Catalogue, query: SearchQuery) -> Encoded:
    """:func:`datasets_body`, compressed once for the cache and every client that accepts gzip."""
    return encode(datasets_body(cat, query))


# ------------------------------------------------------------------ the route
def _multi(description: str) -> Any:
    return Query(description=description + " Repeat for several values (OR).")


@router.get(
    "/datasets",
    tags=["discovery"],
    summary="Search datasets: free text, filters, facet counts, paging, sort",
    response_model=DatasetsPage,
    responses={400: {"model": ErrorOut, "description": "A parameter is invalid (one line says which)."},
               503: {"model": ErrorOut, "description": "The server is busy (no database connection free)."}},
)
async def datasets(
    request: Request,
    q: Annotated[str, Query(description="Free text over titles, keywords, variable names, long names and "
                                        "standard names, and summaries. Case- and accent-insensitive; every "
                                        "term must match; the last one matches as a prefix.",
                            max_length=MAX_Q_CHARS)] = "",
    dtype: Annotated[list[str], _multi("Data type of some array, in the Zarr v3 vocabulary (float32, int16, "
                                       "bool, ...); v2 names are translated ('<f4' is float32).")] = [],  # noqa: B006 - FastAPI copies
    dimension: Annotated[list[str], _multi("Dimension name of some array (time, lat, ...).")] = [],  # noqa: B006
    standard_name: Annotated[list[str], _multi("CF standard_name of some array.")] = [],  # noqa: B006
    units: Annotated[list[str], _multi("units attribute of some array, exactly as written.")] = [],  # noqa: B006
    zarr_format: Annotated[list[int], _multi("Zarr format of the root: 2 or 3.")] = [],  # noqa: B006
    codec: Annotated[list[str], _multi("Codec used by some array (v3 codec names and v2 compressor/filter "
                                       "ids, lower case: blosc, zstd, gzip, zlib, bytes, sharding_indexed, "
                                       "...).")] = [],  # noqa: B006
    valid: Annotated[Literal["true", "false"] | None,
                     Query(description="true: no node of the dataset is invalid; false: some node is.")] = None,
    axis_type: Annotated[list[str], _multi("Axis type of some multiscale pyramid (OME-Zarr: space, time, "
                                           "channel, ...).")] = [],  # noqa: B006
    axis_unit: Annotated[list[str], _multi("Axis unit of some multiscale pyramid (micrometer, second, "
                                           "...).")] = [],  # noqa: B006
    harvested_since: Annotated[str | None, Query(
        description="ISO 8601 date (2024-05-01, midnight UTC) or date-time (2024-05-01T12:00:00Z): "
                    "datasets whose current version was harvested at or after it.", max_length=64)] = None,
    bbox: Annotated[str | None, Query(
        description="west,south,east,north in CRS84 degrees (6 numbers with heights are accepted, the heights "
                    "ignored); west > east crosses the antimeridian. Datasets whose box intersects it.",
        max_length=200, examples=["-10,35,30,70", "170,-20,-170,20"])] = None,
    datetime: Annotated[str | None, Query(
        description="An RFC 3339 instant or interval start/end, '..' or empty for an open end; a date alone is "
                    "its whole day (UTC). Datasets whose time span overlaps it.",
        max_length=200, examples=["2021-07-01/2021-07-31", "2020-01-01T00:00:00Z/..", "../2019-12-31"])] = None,
    limit: Annotated[int, Query(ge=1, le=MAX_LIMIT, description="Page size.")] = DEFAULT_LIMIT,
    offset: Annotated[int, Query(ge=0, le=MAX_OFFSET, description="Hits to skip.")] = 0,
    sort: Annotated[Literal["relevance", "title", "harvested", "-harvested", "start", "-start"], Query(
        description="relevance (title > keywords > variables > summary; title order without q), title, "
                    "harvested (oldest first), -harvested (newest first), start (earliest time span first) "
                    "or -start (latest first); datasets without the date come last.")] = "relevance",
    sortby: Annotated[str | None, Query(
        description="The same orders in the STAC sort extension's syntax: title, datetime (the time span's "
                    "start; start_datetime too), harvested, each with + (or no sign) ascending or - "
                    "descending (not -title). Instead of sort.", max_length=200,
        examples=["-datetime", "+harvested"])] = None,
) -> Response:
    """Datasets (harvested hierarchies) matching a free-text query and filters, with facet counts.

    Several values of one filter are OR'd, different filters AND'd. Facet counts
    are disjunctive: each facet is counted under every filter except its own.
    """
    check_query_string(request.scope.get("query_string", b""))
    query = search_query(
        q=q, dtype=dtype, dimension=dimension, standard_name=standard_name, units=units, zarr_format=zarr_format,
        codec=codec, valid=valid, axis_type=axis_type, axis_unit=axis_unit, harvested_since=harvested_since, bbox=bbox, datetime=datetime, limit=limit,
        offset=offset, sort=sort if "sort" in request.query_params else None, sortby=sortby,
    )
    body = await search_cache(request.app).answer(request.app.state.pool, "datasets", query, datasets_encoded,
                                                  recheck=search_recheck(request.app))
    return await encoded_response(request, body, "application/json")
