"""Comparable values of dates and times: SPARQL comparisons and ORDER BY on them in SQL.

Revision ID: 0009_temporal_values
Revises: 0008_search_layout
Create Date: 2026-11-28 00:00:00

Until this revision ``terms.num`` held a value for time-zoned ``xsd:dateTime`` literals
only, so a FILTER comparing ``xsd:date``, ``xsd:time``, ``xsd:gYear``,
``xsd:gYearMonth`` or a date-time without a time zone fell back to rdflib, node by node.
It now holds the value's first instant for all of them
(:func:`catalogue.graph.terms.comparable_value`); this revision computes it for the
literals already stored (read in id-ordered batches; one pass over ``terms``). The
downgrade clears what revision 0008's compiler did not expect: values of those types,
and of date-times without a time zone, which it would have compared as if in UTC.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import sqlalchemy as sa
from alembic import op

from catalogue.graph.terms import TEMPORAL_CLASSES, comparable_value, is_zoned

revision: str = "0009_temporal_values"
down_revision: str | Sequence[str] | None = "0008_search_layout"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

#: Literals read per round trip.
BATCH = 5000
_XSD = "http://www.w3.org/2001/XMLSchema#"
#: The datatypes that had a comparable value before (zoned date-times only).
_ZONED_BEFORE = frozenset({_XSD + "dateTime", _XSD + "dateTimeStamp"})


def _temporal_datatypes() -> dict[int, str]:
    rows = op.get_bind().execute(sa.text("SELECT id, iri FROM datatypes")).all()
    return {int(dt_id): iri for dt_id, iri in rows if iri in TEMPORAL_CLASSES}


def _batches(datatypes: dict[int, str]) -> list[list[tuple[int, str, int]]]:
    """The temporal literals, in id-ordered batches (keyset pagination), all read before
    any update: SQLite leaves updating a table under an open query undefined."""
    conn = op.get_bind()
    select = sa.text(
        "SELECT id, value, datatype FROM terms WHERE id > :last AND datatype IN :dts ORDER BY id LIMIT :n"
    ).bindparams(sa.bindparam("dts", expanding=True))
    out, last = [], 0
    while True:
        rows = [(int(i), v, int(d)) for i, v, d in conn.execute(
            select, {"last": last, "dts": sorted(datatypes), "n": BATCH})]
        if not rows:
            return out
        out.append(rows)
        last = rows[-1][0]


def _set_num(num_of: Callable[[str, str], float | None]) -> None:
    """Set ``num`` of every temporal literal to ``num_of(lexical form, datatype IRI)``."""
    datatypes = _temporal_datatypes()
    if not datatypes:
        return
    conn = op.get_bind()
    update = sa.text("UPDATE terms SET num = :num WHERE id = :id")
    for rows in _batches(datatypes):
        conn.execute(update, [{"id": term_id, "num": num_of(value, datatypes[dt])} for term_id, value, dt in rows])


def upgrade() -> None:
    _set_num(comparable_value)


def downgrade() -> None:
    _set_num(lambda value, datatype: comparable_value(value, datatype)
             if datatype in _ZONED_BEFORE and is_zoned(value) else None)
