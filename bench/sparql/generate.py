"""A deterministic synthetic catalogue for the SPARQL discovery benchmark, as N-Quads.

Why synthetic: a benchmark that needs a million triples of real harvests would need
hundreds of real Zarr stores.  Why shaped exactly like harvests: the queries a portal
asks (lists of dimension names, CF attributes, group membership) only exercise a
SPARQL engine realistically when the data has the converter's layout, with its
blank-node ``rdf:List`` cells, ``rdf:JSON`` literals and one named graph per hierarchy.

So the generator first builds plain Zarr metadata documents (``zarr.json`` for v3,
``.zarray``/``.zgroup``/``.zattrs`` for v2, as zarr-python and xarray write them) and
then writes the triples :mod:`catalogue.rdf.convert` would make of them, by hand and
fast (the real converter runs pyld and manages a few thousand nodes per second).
``tests/bench/test_sparql.py`` converts generated hierarchies with the real converter
and checks that both give isomorphic graphs, so the two cannot drift apart silently.

One thing is not made by the converter: some dataset roots carry a harvest time,
``prov:generatedAtTime`` with an ``xsd:dateTime`` (always with a timezone), which the
"harvested since" query filters on (see :data:`HARVESTED_AT`).

Size: ``--scale 1`` makes 1,000 groups and as many arrays as fit in 1,003,000 triples
(about 23,000: a realistic array is 30-60 triples, so the issue's "50,000 arrays" and
"1,003,000 triples" cannot both hold; the triple count wins by default, ``--arrays
50000`` gives the node counts instead, at about 2.2 million triples).  Everything is
drawn from ``random.Random`` streams seeded with strings (hashed with SHA-512, not
with Python's randomised ``hash``), so a seed gives the same bytes on every run and
machine; a ``.json`` sidecar records seed, scale and :data:`GENERATOR_VERSION`.

Usage::

    .venv/bin/python -m bench.sparql.generate                     # bench/data/, scale 1
    .venv/bin/python -m bench.sparql.generate --scale 0.01 -o /tmp/small.nq
"""

from __future__ import annotations

import argparse
import json
import math
import random
import sys
import time
from bisect import bisect
from collections.abc import Iterator
from dataclasses import dataclass, field
from decimal import Decimal
from itertools import accumulate
from pathlib import Path
from typing import Any, Literal

REPO = Path(__file__).resolve().parents[2]
DATA_DIR = REPO / "bench" / "data"

#: Bump when the output for a given seed and scale changes (``run`` regenerates then).
GENERATOR_VERSION = 2
TARGET_TRIPLES = 1_003_000
TARGET_GROUPS = 1_000
DEFAULT_SEED = "zarr-catalogue-sparql-bench"

RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDFS = "http://www.w3.org/2000/01/rdf-schema#"
XSD = "http://www.w3.org/2001/XMLSchema#"
ZARR = "https://w3id.org/zarr-catalogue/vocab#"
DCT = "http://purl.org/dc/terms/"
DCAT = "http://www.w3.org/ns/dcat#"
PROV = "http://www.w3.org/ns/prov#"

#: The harvest time of a dataset root.  The converter writes none yet; when the
#: catalogue gets one, change this (and ``queries/10_harvested_since.rq``) to match.
HARVESTED_AT = PROV + "generatedAtTime"

# Terms, already in N-Triples form.
TYPE = f"<{RDF}type>"
FIRST = f"<{RDF}first>"
REST = f"<{RDF}rest>"
NIL = f"<{RDF}nil>"
RDF_JSON = f"{RDF}JSON"
GROUP = f"<{ZARR}Group>"
ARRAY = f"<{ZARR}Array>"
DATASET = f"<{DCAT}Dataset>"
P = {
    name: f"<{ZARR}{name}>"
    for name in (
        "member",
        "path",
        "zarrFormat",
        "shape",
        "chunkShape",
        "dataType",
        "chunkGrid",
        "chunkKeyEncoding",
        "fillValue",
        "codecs",
        "storageTransformers",
        "dimensionNames",
        "attributes",
        "compressor",
        "filters",
        "order",
        "dimensionSeparator",
        "name",
        "configuration",
        "shortForm",
        "extraFields",
        "standardName",
        "units",
    )
}
HARVESTED = f"<{HARVESTED_AT}>"
#: Attribute name -> property, as the catalogue context lifts them (convert._lift).
LIFTED = {
    "title": f"<{DCT}title>",
    "summary": f"<{DCT}description>",
    "institution": f"<{DCT}publisher>",
    "long_name": f"<{RDFS}label>",
    "standard_name": P["standardName"],
    "units": P["units"],
}
KEYWORD = f"<{DCAT}keyword>"


