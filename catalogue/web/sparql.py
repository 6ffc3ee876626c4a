"""The SPARQL 1.1 Protocol endpoint: ``/sparql``.

Queries arrive as ``GET /sparql?query=``, as a ``POST`` form (``query=`` or
``update=``) or as a ``POST`` body of type ``application/sparql-query`` /
``application/sparql-update``; ``default-graph-uri`` and ``named-graph-uri``
define the RDF dataset as the Protocol says (they override ``FROM`` and ``FROM
NAMED``; without either the dataset is the catalogue's: the union of every
graph as default graph, every graph as a named graph). The prefixes of
``catalogue query`` are pre-bound. ``GET /sparql`` without a query answers a
SPARQL 1.1 Service Description.

Everything about one query happens on a pool worker (``pool.run``) under
:func:`~catalogue.graph.deadline.query_deadline`: parsing, choosing the
response type (so a ``406`` costs no evaluation), evaluation, and reading the
whole result while counting it against ``max_results``. Only serialisation
happens afterwards, off the event loop and without a database connection, so
every limit is decided before the response starts.

Status codes: 400 malformed request or query (one line, parse position
included), 401/403 SPARQL Update without the admin token / with none
configured, 406 no acceptable media type, 413 query longer than
``max_query_chars`` or result larger than ``max_results`` (the request asks for
more than the server is willing to produce: add ``LIMIT``), 415 unknown
``Content-Type``, 503 query past ``query_timeout`` (the server stopped the
work: a temporary refusal of this much work, not a client syntax error; the
same status as when every connection is busy). See docs/web.md.

Network access from queries is refused: ``SERVICE`` is a 400, and ``FROM`` /
``FROM NAMED`` / ``default-graph-uri`` only ever select graphs already in the
catalogue (rdflib on its own would fetch and parse a missing graph from the
web, into the store).
"""

from __future__ import annotations

import hashlib
import hmac
import html
import io
import logging
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Final, Literal
from urllib.parse import unquote_to_bytes

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response
from rdflib import RDF, RDFS, BNode, Dataset, Graph, Namespace, URIRef
from rdflib import Literal as RDFLiteral
from rdflib.namespace import DCTERMS, XSD, NamespaceManager
from rdflib.plugins.sparql.evaluate import evalPart, evalQuery
from rdflib.plugins.sparql.evalutils import _fillTemplate
from rdflib.plugins.sparql.parserutils import CompValue
from rdflib.plugins.sparql.processor import SPARQLResult
from rdflib.plugins.sparql.sparql import Query, QueryContext
from rdflib.query import Result
from rdflib.term import Node, Variable
from sqlalchemy.exc import SQLAlchemyError
from starlette.concurrency import run_in_threadpool

from catalogue.api import Catalogue
from catalogue.errors import Busy, QueryTimeout
from catalogue.graph.deadline import check_deadline, run_with_deadline
from catalogue.query_output import render_tsv
from catalogue.rdf.export import bind_prefixes
from catalogue.rdf.vocabulary import PREFIXES
from catalogue.web.pool import Overloaded

from .errors import HTTPError
from .negotiation import negotiate, parse_accept
from .nodes import check_iri
from .settings import Settings

__all__ = ["negotiate", "parse_accept", "router"]

log = logging.getLogger(__name__)

router = APIRouter(tags=["sparql"])

SD = Namespace("http://www.w3.org/ns/sparql-service-description#")
FORMATS = Namespace("http://www.w3.org/ns/formats/")
VOID = Namespace("http://rdfs.org/ns/void#")
ENTAILMENT = Namespace("http://www.w3.org/ns/entailment/")

SPARQL_JSON: Final = "application/sparql-results+json"
SPARQL_XML: Final = "application/sparql-results+xml"
CSV: Final = "text/csv"
TSV: Final = "text/tab-separated-values"
TURTLE: Final = "text/turtle"
NTRIPLES: Final = "application/n-triples"
JSONLD: Final = "application/ld+json"
RDFXML: Final = "application/rdf+xml"
HTML: Final = "text/html"

#: SELECT/ASK: media type -> serialiser, in the server's order of preference (the
#: first is the default; aliases come last so that ties go to the canonical types).
RESULT_TYPES: Final[dict[str, str]] = {
    SPARQL_JSON: "json",
    SPARQL_XML: "xml",
    CSV: "csv",
    TSV: "tsv",
    "application/json": "json",
    "application/xml": "xml",
    "text/xml": "xml",
}
#: CONSTRUCT/DESCRIBE (and the service description): media type -> rdflib format.
GRAPH_TYPES: Final[dict[str, str]] = {
    TURTLE: "turtle",
    NTRIPLES: "nt",
    JSONLD: "json-ld",
    RDFXML: "xml",
    "application/x-turtle": "turtle",
    "application/turtle": "turtle",
    "application/json": "json-ld",
    "application/xml": "xml",
}
SERVICE_TYPES: Final[dict[str, str]] = {**GRAPH_TYPES, HTML: "html"}

