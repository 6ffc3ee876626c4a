"""Comparing the compiler's answers with Oxigraph's, for the expression tests
(test_arithmetic.py, test_functions.py): every query must run as SQL, and answers are
compared by value for numbers (engines write computed numbers differently) and term by
term otherwise."""

from __future__ import annotations

from collections import Counter
from decimal import Decimal, InvalidOperation

import pyoxigraph as ox
from rdflib import Dataset, Literal
from rdflib.namespace import RDF, XSD

_DOUBLES = (str(XSD.double), str(XSD.float))
_INTEGERS = (str(XSD.integer), str(XSD.int), str(XSD.byte))


def value_key(dt: str | None, lexical: str, lang: str | None = None) -> object:
    """A literal's value where it is a number or boolean, else its parts."""
    try:
        if dt in _DOUBLES:
            return ("double", float(lexical.replace("INF", "inf")))
        if dt == str(XSD.decimal):
            return ("decimal", Decimal(lexical))
        if dt in _INTEGERS:
            return ("integer", int(lexical))
    except (ValueError, InvalidOperation):
        return (dt, lexical)  # an ill-typed literal
    if dt == str(XSD.boolean):
        return ("boolean", lexical in ("true", "1"))
    return (None if dt in (str(XSD.string), str(RDF.langString)) else dt, lexical, lang.lower() if lang else None)


def term_key(term: object) -> object:
    if term is None:
        return None
    if isinstance(term, Literal):
        return value_key(str(term.datatype) if term.datatype else None, str(term), term.language)
    if isinstance(term, ox.Literal):
        return value_key(term.datatype.value if term.datatype else None, term.value, term.language)
    return str(term if not isinstance(term, ox.NamedNode) else term.value)


def compiled(ds: Dataset, query: str) -> list[tuple]:
    """The solutions of ``query`` (from the bindings: iterating an rdflib result leaves
    out solutions that bind nothing), asserting that no part fell back to rdflib."""
    store = ds.store
    store.sql_log = log = []
    try:
        result = ds.query(query)
        rows = [tuple(b.get(v) for v in result.vars) for b in result.bindings]
    finally:
        store.sql_log = None
    assert not [e.note for e in log if e.sql is None], "fell back to rdflib"
    return rows


def same_as_oxigraph(ds: Dataset, oxi: ox.Store, query: str) -> Counter:
    mine = Counter(tuple(term_key(x) for x in row) for row in compiled(ds, query))
    solutions = oxi.query(query)
    width = len(solutions.variables)
    theirs = Counter(tuple(term_key(s[i]) for i in range(width)) for s in solutions)
    assert mine == theirs
    return mine
