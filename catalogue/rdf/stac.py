"""A catalogued dataset as a STAC Collection, following STAC's Zarr best practice, from its graph.

Each harvested hierarchy (a ``dcat:Dataset``; its root IRI names its graph) is one
STAC 1.1 Collection, built from that graph alone (as :mod:`catalogue.rdf.dcat` builds
DCAT):

* ``id``: :func:`collection_id`, the dataset's name (:func:`~catalogue.rdf.dcat.iri_stem`,
  the ``/export`` download name) and 8 hex digits of the SHA-256 of its IRI: stable
  across harvests and servers, URL-safe, and distinct for two stores of the same name.
* ``title``, ``description``, ``keywords``: ``dct:title``, ``dct:description`` and
  ``dcat:keyword`` as the harvest lifted them from the root's attributes (``title``,
  ``summary``, ``keywords``), with DCAT's fallbacks (the IRI's last segment; a sentence
  naming the store).
* ``license``: the root's ``license`` attribute when it is an SPDX identifier or
  expression (STAC's pattern), else ``other``, with a ``license`` link when the attribute
  is a URL. ``providers``: the ``institution`` (``dct:publisher``) and ``creator_name``
  attributes, as producers.
* ``extent``: the root's extent (:func:`catalogue.rdf.extents.read_extent`): the CRS84 box
  and the period in UTC (a date covers its whole day, as collection search reads it). STAC requires both; when the graph has none, the collection
  says the whole globe and ``[[null, null]]``, the forms STAC servers use for "not
  known", **and says so**: ``catalogue:unknown_extent`` lists ``spatial`` and/or
  ``temporal`` and the description ends with a sentence saying what is not known.
* ``cube:dimensions``, ``cube:variables``: :mod:`catalogue.rdf.datacube`.
* ``assets.zarr``: the store root, ``type`` ``application/vnd.zarr; version=N``
  (``; profile=multiscales`` when the root is a multiscale pyramid), roles ``data``,
  the zarr extension's ``zarr:zarr_format`` and ``zarr:node_type``, and the projection
  extension's ``proj:code`` (or ``proj:wkt2``), ``proj:bbox`` and ``proj:shape`` when the
  root declares a native CRS. A group below the root holding a multiscale pyramid is an
  asset of its own, keyed by its path. ``zarr:consolidated`` is not written: the graph
  does not record whether the store has consolidated metadata.
* ``links``: ``self``, ``root``, ``parent``, ``store`` (the store root, as the best practice
  asks), ``alternate`` (the portal page) and ``describedby`` (the root node as Turtle).
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

from rdflib import DCAT, DCTERMS, RDF, Graph, URIRef
from rdflib.term import Literal

from catalogue.model.extents import Extent
from catalogue.rdf.datacube import (
    cube_dimensions,
    cube_variables,
    dimension_axes,
    hierarchy_arrays,
    period_interval,
)
from catalogue.rdf.dcat import iri_name, iri_stem, zarr_media_type
from catalogue.rdf.extents import read_extent, read_multiscales
from catalogue.rdf.vocabulary import ZARR

__all__ = ["EXTENSIONS", "STAC_VERSION", "StacLinks", "collection_id", "dataset_collection"]

STAC_VERSION = "1.1.0"
DATACUBE = "https://stac-extensions.github.io/datacube/v2.3.0/schema.json"
PROJECTION = "https://stac-extensions.github.io/projection/v2.0.0/schema.json"
ZARR_EXTENSION = "https://stac-extensions.github.io/zarr/v1.1.0/schema.json"
#: The extensions a collection may declare, with the bundled schema of each (``schemas/stac/``).
EXTENSIONS = {DATACUBE: "stac/datacube-v2.3.0.json", PROJECTION: "stac/projection-v2.0.0.json",
              ZARR_EXTENSION: "stac/zarr-v1.1.0.json"}
#: The box that stands for "not known" (with ``catalogue:unknown_extent``).
WHOLE_WORLD = [-180.0, -90.0, 180.0, 90.0]
_SPDX = re.compile(r"^[\w\-.+]+$")


def collection_id(iri: str) -> str:
    """The dataset's STAC collection id: ``<name>-<8 hex digits of the IRI's SHA-256>``."""
    return f"{iri_stem(iri, 'dataset')}-{hashlib.sha256(iri.encode('utf-8')).hexdigest()[:8]}"


@dataclass(frozen=True)
class StacLinks:
    """Where the server publishes the STAC API (``base`` is the public base URL, no trailing slash)."""

    base: str

    @property
    def root(self) -> str:
        return f"{self.base}/stac"

    @property
    def collections(self) -> str:
        return f"{self.base}/stac/collections"

    def collection(self, cid: str) -> str:
        return f"{self.base}/stac/collections/{quote(cid, safe='')}"

    def portal(self, iri: str) -> str:
        return f"{self.base}/browse?iri={quote(iri, safe='')}"

    def turtle(self, iri: str) -> str:
        return f"{self.base}/node?iri={quote(iri, safe='')}&format=turtle"


def _text(graph: Graph, node: URIRef, prop: URIRef) -> str | None:
    value = graph.value(node, prop)
    return str(value) if value is not None else None


def _attributes(graph: Graph, node: URIRef) -> dict[str, Any]:
    value = graph.value(node, ZARR.attributes)
    try:
        parsed = json.loads(str(value)) if value is not None else {}
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _license(attributes: dict[str, Any]) -> tuple[str, str | None]:
    """STAC's ``license`` and, for a URL, the ``license`` link's target."""
    value = attributes.get("license")
    if not isinstance(value, str) or not value.strip():
        return "other", None
    text = value.strip()
    if _SPDX.match(text):
        return text, None
    if re.match(r"^https?://\S+$", text):
        return "other", text
    return "other", None


def _providers(graph: Graph, root: URIRef, attributes: dict[str, Any]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    institution = _text(graph, root, DCTERMS.publisher)
    if institution:
        out.append({"name": institution, "roles": ["producer"]})
    creator = attributes.get("creator_name")
    if isinstance(creator, str) and creator.strip() and creator.strip() != institution:
        provider: dict[str, Any] = {"name": creator.strip(), "roles": ["producer"]}
        url = attributes.get("creator_url")
        if isinstance(url, str) and re.match(r"^https?://\S+$", url.strip()):
            provider["url"] = url.strip()
        out.append(provider)
    return out


def _extent(extent: Extent | None) -> tuple[dict[str, Any], list[str]]:
    """STAC's ``extent`` and which parts of it are not known."""
    unknown = []
    if extent is not None and extent.bbox is not None:
        bbox = extent.bbox.as_list()
    else:
        bbox, unknown = WHOLE_WORLD, ["spatial"]
    interval = period_interval(extent.period) if extent is not None and extent.period is not None else None
    if interval is None:
        interval, unknown = [None, None], [*unknown, "temporal"]
    return {"spatial": {"bbox": [bbox]}, "temporal": {"interval": [interval]}}, unknown


