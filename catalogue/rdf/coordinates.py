"""An array's coordinate variables, found in its hierarchy's graph.

CF names a dimension's coordinate variable by the dimension's name, looked up in the
array's group and then upwards (:func:`catalogue.model.cf_axes.nearest_coordinate`, the
one rule the extents use too). Here it is followed through the catalogue's graph,
reading only the nodes on the way, for what a picture of the array needs: which way is
north.
"""

from __future__ import annotations

from rdflib import Graph, Literal, URIRef

from catalogue.model.cf_axes import axis_kind, nearest_coordinate
from catalogue.model.geozarr import dimension_names
from catalogue.model.nodes import V3_DOCUMENT, Node
from catalogue.rdf.rebuild import node_kind, rebuild_documents
from catalogue.rdf.vocabulary import ZARR

__all__ = ["latitude_coordinate"]


def _array(graph: Graph, iri: str) -> Node:
    """The array ``iri`` as the model holds it, rebuilt from the graph (documents only)."""
    documents = rebuild_documents(graph, iri)
    path = str(graph.value(URIRef(iri), ZARR.path) or "")
    return Node(path=path, kind="array", zarr_format=3 if V3_DOCUMENT in documents else 2,
                documents=documents, locations={})


def _names(node: Node) -> list[str | None]:
    """Its dimension names (:func:`catalogue.model.geozarr.dimension_names`), one per
    dimension, None where unnamed; empty when they do not match its shape."""
    names, shape = dimension_names(node), node.metadata.get("shape")
    if names is None or not isinstance(shape, list) or len(names) != len(shape):
        return []
    return [n if isinstance(n, str) and n else None for n in names]


def latitude_coordinate(graph: Graph, iri: str, dimension: int) -> str | None:
    """The IRI of the 1-D latitude coordinate (CF: ``standard_name`` latitude, units
    ``degrees_north``...) of array ``iri``'s dimension ``dimension`` (negative counts from
    the end), or None when that dimension has none."""
    node = _array(graph, iri)
    names = _names(node)
    if not names or not -len(names) <= dimension < len(names) or names[dimension] is None:
        return None

    def array(at: str) -> str | None:
        for subject in graph.subjects(ZARR.path, Literal(at)):
            if isinstance(subject, URIRef) and node_kind(graph, str(subject)) == "array":
                return str(subject)
        return None

    found = nearest_coordinate(node.path, names[dimension] or "", array)
    if found is None or found == iri:
        return None
    coordinate = _array(graph, found)
    shape, own = coordinate.metadata.get("shape"), _names(coordinate)
    if not (isinstance(shape, list) and len(shape) == 1) or own not in ([], [names[dimension]]):
        return None  # not the dimension's own 1-D coordinate variable
    return found if axis_kind(coordinate.attributes or {}) == "lat" else None
