"""Extents in the graph: written with the fixed DCAT/GeoSPARQL names, read back equal."""

from __future__ import annotations

import json
import logging

import pytest
from rdflib import DCAT, DCTERMS, RDF, XSD, BNode, Graph, Literal, URIRef

from catalogue.model.extents import (
    Box,
    Extent,
    MultiscaleLevel,
    Multiscales,
    NativeCRS,
    Period,
    Source,
)
from catalogue.model.nodes import Hierarchy, Node
from catalogue.rdf.extents import (
    GEO,
    box_from_wkt,
    extent_statements,
    extent_triples,
    multiscales_triples,
    read_extent,
    read_multiscales,
)
from catalogue.rdf.vocabulary import ZARR

NODE = URIRef("file:///data/store.zarr/")


def graph_of(triples) -> Graph:
    g = Graph()
    for t in triples:
        g.add(t)
    return g


def full_extent() -> Extent:
    return Extent(
        bbox=Box(12.25, 45.125, 17.75, 49.5),
        geometry="POLYGON((12.25 45.125,17.75 45.125,17.75 49.5,12.25 45.125))",
        crs=NativeCRS(epsg=32633, name="WGS 84 / UTM zone 33N"),
        native_bbox=(300000.0, 5000000.0, 700000.0, 5500000.0),
        spatial_resolution=30.0,
        period=Period("2020-01-01T00:00:00Z", "2020-12-31T18:00:00Z"),
        temporal_resolution="PT6H",
        sources=(("bbox", Source("convention:spatial", "", "spatial:bbox")),
                 ("crs", Source("convention:proj", "b04", "proj:code")),
                 ("period", Source("cf:coordinates", "time", "time"))),
    )


def test_extent_uses_the_fixed_names():
    g = graph_of(extent_triples(NODE, full_extent()))
    location = g.value(NODE, DCTERMS.spatial)
    assert (location, RDF.type, DCTERMS.Location) in g
    bbox = g.value(location, DCAT.bbox)
    assert bbox.datatype == GEO.wktLiteral
    assert str(bbox) == "POLYGON((12.25 45.125,17.75 45.125,17.75 49.5,12.25 49.5,12.25 45.125))"
    assert str(g.value(location, DCAT.centroid)) == "POINT(15 47.3125)"
    period = g.value(NODE, DCTERMS.temporal)
    assert (period, RDF.type, DCTERMS.PeriodOfTime) in g
    assert g.value(period, DCAT.startDate).datatype == XSD.dateTime
    assert g.value(NODE, ZARR.crs) == URIRef("http://www.opengis.net/def/crs/EPSG/0/32633")
    assert g.value(NODE, DCAT.temporalResolution).datatype == XSD.duration
    assert float(g.value(NODE, DCAT.spatialResolutionInMeters).toPython()) == 30.0


def test_extent_round_trips():
    extent = full_extent()
    back = read_extent(graph_of(extent_triples(NODE, extent)), NODE)
    assert back is not None
    assert back.bbox == extent.bbox and back.geometry == extent.geometry and back.crs == extent.crs
    assert back.native_bbox == extent.native_bbox and back.period == extent.period
    assert back.spatial_resolution == 30.0 and back.temporal_resolution == "PT6H"
    assert set(back.sources) == set(extent.sources)


def test_dates_wkt2_and_the_antimeridian_round_trip():
    extent = Extent(bbox=Box(170.0, -10.0, -170.0, 10.0), period=Period("2000-01-01", "2000-12-30", "360_day"),
                    crs=NativeCRS(wkt2='PROJCRS["x"]', name="x"))
    g = graph_of(extent_triples(NODE, extent))
    location = g.value(NODE, DCTERMS.spatial)
    assert str(g.value(location, DCAT.bbox)).startswith("MULTIPOLYGON(((170 -10,180 -10")
    assert str(g.value(location, DCAT.centroid)) == "POINT(180 0)"
    assert g.value(g.value(NODE, DCTERMS.temporal), DCAT.startDate).datatype == XSD.date
    back = read_extent(g, NODE)
    assert back.bbox == extent.bbox and back.period == extent.period and back.crs == extent.crs


def test_empty_extent_writes_nothing():
    assert extent_triples(NODE, Extent()) == []
    assert read_extent(Graph(), NODE) is None


def test_box_from_wkt_inverts_box_wkt():
    for box in (Box(-180, -90, 180, 90), Box(0.5, -1, 2.25, 3), Box(179, -5, -179, 5), Box(180, 0, -180, 1)):
        assert box_from_wkt(box.wkt()) == box


