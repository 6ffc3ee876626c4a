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

The cell size (``spatial_resolution``, metres) is ``crs.resolution_in_metres`` of the
lengths of one step along a row and along a column of the transform: the one definition
shared with CF coordinates (grid distance in a projected CRS; the nominal cell size at
the equator on the CRS's ellipsoid in a geographic CRS). Its source is the transform,
even when the box comes from ``spatial:bbox``.
"""

from __future__ import annotations

from catalogue.extents.attribute_finding import attribute_finding
from catalogue.extents.crs import (
    CRSError,
    is_crs84_like,
    native_crs,
    outside_area,
    parse_crs,
    resolution_in_metres,
    to_crs84,
)
from catalogue.extents.evidence import Evidence
from catalogue.model.extents import MultiscaleLevel, Multiscales, Source
from catalogue.model.geozarr import (
    EffectiveGeo,
    GeoZarrError,
    effective_geo,
    grid_shape,
    multiscales_extent,
    parse_multiscales,
)
from catalogue.model.nodes import Hierarchy
from catalogue.model.ome import OmeError, OmeImage, parse_ome
from catalogue.validate.findings import Finding

__all__ = ["evidence", "multiscales"]

RULE = "extent.conventions.unusable"
#: OME-Zarr metadata the pyramid could not be read from (the NGFF schemas say more: ``ome.schema``).
OME_RULE = "extent.ome.unusable"


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
    """The pyramid of every group with a ``multiscales`` attribute (the GeoZarr convention's
    object, or OME-Zarr's list, top-level in NGFF 0.4 and inside ``ome`` in 0.5), by group path."""
    out: dict[str, Multiscales] = {}
    findings: list[Finding] = []
    for path in sorted(hierarchy.nodes):
        node = hierarchy.nodes[path]
        attributes = node.attributes or {}
        if node.kind != "group":
            continue
        if isinstance(attributes.get("multiscales"), dict):
            try:
                out[path] = multiscales_extent(path, parse_multiscales(attributes["multiscales"]))
            except GeoZarrError as exc:
                findings.append(attribute_finding(hierarchy, path, RULE, ("multiscales",), str(exc)))
            continue
        try:
            image = parse_ome(attributes)
        except OmeError as exc:
            findings.append(attribute_finding(hierarchy, path, OME_RULE, exc.pointer, str(exc)))
            continue
        if image is not None and image.multiscales:
            out[path] = ome_multiscales(path, image)
    return out, findings


def ome_images(hierarchy: Hierarchy) -> dict[str, OmeImage]:
    """The OME-Zarr metadata of every group that has some, by group path (a group whose
    metadata does not parse is left out: :func:`multiscales` reported it)."""
    out: dict[str, OmeImage] = {}
    for path in sorted(hierarchy.nodes):
        node = hierarchy.nodes[path]
        if node.kind != "group" or not node.attributes:
            continue
        try:
            image = parse_ome(node.attributes)
        except OmeError:
            continue
        if image is not None:
            out[path] = image
    return out


def ome_multiscales(group_path: str, image: OmeImage) -> Multiscales:
    """The catalogue's pyramid of an OME-Zarr image: its first multiscale's datasets in the
    spec's order (finest first), each level's ``scale`` relative to the finest, its
    ``cell_size`` the physical pixel size in the axes' units, and the channels' labels."""
    multiscale = image.multiscales[0]
    base = multiscale.datasets[0].scale
    levels = []
    for index, dataset in enumerate(multiscale.datasets):
        relative = None
        if base is not None and dataset.scale is not None and all(base) and len(base) == len(dataset.scale):
            relative = tuple(s / b for s, b in zip(dataset.scale, base, strict=True))
        levels.append(MultiscaleLevel(index=index, asset=dataset.path,
                                      scale=relative, translation=dataset.translation,
                                      cell_size=dataset.scale))
    return Multiscales(
        path=group_path, levels=tuple(levels), convention="ome-zarr",
        axes=tuple(a.name for a in multiscale.axes), resampling=multiscale.type,
        axis_types=tuple(a.type for a in multiscale.axes), axis_units=tuple(a.unit for a in multiscale.axes),
        channels=tuple(c.label or "" for c in image.channels), version=image.version,
    )


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
    outside = outside_area(crs, native)
    if outside:
        findings.append(attribute_finding(h, source_path, RULE, (keys[0],), f"{keys[0]} gives no CRS84 box: {outside}"))
        return
    try:
        box = to_crs84(crs, *native)
    except ValueError as exc:
        findings.append(attribute_finding(h, source_path, RULE, (keys[0],), f"{keys[0]} gives no CRS84 box: {exc}"))
        return
    steps = spatial.cell_steps()
    resolution = resolution_in_metres(crs, *steps) if steps is not None else None
    if resolution is not None and keys[0] != "spatial:transform":
        # The box is spatial:bbox's, the cell size the transform's: each figure its own source.
        found.append(Evidence(path, Source("convention:spatial", geo.spatial_paths.get("spatial:transform", source_path),
                                           "spatial:transform"), spatial_resolution=resolution,
                              edges=spatial.registration == "pixel"))
    detail = ", ".join(keys + (["spatial:registration"] if spatial.registration == "node" else []))
    found.append(Evidence(
        path, Source("convention:spatial", source_path, detail), bbox=box, crs=native_crs(crs),
        native_bbox=None if is_crs84_like(crs) else native, edges=spatial.registration == "pixel",
        spatial_resolution=resolution))


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
