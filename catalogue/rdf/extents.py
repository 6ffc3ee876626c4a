"""Extents in the graph: DCAT and GeoSPARQL terms, fixed so users can write queries.

For a node (the hierarchy root, which is the ``dcat:Dataset``, or an array)::

    <node> dct:spatial [ a dct:Location ;
                         dcat:bbox "POLYGON((...))"^^geo:wktLiteral ;      # CRS84
                         dcat:centroid "POINT(lon lat)"^^geo:wktLiteral ;
                         locn:geometry "POLYGON((...))"^^geo:wktLiteral ] ;  # a finer footprint, when given
           dct:temporal [ a dct:PeriodOfTime ;
                          dcat:startDate "..."^^xsd:dateTime ; dcat:endDate "..."^^xsd:dateTime ] ;
           dcat:spatialResolutionInMeters "..."^^xsd:decimal ;
           dcat:temporalResolution "P1D"^^xsd:duration ;
           zarr:crs <http://www.opengis.net/def/crs/EPSG/0/32633> ;   # or a WKT2 literal (zarr:crsWkt)
           zarr:nativeBbox "[minx, miny, maxx, maxy]"^^rdf:JSON ;
           zarr:extentSource [ zarr:figure "bbox" ; zarr:sourceKind "cf:coordinates" ;
                               zarr:sourcePath "lat" ; zarr:sourceDetail "lat, lon" ] .
    <group> zarr:multiscales [ a zarr:Multiscales ; zarr:convention "..." ;
                               zarr:level [ a zarr:MultiscaleLevel ; zarr:levelIndex 0 ;
                                            zarr:asset "0" ; zarr:levelNode <group/0> ;
                                            zarr:scale "[1, 1]"^^rdf:JSON ; ... ] ] .

These are derived triples: the rebuild of the harvested documents never reads them
(``rdf/rebuild.py`` reads only the metadata terms), and a harvest replaces all of them
each run (:func:`extent_statements` lists what to remove), because an unchanged node's
extent can change with its neighbours (the root's is the union of its arrays').
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Callable, Iterable, Iterator
from decimal import Decimal
from typing import TYPE_CHECKING, Any, TypeVar

from rdflib import DCAT, DCTERMS, RDF, SH, XSD, BNode, Graph, Literal, Namespace, URIRef
from rdflib.term import Node as RDFNode

from catalogue.model.extents import (
    CRS84,
    EPSG_IRI,
    Box,
    Extent,
    HierarchyExtents,
    MultiscaleLevel,
    Multiscales,
    NativeCRS,
    Period,
    Source,
    coordinate_text,
)
from catalogue.model.nodes import Hierarchy
from catalogue.rdf.convert import Triple
from catalogue.rdf.ome import ome_triples
from catalogue.rdf.vocabulary import ZARR

if TYPE_CHECKING:  # shapely loads with the first box read from WKT, not with the module
    from shapely.geometry.base import BaseGeometry

__all__ = [
    "GEO",
    "LOCN",
    "budget_findings",
    "budget_stopped",
    "extent_statements",
    "extent_triples",
    "hierarchy_extent_triples",
    "multiscales_triples",
    "read_extent",
    "read_multiscales",
]

log = logging.getLogger(__name__)
_T = TypeVar("_T")
#: An xsd:date or xsd:dateTime lexical form, as a harvest writes them.
_XSD_MOMENT = re.compile(r"-?\d{4,}-\d{2}-\d{2}(T\d{2}:\d{2}:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})?")

GEO = Namespace("http://www.opengis.net/ont/geosparql#")
LOCN = Namespace("http://www.w3.org/ns/locn#")

#: The predicates that hang an extent or a pyramid off a node: what a harvest replaces.
NODE_PREDICATES = (
    DCTERMS.spatial, DCTERMS.temporal, DCAT.spatialResolutionInMeters, DCAT.temporalResolution,
    ZARR.crs, ZARR.crsWkt, ZARR.crsName, ZARR.nativeBbox, ZARR.extentSource, ZARR.multiscales, ZARR.ome,
)


def extent_triples(node: URIRef, extent: Extent) -> list[Triple]:
    """The triples of one node's extent (none for an empty extent)."""
    out: list[Triple] = []
    if extent.bbox is not None or extent.geometry is not None:
        location = BNode()
        out += [(node, DCTERMS.spatial, location), (location, RDF.type, DCTERMS.Location)]
        if extent.bbox is not None:
            lon, lat = extent.bbox.centroid()
            out.append((location, DCAT.bbox, Literal(extent.bbox.wkt(), datatype=GEO.wktLiteral)))
            # an average: 9 decimals (a millimetre) keep 0.15000000000000002 out of the literal
            point = f"POINT({coordinate_text(round(lon, 9))} {coordinate_text(round(lat, 9))})"
            out.append((location, DCAT.centroid, Literal(point, datatype=GEO.wktLiteral)))
        if extent.geometry is not None:
            out.append((location, LOCN.geometry, Literal(extent.geometry, datatype=GEO.wktLiteral)))
    if extent.period is not None:
        period = BNode()
        kind = XSD.date if extent.period.dates_only else XSD.dateTime
        out += [
            (node, DCTERMS.temporal, period), (period, RDF.type, DCTERMS.PeriodOfTime),
            (period, DCAT.startDate, Literal(extent.period.start, datatype=kind, normalize=False)),
            (period, DCAT.endDate, Literal(extent.period.end, datatype=kind, normalize=False)),
        ]
        if extent.period.calendar != "standard":  # proleptic_gregorian differs before 1582
            out.append((period, ZARR.calendar, Literal(extent.period.calendar)))
    if extent.spatial_resolution is not None:
        out.append((node, DCAT.spatialResolutionInMeters,
                    Literal(Decimal(repr(float(extent.spatial_resolution))), datatype=XSD.decimal)))
    if extent.temporal_resolution is not None:
        out.append((node, DCAT.temporalResolution, Literal(extent.temporal_resolution, datatype=XSD.duration, normalize=False)))
    if extent.crs is not None:
        if extent.crs.iri is not None:
            out.append((node, ZARR.crs, URIRef(extent.crs.iri)))
        else:
            out.append((node, ZARR.crsWkt, Literal(extent.crs.wkt2)))
        if extent.crs.name:
            out.append((node, ZARR.crsName, Literal(extent.crs.name)))
    if extent.native_bbox is not None:
        out.append((node, ZARR.nativeBbox, Literal(json.dumps(list(extent.native_bbox)), datatype=RDF.JSON)))
    for figure, source in extent.sources:
        link = BNode()
        out += [(node, ZARR.extentSource, link), (link, ZARR.figure, Literal(figure)),
                (link, ZARR.sourceKind, Literal(source.kind)), (link, ZARR.sourcePath, Literal(source.path))]
        if source.detail:
            out.append((link, ZARR.sourceDetail, Literal(source.detail)))
    return out


