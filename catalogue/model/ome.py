"""OME-Zarr (NGFF) metadata: the bioimaging community's multiscale images, labels, plates.

Two layouts carry the same concepts:

* **NGFF 0.4** (Zarr v2, and the earlier 0.1–0.3): the keys are top-level attributes of
  the group (``.zattrs``): ``multiscales`` (a *list*, each with its own ``version``),
  ``omero``, ``labels``, ``image-label``, ``plate``, ``well``;
* **NGFF 0.5** (Zarr v3): the same keys inside one ``ome`` attribute, with one
  ``version`` for all (``{"ome": {"version": "0.5", "multiscales": [...]}}``).

:func:`ome_attributes` finds either, :func:`parse_ome` turns them into the small frozen
types below. The GeoZarr ``multiscales`` convention is an *object* (with a ``layout``),
OME's a *list*: the two never look alike, so a group is read by one or the other.

Physical sizes come from each dataset's ``coordinateTransformations`` (a ``scale`` and an
optional ``translation``), composed with the multiscale's own, in the axes' units.
Anything that does not parse raises :class:`OmeError` naming the JSON pointer (below the
attributes) and the value received; the NGFF JSON Schemas (``validate/``) say the rest.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from catalogue.model.json import short

__all__ = ["Axis", "Channel", "OmeDataset", "OmeError", "OmeImage", "OmeMultiscale", "Plate", "PlateWell",
           "WellField", "declared_version", "ome_attributes", "parse_ome"]


class OmeError(ValueError):
    """OME-Zarr metadata that cannot be read; ``pointer`` is below the attributes."""

    def __init__(self, pointer: tuple[str | int, ...], message: str) -> None:
        super().__init__(message)
        self.pointer = pointer


@dataclass(frozen=True)
class Axis:
    name: str
    #: "space", "time", "channel" or another (NGFF allows custom types); None when unsaid.
    type: str | None = None
    #: A UDUNITS-2 unit (NGFF lists the allowed ones for space and time), or None.
    unit: str | None = None


@dataclass(frozen=True)
class OmeDataset:
    """One resolution level: its path below the image group and its transform to physical space."""

    path: str
    scale: tuple[float, ...] | None = None
    translation: tuple[float, ...] | None = None


@dataclass(frozen=True)
class OmeMultiscale:
    name: str | None
    axes: tuple[Axis, ...]
    #: Finest first, as the spec orders them.
    datasets: tuple[OmeDataset, ...]
    #: The downscaling method (``type``), where said.
    type: str | None = None


@dataclass(frozen=True)
class Channel:
    label: str | None
    color: str | None = None
    #: The display window (start, end), where given.
    window: tuple[float, float] | None = None


@dataclass(frozen=True)
class PlateWell:
    """One well of a plate: its group's path below the plate, and its row and column names."""

    path: str
    row: str | None
    column: str | None


@dataclass(frozen=True)
class Plate:
    """A high-content screening plate (``plate``): rows and columns by name, in order, and its wells."""

    name: str | None
    rows: tuple[str, ...]
    columns: tuple[str, ...]
    wells: tuple[PlateWell, ...]
    #: The most fields of view any well has, where declared.
    field_count: int | None = None
    acquisitions: int = 0


@dataclass(frozen=True)
class WellField:
    """One field of view of a well (``well.images``): its image group's path below the well."""

    path: str
    acquisition: int | None = None


@dataclass(frozen=True)
class OmeImage:
    """What one group's OME metadata says: its version, images, channels, labels, and
    for a plate or a well their structure."""

    version: str | None
    multiscales: tuple[OmeMultiscale, ...] = ()
    channels: tuple[Channel, ...] = ()
    #: Paths of label images (the ``labels`` group's list), relative to that group.
    labels: tuple[str, ...] = ()
    #: "image", "labels", "plate", "well", "bioformats2raw" or "label image".
    kind: str = "image"
    plate: Plate | None = None
    #: A well's fields of view.
    fields: tuple[WellField, ...] = ()
    #: A label image's source image (``image-label.source.image``), relative to it: "../../" by default.
    label_source: str | None = None


def ome_attributes(attributes: dict[str, Any] | None) -> tuple[tuple[str, ...], dict[str, Any]] | None:
    """``(pointer prefix, the OME keys)`` of a group's attributes, or None when it has none:
    0.5 keeps them in ``ome``, earlier versions at the top (a ``multiscales`` that is an
    object is the GeoZarr convention's, not OME's)."""
    if not isinstance(attributes, dict):
        return None
    ome = attributes.get("ome")
    if isinstance(ome, dict):
        return ("ome",), ome
    keys = {k: attributes[k] for k in ("multiscales", "omero", "labels", "image-label", "plate", "well",
                                          "bioformats2raw.layout") if k in attributes}
    if isinstance(keys.get("multiscales"), dict):  # the zarr-conventions multiscales
        del keys["multiscales"]
    if not keys or (set(keys) == {"labels"} and not isinstance(keys["labels"], list)):
        return None
    return (), keys


