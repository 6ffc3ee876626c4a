"""``/catalog``: the catalogue as DCAT 3, paged, for DCAT harvesters (ckanext-dcat, data.europa.eu).

``GET /catalog?page=N&page_size=M`` (``page`` from 1; ``page_size`` 100 by
default, at most 1000) answers one page: the ``dcat:Catalog``, the page's
``dcat:Dataset``s with their ``dcat:Distribution``s, the SPARQL
``dcat:DataService`` and Hydra paging links (see
:mod:`catalogue.rdf.dcat`). Every page is complete in itself, so a harvester
can process it alone. Turtle by default; JSON-LD, RDF/XML (what ckanext-dcat
prefers) and N-Triples by ``Accept`` or ``format=``; a ``format`` given in the
request is kept in the paging links, so a harvester that asked for RDF/XML
keeps getting it. A page past the last one is a 404.
"""

from __future__ import annotations

from fastapi import APIRouter, Query, Request
from starlette.responses import Response

from catalogue.api import Catalogue
from catalogue.rdf.dcat import DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE, CatalogLinks, serialize_catalog
from catalogue.rdf.formats import JSONLD, NTRIPLES, RDFXML, TURTLE

from .http.links import public_base
from .http.negotiation import Representation, negotiate

router = APIRouter(tags=["dcat"])

DCAT_FORMATS: tuple[Representation, ...] = (
    Representation.of("turtle", TURTLE),
    Representation.of("jsonld", JSONLD),
    Representation.of("rdfxml", RDFXML),
    Representation.of("ntriples", NTRIPLES),
)


@router.get(
    "/catalog",
    response_class=Response,
    summary="The catalogue as DCAT 3 (paged, Hydra links): Turtle, JSON-LD, RDF/XML or N-Triples",
    responses={
        200: {"content": {r.media_type: {} for r in DCAT_FORMATS}},
        400: {"description": "Bad page, page_size or format"},
        404: {"description": "Page past the last page"},
        406: {"description": "No acceptable format"},
    },
)
async def catalog(
    request: Request,
    page: int = Query(1, ge=1, description="Page number, from 1"),
    page_size: int = Query(DEFAULT_PAGE_SIZE, ge=1, le=MAX_PAGE_SIZE, description="Datasets per page"),
    format: str | None = Query(None, description="Overrides Accept: turtle, jsonld, rdfxml, ntriples"),
) -> Response:
    rep = negotiate(request, DCAT_FORMATS)
    links = CatalogLinks(public_base(request), page_query=f"format={rep.name}" if format is not None else "")

    def work(cat: Catalogue) -> bytes:
        graph = cat.dcat_catalog(links, page=page, page_size=page_size)  # NotFound: a 404
        return serialize_catalog(graph, rep.rdf)  # type: ignore[arg-type]

    body = await request.app.state.pool.run(work)
    return Response(body, media_type=rep.media_type, headers={"Vary": "Accept"})
