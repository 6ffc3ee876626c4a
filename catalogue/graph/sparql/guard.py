"""A statement compiled before, run again with the database checking that it still holds.

A compiled statement depends on its constants' term ids and on the datatypes stored
(:mod:`.statement_cache`), and both may change between transactions: a constant first
stored, or collected and stored again under a new id, a datatype first written. So the ids
are looked up before the statement kept for a part can be trusted, which on PostgreSQL is
a round trip of its own. Sending the lookup and the kept statement in one pipeline saved
the second round trip, but a pipeline costs more than a plain statement (psycopg's
pipeline machinery, and the server's), and the lookup's rows had to be compared in Python.

Here the kept statement carries its own check instead, written into its text: the ids
the constants' hashes give now, and the number of datatypes, compared with what it was
compiled for, in a ``MATERIALIZED`` common table expression of one row that the
statement reads first. The statement itself is a ``LATERAL`` subquery fenced with
``OFFSET 0`` (planned as it stands, its one-time filter the check), so that it runs only
when the check holds. Every row ends with two columns: whether the statement ran, and
whether this row is one of its rows (``NULL`` on the one row a check gives alone).
Decoding reads columns by offset, so the two are simply not read.

A hash maps to one stored term (``terms.hash`` is unique), and a term's id never changes
while it is stored: if every constant's hash gives the id it gave at compile time (and
those that had none still have none), every constant is the same term as then. A hash
taken by a different term (a collision, which the lookup would report) only makes the
check fail, every time: the query is then compiled the usual way. Datatypes are only
ever added, so their number tells whether any was.

Query 14 of the benchmark (an ASK) at ten million triples, the statement through
psycopg: alone 0.15 ms, in the pipeline with the lookup 0.25 ms, with its check 0.17 ms.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from rdflib.term import Node

from ..terms import encode

__all__ = ["guarded_sql", "read_guarded"]


def guarded_sql(sql: str, nodes: Iterable[Node], ids: Mapping[Node, int], datatypes: Mapping[str, int]) -> str:
    """``sql`` (compiled with ``ids`` for the constants ``nodes`` and with ``datatypes``,
    where the negative ids are those the store holds no literal of) with its check."""
    hashes: set[int] = set()
    expected: set[int] = set()
    for node in nodes:
        try:
            hashes.add(encode(node)[0])
        except TypeError:  # not a term the store could hold (a variable): looked up as nothing
            continue
        if node in ids:
            expected.add(ids[node])
    stored_types = sum(1 for dt_id in datatypes.values() if dt_id > 0)
    checks = [f"(SELECT count(*) FROM datatypes) = {stored_types}"]
    if hashes:
        listed = ", ".join(str(h) for h in sorted(hashes))
        ids_now = f"COALESCE((SELECT array_agg(id ORDER BY id) FROM terms WHERE hash IN ({listed})), '{{}}')"
        checks.insert(0, f"{ids_now} = '{{{','.join(str(i) for i in sorted(expected))}}}'::bigint[]")
    return (
        f"WITH guard_(holds) AS MATERIALIZED (SELECT {' AND '.join(checks)})\n"
        "SELECT kept_.*, guard_.holds FROM guard_ LEFT JOIN LATERAL (\n"
        f"SELECT statement_.*, TRUE AS row_ FROM (\n{sql}\n) AS statement_ WHERE guard_.holds OFFSET 0\n"
        ") AS kept_ ON TRUE"
    )


#: Batches of rows and what closes them unread (``evaluate._Sent``).
Sent = tuple[Iterator[list[Any]], Callable[[], None]]


def read_guarded(sent: Sent) -> Sent | None:
    """The rows of a statement run by :func:`guarded_sql`: None (and closed) when its check
    failed, else its batches (of rows carrying the two columns, which the caller ignores)."""
    batches, close = sent
    first = next(batches, [])
    if not first or not first[0][-1]:  # (a check always gives one row at least)
        close()
        return None
    if first[0][-2] is None:  # the check's row alone: the statement has no rows
        close()
        return iter(()), close
    return _chained(first, batches), close


def _chained(first: list[Any], rest: Iterator[list[Any]]) -> Iterator[list[Any]]:
    yield first
    yield from rest
