"""The RDF dataset a query runs over: the catalogue's, or one named by the request.

Without ``FROM``/``FROM NAMED`` (or the protocol's ``default-graph-uri`` and
``named-graph-uri``, which override them) a query sees the catalogue's dataset:
the union of every graph as default graph, every graph as a named graph. A named
dataset only ever selects graphs already in the catalogue: rdflib on its own would
fetch and parse a missing graph from the web, into the store.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Final, Protocol, cast

from rdflib import Dataset, Graph, URIRef
from rdflib.namespace import NamespaceManager
from rdflib.plugins.sparql.parserutils import CompValue
from rdflib.plugins.sparql.sparql import Query
from rdflib.store import Store
from rdflib.term import Node

from catalogue.errors import TooLarge

from .parse import uses

__all__ = ["MAX_DATASET_TRIPLES", "GraphStore", "RDFDataset", "copy_dataset", "dataset_target", "quiet"]

#: Triples copied into memory for a query over an explicit RDF dataset.
MAX_DATASET_TRIPLES: Final = 1_000_000


class GraphStore(Protocol):
    """What queries and updates need of an rdflib store besides rdflib's own interface
    (:class:`~catalogue.graph.store.SQLStore` has it; a protocol, so that this package
    does not import the store module, which imports this package)."""

    def graph_name_ids(self) -> Mapping[int, Node]: ...

    def graph_triples(self, graph_id: Node) -> Iterable[tuple[Node, Node, Node]]: ...

    def graph_ids(self) -> list[Node]: ...

    def begin_write(self) -> object: ...

    def commit(self) -> None: ...

    def rollback(self) -> None: ...


@dataclass(frozen=True)
class RDFDataset:
    """A dataset named by IRIs (SPARQL Protocol ``default-graph-uri`` / ``named-graph-uri``).

    Empty: the query's own ``FROM``/``FROM NAMED``, or else the catalogue's dataset.
    """

    default_graphs: tuple[str, ...] = ()
    named_graphs: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.default_graphs or self.named_graphs)


def dataset_target(store: GraphStore, query: Query, dataset: RDFDataset | None = None) -> tuple[Graph, Query]:
    """The graph to evaluate on, and the query without its dataset clause.

    Protocol parameters override ``FROM``/``FROM NAMED``. Without either, the
    catalogue's dataset (union default graph). One existing default graph and no
    named graphs (the common case, and what rdflib's SPARQLStore sends) run
    compiled to SQL on that graph; any other dataset is copied into memory
    (bounded by :data:`MAX_DATASET_TRIPLES` and the time limit) and evaluated
    by rdflib. Graphs that do not exist are empty: nothing is ever fetched.
    """
    algebra = query.algebra
    clause = algebra.datasetClause or []
    if dataset:
        default, named = list(dataset.default_graphs), list(dataset.named_graphs)
    elif clause:
        default = list(dict.fromkeys(str(d.default) for d in clause if d.default is not None))
        named = list(dict.fromkeys(str(d.named) for d in clause if d.named is not None))
    else:
        return quiet(Dataset(store=cast(Store, store), default_union=True)), query
    stripped = CompValue(algebra.name, **{k: v for k, v in algebra.items() if k != "datasetClause"})
    stripped["datasetClause"] = None
    bare = Query(query.prologue, stripped)
    existing = {str(name) for name in store.graph_name_ids().values()}
    if len(default) == 1 and not named and default[0] in existing and not uses(algebra, "Graph"):
        return Graph(store=cast(Store, store), identifier=URIRef(default[0]), bind_namespaces="none"), bare
    return copy_dataset(store, default, named, existing), bare


def quiet(graph: Dataset) -> Dataset:
    """A graph whose namespace manager never writes to the store.

    rdflib gives every graph, on first use of its namespaces (DESCRIBE asks for
    them), a manager that binds rdflib's default prefixes in the store: a write,
    which on SQLite takes the database's write lock for the rest of the request
    (and is rolled back by the pool, so it happens again on the next connection).
    A read-only endpoint must not wait on, or fail over, a harvest's lock.
    """
    graph.namespace_manager = NamespaceManager(graph, bind_namespaces="none")
    return graph


def copy_dataset(store: GraphStore, default: list[str], named: list[str],
                 existing: set[str] | None = None) -> Dataset:
    """An in-memory dataset of the catalogue's graphs ``default`` (merged into its default
    graph) and ``named``; one the catalogue does not hold (not in ``existing``, its graph
    names, read when not given) is empty: nothing is fetched."""
    if existing is None:
        existing = {str(name) for name in store.graph_name_ids().values()}
    dataset = Dataset()  # in memory; its default graph is the query's default graph
    copied = 0

    def triples(iri: str, target: Graph) -> Iterator[tuple[Node, Node, Node, Graph]]:
        nonlocal copied
        if iri not in existing:
            return
        for s, p, o in store.graph_triples(URIRef(iri)):
            copied += 1
            if copied > MAX_DATASET_TRIPLES:
                raise TooLarge(
                    f"the RDF dataset named by the request holds more than {MAX_DATASET_TRIPLES:,} "
                    "triples; query the union default graph with GRAPH <...> { } instead",
                )
            yield s, p, o, target

    default_graph = dataset.default_graph
    for iri in default:
        default_graph.addN(triples(iri, default_graph))
    for iri in named:
        graph = dataset.graph(URIRef(iri))
        graph.addN(triples(iri, graph))
    return dataset
