"""Where a node sits in a catalogued multiscale pyramid: its counterpart in the coarsest level.

A quicklook of a large array is best drawn from the coarsest level of its pyramid: a
pyramid exists precisely so that the whole extent can be looked at cheaply. The graph says
which nodes are levels (``zarr:levelNode`` of each ``zarr:level`` of a ``zarr:Multiscales``,
:mod:`catalogue.rdf.extents`); a node *inside* a level (a GeoZarr level is a group holding
the arrays) has its counterpart at the same relative path inside the coarsest level.
"""

from __future__ import annotations

from rdflib import Graph, URIRef
from rdflib.term import Node as RDFNode

from catalogue.rdf.rebuild import node_kind
from catalogue.rdf.vocabulary import ZARR

__all__ = ["coarsest_counterpart"]


def coarsest_counterpart(graph: Graph, iri: str) -> str:
    """The array at ``iri``'s place in the coarsest level of the pyramid it is a level of or
    lies inside (for a pyramid's group: its coarsest level), else ``iri`` itself."""
    heads: dict[RDFNode, list[tuple[int, str]]] = {}
    for level, _p, node in graph.triples((None, ZARR.levelNode, None)):
        head = graph.value(predicate=ZARR.level, object=level)
        index = graph.value(level, ZARR.levelIndex)
        if head is not None and index is not None:
            heads.setdefault(head, []).append((int(index), str(node)))
    for head, levels in heads.items():
        levels.sort()
        coarsest = levels[-1][1]
        candidates = [coarsest + iri[len(node):] for _i, node in levels if iri == node or iri.startswith(node + "/")]
        group = graph.value(predicate=ZARR.multiscales, object=head)
        if group is not None and str(group) == iri:
            candidates.append(coarsest)
        for candidate in candidates:
            if (URIRef(candidate), ZARR.path, None) in graph and node_kind(graph, candidate) == "array":
                return candidate
    return iri