def parse_ome(attributes: dict[str, Any] | None) -> OmeImage | None:
    """The OME metadata of a group's attributes, or None; :class:`OmeError` if unreadable."""
    found = ome_attributes(attributes)
    if found is None:
        return None
    prefix, ome = found
    version = declared_version(prefix, ome)
    if version is not None and not isinstance(version, str):
        raise OmeError((*prefix, "version"), f"version must be a string, got {short(version)}")
    multiscales = tuple(_multiscale(m, (*prefix, "multiscales", i))
                        for i, m in enumerate(_list(ome, "multiscales", prefix)))
    channels = _channels(ome.get("omero"), (*prefix, "omero"))
    labels = tuple(_string(v, (*prefix, "labels", i)) for i, v in enumerate(_list(ome, "labels", prefix)))
    kind, plate, fields, label_source = "image", None, (), None
    if "plate" in ome:
        kind, plate = "plate", _plate(ome["plate"], (*prefix, "plate"))
    elif "well" in ome:
        kind, fields = "well", _fields(ome["well"], (*prefix, "well"))
    elif "image-label" in ome:
        kind, label_source = "label image", _label_source(ome["image-label"], (*prefix, "image-label"))
    elif "bioformats2raw.layout" in ome:
        kind = "bioformats2raw"
    elif labels and not multiscales:
        kind = "labels"
    return OmeImage(version=version, multiscales=multiscales, channels=channels, labels=labels, kind=kind,
                    plate=plate, fields=fields, label_source=label_source)


def declared_version(prefix: tuple[str, ...], ome: dict[str, Any]) -> Any:
    """The version the OME keys declare, as written (``prefix`` and ``ome`` from
    :func:`ome_attributes`): 0.5's one ``ome.version``; before it, the first ``version`` of
    ``multiscales``, ``plate``, ``well`` or ``image-label``; None when none is given."""
    if prefix:
        return ome.get("version")
    for key in ("multiscales", "plate", "well", "image-label"):
        value = ome.get(key)
        first = value[0] if isinstance(value, list) and value else value
        if isinstance(first, dict) and "version" in first:
            return first["version"]
    return None


def _list(ome: dict[str, Any], key: str, prefix: tuple[str, ...]) -> list[Any]:
    value = ome.get(key, [])
    if not isinstance(value, list):
        raise OmeError((*prefix, key), f"{key} must be a list, got {short(value)}")
    return value


def _string(value: Any, pointer: tuple[str | int, ...]) -> str:
    if not isinstance(value, str):
        raise OmeError(pointer, f"expected a string, got {short(value)}")
    return value


def _multiscale(value: Any, pointer: tuple[str | int, ...]) -> OmeMultiscale:
    if not isinstance(value, dict):
        raise OmeError(pointer, f"a multiscale must be an object, got {short(value)}")
    axes = tuple(_axis(a, (*pointer, "axes", i)) for i, a in enumerate(value.get("axes") or []))
    rank = len(axes) or None
    outer_scale, outer_translation = _transforms(value.get("coordinateTransformations"),
                                                 (*pointer, "coordinateTransformations"), rank)
    datasets = []
    raw = value.get("datasets")
    if not isinstance(raw, list) or not raw:
        raise OmeError((*pointer, "datasets"), f"datasets must be a non-empty list, got {short(raw)}")
    for i, d in enumerate(raw):
        where = (*pointer, "datasets", i)
        if not isinstance(d, dict) or not isinstance(d.get("path"), str) or not d["path"]:
            raise OmeError(where, f"a dataset needs a path, got {short(d)}")
        scale, translation = _transforms(d.get("coordinateTransformations"), (*where, "coordinateTransformations"),
                                         rank)
        for own, outer, key in ((scale, outer_scale, "scale"), (translation, outer_translation, "translation")):
            if own is not None and outer is not None and len(own) != len(outer):
                raise OmeError((*where, "coordinateTransformations"),
                               f"{key} has {len(own)} values where the multiscale's has {len(outer)}")
        if outer_scale is not None:
            scale = tuple(a * b for a, b in zip(scale, outer_scale, strict=True)) if scale else outer_scale
        if outer_translation is not None:
            translation = tuple(a + b for a, b in zip(translation, outer_translation, strict=True)) \
                if translation else outer_translation
        datasets.append(OmeDataset(d["path"], scale, translation))
    name = value.get("name")
    kind = value.get("type")
    return OmeMultiscale(name=name if isinstance(name, str) else None, axes=axes, datasets=tuple(datasets),
                         type=kind if isinstance(kind, str) else None)


def _axis(value: Any, pointer: tuple[str | int, ...]) -> Axis:
    if isinstance(value, str):  # NGFF 0.3: axes were names
        return Axis(value)
    if not isinstance(value, dict) or not isinstance(value.get("name"), str):
        raise OmeError(pointer, f"an axis must be an object with a name, got {short(value)}")
    kind, unit = value.get("type"), value.get("unit")
    return Axis(value["name"], kind if isinstance(kind, str) else None, unit if isinstance(unit, str) else None)