#: ``format=`` values (as SPARQLWrapper, Virtuoso and Fuseki clients send them).
RESULT_FORMATS: Final = {"json": SPARQL_JSON, "xml": SPARQL_XML, "csv": CSV, "tsv": TSV}
GRAPH_FORMATS: Final = {
    "turtle": TURTLE, "ttl": TURTLE, "n3": TURTLE,
    "nt": NTRIPLES, "ntriples": NTRIPLES, "n-triples": NTRIPLES,
    "json-ld": JSONLD, "jsonld": JSONLD, "json": JSONLD,
    "xml": RDFXML, "rdf+xml": RDFXML, "rdfxml": RDFXML, "rdf": RDFXML,
}
SERVICE_FORMATS: Final = {**GRAPH_FORMATS, "html": HTML}

_FORMS: Final = {
    "SelectQuery": "SELECT",
    "AskQuery": "ASK",
    "ConstructQuery": "CONSTRUCT",
    "DescribeQuery": "DESCRIBE",
}

#: Brackets a query may nest: rdflib's recursive-descent parser gives up far
#: earlier (about 20 parentheses), this only spares it hostile depths.
MAX_NESTING: Final = 64
#: Triples copied into memory for a query over an explicit RDF dataset.
MAX_DATASET_TRIPLES: Final = 1_000_000
#: Queries longer than this are parsed afresh each time instead of being cached.
_CACHED_QUERY_CHARS: Final = 10_000

_FORM_TYPE = "application/x-www-form-urlencoded"
_QUERY_TYPE = "application/sparql-query"
_UPDATE_TYPE = "application/sparql-update"
_QUERY_PARAMS = ("query", "update")
_UPDATE_DATASET_PARAMS = ("using-graph-uri", "using-named-graph-uri")
_GRAPH_PARAMS = ("default-graph-uri", "named-graph-uri")


# ------------------------------------------------------------------ negotiation

def _choose(
    what: str,
    accept: str | None,
    formats: Sequence[str],
    offers: dict[str, str],
    names: dict[str, str],
) -> str:
    """The response media type: ``format=`` if given, else ``Accept``; 406 if neither fits."""
    wanted = [f.strip() for f in formats if f.strip()]
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
    media = negotiate(accept, list(offers))
    if media is None:
        raise HTTPError(
            406,
            f"none of the media types in Accept is available for {what}; "
            f"available: {', '.join(offers)}",
        )
    return media


def _content_type(media: str) -> str:
    return f"{media}; charset=utf-8" if media.startswith("text/") else media


# ------------------------------------------------------------------ requests


@dataclass
class Operation:
    """One protocol request: a query or an update and its parameters."""

    kind: Literal["query", "update"]
    text: str
    default_graphs: list[str] = field(default_factory=list)
    named_graphs: list[str] = field(default_factory=list)
    formats: list[str] = field(default_factory=list)


def _decode(raw: bytes) -> str:
    return unquote_to_bytes(raw.replace(b"+", b" ")).decode("utf-8")


def parse_params(raw: bytes, where: str) -> list[tuple[str, str]]:
    """``application/x-www-form-urlencoded`` pairs, strictly UTF-8 after percent-decoding."""
    pairs: list[tuple[str, str]] = []
    for part in raw.split(b"&"):
        if not part:
            continue
        name, _, value = part.partition(b"=")
        try:
            pairs.append((_decode(name), _decode(value)))
        except UnicodeDecodeError:
            raise HTTPError(
                400, f"the {where} is not valid UTF-8 once percent-decoded"
            ) from None
    return pairs


def _graph_iris(params: list[tuple[str, str]], name: str) -> list[str]:
    """The distinct values of parameter ``name``, each checked as the node endpoint checks
    an IRI (:func:`catalogue.web.nodes.check_iri`): HTTP 400 naming the parameter if not."""
    iris = [value for key, value in params if key == name]
    for iri in iris:
        check_iri(iri, name)
    return list(dict.fromkeys(iris))


def _operation(kind: Literal["query", "update"], text: str, params: list[tuple[str, str]]) -> Operation:
    if kind == "update":
        for name in (*_UPDATE_DATASET_PARAMS, *_GRAPH_PARAMS):
            if any(key == name for key, _ in params):
                raise HTTPError(400, f"{name} is not supported with SPARQL Update; use GRAPH or WITH in the update")
        return Operation("update", text)
    for name in _UPDATE_DATASET_PARAMS:
        if any(key == name for key, _ in params):
            raise HTTPError(400, f"{name} applies to SPARQL Update; queries take default-graph-uri")
    return Operation(
        "query",
        text,
        default_graphs=_graph_iris(params, "default-graph-uri"),
        named_graphs=_graph_iris(params, "named-graph-uri"),
        formats=[value for key, value in params if key == "format"],
    )


