"""The where-and-when fixture stores, and their extents computed independently of the catalogue.

:func:`build_fixtures` writes every fixture the end-to-end tests harvest (CF stores
written by xarray, convention stores written by zarr-python, an EOPF-like root, a store
with no geography); :func:`expected_extents` reads those stores back with xarray,
zarr-python, pyproj, cftime and numpy alone and says what their extents must be. Nothing
here imports ``catalogue.extents``: an extent the harvest got wrong cannot agree with
these figures by sharing its code.

The rules followed are docs/extents.md's: cell edges from ``bounds`` variables, else half
a step beyond the outermost centres of a regular axis (latitudes clipped to ±90), else the
outermost centres; 0..360 longitudes folded, a region across the antimeridian written
with ``west > east``; projected grids reprojected to CRS84 with pyproj's
``transform_bounds(..., densify_pts=21)``; a ``360_day`` date the Gregorian calendar lacks
written as its month's last Gregorian day.
"""

from __future__ import annotations

import calendar
import json
import pathlib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import cftime
import numpy as np
import xarray as xr
import zarr
from pyproj import CRS, Transformer

from tests.support import cf_stores
from tests.support import convention_stores as cs

#: Each fixture's data array: its extent is checked as well as the root's.
DATA_ARRAY: dict[str, str | None] = {
    "global_grid": "tas", "regional_bounds": "pr", "polar_stereographic": "sic", "curvilinear": "ts",
    "calendar_360": "tos", "antimeridian": "sst", "pyramid": "r10m/b02", "utm": "b02", "eopf": None, "plain": None,
}


def build_fixtures(root: pathlib.Path) -> dict[str, pathlib.Path]:
    """Every fixture store under ``root``, by name. The CF stores alternate between Zarr
    v2 and v3 (xarray writes both), so both formats go through every surface."""
    formats = {"global_grid": 3, "regional_bounds": 2, "polar_stereographic": 3, "curvilinear": 2,
               "calendar_360": 3, "antimeridian": 2}
    out = {name: cf_stores.CF_STORES[name](root, fmt) for name, fmt in formats.items()}
    out["pyramid"] = cs.build_pyramid(root)
    out["utm"] = cs.build_utm(root)
    out["eopf"] = cs.build_eopf(root)
    out["plain"] = cs.build_plain(root)
    return out


@dataclass(frozen=True)
class Expected:
    """What one node's extent must be (``None``: no such figure)."""

    #: (west, south, east, north) in CRS84; ``west > east`` across the antimeridian.
    bbox: tuple[float, float, float, float] | None = None
    #: The native CRS (compared with ``pyproj.CRS.equals``) and the native box.
    crs: CRS | None = None
    native_bbox: tuple[float, float, float, float] | None = None
    #: (start, end, calendar): texts for dates, aware UTC datetimes for date-times.
    period: tuple[Any, Any, str] | None = None
    temporal_resolution: str | None = None

    @property
    def empty(self) -> bool:
        return self.bbox is None and self.crs is None and self.period is None


def _edges(values: np.ndarray) -> tuple[float, float]:
    """Half a step beyond the outermost centres of a regular axis."""
    steps = np.diff(values)
    assert np.allclose(steps, steps[0]), "the fixture's axis is regular"
    step = abs(float(steps[0]))
    return float(values.min()) - step / 2, float(values.max()) + step / 2


def _lat_edges(values: np.ndarray) -> tuple[float, float]:
    south, north = _edges(values)
    return max(south, -90.0), min(north, 90.0)


def _lon_box(values: np.ndarray) -> tuple[float, float]:
    """West and east edges of a regular longitude axis in any 360° convention: unwrapped
    to increase, folded back into -180..180 (the whole circle is -180..180)."""
    unwrapped = np.degrees(np.unwrap(np.radians(values)))
    west, east = _edges(unwrapped)
    if east - west >= 360:
        return -180.0, 180.0
    west = ((west + 180.0) % 360.0) - 180.0  # into [-180, 180)
    east = 180.0 - ((180.0 - east) % 360.0)  # into (-180, 180]
    return west, east


def _crs84(crs: CRS, box: tuple[float, float, float, float]) -> tuple[float, float, float, float]:
    return Transformer.from_crs(crs, "OGC:CRS84", always_xy=True).transform_bounds(*box, densify_pts=21)


def _dates(time: xr.DataArray) -> tuple[str, str, str]:
    """First and last value of a CF time axis as dates of its own calendar, the ones the
    Gregorian calendar lacks moved to the month's last day (docs/extents.md)."""
    calendar_name = time.attrs.get("calendar", "standard")
    first, last = cftime.num2date(time.values[[0, -1]], time.attrs["units"], calendar=calendar_name)

    def text(moment: Any) -> str:
        day = min(moment.day, calendar.monthrange(moment.year, moment.month)[1])
        return f"{moment.year:04d}-{moment.month:02d}-{day:02d}"

    return text(first), text(last), calendar_name


def _utc(text: str) -> datetime:
    moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    return moment.astimezone(UTC)


