"""The OME-Zarr structure of a hierarchy as triples: plates and their wells, wells and their
fields of view, images and their label images.

The group's attributes are in the graph already, whole (``zarr:attributes``); what this
adds is the structure they declare, as links between catalogued nodes, so that a SPARQL
query walks from a plate to the images of one well, or from an image to its
segmentations, without parsing JSON. Each group with OME metadata gets one blank node
under ``zarr:ome`` (typed by what the group is) carrying the rest; a harvest replaces it
with the extents (``rdf.extents.NODE_PREDICATES``). Paths are kept as declared (relative
to the group); ``zarr:*Node`` links are made only to nodes the hierarchy holds.
"""

from __future__ import annotations

import json
import posixpath
from collections.abc import Mapping
from dataclasses import dataclass, field

from rdflib import RDF, BNode, Graph, Literal, URIRef

from catalogue.model.nodes import Hierarchy
from catalogue.model.ome import OmeImage
from catalogue.rdf.convert import Triple
from catalogue.rdf.vocabulary import ZARR

__all__ = ["CLASSES", "OmeLink", "OmeStructure", "ome_triples", "read_ome"]

#: The class of a group's ``zarr:ome`` node, by what its OME metadata makes it.
CLASSES = {"image": ZARR.OmeImage, "plate": ZARR.Plate, "well": ZARR.Well, "label image": ZARR.LabelImage,
           "labels": ZARR.LabelCollection, "bioformats2raw": ZARR.Bioformats2raw}


def _node(h: Hierarchy, group: str, relative: str) -> URIRef | None:
    """The catalogued node ``relative`` (a path as OME declares it) names from ``group``;
    None for an absolute path (OME's paths are relative) or one above the hierarchy."""
    if relative.startswith("/"):
        return None
    joined = posixpath.normpath(posixpath.join(group, relative)) if relative else group
    path = "" if joined == "." else joined.strip("/")
    return URIRef(h.iri(path)) if path in h.nodes and not joined.startswith("..") else None


def _link(out: list[Triple], h: Hierarchy, group: str, head: BNode, link: URIRef, path_p: URIRef, node_p: URIRef,
          relative: str) -> BNode:
    item = BNode()
    out += [(head, link, item), (item, path_p, Literal(relative))]
    target = _node(h, group, relative)
    if target is not None:
        out.append((item, node_p, target))
    return item


def ome_triples(h: Hierarchy, path: str, image: OmeImage, images: Mapping[str, OmeImage]) -> list[Triple]:
    """The ``zarr:ome`` node of the group at ``path`` and what hangs off it; ``images`` is
    every group's OME metadata by path (an image's label images are listed by its
    ``labels`` child)."""
    head = BNode()
    group = URIRef(h.iri(path))
    out: list[Triple] = [(group, ZARR.ome, head), (head, RDF.type, CLASSES.get(image.kind, ZARR.OmeImage))]
    if image.version:
        out.append((head, ZARR.conventionVersion, Literal(image.version)))
    plate = image.plate
    if plate is not None:
        if plate.name:
            out.append((head, ZARR.plateName, Literal(plate.name)))
        for prop, names in ((ZARR.rowNames, plate.rows), (ZARR.columnNames, plate.columns)):
            out.append((head, prop, Literal(json.dumps(list(names), ensure_ascii=False), datatype=RDF.JSON)))
        if plate.field_count is not None:
            out.append((head, ZARR.fieldCount, Literal(plate.field_count)))
        if plate.acquisitions:
            out.append((head, ZARR.acquisitionCount, Literal(plate.acquisitions)))
        for well in plate.wells:
            item = _link(out, h, path, head, ZARR.well, ZARR.wellPath, ZARR.wellNode, well.path)
            for prop, name in ((ZARR.rowName, well.row), (ZARR.columnName, well.column)):
                if name is not None:
                    out.append((item, prop, Literal(name)))
    for view in image.fields:
        item = _link(out, h, path, head, ZARR.fieldOfView, ZARR.fieldPath, ZARR.fieldNode, view.path)
        if view.acquisition is not None:
            out.append((item, ZARR.acquisition, Literal(view.acquisition)))
    # A labels group lists its label images; an image reaches them through its "labels" child.
    if image.kind == "labels":
        relatives = list(image.labels)
    else:
        listing = images.get(posixpath.join(path, "labels") if path else "labels")
        relatives = [f"labels/{name}" for name in listing.labels] if listing is not None else []
    for relative in relatives:
        _link(out, h, path, head, ZARR.labelImage, ZARR.labelPath, ZARR.labelNode, relative)
    if image.label_source is not None:
        out.append((head, ZARR.sourceImagePath, Literal(image.label_source)))
        source = _node(h, path, image.label_source)
        if source is not None:
            out.append((head, ZARR.sourceImage, source))
    return out