def _single(params: list[tuple[str, str]], name: str) -> str | None:
    values = [value for key, value in params if key == name]
    if len(values) > 1:
        raise HTTPError(400, f"more than one {name} parameter")
    return values[0] if values else None


_IRIREF = re.compile(r"<[^\x00-\x20<>\"{}|^`\\]*>")


def _string_end(text: str, start: int, quote: str) -> int:
    """Where the string literal opened at ``start`` ends (one past its closing quote, or the end).

    One pass, so the cost is linear in the text whatever it holds (a regular
    expression with an alternative per literal form went quadratic on an
    unterminated string full of escapes).
    """
    n = len(text)
    if text.startswith(quote * 3, start):
        i = start + 3
        while i < n:
            if text[i] == "\\":
                i += 2
            elif text.startswith(quote * 3, i):
                return i + 3
            else:
                i += 1
        return n
    i = start + 1
    while i < n and text[i] not in (quote, "\n", "\r"):
        i += 2 if text[i] == "\\" else 1
    return min(i + 1, n)


def nesting_depth(text: str) -> int:
    """The deepest nesting of ``{ ( [`` in a query, outside strings, IRIs and comments (linear time)."""
    depth = deepest = 0
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char in "\"'":
            i = _string_end(text, i, char)
            continue
        if char == "<":
            iri = _IRIREF.match(text, i)
            if iri is not None:
                i = iri.end()
                continue
        elif char == "#":
            newline = min((k for k in (text.find("\n", i), text.find("\r", i)) if k >= 0), default=n)
            i = newline
            continue
        elif char in "{([":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "})]":
            depth = max(0, depth - 1)
        i += 1
    return deepest


def _check_text(op: Operation, settings: Settings) -> None:
    if not op.text.strip():
        raise HTTPError(400, f"empty {op.kind}")
    if len(op.text) > settings.max_query_chars:
        raise HTTPError(
            413,
            f"the {op.kind} has {len(op.text):,} characters, more than this server's "
            f"limit of {settings.max_query_chars:,} (max_query_chars)",
        )
    if nesting_depth(op.text) > MAX_NESTING:
        raise HTTPError(400, f"the {op.kind} nests brackets more than {MAX_NESTING} levels deep")


def _media_type(request: Request) -> tuple[str, dict[str, str]]:
    raw = request.headers.get("content-type", "")
    media, *params = raw.split(";")
    parsed: dict[str, str] = {}
    for param in params:
        name, _, value = param.partition("=")
        parsed[name.strip().lower()] = value.strip().strip('"')
    return media.strip().lower(), parsed


def _body_text(body: bytes, charset: str | None, what: str) -> str:
    encoding = (charset or "utf-8").lower()
    try:
        return body.decode(encoding)
    except LookupError:
        raise HTTPError(415, f"unknown charset {encoding[:40]!r} for the {what}") from None
    except UnicodeDecodeError:
        raise HTTPError(400, f"the {what} is not valid {encoding}") from None


# ------------------------------------------------------------------ routes

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
    params = parse_params(request.scope.get("query_string", b""), "query string")
    if any(key == "update" for key, _ in params):
        raise HTTPError(400, "SPARQL Update must be sent with POST")
    text = _single(params, "query")
    if text is None:
        return await _service_description(request, params)
    return await _answer(request, _operation("query", text, params))


@router.post(
    "/sparql",
    summary="SPARQL 1.1 query or update (POST)",
    response_class=Response,
    openapi_extra={
        "requestBody": {
            "content": {
                _FORM_TYPE: {"schema": {"type": "object", "properties": {
                    "query": {"type": "string"}, "update": {"type": "string"}}}},
                _QUERY_TYPE: {"schema": {"type": "string"}},
                _UPDATE_TYPE: {"schema": {"type": "string"}},
            }
        }
    },
)
async def sparql_post(request: Request) -> Response:
    """A form with ``query=`` or ``update=``, or a bare query or update body."""
    url_params = parse_params(request.scope.get("query_string", b""), "query string")
    media, ct_params = _media_type(request)
    if media == _FORM_TYPE:
        body = await request.body()
        params = url_params + parse_params(body, "request body")
        query, update = _single(params, "query"), _single(params, "update")
        if query is not None and update is not None:
            raise HTTPError(400, "a request carries either query or update, not both")
        if query is None and update is None:
            raise HTTPError(400, "the form has neither a query nor an update parameter")
        if update is not None:
            return await _answer(request, _operation("update", update, params))
        assert query is not None
        return await _answer(request, _operation("query", query, params))
    if media in (_QUERY_TYPE, _UPDATE_TYPE):
        for name in _QUERY_PARAMS:
            if any(key == name for key, _ in url_params):
                raise HTTPError(400, f"a {media} request carries its operation in the body, not in ?{name}=")
        kind: Literal["query", "update"] = "query" if media == _QUERY_TYPE else "update"
        text = _body_text(await request.body(), ct_params.get("charset"), f"{kind} body")
        return await _answer(request, _operation(kind, text, url_params))
    shown = media[:80] or "none"
    raise HTTPError(
        415,
        f"Content-Type {shown} is not a SPARQL request; use {_FORM_TYPE}, {_QUERY_TYPE} or {_UPDATE_TYPE}",
    )