def expected_extents(paths: dict[str, pathlib.Path]) -> dict[str, dict[str, Expected | None]]:
    """Fixture name -> {"": the root's expected extent, data array path: the array's}."""
    out: dict[str, dict[str, Expected | None]] = {}

    ds = xr.open_zarr(paths["global_grid"], decode_times=False)
    (west, east), (south, north) = _lon_box(ds.lon.values), _lat_edges(ds.lat.values)
    grid = Expected(bbox=(west, south, east, north), period=_dates(ds.time), temporal_resolution="P1D")
    out["global_grid"] = {"": grid, "tas": grid}

    ds = xr.open_zarr(paths["regional_bounds"], decode_times=False)
    box = Expected(bbox=(float(ds.lon_bnds.min()), float(ds.lat_bnds.min()),
                         float(ds.lon_bnds.max()), float(ds.lat_bnds.max())))
    out["regional_bounds"] = {"": box, "pr": box}

    ds = xr.open_zarr(paths["polar_stereographic"], decode_times=False)
    crs = CRS.from_cf(dict(ds.crs.attrs))
    (x0, x1), (y0, y1) = _edges(ds.x.values), _edges(ds.y.values)
    sic = Expected(bbox=_crs84(crs, (x0, y0, x1, y1)), crs=crs, native_bbox=(x0, y0, x1, y1))
    out["polar_stereographic"] = {"": sic, "sic": sic}  # the root: its one grid's CRS and native box

    ds = xr.open_zarr(paths["curvilinear"], decode_times=False)
    curvi = Expected(bbox=(float(ds.lon.min()), float(ds.lat.min()), float(ds.lon.max()), float(ds.lat.max())))
    out["curvilinear"] = {"": curvi, "ts": curvi}

    ds = xr.open_zarr(paths["calendar_360"], decode_times=False)
    months = Expected(period=_dates(ds.time), temporal_resolution="P1M")
    out["calendar_360"] = {"": months, "tos": months}

    ds = xr.open_zarr(paths["antimeridian"], decode_times=False)
    west, east = _lon_box(ds.lon.values)
    south, north = _lat_edges(ds.lat.values)
    out["antimeridian"] = {"": Expected(bbox=(west, south, east, north)), "sst": Expected(bbox=(west, south, east, north))}

    utm = CRS.from_epsg(32633)
    pyramid = zarr.open_group(str(paths["pyramid"]), mode="r")
    native = tuple(float(v) for v in pyramid.attrs["spatial:bbox"])
    level = next(e for e in pyramid.attrs["multiscales"]["layout"] if e["asset"] == "r10m")
    out["pyramid"] = {"": Expected(bbox=_crs84(utm, native), crs=utm, native_bbox=native),  # type: ignore[arg-type]
                      "r10m/b02": Expected(bbox=_crs84(utm, _grid_box(level["spatial:transform"], level["spatial:shape"])),
                                           crs=utm, native_bbox=_grid_box(level["spatial:transform"], level["spatial:shape"]))}

    group = zarr.open_group(str(paths["utm"]), mode="r")
    native = tuple(float(v) for v in group.attrs["spatial:bbox"])
    b02 = _grid_box(group.attrs["spatial:transform"], group["b02"].shape[1:])
    out["utm"] = {"": Expected(bbox=_crs84(utm, native), crs=utm, native_bbox=native),  # type: ignore[arg-type]
                  "b02": Expected(bbox=_crs84(utm, b02), crs=utm, native_bbox=b02)}

    item = zarr.open_group(str(paths["eopf"]), mode="r").attrs["stac_discovery"]
    props = item["properties"]
    out["eopf"] = {"": Expected(bbox=tuple(item["bbox"]), crs=CRS.from_epsg(props["proj:epsg"]),  # type: ignore[arg-type]
                                period=(_utc(props["start_datetime"]), _utc(props["end_datetime"]), "standard"))}
    out["plain"] = {"": None}
    return out


def _grid_box(transform: list[float], shape: tuple[int, ...] | list[int]) -> tuple[float, float, float, float]:
    """A north-up affine grid's cell-edge box: ``[a, b, c, d, e, f]`` (GDAL order as the
    spatial convention writes it) over ``shape`` (rows, columns)."""
    a, _, c, _, e, f = (float(v) for v in transform)
    rows, columns = int(shape[0]), int(shape[1])
    xs, ys = (c, c + a * columns), (f, f + e * rows)
    return min(xs), min(ys), max(xs), max(ys)


def expected_levels(path: pathlib.Path) -> list[tuple[str, str | None, float, tuple[float, float]]]:
    """A ``multiscales`` group's levels from the finest: (asset, derived_from, cumulative
    scale, (Y, X) cell size), read from its attributes with zarr-python."""
    layout = zarr.open_group(str(path), mode="r").attrs["multiscales"]["layout"]
    by_asset = {entry["asset"]: entry for entry in layout}

    def cumulative(entry: dict[str, Any]) -> float:
        scale = float(entry.get("transform", {}).get("scale", [1.0])[0])
        parent = entry.get("derived_from")
        return scale * cumulative(by_asset[parent]) if parent else scale

    rows = [(e["asset"], e.get("derived_from"), cumulative(e),
             (abs(float(e["spatial:transform"][4])), abs(float(e["spatial:transform"][0])))) for e in layout]
    return sorted(rows, key=lambda row: row[2])


def disk_documents(store: pathlib.Path, path: str = "") -> dict[str, Any]:
    """What ``catalogue metadata`` must print for the node at ``path``, read from disk:
    the v3 ``zarr.json`` (without a root's inline ``consolidated_metadata`` block, which
    the graph does not keep: docs/design.md), or the v2 ``{".zarray"|".zgroup": ...,
    ".zattrs": ...}``."""
    folder = store / path if path else store
    if (folder / "zarr.json").is_file():
        document = json.loads((folder / "zarr.json").read_text())
        return {k: v for k, v in document.items() if k != "consolidated_metadata"}
    return {name: json.loads((folder / name).read_text())
            for name in (".zarray", ".zgroup", ".zattrs") if (folder / name).is_file()}


def node_paths(store: pathlib.Path) -> list[str]:
    """Every node of a store laid out file by file (relative paths, ``""`` the root)."""
    names = {"zarr.json", ".zarray", ".zgroup"}
    found = {str(p.parent.relative_to(store)) for p in store.rglob("*") if p.name in names}
    return sorted("" if p == "." else p for p in found)
