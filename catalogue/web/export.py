"""``/export``: the catalogue's RDF, one graph or all, streamed.

``GET /export?graph=<IRI>&format=turtle|ntriples|nquads|trig|jsonld`` (or the
same by ``Accept``: ``text/turtle``, ``application/n-triples``,
``application/n-quads``, ``application/trig``, ``application/ld+json``).
Without ``graph`` every graph is exported, the harvest provenance graph
included. The body is produced by :func:`catalogue.rdf.export.stream` on a
pooled connection and sent as it is made (chunked transfer), so a large
catalogue is never one string in memory: N-Quads and N-Triples a batch of rows
at a time, Turtle and TriG graph by graph, JSON-LD as one document whose
``@graph`` array gets one compacted named graph at a time. Turtle of several
graphs is their union (Turtle has no graph names); N-Quads, TriG and JSON-LD
keep the names.
"""

from __future__ import annotations

from collections.abc import Iterator

from fastapi import APIRouter, Query, Request
from starlette.responses import StreamingResponse

from catalogue.api import Catalogue
from catalogue.errors import UsageError
from catalogue.rdf import export as rdf_export
from catalogue.rdf.dcat import iri_stem
from catalogue.rdf.formats import JSONLD, NQUADS, NTRIPLES, TRIG, TURTLE

from .http.errors import HTTPError
from .http.negotiation import Representation, negotiate
from .http.params import checked_iri
from .http.streaming import first_then_rest

router = APIRouter(tags=["export"])

EXPORT_FORMATS: tuple[Representation, ...] = (
    Representation.of("turtle", TURTLE),
    Representation.of("nquads", NQUADS),
    Representation.of("trig", TRIG),
    Representation.of("jsonld", JSONLD),
    Representation.of("ntriples", NTRIPLES),
)


def filename(graph: str | None, rep: Representation) -> str:
    """A safe download name: the graph's last path segment (``store.zarr.ttl``) or ``catalogue.<ext>``."""
    assert rep.rdf is not None
    ext = rep.rdf.extension
    stem = "catalogue"
    if graph:
        stem = iri_stem(graph)
    return f"{stem}.{ext}"


@router.get(
    "/export",
    response_class=StreamingResponse,
    summary="The catalogue (or one graph) as Turtle, N-Quads, TriG, JSON-LD or N-Triples, streamed",
    responses={
        200: {"content": {r.media_type: {} for r in EXPORT_FORMATS}},
        400: {"description": "Malformed graph IRI or unknown format"},
        404: {"description": "No such graph"},
        406: {"description": "No acceptable format"},
    },
)
async def export(
    request: Request,
    graph: str | None = Query(None, description="A graph IRI (a hierarchy root); default: every graph"),
    format: str | None = Query(None, description="Overrides Accept: turtle, nquads, trig, jsonld, ntriples"),
) -> StreamingResponse:
    if graph is not None:
        checked_iri(graph, "graph")
    rep = negotiate(request, EXPORT_FORMATS)
    assert rep.rdf is not None
    fmt = rep.rdf.name

    def work(cat: Catalogue) -> Iterator[str]:
        try:  # checks the graph (and the format) before producing anything: a 404 before any body
            return rdf_export.stream(cat.store, fmt, graph)
        except UsageError as exc:  # the format is one of ours, so it is the graph that is missing
            raise HTTPError(404, str(exc)) from None

    body = await first_then_rest(request.app.state.pool.stream(work))
    headers = {
        "Vary": "Accept",
        "Content-Disposition": f'attachment; filename="{filename(graph, rep)}"',
    }
    return StreamingResponse(body, media_type=rep.media_type, headers=headers)
