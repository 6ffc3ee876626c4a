"""An array's coordinate variables, found in its hierarchy's graph.

CF names a dimension's coordinate variable by the dimension's name, looked up in the
array's group and then upwards (:func:`catalogue.model.cf_axes.nearest_coordinate`, the
one rule the extents use too). Here it is followed through the catalogue's graph,
reading only the nodes on the way, for what a picture of the array needs: which way is
north.
"""

from __future__ import annotations

from typing import Any

from rdflib import Graph, Literal, URIRef

from catalogue.model.cf_axes import axis_kind, nearest_coordinate
from catalogue.model.nodes import V2_ARRAY, V2_ATTRS, V3_DOCUMENT
from catalogue.rdf.rebuild import node_kind, rebuild_documents
from catalogue.rdf.vocabulary import ZARR

__all__ = ["dimension_names", "latitude_coordinate"]


def _attributes(documents: dict[str, Any]) -> dict[str, Any]:
    found = documents.get(V3_DOCUMENT, {}).get("attributes") if V3_DOCUMENT in documents else documents.get(V2_ATTRS)
    return found if isinstance(found, dict) else {}


def dimension_names(documents: dict[str, Any]) -> list[str | None]:
    """The array's dimension names (v3 ``dimension_names``, v2 ``_ARRAY_DIMENSIONS``), one
    per dimension, None where unnamed; empty when it declares none it can be read by."""
    if V3_DOCUMENT in documents:
        meta = documents[V3_DOCUMENT]
        names = meta.get("dimension_names")
        if names is None:
            names = _attributes(documents).get("_ARRAY_DIMENSIONS")
    else:
        meta = documents.get(V2_ARRAY, {})
        names = _attributes(documents).get("_ARRAY_DIMENSIONS")
    shape = meta.get("shape")
    if not isinstance(names, list) or not isinstance(shape, list) or len(names) != len(shape):
        return []
    return [n if isinstance(n, str) and n else None for n in names]


def latitude_coordinate(graph: Graph, iri: str, dimension: int) -> str | None:
    """The IRI of the 1-D latitude coordinate (CF: ``standard_name`` latitude, units
    ``degrees_north``...) of array ``iri``'s dimension ``dimension`` (negative counts from
    the end), or None when that dimension has none."""
    documents = rebuild_documents(graph, iri)
    names = dimension_names(documents)
    if not names or not -len(names) <= dimension < len(names) or names[dimension] is None:
        return None
    path = str(graph.value(URIRef(iri), ZARR.path) or "")

    def array(at: str) -> str | None:
        for subject in graph.subjects(ZARR.path, Literal(at)):
            if isinstance(subject, URIRef) and node_kind(graph, str(subject)) == "array":
                return str(subject)
        return None

    found = nearest_coordinate(path, names[dimension] or "", array)
    if found is None or found == iri:
        return None
    coordinate = rebuild_documents(graph, found)
    meta = coordinate.get(V3_DOCUMENT) or coordinate.get(V2_ARRAY) or {}
    shape, own = meta.get("shape"), dimension_names(coordinate)
    if not (isinstance(shape, list) and len(shape) == 1) or own not in ([], [names[dimension]]):
        return None  # not the dimension's own 1-D coordinate variable
    return found if axis_kind(_attributes(coordinate)) == "lat" else None