def multiscales_triples(h: Hierarchy, pyramid: Multiscales) -> list[Triple]:
    """A group's pyramid: one ``zarr:level`` per level, linked to the level's node when it
    is part of the hierarchy (``zarr:levelNode``), with its asset text as declared."""
    group = URIRef(h.iri(pyramid.path))
    head = BNode()
    out: list[Triple] = [(group, ZARR.multiscales, head), (head, RDF.type, ZARR.Multiscales),
                         (head, ZARR.convention, Literal(pyramid.convention))]
    for prop, values in ((ZARR.axes, pyramid.axes), (ZARR.axisTypes, pyramid.axis_types),
                         (ZARR.axisUnits, pyramid.axis_units), (ZARR.channels, pyramid.channels)):
        if values:
            out.append((head, prop, Literal(json.dumps(list(values), ensure_ascii=False), datatype=RDF.JSON)))
    if pyramid.version:
        out.append((head, ZARR.conventionVersion, Literal(pyramid.version)))
    if pyramid.resampling:
        out.append((head, ZARR.resampling, Literal(pyramid.resampling)))
    for level in pyramid.levels:
        node = BNode()
        out += [(head, ZARR.level, node), (node, RDF.type, ZARR.MultiscaleLevel),
                (node, ZARR.levelIndex, Literal(level.index)), (node, ZARR.asset, Literal(level.asset))]
        target = _join(pyramid.path, level.asset)
        if target in h.nodes:
            out.append((node, ZARR.levelNode, URIRef(h.iri(target))))
        if level.derived_from is not None:
            out.append((node, ZARR.derivedFrom, Literal(level.derived_from)))
        for prop, values in ((ZARR.scale, level.scale), (ZARR.translation, level.translation),
                             (ZARR.cellSize, level.cell_size)):
            if values is not None:
                out.append((node, prop, Literal(json.dumps(list(values)), datatype=RDF.JSON)))
    return out


