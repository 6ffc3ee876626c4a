"""Compiled statements kept for the next time the same query is asked.

A portal asks the same few queries over and over, and a query of a few patterns is
compiled in about as long as the database takes to answer it. The parse cache
(:mod:`.query`) already hands back the same algebra for the same text, so a part of it
is known again by identity; what its statement depends on besides is compared, not
assumed: the term ids of its constants (looked up afresh for every query, or on
PostgreSQL checked by the statement itself, :mod:`.guard`, as they may change between
transactions: a term collected and stored again gets a new id), the
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

__all__ = ["MAX_STATEMENTS", "STATEMENTS", "Context", "Guess", "StatementCache"]

#: Statements kept (least recently used go first).
MAX_STATEMENTS: Final = 256


@dataclass(eq=False)
class _Entry:
    part: CompValue  # held, so that its id is not reused while the entry lives
    ids: dict[Node, int]
    datatypes: dict[str, int]
    scope: GraphScope
    default_id: int | None
    statement: Statement
    guarded: str | None
    #: The statement's answer was empty the last time it ran (changed under the lock).
    empty: bool = False


@dataclass(frozen=True)
class Guess:
    """What :meth:`StatementCache.peek` gives: the statement last kept for a part, and on
    PostgreSQL the same with the check that it still holds (:mod:`.guard`)."""

    statement: Statement
    guarded: str | None
    #: Its answer was empty the last time: rows of the check tell nothing then (:mod:`.guard`).
    empty: bool


#: What a part's statement depends on that is known before its constants' ids are looked
#: up: the dialect, the database, the default graph's name, whether the default graph is
#: the union, the queried graph's name, whether one solution is enough and whether there
#: were statistics to order joins by (:func:`.evaluate._inputs`). Entries are kept per
#: part and context, so that one query asked of two graphs in turn keeps both statements.
Context = tuple[Any, ...]


class StatementCache:
    """Statements by algebra part and context, valid while everything they were compiled
    from is equal."""

    def __init__(self, size: int = MAX_STATEMENTS) -> None:
        self._size = size
        self._entries: OrderedDict[tuple[int, Context], _Entry] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, part: CompValue, context: Context, ids: Mapping[Node, int], datatypes: Mapping[str, int], *,
            scope: GraphScope, default_id: int | None) -> Statement | None:
        key = (id(part), context)
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry.part is not part:
                return None
            if (entry.ids != ids or entry.datatypes != datatypes or entry.scope != scope
                    or entry.default_id != default_id):
                return None
            self._entries.move_to_end(key)
        return replace(entry.statement, params=dict(entry.statement.params))

    def peek(self, part: CompValue, context: Context) -> Guess | None:
        """The statement last kept for ``part`` in ``context``, whatever ids it was compiled
        for: a guess of what :meth:`get` will return once the ids are known
        (:mod:`.evaluate` runs it with its check, :mod:`.guard`, and keeps its rows when
        the check holds)."""
        key = (id(part), context)
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry.part is not part:
                return None
            self._entries.move_to_end(key)  # (a guess that holds is all a query asks of the cache)
            empty = entry.empty
        return Guess(replace(entry.statement, params=dict(entry.statement.params)), entry.guarded, empty)

    def note_empty(self, part: CompValue, context: Context, empty: bool) -> None:
        """Record whether the statement kept for ``part`` in ``context`` answered nothing
        when it last ran (no entry: nothing to record)."""
        with self._lock:
            entry = self._entries.get((id(part), context))
            if entry is not None and entry.part is part:
                entry.empty = empty

    def put(self, part: CompValue, context: Context, ids: Mapping[Node, int], datatypes: Mapping[str, int],
            statement: Statement, *, scope: GraphScope, default_id: int | None,
            guarded: str | None = None) -> None:
        """Keep ``statement``, compiled for ``part`` in ``context`` with ``ids`` and
        ``datatypes`` (``guarded``: the same with its check, :func:`.guard.guarded_sql`)."""
        key = (id(part), context)
        entry = _Entry(part, dict(ids), dict(datatypes), scope, default_id,
                       replace(statement, params=dict(statement.params)), guarded)
        with self._lock:
            self._entries[key] = entry
            self._entries.move_to_end(key)
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()


#: The process's statements (one per algebra part of the parse cache and context).
STATEMENTS: Final = StatementCache()
