"""Stores with GeoZarr conventions, ACDD attributes and STAC items, written by zarr-python.

Each ``build_xxx(root)`` writes ``root/<name>.zarr`` and returns it. The attribute
values are the specs' own where there is one (the spatial convention's UTM example,
the multiscales convention's pyramid); the bad variants change one value each.
"""

from __future__ import annotations

import pathlib
from typing import Any

import numpy as np
import zarr

PROJ_DECL = {"uuid": "f17cb550-5864-4468-aeb7-f3180cfb622f", "name": "proj",
             "schema_url": "https://raw.githubusercontent.com/zarr-conventions/proj/refs/tags/v0.1/schema.json"}
SPATIAL_DECL = {"uuid": "689b58e2-cf7b-45e0-9fff-9cfc0883d6b4", "name": "spatial",
                "schema_url": "https://raw.githubusercontent.com/zarr-conventions/spatial/refs/tags/v0.1/schema.json"}
MULTISCALES_DECL = {"uuid": "d35379db-88df-4056-af3a-620245f8e347", "name": "multiscales",
                    "schema_url": "https://raw.githubusercontent.com/zarr-conventions/multiscales/refs/tags/v0.1/schema.json"}

#: The UTM grid of ``build_utm``: 10 m cells, 1200 x 1000, top-left corner at (500000, 5000000).
UTM_TRANSFORM = [10.0, 0.0, 500000.0, 0.0, -10.0, 5000000.0]
UTM_SHAPE = (1200, 1000)


def _group(path: pathlib.Path, attributes: dict[str, Any]) -> zarr.Group:
    return zarr.open_group(str(path), mode="w", zarr_format=3, attributes=attributes)


def _array(group: zarr.Group, name: str, shape: tuple[int, ...], dims: list[str],
           attributes: dict[str, Any] | None = None) -> zarr.Array:
    return group.create_array(name, shape=shape, chunks=shape, dtype="uint16", fill_value=0,
                              dimension_names=dims, attributes=attributes or {})


def build_utm(root: pathlib.Path, *, group_attrs: dict[str, Any] | None = None,
              array_attrs: dict[str, Any] | None = None, name: str = "utm") -> pathlib.Path:
    """(b) A group with ``proj:code`` EPSG:32633 and the spatial grid of its arrays:
    ``b02`` inherits both, ``b03`` overrides the CRS (EPSG:32632) and ``time/b04`` is a
    grandchild (inherits nothing)."""
    store = root / f"{name}.zarr"
    attrs = {"zarr_conventions": [PROJ_DECL, SPATIAL_DECL], "proj:code": "EPSG:32633",
             "spatial:dimensions": ["y", "x"], "spatial:transform": UTM_TRANSFORM,
             "spatial:bbox": [500000.0, 4988000.0, 510000.0, 5000000.0]}
    g = _group(store, {**attrs, **(group_attrs or {})})
    _array(g, "b02", (2, *UTM_SHAPE), ["time", "y", "x"],
           {"zarr_conventions": [SPATIAL_DECL], "spatial:dimensions": ["y", "x"], **(array_attrs or {})})
    _array(g, "b03", UTM_SHAPE, ["y", "x"], {"zarr_conventions": [PROJ_DECL, SPATIAL_DECL],
                                             "proj:code": "EPSG:32632", "spatial:dimensions": ["y", "x"]})
    _array(g.create_group("time"), "b04", UTM_SHAPE, ["y", "x"])
    return store


def build_pyramid(root: pathlib.Path) -> pathlib.Path:
    """(a) A 3-level ``multiscales`` pyramid (levels r10m, r20m, r40m, each a group with
    one array ``b02``) in EPSG:32633, per-level ``spatial:transform``/``spatial:shape``
    in the layout, as the spatial convention's multiscales example writes them."""
    store = root / "pyramid.zarr"
    layout = []
    for i, (name, cell) in enumerate((("r10m", 10.0), ("r20m", 20.0), ("r40m", 40.0))):
        size = 400 // (2 ** i)
        entry: dict[str, Any] = {"asset": name, "transform": {"scale": [2.0 ** i, 2.0 ** i], "translation": [0.0, 0.0]},
                                 "spatial:shape": [size, size],
                                 "spatial:transform": [cell, 0.0, 500000.0, 0.0, -cell, 5000000.0]}
        if i:
            entry["derived_from"] = ("r10m", "r20m")[i - 1]
            entry["transform"] = {"scale": [2.0, 2.0], "translation": [0.0, 0.0]}
        layout.append(entry)
    # Written coarsest first: the catalogue orders the levels by resolution, not by position.
    layout.reverse()
    g = _group(store, {"zarr_conventions": [MULTISCALES_DECL, PROJ_DECL, SPATIAL_DECL],
                       "multiscales": {"layout": layout, "resampling_method": "average"},
                       "proj:code": "EPSG:32633", "spatial:dimensions": ["y", "x"],
                       "spatial:bbox": [500000.0, 4996000.0, 504000.0, 5000000.0]})
    for i, name in enumerate(("r10m", "r20m", "r40m")):
        size = 400 // (2 ** i)
        _array(g.create_group(name), "b02", (size, size), ["y", "x"])
    return store


