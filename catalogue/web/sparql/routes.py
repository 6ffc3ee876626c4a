"""The ``/sparql`` routes: GET and POST, each parsing the request and calling the library.

A query runs on a pool worker (``pool.run``) as one call of
:meth:`catalogue.api.Catalogue.answer`: parsing, choosing the response type (so a
``406`` costs no evaluation), evaluation and reading the whole result under
``query_timeout`` and ``max_results``. Only serialisation happens afterwards, off
the event loop and without a database connection, so every limit is decided before
the response starts. An update is :meth:`catalogue.api.Catalogue.update` on the
pool's write lane, after the admin token is checked.
"""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from starlette.concurrency import run_in_threadpool

from catalogue.api import Catalogue
from catalogue.rdf.results import Answer, serialise

from ..http.errors import HTTPError
from ..http.params import form_pairs
from ..search_cache import search_cache
from ..settings import Settings
from .auth import authorise
from .errors import http_errors
from .media import answer_media, content_type
from .protocol import (
    FORM_TYPE,
    OPERATION_PARAMS,
    QUERY_TYPE,
    UPDATE_TYPE,
    Operation,
    body_text,
    check_text,
    content_media_type,
    operation,
    single,
)
from .service_description import describe_service

__all__ = ["router"]

router = APIRouter(tags=["sparql"])

_QUERY_DOC = {
    "parameters": [
        {"name": "query", "in": "query", "schema": {"type": "string"},
         "description": "A SPARQL 1.1 query; without it, the service description."},
        {"name": "default-graph-uri", "in": "query", "schema": {"type": "array", "items": {"type": "string"}},
         "description": "Graphs merged into the default graph (replaces the union of all graphs)."},
        {"name": "named-graph-uri", "in": "query", "schema": {"type": "array", "items": {"type": "string"}},
         "description": "The named graphs of the dataset."},
        {"name": "format", "in": "query", "schema": {"type": "string"},
         "description": "Response format, overriding Accept: json, xml, csv, tsv; turtle, nt, json-ld, "
                        "rdf+xml; or a media type."},
    ],
}


@router.get(
    "/sparql",
    summary="SPARQL 1.1 query (GET) or the service description",
    response_class=Response,
    openapi_extra=_QUERY_DOC,
)
async def sparql_get(request: Request) -> Response:
    """``?query=`` runs a query; no query returns the SPARQL Service Description."""
    params = form_pairs(request.scope.get("query_string", b""), "query string")
    if any(key == "update" for key, _ in params):
        raise HTTPError(400, "SPARQL Update must be sent with POST")
    text = single(params, "query")
    if text is None:
        return await describe_service(request, params)
    return await _answer(request, operation("query", text, params))


@router.post(
    "/sparql",
    summary="SPARQL 1.1 query or update (POST)",
    response_class=Response,
    openapi_extra={
        "requestBody": {
            "content": {
                FORM_TYPE: {"schema": {"type": "object", "properties": {
                    "query": {"type": "string"}, "update": {"type": "string"}}}},
                QUERY_TYPE: {"schema": {"type": "string"}},
                UPDATE_TYPE: {"schema": {"type": "string"}},
            }
        }
    },
)
async def sparql_post(request: Request) -> Response:
    """A form with ``query=`` or ``update=``, or a bare query or update body."""
    url_params = form_pairs(request.scope.get("query_string", b""), "query string")
    media, ct_params = content_media_type(request)
    if media == FORM_TYPE:
        body = await request.body()
        params = url_params + form_pairs(body, "request body")
        query, update = single(params, "query"), single(params, "update")
        if query is not None and update is not None:
            raise HTTPError(400, "a request carries either query or update, not both")
        if query is None and update is None:
            raise HTTPError(400, "the form has neither a query nor an update parameter")
        if update is not None:
            return await _answer(request, operation("update", update, params))
        assert query is not None
        return await _answer(request, operation("query", query, params))
    if media in (QUERY_TYPE, UPDATE_TYPE):
        for name in OPERATION_PARAMS:
            if any(key == name for key, _ in url_params):
                raise HTTPError(400, f"a {media} request carries its operation in the body, not in ?{name}=")
        kind: Literal["query", "update"] = "query" if media == QUERY_TYPE else "update"
        text = body_text(await request.body(), ct_params.get("charset"), f"{kind} body")
        return await _answer(request, operation(kind, text, url_params))
    shown = media[:80] or "none"
    raise HTTPError(
        415,
        f"Content-Type {shown} is not a SPARQL request; use {FORM_TYPE}, {QUERY_TYPE} or {UPDATE_TYPE}",
    )


async def _answer(request: Request, op: Operation) -> Response:
    settings: Settings = request.app.state.settings
    if op.kind == "update":
        return await _update(request, op, settings)
    await run_in_threadpool(check_text, op, settings)  # a scan of up to max_query_chars: off the event loop
    accept = request.headers.get("accept")
    chosen: list[tuple[str, str]] = []  # (media type, format name), set once the form is known

    def work(cat: Catalogue) -> Answer:
        return cat.answer(op.text, dataset=op.dataset, max_results=settings.max_results,
                          timeout=settings.query_timeout,
                          check_form=lambda form: chosen.append(answer_media(form, accept, op.formats)))

    with http_errors():
        answer = await request.app.state.pool.run(work)
    media, fmt = chosen[-1]
    body = await run_in_threadpool(serialise, answer, fmt)
    return Response(body, media_type=content_type(media), headers={"Vary": "Accept"})


async def _update(request: Request, op: Operation, settings: Settings) -> Response:
    token = settings.admin_token
    if not token:
        raise HTTPError(
            403,
            "SPARQL Update is disabled: this server is read-only (an operator enables "
            "updates by starting it with an admin token)",
        )
    authorise(request, token)
    await run_in_threadpool(check_text, op, settings)
    with http_errors("update"):
        await request.app.state.pool.run(lambda cat: cat.update(op.text, timeout=settings.query_timeout),
                                         write=True)
    search_cache(request.app).recheck_now()
    return JSONResponse({"status": "ok", "message": "update applied and committed"})
