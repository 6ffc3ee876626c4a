"""Building the index: the whole catalogue read with a fixed number of set-oriented queries.

See :mod:`catalogue.discovery.index` (Building) for the design and its costs.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Iterable
from typing import Any, Protocol

from rdflib import RDF, Literal, URIRef

from catalogue.model.codecs import codec_name, inner_codec_names, normalise_codec_name
from catalogue.model.datatypes import v3_vocabulary_name
from catalogue.model.extents import Extent, Period
from catalogue.rdf.dcat import iri_name
from catalogue.rdf.extents import box_from_wkt
from catalogue.rdf.provenance import HARVESTS_GRAPH

from .index import DatasetIndex, DatasetSummary, Variable
from .normalise import fold, json_value, parse_time

log = logging.getLogger(__name__)


class GraphIds(Protocol):
    def graph_ids(self) -> Iterable[Any]: ...


class CatalogueReader(Protocol):
    """What building needs of a catalogue (a :class:`catalogue.api.Catalogue` is one): SPARQL and graph ids."""

    @property
    def store(self) -> GraphIds: ...

    def query(self, sparql: str) -> Any: ...


#: One query per property: ``GRAPH ?g { ?s <p> ?o }`` is one index range scan.
_PROPERTY_QUERY = "SELECT ?g ?s ?o WHERE {{ GRAPH ?g {{ ?s {p} ?o }} }}"
_TYPE_QUERY = "SELECT ?g ?s WHERE {{ GRAPH ?g {{ ?s a {c} }} }}"
_RUNS_QUERY = f"SELECT ?run ?ended WHERE {{ GRAPH <{HARVESTS_GRAPH}> {{ ?run prov:endedAtTime ?ended }} }}"
_CELLS_QUERY = "SELECT ?g ?c ?first ?rest WHERE { GRAPH ?g { ?c rdf:first ?first ; rdf:rest ?rest } }"
_SHARDING_QUERY = (
    'SELECT ?g ?c ?conf WHERE { GRAPH ?g { ?c zarr:name "sharding_indexed" ; zarr:configuration ?conf } }'
)
_SIGNATURE_QUERY = (
    f"SELECT (COUNT(?run) AS ?runs) (MAX(?ended) AS ?last) "
    f"WHERE {{ GRAPH <{HARVESTS_GRAPH}> {{ ?run prov:endedAtTime ?ended }} }}"
)
_SEVERITIES = {"http://www.w3.org/ns/shacl#Violation", "http://www.w3.org/ns/shacl#Warning"}


def catalogue_signature(cat: CatalogueReader) -> tuple[Any, ...]:
    """What changes whenever a harvest ran or a graph appeared or went (cheap: two queries)."""
    row = next(iter(cat.query(_SIGNATURE_QUERY)), None)
    runs = int(row[0]) if row is not None and row[0] is not None else 0
    last = str(row[1]) if row is not None and row[1] is not None else ""
    graphs = tuple(sorted(str(g) for g in cat.store.graph_ids()))
    return runs, last, graphs


def _text(node: Any) -> str | None:
    return None if node is None else str(node)


def _json_or_text(node: Any) -> Any:
    """The Python value of a list item: numbers and strings as such, rdf:JSON parsed."""
    if isinstance(node, Literal):
        if node.datatype is not None and str(node.datatype) == str(RDF.JSON):
            try:
                return json.loads(str(node))
            except ValueError:
                return str(node)
        value = node.toPython()
        return value if isinstance(value, int | float | str | bool) else str(node)
    return node


class _Lists:
    """RDF lists of all graphs, rebuilt from their cells (keyed by graph and cell)."""

    def __init__(self, cells: dict[tuple[str, Any], tuple[Any, Any]]) -> None:
        self.cells = cells

    def items(self, graph: str, head: Any) -> list[Any] | None:
        """The items of the list starting at ``head`` (None when ``head`` is not a list)."""
        if head == RDF.nil:
            return []
        out: list[Any] = []
        seen: set[Any] = set()
        cell = head
        while cell != RDF.nil:
            entry = self.cells.get((graph, cell))
            if entry is None or cell in seen or len(out) > 10_000:
                return out if out else None
            seen.add(cell)
            out.append(entry[0])
            cell = entry[1]
        return out


def _select(cat: CatalogueReader, query: str) -> list[tuple[Any, ...]]:
    """The rows of a SELECT as plain tuples, in projection order.

    Reading ``Result.bindings`` (the solution dicts) skips building one
    rdflib ``ResultRow`` per row, a third of the build time.
    """
    result = cat.query(query)
    names = list(result.vars or ())
    return [tuple(b.get(v) for v in names) for b in result.bindings]


def _root_extent(graph: str, root: Any, spatial: dict, bboxes: dict, temporal: dict, starts: dict,
                 ends: dict, calendars: dict) -> Extent | None:
    """The root's CRS84 box and period, what search filters on (the full extent, with its
    CRS, resolutions and sources, is read per dataset by ``rdf/extents.py``)."""
    location, span = spatial.get((graph, root)), temporal.get((graph, root))
    wkt = bboxes.get((graph, location)) if location is not None else None
    start = starts.get((graph, span)) if span is not None else None
    end = ends.get((graph, span)) if span is not None else None
    try:
        box = box_from_wkt(str(wkt)) if wkt is not None else None
        calendar = calendars.get((graph, span)) if span is not None else None
        period = (Period(str(start), str(end), str(calendar) if calendar is not None else "standard")
                  if start is not None and end is not None else None)
    except ValueError:
        log.warning("dataset %s: unreadable extent %r %r %r", graph, wkt, start, end)
        return None
    return Extent(bbox=box, period=period) if box is not None or period is not None else None


def build_index(cat: CatalogueReader) -> DatasetIndex:
    """Read the whole catalogue with a fixed number of set-oriented queries; return its index."""
    started = time.perf_counter()
    signature = catalogue_signature(cat)

    def prop(p: str) -> list[Any]:
        return _select(cat, _PROPERTY_QUERY.format(p=p))

    roots = {str(g) for g, s in _select(cat, _TYPE_QUERY.format(c="dcat:Dataset")) if g == s}
    arrays = {(str(g), s) for g, s in _select(cat, _TYPE_QUERY.format(c="zarr:Array")) if str(g) in roots}
    groups = {(str(g), s) for g, s in _select(cat, _TYPE_QUERY.format(c="zarr:Group")) if str(g) in roots}

    def by_node(p: str) -> dict[tuple[str, Any], Any]:
        return {(str(g), s): o for g, s, o in prop(p) if str(g) in roots}

    title, description, zarr_format = by_node("dct:title"), by_node("dct:description"), by_node("zarr:zarrFormat")
    generated_by = by_node("prov:wasGeneratedBy")
    keywords: dict[str, set[str]] = {}
    for g, s, o in prop("dcat:keyword"):
        if str(g) in roots and str(s) == str(g):
            keywords.setdefault(str(g), set()).add(str(o))
    ended = {run: parse_time(str(t)) for run, t in _select(cat, _RUNS_QUERY)}
    paths, valid = by_node("zarr:path"), by_node("zarr:valid")
    label, standard, units, dtype = (by_node("rdfs:label"), by_node("zarr:standardName"),
                                     by_node("zarr:units"), by_node("zarr:dataType"))
    shape, chunk_shape = by_node("zarr:shape"), by_node("zarr:chunkShape")
    dimension_names, codec_lists = by_node("zarr:dimensionNames"), by_node("zarr:codecs")
    names = by_node("zarr:name")
    lists = _Lists({(str(g), c): (first, rest) for g, c, first, rest in _select(cat, _CELLS_QUERY)
                    if str(g) in roots})
    sharding = {(str(g), c): str(conf) for g, c, conf in _select(cat, _SHARDING_QUERY)}
    spatial, bboxes = by_node("dct:spatial"), by_node("dcat:bbox")
    temporal, starts, ends = by_node("dct:temporal"), by_node("dcat:startDate"), by_node("dcat:endDate")
    calendars = by_node("zarr:calendar")
    severities = by_node("sh:resultSeverity")
    rules: dict[str, set[str]] = {}
    for g, r, rule in prop("zarr:rule"):
        if str(g) in roots and str(severities.get((str(g), r))) in _SEVERITIES:
            rules.setdefault(str(g), set()).add(str(rule))

    def int_list(graph: str, head: Any) -> list[int] | None:
        items = None if head is None else lists.items(graph, head)
        if items is None:
            return None
        values = [_json_or_text(i) for i in items]
        return values if all(type(v) is int for v in values) else None

    def codec_names(graph: str, head: Any) -> list[str]:
        items = None if head is None else lists.items(graph, head)
        out: list[str] = []
        for item in items or []:
            found = names.get((graph, item))
            name: str | None = str(found) if isinstance(found, Literal) else None
            if found is None:
                value = _json_or_text(item)
                name = codec_name(value)
                if name is None and isinstance(value, dict) and isinstance(value.get("id"), str):
                    name = value["id"]  # a v2 compressor or filter
            if name is None:
                continue
            out.append(normalise_codec_name(name))
            if name == "sharding_indexed":
                out += inner_codec_names(json_value(sharding.get((graph, item))))
        return list(dict.fromkeys(out))

    variables: dict[str, list[Variable]] = {}
    for graph, node in arrays:
        head = dimension_names.get((graph, node))
        dims_items = lists.items(graph, head) if head is not None else None
        dims = [v if isinstance(v, str) else "" for v in map(_json_or_text, dims_items or [])]
        codecs = codec_names(graph, codec_lists.get((graph, node)))
        native = _text(dtype.get((graph, node)))
        path = _text(paths.get((graph, node))) or ""
        iri = str(node)
        flag = valid.get((graph, node))
        variables.setdefault(graph, []).append(Variable(
            iri=iri, path=path, name=path.rsplit("/", 1)[-1] if path else iri.rstrip("/").rsplit("/", 1)[-1],
            long_name=_text(label.get((graph, node))), standard_name=_text(standard.get((graph, node))),
            units=_text(units.get((graph, node))), dtype=v3_vocabulary_name(native, codecs),
            shape=int_list(graph, shape.get((graph, node))), dimensions=dims,
            chunks=int_list(graph, chunk_shape.get((graph, node))), codecs=codecs,
            valid=None if flag is None else bool(flag.toPython()), native_dtype=native,
        ))

    flags: dict[str, list[bool]] = {}
    for (graph, _node), flag in valid.items():
        flags.setdefault(graph, []).append(bool(flag.toPython()))
    group_counts: dict[str, int] = {}
    for graph, _node in groups:
        group_counts[graph] = group_counts.get(graph, 0) + 1

    datasets: list[DatasetSummary] = []
    for graph in roots:
        key = (graph, URIRef(graph))
        fmt = zarr_format.get(key)
        fmt_value = fmt.toPython() if isinstance(fmt, Literal) else None
        run = generated_by.get(key)
        found = flags.get(graph, [])
        datasets.append(DatasetSummary(
            iri=graph,
            title=_text(title.get(key)) or iri_name(graph),
            summary=_text(description.get(key)),
            keywords=sorted(keywords.get(graph, ()), key=lambda k: (fold(k), k)),
            zarr_format=fmt_value if type(fmt_value) is int else None,
            harvested=ended.get(run) if run is not None else None,
            valid=all(found) if found else None,
            groups=group_counts.get(graph, 0),
            arrays=len(variables.get(graph, [])),
            variables=sorted(variables.get(graph, []), key=lambda v: v.path),
            rules=sorted(rules.get(graph, ())),
            extent=_root_extent(graph, key[1], spatial, bboxes, temporal, starts, ends, calendars),
        ))
    index = DatasetIndex(datasets, signature=signature)
    index.build_seconds = time.perf_counter() - started
    log.info("dataset index: %d datasets built in %.2f s", len(datasets), index.build_seconds)
    return index