def build_eopf(root: pathlib.Path, *, item: dict[str, Any] | None = None) -> pathlib.Path:
    """(c) An EOPF-like product: the root's ``stac_discovery`` holds a STAC item."""
    store = root / "eopf.zarr"
    stac = item if item is not None else {
        "type": "Feature", "stac_version": "1.0.0", "id": "S2B_MSIL2A_20251006T123309",
        "bbox": [-16.32, 63.88, -14.05, 64.92],
        "geometry": {"type": "Polygon", "coordinates": [[[-16.32, 63.88], [-14.05, 63.88], [-14.05, 64.92],
                                                         [-16.32, 64.92], [-16.32, 63.88]]]},
        "properties": {"datetime": "2025-10-06T12:33:09.024000Z", "start_datetime": "2025-10-06T12:33:09.024000Z",
                       "end_datetime": "2025-10-06T14:43:09+02:00", "proj:epsg": 32628, "platform": "sentinel-2b"},
    }
    g = zarr.open_group(str(store), mode="w", zarr_format=2, attributes={"stac_discovery": stac, "other_metadata": {}})
    m = g.create_group("measurements")
    m.create_array("b02", shape=(4, 4), chunks=(4, 4), dtype="uint16", fill_value=0)
    return store


def build_acdd(root: pathlib.Path, *, attrs: dict[str, Any] | None = None, name: str = "acdd") -> pathlib.Path:
    """(d) A root with ACDD attributes (0..360 longitudes, an offset date-time, a
    duration instead of an end) and an array with its own ACDD box."""
    store = root / f"{name}.zarr"
    base = {"geospatial_lat_min": -10.5, "geospatial_lat_max": 20.0,
            "geospatial_lon_min": 100.0, "geospatial_lon_max": 260.0,
            "time_coverage_start": "2020-01-01T00:00:00+02:00", "time_coverage_duration": "P1M",
            "time_coverage_resolution": "P1D"}
    g = _group(store, attrs if attrs is not None else base)
    _array(g, "sst", (3, 4), ["lat", "lon"], {"geospatial_lat_min": "0", "geospatial_lat_max": "10",
                                               "geospatial_lon_min": "170", "geospatial_lon_max": "-175",
                                               "time_coverage_start": "2020-01-01", "time_coverage_end": "2020-12-31"})
    return store


def build_plain(root: pathlib.Path) -> pathlib.Path:
    """(e) A store with no geography at all."""
    store = root / "plain.zarr"
    g = _group(store, {"title": "counts"})
    a = _array(g, "counts", (3, 3), ["i", "j"])
    a[:] = np.arange(9, dtype="uint16").reshape(3, 3)
    return store


# ------------------------------------------------------------------- bad variants
def build_absurd_transform(root: pathlib.Path) -> pathlib.Path:
    """A degenerate transform (a = e = 0) and a huge one that leaves the CRS's area."""
    store = build_utm(root, name="absurd", group_attrs={"spatial:transform": [0.0, 0.0, 500000.0, 0.0, 0.0, 5000000.0]})
    g = zarr.open_group(str(store), mode="a")
    _array(g, "huge", UTM_SHAPE, ["y", "x"], {"spatial:dimensions": ["y", "x"],
                                              "spatial:transform": [1e12, 0.0, 500000.0, 0.0, -1e12, 5000000.0]})
    return store


def build_bad_crs(root: pathlib.Path) -> pathlib.Path:
    """An unparseable ``proj:code`` on the group, a conflicting code/wkt2 pair on an array."""
    from pyproj import CRS

    store = build_utm(root, name="badcrs", group_attrs={"proj:code": "EPSG:999999"})
    g = zarr.open_group(str(store), mode="a")
    _array(g, "conflict", UTM_SHAPE, ["y", "x"], {
        "zarr_conventions": [PROJ_DECL, SPATIAL_DECL], "proj:code": "EPSG:32633",
        "proj:wkt2": CRS.from_epsg(4326).to_wkt(), "spatial:dimensions": ["y", "x"]})
    return store


def build_lat95(root: pathlib.Path) -> pathlib.Path:
    """A geographic grid (EPSG:4326) whose box reaches latitude 95, and ACDD lat 95."""
    store = root / "lat95.zarr"
    g = _group(store, {"zarr_conventions": [PROJ_DECL, SPATIAL_DECL], "proj:code": "EPSG:4326",
                       "spatial:dimensions": ["lat", "lon"], "spatial:bbox": [-10.0, 85.0, 10.0, 95.0],
                       "geospatial_lat_min": 85, "geospatial_lat_max": 95,
                       "geospatial_lon_min": -10, "geospatial_lon_max": 10})
    _array(g, "t", (10, 20), ["lat", "lon"], {"spatial:dimensions": ["lat", "lon"],
                                              "spatial:transform": [1.0, 0.0, -10.0, 0.0, -1.0, 95.0]})
    return store
