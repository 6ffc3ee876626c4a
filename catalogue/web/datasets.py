"""``GET /datasets``: dataset search for portals (free text, filters, facets, paging, sort).

The work is done by the in-memory index of :mod:`catalogue.discovery`
(semantics, index design and refresh are documented there and in
``docs/web.md``). This module validates the parameters, runs the search on
the event loop (it takes tens of microseconds; in a worker thread for very
large catalogues) and writes the JSON. Each hit's JSON is serialised once per
index and reused, so a response costs little more than joining strings.

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
from datetime import UTC, datetime
from typing import Annotated, Any, Literal
from urllib.parse import quote

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field
from starlette.concurrency import run_in_threadpool
from starlette.responses import Response

from catalogue.discovery.index import (
    FACETS,
    INLINE_LIMIT,
    DatasetIndex,
    DatasetSummary,
    QueryError,
    SearchQuery,
)
from catalogue.discovery.normalise import tokenize
from catalogue.discovery.refresh import current_index
from catalogue.model.extents import Extent

from .http.errors import HTTPError
from .http.params import check_query_string
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
        description="Facet name (dtype, dimension, standard_name, units, zarr_format, codec, valid) "
                    "-> values by count (descending) then value."
    )


class ErrorOut(BaseModel):
    error: str
    status: int


def _iso(moment: datetime | None) -> str | None:
    """ISO 8601 in UTC with a Z; milliseconds when that is all there is (harvest times)."""
    if moment is None:
        return None
    moment = moment.astimezone(UTC)
    spec = "milliseconds" if moment.microsecond % 1000 == 0 else "auto"
    return moment.isoformat(timespec=spec).replace("+00:00", "Z")


def extent_json(extent: Extent | None) -> dict[str, Any] | None:
    """The hit's ``extent`` (see :class:`ExtentOut`): what search filters on, as stored."""
    if extent is None or (extent.bbox is None and extent.period is None):
        return None
    period = extent.period
    return {
        "bbox": extent.bbox.as_list() if extent.bbox is not None else None,
        "start": period.start if period is not None else None,
        "end": period.end if period is not None else None,
        "calendar": period.calendar if period is not None and not period.standard_calendar else None,
    }


def hit_json(d: DatasetSummary) -> dict[str, Any]:
    """The JSON object of one hit (see :class:`HitOut`)."""
    iri = quote(d.iri, safe="")
    return {
        "iri": d.iri, "title": d.title, "summary": d.summary, "keywords": d.keywords,
        "zarr_format": d.zarr_format, "harvested": _iso(d.harvested), "valid": d.valid,
        "groups": d.groups, "arrays": d.arrays, "rules": d.rules, "extent": extent_json(d.extent),
        "variables": [
            {"iri": v.iri, "path": v.path, "name": v.name, "long_name": v.long_name,
             "standard_name": v.standard_name, "units": v.units, "dtype": v.dtype, "native_dtype": v.native_dtype,
             "shape": v.shape, "dimensions": v.dimensions, "chunks": v.chunks, "codecs": v.codecs, "valid": v.valid}
            for v in d.variables
        ],
        "links": {
            "node": f"/node?iri={iri}", "portal": f"/browse?iri={iri}",
            "metadata": f"/node?iri={iri}&format=json", "turtle": f"/node?iri={iri}&format=turtle",
        },
    }


def _hit_bytes(index: DatasetIndex, d: DatasetSummary) -> bytes:
    """The serialised hit, UTF-8, cached on the index (a rebuilt index starts afresh).

    Bytes, not text: re-encoding 60 KB of non-ASCII JSON per response cost as much as
    the search itself.
    """
    cache: dict[str, bytes] = index.cache.setdefault("hit_json", {})
    data = cache.get(d.iri)
    if data is None:
        data = cache[d.iri] = json.dumps(hit_json(d), ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    return data


def _facets_bytes(index: DatasetIndex, facets: dict[str, list[tuple[str, int]]]) -> bytes:
    """``{"name": [{"value": ..., "count": n}, ...], ...}`` from cached value fragments."""
    quoted: dict[str, str] = index.cache.setdefault("facet_value_json", {})
    parts = []
    for name in FACETS:
        items = []
        for value, count in facets[name]:
            text = quoted.get(value)
            if text is None:
                text = json.dumps(value, ensure_ascii=False)
                if len(quoted) < 100_000:  # selected values come from clients: keep the cache bounded
                    quoted[value] = text
            items.append(f'{{"value":{text},"count":{count}}}')
        parts.append(f'"{name}":[{",".join(items)}]')
    return ("{" + ",".join(parts) + "}").encode("utf-8")


def _search(index: DatasetIndex, query: SearchQuery) -> bytes:
    """Run the search and write the response body."""
    try:
        result = index.search(query)
    except QueryError as exc:
        raise HTTPError(400, str(exc)) from None
    sort = query.sort if query.sort != "relevance" or tokenize(query.q) else "title"
    head = json.dumps({"total": result.total, "limit": query.limit, "offset": query.offset, "sort": sort},
                      separators=(",", ":"))
    return b"".join((head[:-1].encode(), b',"hits":[', b",".join(_hit_bytes(index, d) for d in result.hits),
                     b'],"facets":', _facets_bytes(index, result.facets), b"}"))


# ------------------------------------------------------------------ the route
def _multi(description: str) -> Any:
    return Query(description=description + " Repeat for several values (OR).")


@router.get(
    "/datasets",
    tags=["discovery"],
    summary="Search datasets: free text, filters, facet counts, paging, sort",
    response_model=DatasetsPage,
    responses={400: {"model": ErrorOut, "description": "A parameter is invalid (one line says which)."},
               503: {"model": ErrorOut, "description": "The server is busy (first index build queued)."}},
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
) -> Response:
    """Datasets (harvested hierarchies) matching a free-text query and filters, with facet counts.

    Several values of one filter are OR'd, different filters AND'd. Facet counts
    are disjunctive: each facet is counted under every filter except its own.
    """
    check_query_string(request.scope.get("query_string", b""))
    query = search_query(
        q=q, dtype=dtype, dimension=dimension, standard_name=standard_name, units=units, zarr_format=zarr_format,
        codec=codec, valid=valid, harvested_since=harvested_since, bbox=bbox, datetime=datetime, limit=limit,
        offset=offset, sort=sort,
    )
    index = await current_index(request)
    if index.size <= INLINE_LIMIT:
        body = _search(index, query)
    else:
        body = await run_in_threadpool(_search, index, query)
    return Response(content=body, media_type="application/json")
