"""What the endpoint answers in: result and graph media types, ``format=`` and ``Accept``.

The formats themselves (names, aliases, media types) are :mod:`catalogue.rdf.formats`;
this module only chooses which of them the endpoint offers, in its order of
preference (the first is the default; aliases come last so that ties go to the
canonical types), and adds the aliases SPARQL clients send to endpoints
(SPARQLWrapper, Virtuoso and Fuseki habits) that mean something else elsewhere:
for CONSTRUCT/DESCRIBE, ``format=json`` and ``Accept: application/json`` mean
JSON-LD and ``format=n3`` means Turtle.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Final

from catalogue.rdf import formats

from ..http.errors import HTTPError
from ..http.negotiation import best_media_type

__all__ = [
    "GRAPH_NAMES",
    "GRAPH_TYPES",
    "HTML",
    "RESULT_NAMES",
    "RESULT_TYPES",
    "SERVICE_NAMES",
    "SERVICE_TYPES",
    "answer_media",
    "choose",
    "content_type",
]

HTML: Final = "text/html"

_RESULTS: Final = (formats.SPARQL_JSON, formats.SPARQL_XML, formats.CSV, formats.TSV)
_GRAPHS: Final = (formats.TURTLE, formats.NTRIPLES, formats.JSONLD, formats.RDFXML)
#: The endpoint's own aliases, by format name (see the module docstring).
_ENDPOINT_NAMES: Final = {"turtle": ("n3",), "json-ld": ("json",)}
_ENDPOINT_MEDIA: Final = {"json-ld": ("application/json",)}


def _types(offered: Sequence[formats.RDFFormat | formats.ResultFormat]) -> dict[str, str]:
    """Media type -> format name: the canonical types in order, then every alias."""
    table = {fmt.media_type: fmt.name for fmt in offered}
    for fmt in offered:
        for media in (*fmt.media_aliases, *_ENDPOINT_MEDIA.get(fmt.name, ())):
            table.setdefault(media, fmt.name)
    return table


def _names(offered: Sequence[formats.RDFFormat | formats.ResultFormat]) -> dict[str, str]:
    """``format=`` value -> media type."""
    return {
        name: fmt.media_type
        for fmt in offered
        for name in (*fmt.names, *_ENDPOINT_NAMES.get(fmt.name, ()))
    }


#: SELECT/ASK: media type -> result serialiser, in the server's order of preference.
RESULT_TYPES: Final = _types(_RESULTS)
#: CONSTRUCT/DESCRIBE (and the service description): media type -> rdflib format.
GRAPH_TYPES: Final = _types(_GRAPHS)
SERVICE_TYPES: Final = {**GRAPH_TYPES, HTML: "html"}

#: ``format=`` values (as SPARQLWrapper, Virtuoso and Fuseki clients send them).
RESULT_NAMES: Final = _names(_RESULTS)
GRAPH_NAMES: Final = _names(_GRAPHS)
SERVICE_NAMES: Final = {**GRAPH_NAMES, "html": HTML}


def choose(
    what: str,
    accept: str | None,
    wanted_formats: Sequence[str],
    offers: Mapping[str, str],
    names: Mapping[str, str],
) -> str:
    """The response media type: ``format=`` if given, else ``Accept``; 406 if neither fits."""
    wanted = [f.strip() for f in wanted_formats if f.strip()]
    if wanted:
        for value in wanted:
            key = value.split(";")[0].strip().lower()
            media = names.get(key) or (key if key in offers else None)
            if media is not None:
                return media
        raise HTTPError(
            406,
            f"format={wanted[0][:100]!r} is not available for {what}; "
            f"use one of {', '.join(names)} or a media type: {', '.join(offers)}",
        )
    media = best_media_type(accept, list(offers))
    if media is None:
        raise HTTPError(
            406,
            f"none of the media types in Accept is available for {what}; "
            f"available: {', '.join(offers)}",
        )
    return media


def answer_media(form: str, accept: str | None, wanted_formats: Sequence[str]) -> tuple[str, str]:
    """The media type of a query form's answer and the format name it is written in."""
    offers, names = (RESULT_TYPES, RESULT_NAMES) if form in ("SELECT", "ASK") else (GRAPH_TYPES, GRAPH_NAMES)
    media = choose(f"{form} results", accept, wanted_formats, offers, names)
    return media, offers[media]


def content_type(media: str) -> str:
    """The ``Content-Type`` of an answer: text types say they are UTF-8."""
    return f"{media}; charset=utf-8" if media.startswith("text/") else media