async def _answer(request: Request, op: Operation) -> Response:
    settings: Settings = request.app.state.settings
    if op.kind == "update":
        return await _update(request, op, settings)
    await run_in_threadpool(_check_text, op, settings)  # a scan of up to max_query_chars: off the event loop
    accept = request.headers.get("accept")
    answer: Answer = await request.app.state.pool.run(
        lambda cat: run_query(cat, op, settings, accept)
    )
    body = await run_in_threadpool(serialise, answer)
    return Response(body, media_type=_content_type(answer.media), headers={"Vary": "Accept"})


# ------------------------------------------------------------------ evaluation


@dataclass
class Answer:
    """A query's whole result, read under the time limit, ready to serialise."""

    form: str  # SELECT, ASK, CONSTRUCT, DESCRIBE
    media: str
    variables: list[Variable] = field(default_factory=list)
    rows: list[dict[Variable, Node]] = field(default_factory=list)
    boolean: bool = False
    graph: Graph | None = None


class BadQuery(HTTPError):
    """A query that does not parse, or asks for something this endpoint refuses."""

    def __init__(self, message: str) -> None:
        super().__init__(400, message)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return " ".join(text.splitlines()[0].split()) if text else type(exc).__name__


def _translate(text: str) -> Query:
    from catalogue.graph.sparql.query import parse_query as parse_locked

    try:
        return parse_locked(text, None, dict(PREFIXES))
    except RecursionError:
        raise BadQuery("the query is nested too deeply for the SPARQL parser") from None
    except Exception as exc:  # pyparsing's ParseException, rdflib's plain Exceptions (unknown prefix)
        raise BadQuery(f"malformed query: {_one_line(exc)}") from None


_translate_cached = lru_cache(maxsize=256)(_translate)


def parse_query(text: str) -> Query:
    """Parse and translate a query with the catalogue prefixes bound (short ones cached)."""
    return _translate_cached(text) if len(text) <= _CACHED_QUERY_CHARS else _translate(text)


def _walk(root: Any) -> Iterator[CompValue]:
    """Every algebra node under ``root`` (iteratively: algebras can be deep)."""
    stack = [root]
    seen: set[int] = set()
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, CompValue):
            yield item
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)


def _uses(algebra: CompValue, name: str) -> bool:
    return any(part.name == name for part in _walk(algebra))


def _dataset_target(cat: Catalogue, query: Query, op: Operation) -> tuple[Graph, Query]:
    """The graph to evaluate on, and the query without its dataset clause.

    Protocol parameters override ``FROM``/``FROM NAMED``. Without either, the
    catalogue's dataset (union default graph). One existing default graph and no
    named graphs (the common case, and what rdflib's SPARQLStore sends) run
    compiled to SQL on that graph; any other dataset is copied into memory
    (bounded by :data:`MAX_DATASET_TRIPLES` and the time limit) and evaluated
    by rdflib. Graphs that do not exist are empty: nothing is ever fetched.
    """
    algebra = query.algebra
    clause = algebra.datasetClause or []
    if op.default_graphs or op.named_graphs:
        default, named = op.default_graphs, op.named_graphs
    elif clause:
        default = list(dict.fromkeys(str(d.default) for d in clause if d.default is not None))
        named = list(dict.fromkeys(str(d.named) for d in clause if d.named is not None))
    else:
        return _quiet(Dataset(store=cat.store, default_union=True)), query
    stripped = CompValue(algebra.name, **{k: v for k, v in algebra.items() if k != "datasetClause"})
    stripped["datasetClause"] = None
    bare = Query(query.prologue, stripped)
    existing = {str(name) for name in cat.store.graph_name_ids().values()}
    if len(default) == 1 and not named and default[0] in existing and not _uses(algebra, "Graph"):
        return Graph(store=cat.store, identifier=URIRef(default[0]), bind_namespaces="none"), bare
    return _copy_dataset(cat, default, named, existing), bare