# ------------------------------------------------------------------ reading back
_KINDS = {str(cls): kind for kind, cls in CLASSES.items()}


@dataclass(frozen=True)
class OmeLink:
    """One link of a group's OME structure: the path as declared, the node it names when
    catalogued, and what else it says (a well's row and column, a field's acquisition)."""

    path: str
    iri: str | None
    detail: str = ""


@dataclass
class OmeStructure:
    """What a group's ``zarr:ome`` node says, for a page to show."""

    kind: str
    version: str | None = None
    name: str | None = None
    rows: list[str] = field(default_factory=list)
    columns: list[str] = field(default_factory=list)
    #: Wells of a plate, fields of view of a well, label images of an image.
    links: list[OmeLink] = field(default_factory=list)
    #: A label image's source image.
    source: OmeLink | None = None


def read_ome(graph: Graph, iri: str) -> OmeStructure | None:
    """The OME structure of group ``iri`` as its harvest stored it, or None."""
    head = graph.value(URIRef(iri), ZARR.ome)
    if head is None:
        return None
    kind = next((_KINDS[str(t)] for t in graph.objects(head, RDF.type) if str(t) in _KINDS), "image")
    out = OmeStructure(kind=kind)
    for attribute, prop in (("version", ZARR.conventionVersion), ("name", ZARR.plateName)):
        value = graph.value(head, prop)
        setattr(out, attribute, str(value) if value is not None else None)
    for attribute, prop in (("rows", ZARR.rowNames), ("columns", ZARR.columnNames)):
        value = graph.value(head, prop)
        try:
            names = json.loads(str(value)) if value is not None else []
        except ValueError:
            names = []
        setattr(out, attribute, [str(n) for n in names] if isinstance(names, list) else [])

    def link(item: object, path_p: URIRef, node_p: URIRef, detail: str = "") -> OmeLink:
        node = graph.value(item, node_p)
        return OmeLink(str(graph.value(item, path_p) or ""), str(node) if node is not None else None, detail)

    for item in graph.objects(head, ZARR.well):
        row, column = graph.value(item, ZARR.rowName), graph.value(item, ZARR.columnName)
        where = f"row {row}, column {column}" if row is not None and column is not None else ""
        out.links.append(link(item, ZARR.wellPath, ZARR.wellNode, where))
    for item in graph.objects(head, ZARR.fieldOfView):
        acquisition = graph.value(item, ZARR.acquisition)
        out.links.append(link(item, ZARR.fieldPath, ZARR.fieldNode,
                              f"acquisition {acquisition}" if acquisition is not None else ""))
    for item in graph.objects(head, ZARR.labelImage):
        out.links.append(link(item, ZARR.labelPath, ZARR.labelNode))
    out.links.sort(key=lambda x: (x.path, x.detail))
    source_path = graph.value(head, ZARR.sourceImagePath)
    if source_path is not None:
        source = graph.value(head, ZARR.sourceImage)
        out.source = OmeLink(str(source_path), str(source) if source is not None else None)
    return out
