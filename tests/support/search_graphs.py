"""Dataset graphs written by hand from summaries, for search tests that need exact datasets.

:func:`dataset_triples` writes what the converter and the harvest write for the fields the
search index reads (root typed ``dcat:Dataset`` named like its graph, title, description,
keywords, format, the generating run with its end time in the provenance graph, arrays
with their lists, codecs, flags, findings, the root's extent), so that a test can put a
:class:`~catalogue.discovery.summary.DatasetSummary` into a real catalogue and check that
the index gives it back, and search it, on both databases.
"""

from __future__ import annotations

from collections.abc import Iterable

from rdflib import DCAT, DCTERMS, PROV, RDF, RDFS, SH, XSD, BNode, Literal, URIRef
from rdflib.collection import Collection
from rdflib.graph import Graph

import catalogue
from catalogue.discovery.summary import DatasetSummary, Variable
from catalogue.rdf.extents import extent_triples
from catalogue.rdf.provenance import HARVESTS_GRAPH, timestamp
from catalogue.rdf.vocabulary import RDF_JSON, ZARR


def _list(values: Iterable[object]) -> tuple[BNode | URIRef, list[tuple]]:
    scratch = Graph()
    head = BNode()
    Collection(scratch, head, list(values))  # type: ignore[arg-type]
    items = list(scratch)
    return (head if items else RDF.nil), items


def _literal(value: object) -> Literal:
    if value is None or isinstance(value, dict | list):
        import json

        return Literal(json.dumps(value), datatype=RDF_JSON)
    return Literal(value)


def variable_triples(v: Variable) -> list[tuple]:
    node = URIRef(v.iri)
    out: list[tuple] = [(node, RDF.type, ZARR.Array), (node, ZARR.path, Literal(v.path))]
    if v.long_name is not None:
        out.append((node, RDFS.label, Literal(v.long_name)))
    if v.standard_name is not None:
        out.append((node, ZARR.standardName, Literal(v.standard_name)))
    if v.units is not None:
        out.append((node, ZARR.units, Literal(v.units)))
    if v.native_dtype is not None:
        out.append((node, ZARR.dataType, Literal(v.native_dtype)))
    for predicate, values in ((ZARR.shape, v.shape), (ZARR.chunkShape, v.chunks)):
        if values is not None:
            head, cells = _list(Literal(n, datatype=XSD.integer) for n in values)
            out += [(node, predicate, head), *cells]
    head, cells = _list(_literal(d) for d in v.dimensions)
    out += [(node, ZARR.dimensionNames, head), *cells]
    codecs = []
    for name in v.codecs:
        codec = BNode()
        codecs.append(codec)
        out.append((codec, ZARR.name, Literal(name)))
    head, cells = _list(codecs)
    out += [(node, ZARR.codecs, head), *cells]
    if v.valid is not None:
        out.append((node, ZARR.valid, Literal(v.valid)))
    return out


def dataset_triples(d: DatasetSummary, *, run: str | None = None) -> tuple[list[tuple], list[tuple]]:
    """The triples of ``d``'s graph, and those of its run in the provenance graph."""
    root = URIRef(d.iri)
    out: list[tuple] = [(root, RDF.type, DCAT.Dataset), (root, RDF.type, ZARR.Group),
                        (root, ZARR.path, Literal("")), (root, DCTERMS.title, Literal(d.title))]
    if d.summary is not None:
        out.append((root, DCTERMS.description, Literal(d.summary)))
    out += [(root, DCAT.keyword, Literal(k)) for k in d.keywords]
    if d.zarr_format is not None:
        out.append((root, ZARR.zarrFormat, Literal(d.zarr_format)))
    for n in range(1, d.groups):
        group = URIRef(f"{d.iri}/group{n}")
        out += [(group, RDF.type, ZARR.Group), (group, ZARR.path, Literal(f"group{n}"))]
    for v in d.variables:
        out += variable_triples(v)
    if d.valid is not None and not any(v.valid is not None for v in d.variables):
        out.append((root, ZARR.valid, Literal(d.valid)))
    report = URIRef(f"{d.iri}#report")
    for rule in d.rules:
        result = BNode()
        out += [(report, SH.result, result), (result, SH.resultSeverity, SH.Violation),
                (result, ZARR.rule, Literal(rule))]
    if d.extent is not None:
        out += extent_triples(root, d.extent)
    provenance: list[tuple] = []
    if d.harvested is not None:
        activity = URIRef(run or f"urn:test:run:{d.iri}")
        out.append((root, PROV.wasGeneratedBy, activity))
        provenance += [(activity, RDF.type, ZARR.HarvestRun), (activity, PROV.endedAtTime, timestamp(d.harvested))]
    return out, provenance


def write_datasets(cat: catalogue.Catalogue, datasets: Iterable[DatasetSummary]) -> None:
    """Write the datasets' graphs (each replaced whole) in one transaction of ``cat``."""
    with cat.store.write_transaction():
        for d in datasets:
            triples, provenance = dataset_triples(d)
            cat.store.replace_graph(URIRef(d.iri), triples)
            cat.store.addN((s, p, o, HARVESTS_GRAPH) for s, p, o in provenance)


def summary(iri: str, title: str, *, keywords: Iterable[str] = (), variables: Iterable[Variable] = (),
            summary_text: str | None = None, harvested=None, extent=None, groups: int = 1,
            valid: bool | None = None) -> DatasetSummary:
    found = list(variables)
    return DatasetSummary(iri=iri, title=title, summary=summary_text, keywords=list(keywords), zarr_format=3,
                          harvested=harvested, valid=valid, groups=groups, arrays=len(found),
                          variables=sorted(found, key=lambda v: v.path), rules=[], extent=extent)


def variable(iri: str, name: str, long_name: str | None = None, **kw: object) -> Variable:
    fields: dict = {"standard_name": None, "units": None, "dtype": "float32", "shape": [1], "dimensions": ["x"],
                    "chunks": [1], "codecs": ["bytes"], "valid": None, "native_dtype": "float32"}
    fields.update(kw)
    return Variable(iri=f"{iri}/{name}", path=name, name=name, long_name=long_name, **fields)
