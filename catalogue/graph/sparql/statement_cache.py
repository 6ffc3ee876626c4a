"""Compiled statements kept for the next time the same query is asked.

A portal asks the same few queries over and over, and a query of a few patterns is
compiled in about as long as the database takes to answer it. The parse cache
(:mod:`.query`) already hands back the same algebra for the same text, so a part of it
is known again by identity; what its statement depends on besides is compared, not
assumed: the term ids of its constants (looked up afresh for every query, as they may
change between transactions: a term collected and stored again gets a new id), the
datatype ids, the graph scope, the default graph's id, the database (its dialect and URL),
whether one solution is enough and, on PostgreSQL, whether there were statistics to
order its joins by (:mod:`.join_order`). Parts evaluated under bindings from outside
(rdflib's row-by-row EXISTS) are not kept: each row would be an entry of its own.

A hit is a copy whose parameters are the caller's own (threads share the cache).
Statements with spatial lookups are not kept (:func:`.evaluate.compile_part`): their
parsed geometries would be shared by threads, and GEOS's prepared geometries are not
safe to use from two at once.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any, Final

from rdflib.plugins.sparql.parserutils import CompValue
from rdflib.term import Node

from .compiler import Statement
from .sql import GraphScope

__all__ = ["MAX_STATEMENTS", "STATEMENTS", "StatementCache"]

#: Statements kept (least recently used go first).
MAX_STATEMENTS: Final = 256


@dataclass(frozen=True)
class _Entry:
    part: CompValue  # held, so that its id is not reused while the entry lives
    key: tuple[Any, ...]
    ids: dict[Node, int]
    datatypes: dict[str, int]
    statement: Statement


class StatementCache:
    """Statements by algebra part, valid while everything they were compiled from is equal."""

    def __init__(self, size: int = MAX_STATEMENTS) -> None:
        self._size = size
        self._entries: OrderedDict[int, _Entry] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def _key(dialect: str, scope: GraphScope, default_id: int | None, first_only: bool,
             ordered: bool, database: str) -> tuple[Any, ...]:
        return (dialect, database, scope, default_id, first_only, ordered)

    def get(self, part: CompValue, ids: Mapping[Node, int], datatypes: Mapping[str, int], *, dialect: str,
            scope: GraphScope, default_id: int | None, first_only: bool, ordered: bool = False,
            database: str = "") -> Statement | None:
        with self._lock:
            entry = self._entries.get(id(part))
            if entry is None or entry.part is not part:
                return None
            if (entry.key != self._key(dialect, scope, default_id, first_only, ordered, database) or entry.ids != ids
                    or entry.datatypes != datatypes):
                return None
            self._entries.move_to_end(id(part))
        return replace(entry.statement, params=dict(entry.statement.params))

    def peek(self, part: CompValue, *, dialect: str, database: str) -> Statement | None:
        """The statement last kept for ``part`` on that database, whatever ids it was
        compiled for: a guess of what :meth:`get` will return once the ids are known
        (:mod:`.evaluate` sends it with the lookup of those ids, and keeps its rows when
        the guess was right)."""
        with self._lock:
            entry = self._entries.get(id(part))
            if entry is None or entry.part is not part or entry.key[:2] != (dialect, database):
                return None
        return replace(entry.statement, params=dict(entry.statement.params))

    def put(self, part: CompValue, ids: Mapping[Node, int], datatypes: Mapping[str, int], statement: Statement, *,
            dialect: str, scope: GraphScope, default_id: int | None, first_only: bool, ordered: bool = False,
            database: str = "") -> None:
        entry = _Entry(part, self._key(dialect, scope, default_id, first_only, ordered, database), dict(ids),
                       dict(datatypes),
                       replace(statement, params=dict(statement.params)))
        with self._lock:
            self._entries[id(part)] = entry
            self._entries.move_to_end(id(part))
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


#: The process's statements (one per algebra part of the parse cache at most).
STATEMENTS: Final = StatementCache()
