"""The result of a query on the store: rdflib's, with its SELECT rows made cheaply.

rdflib's :class:`~rdflib.query.ResultRow` builds a dictionary of the variable names for
every row it makes; iterating a result of 1,655 rows (the SPARQL benchmark's regex on
titles) spent two fifths of the query's time there, more than PostgreSQL took to find
them. The rows made here are the same class, holding the same values, and share one
dictionary of the names, made once per result.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from rdflib.plugins.sparql.processor import SPARQLResult
from rdflib.query import ResultRow

__all__ = ["StoreResult"]


class StoreResult(SPARQLResult):
    """A :class:`SPARQLResult` whose SELECT rows share their names' mapping."""

    def __iter__(self) -> Iterator[Any]:
        if self.type != "SELECT":
            yield from super().__iter__()
            return
        names = list(self.vars or [])
        labels = {str(v): i for i, v in enumerate(names)}
        make = tuple.__new__
        if self._genbindings:
            # As rdflib's: the solutions are kept while they are read, for a second pass.
            kept = self._bindings
            for b in self._genbindings:
                if b:  # an empty solution makes no row (as rdflib's)
                    kept.append(b)
                    row = make(ResultRow, [b.get(v) for v in names])
                    row.labels = labels
                    yield row
            self._genbindings = None
        else:
            for b in self._bindings:
                if b:
                    row = make(ResultRow, [b.get(v) for v in names])
                    row.labels = labels
                    yield row