def _transforms(value: Any, pointer: tuple[str | int, ...], rank: int | None
                ) -> tuple[tuple[float, ...] | None, tuple[float, ...] | None]:
    """The ``scale`` and ``translation`` of a coordinateTransformations list (identity: None)."""
    if value is None:
        return None, None
    if not isinstance(value, list):
        raise OmeError(pointer, f"coordinateTransformations must be a list, got {short(value)}")
    scale = translation = None
    for i, t in enumerate(value):
        kind = t.get("type") if isinstance(t, dict) else None
        if kind in ("scale", "translation"):
            numbers = t.get(kind)
            if not (isinstance(numbers, list) and numbers and all(
                    isinstance(n, int | float) and not isinstance(n, bool) and math.isfinite(n) for n in numbers)):
                raise OmeError((*pointer, i, kind), f"{kind} must be a list of finite numbers, got {short(numbers)}")
            if rank is not None and len(numbers) != rank:
                raise OmeError((*pointer, i, kind), f"{kind} has {len(numbers)} values for {rank} axes")
            if kind == "scale":
                scale = tuple(float(n) for n in numbers)
            else:
                translation = tuple(float(n) for n in numbers)
        elif kind != "identity":
            raise OmeError((*pointer, i), f"unknown coordinate transformation {short(t)}")
    return scale, translation


def _channels(omero: Any, pointer: tuple[str, ...]) -> tuple[Channel, ...]:
    if omero is None:
        return ()
    channels = omero.get("channels") if isinstance(omero, dict) else None
    if not isinstance(channels, list):
        raise OmeError((*pointer, "channels"), f"omero.channels must be a list, got {short(channels)}")
    out = []
    for i, c in enumerate(channels):
        if not isinstance(c, dict):
            raise OmeError((*pointer, "channels", i), f"a channel must be an object, got {short(c)}")
        window = c.get("window")
        span = None
        if isinstance(window, dict) and all(isinstance(window.get(k), int | float) for k in ("start", "end")):
            span = (float(window["start"]), float(window["end"]))
        label, color = c.get("label"), c.get("color")
        out.append(Channel(label if isinstance(label, str) else None, color if isinstance(color, str) else None, span))
    return tuple(out)


def _names(plate: dict[str, Any], key: str, pointer: tuple[str, ...]) -> tuple[str, ...]:
    value = plate.get(key)
    if not isinstance(value, list):
        raise OmeError((*pointer, key), f"plate.{key} must be a list, got {short(value)}")
    names = []
    for i, item in enumerate(value):
        name = item.get("name") if isinstance(item, dict) else None
        if not isinstance(name, str):
            raise OmeError((*pointer, key, i), f"a plate {key[:-1]} needs a name, got {short(item)}")
        names.append(name)
    return tuple(names)


def _integer(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _index(names: tuple[str, ...], value: Any) -> str | None:
    index = _integer(value)
    return names[index] if index is not None and 0 <= index < len(names) else None


def _listed_paths(value: Any, pointer: tuple[str | int, ...], what: str) -> list[tuple[dict[str, Any], str]]:
    """Each object of a list with its non-empty ``path`` (wells of a plate, images of a well)."""
    if not isinstance(value, list):
        raise OmeError(pointer, f"{'.'.join(str(p) for p in pointer[-2:])} must be a list, got {short(value)}")
    out = []
    for i, item in enumerate(value):
        path = item.get("path") if isinstance(item, dict) else None
        if not isinstance(path, str) or not path:
            raise OmeError((*pointer, i), f"{what} needs a path, got {short(item)}")
        out.append((item, path))
    return out


def _plate(plate: Any, pointer: tuple[str, ...]) -> Plate:
    if not isinstance(plate, dict):
        raise OmeError(pointer, f"plate must be an object, got {short(plate)}")
    rows, columns = _names(plate, "rows", pointer), _names(plate, "columns", pointer)
    wells = []
    for well, path in _listed_paths(plate.get("wells"), (*pointer, "wells"), "a well"):
        # 0.4 gives indexes; 0.1-0.3 only the path "row/column"
        row, column = _index(rows, well.get("rowIndex")), _index(columns, well.get("columnIndex"))
        if row is None and column is None and path.count("/") == 1:
            row, column = path.split("/")
        wells.append(PlateWell(path, row, column))
    name, acquisitions = plate.get("name"), plate.get("acquisitions")
    return Plate(name=name if isinstance(name, str) else None, rows=rows, columns=columns, wells=tuple(wells),
                 field_count=_integer(plate.get("field_count")),
                 acquisitions=len(acquisitions) if isinstance(acquisitions, list) else 0)


def _fields(well: Any, pointer: tuple[str, ...]) -> tuple[WellField, ...]:
    images = well.get("images") if isinstance(well, dict) else None
    return tuple(WellField(path, _integer(image.get("acquisition")))
                 for image, path in _listed_paths(images, (*pointer, "images"), "a field of view"))


def _label_source(label: Any, pointer: tuple[str, ...]) -> str:
    source = label.get("source") if isinstance(label, dict) else None
    image = source.get("image", "../../") if isinstance(source, dict) else "../../"
    if not isinstance(image, str):
        raise OmeError((*pointer, "source", "image"), f"the source image must be a path, got {short(image)}")
    return image
