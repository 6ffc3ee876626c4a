"""The portal's query parameters, read strictly with ``/datasets``'s rules.

Parameters are decoded by :func:`catalogue.web.http.params.parse_query_string`
(invalid UTF-8, control characters, over-long query strings are 400s); the
search is checked by ``/datasets``'s own parser
(:func:`catalogue.web.search_params.search_query`), so both accept and refuse
the same searches; a bad value is an :class:`~catalogue.web.http.errors.HTTPError`
400, which the portal answers with an HTML error page.
"""

from __future__ import annotations

from catalogue.discovery.query import SearchQuery

from ..http.errors import HTTPError
from ..http.params import checked_iri
from ..http.where_when import parse_datetime
from ..search_params import search_query

#: Query parameters of the search page, in the order links write them.
SEARCH_LISTS = ("dtype", "dimension", "standard_name", "units", "zarr_format", "codec", "axis_type", "axis_unit")
#: Results per page of the HTML search (``limit`` may ask for up to the API's maximum).
PAGE_SIZE = 20


def iri_param(values: list[str] | None) -> str:
    """The single ``iri`` parameter, if it is an absolute IRI (else :class:`HTTPError` 400).

    The rules are the node endpoint's (:func:`catalogue.web.http.params.checked_iri`).
    The IRI is only compared with catalogued IRIs (nothing is fetched or
    opened), so a ``file:`` IRI or ``..`` segments cannot reach the file
    system; relative references (``../../etc/passwd``) are refused outright.
    """
    if not values or not values[0]:
        raise HTTPError(400, "missing parameter: iri (the IRI of a catalogued node)")
    if len(values) > 1:
        raise HTTPError(400, "give the parameter iri once")
    try:
        return checked_iri(values[0])
    except HTTPError as exc:
        raise HTTPError(exc.status, "malformed IRI: " + exc.message) from None


def _one(params: dict[str, list[str]], name: str) -> str | None:
    values = [v for v in params.get(name, []) if v != ""]
    if len(values) > 1:
        raise HTTPError(400, f"give the parameter {name} once")
    return values[0] if values else None


def parse_search(params: dict[str, list[str]]) -> SearchQuery:
    """The :class:`~catalogue.discovery.query.SearchQuery` of the page's parameters (same as ``/datasets``).

    The values are checked by ``/datasets``'s own parser
    (:func:`catalogue.web.search_params.search_query`); a bad value is a
    :class:`HTTPError` 400 saying which parameter and why. Empty values (an
    empty search box, "any" choices) mean "not given", a single-valued
    parameter given twice is refused; unknown parameters are ignored.
    """
    def many(name: str) -> list[str]:
        return [v for v in params.get(name, []) if v != ""]

    limit = _one(params, "limit")
    return search_query(
        q=_one(params, "q") or "", dtype=many("dtype"), dimension=many("dimension"),
        standard_name=many("standard_name"), units=many("units"), zarr_format=many("zarr_format"),
        codec=many("codec"), axis_type=many("axis_type"), axis_unit=many("axis_unit"), valid=_one(params, "valid"), harvested_since=_one(params, "harvested_since"),
        bbox=_one(params, "bbox"), datetime=_interval(params),
        limit=PAGE_SIZE if limit is None else limit, offset=_one(params, "offset"), sort=_one(params, "sort"),
    )


def _interval(params: dict[str, list[str]]) -> str | None:
    """``datetime``, or the interval the search form's two date fields make.

    The form has a start and an end date (``start``, ``end``), because that is what
    people type; the script writes them into ``datetime`` before the form is sent,
    and without the script the server does the same here, so both give the same
    search and every link the page writes carries ``datetime`` alone.
    """
    interval, start, end = _one(params, "datetime"), _one(params, "start"), _one(params, "end")
    if start is None and end is None:
        return interval
    if interval is not None:
        raise HTTPError(400, "give either datetime or the start and end dates, not both")
    for name, value in (("start", start), ("end", end)):
        if value is not None:
            parse_datetime(value, name)  # a 400 that names the field the user typed in
    return f"{start or '..'}/{end or '..'}"