_UNKNOWN_NOTE = {
    ("spatial",): "The catalogue found no spatial extent in this store's metadata; the whole-globe box stands for \"not known\".",
    ("temporal",): "The catalogue found no temporal extent in this store's metadata; the open interval stands for \"not known\".",
    ("spatial", "temporal"): "The catalogue found no spatial or temporal extent in this store's metadata; "
                             "the whole-globe box and the open interval stand for \"not known\".",
}


def _projection(extent: Extent | None, arrays: list[Any]) -> dict[str, Any]:
    """The projection extension's asset fields, when the root declares a native CRS."""
    if extent is None or extent.crs is None:
        return {}
    out: dict[str, Any] = {}
    if extent.crs.epsg is not None:
        out["proj:code"] = f"EPSG:{extent.crs.epsg}"
    else:
        out["proj:wkt2"] = extent.crs.wkt2
    if extent.native_bbox is not None:
        out["proj:bbox"] = list(extent.native_bbox)
    axes = dimension_axes(arrays)
    sizes: dict[str, int] = {}
    for array in arrays:
        for name, size in zip(array.dimensions or (), array.shape or (), strict=False):
            if name is not None:
                sizes.setdefault(name, size)
    y = [sizes[n] for n, kind in axes.items() if kind == "y" and n in sizes]
    x = [sizes[n] for n, kind in axes.items() if kind == "x" and n in sizes]
    if len(y) == 1 and len(x) == 1:
        out["proj:shape"] = [y[0], x[0]]
    return out


