"""CF stores for the extents tests, written by xarray (Zarr v2 or v3).

Every ``build_xxx(root, zarr_format)`` writes one store ``<name>_v<format>.zarr`` under
``root`` and returns its folder. Coordinates carry exactly the CF attributes a real
producer writes (``standard_name``, ``units``, ``bounds``, ``grid_mapping``,
``calendar``), so the extents are found the way they would be in the wild; the tests
compute the expected extents independently (xarray, pyproj, cftime, numpy).

``CF_STORES``: name -> builder, every builder below.
"""

from __future__ import annotations

import pathlib
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

LAT = {"standard_name": "latitude", "units": "degrees_north"}
LON = {"standard_name": "longitude", "units": "degrees_east"}

#: A polar stereographic grid mapping (NSIDC's north polar grid, EPSG:3413's parameters).
POLAR_STEREO = {
    "grid_mapping_name": "polar_stereographic",
    "latitude_of_projection_origin": 90.0,
    "straight_vertical_longitude_from_pole": -45.0,
    "standard_parallel": 70.0,
    "false_easting": 0.0,
    "false_northing": 0.0,
    "semi_major_axis": 6378137.0,
    "inverse_flattening": 298.257223563,
}


def _write(ds: Any, root: pathlib.Path, name: str, zarr_format: int, encoding: dict | None = None) -> pathlib.Path:
    path = root / f"{name}_v{zarr_format}.zarr"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # consolidated metadata in v3 is not in the spec yet
        ds.to_zarr(path, mode="w-", zarr_format=zarr_format, consolidated=True, encoding=encoding or {})
    return path


def _days(n: int, start: str = "2000-01-01") -> Any:
    import pandas as pd

    return pd.date_range(start, periods=n, freq="D")


def build_global_grid(root: pathlib.Path, zarr_format: int = 3) -> pathlib.Path:
    """1° cells on 0..360 longitudes (centres 0.5..359.5), -89.5..89.5 latitudes, 4 days."""
    import xarray as xr

    lat = np.arange(-89.5, 90, 1.0)
    lon = np.arange(0.5, 360, 1.0)
    data = np.zeros((4, lat.size, lon.size), dtype="float32")
    ds = xr.Dataset({"tas": (("time", "lat", "lon"), data, {"standard_name": "air_temperature", "units": "K"})},
                    coords={"time": ("time", _days(4), {"standard_name": "time"}),
                            "lat": ("lat", lat, LAT), "lon": ("lon", lon, LON)})
    return _write(ds, root, "global_grid", zarr_format, {"tas": {"chunks": (1, 90, 180)}})


def build_regional_bounds(root: pathlib.Path, zarr_format: int = 3) -> pathlib.Path:
    """A 0.25° regional grid whose ``lat_bnds``/``lon_bnds`` put each cell above and east
    of its coordinate (cells [v, v + 0.25]), so the edges differ from regular spacing's."""
    import xarray as xr

    lat = np.arange(40.0, 50.0, 0.25)
    lon = np.arange(0.0, 10.0, 0.25)
    ds = xr.Dataset(
        {"pr": (("lat", "lon"), np.ones((lat.size, lon.size), dtype="float32"), {"units": "kg m-2 s-1"}),
         "lat_bnds": (("lat", "bnds"), np.stack([lat, lat + 0.25], axis=1)),
         "lon_bnds": (("lon", "bnds"), np.stack([lon, lon + 0.25], axis=1))},
        coords={"lat": ("lat", lat, {**LAT, "bounds": "lat_bnds"}),
                "lon": ("lon", lon, {**LON, "bounds": "lon_bnds"})})
    return _write(ds, root, "regional_bounds", zarr_format)


def build_polar_stereographic(root: pathlib.Path, zarr_format: int = 3) -> pathlib.Path:
    """A 200 km polar stereographic grid around the North Pole, with a ``crs`` grid mapping."""
    import xarray as xr

    x = np.arange(-3_800_000.0, 3_800_001.0, 200_000.0)
    y = np.arange(3_800_000.0, -3_800_001.0, -200_000.0)  # north-up, as rasters are
    ds = xr.Dataset(
        {"sic": (("y", "x"), np.zeros((y.size, x.size), dtype="float32"),
                 {"standard_name": "sea_ice_area_fraction", "units": "1", "grid_mapping": "crs"}),
         "crs": ((), np.int32(0), POLAR_STEREO)},
        coords={"x": ("x", x, {"standard_name": "projection_x_coordinate", "units": "m", "axis": "X"}),
                "y": ("y", y, {"standard_name": "projection_y_coordinate", "units": "m", "axis": "Y"})})
    return _write(ds, root, "polar_stereographic", zarr_format)