def _quiet(graph: Dataset) -> Dataset:
    """A graph whose namespace manager never writes to the store.

    rdflib gives every graph, on first use of its namespaces (DESCRIBE asks for
    them), a manager that binds rdflib's default prefixes in the store: a write,
    which on SQLite takes the database's write lock for the rest of the request
    (and is rolled back by the pool, so it happens again on the next connection).
    A read-only endpoint must not wait on, or fail over, a harvest's lock.
    """
    graph.namespace_manager = NamespaceManager(graph, bind_namespaces="none")
    return graph


def _copy_dataset(cat: Catalogue, default: list[str], named: list[str], existing: set[str]) -> Dataset:
    dataset = Dataset()  # in memory; its default graph is the query's default graph
    copied = 0

    def triples(iri: str, target: Graph) -> Iterator[tuple[Node, Node, Node, Graph]]:
        nonlocal copied
        if iri not in existing:
            return
        for s, p, o in cat.store.graph_triples(URIRef(iri)):
            copied += 1
            if copied > MAX_DATASET_TRIPLES:
                raise HTTPError(
                    413,
                    f"the RDF dataset named by the request holds more than {MAX_DATASET_TRIPLES:,} "
                    "triples; query the union default graph with GRAPH <...> { } instead",
                )
            yield s, p, o, target

    default_graph = dataset.default_graph
    for iri in default:
        default_graph.addN(triples(iri, default_graph))
    for iri in named:
        graph = dataset.graph(URIRef(iri))
        graph.addN(triples(iri, graph))
    return dataset


def _too_large(cap: int, what: str) -> HTTPError:
    return HTTPError(
        413,
        f"the query has more than {cap:,} {what} (this server's max_results); "
        "add LIMIT (and OFFSET to page through the result)",
    )


def _construct(target: Graph, query: Query, cap: int) -> Graph:
    """CONSTRUCT as rdflib evaluates it, but stopping at the result cap instead of
    building an unbounded graph in memory first."""
    ctx = QueryContext(target, initBindings={}, datasetClause=None)
    ctx.prologue = query.prologue
    algebra = query.algebra
    template = algebra.template or _where_triples(algebra.p)
    graph = Graph()
    for solution in evalPart(ctx, algebra.p):
        check_deadline()
        graph += _fillTemplate(template, solution)
        if len(graph) > cap:
            raise _too_large(cap, "triples")
    return graph


def _where_triples(part: CompValue) -> list[Any]:
    """The template of ``CONSTRUCT WHERE { triples }``: the pattern's own triples,
    found under any solution modifiers (rdflib looks only two levels down, so it
    fails once LIMIT or ORDER BY is added)."""
    while part is not None and part.name != "BGP":
        part = part.p
    return list(part.triples) if part is not None else []


def _read_result(result: Result, form: str, media: str, cap: int) -> Answer:
    if form == "ASK":
        return Answer(form, media, boolean=bool(result.askAnswer))
    if form == "DESCRIBE":
        graph = result.graph
        if graph is not None and len(graph) > cap:
            raise _too_large(cap, "triples")
        return Answer(form, media, graph=graph)
    variables = list(result.vars or [])
    rows: list[dict[Variable, Node]] = []
    try:
        for row in result:
            check_deadline()
            if len(rows) >= cap:
                raise _too_large(cap, "result rows")
            rows.append({v: row[i] for i, v in enumerate(variables) if row[i] is not None})
    finally:
        # Close a half-read stream here, on the worker that owns the connection.
        pending = getattr(result, "_genbindings", None)
        if pending is not None and hasattr(pending, "close"):
            pending.close()
    return Answer(form, media, variables=variables, rows=rows)


def run_query(cat: Catalogue, op: Operation, settings: Settings, accept: str | None) -> Answer:
    """Parse, negotiate, evaluate and read a query under the server's limits (on a worker)."""

    def work() -> Answer:
        query = parse_query(op.text)
        form = _FORMS[query.algebra.name]
        if form in ("SELECT", "ASK"):
            media = _choose(f"{form} results", accept, op.formats, RESULT_TYPES, RESULT_FORMATS)
        else:
            media = _choose(f"{form} results", accept, op.formats, GRAPH_TYPES, GRAPH_FORMATS)
        if _uses(query.algebra, "ServiceGraphPattern"):
            raise BadQuery("SERVICE (federated query) is not supported by this endpoint")
        target, query = _dataset_target(cat, query, op)
        cap = settings.max_results
        if form == "CONSTRUCT":
            return Answer(form, media, graph=_construct(target, query, cap))
        if form == "DESCRIBE":
            # Evaluated on our own graph object: see _quiet.
            result = SPARQLResult(evalQuery(target, query, {}, None))
        else:
            result = target.query(query, initNs=PREFIXES)
        return _read_result(result, form, media, cap)

    try:
        return run_with_deadline(cat.store, settings.query_timeout, work)
    except QueryTimeout as exc:
        raise HTTPError(503, _timeout_message(exc)) from None
    except (HTTPError, SQLAlchemyError):
        raise
    except RecursionError:
        raise BadQuery("the query is nested too deeply to evaluate") from None
    except Exception as exc:
        # rdflib reports evaluation problems with exceptions of every type (plain
        # Exception, TypeError, NotImplementedError): the query's fault as far as the
        # client can act on it; logged in full in case it is ours.
        log.warning("SPARQL evaluation failed", exc_info=True)
        raise BadQuery(f"query failed: {type(exc).__name__}: {_one_line(exc)}") from None


