"""What SPARQL evaluation needs from a store, as a protocol (so it never imports one).

The compiled-SQL path runs on whatever store a graph is held by, provided the store
type was registered (:func:`register`, done by :func:`catalogue.graph.sparql.hooks.install`,
which the first query or update on a :class:`~catalogue.graph.store.SQLStore` calls): graphs on any
other store (rdflib's ``Memory``, say) are left to rdflib's evaluator.  A registry of
types, not an ``isinstance`` check against the store class, keeps this layer below the
store, and an ``isinstance`` against a tuple of types is cheaper than a runtime protocol
check on every algebra node rdflib evaluates.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol

from rdflib.term import Node
from sqlalchemy.engine import Connection

__all__ = ["QuadSource", "register", "source_of"]


class QuadSource(Protocol):
    """The few things the SPARQL-to-SQL path asks of a store."""

    #: False turns compilation off (every node is evaluated by rdflib).
    compile_sparql: bool
    #: When a list, every statement that ran (or node rdflib evaluated) is appended to it.
    sql_log: list[Any] | None

    @property
    def connection(self) -> Connection:
        """The store's connection, inside its current transaction."""
        ...

    @property
    def dialect_name(self) -> str:
        """``"sqlite"`` or ``"postgresql"``."""
        ...

    def lookup_term_ids(self, nodes: Iterable[Node]) -> dict[Node, int]:
        """The ids of those of ``nodes`` the database holds."""
        ...

    def holdable(self, text: str) -> bool:
        """Whether the database can store ``text`` (else it holds no term with it)."""
        ...

    def datatype_ids(self) -> dict[str, int]:
        """Datatype IRI -> datatype id, for every datatype stored."""
        ...

    def decode_term(self, kind: int, value: str, datatype_id: int | None, lang: str | None) -> Node:
        """The rdflib term of a stored row."""
        ...

    def rollback(self) -> None:
        """End the current transaction without committing it."""
        ...


_SOURCE_TYPES: tuple[type, ...] = ()


def register(source_type: type) -> None:
    """Run SPARQL on graphs held by stores of ``source_type`` (and its subclasses) as
    compiled SQL (idempotent)."""
    global _SOURCE_TYPES
    if source_type not in _SOURCE_TYPES:
        _SOURCE_TYPES = (*_SOURCE_TYPES, source_type)


def source_of(graph: Any) -> QuadSource | None:
    """The registered store holding ``graph``, or None (rdflib evaluates it then)."""
    store = getattr(graph, "store", None)
    if store is None or not isinstance(store, _SOURCE_TYPES):
        return None
    source: QuadSource = store
    return source
