"""CF's axis identification, once: what a coordinate variable measures, from its attributes.

Both the extent extraction (``extents/cf.py``) and the STAC datacube fields
(``rdf/datacube.py``) need to know whether a coordinate is a longitude, a latitude, a
projected x or y, a time or a vertical coordinate. They used to decide it twice, in
different orders; this module is the one rule (CF 1.11 §4), applied in this order:

1. ``standard_name`` (a string, surrounding blanks ignored): ``longitude``,
   ``latitude``, ``projection_x_coordinate``, ``projection_y_coordinate``, ``time``, or
   one of the vertical names (``depth``, ``height``, ``altitude``, ``air_pressure``, the
   dimensionless vertical coordinates of CF Appendix D, ...);
2. ``units`` (case-insensitive): CF's spellings of ``degrees_north`` / ``degrees_east``,
   or a time unit ``<unit> since <reference>``;
3. ``axis`` (case-insensitive): ``X``, ``Y``, ``T``, ``Z``;
4. ``positive`` (``up`` or ``down``): vertical.

A value of the wrong JSON type (``standard_name: ["longitude"]``) is ignored, never an
error: it identifies nothing. Anything unidentified is ``None``. Rotated-pole
``grid_longitude``/``grid_latitude`` are not geographic longitudes: they identify
through ``axis`` (``x``/``y`` in the grid mapping's CRS) when it is given.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Mapping
from typing import Any, Final, Literal, TypeVar

__all__ = ["AxisKind", "axis_kind", "nearest_coordinate"]

AxisKind = Literal["lon", "lat", "x", "y", "time", "vertical"]

_BY_STANDARD_NAME: Final[dict[str, AxisKind]] = {
    "longitude": "lon", "latitude": "lat",
    "projection_x_coordinate": "x", "projection_y_coordinate": "y",
    "time": "time",
    **{name: "vertical" for name in (
        "depth", "height", "altitude", "air_pressure", "height_above_geopotential_datum",
        "height_above_reference_ellipsoid", "height_above_mean_sea_level", "model_level_number",
        "atmosphere_ln_pressure_coordinate", "atmosphere_sigma_coordinate", "atmosphere_hybrid_sigma_pressure_coordinate",
        "atmosphere_hybrid_height_coordinate", "atmosphere_sleve_coordinate", "ocean_sigma_coordinate",
        "ocean_s_coordinate", "ocean_s_coordinate_g1", "ocean_s_coordinate_g2", "ocean_sigma_z_coordinate",
        "ocean_double_sigma_coordinate")},
}
_NORTH: Final = frozenset({"degrees_north", "degree_north", "degree_n", "degrees_n", "degreen", "degreesn"})
_EAST: Final = frozenset({"degrees_east", "degree_east", "degree_e", "degrees_e", "degreee", "degreese"})
_SINCE: Final = re.compile(r"\ssince\s", re.IGNORECASE)
_BY_AXIS: Final[dict[str, AxisKind]] = {"X": "x", "Y": "y", "T": "time", "Z": "vertical"}


def axis_kind(attributes: Mapping[str, Any]) -> AxisKind | None:
    """What a coordinate variable measures, from its CF attributes (see the module docstring)."""
    name = attributes.get("standard_name")
    if isinstance(name, str) and name.strip() in _BY_STANDARD_NAME:
        return _BY_STANDARD_NAME[name.strip()]
    units = attributes.get("units")
    if isinstance(units, str):
        spelled = units.strip().lower()
        if spelled in _NORTH:
            return "lat"
        if spelled in _EAST:
            return "lon"
        if _SINCE.search(f" {units} "):
            return "time"
    axis = attributes.get("axis")
    if isinstance(axis, str) and axis.strip().upper() in _BY_AXIS:
        return _BY_AXIS[axis.strip().upper()]
    positive = attributes.get("positive")
    if isinstance(positive, str) and positive.strip().lower() in ("up", "down"):
        return "vertical"
    return None


_N = TypeVar("_N")


def nearest_coordinate(array_path: str, name: str, lookup: Callable[[str], _N | None]) -> _N | None:
    """The coordinate variable ``name`` of the array at ``array_path``: the array called
    ``name`` in the array's group or the nearest ancestor holding one (CF §1.3 with
    groups, search by proximity upwards). ``lookup(path)`` gives the array at a path
    in the hierarchy, or ``None``."""
    if not name or "/" in name:
        return None
    group = posixpath.dirname(array_path)
    while True:
        found = lookup(posixpath.join(group, name) if group else name)
        if found is not None:
            return found
        if not group:
            return None
        group = posixpath.dirname(group)