@pytest.mark.parametrize(("text", "box"), [
    # the two rectangles of an antimeridian box, in either order, in any WKT spacing
    ("MULTIPOLYGON (((-180 0, -170 0, -170 1, -180 1, -180 0)), ((170 0, 180 0, 180 1, 170 1, 170 0)))",
     Box(170, 0, -170, 1)),
    ("<http://www.opengis.net/def/crs/OGC/1.3/CRS84> POLYGON((0 0,1 0,1 1,0 1,0 0))", Box(0, 0, 1, 1)),
    # anything else is its envelope
    ("MULTIPOLYGON(((0 0,1 0,1 1,0 1,0 0)),((5 5,6 5,6 6,5 6,5 5)))", Box(0, 0, 6, 6)),
    ("MULTIPOLYGON(((170 0,180 0,180 1,170 1,170 0)),((-180 2,-170 2,-170 3,-180 3,-180 2)))", Box(-180, 0, 180, 3)),
    ("POLYGON((0 0,4 0,2 3,0 0))", Box(0, 0, 4, 3)),
    ("POINT(3 4)", Box(3, 4, 3, 4)),
    ("POLYGON EMPTY", None),
])
def test_box_from_wkt_reads_any_crs84_wkt(text, box):
    assert box_from_wkt(text) == box


@pytest.mark.parametrize("text", ["POLYGON((garbage", "", "POLYGON((0 0,200 0,200 1,0 0))",
                                  "<http://www.opengis.net/def/crs/EPSG/0/4326> POINT(1 2)"])
def test_box_from_wkt_refuses_what_is_not_a_crs84_box(text):
    with pytest.raises(ValueError):
        box_from_wkt(text)


def test_read_extent_skips_each_unreadable_figure_and_keeps_the_rest(caplog):
    """Review item 6: odd graph content (a SPARQL UPDATE, an older harvest) never raises."""
    g = graph_of(extent_triples(NODE, full_extent()))
    location, period = g.value(NODE, DCTERMS.spatial), g.value(NODE, DCTERMS.temporal)
    g.set((location, DCAT.bbox, Literal("POLYGON((garbage", datatype=GEO.wktLiteral)))
    g.set((period, DCAT.endDate, Literal("garbage", datatype=XSD.date)))
    g.set((NODE, ZARR.nativeBbox, Literal("[1, 2]", datatype=RDF.JSON)))
    with caplog.at_level(logging.WARNING, logger="catalogue.rdf.extents"):
        back = read_extent(g, NODE)
    assert back is not None and back.bbox is None and back.period is None and back.native_bbox is None
    assert back.crs == full_extent().crs and back.temporal_resolution == "PT6H" and back.geometry is not None
    warned = " ".join(r.getMessage() for r in caplog.records)
    assert str(NODE) in warned and all(name in warned for name in ("bbox", "period", "native box"))


def test_read_extent_keeps_years_python_cannot_hold():
    g = Graph()
    span = BNode()
    g.add((NODE, DCTERMS.temporal, span))
    g.add((span, DCAT.startDate, Literal("10000-01-01", datatype=XSD.date)))
    g.add((span, DCAT.endDate, Literal("10000-12-31", datatype=XSD.date)))
    g.add((NODE, DCAT.spatialResolutionInMeters, Literal("nan", datatype=XSD.decimal)))
    back = read_extent(g, NODE)
    assert back is not None and back.period == Period("10000-01-01", "10000-12-31")
    assert back.period.instants() is None and back.spatial_resolution is None


def _pyramid_hierarchy() -> Hierarchy:
    h = Hierarchy(url="file:///data/pyramid.zarr/", zarr_format=3)
    for path, kind in (("", "group"), ("0", "array"), ("1", "array")):
        h.nodes[path] = Node(path=path, kind=kind, zarr_format=3, documents={"zarr.json": {}}, locations={})
    return h


def test_multiscales_round_trip_and_link_levels():
    h = _pyramid_hierarchy()
    pyramid = Multiscales(path="", levels=(
        MultiscaleLevel(0, "0", scale=(1.0, 1.0), translation=(0.0, 0.0)),
        MultiscaleLevel(1, "1", derived_from="0", scale=(2.0, 2.0), translation=(0.5, 0.5)),
        MultiscaleLevel(2, "2", derived_from="1", scale=(4.0, 4.0)),
    ), resampling="average")
    g = graph_of(multiscales_triples(h, pyramid))
    root = URIRef(h.iri(""))
    levels = list(g.objects(g.value(root, ZARR.multiscales), ZARR.level))
    linked = {str(g.value(level, ZARR.asset)): g.value(level, ZARR.levelNode) for level in levels}
    assert linked == {"0": URIRef(h.iri("0")), "1": URIRef(h.iri("1")), "2": None}  # level 2 is not catalogued
    g.add((root, ZARR.path, __import__("rdflib").Literal("")))
    back = read_multiscales(g, root)
    assert back == pyramid
    assert json.loads(str(g.value(levels[0], ZARR.scale))) in ([1.0, 1.0], [2.0, 2.0], [4.0, 4.0])


def test_extent_statements_list_everything_derived():
    h = _pyramid_hierarchy()
    derived = extent_triples(NODE, full_extent()) + multiscales_triples(h, Multiscales("", (MultiscaleLevel(0, "0"),)))
    g = graph_of(derived)
    kept = (NODE, ZARR.path, __import__("rdflib").Literal(""))
    g.add(kept)
    listed = set(extent_statements(g))
    assert listed == set(derived)
    assert kept not in listed