# ------------------------------------------------------------------ N-Triples terms
def _esc(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")


def lit(text: str) -> str:
    """A plain (xsd:string) literal."""
    return f'"{_esc(text)}"'


def typed(text: str, datatype: str) -> str:
    return f'"{_esc(text)}"^^<{datatype}>'


def integer(n: int) -> str:
    return f'"{n}"^^<{XSD}integer>'


def json_text(value: Any) -> str:
    """Exactly ``catalogue.rdf.convert.json_text`` (compact, key order kept)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=True)


def json_lit(value: Any) -> str:
    return typed(json_text(value), RDF_JSON)


def scalar(value: Any) -> str:
    """A fill value the way ``convert.scalar`` types it."""
    if isinstance(value, bool):
        return typed("true" if value else "false", XSD + "boolean")
    if isinstance(value, int):
        return integer(value)
    if isinstance(value, float) and math.isfinite(value):
        text = format(Decimal(repr(value)), "f")
        return typed(text if "." in text else text + ".0", XSD + "decimal")
    if isinstance(value, str):
        return lit(value)
    return json_lit(value)


class Quads:
    """The N-Quads lines of one hierarchy: its graph is named by the root IRI."""

    def __init__(self, graph: str, label: str) -> None:
        self.graph = f"<{graph}>"
        self.label = label
        self.bnodes = 0
        self.lines: list[str] = []

    def bnode(self) -> str:
        self.bnodes += 1
        return f"_:{self.label}b{self.bnodes}"

    def add(self, s: str, p: str, o: str) -> None:
        self.lines.append(f"{s} {p} {o} {self.graph} .\n")

    def rdf_list(self, items: list[str]) -> str:
        """An rdf:List of already formatted terms; returns its head (rdf:nil if empty)."""
        if not items:
            return NIL
        head = cell = self.bnode()
        for i, item in enumerate(items):
            self.add(cell, FIRST, item)
            rest = self.bnode() if i + 1 < len(items) else NIL
            self.add(cell, REST, rest)
            cell = rest
        return head

    def named_configuration(self, value: dict[str, Any]) -> str:
        """A v3 ``{"name", "configuration"}`` value as a blank node, as in the converter."""
        node = self.bnode()
        self.add(node, P["name"], lit(value["name"]))
        if "configuration" in value:
            self.add(node, P["configuration"], json_lit(value["configuration"]))
        rest = {k: v for k, v in value.items() if k not in ("name", "configuration")}
        if rest:
            self.add(node, P["extraFields"], json_lit(rest))
        return node

    def v2_codec(self, value: dict[str, Any]) -> str:
        """A v2 codec ``{"id", **config}`` as a blank node (convert.v2_codec)."""
        node = self.bnode()
        self.add(node, P["name"], lit(value["id"]))
        self.add(node, P["configuration"], json_lit({k: v for k, v in value.items() if k != "id"}))
        return node


# ----------------------------------------------------------------------- the model
Kind = Literal["array", "group"]


@dataclass
class NodeSpec:
    """One node, with the documents a harvest would read (as in ``catalogue.model.Node``)."""

    path: str
    kind: Kind
    documents: dict[str, dict[str, Any]]
    members: list[str] = field(default_factory=list)


@dataclass
class HierarchySpec:
    """One harvested hierarchy: root URL, Zarr format, nodes by path, harvest time."""

    index: int
    url: str
    zarr_format: Literal[2, 3]
    nodes: dict[str, NodeSpec] = field(default_factory=dict)
    harvested_at: str | None = None

    def iri(self, path: str) -> str:
        return f"{self.url}/{path}" if path else self.url


def _attributes(h: HierarchySpec, node: NodeSpec) -> dict[str, Any] | None:
    if h.zarr_format == 3:
        return node.documents["zarr.json"].get("attributes")
    return node.documents.get(".zattrs")


def node_quads(h: HierarchySpec, node: NodeSpec, out: Quads) -> None:
    """Append the triples the catalogue converter makes of ``node`` to ``out``."""
    iri = f"<{h.iri(node.path)}>"
    add = out.add
    add(iri, TYPE, ARRAY if node.kind == "array" else GROUP)
    if node.path == "":
        add(iri, TYPE, DATASET)
    add(iri, P["path"], lit(node.path))
    add(iri, P["zarrFormat"], integer(h.zarr_format))
    attrs = _attributes(h, node)
    if h.zarr_format == 3:
        meta = node.documents["zarr.json"]
        if node.kind == "array":
            _v3_array(iri, meta, out)
        if "attributes" in meta:
            add(iri, P["attributes"], json_lit(meta["attributes"]))
    else:
        if node.kind == "array":
            _v2_array(iri, node.documents[".zarray"], attrs, out)
        if ".zattrs" in node.documents:
            add(iri, P["attributes"], json_lit(node.documents[".zattrs"]))
    for key, prop in LIFTED.items():
        value = (attrs or {}).get(key)
        if isinstance(value, str) and value.strip():
            add(iri, prop, lit(value))
    keywords = (attrs or {}).get("keywords")
    if isinstance(keywords, str):
        words = [w.strip() for w in keywords.replace(";", ",").split(",")]
    elif isinstance(keywords, list):
        words = [w.strip() for w in keywords]
    else:
        words = []
    for word in dict.fromkeys(w for w in words if w):
        add(iri, KEYWORD, lit(word))
    for member in node.members:
        add(iri, P["member"], f"<{h.iri(member)}>")
    if node.path == "" and h.harvested_at is not None:
        add(iri, HARVESTED, typed(h.harvested_at, XSD + "dateTime"))


def _v3_array(iri: str, meta: dict[str, Any], out: Quads) -> None:
    add = out.add
    add(iri, P["shape"], out.rdf_list([integer(n) for n in meta["shape"]]))
    add(iri, P["dataType"], lit(meta["data_type"]))
    grid = meta["chunk_grid"]
    add(iri, P["chunkGrid"], out.named_configuration(grid))
    if grid["name"] == "regular":
        shape = grid["configuration"]["chunk_shape"]
        add(iri, P["chunkShape"], out.rdf_list([integer(n) for n in shape]))
    add(iri, P["chunkKeyEncoding"], out.named_configuration(meta["chunk_key_encoding"]))
    add(iri, P["fillValue"], scalar(meta["fill_value"]))
    add(iri, P["codecs"], out.rdf_list([out.named_configuration(c) for c in meta["codecs"]]))
    if "storage_transformers" in meta:
        transformers = [out.named_configuration(c) for c in meta["storage_transformers"]]
        add(iri, P["storageTransformers"], out.rdf_list(transformers))
    if "dimension_names" in meta:
        add(iri, P["dimensionNames"], out.rdf_list([lit(n) for n in meta["dimension_names"]]))


def _v2_array(iri: str, meta: dict[str, Any], attrs: dict[str, Any] | None, out: Quads) -> None:
    add = out.add
    add(iri, P["shape"], out.rdf_list([integer(n) for n in meta["shape"]]))
    add(iri, P["chunkShape"], out.rdf_list([integer(n) for n in meta["chunks"]]))
    add(iri, P["dataType"], lit(meta["dtype"]))
    add(iri, P["fillValue"], scalar(meta["fill_value"]))
    codecs: list[str] = []
    if meta["filters"] is None:
        add(iri, P["filters"], json_lit(None))
    else:
        codecs = [out.v2_codec(f) for f in meta["filters"]]
        add(iri, P["filters"], out.rdf_list(codecs))
    if meta["compressor"] is None:
        add(iri, P["compressor"], json_lit(None))
    else:
        compressor = out.v2_codec(meta["compressor"])
        add(iri, P["compressor"], compressor)
        codecs = [*codecs, compressor]
    add(iri, P["order"], lit(meta["order"]))
    separator = meta.get("dimension_separator", ".")
    if "dimension_separator" in meta:
        add(iri, P["dimensionSeparator"], lit(separator))
    encoding = {"name": "v2", "configuration": {"separator": separator}}
    add(iri, P["chunkKeyEncoding"], out.named_configuration(encoding))
    add(iri, P["codecs"], out.rdf_list(codecs))
    dims = (attrs or {}).get("_ARRAY_DIMENSIONS")
    if isinstance(dims, list):
        add(iri, P["dimensionNames"], out.rdf_list([lit(d) for d in dims]))


def hierarchy_quads(h: HierarchySpec) -> list[str]:
    """Every N-Quads line of one hierarchy, in node order."""
    out = Quads(h.url, f"h{h.index}")
    for node in h.nodes.values():
        node_quads(h, node, out)
    return out.lines


def _count(h: HierarchySpec, node: NodeSpec) -> int:
    out = Quads(h.url, "x")
    node_quads(h, node, out)
    return len(out.lines)


# ------------------------------------------------------------------- content tables
@dataclass(frozen=True)
class Var:
    """A CF variable a theme's datasets carry: name, CF attributes, dtypes, dimensions."""

    name: str
    standard_name: str | None
    long_name: str
    units: str | None
    dtypes: tuple[str, ...]
    dims: Literal["2d", "3d", "static"] = "2d"


@dataclass(frozen=True)
class Theme:
    slug: str
    title: str
    summary: str
    keywords: tuple[str, ...]
    grid: Literal["latlon", "xy"]
    vertical: str | None
    variables: tuple[Var, ...]


F32, F64 = ("float32",), ("float32", "float32", "float64")
THEMES: dict[str, Theme] = {
    t.slug: t
    for t in (
        Theme(
            "atmosphere",
            "Daily near-surface air temperature and precipitation",
            "Daily means of near-surface air temperature, precipitation, pressure and wind "
            "from a synthetic atmospheric reanalysis.",
            ("air temperature", "precipitation", "climate", "reanalysis", "atmosphere"),
            "latlon",
            "plev",
            (
                Var("tas", "air_temperature", "Near-surface air temperature", "K", F64),
                Var("pr", "precipitation_flux", "Precipitation", "kg m-2 s-1", F32),
                Var("psl", "air_pressure_at_mean_sea_level", "Sea level pressure", "Pa", F32),
                Var("huss", "specific_humidity", "Near-surface specific humidity", "1", F32),
                Var("uas", "eastward_wind", "Eastward near-surface wind", "m s-1", F32),
                Var("vas", "northward_wind", "Northward near-surface wind", "m s-1", F32),
                Var("ta", "air_temperature", "Air temperature", "K", F64, "3d"),
                Var("hur", "relative_humidity", "Relative humidity", "%", F32, "3d"),
                Var("clt", "cloud_area_fraction", "Total cloud cover fraction", "%", F32),
                Var("orog", "surface_altitude", "Surface altitude", "m", F32, "static"),
            ),
        ),
        Theme(
            "ocean",
            "Ocean reanalysis of sea water temperature and salinity",
            "Monthly ocean temperature, salinity, currents and sea surface height from a "
            "synthetic ocean reanalysis on depth levels.",
            ("ocean", "sea water temperature", "salinity", "reanalysis", "currents"),
            "latlon",
            "depth",
            (
                Var(
                    "thetao",
                    "sea_water_potential_temperature",
                    "Sea water potential temperature",
                    "degC",
                    F64,
                    "3d",
                ),
                Var("so", "sea_water_salinity", "Sea water salinity", "0.001", F32, "3d"),
                Var(
                    "zos",
                    "sea_surface_height_above_geoid",
                    "Sea surface height above geoid",
                    "m",
                    F32,
                ),
                Var(
                    "uo",
                    "eastward_sea_water_velocity",
                    "Eastward sea water velocity",
                    "m s-1",
                    F32,
                    "3d",
                ),
                Var(
                    "vo",
                    "northward_sea_water_velocity",
                    "Northward sea water velocity",
                    "m s-1",
                    F32,
                    "3d",
                ),
                Var("tos", "sea_surface_temperature", "Sea surface temperature", "degC", F64),
                Var(
                    "mlotst",
                    "ocean_mixed_layer_thickness_defined_by_sigma_t",
                    "Ocean mixed layer thickness",
                    "m",
                    F32,
                ),
                Var(
                    "deptho",
                    "sea_floor_depth_below_geoid",
                    "Sea floor depth below geoid",
                    "m",
                    F32,
                    "static",
                ),
                Var("basin", "region", "Ocean basin index", None, ("int8", "int16"), "static"),
            ),
        ),
        Theme(
            "seaice",
            "Sea-ice concentration and thickness from passive microwave",
            "Daily sea-ice concentration, thickness and snow depth on a polar stereographic "
            "grid, derived from synthetic passive microwave observations.",
            ("sea ice", "cryosphere", "polar", "passive microwave", "snow"),
            "xy",
            None,
            (
                Var("siconc", "sea_ice_area_fraction", "Sea-ice area fraction", "%", F32),
                Var("sithick", "sea_ice_thickness", "Sea-ice thickness", "m", F32),
                Var("sisnthick", "surface_snow_thickness", "Snow thickness on sea ice", "m", F32),
                Var("status_flag", "status_flag", "Processing status flag", None, ("uint8",)),
                Var(
                    "total_standard_error",
                    None,
                    "Total standard error of sea-ice concentration",
                    "%",
                    ("float32", "int16"),
                ),
            ),
        ),
        Theme(
            "sst",
            "Satellite sea surface temperature analysis",
            "Gap-free daily foundation sea surface temperature analysis blending synthetic "
            "infrared and microwave satellite observations.",
            ("sea surface temperature", "satellite", "ocean", "analysis", "L4"),
            "latlon",
            None,
            (
                Var(
                    "analysed_sst",
                    "sea_surface_foundation_temperature",
                    "Analysed sea surface temperature",
                    "K",
                    ("int16", "float32"),
                ),
                Var(
                    "analysis_error",
                    None,
                    "Estimated error standard deviation of analysed sea surface temperature",
                    "K",
                    ("int16",),
                ),
                Var(
                    "sea_ice_fraction",
                    "sea_ice_area_fraction",
                    "Sea ice area fraction",
                    "1",
                    ("int8", "float32"),
                ),
                Var("mask", None, "Land, sea, lake and ice bit mask", None, ("uint8", "int8")),
            ),
        ),
        Theme(
            "land",
            "Land surface model: soil moisture, soil temperature and vegetation",
            "Land surface model output with soil moisture and soil temperature on soil "
            "layers, leaf area index, snow and evapotranspiration.",
            ("land surface", "soil moisture", "soil temperature", "vegetation", "snow"),
            "latlon",
            "depth",
            (
                Var(
                    "mrso",
                    "mass_content_of_water_in_soil",
                    "Total soil moisture content",
                    "kg m-2",
                    F32,
                ),
                Var("tsl", "soil_temperature", "Soil temperature", "K", F64, "3d"),
                Var("lai", "leaf_area_index", "Leaf area index", "1", F32),
                Var(
                    "evspsbl",
                    "water_evapotranspiration_flux",
                    "Evaporation including sublimation and transpiration",
                    "kg m-2 s-1",
                    F32,
                ),
                Var("snw", "surface_snow_amount", "Surface snow amount", "kg m-2", F32),
                Var("landcover", None, "Land cover class", None, ("uint8",), "static"),
            ),
        ),
        Theme(
            "airquality",
            "Air quality reanalysis: ozone, nitrogen dioxide and particulate matter",
            "Hourly concentrations of ozone, nitrogen dioxide and fine particulate matter from "
            "a synthetic atmospheric composition reanalysis.",
            ("air quality", "ozone", "aerosol", "atmospheric composition", "pollution"),
            "latlon",
            "plev",
            (
                Var(
                    "o3",
                    "mole_fraction_of_ozone_in_air",
                    "Ozone mole fraction",
                    "mol mol-1",
                    F32,
                    "3d",
                ),
                Var(
                    "no2",
                    "mole_fraction_of_nitrogen_dioxide_in_air",
                    "Nitrogen dioxide mole fraction",
                    "mol mol-1",
                    F32,
                    "3d",
                ),
                Var(
                    "pm2p5",
                    "mass_concentration_of_pm2p5_ambient_aerosol_particles_in_air",
                    "PM2.5 mass concentration",
                    "kg m-3",
                    F32,
                ),
                Var(
                    "aod550",
                    "atmosphere_optical_thickness_due_to_ambient_aerosol_particles",
                    "Aerosol optical depth at 550 nm",
                    "1",
                    F32,
                ),
                Var("tas", "air_temperature", "Near-surface air temperature", "K", F32),
            ),
        ),
        Theme(
            "hydrology",
            "River discharge and runoff",
            "Daily river discharge, runoff and snow water equivalent from a synthetic "
            "hydrological model forced by reanalysis.",
            ("hydrology", "river discharge", "runoff", "flood", "snow"),
            "latlon",
            None,
            (
                Var(
                    "dis",
                    "water_volume_transport_in_river_channel",
                    "River discharge",
                    "m3 s-1",
                    F32,
                ),
                Var("mrro", "runoff_flux", "Total runoff", "kg m-2 s-1", F32),
                Var(
                    "swe", "lwe_thickness_of_surface_snow_amount", "Snow water equivalent", "m", F32
                ),
                Var("upArea", None, "Upstream area", "m2", F64, "static"),
                Var("ldd", None, "Local drain direction", None, ("uint8",), "static"),
            ),
        ),
        Theme(
            "optical",
            "Multispectral surface reflectance tiles",
            "Atmospherically corrected surface reflectance of synthetic multispectral "
            "satellite scenes, with scene classification and cloud probability.",
            ("satellite", "reflectance", "land cover", "optical imagery", "Sentinel-2"),
            "xy",
            None,
            (
                Var(
                    "B02",
                    "surface_bidirectional_reflectance",
                    "Surface reflectance, blue band",
                    "1",
                    ("uint16", "int16"),
                ),
                Var(
                    "B03",
                    "surface_bidirectional_reflectance",
                    "Surface reflectance, green band",
                    "1",
                    ("uint16", "int16"),
                ),
                Var(
                    "B04",
                    "surface_bidirectional_reflectance",
                    "Surface reflectance, red band",
                    "1",
                    ("uint16", "int16"),
                ),
                Var(
                    "B08",
                    "surface_bidirectional_reflectance",
                    "Surface reflectance, near infrared band",
                    "1",
                    ("uint16", "int16"),
                ),
                Var("SCL", None, "Scene classification", None, ("uint8",)),
                Var("cloud_probability", None, "Cloud probability", "%", ("uint8",)),
            ),
        ),
        Theme(
            "glacier",
            "Glacier surface elevation change",
            "Annual glacier surface elevation change and its uncertainty from synthetic "
            "altimetry, with glacier outlines.",
            ("glacier", "cryosphere", "elevation change", "altimetry", "ice"),
            "xy",
            None,
            (
                Var(
                    "dhdt",
                    "tendency_of_land_ice_thickness",
                    "Surface elevation change rate",
                    "m year-1",
                    F32,
                ),
                Var(
                    "dhdt_err",
                    None,
                    "Uncertainty of surface elevation change rate",
                    "m year-1",
                    F32,
                ),
                Var(
                    "glacier_mask", None, "Glacier outline mask", None, ("bool", "uint8"), "static"
                ),
                Var(
                    "surface_elevation", "surface_altitude", "Surface elevation", "m", F32, "static"
                ),
                Var(
                    "surface_temperature",
                    "surface_temperature",
                    "Ice surface temperature",
                    "K",
                    F32,
                ),
            ),
        ),
        Theme(
            "radar",
            "Precipitation radar composites",
            "Five-minute weather radar composites of rainfall rate and reflectivity with a "
            "quality index, on a national projected grid.",
            ("weather radar", "precipitation", "rainfall", "nowcasting", "reflectivity"),
            "xy",
            None,
            (
                Var(
                    "rainfall_rate", "rainfall_rate", "Rainfall rate", "mm h-1", ("int16", "uint16")
                ),
                Var(
                    "reflectivity",
                    "equivalent_reflectivity_factor",
                    "Radar reflectivity",
                    "dBZ",
                    ("int8", "uint8"),
                ),
                Var("quality", None, "Quality index", None, ("uint8",)),
                Var(
                    "accumulation_1h",
                    "precipitation_amount",
                    "Precipitation accumulated over one hour",
                    "kg m-2",
                    F32,
                ),
            ),
        ),
    )
}
#: (name suffix, long-name prefix): more variables of a theme, as real datasets have.
VARIANTS = (
    ("", ""),
    ("_max", "Maximum "),
    ("_min", "Minimum "),
    ("_std", "Standard deviation of "),
    ("_anom", "Anomaly of "),
    ("_clim", "Climatology of "),
    ("_p10", "10th percentile of "),
    ("_p90", "90th percentile of "),
    ("_trend", "Linear trend of "),
    ("_qc", "Quality-controlled "),
)
MODEL_COMPONENTS = (
    ("atmos", "atmosphere"),
    ("ocean", "ocean"),
    ("land", "land"),
    ("seaIce", "seaice"),
)
FREQUENCIES = (
    ("day", "Daily means", 365),
    ("mon", "Monthly means", 12),
    ("6hr", "Six-hourly samples", 1460),
)
REGIONS = (
    "global",
    "Europe",
    "North Atlantic",
    "Arctic",
    "Southern Ocean",
    "Tropical Pacific",
    "Alps",
    "Baltic Sea",
    "Mediterranean",
    "Amazon basin",
    "Himalaya",
    "Sahel",
    "Greenland",
    "Andes",
)
PERIODS = ("1991-2020", "2000-2009", "2015-2100", "1979-2023", "2021", "2023", "1950-2014")
INSTITUTIONS = (
    "Synthetic Climate Service",
    "Example Ocean Institute",
    "Demo Earth Observation Agency",
    "Fictional Weather Office",
    "Sample University, Department of Geosciences",
)
HOSTS = (
    "https://data.example.org/zarr",
    "s3://example-earth-data",
    "https://object-store.example.net/archive",
    "file:///data/zarr",
)
LATLON = ((90, 180), (180, 360), (361, 720), (721, 1440), (1801, 3600))
XY = ((448, 304), (1024, 1024), (2000, 2000), (5490, 5490), (10980, 10980))
VERTICAL = {"depth": (10, 23, 50, 75), "plev": (8, 19, 37)}
TIMEZONES = ("Z", "Z", "Z", "+01:00", "+02:00", "-05:00", "+09:00", "+05:30", "-03:00")
V2_DTYPES = {
    "float32": "<f4",
    "float64": "<f8",
    "int8": "|i1",
    "int16": "<i2",
    "int32": "<i4",
    "int64": "<i8",
    "uint8": "|u1",
    "uint16": "<u2",
    "bool": "|b1",
}
ITEMSIZE = {
    "float32": 4,
    "float64": 8,
    "int8": 1,
    "int16": 2,
    "int32": 4,
    "int64": 8,
    "uint8": 1,
    "uint16": 2,
    "bool": 1,
}
INT_FILL = {
    "int8": -127,
    "int16": -32767,
    "int32": -2147483647,
    "int64": -1,
    "uint8": 255,
    "uint16": 65535,
}


# ------------------------------------------------------------------------ planning
@dataclass
class Grid:
    kind: Literal["latlon", "xy"]
    ny: int
    nx: int
    vertical: tuple[str, int] | None
    nt: int
    time_units: str


@dataclass
class GroupPlan:
    """A group that receives arrays: its grid, theme and how many arrays it has so far."""

    hierarchy: HierarchySpec
    node: NodeSpec
    theme: Theme
    grid: Grid
    rng: random.Random
    codecs: Any
    arrays: int = 0
    coordinates: bool = False


def _rng(seed: str, *key: object) -> random.Random:
    """An independent, reproducible stream per (seed, key): str seeds hash with SHA-512."""
    return random.Random(":".join([seed, *map(str, key)]))


def _harvest_time(rng: random.Random) -> str:
    day = rng.randrange(0, 912)  # 2023-01-01 .. 2025-06-30
    year, rest = (
        (2023, day) if day < 365 else ((2024, day - 365) if day < 731 else (2025, day - 731))
    )
    month_days = [31, 29 if year == 2024 else 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
    month = 0
    while rest >= month_days[month]:
        rest -= month_days[month]
        month += 1
    hh, mm, ss = rng.randrange(24), rng.randrange(60), rng.randrange(60)
    zone = rng.choice(TIMEZONES)
    return f"{year:04d}-{month + 1:02d}-{rest + 1:02d}T{hh:02d}:{mm:02d}:{ss:02d}{zone}"


def _group_docs(zarr_format: int, attrs: dict[str, Any]) -> dict[str, dict[str, Any]]:
    if zarr_format == 3:
        return {"zarr.json": {"zarr_format": 3, "node_type": "group", "attributes": attrs}}
    return {".zgroup": {"zarr_format": 2}, ".zattrs": attrs}


def _v3_codecs(rng: random.Random) -> Any:
    """A hierarchy's compressor choice: most stores use one codec chain throughout."""
    return rng.choice(
        (
            {"name": "zstd", "configuration": {"level": 0, "checksum": False}},
            {"name": "zstd", "configuration": {"level": 3, "checksum": False}},
            {
                "name": "blosc",
                "configuration": {
                    "cname": "lz4",
                    "clevel": 5,
                    "shuffle": "shuffle",
                    "blocksize": 0,
                },
            },
            {"name": "gzip", "configuration": {"level": 5}},
            None,
            "sharding",
        )
    )


def _v2_compressor(rng: random.Random) -> Any:
    return rng.choice(
        (
            {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0},
            {"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 2, "blocksize": 0},
            {"id": "zlib", "level": 4},
            {"id": "zstd", "level": 3},
            None,
        )
    )


class Planner:
    """Builds hierarchies group by group, then hands out arrays until the triple budget is spent."""

    def __init__(self, seed: str) -> None:
        self.seed = seed
        self.hierarchies: list[HierarchySpec] = []
        self.data_groups: list[GroupPlan] = []

    # ---------------------------------------------------------------- groups
    def add_hierarchy(self, max_groups: int) -> int:
        """Add the next hierarchy with at most ``max_groups`` groups; return how many it has."""
        index = len(self.hierarchies)
        rng = _rng(self.seed, "hierarchy", index)
        layout = (
            "model"
            if index == 0
            else rng.choices(("flat", "model", "pyramid", "ensemble"), weights=(40, 25, 15, 20))[0]
        )
        theme = THEMES["atmosphere"] if index == 0 else rng.choice(list(THEMES.values()))
        zarr_format: Literal[2, 3] = 3 if index == 0 or rng.random() < 0.75 else 2
        slug = "model" if layout == "model" else theme.slug
        h = HierarchySpec(
            index, f"{HOSTS[index % len(HOSTS)]}/{slug}/ds{index:05d}.zarr", zarr_format
        )
        if index == 0:
            h.harvested_at = "2025-03-14T09:26:53+01:00"
        elif rng.random() < 0.75:
            h.harvested_at = _harvest_time(rng)
        region, period = rng.choice(REGIONS), rng.choice(PERIODS)
        institution = rng.choice(INSTITUTIONS)
        grid_kind = "latlon" if layout == "model" else theme.grid
        ny, nx = (180, 360) if index == 0 else rng.choice(LATLON if grid_kind == "latlon" else XY)

        def grid(t: Theme, nt: int, shrink: int = 0) -> Grid:
            vertical = None
            if t.vertical is not None:
                vertical = (t.vertical, rng.choice(VERTICAL[t.vertical]))
            start = rng.choice((1950, 1979, 1991, 2000, 2015))
            units = rng.choice((f"days since {start}-01-01", f"hours since {start}-01-01 00:00:00"))
            return Grid(grid_kind, max(2, ny >> shrink), max(2, nx >> shrink), vertical, nt, units)

        years = rng.choice((1, 2, 5, 10, 30))
        if layout == "model":
            title = f"Coupled model output: atmosphere, ocean and land, {region} {period}"
            summary = (
                "Output of a synthetic coupled climate model: atmosphere, ocean, land and "
                "sea-ice components at several output frequencies."
            )
            keywords: Any = ["climate model", "CMIP-like", "atmosphere", "ocean", "land", region]
        else:
            title = f"{theme.title}, {region} {period}"
            summary, keywords = theme.summary, ", ".join((*theme.keywords, region))
        root_attrs: dict[str, Any] = {
            "title": f"{title} (synthetic)",
            "summary": summary,
            "keywords": keywords,
            "institution": institution,
            "Conventions": "CF-1.8",
            "license": rng.choice(("CC-BY-4.0", "CC0-1.0", "ODbL-1.0")),
            "source": "bench/sparql/generate.py",
        }
        root = NodeSpec("", "group", _group_docs(zarr_format, root_attrs))
        h.nodes[""] = root
        budget = max_groups - 1

        def subgroup(parent: NodeSpec, name: str, attrs: dict[str, Any]) -> NodeSpec:
            path = f"{parent.path}/{name}" if parent.path else name
            node = NodeSpec(path, "group", _group_docs(zarr_format, attrs))
            h.nodes[path] = node
            parent.members.append(path)
            return node

        def data(node: NodeSpec, t: Theme, g: Grid) -> None:
            self.data_groups.append(
                GroupPlan(
                    h,
                    node,
                    t,
                    g,
                    _rng(self.seed, "group", index, node.path),
                    _v3_codecs(rng) if zarr_format == 3 else _v2_compressor(rng),
                )
            )

        if layout == "flat" or budget == 0 or (layout == "model" and budget < 2):
            data(root, theme, grid(theme, 365 * years))
        elif layout == "model":
            # The first dataset is fixed (queries name it): atmos/{day,mon} and ocean/mon.
            components = (
                list(MODEL_COMPONENTS[:2])
                if index == 0
                else rng.sample(MODEL_COMPONENTS, rng.randint(1, 4))
            )
            for comp, theme_slug in components:
                if budget < 2:
                    break
                t = THEMES[theme_slug]
                comp_node = subgroup(
                    root,
                    comp,
                    {
                        "title": f"{t.title.split(':')[0]} ({comp} component)",
                        "description": f"{comp} component of the coupled model",
                        "realm": comp,
                    },
                )
                budget -= 1
                if index == 0:
                    freqs = list(FREQUENCIES[:2] if comp == "atmos" else FREQUENCIES[1:2])
                else:
                    freqs = rng.sample(FREQUENCIES, rng.randint(1, 3))
                for freq, freq_title, per_year in freqs:
                    if budget < 1:
                        break
                    attrs: dict[str, Any] = {"frequency": freq}
                    if rng.random() < 0.5:
                        attrs["title"] = f"{freq_title} of {comp} fields"
                    node = subgroup(comp_node, freq, attrs)
                    budget -= 1
                    data(node, t, grid(t, per_year * years))
        elif layout == "pyramid":
            levels = min(budget, rng.randint(3, 6))
            root_attrs["multiscales"] = [
                {"version": "0.4", "datasets": [{"path": str(k)} for k in range(levels)]}
            ]
            for k in range(levels):
                attrs = {"level": k}
                if k == 0:
                    attrs["title"] = f"Full resolution {theme.title.lower()}"
                node = subgroup(root, str(k), attrs)
                data(node, theme, grid(theme, 365 * years, shrink=k))
            budget -= levels
        else:  # ensemble
            members = min(budget, rng.randint(3, 10))
            for k in range(members):
                attrs = {"realization": k + 1, "variant_label": f"r{k + 1}i1p1f1"}
                if rng.random() < 0.3:
                    attrs["title"] = f"Ensemble member r{k + 1}i1p1f1 of {theme.title.lower()}"
                node = subgroup(root, f"r{k + 1}i1p1f1", attrs)
                data(node, theme, grid(theme, 365 * years))
            budget -= members
        self.hierarchies.append(h)
        return max_groups - budget

    # ---------------------------------------------------------------- arrays
    def add_array(self, plan: GroupPlan) -> list[NodeSpec]:
        """The next array(s) of a group: its coordinate arrays first, then a variable."""
        added: list[NodeSpec] = []
        if not plan.coordinates:
            plan.coordinates = True
            for name in self._coordinate_names(plan.grid):
                added.append(self._coordinate(plan, name))
        var, suffix, prefix = self._next_variable(plan)
        added.append(self._variable(plan, var, suffix, prefix))
        return added

    @staticmethod
    def _coordinate_names(g: Grid) -> list[str]:
        names = ["time"]
        if g.vertical is not None:
            names.append(g.vertical[0])
        names += ["lat", "lon"] if g.kind == "latlon" else ["y", "x"]
        return names

    def _next_variable(self, plan: GroupPlan) -> tuple[Var, str, str]:
        variables = plan.theme.variables
        k = plan.arrays
        plan.arrays += 1
        var = variables[k % len(variables)]
        round_ = k // len(variables)
        suffix, prefix = VARIANTS[round_ % len(VARIANTS)]
        if round_ >= len(VARIANTS):
            suffix += f"_{round_ // len(VARIANTS) + 1}"
        return var, suffix, prefix

    def _sizes(self, g: Grid) -> dict[str, int]:
        sizes = {"time": g.nt, "lat": g.ny, "lon": g.nx, "y": g.ny, "x": g.nx}
        if g.vertical is not None:
            sizes[g.vertical[0]] = g.vertical[1]
        return sizes

    def _coordinate(self, plan: GroupPlan, name: str) -> NodeSpec:
        g, rng = plan.grid, plan.rng
        attrs: dict[str, Any]
        if name == "time":
            dtype = rng.choice(("int64", "float64"))
            attrs = {
                "standard_name": "time",
                "long_name": "time",
                "units": g.time_units,
                "calendar": rng.choice(("standard", "proleptic_gregorian", "noleap")),
                "axis": "T",
            }
        elif name in ("lat", "lon"):
            dtype = rng.choice(("float32", "float64"))
            full = "latitude" if name == "lat" else "longitude"
            attrs = {
                "standard_name": full,
                "long_name": full,
                "units": "degrees_north" if name == "lat" else "degrees_east",
                "axis": "Y" if name == "lat" else "X",
            }
        elif name in ("x", "y"):
            dtype = "float64"
            attrs = {
                "standard_name": f"projection_{name}_coordinate",
                "long_name": f"{name} coordinate of projection",
                "units": "m",
                "axis": name.upper(),
            }
        elif name == "depth":
            dtype = "float32"
            attrs = {
                "standard_name": "depth",
                "long_name": "depth below surface",
                "units": "m",
                "positive": "down",
                "axis": "Z",
            }
        else:  # plev
            dtype = "float64"
            attrs = {
                "standard_name": "air_pressure",
                "long_name": "pressure",
                "units": "Pa",
                "positive": "down",
                "axis": "Z",
            }
        size = self._sizes(g)[name]
        return self._array(plan, name, dtype, [name], [size], [size], attrs)

    def _variable(self, plan: GroupPlan, var: Var, suffix: str, prefix: str) -> NodeSpec:
        g, rng = plan.grid, plan.rng
        horizontal = ["lat", "lon"] if g.kind == "latlon" else ["y", "x"]
        if var.dims == "static":
            dims = horizontal
        elif var.dims == "3d" and g.vertical is not None:
            dims = ["time", g.vertical[0], *horizontal]
        else:
            dims = ["time", *horizontal]
        sizes = self._sizes(g)
        shape = [sizes[d] for d in dims]
        tchunk = rng.choice((1, 1, 12, 24, 31, 365))
        schunk = rng.choice((90, 128, 180, 256, 512))
        chunks = [
            min(n, tchunk if d == "time" else 1 if d in ("depth", "plev") else schunk)
            for d, n in zip(dims, shape, strict=True)
        ]
        dtype = rng.choice(var.dtypes)
        long_name = (
            f"{prefix}{var.long_name[0].lower()}{var.long_name[1:]}" if prefix else var.long_name
        )
        attrs: dict[str, Any] = {}
        if var.standard_name is not None:
            attrs["standard_name"] = var.standard_name
        attrs["long_name"] = long_name
        if var.units is not None and rng.random() > 0.05:  # some producers forget units
            attrs["units"] = var.units
        if "time" in dims:
            attrs["cell_methods"] = "time: " + ("maximum" if suffix.startswith("_max") else "mean")
        if dtype in ("int16", "uint16") and var.units is not None:
            attrs["scale_factor"] = 0.01
            attrs["add_offset"] = 273.15 if var.units == "K" else 0.0
        if g.kind == "xy":
            attrs["grid_mapping"] = "crs"
        return self._array(plan, var.name + suffix, dtype, dims, shape, chunks, attrs)

    def _array(
        self,
        plan: GroupPlan,
        name: str,
        dtype: str,
        dims: list[str],
        shape: list[int],
        chunks: list[int],
        attrs: dict[str, Any],
    ) -> NodeSpec:
        h, rng = plan.hierarchy, plan.rng
        path = f"{plan.node.path}/{name}" if plan.node.path else name
        is_float = dtype.startswith("float")
        if h.zarr_format == 3:
            if is_float:
                fill: Any = "NaN"
            elif dtype == "bool":
                fill = False
            else:
                fill = INT_FILL.get(dtype, 0) if rng.random() < 0.5 else 0
            bytes_codec: dict[str, Any] = {"name": "bytes"}
            if ITEMSIZE[dtype] > 1:
                bytes_codec["configuration"] = {"endian": "little"}
            grid_chunks = chunks
            if plan.codecs == "sharding":
                codecs: list[dict[str, Any]] = [
                    {
                        "name": "sharding_indexed",
                        "configuration": {
                            "chunk_shape": [max(1, c // 2) for c in chunks],
                            "codecs": [
                                bytes_codec,
                                {"name": "zstd", "configuration": {"level": 0, "checksum": False}},
                            ],
                            "index_codecs": [
                                {"name": "bytes", "configuration": {"endian": "little"}},
                                {"name": "crc32c"},
                            ],
                            "index_location": "end",
                        },
                    }
                ]
            else:
                codecs = [bytes_codec] + ([plan.codecs] if plan.codecs else [])
            meta: dict[str, Any] = {
                "shape": shape,
                "data_type": dtype,
                "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": grid_chunks}},
                "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
                "fill_value": fill,
                "codecs": codecs,
                "attributes": attrs,
                "zarr_format": 3,
                "node_type": "array",
                "storage_transformers": [],
            }
            if rng.random() < 0.97:
                meta["dimension_names"] = dims
            docs = {"zarr.json": meta}
        else:
            if is_float:
                fill = rng.choice(("NaN", "NaN", 1e20, -999.0, -9999.0))
            elif dtype == "bool":
                fill = False
            else:
                fill = INT_FILL.get(dtype, 0)
            zarray = {
                "chunks": chunks,
                "compressor": plan.codecs,
                "dtype": V2_DTYPES[dtype],
                "fill_value": fill,
                "filters": None,
                "order": "C",
                "shape": shape,
                "zarr_format": 2,
            }
            if rng.random() < 0.7:
                zarray["dimension_separator"] = "."
            zattrs = {"_ARRAY_DIMENSIONS": dims, **attrs} if rng.random() < 0.97 else attrs
            docs = {".zarray": zarray, ".zattrs": zattrs}
        node = NodeSpec(path, "array", docs)
        h.nodes[path] = node
        plan.node.members.append(path)
        return node


@dataclass
class Catalogue:
    """The planned catalogue, ready to be written."""

    hierarchies: list[HierarchySpec]
    triples: int
    groups: int
    arrays: int


def plan(
    scale: float = 1.0,
    seed: str = DEFAULT_SEED,
    *,
    groups: int | None = None,
    triples: int | None = None,
    arrays: int | None = None,
) -> Catalogue:
    """Plan the catalogue: ``groups`` groups, then arrays until ``triples`` or ``arrays``.

    By default ``groups`` and ``triples`` are the issue's 1,000 and 1,003,000 times
    ``scale``; ``arrays`` overrides the triple budget with an array count.
    """
    n_groups = groups if groups is not None else max(1, round(TARGET_GROUPS * scale))
    budget = triples if triples is not None else round(TARGET_TRIPLES * scale)
    planner = Planner(seed)
    placed = 0
    while placed < n_groups:
        placed += planner.add_hierarchy(n_groups - placed)
    total = 0
    for h in planner.hierarchies:
        for node in h.nodes.values():
            total += _count(h, node)  # members so far: the subgroups
    weights_rng = _rng(seed, "weights")
    data_groups = planner.data_groups
    cumulative = list(accumulate(weights_rng.lognormvariate(0.0, 0.8) for _ in data_groups))
    n_arrays = 0
    # Every data group gets its coordinates and a first variable; then the budget is
    # handed out at random, so groups end up with very different numbers of arrays.
    for group in data_groups:
        for node in planner.add_array(group):
            total += _count(group.hierarchy, node) + 1
            n_arrays += 1
    while (total < budget) if arrays is None else (n_arrays < arrays):
        target = data_groups[bisect(cumulative, weights_rng.random() * cumulative[-1])]
        for node in planner.add_array(target):
            total += _count(target.hierarchy, node) + 1  # + the group's zarr:member
            n_arrays += 1
    return Catalogue(planner.hierarchies, total, n_groups, n_arrays)


def write(catalogue: Catalogue, path: Path) -> int:
    """Write the catalogue as N-Quads, hierarchy by hierarchy; return the number of lines."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lines = 0
    tmp = path.with_name(path.name + ".part")
    with open(tmp, "w", encoding="utf-8", newline="\n", buffering=1 << 20) as out:
        for h in catalogue.hierarchies:
            chunk = hierarchy_quads(h)
            out.writelines(chunk)
            lines += len(chunk)
    tmp.replace(path)
    return lines


def iter_quads(catalogue: Catalogue) -> Iterator[str]:
    """Every N-Quads line of the catalogue (for tests that do not need a file)."""
    for h in catalogue.hierarchies:
        yield from hierarchy_quads(h)


def scale_tag(scale: float) -> str:
    return f"{scale:g}"


def default_output(scale: float) -> Path:
    return DATA_DIR / f"catalogue-{scale_tag(scale)}.nq"


def generate(
    path: Path, scale: float = 1.0, seed: str = DEFAULT_SEED, *, arrays: int | None = None
) -> dict[str, Any]:
    """Plan and write the catalogue to ``path``, with a ``.json`` sidecar describing it."""
    start = time.perf_counter()
    catalogue = plan(scale, seed, arrays=arrays)
    planned = time.perf_counter()
    lines = write(catalogue, path)
    done = time.perf_counter()
    if lines != catalogue.triples:
        raise AssertionError(f"planned {catalogue.triples} triples but wrote {lines}")
    info = {
        "generator_version": GENERATOR_VERSION,
        "seed": seed,
        "scale": scale,
        "arrays_option": arrays,
        "triples": lines,
        "groups": catalogue.groups,
        "arrays": catalogue.arrays,
        "hierarchies": len(catalogue.hierarchies),
        "bytes": path.stat().st_size,
        "plan_seconds": round(planned - start, 3),
        "write_seconds": round(done - planned, 3),
        "seconds": round(done - start, 3),
    }
    sidecar(path).write_text(json.dumps(info, indent=2) + "\n")
    return info


def sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".json")


def up_to_date(
    path: Path, scale: float, seed: str = DEFAULT_SEED, arrays: int | None = None
) -> bool:
    """True when ``path`` holds this generator version's output for ``scale`` and ``seed``."""
    try:
        info = json.loads(sidecar(path).read_text())
    except (OSError, ValueError):
        return False
    return (
        path.exists()
        and info.get("generator_version") == GENERATOR_VERSION
        and info.get("seed") == seed
        and info.get("scale") == scale
        and info.get("arrays_option") == arrays
        and info.get("bytes") == path.stat().st_size
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--scale", type=float, default=1.0, help="1.0 = 1,003,000 triples, 1,000 groups"
    )
    parser.add_argument("--seed", default=DEFAULT_SEED)
    parser.add_argument(
        "--arrays",
        type=int,
        default=None,
        help="generate this many arrays instead of filling the triple budget",
    )
    parser.add_argument(
        "-o",
        "--output",
        type=Path,
        default=None,
        help="N-Quads file (default bench/data/catalogue-<scale>.nq)",
    )
    parser.add_argument(
        "--if-missing",
        action="store_true",
        help="do nothing when the output already holds this scale and seed",
    )
    args = parser.parse_args(argv)
    if args.scale <= 0:
        parser.error("--scale must be positive")
    path = args.output or default_output(args.scale)
    if args.if_missing and up_to_date(path, args.scale, args.seed, args.arrays):
        print(f"{path}: up to date", file=sys.stderr)
        return 0
    info = generate(path, args.scale, args.seed, arrays=args.arrays)
    print(
        f"{path}: {info['triples']:,} triples, {info['hierarchies']:,} hierarchies, "
        f"{info['groups']:,} groups, {info['arrays']:,} arrays, {info['bytes'] / 1e6:.1f} MB "
        f"in {info['seconds']:.1f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
