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

The content-negotiation helpers here (:func:`negotiate`, :func:`check_iri`,
:func:`public_base`) are shared by the DCAT and export endpoints.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, unquote

from fastapi import APIRouter, Query, Request
from rdflib import SH, Graph, URIRef
from starlette.responses import RedirectResponse, Response, StreamingResponse

from catalogue.api import Catalogue
from catalogue.rdf.closure import node_closure
from catalogue.rdf.convert import Triple
from catalogue.rdf.export import compact_nquads, to_graph, triple_line
from catalogue.rdf.rebuild import NodeNotFound, node_kind, rebuild_documents
from catalogue.rdf.vocabulary import ZARR

from .errors import HTTPError
from .negotiation import negotiate as negotiate_media_type

router = APIRouter(tags=["nodes"])
fallback_router = APIRouter()

#: The longest IRI accepted in a parameter or a path (UTF-8 bytes).
MAX_IRI_BYTES = 4096
#: The longest chunk selection accepted (characters).
MAX_SELECTION_CHARS = 4096
#: Link relation types of our own (RFC 8288 extension relation types are URIs).
REL_TENSORSTORE = "https://w3id.org/zarr-catalogue/rel/tensorstore-spec"
REL_CHUNKS = "https://w3id.org/zarr-catalogue/rel/chunks"

_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_NOT_IN_IRIS = frozenset(' <>"{}|\\^`\ufffd')


# ----------------------------------------------------------------- shared helpers
def iri_problem(value: str, what: str = "iri") -> str | None:
    """Why ``value`` is not a plausible absolute IRI (one line naming ``what``), or None if it is.

    Refused: over :data:`MAX_IRI_BYTES`, no scheme, spaces, control characters,
    the characters RFC 3987 excludes (``<>"{}|\\^```), lone surrogates, and
    U+FFFD (what an invalid UTF-8 percent-encoding decodes to). A valid IRI
    can then be written between ``<…>`` in SPARQL or N-Triples safely.
    """
    if len(value.encode("utf-8", "surrogatepass")) > MAX_IRI_BYTES:
        return f"{what} is longer than {MAX_IRI_BYTES} bytes"
    if "\ufffd" in value:
        return f"{what} is not valid UTF-8 (bad percent-encoding?)"
    for ch in value:
        code = ord(ch)
        if code < 0x21 or code == 0x7F or 0x80 <= code < 0xA0 or 0xD800 <= code < 0xE000 or ch in _NOT_IN_IRIS:
            return f"{what} contains {ch!r}, which an IRI cannot contain"
    if not _SCHEME.match(value):
        return f"{what} must be an absolute IRI (scheme:…), got {value[:80]!r}"
    return None


def check_iri(value: str, what: str = "iri") -> str:
    """``value`` if it is a plausible absolute IRI (see :func:`iri_problem`), else HTTP 400
    with one line saying why."""
    problem = iri_problem(value, what)
    if problem is not None:
        raise HTTPError(400, problem)
    return value


def iri_to_uri(iri: str) -> str:
    """The IRI with non-ASCII characters percent-encoded (RFC 3987 3.1), for HTTP headers."""
    return quote(iri, safe="/:?#[]@!$&'()*+,;=%~")


def link_base(request: Request) -> str:
    """The prefix of links in headers: ``Settings.base_url``, else none (relative links).

    Never the request's ``Host``: a redirect or ``Link`` built from it would
    let a client point other clients elsewhere through a shared cache.
    """
    return (request.app.state.settings.base_url or "").rstrip("/")


def public_base(request: Request) -> str:
    """The server's public base URL without a trailing slash: ``Settings.base_url`` or the request's."""
    configured = request.app.state.settings.base_url
    return (configured or str(request.base_url)).rstrip("/")


@dataclass(frozen=True)
class Representation:
    """One negotiable representation: its ``format=`` name (and aliases) and media type."""

    name: str
    media_type: str
    aliases: tuple[str, ...] = ()