def _timeout_message(exc: QueryTimeout) -> str:
    return (
        f"{exc} (this server's query_timeout); make the query more selective, "
        "or add LIMIT"
    )


# ------------------------------------------------------------------ serialising


def _ask_table(answer: bool, sep: str, header: str) -> bytes:
    """ASK in CSV/TSV, which the results formats do not define: one column, as Fuseki does."""
    line_end = "\r\n" if sep == "," else "\n"
    return f"{header}{line_end}{'true' if answer else 'false'}{line_end}".encode()


def serialise(answer: Answer) -> bytes:
    """The answer's body in its negotiated media type."""
    if answer.form in ("SELECT", "ASK"):
        key = RESULT_TYPES[answer.media]
        if answer.form == "ASK" and key in ("csv", "tsv"):
            return _ask_table(answer.boolean, "," if key == "csv" else "\t",
                              "_askResult" if key == "csv" else "?_askResult")
        result = Result(answer.form)
        if answer.form == "ASK":
            result.askAnswer = answer.boolean
        else:
            result.vars = answer.variables
            result.bindings = answer.rows  # type: ignore[assignment]
        if key == "tsv":
            out = io.StringIO()
            render_tsv(result, out)
            return out.getvalue().encode("utf-8")
        data = result.serialize(format=key)
        return data if isinstance(data, bytes) else str(data).encode("utf-8")
    graph = answer.graph if answer.graph is not None else Graph()
    return _serialise_graph(graph, GRAPH_TYPES[answer.media])


def _serialise_graph(graph: Graph, fmt: str) -> bytes:
    bind_prefixes(graph)
    data = graph.serialize(format=fmt, encoding="utf-8")
    return data if isinstance(data, bytes) else data.encode("utf-8")


# ------------------------------------------------------------------ update


def _authorise(request: Request, token: str) -> None:
    """Bearer token check; digests of equal length compared in constant time."""
    header = request.headers.get("authorization", "")
    scheme, _, given = header.strip().partition(" ")
    realm = 'Bearer realm="zarr-catalogue SPARQL Update"'
    if scheme.lower() != "bearer" or not given.strip():
        raise HTTPError(401, "SPARQL Update needs the header Authorization: Bearer <admin token>",
                        {"WWW-Authenticate": realm})
    given_digest = hashlib.sha256(given.strip().encode("utf-8", "surrogateescape")).digest()
    token_digest = hashlib.sha256(token.encode("utf-8")).digest()
    if not hmac.compare_digest(given_digest, token_digest):
        raise HTTPError(401, "the admin token is not valid",
                        {"WWW-Authenticate": realm + ', error="invalid_token"'})


def _translate_update(text: str) -> Any:
    from catalogue.graph.sparql.query import parse_update

    try:
        return parse_update(text, None, dict(PREFIXES))
    except RecursionError:
        raise BadQuery("the update is nested too deeply for the SPARQL parser") from None
    except Exception as exc:
        raise BadQuery(f"malformed update: {_one_line(exc)}") from None


def apply_update(cat: Catalogue, update: Any) -> None:
    """Run a translated update on the store, operation by operation (no commit).

    rdflib's own ``Dataset.update`` cannot insert or delete triples without
    GRAPH when the default graph is a union (it hands triples to a method that
    takes quads), so each operation gets a context whose default graph is the
    graph store's own unnamed graph (``urn:x-rdflib:default``), for reading
    and writing alike, and whose named graphs are the catalogue's. A bare
    ``DELETE WHERE { ?s ?p ?o }`` therefore cannot touch a harvested hierarchy;
    GRAPH and WITH address those. LOAD and USING would make the server fetch
    URLs (or read its own files) and SERVICE would query other servers: they
    are refused.
    """
    from rdflib.plugins.sparql import update as rdflib_update

    handlers = {
        "Clear": rdflib_update.evalClear,
        "Drop": rdflib_update.evalDrop,
        "Create": _create_graph,  # rdflib's raises "Create not implemented!"
        "Add": rdflib_update.evalAdd,
        "Move": rdflib_update.evalMove,
        "Copy": rdflib_update.evalCopy,
        "InsertData": rdflib_update.evalInsertData,
        "DeleteData": rdflib_update.evalDeleteData,
        "DeleteWhere": rdflib_update.evalDeleteWhere,
        "Modify": rdflib_update.evalModify,
    }
    operations = list(update.algebra)
    for operation in operations:
        if operation.name == "Load":
            raise BadQuery("LOAD is not supported by this endpoint; load files with `catalogue load` on the server")
        if operation.using:
            raise BadQuery("USING / USING NAMED are not supported by this endpoint; use GRAPH in the WHERE clause")
        if _uses(operation, "ServiceGraphPattern"):
            raise BadQuery("SERVICE (federated query) is not supported by this endpoint")
        if operation.name not in handlers:
            raise BadQuery(f"unsupported update operation {operation.name}")
    dataset = Dataset(store=cat.store, default_union=False)
    for operation in operations:
        ctx = QueryContext(dataset, initBindings={})
        ctx.graph = dataset.default_graph
        ctx.prologue = operation.prologue
        try:
            handlers[operation.name](ctx, operation)
        except Exception:
            if not operation.silent:
                raise


