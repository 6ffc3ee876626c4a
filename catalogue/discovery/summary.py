"""What the search index holds of one dataset: its summary, its JSON hit, its facet values
and its text fields.

A *dataset* is one harvested hierarchy: its root node (a ``dcat:Dataset`` whose IRI is
the name of its graph) and, as its *variables*, every array of the hierarchy (dependent
arrays included). :func:`catalogue.discovery.read.summaries` reads these from the graph;
the index stores each dataset's hit JSON as ``/datasets`` returns it, so that a search
answers without reading the graph again.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Final
from urllib.parse import quote

from catalogue.model.extents import Box, Extent, Period

from .normalise import identifier_terms, prose_terms

__all__ = ["FACETS", "DatasetSummary", "Variable", "extent_json", "iso_instant"]

#: Facet names, in the order the API lists them; the index numbers them by position.
FACETS: Final = ("dtype", "dimension", "standard_name", "units", "zarr_format", "codec", "valid", "axis_type",
                  "axis_unit")


@dataclass
class Variable:
    """One array of a dataset, as a portal lists it."""

    iri: str
    path: str
    name: str
    long_name: str | None
    standard_name: str | None
    units: str | None
    #: Data type in the Zarr v3 vocabulary (``<f4`` is ``float32``; docs/web.md).
    dtype: str | None
    shape: list[int] | None
    dimensions: list[str]
    chunks: list[int] | None
    #: Codec names, normalised, in chain order (a sharding codec's inner codecs follow it).
    codecs: list[str]
    valid: bool | None
    #: The data type exactly as the metadata writes it (``<f4``, ``float32``, a JSON object...).
    native_dtype: str | None = None

    def as_json(self) -> dict[str, Any]:
        return {"iri": self.iri, "path": self.path, "name": self.name, "long_name": self.long_name,
                "standard_name": self.standard_name, "units": self.units, "dtype": self.dtype,
                "native_dtype": self.native_dtype, "shape": self.shape, "dimensions": self.dimensions,
                "chunks": self.chunks, "codecs": self.codecs, "valid": self.valid}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Variable:
        return cls(**{k: data[k] for k in ("iri", "path", "name", "long_name", "standard_name", "units", "dtype",
                                           "shape", "dimensions", "chunks", "codecs", "valid", "native_dtype")})


@dataclass
class DatasetSummary:
    """One harvested hierarchy: its root's description and its variables."""

    iri: str
    title: str
    summary: str | None
    keywords: list[str]
    zarr_format: int | None
    #: End of the harvest run that generated the current version (UTC).
    harvested: datetime | None
    valid: bool | None
    groups: int
    arrays: int
    variables: list[Variable]
    #: Rule ids of the error and warning findings anywhere in the hierarchy, sorted.
    rules: list[str]
    #: The root's extent as harvested (its CRS84 box and period), or ``None``.
    extent: Extent | None = None
    #: The axis types and units of its multiscale pyramids (OME-Zarr: space, time, channel;
    #: micrometer, second), distinct and sorted.
    axis_types: list[str] = field(default_factory=list)
    axis_units: list[str] = field(default_factory=list)

    # ------------------------------------------------------------ the hit
    def as_json(self) -> dict[str, Any]:
        """The JSON object of one ``/datasets`` hit (``web/datasets.py``'s ``HitOut``)."""
        iri = quote(self.iri, safe="")
        return {
            "iri": self.iri, "title": self.title, "summary": self.summary, "keywords": self.keywords,
            "zarr_format": self.zarr_format, "harvested": iso_instant(self.harvested), "valid": self.valid,
            "groups": self.groups, "arrays": self.arrays, "rules": self.rules, "extent": extent_json(self.extent),
            "variables": [v.as_json() for v in self.variables],
            "axis_types": self.axis_types, "axis_units": self.axis_units,
            "links": {
                "node": f"/node?iri={iri}", "portal": f"/browse?iri={iri}",
                "metadata": f"/node?iri={iri}&format=json", "turtle": f"/node?iri={iri}&format=turtle",
            },
        }

    def hit_bytes(self) -> bytes:
        """The hit as compact UTF-8 JSON, as the index stores it."""
        return json.dumps(self.as_json(), ensure_ascii=False, separators=(",", ":")).encode("utf-8")

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DatasetSummary:
        """The summary back from its hit JSON (the portal renders hits as summaries)."""
        harvested = data.get("harvested")
        found = data.get("extent")
        extent = None
        if found:
            box = Box(*found["bbox"]) if found.get("bbox") else None
            period = (Period(found["start"], found["end"], found.get("calendar") or "standard")
                      if found.get("start") and found.get("end") else None)
            extent = Extent(bbox=box, period=period)
        return cls(
            iri=data["iri"], title=data["title"], summary=data["summary"], keywords=list(data["keywords"]),
            zarr_format=data["zarr_format"],
            harvested=datetime.fromisoformat(harvested.replace("Z", "+00:00")) if harvested else None,
            valid=data["valid"], groups=data["groups"], arrays=data["arrays"],
            variables=[Variable.from_json(v) for v in data["variables"]], rules=list(data["rules"]),
            extent=extent, axis_types=list(data.get("axis_types") or []), axis_units=list(data.get("axis_units") or []),
        )

    # ------------------------------------------------------------ what is searched
    def facet_values(self) -> dict[str, set[str]]:
        """Facet -> the dataset's values: an array's value counts for the dataset
        (``dtype``, ``dimension``, ``standard_name``, ``units``, ``codec``); ``zarr_format``
        and ``valid`` are the root's; ``axis_type`` and ``axis_unit`` any pyramid's."""
        values: dict[str, set[str]] = {name: set() for name in FACETS}
        for v in self.variables:
            if v.dtype:
                values["dtype"].add(v.dtype)
            values["dimension"].update(x for x in v.dimensions if x)
            if v.standard_name:
                values["standard_name"].add(v.standard_name)
            if v.units:
                values["units"].add(v.units)
            values["codec"].update(v.codecs)
        if self.zarr_format is not None:
            values["zarr_format"].add(str(self.zarr_format))
        if self.valid is not None:
            values["valid"].add("true" if self.valid else "false")
        values["axis_type"].update(self.axis_types)
        values["axis_unit"].update(self.axis_units)
        return values

    def text_fields(self) -> tuple[list[str], list[str], list[str], list[str]]:
        """Index terms of the four weighted fields: title, keywords, variables (names and
        CF standard names as identifiers, long names as prose) and summary."""
        variables: list[str] = []
        for v in self.variables:
            variables += identifier_terms(v.name)
            variables += prose_terms(v.long_name)
            variables += identifier_terms(v.standard_name)
        return (prose_terms(self.title), [t for k in self.keywords for t in prose_terms(k)],
                variables, prose_terms(self.summary))


def iso_instant(moment: datetime | None) -> str | None:
    """ISO 8601 in UTC with a Z; milliseconds when that is all there is (harvest times)."""
    if moment is None:
        return None
    moment = moment.astimezone(UTC)
    spec = "milliseconds" if moment.microsecond % 1000 == 0 else "auto"
    return moment.isoformat(timespec=spec).replace("+00:00", "Z")


def extent_json(extent: Extent | None) -> dict[str, Any] | None:
    """The hit's ``extent``: what search filters on, as stored (``null`` when the store
    declares neither box nor period)."""
    if extent is None or (extent.bbox is None and extent.period is None):
        return None
    period = extent.period
    return {
        "bbox": extent.bbox.as_list() if extent.bbox is not None else None,
        "start": period.start if period is not None else None,
        "end": period.end if period is not None else None,
        "calendar": period.calendar if period is not None and not period.standard_calendar else None,
    }