def negotiate(request: Request, offers: Sequence[Representation]) -> Representation:
    """The representation to answer with: ``format=`` if given, else the best for ``Accept``.

    Among equally acceptable offers the earlier one wins (``offers`` is in the
    server's order of preference); no ``Accept`` means the first offer. An
    unknown ``format`` is a 400, an ``Accept`` nothing satisfies a 406.
    """
    fmt = request.query_params.get("format")
    if fmt is not None:
        wanted = fmt.strip().lower()
        for offer in offers:
            if wanted == offer.name or wanted in offer.aliases or wanted == offer.media_type:
                return offer
        names = ", ".join(o.name for o in offers)
        raise HTTPError(400, f"unknown format {fmt[:40]!r}; choose from {names}")
    media_type = negotiate_media_type(request.headers.get("accept"), [o.media_type for o in offers])
    best = next((o for o in offers if o.media_type == media_type), None)
    if best is None:
        types = ", ".join(o.media_type for o in offers)
        raise HTTPError(406, f"none of the acceptable media types is available; available: {types}", {"Vary": "Accept"})
    return best


def etag_matches(header: str | None, etag: str) -> bool:
    """Whether ``If-None-Match`` matches ``etag`` (weak comparison, as RFC 9110 13.1.2 says)."""
    if not header:
        return False
    if header.strip() == "*":
        return True
    return any(tag.strip().removeprefix("W/") == etag for tag in header.split(",")[:64])


async def first_then_rest(items: AsyncIterator[str]) -> AsyncIterator[str]:
    """``items`` with its first piece already produced, so errors raised before the
    first piece become proper HTTP errors (not a 200 cut short).

    Returns an async iterator that yields the first piece and then the rest,
    and closes ``items`` (returning its database connection) however the
    response ends.
    """
    try:
        first = await items.__anext__()
    except StopAsyncIteration:
        first = None
    except BaseException:
        await items.aclose()  # type: ignore[attr-defined]
        raise

    async def rest() -> AsyncIterator[str]:
        try:
            if first is not None:
                yield first
            async for piece in items:
                yield piece
        finally:
            await items.aclose()  # type: ignore[attr-defined]

    return rest()


# ------------------------------------------------------------------ node lookup
NODE_FORMATS: tuple[Representation, ...] = (
    Representation("turtle", "text/turtle", ("ttl",)),
    Representation("ntriples", "application/n-triples", ("nt", "n-triples")),
    Representation("jsonld", "application/ld+json", ("json-ld",)),
    Representation("json", "application/json"),
    Representation("html", "text/html"),
)
_HTML = NODE_FORMATS[-1]


def node_description(graph: Graph, iri: str) -> list[Triple]:
    """The node's closure plus the validation results about it (and the report's link to them)."""
    node = URIRef(iri)
    out = node_closure(graph, node)
    seen = set(out)

    def add(triple: Triple) -> None:
        if triple not in seen:
            seen.add(triple)
            out.append(triple)

    for result in list(graph.subjects(SH.focusNode, node)):
        for report in graph.subjects(SH.result, result):
            add((report, SH.result, result))  # type: ignore[arg-type]
        for triple in graph.triples((result, None, None)):
            add(triple)
    return out


@dataclass
class NodeAnswer:
    """What one request for a node found: enough to build headers and body."""

    iri: str
    dataset: str
    kind: str
    body: bytes
    etag: str


def _digest(*parts: str) -> str:
    h = hashlib.blake2b(digest_size=16)
    for part in parts:
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()


