"""The store behind a DESCRIBE result's graph: a set of triples, indexed when asked.

A description is built once, from rows the database has already made distinct, and
is then read whole (serialised, counted, iterated) far more often than by pattern.
rdflib's ``SimpleMemory`` indexes every triple three ways as it is added: two
dictionaries and a set per position, about 4 µs a triple, which was a quarter of a
small DESCRIBE's time (58 triples on SQLite: 0.25 of 0.95 ms). Here a triple costs
one set insertion; the first lookup by subject, predicate or object (a serialiser's
``predicate_objects(s)``, say) indexes all three positions once, so a large
description read by pattern stays linear.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any, Final

from rdflib.graph import Graph
from rdflib.store import Store
from rdflib.term import Node, URIRef

__all__ = ["DescriptionStore"]

_Triple = tuple[Node, Node, Node]

#: The contexts of every triple: none (an exhausted iterator stays exhausted, so one is
#: shared by all).
_NO_CONTEXTS: Final[Iterator[Any]] = iter(())


class DescriptionStore(Store):
    """Triples of one graph (no contexts, no formulae), for reading.

    Nothing subscribes to a description's events, so additions do not dispatch them.
    """

    context_aware = False
    formula_aware = False
    transaction_aware = False
    graph_aware = False

    def __init__(self) -> None:
        super().__init__()
        self._triples: set[_Triple] = set()
        self._index: tuple[dict[Node, list[_Triple]], ...] | None = None
        self._namespace: dict[str, URIRef] = {}
        self._prefix: dict[URIRef, str] = {}

    # ------------------------------------------------------------------ writing
    def fill(self, triples: Iterable[_Triple]) -> None:
        """Add many triples at once (each a tuple of three rdflib terms)."""
        self._triples.update(triples)
        self._index = None

    def add(self, triple: _Triple, context: Any, quoted: bool = False) -> None:  # type: ignore[override]
        self._triples.add(triple)
        self._index = None

    def remove(self, triple: Any, context: Any = None) -> None:  # type: ignore[override]
        for found, _ in list(self.triples(tuple(triple))):
            self._triples.discard(found)
        self._index = None

    # ------------------------------------------------------------------ reading
    def triples(self, triple_pattern: Any, context: Any = None) -> Iterator[tuple[_Triple, Iterator[Any]]]:  # type: ignore[override]
        pattern = tuple(triple_pattern)  # a list too, as rdflib's stores take it
        bound = [(i, term) for i, term in enumerate(pattern) if term is not None]
        if not bound:  # the whole description, as a result is read: nothing to check
            for triple in tuple(self._triples):
                yield triple, _NO_CONTEXTS
            return
        if len(bound) == 3:
            candidates: Iterable[_Triple] = (pattern,) if pattern in self._triples else ()
        else:
            index = self._index or self._build_index()
            # The bound position with the fewest triples, the others checked on each.
            candidates = min((index[i].get(term, ()) for i, term in bound), key=len)
        for triple in candidates:
            if all(triple[i] == term for i, term in bound):
                yield triple, _NO_CONTEXTS

    def _build_index(self) -> tuple[dict[Node, list[_Triple]], ...]:
        index: tuple[dict[Node, list[_Triple]], ...] = ({}, {}, {})
        for triple in self._triples:
            for position, by in zip(triple, index, strict=True):
                by.setdefault(position, []).append(triple)
        self._index = index
        return index

    def __len__(self, context: Any = None) -> int:
        return len(self._triples)

    def contexts(self, triple: Any = None) -> Iterator[Graph]:
        return iter(())

    # --------------------------------------------------------------- namespaces
    def bind(self, prefix: str, namespace: URIRef, override: bool = True) -> None:
        """As rdflib's memory stores bind: with ``override`` the prefix and the
        namespace each lose any other binding; without, an existing binding of
        either is kept."""
        old_namespace = self._namespace.get(prefix)
        old_prefix = self._prefix.get(namespace)
        if old_prefix is None and old_namespace is not None:
            old_prefix = self._prefix.get(old_namespace)
        if override:
            if old_prefix is not None:
                self._namespace.pop(old_prefix, None)
            if old_namespace is not None:
                self._prefix.pop(old_namespace, None)
            self._prefix[namespace] = prefix
            self._namespace[prefix] = namespace
        else:
            kept_namespace = old_namespace if old_namespace is not None else namespace
            kept_prefix = old_prefix if old_prefix is not None else prefix
            self._prefix[kept_namespace] = kept_prefix
            self._namespace[kept_prefix] = kept_namespace

    def bind_all(self, bindings: Iterable[tuple[str, URIRef]]) -> None:
        """:meth:`bind` of each ``(prefix, namespace)`` in turn, with ``override``: a store's
        prefixes into a new description. Into an empty store, with no prefix twice (a
        store's prefixes, from a mapping), that leaves each namespace's last prefix,
        written at once (a call per prefix was 3% of a small description's time)."""
        pairs = list(bindings)
        if self._namespace or self._prefix or len({prefix for prefix, _ in pairs}) != len(pairs):
            for prefix, namespace in pairs:
                self.bind(prefix, namespace)
            return
        self._prefix = {namespace: prefix for prefix, namespace in pairs}
        self._namespace = {prefix: namespace for prefix, namespace in pairs if self._prefix[namespace] == prefix}

    def namespace(self, prefix: str) -> URIRef | None:
        return self._namespace.get(prefix)

    def prefix(self, namespace: URIRef) -> str | None:
        return self._prefix.get(namespace)

    def namespaces(self) -> Iterator[tuple[str, URIRef]]:
        yield from list(self._namespace.items())
