"""Extent evidence from the GeoZarr conventions: ``proj:`` (the CRS) and ``spatial:``
(the grid's box and cell size), with their inheritance, and the ``multiscales`` pyramids.

For each array, and for each group whose own attributes hold ``proj:``/``spatial:``
values (the root included), the values that apply (``model/geozarr.effective_geo``)
give up to two pieces of evidence:

* ``convention:proj``: the CRS, from ``proj:wkt2`` first (the spec: it takes precedence
  when representations disagree; validation reports the disagreement), then
  ``proj:code``, then ``proj:projjson``;
* ``convention:spatial``: the box in the native CRS and in CRS84, and the cell size.
  The box comes from ``spatial:transform`` with the grid's shape (``spatial:shape``, or
  the array's sizes along ``spatial:dimensions``) when both are known, else from
  ``spatial:bbox``. With ``pixel`` registration (the default) these are cell edges;
  with ``node`` registration the transform maps indices onto cell centres, and the box
  is that of the outermost centres (``edges=False``). Without a CRS the ``spatial:``
  values are in abstract units (microscopy, say) and give no evidence.

The cell size (``spatial_resolution``, metres) is the smaller of the lengths of one step
along a row and along a column of the transform. In a projected CRS that length is in
the CRS's axis unit, converted to metres with its conversion factor (a grid distance,
as ``dcat:spatialResolutionInMeters`` is commonly read, not a ground distance). In a
geographic CRS a step is in degrees: it is measured on the CRS's ellipsoid with
``pyproj.Geod`` at the centre latitude of the box, along the parallel for the X step
and along the meridian for the Y step, so a 0.25° grid is about 27.8 km in Y
everywhere and 27.8 km · cos(latitude) in X.
"""

from __future__ import annotations

import math

from pyproj import CRS, Transformer

from catalogue.extents.attribute_finding import attribute_finding
from catalogue.extents.crs import CRSError, is_crs84_like, native_crs, parse_crs, to_crs84
from catalogue.extents.evidence import Evidence
from catalogue.model.extents import Box, Multiscales, Source
from catalogue.model.geozarr import (
    EffectiveGeo,
    GeoZarrError,
    Spatial,
    effective_geo,
    grid_shape,
    multiscales_extent,
    parse_multiscales,
)
from catalogue.model.nodes import Hierarchy
from catalogue.validate.findings import Finding

__all__ = ["evidence", "multiscales", "resolution_in_metres"]

RULE = "extent.conventions.unusable"


def evidence(hierarchy: Hierarchy) -> tuple[list[Evidence], list[Finding]]:
    """The ``proj:``/``spatial:`` evidence of every array and of every group that holds
    such values itself, and findings for values that give no extent."""
    found: list[Evidence] = []
    findings: list[Finding] = []
    for path in sorted(hierarchy.nodes):
        node = hierarchy.nodes[path]
        attributes = node.attributes or {}
        if node.kind == "group" and not any(isinstance(k, str) and k.startswith(("proj:", "spatial:")) for k in attributes):
            continue
        try:
            geo = effective_geo(hierarchy, path)
        except GeoZarrError as exc:
            findings.append(attribute_finding(hierarchy, path, RULE, (), str(exc)))
            continue
        _node_evidence(hierarchy, path, geo, found, findings)
    return found, _unique(findings)


def multiscales(hierarchy: Hierarchy) -> tuple[dict[str, Multiscales], list[Finding]]:
    """The pyramid of every group with a ``multiscales`` attribute, by group path."""
    out: dict[str, Multiscales] = {}
    findings: list[Finding] = []
    for path in sorted(hierarchy.nodes):
        node = hierarchy.nodes[path]
        attributes = node.attributes or {}
        if node.kind != "group" or "multiscales" not in attributes:
            continue
        try:
            out[path] = multiscales_extent(path, parse_multiscales(attributes["multiscales"]))
        except GeoZarrError as exc:
            findings.append(attribute_finding(hierarchy, path, RULE, ("multiscales",), str(exc)))
    return out, findings