def hierarchy_extent_triples(h: Hierarchy, extents: HierarchyExtents) -> list[Triple]:
    """Every extent, pyramid and OME-Zarr structure (:mod:`.ome`) of a harvested
    hierarchy, for nodes that are in it."""
    out: list[Triple] = []
    for path, extent in sorted(extents.nodes.items()):
        if path in h.nodes and not extent.empty:
            out += extent_triples(URIRef(h.iri(path)), extent)
    for _path, pyramid in sorted(extents.multiscales.items()):
        if pyramid.path in h.nodes:
            out += multiscales_triples(h, pyramid)
    for path, image in sorted(extents.ome.items()):
        if path in h.nodes:
            out += ome_triples(h, path, image, extents.ome)
    return out


def extent_statements(graph: Graph, nodes: Iterable[RDFNode] | None = None) -> Iterator[Triple]:
    """The extent and pyramid triples in ``graph`` (of ``nodes``, or of every node): the
    links from the nodes and everything below their blank nodes, for a harvest to remove."""
    subjects = None if nodes is None else list(nodes)
    for predicate in NODE_PREDICATES:
        pairs = (graph.subject_objects(predicate) if subjects is None
                 else [(node, o) for node in subjects for o in graph.objects(node, predicate)])
        for subject, obj in pairs:
            yield subject, predicate, obj
            if isinstance(obj, BNode):
                yield from _below(graph, obj, set())


def _below(graph: Graph, node: BNode, seen: set[BNode]) -> Iterator[Triple]:
    if node in seen:
        return
    seen.add(node)
    for p, o in graph.predicate_objects(node):
        yield node, p, o
        if isinstance(o, BNode):
            yield from _below(graph, o, seen)


def read_extent(graph: Graph, node: URIRef) -> Extent | None:
    """The extent stored for ``node``, or ``None`` when the harvest found none.

    Never raises on odd graph content (triples loaded by hand, an older harvest, a
    SPARQL UPDATE): each figure that does not read back (a box that is not CRS84 WKT,
    a date ``xsd:date`` cannot hold, a native box that is not 4 numbers) is skipped,
    logged at WARNING with the node, and the others are returned.
    """

    def figure(name: str, read: Callable[[], _T]) -> _T | None:
        try:
            return read()
        except (ValueError, TypeError, ArithmeticError, KeyError, AttributeError) as exc:
            log.warning("%s: the stored %s does not read back, skipped: %s", node, name, exc)
            return None

    location = graph.value(node, DCTERMS.spatial)
    bbox = figure("bbox", lambda: _stored_box(graph, location))
    geometry = figure("geometry", lambda: _stored_text(graph, location, LOCN.geometry))
    period = figure("period", lambda: _stored_period(graph, graph.value(node, DCTERMS.temporal)))
    crs = figure("crs", lambda: _stored_crs(graph, node))
    native = figure("native box", lambda: _stored_native_box(graph.value(node, ZARR.nativeBbox)))
    resolution = figure("spatial resolution", lambda: _stored_resolution(graph.value(node, DCAT.spatialResolutionInMeters)))
    step = graph.value(node, DCAT.temporalResolution)
    sources = []
    for link in graph.objects(node, ZARR.extentSource):
        figure_name, kind = graph.value(link, ZARR.figure), graph.value(link, ZARR.sourceKind)
        if figure_name is None or kind is None:
            continue
        detail = graph.value(link, ZARR.sourceDetail)
        sources.append((str(figure_name), Source(str(kind), str(graph.value(link, ZARR.sourcePath) or ""),
                                                 str(detail) if detail is not None else "")))
    extent = Extent(
        bbox=bbox, geometry=geometry, crs=crs, native_bbox=native, spatial_resolution=resolution,
        period=period, temporal_resolution=str(step) if step is not None else None,
        sources=tuple(sorted(sources, key=lambda pair: (pair[0], pair[1].kind, pair[1].path, pair[1].detail))),
    )
    return None if extent.empty else extent


def _stored_box(graph: Graph, location: RDFNode | None) -> Box | None:
    box = graph.value(location, DCAT.bbox) if location is not None else None
    return box_from_wkt(str(box)) if box is not None else None


def _stored_text(graph: Graph, location: RDFNode | None, predicate: URIRef) -> str | None:
    value = graph.value(location, predicate) if location is not None else None
    return str(value) if value is not None else None


