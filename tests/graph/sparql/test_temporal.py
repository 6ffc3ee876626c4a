"""Dates and times compared and ordered in SQL, in XSD 1.1's partial order.

Every comparison of two literals of the date/time classes (``xsd:dateTime``, ``xsd:date``,
``xsd:time``, ``xsd:gYear``, ``xsd:gYearMonth``), with and without time zones, must run
as SQL (no fallback to rdflib) and agree with Oxigraph, whose date/time arithmetic is an
implementation of its own (rdflib's is no oracle: it drops the time zone of an
``xsd:date`` and compares zoned with zoneless date-times as if both were UTC). Where the
two differ by design, the specification decides: a zoned and a zoneless value within 14
hours of each other are *incomparable*, so ``=`` is an error too (Oxigraph says false),
and an ill-typed literal compares with nothing, itself included, except by ``=``.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyoxigraph as ox
import pytest
from rdflib import Dataset, Literal, URIRef
from rdflib.namespace import XSD
from sqlalchemy import text

from catalogue.graph import SQLStore
from catalogue.graph.database import downgrade, upgrade
from catalogue.graph.terms import comparable_value, is_zoned

EX = "http://x/"
VALUES = [
    ("2020-01-01", XSD.date), ("2020-01-01Z", XSD.date), ("2020-01-02+10:00", XSD.date),
    ("2019-12-31", XSD.date), ("2020-01-03-14:00", XSD.date), ("-0044-03-15", XSD.date),
    ("2020-02-30", XSD.date),  # ill-typed
    ("2020-01-01T10:00:00", XSD.dateTime), ("2020-01-01T10:00:00Z", XSD.dateTime),
    ("2020-01-01T12:00:00+02:00", XSD.dateTime), ("2020-01-02T10:00:00", XSD.dateTime),
    ("2020-01-01T23:59:59.5", XSD.dateTime), ("2020-01-01T24:00:00", XSD.dateTime),
    ("2020-01-02T00:00:00", XSD.dateTime), ("1969-07-20T20:17:40Z", XSD.dateTime),
    ("12:00:00", XSD.time), ("13:00:00Z", XSD.time), ("24:00:00Z", XSD.time), ("00:00:00", XSD.time),
    ("23:30:00-05:00", XSD.time), ("12:00:00.25", XSD.time),
    ("2020", XSD.gYear), ("2021Z", XSD.gYear), ("2020+05:00", XSD.gYear), ("1999", XSD.gYear),
    ("2020-05", XSD.gYearMonth), ("2020-04Z", XSD.gYearMonth), ("2020-13", XSD.gYearMonth),
]
ILL_TYPED = {v for v, dt in VALUES if comparable_value(v, str(dt)) is None}


def _node(i: int) -> str:
    return f"{EX}{i}"


@pytest.fixture(scope="module")
def catalogue_ds(module_db_url: str) -> Iterator[Dataset]:
    store = SQLStore(module_db_url)
    ds = Dataset(store=store, default_union=True)
    g = ds.graph(URIRef(f"{EX}g"))
    for i, (value, dt) in enumerate(VALUES):
        # normalize=False: rdflib would rewrite "2020-01-01Z"^^xsd:date as "2020-01-01"
        g.add((URIRef(_node(i)), URIRef(f"{EX}v"), Literal(value, datatype=dt, normalize=False)))
    store.commit()
    yield ds
    store.close()


@pytest.fixture(scope="module")
def oxigraph() -> ox.Store:
    store = ox.Store()
    for i, (value, dt) in enumerate(VALUES):
        store.add(ox.Quad(ox.NamedNode(_node(i)), ox.NamedNode(f"{EX}v"),
                          ox.Literal(value, datatype=ox.NamedNode(str(dt)))))
    return store


def _compiled(ds: Dataset, query: str) -> list:
    store = ds.store
    store.sql_log = log = []
    try:
        rows = list(ds.query(query))
    finally:
        store.sql_log = None
    assert not [e.note for e in log if e.sql is None], "fell back to rdflib"
    return rows


PAIRS = "SELECT ?a ?b ({} AS ?r) WHERE {{ ?a <http://x/v> ?va . ?b <http://x/v> ?vb }}"


def _answers(ds: Dataset, oxi: ox.Store, expression: str) -> tuple[dict, dict]:
    query = PAIRS.format(expression)
    mine = {(str(r[0]), str(r[1])): None if r[2] is None else str(r[2]) for r in _compiled(ds, query)}
    theirs = {(s["a"].value, s["b"].value): None if s["r"] is None else s["r"].value for s in oxi.query(query)}
    return mine, theirs


def _value(node: str) -> tuple[str, URIRef]:
    return VALUES[int(node.rsplit("/", 1)[1])]


@pytest.mark.parametrize("op", ["<", ">", "<=", ">="])
def test_order_comparisons_agree_with_oxigraph(catalogue_ds: Dataset, oxigraph: ox.Store, op: str) -> None:
    mine, theirs = _answers(catalogue_ds, oxigraph, f"?va {op} ?vb")
    assert len(mine) == len(VALUES) ** 2
    differ = []
    for pair, got in mine.items():
        expected = theirs[pair]
        if {_value(pair[0])[0], _value(pair[1])[0]} & ILL_TYPED:
            expected = None  # no value to order by (Oxigraph orders a term with itself)
        if got != expected:
            differ.append((_value(pair[0])[0], _value(pair[1])[0], got, expected))
    assert not differ
    # the partial order is exercised: some pairs are incomparable, some ordered
    assert None in mine.values() and "true" in mine.values() and "false" in mine.values()


@pytest.mark.parametrize("op", ["=", "!="])
def test_equality_is_an_error_where_the_values_are_incomparable(
    catalogue_ds: Dataset, oxigraph: ox.Store, op: str
) -> None:
    mine, theirs = _answers(catalogue_ds, oxigraph, f"?va {op} ?vb")
    _, ordered = _answers(catalogue_ds, oxigraph, "?va < ?vb")
    differ = []
    for pair, got in mine.items():
        (va, ta), (vb, tb) = _value(pair[0]), _value(pair[1])
        expected = theirs[pair]
        if ta == tb and ordered[pair] is None and pair[0] != pair[1] and not {va, vb} & ILL_TYPED:
            expected = None  # incomparable (Oxigraph: false)
        if {va, vb} & ILL_TYPED and pair[0] != pair[1] and ta == tb:
            expected = None  # an ill-typed literal equals itself only
        if got != expected:
            differ.append((va, vb, got, expected))
    assert not differ
    # "2020-01-01T10:00:00Z" = "2020-01-01T12:00:00+02:00": one instant, two terms
    assert mine[(_node(8), _node(9))] == ("true" if op == "=" else "false")
    # "2020-01-01T24:00:00" is "2020-01-02T00:00:00"
    assert mine[(_node(12), _node(13))] == ("true" if op == "=" else "false")


@pytest.mark.parametrize(("constant", "expected"), [
    # a zoneless constant: "2020-01-02+10:00" is 2020-01-01T14:00Z, within 14 hours of
    # 2020-01-01 somewhere: incomparable
    ('"2020-01-01"^^xsd:date', {"2020-01-03-14:00"}),
    ('"2019-12-31"^^xsd:date', {"2020-01-01", "2020-01-01Z", "2020-01-02+10:00", "2020-01-03-14:00"}),
    ('"2020-01-01Z"^^xsd:date', {"2020-01-02+10:00", "2020-01-03-14:00"}),
    # zoneless 2020-01-02T00:00:00 may be 2020-01-01T10:00Z: incomparable
    ('"2020-01-01T11:00:00Z"^^xsd:dateTime', {"2020-01-02T10:00:00"}),
    ('"12:00:00Z"^^xsd:time', {"13:00:00Z", "23:30:00-05:00"}),  # 23:30-05:00 is 04:30Z the next day
    ('"2020"^^xsd:gYear', {"2021Z"}),
])
def test_filters_with_date_constants_run_in_sql(catalogue_ds: Dataset, oxigraph: ox.Store, constant: str,
                                                 expected: set[str]) -> None:
    query = (f"PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> SELECT ?v WHERE {{ ?s <http://x/v> ?v "
             f"FILTER(?v > {constant}) }}")
    got = {str(r[0]) for r in _compiled(catalogue_ds, query)}
    assert got == expected
    assert got == {s["v"].value for s in oxigraph.query(query)}


def test_order_by_dates_and_times(catalogue_ds: Dataset, oxigraph: ox.Store) -> None:
    # Within one class, all zoned or all zoneless: a total order, as Oxigraph gives it.
    # Compared as instants (values that are one instant may come in either order, and
    # Oxigraph writes 24:00:00 as the next day's 00:00:00).
    query = "SELECT ?v WHERE { ?s <http://x/v> ?v FILTER(datatype(?v) = <%s>) } ORDER BY DESC(?v)"
    for dt, zoned in ((XSD.dateTime, True), (XSD.dateTime, False), (XSD.time, False), (XSD.date, False)):
        def instants(lexical: list[str], dt: URIRef = dt, zoned: bool = zoned) -> list[float | None]:
            return [comparable_value(v, str(dt)) for v in lexical if v not in ILL_TYPED and is_zoned(v) == zoned]

        got = instants([str(r[0]) for r in _compiled(catalogue_ds, query % dt)])
        assert got == instants([s["v"].value for s in oxigraph.query(query % dt)])
        assert len(got) >= 3 and got == sorted(got, reverse=True)


def test_the_upgrade_computes_values_of_literals_stored_before(db_url: str) -> None:
    store = SQLStore(db_url)
    ds = Dataset(store=store)
    g = ds.graph(URIRef(f"{EX}g"))
    for i, (value, dt) in enumerate(VALUES):
        g.add((URIRef(_node(i)), URIRef(f"{EX}v"), Literal(value, datatype=dt, normalize=False)))
    store.commit()
    engine = store.engine

    def nums() -> dict[str, float | None]:
        with engine.connect() as conn:
            return dict(conn.execute(text("SELECT t.value, t.num FROM terms t JOIN datatypes d ON d.id = t.datatype "
                                          "WHERE d.iri LIKE '%XMLSchema#%'")).all())

    try:
        assert nums() == {v: comparable_value(v, str(dt)) for v, dt in VALUES}
        store.close()
        downgrade(engine, "0008_search_layout")  # as revision 0008 stored them: zoned date-times only
        before = nums()
        assert {v for v, n in before.items() if n is not None} == {
            "2020-01-01T10:00:00Z", "2020-01-01T12:00:00+02:00", "1969-07-20T20:17:40Z"}
        upgrade(engine)
        assert nums() == {v: comparable_value(v, str(dt)) for v, dt in VALUES}
    finally:
        store.close()
        engine.dispose()


def test_every_pair_of_classes_is_incomparable(catalogue_ds: Dataset) -> None:
    # a date is not before a date-time: no comparison across classes has a value
    rows = _compiled(catalogue_ds, PAIRS.format("?va < ?vb"))
    for a, b, r in rows:
        if _value(str(a))[1] != _value(str(b))[1]:
            assert r is None, (_value(str(a)), _value(str(b)))
