"""Controlled extents for the web tests: figures chosen to exercise display and search.

The harvest extracts extents itself (tested on real stores in ``tests/extents/`` and end
to end in ``tests/web/test_real_extents.py``); the tests that need every shape of extent
at once (a WKT2 CRS, a footprint, a 360_day period, antimeridian boxes) on the small
example stores *replace* what the harvest found with these, through the functions below,
the only place that does so: :func:`add_extents` and :func:`write_extents`.

:data:`EXAMPLE_EXTENTS` are the extents of the example stores (what their coordinates
say: the air temperature's 20-degree global grid over six days of July 2021, the sea
surface's coarse global grid over Q1 2022, the toy ocean model's Pacific region across
the antimeridian) and of :func:`build_multiscale_store`'s pyramid over central Europe.
"""

from __future__ import annotations

import json
import pathlib
from collections.abc import Mapping

from rdflib import Graph, URIRef

import catalogue
from catalogue.harvest import load_hierarchy
from catalogue.model.extents import (
    Box,
    Extent,
    HierarchyExtents,
    MultiscaleLevel,
    Multiscales,
    NativeCRS,
    Period,
    Source,
)
from catalogue.rdf.extents import extent_statements, extent_triples, hierarchy_extent_triples

#: A WKT2 CRS without an EPSG code (the ocean model's rotated grid), shown as WKT on its page.
OCEAN_WKT = (
    'GEOGCRS["Rotated pole (toy ocean)",BASEGEOGCRS["WGS 84",DATUM["World Geodetic System 1984",'
    'ELLIPSOID["WGS 84",6378137,298.257223563]]],DERIVINGCONVERSION["Pole rotation",'
    'METHOD["PROJ ob_tran o_proj=longlat"],PARAMETER["o_lon_p",0],PARAMETER["o_lat_p",37.5],'
    'PARAMETER["lon_0",178]],CS[ellipsoidal,2],AXIS["longitude",east],AXIS["latitude",north],'
    'ANGLEUNIT["degree",0.0174532925199433]]'
)

_CF_LATLON = Source("cf:coordinates", "", "lat, lon")
_CF_TIME = Source("cf:coordinates", "time", "time")

AIR = Extent(
    bbox=Box(-180, -90, 180, 90), crs=NativeCRS(epsg=4326, name="WGS 84"),
    spatial_resolution=2_223_901.0, period=Period("2021-07-01", "2021-07-06"), temporal_resolution="P1D",
    sources=(("bbox", Source("cf:bounds", "", "lat_bnds, lon_bnds")), ("crs", Source("cf:grid_mapping", "tas", "crs")),
             ("period", _CF_TIME), ("spatial_resolution", _CF_LATLON), ("temporal_resolution", _CF_TIME)),
)
SEA = Extent(
    bbox=Box(-180, -80, 180, 80), period=Period("2022-01-01", "2022-03-31"), temporal_resolution="P1M",
    sources=(("bbox", _CF_LATLON), ("period", Source("acdd", "", "time_coverage_start, time_coverage_end"))),
)
OCEAN = Extent(
    bbox=Box(150, -30, -150, 10),
    geometry="MULTIPOLYGON(((155 -25,180 -28,180 5,160 8,155 -25)),((-180 -28,-155 -20,-152 0,-180 5,-180 -28)))",
    crs=NativeCRS(wkt2=OCEAN_WKT, name="Rotated pole (toy ocean)"),
    spatial_resolution=25_000.0,
    period=Period("2020-01-01T00:00:00Z", "2020-01-10T00:00:00Z", calendar="360_day"), temporal_resolution="PT6H",
    sources=(("bbox", Source("convention:spatial", "", "spatial:bbox")),
             ("geometry", Source("stac", "", "geometry")),
             ("crs", Source("convention:proj", "", "proj:wkt2")),
             ("period", Source("acdd", "", "time_coverage_start, time_coverage_end"))),
)
PYRAMID = Extent(
    bbox=Box(9.0, 47.0, 15.0, 51.0), crs=NativeCRS(epsg=32633, name="WGS 84 / UTM zone 33N"),
    native_bbox=(290000.0, 5210000.0, 730000.0, 5650000.0), spatial_resolution=10.0,
    period=Period("2023-06-01", "2023-06-30"),
    sources=(("bbox", Source("convention:proj", "", "proj:bbox")), ("crs", Source("convention:proj", "", "proj:code")),
             ("native_bbox", Source("convention:proj", "", "proj:bbox")),
             ("spatial_resolution", Source("convention:spatial", "0", "spatial:transform")),
             ("period", Source("stac", "", "start_datetime, end_datetime"))),
)
PYRAMID_LEVELS = Multiscales(
    path="", levels=(
        MultiscaleLevel(0, "0", scale=(1.0, 1.0), translation=(0.0, 0.0)),
        MultiscaleLevel(1, "1", derived_from="0", scale=(2.0, 2.0), translation=(0.5, 0.5)),
        MultiscaleLevel(2, "2", derived_from="1", scale=(4.0, 4.0), translation=(1.5, 1.5)),
    ), resampling="average",
)

