"""Extents for the example stores, written into their graphs as the harvest will write them.

Until the extraction (``catalogue/extents/``) runs at harvest, tests that need datasets
with extents write these stand-ins with :func:`catalogue.rdf.extents.extent_triples`,
in this one place, so that the day extraction lands they can be replaced by what it
finds. The figures are chosen to exercise search: a global grid with dates, a Pacific
box across the antimeridian with date-times, a projected regional model without a
period; a store absent from :data:`EXAMPLE_EXTENTS` keeps no extent at all.
"""

from __future__ import annotations

from collections.abc import Mapping

from rdflib import URIRef

import catalogue
from catalogue.model.extents import Box, Extent, NativeCRS, Period, Source
from catalogue.rdf.extents import extent_triples

EXAMPLE_EXTENTS: dict[str, Extent] = {
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


def write_extents(db: str, graphs: Mapping[str, str], extents: Mapping[str, Extent] = EXAMPLE_EXTENTS) -> None:
    """Write ``extents`` (by store folder name) onto the roots of ``graphs`` (folder name ->
    the graph of its harvest), in one transaction."""
    with catalogue.open(db) as cat, cat.store.write_transaction():
        for name, extent in extents.items():
            if name in graphs:
                root = URIRef(graphs[name])
                cat.store.addN((s, p, o, root) for s, p, o in extent_triples(root, extent))