def dataset_collection(graph: Graph, dataset: str, links: StacLinks) -> dict[str, Any]:
    """The STAC Collection of the dataset whose root is ``dataset``, from its graph ``graph``
    (the hierarchy's named graph, or any graph holding it)."""
    root = URIRef(dataset)
    cid = collection_id(dataset)
    attributes = _attributes(graph, root)
    zarr_format = graph.value(root, ZARR.zarrFormat)
    version = int(zarr_format) if isinstance(zarr_format, Literal) and isinstance(zarr_format.toPython(), int) else None
    node_type = "array" if (root, RDF.type, ZARR.Array) in graph else "group"
    extent = read_extent(graph, root)
    arrays = hierarchy_arrays(graph)

    stac_extent, unknown = _extent(extent)
    description = _text(graph, root, DCTERMS.description) or (
        f"A Zarr{f' v{version}' if version else ''} {node_type} catalogued from {dataset}.")
    if unknown:
        description = f"{description}\n\n{_UNKNOWN_NOTE[tuple(unknown)]}"
    license_id, license_url = _license(attributes)
    media_type = zarr_media_type(version)

    collection: dict[str, Any] = {
        "type": "Collection",
        "stac_version": STAC_VERSION,
        "stac_extensions": [],
        "id": cid,
        "title": _text(graph, root, DCTERMS.title) or iri_name(dataset),
        "description": description,
        "keywords": sorted({str(k) for k in graph.objects(root, DCAT.keyword)}),
        "license": license_id,
    }
    providers = _providers(graph, root, attributes)
    if providers:
        collection["providers"] = providers
    collection["extent"] = stac_extent
    if unknown:
        collection["catalogue:unknown_extent"] = unknown
    if node_type == "group":
        collection["cube:dimensions"] = cube_dimensions(arrays, extent)
        collection["cube:variables"] = cube_variables(arrays)
        collection["stac_extensions"].append(DATACUBE)

    asset: dict[str, Any] = {
        "href": dataset,
        "type": _with_profile(media_type, read_multiscales(graph, root) is not None),
        "title": f"Zarr{f' v{version}' if version else ''} store",
        "roles": ["data"],
        "zarr:node_type": node_type,
    }
    if version is not None:
        asset["zarr:zarr_format"] = version
    projection = _projection(extent, arrays)
    asset.update(projection)
    assets = {"zarr": asset}
    for group in sorted(graph.subjects(RDF.type, ZARR.Group), key=str):
        if group == root or not isinstance(group, URIRef) or read_multiscales(graph, group) is None:
            continue
        path = _text(graph, group, ZARR.path) or str(group)
        assets[path] = {"href": str(group), "type": _with_profile(media_type, True),
                        "title": f"Multiscale pyramid {path}", "roles": ["data"], "zarr:node_type": "group"}
        if version is not None:
            assets[path]["zarr:zarr_format"] = version
    collection["assets"] = assets
    if projection:
        collection["stac_extensions"].append(PROJECTION)
    collection["stac_extensions"].append(ZARR_EXTENSION)

    collection["links"] = [
        {"rel": "self", "href": links.collection(cid), "type": "application/json"},
        {"rel": "root", "href": links.root, "type": "application/json"},
        {"rel": "parent", "href": links.root, "type": "application/json"},
        {"rel": "store", "href": dataset, "type": media_type, "title": "Zarr store"},
        {"rel": "alternate", "href": links.portal(dataset), "type": "text/html", "title": "Portal page"},
        {"rel": "describedby", "href": links.turtle(dataset), "type": "text/turtle",
         "title": "The root node in the catalogue (RDF)"},
    ]
    if license_url:
        collection["links"].append({"rel": "license", "href": license_url})
    return collection


def _with_profile(media_type: str, multiscales: bool) -> str:
    return f"{media_type}; profile=multiscales" if multiscales else media_type
