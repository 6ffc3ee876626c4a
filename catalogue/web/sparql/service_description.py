"""The SPARQL 1.1 Service Description of the endpoint (``GET /sparql`` without a query).

What a client or a browser learns about the endpoint before querying: the
languages (Update only with an admin token), result formats, the default dataset
(the union of the named graphs) and every named graph with its size, the limits.
"""

from __future__ import annotations

import html
from collections.abc import Iterable

from fastapi import Request
from fastapi.responses import Response
from rdflib import RDF, RDFS, BNode, Graph, Namespace, URIRef
from rdflib import Literal as RDFLiteral
from rdflib.namespace import DCTERMS, XSD
from starlette.concurrency import run_in_threadpool

from catalogue.api import Catalogue
from catalogue.graph.deadline import run_with_deadline
from catalogue.rdf.results import serialise_graph
from catalogue.rdf.vocabulary import PREFIXES

from ..settings import Settings
from .errors import http_errors
from .media import HTML, SERVICE_NAMES, SERVICE_TYPES, choose, content_type

__all__ = ["describe_service", "endpoint_url", "service_description"]

SD = Namespace("http://www.w3.org/ns/sparql-service-description#")
FORMATS = Namespace("http://www.w3.org/ns/formats/")
VOID = Namespace("http://rdfs.org/ns/void#")
ENTAILMENT = Namespace("http://www.w3.org/ns/entailment/")


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


async def describe_service(request: Request, params: list[tuple[str, str]]) -> Response:
    """``GET /sparql`` without a query: the description as RDF, or as a page for browsers."""
    settings: Settings = request.app.state.settings
    formats = [value for key, value in params if key == "format"]
    media = choose("the service description", request.headers.get("accept"), formats,
                   SERVICE_TYPES, SERVICE_NAMES)

    def sizes(cat: Catalogue) -> list[tuple[str, int]]:
        return run_with_deadline(cat.store, settings.query_timeout, lambda: cat.graphs(provenance=True))

    with http_errors():
        graphs = await request.app.state.pool.run(sizes)
    endpoint = endpoint_url(request, settings)
    description = service_description(endpoint, graphs, settings)
    headers = {"Vary": "Accept"}
    if media == HTML:
        turtle = await run_in_threadpool(serialise_graph, description, "turtle")
        page = _html_page(endpoint, graphs, settings, turtle.decode("utf-8"))
        return Response(page, media_type=content_type(HTML), headers=headers)
    body = await run_in_threadpool(serialise_graph, description, SERVICE_TYPES[media])
    return Response(body, media_type=content_type(media), headers=headers)


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
