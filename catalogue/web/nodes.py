"""Dereferenceable nodes: ``/node?iri=…`` and the node's own path under the server.

A node IRI is the URL of a Zarr group or array in its store, which serves
data, not descriptions. The catalogue describes it at ``/node?iri=<IRI>``,
with content negotiation (``Accept`` with q-values, or ``format=`` which
wins; responses carry ``Vary: Accept``):

* ``text/html``: 303 See Other to the portal page ``/browse?iri=<IRI>``;
* ``text/turtle`` (the default) and ``application/n-triples``: the node's
  description: its own triples, those of its blank nodes and dependent arrays
  (:func:`catalogue.rdf.closure.node_closure`), and the SHACL results whose focus is
  the node, linked from the hierarchy's validation report;
* ``application/ld+json``: the same triples compacted with the catalogue's
  export context (as ``catalogue export --format json-ld``);
* ``application/json``: the node's Zarr metadata documents rebuilt from the
  graph, keyed by file name (``{"zarr.json": …}`` or ``{".zarray": …,
  ".zattrs": …}``), equal to the documents that were harvested.

``Link`` headers (RFC 8288) point to the other representations, to the
dataset (the hierarchy root), and for arrays to the TensorStore spec
(``/node/tensorstore``) and the chunk resolution (``/node/chunks``). The
strong ``ETag`` is derived from the node's ``zarr:fingerprint`` (which
changes whenever its metadata documents change) and, for the RDF formats,
from the rest of the description too, since a group's members or a node's
validation findings can change while its own documents do not;
``If-None-Match`` answers 304.

When a node IRI starts with the server's public base URL, ``GET`` on the
IRI's path under the server returns the same thing (``fallback_router``,
included after every other route so it never shadows one).

The representations, body and headers are built by
:mod:`catalogue.web.node_answer`; this module holds the routes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any
from urllib.parse import quote, unquote

from fastapi import APIRouter, Query, Request
from starlette.responses import RedirectResponse, Response, StreamingResponse

from catalogue.api import Catalogue
from catalogue.rdf.rebuild import NodeNotFound, node_kind

from .http.conditional import etag_matches
from .http.errors import HTTPError
from .http.links import link_base, public_base
from .http.negotiation import negotiate
from .http.params import MAX_IRI_BYTES, checked_iri, iri_problem
from .http.streaming import first_then_rest
from .node_answer import HTML, NODE_FORMATS, load_node, node_link_header

router = APIRouter(tags=["nodes"])
fallback_router = APIRouter()

#: The longest chunk selection accepted (characters).
MAX_SELECTION_CHARS = 4096


async def answer_node(request: Request, iri: str) -> Response:
    """The negotiated representation of node ``iri`` (shared by ``/node`` and by-path lookups)."""
    checked_iri(iri)
    rep = negotiate(request, NODE_FORMATS)
    pool = request.app.state.pool
    try:
        answer = await pool.run(lambda cat: load_node(cat, iri, rep))
    except NodeNotFound:
        raise HTTPError(404, f"no node {iri} in the catalogue", {"Vary": "Accept"}) from None
    base = link_base(request)
    headers = {"Vary": "Accept", "Link": node_link_header(base, answer, rep)}
    if rep is HTML:
        return RedirectResponse(f"{base}/browse?iri={quote(iri, safe='')}", status_code=303, headers=headers)
    headers["ETag"] = answer.etag
    if etag_matches(request.headers.get("if-none-match"), answer.etag):
        return Response(status_code=304, headers=headers)
    return Response(answer.body, media_type=rep.media_type, headers=headers)


# ----------------------------------------------------------------------- routes
_NODE_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"description": "The node, in the negotiated format",
          "content": {r.media_type: {} for r in NODE_FORMATS if r is not HTML}},
    303: {"description": "HTML was asked for: see the portal page /browse?iri=…"},
    304: {"description": "Not modified (If-None-Match matched the ETag)"},
    400: {"description": "Malformed IRI or unknown format"},
    404: {"description": "No node with this IRI"},
    406: {"description": "No acceptable representation"},
}


@router.head("/node", response_class=Response, include_in_schema=False)
@router.get("/node", response_class=Response, responses=_NODE_RESPONSES,
            summary="A catalogued node (group or array), with content negotiation")
async def node(
    request: Request,
    iri: str = Query(..., description="The node's IRI (its URL in its store)"),
    format: str | None = Query(None, description="Overrides Accept: html, turtle, ntriples, jsonld, json"),
) -> Response:
    return await answer_node(request, iri)


async def _array(request: Request, iri: str) -> str:
    """Check that ``iri`` names a catalogued array; 404 otherwise."""
    checked_iri(iri)

    def kind(cat: Catalogue) -> str:
        return node_kind(cat.node_graph(iri), iri)

    try:
        found = await request.app.state.pool.run(kind)
    except NodeNotFound:
        raise HTTPError(404, f"no node {iri} in the catalogue") from None
    if found != "array":
        raise HTTPError(404, f"{iri} is a {found}: only arrays have a TensorStore spec and chunks")
    return iri


@router.get("/node/tensorstore", response_class=Response,
            responses={200: {"content": {"application/json": {}}}, 404: {"description": "No such array"}},
            summary="A TensorStore spec opening the array")
async def tensorstore(
    request: Request,
    iri: str = Query(..., description="The array's IRI"),
    assume_metadata: bool = Query(False, description="Put the catalogue's metadata in the spec"),
) -> Response:
    await _array(request, iri)
    spec = await request.app.state.pool.run(lambda cat: cat.tensorstore_spec(iri, assume_metadata=assume_metadata))
    link = f'<{link_base(request)}/node?iri={quote(iri, safe="")}>; rel="describes"'
    body = json.dumps(spec, ensure_ascii=False, indent=2, allow_nan=True).encode() + b"\n"
    return Response(body, media_type="application/json", headers={"Link": link})


def resolution_pieces(header: dict[str, Any], chunks: Iterator[dict[str, Any]], batch: int = 512) -> Iterator[str]:
    """The resolve JSON of ``catalogue resolve`` (one line), a batch of chunk entries at a time."""
    head = json.dumps(header)
    yield head[:-1].rstrip() + ', "chunks": ['
    fills = 0
    pending: list[str] = []
    for count, chunk in enumerate(chunks):
        fills += bool(chunk["fill"])
        pending.append(("," if count else "") + json.dumps(chunk))
        if len(pending) >= batch:
            yield "".join(pending)
            pending = []
    yield "".join(pending) + f'], "fill_chunks": {fills}}}\n'


@router.get("/node/chunks", response_class=StreamingResponse,
            responses={200: {"content": {"application/json": {}}}, 400: {"description": "Bad selection"},
                       404: {"description": "No such array"}},
            summary="Where every chunk of a selection lives (streamed JSON, as catalogue resolve)")
async def chunks(
    request: Request,
    iri: str = Query(..., description="The array's IRI"),
    selection: str | None = Query(None, description='NumPy basic indexing, e.g. "0:10,5,:" (default: all)'),
) -> StreamingResponse:
    if selection is not None and len(selection) > MAX_SELECTION_CHARS:
        raise HTTPError(400, f"selection is longer than {MAX_SELECTION_CHARS} characters")
    if selection is not None and "\ufffd" in selection:
        raise HTTPError(400, "selection is not valid UTF-8 (bad percent-encoding?)")
    await _array(request, iri)
    cap = request.app.state.settings.max_results

    def work(cat: Catalogue) -> Iterator[str]:
        result = cat.resolve(iri, selection, stream=True)  # a bad selection raises here, before any output
        if result["chunk_count"] > cap:  # known before any key is built or the store is listed
            raise HTTPError(413, f"the selection touches {result['chunk_count']:,} chunks, more than this "
                                 f"server's limit of {cap:,} (max_results); select fewer, e.g. selection=0:10")
        entries = result.pop("chunks")
        return resolution_pieces(result, entries)

    body = await first_then_rest(request.app.state.pool.stream(work))
    return StreamingResponse(body, media_type="application/json")


# -------------------------------------------------------- dereferencing by path
def _traverses(raw_path: str) -> bool:
    """Whether a path has ``.``/``..`` segments, literally or percent-encoded (``%2e%2e``, ``%2f``)."""
    text = raw_path.lower()
    for _ in range(3):  # undo up to three levels of percent-encoding (%252e → %2e → .)
        decoded = unquote(text)
        if decoded == text:
            break
        text = decoded
    segments = re.split(r"[/\\]", text)
    return any(seg in (".", "..") for seg in segments)


@fallback_router.api_route("/{path:path}", methods=["GET", "HEAD"], include_in_schema=False)
async def by_path(request: Request, path: str) -> Response:
    """A node whose IRI is the server's base URL plus this path (404 when there is none)."""
    raw = request.scope.get("raw_path") or request.url.path.encode()
    raw_path = raw.decode("latin-1").split("?", 1)[0]
    if len(raw_path) > MAX_IRI_BYTES:
        raise HTTPError(400, f"path is longer than {MAX_IRI_BYTES} bytes")
    if _traverses(raw_path):
        raise HTTPError(400, "path has '.' or '..' segments")
    base = public_base(request)
    candidates = []
    for form in (raw_path, request.url.path):
        iri = base + form
        if iri not in candidates and iri_problem(iri) is None:
            candidates.append(iri)

    def find(cat: Catalogue) -> str | None:
        return next((iri for iri in candidates if cat.has_node(iri)), None)

    found = await request.app.state.pool.run(find) if candidates else None
    if found is None:
        raise HTTPError(404, f"nothing at {raw_path[:200]}")
    return await answer_node(request, found)