def _stored_period(graph: Graph, temporal: RDFNode | None) -> Period | None:
    if temporal is None:
        return None
    start, end = graph.value(temporal, DCAT.startDate), graph.value(temporal, DCAT.endDate)
    if start is None or end is None:
        return None
    for moment in (start, end):
        # xsd:date or xsd:dateTime lexical forms (any year: Period.instants says which
        # ones search can compare); anything else ("garbage") is not a period.
        if not isinstance(moment, Literal) or not _XSD_MOMENT.fullmatch(str(moment)):
            raise ValueError(f"{str(moment)[:80]!r} is not an xsd:date or xsd:dateTime")
    calendar = graph.value(temporal, ZARR.calendar)
    return Period(str(start), str(end), str(calendar) if calendar is not None else "standard")


def _stored_crs(graph: Graph, node: URIRef) -> NativeCRS | None:
    crs_iri, crs_wkt, crs_name = graph.value(node, ZARR.crs), graph.value(node, ZARR.crsWkt), graph.value(node, ZARR.crsName)
    if crs_iri is not None and str(crs_iri).startswith(EPSG_IRI):
        return NativeCRS(epsg=int(str(crs_iri)[len(EPSG_IRI):]), name=str(crs_name or ""))
    if crs_wkt is not None:
        return NativeCRS(wkt2=str(crs_wkt), name=str(crs_name or ""))
    return None


def _stored_native_box(value: RDFNode | None) -> tuple[float, float, float, float] | None:
    if value is None:
        return None
    numbers = json.loads(str(value))
    if not isinstance(numbers, list) or len(numbers) != 4 or not all(_finite(v) for v in numbers):
        raise ValueError(f"a native box is 4 finite numbers, got {str(value)[:80]!r}")
    minx, miny, maxx, maxy = (float(v) for v in numbers)
    return minx, miny, maxx, maxy


def _stored_resolution(value: RDFNode | None) -> float | None:
    if value is None:
        return None
    number = float(str(value))
    if not math.isfinite(number) or number <= 0:
        raise ValueError(f"a resolution is a positive number of metres, got {str(value)[:80]!r}")
    return number