def _create_graph(ctx: QueryContext, operation: CompValue) -> None:
    """CREATE GRAPH: register an empty named graph; an error if it exists (unless SILENT)."""
    store = ctx.dataset.store
    name = URIRef(operation.graphiri)
    if name in set(store.graph_ids()):
        raise ValueError(f"graph <{name}> already exists")
    store.add_graph(Graph(store=store, identifier=name))


async def _update(request: Request, op: Operation, settings: Settings) -> Response:
    token = settings.admin_token
    if not token:
        raise HTTPError(
            403,
            "SPARQL Update is disabled: this server is read-only (an operator enables "
            "updates by starting it with an admin token)",
        )
    _authorise(request, token)
    await run_in_threadpool(_check_text, op, settings)

    def work(cat: Catalogue) -> None:
        def apply() -> None:
            # The write lock first: the WHERE clauses then read what the writes apply to,
            # with no other writer in between.
            cat.store.begin_write()
            apply_update(cat, _translate_update(op.text))

        try:
            run_with_deadline(cat.store, settings.query_timeout, apply)
            cat.store.commit()
        except BaseException:
            cat.store.rollback()
            raise

    try:
        await request.app.state.pool.run(work, write=True)
    except QueryTimeout as exc:
        raise HTTPError(503, _timeout_message(exc).replace("query", "update", 1)) from None
    except (HTTPError, SQLAlchemyError, Busy, Overloaded):
        raise
    except RecursionError:
        raise BadQuery("the update is nested too deeply to evaluate") from None
    except Exception as exc:
        log.warning("SPARQL update failed", exc_info=True)
        raise BadQuery(f"update failed: {type(exc).__name__}: {_one_line(exc)}") from None
    return JSONResponse({"status": "ok", "message": "update applied and committed"})


# ------------------------------------------------------------------ service description


def endpoint_url(request: Request, settings: Settings) -> str:
    """The endpoint's public URL (``base_url`` when configured, else the request's base)."""
    base = settings.base_url or str(request.base_url)
    return base.rstrip("/") + "/sparql"


def service_description(endpoint: str, graphs: Iterable[tuple[str, int]], settings: Settings) -> Graph:
    """The SPARQL 1.1 Service Description of this endpoint."""
    g = Graph()
    for prefix, ns in (("sd", SD), ("formats", FORMATS), ("void", VOID), ("dct", DCTERMS),
                       ("rdfs", RDFS), ("ent", ENTAILMENT), ("xsd", XSD)):
        g.bind(prefix, ns)
    service = URIRef(endpoint)
    g.add((service, RDF.type, SD.Service))
    g.add((service, SD.endpoint, service))
    g.add((service, DCTERMS.title, RDFLiteral("zarr-catalogue SPARQL endpoint")))
    g.add((service, SD.supportedLanguage, SD.SPARQL11Query))
    if settings.admin_token:
        g.add((service, SD.supportedLanguage, SD.SPARQL11Update))
    for fmt in ("SPARQL_Results_JSON", "SPARQL_Results_XML", "SPARQL_Results_CSV",
                "SPARQL_Results_TSV", "Turtle", "N-Triples", "JSON-LD", "RDF_XML"):
        g.add((service, SD.resultFormat, FORMATS[fmt]))
    g.add((service, SD.feature, SD.UnionDefaultGraph))
    g.add((service, SD.defaultEntailmentRegime, ENTAILMENT.Simple))
    prefixes = " ".join(f"{p}:" for p in PREFIXES)
    g.add((service, RDFS.comment, RDFLiteral(
        f"Prefixes {prefixes} are pre-bound. A query may run {settings.query_timeout:g} s "
        f"(HTTP 503 beyond) and return {settings.max_results:,} rows or triples (HTTP 413 "
        f"beyond: add LIMIT); queries are at most {settings.max_query_chars:,} characters.")))
    dataset = URIRef(endpoint + "#dataset")
    g.add((service, SD.defaultDataset, dataset))
    g.add((dataset, RDF.type, SD.Dataset))
    default_graph = URIRef(endpoint + "#default-graph")
    g.add((dataset, SD.defaultGraph, default_graph))
    g.add((default_graph, RDF.type, SD.Graph))
    g.add((default_graph, RDFS.comment,
           RDFLiteral("The union (RDF merge) of all named graphs.")))
    for iri, size in graphs:
        named, described = BNode(), BNode()
        g.add((dataset, SD.namedGraph, named))
        g.add((named, RDF.type, SD.NamedGraph))
        g.add((named, SD.name, URIRef(iri)))
        g.add((named, SD.graph, described))
        g.add((described, RDF.type, SD.Graph))
        g.add((described, VOID.triples, RDFLiteral(size)))
    return g


