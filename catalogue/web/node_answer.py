"""What ``/node`` answers for one node: its representations, body, ETag and ``Link`` header.

The representations and their media types come from the format table
(:mod:`catalogue.rdf.formats`); the RDF description is
:func:`catalogue.rdf.closure.node_description`, serialised by
:func:`catalogue.rdf.describe.serialize_triples`; the JSON representation is
the node's Zarr metadata documents rebuilt from the graph
(:func:`catalogue.rdf.rebuild.rebuild_documents`). See :mod:`catalogue.web.nodes`
for the route and what each representation holds.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from urllib.parse import quote

from rdflib import URIRef

from catalogue.api import Catalogue
from catalogue.rdf.closure import node_description
from catalogue.rdf.describe import serialize_triples
from catalogue.rdf.export import triple_line
from catalogue.rdf.formats import JSONLD, NTRIPLES, TURTLE
from catalogue.rdf.rebuild import node_kind, rebuild_documents
from catalogue.rdf.vocabulary import ZARR

from .http.links import iri_to_uri
from .http.negotiation import Representation

#: Link relation types of our own (RFC 8288 extension relation types are URIs).
REL_TENSORSTORE = "https://w3id.org/zarr-catalogue/rel/tensorstore-spec"
REL_CHUNKS = "https://w3id.org/zarr-catalogue/rel/chunks"

HTML = Representation("html", "text/html")
NODE_FORMATS: tuple[Representation, ...] = (
    Representation.of("turtle", TURTLE),
    Representation.of("ntriples", NTRIPLES),
    Representation.of("jsonld", JSONLD),
    Representation("json", "application/json"),
    HTML,
)


@dataclass
class NodeAnswer:
    """What one request for a node found: enough to build headers and body."""

    iri: str
    dataset: str
    kind: str
    body: bytes
    etag: str


def etag_digest(*parts: str) -> str:
    """A strong entity tag's value: a digest of ``parts`` (each ended by a NUL, so parts cannot run together)."""
    h = hashlib.blake2b(digest_size=16)
    for part in parts:
        h.update(part.encode("utf-8", "surrogatepass"))
        h.update(b"\x00")
    return h.hexdigest()


def load_node(cat: Catalogue, iri: str, rep: Representation) -> NodeAnswer:
    """Find node ``iri`` and build its representation ``rep`` (on a worker thread)."""
    graph = cat.node_graph(iri)
    kind = node_kind(graph, iri)
    fingerprint = graph.value(URIRef(iri), ZARR.fingerprint)
    if rep.name == "json":
        documents = rebuild_documents(graph, iri)
        # allow_nan: attributes may hold NaN/Infinity, which zarr-python writes as bare tokens
        body = json.dumps(documents, ensure_ascii=False, indent=2, allow_nan=True).encode() + b"\n"
        tag = etag_digest("json", str(fingerprint)) if fingerprint is not None else etag_digest("json", body.decode())
    elif rep is HTML:  # a redirect: the links need the kind and the dataset only
        body, tag = b"", ""
    else:
        assert rep.rdf is not None
        triples = node_description(graph, iri)
        lines = [triple_line(*t) for t in triples]
        tag = etag_digest(rep.name, str(fingerprint or ""), *sorted(lines))
        body = serialize_triples(triples, rep.rdf, lines)
    return NodeAnswer(iri, str(graph.identifier), kind, body, f'"{tag}"')


def node_link_header(base: str, answer: NodeAnswer, current: Representation | None) -> str:
    """The ``Link`` header of a node's representations (RFC 8288)."""
    q = quote(answer.iri, safe="")
    links = [f'<{iri_to_uri(answer.iri)}>; rel="describes"']
    for rep in NODE_FORMATS:
        if rep is HTML:
            links.append(f'<{base}/browse?iri={q}>; rel="alternate"; type="text/html"')
        elif rep is not current:
            links.append(f'<{base}/node?iri={q}&format={rep.name}>; rel="alternate"; type="{rep.media_type}"')
    if answer.dataset != answer.iri:
        links.append(f'<{base}/node?iri={quote(answer.dataset, safe="")}>; rel="collection"; title="dataset"')
    if answer.kind == "array":
        links.append(f'<{base}/node/tensorstore?iri={q}>; rel="{REL_TENSORSTORE}"; type="application/json"')
        links.append(f'<{base}/node/chunks?iri={q}>; rel="{REL_CHUNKS}"; type="application/json"')
    return ", ".join(links)
