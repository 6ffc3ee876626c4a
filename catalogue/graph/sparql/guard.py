"""A statement compiled before, run again with the database checking that it still holds.

A compiled statement depends on its constants' term ids and on the datatypes stored
(:mod:`.statement_cache`), and both may change between transactions: a constant first
stored, or collected and stored again under a new id, a datatype first written. So the ids
are looked up before the statement kept for a part can be trusted, which on PostgreSQL is
a round trip of its own. Sending the lookup and the kept statement in one pipeline saved
the second round trip, but a pipeline costs more than a plain statement (psycopg's
pipeline machinery, and the server's), and the lookup's rows had to be compared in Python.

Here the kept statement carries its own check instead, written into its text: the id
each of the constants' hashes gives now (a hash that gave none must still give none), and
the datatypes' ids and IRIs (a SHA-256 of them), compared with what it was compiled for, in a
``MATERIALIZED`` common table expression of one row. The statement is
a subquery whose one-time filter is that check, and nothing else: PostgreSQL plans it as
it plans the statement alone (a cursor's plan for its first rows included), and runs it
only when the check holds. Rows mean the check held. No rows may mean either, so an empty
answer is asked the usual way (the lookup, then the statement compiled for the ids
found), and a part whose answer was empty last time is not guessed (its statement and
the lookup cost two round trips, about what the pipeline cost). A check that gave rows
alongside a failure signal was tried: as a ``LATERAL`` subquery or a ``UNION ALL`` with
the check's row, the statement lost the planner's aim at a cursor's first rows (query 6
of the benchmark, 54,000 rows through a cursor: 0.94 -> 1.2 s).

A hash maps to one stored term (``terms.hash`` is unique), and a term's content never
changes under its id: if every constant's hash gives the id it gave at compile time (and
those that had none still have none), every constant has the id the statement was compiled
with. That holds whatever happened in between, the database's tables dropped and made
again under the same URL included (ids then start again from one: a check of the set of
ids, or of the number of datatypes, let such a guess answer with ids swapped). A hash taken
by a different term (a collision, which the lookup would report) only makes the check
fail, every time: the query is then compiled the usual way.

Query 14 of the benchmark (an ASK) at ten million triples, the statement through
psycopg: alone 0.15 ms, in the pipeline with the lookup 0.25 ms, with its check 0.17 ms.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from rdflib.term import Node

from ..terms import encode

__all__ = ["guarded_sql", "is_empty"]


def guarded_sql(sql: str, nodes: Iterable[Node], ids: Mapping[Node, int], datatypes: Mapping[str, int]) -> str:
    """``sql`` (compiled with ``ids`` for the constants ``nodes`` and with ``datatypes``,
    where the negative ids are those the store holds no literal of) with its check."""
    hashes: set[int] = set()
    expected: dict[int, int] = {}  # hash -> the id it gave
    for node in nodes:
        try:
            term_hash = encode(node)[0]
        except TypeError:  # not a term the store could hold (a variable): looked up as nothing
            continue
        hashes.add(term_hash)
        if node in ids:
            expected[term_hash] = ids[node]
    stored = sorted((dt_id, iri) for iri, dt_id in datatypes.items() if dt_id > 0)
    # A digest, not the text: an IRI in the statement's text could hold a quote, or ``:name``
    # that SQLAlchemy's ``text()`` would take for a parameter.
    fingerprint = hashlib.sha256(",".join(f"{dt_id} {iri}" for dt_id, iri in stored).encode()).hexdigest()
    listed_types = "COALESCE(string_agg(id || ' ' || iri, ',' ORDER BY id), '')"
    checks = [f"(SELECT encode(sha256(convert_to({listed_types}, 'UTF8')), 'hex') FROM datatypes) = '{fingerprint}'"]
    if hashes:
        listed = ", ".join(str(h) for h in sorted(hashes))
        now = f"COALESCE((SELECT array_agg(ARRAY[hash, id] ORDER BY hash) FROM terms WHERE hash IN ({listed})), '{{}}')"
        pairs = ",".join(f"{{{h},{expected[h]}}}" for h in sorted(expected))
        checks.insert(0, f"{now} = '{{{pairs}}}'::bigint[]")
    return (
        f"WITH guard_(holds) AS MATERIALIZED (SELECT {' AND '.join(checks)})\n"
        f"SELECT statement_.* FROM (\n{sql}\n) AS statement_ WHERE (SELECT holds FROM guard_)"
    )


#: Batches of rows and what closes them unread (``evaluate._Sent``).
Sent = tuple[Iterator[list[Any]], Callable[[], None]]


def is_empty(sent: Sent) -> tuple[Sent, bool]:
    """``sent`` as it was, and whether it has no rows (its first batch is read: it came
    with the statement, bounded rows or a cursor's first ``FETCH``). Of a statement run
    by :func:`guarded_sql`, rows mean the check held; none, that it failed or held and
    the statement has no rows."""
    batches, close = sent
    first = next(batches, [])
    return ((_chained(first, batches) if first else iter(())), close), not first


def _chained(first: list[Any], rest: Iterator[list[Any]]) -> Iterator[list[Any]]:
    yield first
    yield from rest
