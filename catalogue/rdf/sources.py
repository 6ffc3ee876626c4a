"""What rdf/ reads the catalogue through: a quad source or a query function.

The RDF modules (export, the ILIAD profile, DCAT) describe the catalogue's graphs; they
do not need the :class:`catalogue.api.Catalogue` facade, only a way to read them. These
protocols name that way, so that rdf/ sits below the graph store and the facade (the
SQL store is a :class:`QuadSource`; ``Catalogue.query`` is a :class:`QueryFunction`)
and anything else of that shape (an rdflib ``Dataset`` wrapper, a test double) serves
as well.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from rdflib.term import Node as RDFNode

from catalogue.rdf.convert import Triple

__all__ = ["QuadSource", "QueryFunction"]


class QuadSource(Protocol):
    """Named graphs read one at a time (as :class:`catalogue.graph.store.SQLStore` does)."""

    def graph_ids(self) -> Sequence[RDFNode]:
        """The names of every graph, sorted."""
        ...

    def graph_triples(self, graph_id: RDFNode) -> Iterable[Triple]:
        """The triples of one graph, streamed."""
        ...


class QueryFunction(Protocol):
    """A SPARQL query over the union of the graphs, catalogue prefixes pre-bound, giving result rows."""

    def __call__(self, sparql: str, /) -> Iterable[Any]: ...
