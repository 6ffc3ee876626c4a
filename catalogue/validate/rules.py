"""The validation rules: one id, severity and one-line statement each.

Rule ids are stable (users filter on them, SPARQL queries select them): a
rule id names *what* is wrong, dotted from general to specific. Each rule
has an IRI, ``zarr-rule:<id>``, used as ``sh:sourceConstraintComponent`` of
the SHACL results stored in the graph; ``docs/validation.md`` lists them all
with the reason behind each.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

from rdflib import Namespace, URIRef

RULE = Namespace("https://w3id.org/zarr-catalogue/rules#")


class Severity(StrEnum):
    """SHACL's three severities, in the order a report sorts them."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"


@dataclass(frozen=True)
class Rule:
    id: str
    severity: Severity
    statement: str

    @property
    def iri(self) -> URIRef:
        return RULE[self.id]


ERR, WARN, INFO = Severity.ERROR, Severity.WARNING, Severity.INFO

_TABLE: list[tuple[str, Severity, str]] = [
    # --- documents that cannot be read: the node is not catalogued
    ("document.unreadable", ERR, "A metadata document exists but cannot be read."),
    ("json.encoding", ERR, "A metadata document is not UTF-8."),
    ("json.syntax", ERR, "A metadata document is not valid JSON."),
    ("json.depth", ERR, "A metadata document nests arrays and objects too deeply."),
    ("json.duplicate-key", ERR, "An object in a metadata document has the same key twice."),
    ("json.surrogate", ERR, "A string in a metadata document holds a lone UTF-16 surrogate, which is not Unicode text."),
    ("json.not-object", ERR, "A metadata document (or consolidated entry) is not a JSON object."),
    ("json.too-large", ERR, "A metadata document is larger than the configured limit."),
    ("hierarchy.ambiguous", ERR, "A v2 node has both .zarray and .zgroup."),
    ("hierarchy.orphan", ERR, "A consolidated node's parent is missing or is an array."),
    ("hierarchy.path", ERR, "A consolidated node path is empty or has '.'/'..' segments."),
    ("hierarchy.consolidated", ERR, "Consolidated metadata is malformed."),
    ("hierarchy.implicit-root", WARN, "The store's root has no metadata document; its children do (an implicit group)."),
    ("document.backup", WARN, "A file beside a node's documents looks like an editor's copy of one (.zattrs~, zarr.json.bak); it is not read."),
    ("format.string", WARN, "zarr_format is written as a string; the specifications write a number."),
    ("v3.zarr_format", ERR, "zarr.json must have zarr_format 3."),
    ("v3.node_type", ERR, 'zarr.json must have node_type "array" or "group".'),
    ("v2.zarr_format", ERR, ".zarray and .zgroup must have zarr_format 2."),
    ("dependent.declaration", ERR, "A dependent-arrays declaration is malformed."),
    # --- Zarr v3 array and group metadata
    ("v3.required", ERR, "A key the v3 specification requires is missing."),
    ("v3.shape", ERR, "shape must be a list of non-negative integers."),
    ("v3.data_type", ERR, "data_type must be a core data type or a registered extension."),
    ("v3.chunk_grid", ERR, 'chunk_grid must be "regular" with a chunk_shape of positive integers.'),
    ("v3.chunk_grid.rank", ERR, "The chunk shape must have one entry per dimension of shape."),
    ("v3.chunk_key_encoding", ERR, 'chunk_key_encoding must be "default" or "v2" with separator "/" or ".".'),
    ("v3.chunk_key_encoding.proposed", INFO, "The prefix/suffix chunk key encodings are proposals, not yet in the v3 specification."),
    ("v3.codecs", ERR, "codecs must be a list of known codecs, each a name or {name, configuration}."),
    ("v3.codecs.array-to-bytes", ERR, "The codec chain must have exactly one array-to-bytes codec."),
    ("v3.codecs.order", ERR, "Codecs must go array-to-array, then array-to-bytes, then bytes-to-bytes."),
    ("v3.codecs.configuration", ERR, "A codec's configuration does not match its specification."),
    ("v3.sharding.divides", ERR, "The inner chunk shape of sharding_indexed must divide the shard shape."),
    ("v3.fill_value", ERR, "fill_value must be representable in the data type."),
    ("v3.dimension_names", ERR, "dimension_names must be a list of strings or nulls."),
    ("v3.dimension_names.length", ERR, "dimension_names must have one entry per dimension of shape."),
    ("v3.storage_transformers", ERR, "Storage transformers this catalogue does not know must not be required."),
    ("v3.extension", ERR, "Unknown metadata keys must be objects with must_understand: false."),
    ("v3.attributes", ERR, "attributes must be a JSON object."),
    # --- Zarr v2 array and group metadata (the corrected GeoZarr profile and the v2 specification)
    ("v2.required", ERR, "A key the v2 specification requires is missing from .zarray."),
    ("v2.unknown-key", ERR, ".zarray must not hold keys the v2 specification does not define."),
    ("v2.shape", ERR, "shape must be a list of non-negative integers."),
    ("v2.chunks", ERR, "chunks must be a list of positive integers."),
    ("v2.chunks.rank", ERR, "chunks must have one entry per dimension of shape."),
    ("v2.dtype", ERR, "dtype must be a NumPy type string (e.g. '<f8') or a structured dtype list."),
    ("v2.compressor", ERR, 'compressor must be null or an object with a string "id".'),
    ("v2.filters", ERR, 'filters must be null or a list of objects with a string "id".'),
    ("v2.filters.empty", INFO, "filters is an empty list; the v2 specification says null for no filters."),
    ("v2.codec.unknown", ERR, "A compressor or filter id that numcodecs does not know."),
    ("v2.order", ERR, 'order must be "C" or "F".'),
    ("v2.dimension_separator", ERR, 'dimension_separator must be "." or "/".'),
    ("v2.fill_value", ERR, "fill_value must be null or representable in the dtype."),
    ("v2.group", ERR, '.zgroup must hold only {"zarr_format": 2}.'),
    ("v2.nczarr", WARN, "A key of NCZarr (NetCDF's Zarr dialect, _nczarr_*) in .zgroup or .zarray; other readers ignore it."),
    ("codec.unsafe", WARN, "A codec that runs arbitrary code when decoding (pickle)."),
    # --- the verbatim building-block schema (profile "upstream")
    ("geozarr-upstream.type", ERR, "The building block's schema: a value has the wrong JSON type."),
    ("geozarr-upstream.required", ERR, "The building block's schema: a required key is missing."),
    ("geozarr-upstream.minItems", ERR, "The building block's schema: a list has too few items."),
    ("geozarr-upstream.enum", ERR, "The building block's schema: a value is not one of the allowed ones."),
    ("geozarr-upstream.other", ERR, "The building block's schema: another constraint fails."),
    # --- the Zarr Object Model (ZEP 6), corrected schemas
    ("zom.v2", ERR, "The node's ZOM does not match the (corrected) ZEP 6 schema for Zarr v2."),
    ("zom.v3", ERR, "The node's ZOM does not match the (corrected) ZEP 6 schema for Zarr v3."),
    # --- attributes: CF, xarray, Zarr conventions
    ("cf.array-dimensions", ERR, "_ARRAY_DIMENSIONS must be a list of strings, one per dimension."),
    ("cf.units", ERR, "units must be a non-empty string; 'X since DATE' needs a valid date."),
    ("cf.standard_name", ERR, "standard_name must be a lower-case CF name, optionally with a modifier."),
    ("cf.grid_mapping", ERR, "grid_mapping must name an existing variable of the same group."),
    ("cf.coordinates", WARN, "coordinates should name existing variables."),
    ("conventions.zarr_conventions", ERR, "zarr_conventions must be a list of convention objects."),
    # --- GeoZarr conventions (proj:, spatial:, multiscales) and the extents read from conventions, ACDD and STAC items
    ("geozarr.undeclared", WARN, "proj:, spatial: or multiscales attributes are used without declaring the convention in zarr_conventions."),
    ("geozarr.proj.schema", ERR, "A node declaring the proj convention does not match its (corrected) schema."),
    ("geozarr.spatial.schema", ERR, "A node declaring the spatial convention does not match its (corrected) schema."),
    ("geozarr.multiscales.schema", ERR, "A node declaring the multiscales convention does not match its (corrected) schema."),
    ("geozarr.proj.malformed", ERR, "A proj: attribute has the wrong type."),
    ("geozarr.proj.crs-unresolvable", ERR, "proj:code, proj:wkt2 or proj:projjson is not a CRS PROJ can resolve."),
    ("geozarr.proj.crs-conflict", ERR, "proj:code, proj:wkt2 and proj:projjson describe different CRSs."),
    ("geozarr.spatial.malformed", ERR, "A spatial: attribute has the wrong type or length."),
    ("geozarr.spatial.bbox-order", ERR, "spatial:bbox must be [xmin, ymin, xmax, ymax] with min <= max."),
    ("geozarr.spatial.latitude", ERR, "Latitudes in a geographic CRS must lie within -90..90."),
    ("geozarr.spatial.transform-degenerate", ERR, "spatial:transform maps the grid onto a line or a point."),
    ("geozarr.spatial.transform-bbox", WARN, "spatial:transform and spatial:shape give another box than spatial:bbox."),
    ("geozarr.spatial.transform-type", INFO, "A spatial:transform_type other than affine is not interpreted."),
    ("geozarr.spatial.dimensions", ERR, "spatial:dimensions must name two of the array's dimension names."),
    ("geozarr.spatial.shape", ERR, "spatial:shape must equal the array's sizes along spatial:dimensions."),
    ("geozarr.multiscales.malformed", ERR, "The multiscales attribute is not a layout of levels."),
    ("geozarr.multiscales.asset", ERR, "A multiscales level's asset or derived_from names no node of the hierarchy."),
    ("ome.schema", ERR, "OME-Zarr metadata does not match the NGFF JSON Schema of its version (bundled, verbatim)."),
    ("ome.version", WARN, "OME-Zarr metadata of a version whose schemas are not bundled (0.4 and 0.5 are): not checked."),
    ("extent.ome.unusable", WARN, "An OME-Zarr multiscale image's datasets or transforms cannot be read: no pyramid."),
    ("extent.conventions.unusable", WARN, "proj:/spatial: values are present but give no extent (no CRS, or not reprojectable)."),
    ("extent.acdd.unparseable", WARN, "An ACDD geospatial or time coverage attribute cannot be read."),
    ("extent.stac.unparseable", WARN, "A STAC item inside Zarr has a bbox, geometry, datetime or CRS that cannot be read."),
    # --- extents
    ("extent.conflict", WARN, "Two sources disagree on a node's extent (box, period or CRS) beyond a tolerance."),
    ("extent.values-budget", INFO, "A coordinate array was not read: the byte budget for coordinate values is spent."),
    ("extent.values-unreadable", WARN, "A coordinate array's values cannot be read or are not numbers."),
    ("extent.coordinate-values", WARN, "Coordinate values give no extent (missing values, latitudes beyond ±90)."),
    ("extent.non-monotonic", WARN, "A 1-D coordinate variable's values are not strictly monotonic."),
    ("extent.grid-mapping", WARN, "A grid mapping variable does not describe a CRS pyproj can resolve."),
    ("extent.time-units", WARN, "A time coordinate's units or calendar cannot be decoded."),
    ("extent.calendar-date", INFO, "A date of the data's calendar that the Gregorian calendar lacks is written as the month's last day."),
    ("extent.calendars-differ", INFO, "A group gets no period: the periods of its arrays are in calendars that do not agree."),
    ("extent.period-range", WARN, "A period reaches beyond the years 1..9999 and is not used."),
    ("extent.failed", WARN, "The extents of the hierarchy could not be extracted (an unexpected error); it is catalogued without them."),
    # --- dependent arrays
    ("dependent.chunk-key-collision", ERR, "Two arrays sharing a prefix would write chunks under the same key."),
]

RULES: dict[str, Rule] = {rid: Rule(rid, sev, text) for rid, sev, text in _TABLE}


def rule(rule_id: str) -> Rule:
    """The rule with this id (KeyError for a typo, caught by the tests)."""
    return RULES[rule_id]