def curvilinear_coordinates() -> tuple[np.ndarray, np.ndarray]:
    """The 2-D latitudes and longitudes of :func:`build_curvilinear` (a rotated grid)."""
    j, i = np.meshgrid(np.arange(30), np.arange(20))
    return 50.0 + 0.1 * i + 0.02 * j, 5.0 + 0.1 * j - 0.03 * i


def build_curvilinear(root: pathlib.Path, zarr_format: int = 3) -> pathlib.Path:
    """A rotated grid with 2-D auxiliary ``lat(y, x)``, ``lon(y, x)`` (xarray writes the
    ``coordinates`` attribute)."""
    import xarray as xr

    lat, lon = curvilinear_coordinates()
    ds = xr.Dataset({"ts": (("y", "x"), np.zeros(lat.shape, dtype="float32"), {"units": "K"})},
                    coords={"lat": (("y", "x"), lat, LAT), "lon": (("y", "x"), lon, LON)})
    return _write(ds, root, "curvilinear", zarr_format)


def build_calendar_360(root: pathlib.Path, zarr_format: int = 3) -> pathlib.Path:
    """Monthly values on the 30th of each month of a ``360_day`` calendar, from
    2000-02-30 (a day the Gregorian calendar lacks) for 12 months."""
    import xarray as xr

    days = 59.0 + 30.0 * np.arange(12)  # 59 days after 2000-01-01 is 2000-02-30 in 360_day
    ds = xr.Dataset({"tos": (("time",), np.zeros(12, dtype="float32"), {"units": "K"})},
                    coords={"time": ("time", days, {"standard_name": "time", "units": "days since 2000-01-01",
                                                    "calendar": "360_day"})})
    with xr.set_options(keep_attrs=True):
        return _write(ds, root, "calendar_360", zarr_format)


def build_antimeridian(root: pathlib.Path, zarr_format: int = 3) -> pathlib.Path:
    """A 1° region from 170°E to 170°W, its longitudes written in -180..180
    (170.5 .. 179.5, -179.5 .. -170.5)."""
    import xarray as xr

    lon = np.concatenate([np.arange(170.5, 180, 1.0), np.arange(-179.5, -170, 1.0)])
    lat = np.arange(10.5, 20, 1.0)
    ds = xr.Dataset({"sst": (("lat", "lon"), np.zeros((lat.size, lon.size), dtype="float32"))},
                    coords={"lat": ("lat", lat, LAT), "lon": ("lon", lon, LON)})
    return _write(ds, root, "antimeridian", zarr_format)


BIG = 1_000_000
BIG_CHUNK = 10_000


def build_big_axis(root: pathlib.Path, zarr_format: int = 3) -> pathlib.Path:
    """A 10^6-value hourly time axis from 1900-01-01 (chunks of 10,000 values)."""
    import xarray as xr

    hours = np.arange(BIG, dtype="int64")
    ds = xr.Dataset({"level": (("time",), np.zeros(BIG, dtype="float32"))},
                    coords={"time": ("time", hours, {"standard_name": "time", "units": "hours since 1900-01-01",
                                                     "calendar": "proleptic_gregorian"})})
    return _write(ds, root, "big_axis", zarr_format,
                  {"time": {"chunks": (BIG_CHUNK,)}, "level": {"chunks": (BIG_CHUNK * 10,)}})


def build_non_monotonic(root: pathlib.Path, zarr_format: int = 3) -> pathlib.Path:
    """Latitudes out of order (10, 12, 11, 13, ...): not a CF coordinate variable."""
    import xarray as xr

    lat = np.array([10.0, 12.0, 11.0, 13.0, 15.0, 14.0])
    lon = np.arange(20.0, 26.0)
    ds = xr.Dataset({"z": (("lat", "lon"), np.zeros((6, 6), dtype="float32"))},
                    coords={"lat": ("lat", lat, LAT), "lon": ("lon", lon, LON)})
    return _write(ds, root, "non_monotonic", zarr_format)


CF_STORES: dict[str, Callable[[pathlib.Path, int], pathlib.Path]] = {
    "global_grid": build_global_grid,
    "regional_bounds": build_regional_bounds,
    "polar_stereographic": build_polar_stereographic,
    "curvilinear": build_curvilinear,
    "calendar_360": build_calendar_360,
    "antimeridian": build_antimeridian,
    "big_axis": build_big_axis,
    "non_monotonic": build_non_monotonic,
}