def _node_evidence(h: Hierarchy, path: str, geo: EffectiveGeo, found: list[Evidence], findings: list[Finding]) -> None:
    crs = None
    if geo.proj is not None and geo.proj_path is not None:
        key, value = geo.proj.representations()[0]
        try:
            crs = parse_crs(value)
        except CRSError as exc:
            findings.append(attribute_finding(h, geo.proj_path, RULE, (key,), str(exc)))
        else:
            found.append(Evidence(path, Source("convention:proj", geo.proj_path, key), crs=native_crs(crs)))
    spatial = geo.spatial
    if spatial is None or crs is None or not spatial.affine:
        return
    node = h.nodes[path]
    shape = grid_shape(node, spatial)
    if spatial.transform is not None and shape is not None:
        if spatial.degenerate:
            findings.append(attribute_finding(h, geo.spatial_paths["spatial:transform"], RULE, ("spatial:transform",),
                                              f"transform {list(spatial.transform)} has determinant 0: no box"))
            return
        native = spatial.transform_bounds(shape)
        keys = ["spatial:transform"] + (["spatial:shape"] if spatial.shape is not None else [])
    elif spatial.bbox is not None:
        native, keys = spatial.bbox, ["spatial:bbox"]
    else:
        return
    assert native is not None
    source_path = geo.spatial_paths[keys[0]]
    outside = _outside_area(crs, native)
    if outside:
        findings.append(attribute_finding(h, source_path, RULE, (keys[0],), f"{keys[0]} gives no CRS84 box: {outside}"))
        return
    try:
        box = to_crs84(crs, *native)
    except ValueError as exc:
        findings.append(attribute_finding(h, source_path, RULE, (keys[0],), f"{keys[0]} gives no CRS84 box: {exc}"))
        return
    detail = ", ".join(keys + (["spatial:registration"] if spatial.registration == "node" else []))
    found.append(Evidence(
        path, Source("convention:spatial", source_path, detail), bbox=box, crs=native_crs(crs),
        native_bbox=None if is_crs84_like(crs) else native, edges=spatial.registration == "pixel",
        spatial_resolution=resolution_in_metres(crs, spatial, box)))


def _outside_area(crs: CRS, native: tuple[float, float, float, float]) -> str | None:
    """Why a projected box is absurd, if it is: it reaches further from the CRS's area of
    use (projected) than that area is wide or high, where PROJ's formulas still return
    numbers that mean nothing (a 10^12 m cell in UTM). ``None`` for a plausible box."""
    area = crs.area_of_use
    if crs.is_geographic or area is None:
        return None
    try:
        to_native = Transformer.from_crs("OGC:CRS84", crs, always_xy=True)
        xmin, ymin, xmax, ymax = to_native.transform_bounds(*area.bounds, densify_pts=21)
    except Exception:  # an area PROJ cannot project: nothing to compare with
        return None
    if not all(math.isfinite(v) for v in (xmin, ymin, xmax, ymax)):
        return None
    width, height = xmax - xmin, ymax - ymin
    if (native[0] < xmin - width or native[2] > xmax + width
            or native[1] < ymin - height or native[3] > ymax + height):
        return (f"the box {[round(v, 3) for v in native]} lies far outside the area of use of {crs.name!r} "
                f"({[round(v) for v in (xmin, ymin, xmax, ymax)]} in its units)")
    return None


def resolution_in_metres(crs: CRS, spatial: Spatial, box: Box) -> float | None:
    """The smaller cell step of ``spatial``'s transform in metres (see the module docstring)."""
    steps = spatial.cell_steps()
    if steps is None or not all(math.isfinite(s) and s > 0 for s in steps):
        return None
    axis = crs.axis_info[0] if crs.axis_info else None
    if crs.is_geographic:
        to_degrees = math.degrees(axis.unit_conversion_factor) if axis and axis.unit_conversion_factor else 1.0
        step_x, step_y = steps[0] * to_degrees, steps[1] * to_degrees
        geod = crs.get_geod()
        if geod is None:
            return None
        _lon, lat = box.centroid()
        _f, _b, along_parallel = geod.inv(0.0, lat, min(step_x, 180.0), lat)
        half = min(step_y, 180.0) / 2
        _f, _b, along_meridian = geod.inv(0.0, max(lat - half, -90.0), 0.0, min(lat + half, 90.0))
        metres = [m for m in (along_parallel, along_meridian) if m > 0]
        return min(metres) if metres else None
    factor = axis.unit_conversion_factor if axis and axis.unit_conversion_factor else 1.0
    return min(steps) * factor


def _unique(findings: list[Finding]) -> list[Finding]:
    """An inherited value's problem is found once per child array: report it once."""
    seen: set[tuple[str, str, str]] = set()
    out = []
    for f in findings:
        key = (f.rule, f.file, f.pointer)
        if key not in seen:
            seen.add(key)
            out.append(f)
    return out