#: Store name -> what the harvest will find there (root extent, array extents, pyramids).
EXAMPLE_EXTENTS: dict[str, HierarchyExtents] = {
    "cf_air_temperature_v3.zarr": HierarchyExtents(nodes={"": AIR, "tas": AIR, "pr": AIR}),
    "cf_sea_surface_v2.zarr": HierarchyExtents(nodes={"": SEA, "sst": SEA}),
    "ocean_model_v3.zarr": HierarchyExtents(nodes={"": OCEAN}),
    "pyramid.zarr": HierarchyExtents(nodes={"": PYRAMID, "0": PYRAMID}, multiscales={"": PYRAMID_LEVELS}),
}


def build_multiscale_store(root: pathlib.Path) -> pathlib.Path:
    """``pyramid.zarr``: a v3 group with three arrays ``0``, ``1``, ``2`` halving in size and a
    ``multiscales`` attribute naming them (hand-made metadata, no chunks: nothing reads them)."""
    path = root / "pyramid.zarr"
    path.mkdir()
    layout = [{"asset": str(i), **({"derived_from": str(i - 1)} if i else {}),
               "transform": {"scale": [2.0 ** i] * 2, "translation": [(2.0 ** i - 1) / 2] * 2}} for i in range(3)]
    group = {"zarr_format": 3, "node_type": "group", "attributes": {
        "title": "Sentinel-2 like pyramid over central Europe (synthetic)",
        "multiscales": {"layout": layout, "resampling_method": "average"},
        "proj:code": "EPSG:32633", "proj:bbox": [290000.0, 5210000.0, 730000.0, 5650000.0]}}
    (path / "zarr.json").write_text(json.dumps(group))
    for i, size in enumerate((44000, 22000, 11000)):
        (path / str(i)).mkdir()
        array = {"zarr_format": 3, "node_type": "array", "shape": [size, size], "data_type": "uint16",
                 "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [1024, 1024]}},
                 "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
                 "fill_value": 0, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
                 "dimension_names": ["y", "x"], "attributes": {}}
        (path / str(i) / "zarr.json").write_text(json.dumps(array))
    return path


def add_extents(db: str, source: pathlib.Path, extents: HierarchyExtents) -> int:
    """Replace the extents of the harvested ``source``'s graph with ``extents``, written as
    the harvest writes them; returns the number of triples added."""
    hierarchy = load_hierarchy(str(source))
    triples = hierarchy_extent_triples(hierarchy, extents)
    with catalogue.open(db) as cat:
        graph = Graph(store=cat.store, identifier=URIRef(hierarchy.iri("")))
        for triple in list(extent_statements(graph)):  # what the harvest found
            cat.store.remove(triple, graph)
        cat.store.addN((s, p, o, graph) for s, p, o in triples)
        cat.store.commit()
    return len(triples)


def add_example_extents(db: str, sources: list[pathlib.Path]) -> None:
    """:func:`add_extents` for every source named in :data:`EXAMPLE_EXTENTS`."""
    for source in sources:
        extents = EXAMPLE_EXTENTS.get(source.name)
        if extents is not None:
            add_extents(db, source, extents)


#: Root extents chosen to exercise search (the STAC tests): a global grid with dates, a
#: Pacific box across the antimeridian with date-times, a projected model without a period.
SEARCH_EXTENTS: dict[str, Extent] = {
    "cf_air_temperature_v3.zarr": Extent(
        bbox=Box(-180, -90, 180, 90), period=Period("2021-07-01", "2021-07-06"), temporal_resolution="P1D",
        sources=(("bbox", Source("cf:coordinates", "lat", "lat, lon")), ("period", Source("cf:coordinates", "time"))),
    ),
    "cf_sea_surface_v2.zarr": Extent(
        bbox=Box(150, -40, -120, 40), period=Period("2022-01-01T00:00:00Z", "2022-03-01T00:00:00Z"),
        sources=(("bbox", Source("acdd", "", "geospatial_lon_min, geospatial_lon_max")),),
    ),
    "ocean_model_v3.zarr": Extent(
        bbox=Box(5, 50, 15, 60), crs=NativeCRS(epsg=32633, name="WGS 84 / UTM zone 33N"),
        native_bbox=(300000.0, 5540000.0, 800000.0, 6650000.0),
        sources=(("crs", Source("convention:proj", "", "proj:code")),),
    ),
}


def write_extents(db: str, graphs: Mapping[str, str], extents: Mapping[str, Extent] = SEARCH_EXTENTS) -> None:
    """Write ``extents`` (by store folder name) onto the roots of ``graphs`` (folder name ->
    the graph of its harvest), in one transaction."""
    with catalogue.open(db) as cat, cat.store.write_transaction():
        for name, extent in extents.items():
            if name in graphs:
                root = URIRef(graphs[name])
                graph = Graph(store=cat.store, identifier=root)
                for triple in list(extent_statements(graph, [root])):
                    cat.store.remove(triple, graph)
                cat.store.addN((s, p, o, root) for s, p, o in extent_triples(root, extent))