def _finite(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def read_multiscales(graph: Graph, group: URIRef) -> Multiscales | None:
    """The pyramid stored for ``group``, levels ordered by index, or ``None``."""
    head = graph.value(group, ZARR.multiscales)
    if head is None:
        return None
    levels = []
    for node in graph.objects(head, ZARR.level):
        index, asset = graph.value(node, ZARR.levelIndex), graph.value(node, ZARR.asset)
        if index is None or asset is None:
            continue
        derived = graph.value(node, ZARR.derivedFrom)
        levels.append(MultiscaleLevel(
            index=int(index), asset=str(asset), derived_from=str(derived) if derived is not None else None,
            scale=_floats(graph.value(node, ZARR.scale)), translation=_floats(graph.value(node, ZARR.translation)),
            cell_size=_floats(graph.value(node, ZARR.cellSize)),
        ))
    def json_list(prop: URIRef) -> tuple[Any, ...]:
        value = graph.value(head, prop)
        return tuple(json.loads(str(value))) if value is not None else ()

    resampling = graph.value(head, ZARR.resampling)
    version = graph.value(head, ZARR.conventionVersion)
    path = graph.value(group, ZARR.path)
    return Multiscales(
        path=str(path) if path is not None else "",
        levels=tuple(sorted(levels, key=lambda level: level.index)),
        convention=str(graph.value(head, ZARR.convention) or ""),
        axes=json_list(ZARR.axes), resampling=str(resampling) if resampling is not None else None,
        axis_types=json_list(ZARR.axisTypes), axis_units=json_list(ZARR.axisUnits), channels=json_list(ZARR.channels),
        version=str(version) if version is not None else None,
    )


def box_from_wkt(text: str) -> Box | None:
    """The :class:`Box` of a CRS84 ``POLYGON``/``MULTIPOLYGON`` literal, parsed by shapely:
    two rectangles meeting at ±180 (what :meth:`Box.wkt` writes for a box across the
    antimeridian) are that one box; any other geometry is its envelope. ``None`` for an
    empty geometry; :class:`ValueError` for text that is not WKT, a CRS other than CRS84,
    or coordinates outside CRS84's ranges."""
    text = text.strip()
    if text.startswith("<"):
        iri, _, text = text[1:].partition(">")
        if iri.strip() not in (CRS84, "http://www.opengis.net/def/crs/OGC/1.3/CRS84/"):
            raise ValueError(f"a box must be in CRS84, got <{iri.strip()[:100]}>")
    import shapely
    from shapely.errors import ShapelyError
    from shapely.geometry import MultiPolygon

    try:
        shape = shapely.from_wkt(text.strip())
    except (ShapelyError, TypeError) as exc:
        raise ValueError(f"not WKT: {text[:80]!r} ({exc})") from None
    if shape is None or shape.is_empty:
        return None
    parts = list(shape.geoms) if isinstance(shape, MultiPolygon) else [shape]
    if len(parts) == 2 and all(_rectangle(p) for p in parts):
        # the eastern part (ending at 180) first, whichever order the literal has
        (a_west, a_south, a_east, a_north), (b_west, b_south, b_east, b_north) = sorted(
            (p.bounds for p in parts), key=lambda bounds: bounds[2] != 180)
        if a_east == 180 and b_west == -180 and (a_south, a_north) == (b_south, b_north) and a_west > b_east:
            return Box(a_west, a_south, b_east, a_north)
    west, south, east, north = shape.bounds
    return Box(west, south, east, north)


def _rectangle(shape: BaseGeometry) -> bool:
    """An axis-aligned rectangle: a polygon without holes whose corners are its envelope's."""
    from shapely.geometry import Polygon

    if not isinstance(shape, Polygon) or shape.interiors:
        return False
    minx, miny, maxx, maxy = shape.bounds
    return {(x, y) for x, y, *_ in shape.exterior.coords} == {(minx, miny), (maxx, miny), (maxx, maxy), (minx, maxy)}


def _floats(value: RDFNode | None) -> tuple[float, ...] | None:
    return tuple(float(v) for v in json.loads(str(value))) if value is not None else None


def _join(group: str, asset: str) -> str:
    asset = asset.strip("/")
    return f"{group}/{asset}" if group else asset


# ------------------------------------------------------------- extents not read
#: The rule of the finding a harvest stores when the coordinate byte budget stopped a read.
BUDGET_RULE = "extent.values-budget"
#: What the portal and ``catalogue extent`` say instead of "declares no extent".
NOT_READ = "not read: the coordinate byte budget was spent; harvest with --coordinate-bytes N"


def budget_findings(graph: Graph) -> list[tuple[str, str]]:
    """``(node path, message)`` of each ``extent.values-budget`` finding in the SHACL
    report stored with ``graph`` (``rdf/shacl.py``): the coordinate arrays whose values
    the byte budget left unread."""
    out = []
    for result in graph.subjects(ZARR.rule, Literal(BUDGET_RULE)):
        focus, message = graph.value(result, SH.focusNode), graph.value(result, SH.resultMessage)
        path = graph.value(focus, ZARR.path) if focus is not None else None
        if path is not None:
            out.append((str(path), str(message or "")))
    return sorted(out)


def budget_stopped(node_path: str, kind: str, uses: Iterable[str],
                   findings: Iterable[tuple[str, str]]) -> list[str]:
    """The messages of the budget findings that concern a node's extent: for a group,
    those of every array below it (the root's extent is the union of its arrays'); for
    an array, those of the array itself and of the coordinate arrays it names (``uses``:
    its dimension names and ``coordinates``/``bounds`` names). Empty when the budget
    stopped nothing the node needs."""
    names = set(uses)
    prefix = f"{node_path}/" if node_path else ""
    out = []
    for path, message in findings:
        if kind == "group":
            concerns = path.startswith(prefix)
        else:
            concerns = path == node_path or path.rsplit("/", 1)[-1] in names
        if concerns:
            out.append(message)
    return out


def names_used(documents: dict[str, Any] | None) -> set[str]:
    """An array's dimension names and the names in its ``coordinates`` and ``bounds``
    attributes, from its metadata documents (v3 ``zarr.json`` or v2 ``.zarray``/``.zattrs``)."""
    if not documents:
        return set()
    v3 = documents.get("zarr.json")
    attributes = (v3.get("attributes") if isinstance(v3, dict) else documents.get(".zattrs")) or {}
    if not isinstance(attributes, dict):
        attributes = {}
    dims = v3.get("dimension_names") if isinstance(v3, dict) else attributes.get("_ARRAY_DIMENSIONS")
    out = {d for d in dims if isinstance(d, str)} if isinstance(dims, list) else set()
    for key in ("coordinates", "bounds"):
        if isinstance(attributes.get(key), str):
            out.update(attributes[key].split())
    return out