def render_triples(triples: list[Triple], rep: Representation, lines: list[str] | None = None) -> bytes:
    """Turtle, N-Triples or compacted JSON-LD of ``triples``.

    ``lines`` are the triples' N-Triples lines in the same order, when the caller
    has them already (:func:`load_node` needs them for the ETag).
    """
    if rep.name not in ("ntriples", "jsonld"):  # Turtle groups by subject: built in memory
        return to_graph((s, p, o, None) for s, p, o in triples).serialize(format="turtle").encode()
    if lines is None:
        lines = [triple_line(*t) for t in triples]
    if rep.name == "ntriples":
        return "".join(sorted(lines)).encode()
    doc = compact_nquads("".join(lines))
    return json.dumps(doc, ensure_ascii=False, indent=2).encode() + b"\n"


def load_node(cat: Catalogue, iri: str, rep: Representation) -> NodeAnswer:
    """Find node ``iri`` and build its representation ``rep`` (on a worker thread)."""
    graph = cat.node_graph(iri)
    kind = node_kind(graph, iri)
    fingerprint = graph.value(URIRef(iri), ZARR.fingerprint)
    if rep.name == "json":
        documents = rebuild_documents(graph, iri)
        # allow_nan: attributes may hold NaN/Infinity, which zarr-python writes as bare tokens
        body = json.dumps(documents, ensure_ascii=False, indent=2, allow_nan=True).encode() + b"\n"
        tag = _digest("json", str(fingerprint)) if fingerprint is not None else _digest("json", body.decode())
    elif rep is _HTML:  # a redirect: the links need the kind and the dataset only
        body, tag = b"", ""
    else:
        triples = node_description(graph, iri)
        lines = [triple_line(*t) for t in triples]
        tag = _digest(rep.name, str(fingerprint or ""), *sorted(lines))
        body = render_triples(triples, rep, lines)
    return NodeAnswer(iri, str(graph.identifier), kind, body, f'"{tag}"')


def node_links(base: str, answer: NodeAnswer, current: Representation | None) -> str:
    """The ``Link`` header of a node's representations (RFC 8288)."""
    q = quote(answer.iri, safe="")
    links = [f'<{iri_to_uri(answer.iri)}>; rel="describes"']
    for rep in NODE_FORMATS:
        if rep is _HTML:
            links.append(f'<{base}/browse?iri={q}>; rel="alternate"; type="text/html"')
        elif rep is not current:
            links.append(f'<{base}/node?iri={q}&format={rep.name}>; rel="alternate"; type="{rep.media_type}"')
    if answer.dataset != answer.iri:
        links.append(f'<{base}/node?iri={quote(answer.dataset, safe="")}>; rel="collection"; title="dataset"')
    if answer.kind == "array":
        links.append(f'<{base}/node/tensorstore?iri={q}>; rel="{REL_TENSORSTORE}"; type="application/json"')
        links.append(f'<{base}/node/chunks?iri={q}>; rel="{REL_CHUNKS}"; type="application/json"')
    return ", ".join(links)


async def answer_node(request: Request, iri: str) -> Response:
    """The negotiated representation of node ``iri`` (shared by ``/node`` and by-path lookups)."""
    check_iri(iri)
    rep = negotiate(request, NODE_FORMATS)
    pool = request.app.state.pool
    try:
        answer = await pool.run(lambda cat: load_node(cat, iri, rep))
    except NodeNotFound:
        raise HTTPError(404, f"no node {iri} in the catalogue", {"Vary": "Accept"}) from None
    base = link_base(request)
    headers = {"Vary": "Accept", "Link": node_links(base, answer, rep)}
    if rep is _HTML:
        return RedirectResponse(f"{base}/browse?iri={quote(iri, safe='')}", status_code=303, headers=headers)
    headers["ETag"] = answer.etag
    if etag_matches(request.headers.get("if-none-match"), answer.etag):
        return Response(status_code=304, headers=headers)
    return Response(answer.body, media_type=rep.media_type, headers=headers)


# ----------------------------------------------------------------------- routes
_NODE_RESPONSES: dict[int | str, dict[str, Any]] = {
    200: {"description": "The node, in the negotiated format",
          "content": {r.media_type: {} for r in NODE_FORMATS if r is not _HTML}},
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
    check_iri(iri)

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
