"""The SPARQL 1.1 Graph Store HTTP Protocol on ``/sparql/graph``.

``?graph=IRI`` names a graph (indirect identification); ``?default`` the store's own
unnamed graph, where SPARQL Update without ``GRAPH`` writes (the query endpoint's
default graph is the union of all graphs). GET answers the graph in Turtle, N-Triples,
JSON-LD or RDF/XML (``Accept`` or ``format=``; 404 without it, 413 past
``max_results`` triples). PUT replaces the graph with the request's RDF document,
POST merges the document into it (201 when the graph is new, 204 otherwise), DELETE
drops it (204; 404 without it): each is one library call on the pool's write lane
(:meth:`catalogue.api.Catalogue.load` with and without ``replace``,
:meth:`~catalogue.api.Catalogue.drop_graph`), one transaction that keeps the search
index with it, after the admin token is checked as for SPARQL Update. Documents are
Turtle, N-Triples, RDF/XML or N3 (a quad format could name other graphs: 415); one that
does not parse is a 400 naming its line, and changes nothing. A document's blank nodes
are scoped by its content, as ``catalogue load`` scopes a file's: the same document
POSTed twice adds nothing the second time.
"""

from __future__ import annotations

import re
import tempfile
from pathlib import Path
from typing import Final

from fastapi import APIRouter, Request
from fastapi.responses import Response
from starlette.concurrency import run_in_threadpool

from catalogue.api import Catalogue
from catalogue.errors import DocumentError, UsageError
from catalogue.rdf.formats import rdf_format_for_media_type

from ..http.errors import HTTPError
from ..http.params import form_pairs
from ..search_cache import search_cache
from ..settings import Settings
from .auth import authorise
from .errors import http_errors
from .media import GRAPH_NAMES, GRAPH_TYPES, choose, content_type
from .protocol import content_media_type, single

__all__ = ["router"]

router = APIRouter(tags=["sparql"])

_IRI: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:[^\x00-\x20<>\"{}|^`\\]*")
_PARAMS: Final = {"parameters": [
    {"name": "graph", "in": "query", "schema": {"type": "string"}, "description": "The graph's IRI."},
    {"name": "default", "in": "query", "schema": {"type": "string"}, "allowEmptyValue": True,
     "description": "The store's own unnamed graph (instead of graph=)."},
]}
_WRITE_DOC: Final = {**_PARAMS, "requestBody": {"content": {
    media: {"schema": {"type": "string"}}
    for media in ("text/turtle", "application/n-triples", "application/rdf+xml", "text/n3")}}}


def _target(request: Request) -> str | None:
    """The graph the request names: its IRI, or None for ``?default`` (400 otherwise)."""
    params = form_pairs(request.scope.get("query_string", b""), "query string")
    graph, default = single(params, "graph"), any(key == "default" for key, _ in params)
    if (graph is None) == (not default):
        raise HTTPError(400, "name one graph: ?graph=IRI or ?default")
    if graph is not None and not _IRI.fullmatch(graph):
        raise HTTPError(400, f"graph must be an absolute IRI, not {graph[:100]!r}")
    return graph


def _writer(request: Request) -> Settings:
    settings: Settings = request.app.state.settings
    if not settings.admin_token:
        raise HTTPError(403, "writing graphs is disabled: this server is read-only (an operator enables "
                             "writes by starting it with an admin token)")
    authorise(request, settings.admin_token)
    return settings


@router.get("/sparql/graph", summary="Graph Store Protocol: one graph (GET)", response_class=Response,
            openapi_extra=_PARAMS)
async def get_graph(request: Request) -> Response:
    graph = _target(request)
    settings: Settings = request.app.state.settings
    params = form_pairs(request.scope.get("query_string", b""), "query string")
    media = choose("a graph", request.headers.get("accept"), [v for k, v in params if k == "format"],
                   GRAPH_TYPES, GRAPH_NAMES)
    with http_errors():
        found = await request.app.state.pool.run(lambda cat: cat.graph(graph, limit=settings.max_results))
    if found is None:
        raise HTTPError(404, f"no graph <{graph}>" if graph else "the default graph is empty")
    body = await run_in_threadpool(found.serialize, format=GRAPH_TYPES[media], encoding="utf-8")
    return Response(body, media_type=content_type(media), headers={"Vary": "Accept"})


async def _write(request: Request, *, replace: bool) -> Response:
    _writer(request)  # who may write, before what they ask
    graph = _target(request)
    media, _params = content_media_type(request)
    fmt = rdf_format_for_media_type(media)
    if fmt is None or fmt.quads:
        raise HTTPError(415, f"Content-Type {media[:80] or 'none'} is not an RDF graph document; use "
                             "text/turtle, application/n-triples, application/rdf+xml or text/n3")
    body = await request.body()
    with tempfile.TemporaryDirectory(prefix="catalogue-gsp-") as folder:
        path = Path(folder) / f"body.{fmt.extension}"
        await run_in_threadpool(path.write_bytes, body)

        def work(cat: Catalogue) -> bool:
            return cat.load(str(path), format=fmt.name, graph=graph, replace=replace, name="request body").created

        try:
            with http_errors("update"):
                created = await request.app.state.pool.run(work, write=True)
        except (DocumentError, UsageError) as exc:
            raise HTTPError(400, str(exc)) from None
    search_cache(request.app).recheck_now()
    return Response(status_code=201 if created else 204)


@router.put("/sparql/graph", summary="Graph Store Protocol: replace one graph (PUT)", status_code=204,
            response_class=Response, openapi_extra=_WRITE_DOC)
async def put_graph(request: Request) -> Response:
    return await _write(request, replace=True)


@router.post("/sparql/graph", summary="Graph Store Protocol: merge into one graph (POST)", status_code=204,
             response_class=Response, openapi_extra=_WRITE_DOC)
async def post_graph(request: Request) -> Response:
    return await _write(request, replace=False)


@router.delete("/sparql/graph", summary="Graph Store Protocol: drop one graph (DELETE)", status_code=204,
               response_class=Response, openapi_extra=_PARAMS)
async def delete_graph(request: Request) -> Response:
    _writer(request)
    graph = _target(request)
    with http_errors("update"):
        existed = await request.app.state.pool.run(lambda cat: cat.drop_graph(graph), write=True)
    search_cache(request.app).recheck_now()
    if not existed:
        raise HTTPError(404, f"no graph <{graph}>" if graph else "the default graph is empty")
    return Response(status_code=204)
