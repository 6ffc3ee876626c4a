"""Parsing SPARQL for the catalogue: its prefixes pre-bound, errors as one line.

Queries and updates arrive from the web endpoint, ``catalogue query`` and Python
callers as text; this turns them into rdflib's algebra (one thread at a time, see
:func:`~catalogue.graph.sparql.query.translate_query`; short queries through its parse
cache, :func:`~catalogue.graph.sparql.query.prepared_query`) or into a
:class:`~catalogue.errors.QueryError` naming the problem and its position.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, Final

from rdflib.plugins.sparql.parserutils import CompValue
from rdflib.plugins.sparql.sparql import Query

from catalogue.errors import QueryError
from catalogue.rdf.vocabulary import PREFIXES

from .query import prepared_query, translate_query, translate_update

__all__ = ["FORMS", "one_line", "parse_query", "parse_update", "query_form", "uses"]

#: rdflib's algebra name of each query form -> the form's SPARQL keyword.
FORMS: Final = {
    "SelectQuery": "SELECT",
    "AskQuery": "ASK",
    "ConstructQuery": "CONSTRUCT",
    "DescribeQuery": "DESCRIBE",
}

#: Queries longer than this are parsed afresh each time instead of being cached.
_CACHED_QUERY_CHARS: Final = 10_000


def one_line(exc: BaseException) -> str:
    """The first line of an exception's message, whitespace collapsed (its type if empty)."""
    text = str(exc).strip()
    return " ".join(text.splitlines()[0].split()) if text else type(exc).__name__


#: The catalogue's prefixes as the parse cache's key wants them.
_NAMESPACES: Final = tuple(sorted((prefix, str(iri)) for prefix, iri in PREFIXES.items()))


def parse_query(text: str) -> Query:
    """Parse and translate a query with the catalogue prefixes bound (short ones cached)."""
    try:
        if len(text) <= _CACHED_QUERY_CHARS:
            return prepared_query(text, None, _NAMESPACES)
        return translate_query(text, None, dict(PREFIXES))
    except RecursionError:
        raise QueryError("the query is nested too deeply for the SPARQL parser") from None
    except Exception as exc:  # pyparsing's ParseException, rdflib's plain Exceptions (unknown prefix)
        raise QueryError(f"malformed query: {one_line(exc)}") from None


def query_form(query: Query) -> str:
    """SELECT, ASK, CONSTRUCT or DESCRIBE."""
    return FORMS[query.algebra.name]


def parse_update(text: str) -> Any:
    """Parse and translate an update with the catalogue prefixes bound."""
    try:
        return translate_update(text, None, dict(PREFIXES))
    except RecursionError:
        raise QueryError("the update is nested too deeply for the SPARQL parser") from None
    except Exception as exc:
        raise QueryError(f"malformed update: {one_line(exc)}") from None


def _walk(root: Any) -> Iterator[CompValue]:
    """Every algebra node under ``root`` (iteratively: algebras can be deep)."""
    stack = [root]
    seen: set[int] = set()
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, CompValue):
            yield item
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)


def uses(algebra: CompValue, name: str) -> bool:
    """Whether the algebra has a node called ``name`` anywhere (``ServiceGraphPattern``, ``Graph``)."""
    return any(part.name == name for part in _walk(algebra))


#: Functions giving another value on each call: a solution repeated gets other values.
DRAWN: Final = frozenset({"Builtin_RAND", "Builtin_BNODE", "Builtin_UUID", "Builtin_STRUUID"})


def draws(algebra: CompValue) -> bool:
    """Whether the algebra calls a function of :data:`DRAWN` anywhere."""
    return any(part.name in DRAWN for part in _walk(algebra))