async def _service_description(request: Request, params: list[tuple[str, str]]) -> Response:
    settings: Settings = request.app.state.settings
    formats = [value for key, value in params if key == "format"]
    media = _choose("the service description", request.headers.get("accept"), formats,
                    SERVICE_TYPES, SERVICE_FORMATS)

    def sizes(cat: Catalogue) -> list[tuple[str, int]]:
        try:
            return run_with_deadline(cat.store, settings.query_timeout, lambda: cat.graphs(provenance=True))
        except QueryTimeout as exc:
            raise HTTPError(503, _timeout_message(exc)) from None

    graphs = await request.app.state.pool.run(sizes)
    endpoint = endpoint_url(request, settings)
    description = service_description(endpoint, graphs, settings)
    headers = {"Vary": "Accept"}
    if media == HTML:
        turtle = await run_in_threadpool(_serialise_graph, description, "turtle")
        page = _html_page(endpoint, graphs, settings, turtle.decode("utf-8"))
        return Response(page, media_type=_content_type(HTML), headers=headers)
    body = await run_in_threadpool(_serialise_graph, description, SERVICE_TYPES[media])
    return Response(body, media_type=_content_type(media), headers=headers)


_EXAMPLE = """SELECT ?array ?name ?units WHERE {
  ?array a zarr:Array ;
         zarr:path ?name .
  OPTIONAL { ?array zarr:units ?units }
}
ORDER BY ?array
LIMIT 25"""


def _html_page(endpoint: str, graphs: list[tuple[str, int]], settings: Settings, turtle: str) -> str:
    """What a browser opening /sparql sees: a query form, the graphs, the description."""
    e = html.escape
    rows = "\n".join(
        f"<li><code>{e(iri)}</code> ({size:,} triples)</li>" for iri, size in graphs
    ) or "<li>none yet</li>"
    options = "\n".join(
        f'<option value="{value}">{label}</option>'
        for value, label in (("json", "SPARQL JSON"), ("xml", "SPARQL XML"), ("csv", "CSV"),
                             ("tsv", "TSV"), ("turtle", "Turtle (CONSTRUCT/DESCRIBE)"),
                             ("json-ld", "JSON-LD (CONSTRUCT/DESCRIBE)"))
    )
    update = "accepted with the admin token" if settings.admin_token else "disabled (read-only server)"
    return f"""<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>SPARQL endpoint · zarr-catalogue</title>
<style>
body {{ font-family: system-ui, sans-serif; max-width: 60rem; margin: 2rem auto; padding: 0 1rem; line-height: 1.5; }}
textarea {{ width: 100%; font-family: ui-monospace, monospace; font-size: 0.95rem; }}
pre {{ background: #f5f5f5; padding: 1rem; overflow-x: auto; font-size: 0.85rem; }}
</style>
</head>
<body>
<nav><a href="{e((settings.base_url or "") + "/")}">← Catalogue portal</a></nav>
<main>
<h1>SPARQL endpoint</h1>
<p>This is a <a href="https://www.w3.org/TR/sparql11-protocol/">SPARQL 1.1 Protocol</a> endpoint at
<code>{e(endpoint)}</code>. The prefixes {e(", ".join(PREFIXES))} are pre-bound. A query may run
{settings.query_timeout:g}&nbsp;s and return {settings.max_results:,} rows or triples. SPARQL Update is {update}.</p>
<form method="get" action="{e(endpoint)}">
<p><label for="query">Query</label><br>
<textarea id="query" name="query" rows="10">{e(_EXAMPLE)}</textarea></p>
<p><label for="format">Result format</label>
<select id="format" name="format">
{options}
</select>
<button type="submit">Run query</button></p>
</form>
<h2>Named graphs</h2>
<ul>
{rows}
</ul>
<h2>Service description</h2>
<pre>{e(turtle)}</pre>
</main>
</body>
</html>
"""
