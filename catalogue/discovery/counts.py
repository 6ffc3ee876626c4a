"""Counting a search's facets: disjunctive counts (each facet under every filter but its
own), from the kept whole-catalogue counts, in SQL over the matching datasets, or in
Python from their tags when they are many (see :mod:`.query`)."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Final

from sqlalchemy import text
from sqlalchemy.engine import Connection

from .conditions import Condition, Sql, huge_arm, plan
from .summary import FACETS

#: Values listed per facet (selected values are always listed).
FACET_VALUES: Final = 100
#: Matching datasets beyond which SQLite's facet counts are made in Python from each
#: dataset's tags (one narrow row per dataset) instead of joining ``search_facets`` (about
#: twenty rows per dataset, sorted for GROUP BY).
PYTHON_FACETS: Final = 3_000


def python_counts(conn: Connection, table: str, flags: int,
                   groups: list[tuple[int, list[int], str]]) -> tuple[int, dict[str, dict[str, int]]]:
    """:func:`counting`'s total and groups, counted in Python over the base's rows."""
    names = ", ".join(f"b.m{n}" for n in range(flags))
    rows = conn.execute(text(f"SELECT d.tags{', ' + names if names else ''} FROM {table} b "
                             f"CROSS JOIN search_datasets d WHERE d.gid = b.gid"))
    plans = []
    for k, facets, _cond in groups:
        skip = k - 1 if k > 0 else None
        plans.append(([n for n in range(flags) if n != skip], {f"{i}:" for i in facets}))
    tallies: list[Counter[str]] = [Counter() for _ in plans]
    total = 0
    for row in rows:
        marks = row[1:]
        if all(marks):
            total += 1
        tags = None
        for (needed, prefixes), tally in zip(plans, tallies, strict=True):
            if all(marks[n] for n in needed):
                if tags is None:
                    tags = json.loads(row[0])
                tally.update(t for t in tags if t[:2] in prefixes)
    counts: dict[str, dict[str, int]] = {name: {} for name in FACETS}
    for tally in tallies:
        for tag, n in tally.items():
            counts[FACETS[int(tag[0])]][tag[2:]] = n
    return total, counts




def kept_counts(conn: Connection) -> dict[str, dict[str, int]]:
    counts: dict[str, dict[str, int]] = {name: {} for name in FACETS}
    for facet, value, n in conn.execute(text("SELECT facet, value, datasets FROM search_facet_counts")):
        counts[FACETS[int(facet)]][value] = int(n)
    return counts


def count_facets(conn: Connection, sql: Sql, base: list[Condition],
            facet_where: dict[str, Condition]) -> tuple[int, dict[str, dict[str, int]]]:
    """The total and the disjunctive facet counts, in one statement.

    The datasets matching the base conditions (text, box, dates, harvest time) are found
    once (a materialised common table expression, :func:`plan`), each with one flag per
    facet filter. The total counts those with every flag; each facet is counted over
    those with every flag but its own (disjunctive), the unfiltered ones together over
    the hits: facet values by the (dataset, facet) index on SQLite, by unnesting the
    row's ``facets`` array on PostgreSQL. The cost follows the matching datasets, not the
    catalogue.
    """
    flags = ", ".join(f"{cond.check} AS m{n}" for n, cond in enumerate(facet_where.values()))
    columns = "d.gid AS gid" + ("" if sql.sqlite else ", d.facets AS facets") + (f", {flags}" if flags else "")
    chosen = plan(base)
    clause = f" WHERE {chosen.where}" if chosen.where else ""
    huge = huge_arm(chosen, base)
    if huge is not None:
        clause += f" UNION ALL SELECT {columns} FROM {huge}"
    groups, everything = facet_groups(list(facet_where))
    statement = (f"WITH base AS MATERIALIZED (SELECT {columns} FROM {chosen.source}{clause}) "
                 f"{counting(sql, groups, everything)}")
    return read_counts(conn.execute(text(statement), sql.params))


def facet_groups(filtered: list[str]) -> tuple[list[tuple[int, list[int], str]], str]:
    """What to count over a base whose rows carry a flag ``m<n>`` per facet filter: group
    0 counts the facets without a filter under every flag, group ``n + 1`` the ``n``-th
    filtered facet under every flag but its own (disjunctive facets); and the condition
    of a hit (every flag)."""

    def having(skip: int | None = None) -> str:
        kept = [f"m{n}" for n in range(len(filtered)) if n != skip]
        return " AND ".join(kept) if kept else "1 = 1"

    unfiltered = [FACETS.index(name) for name in FACETS if name not in filtered]
    groups = [(0, unfiltered, having())] if unfiltered else []
    groups += [(n + 1, [FACETS.index(name)], having(n)) for n, name in enumerate(filtered)]
    return groups, having()


def counting(sql: Sql, groups: list[tuple[int, list[int], str]], everything: str) -> str:
    """The total (``k = -1``) and each group's facet counts over ``base``."""
    if sql.sqlite:
        total = f"SELECT -1, NULL, NULL, count(*) FROM base WHERE {everything}"
        if not groups:
            return total
        parts = " UNION ALL ".join(f"SELECT {k} AS k, gid FROM base WHERE {cond}" for k, _f, cond in groups)
        wanted = " OR ".join(f"(h.k = {k} AND f.facet IN ({', '.join(map(str, fs))}))" for k, fs, _c in groups)
        # CROSS JOIN: SQLite's way of saying "the matching datasets first", each probing
        # the (gid, facet) index (left to itself it may scan every row of those facets).
        return (f"{total} UNION ALL SELECT h.k, f.facet, f.value, count(*) FROM ({parts}) h "
                f"CROSS JOIN search_facets f WHERE f.gid = h.gid AND ({wanted}) GROUP BY h.k, f.facet, f.value")
    total = f"SELECT -1, NULL::integer, NULL::text, count(*) FROM base WHERE {everything}"
    if not groups:
        return total
    # Each group filters its own tags: one OR over every group's facets, tested on every
    # tag of every group, cost two thirds of the statement (1,400 matches, 40,000 tags).
    parts = " UNION ALL ".join(
        f"SELECT {k} AS k, tag FROM base, unnest(facets) AS tag WHERE {cond} AND "
        + (f"left(tag, 2) = '{fs[0]}:'" if len(fs) == 1 else
           f"left(tag, 2) IN ({', '.join(repr(f'{i}:') for i in fs)})")
        for k, fs, cond in groups)
    return (f"{total} UNION ALL SELECT x.k, CAST(left(x.tag, 1) AS integer), substr(x.tag, 3), count(*) "
            f"FROM ({parts}) x GROUP BY x.k, x.tag")


def read_counts(rows: Any) -> tuple[int, dict[str, dict[str, int]]]:
    counts: dict[str, dict[str, int]] = {name: {} for name in FACETS}
    found = 0
    for k, facet, value, n in rows:
        if int(k) < 0:
            found = int(n)
        else:
            counts[FACETS[int(facet)]][value] = int(n)
    return found, counts


def facet_only_counts(conn: Connection, sql: Sql,
                       facet_where: dict[str, Condition]) -> tuple[int, dict[str, dict[str, int]]]:
    """Counts of a search with facet filters only. Each facet's own counts are taken under
    the *other* filters alone, so each is its own statement, started from the least
    common value set (:func:`plan`); a facet with no other filter is counted over the
    whole catalogue, which the kept counts already are."""
    if not sql.sqlite:  # one table: PostgreSQL combines the GIN lookups itself
        return count_facets(conn, sql, [], facet_where)
    names = list(facet_where)
    kept = kept_counts(conn)
    counts: dict[str, dict[str, int]] = {name: {} for name in FACETS}
    total = 0
    groups: list[tuple[list[str], list[str]]] = [([n for n in FACETS if n not in facet_where], names)]
    groups += [([name], [n for n in names if n != name]) for name in names]
    for counted, filters in groups:
        if not counted:
            continue
        if not filters:
            for name in counted:
                counts[name] = kept[name]
            continue
        source, where = plan([facet_where[n] for n in filters])[:2]
        wanted = ", ".join(str(FACETS.index(n)) for n in counted)
        statement = (f"WITH base AS MATERIALIZED (SELECT d.gid AS gid FROM {source} WHERE {where}) "
                     f"SELECT 0, f.facet, f.value, count(*) FROM base h CROSS JOIN search_facets f "
                     f"WHERE f.gid = h.gid AND f.facet IN ({wanted}) GROUP BY f.facet, f.value")
        for _k, facet, value, n in conn.execute(text(statement), sql.params):
            counts[FACETS[int(facet)]][value] = int(n)
    source, where = plan([facet_where[n] for n in names])[:2]
    total = sql.count(f"SELECT count(*) FROM {source} WHERE {where}")
    return total, counts


def listed(counts: dict[str, dict[str, int]], selected: dict[str, list[str]]) -> dict[str, list[tuple[str, int]]]:
    """Each facet's values with a count, and the selected ones, by count then value, at
    most :data:`FACET_VALUES` (and the selected ones)."""
    out: dict[str, list[tuple[str, int]]] = {}
    for name in FACETS:
        chosen = set(selected[name])
        listed = [(v, c) for v, c in counts[name].items() if c]
        listed += [(v, 0) for v in chosen if not counts[name].get(v)]
        listed.sort(key=lambda vc: (-vc[1], vc[0]))
        if len(listed) > FACET_VALUES:
            keep = listed[:FACET_VALUES]
            keep += [vc for vc in listed[FACET_VALUES:] if vc[0] in chosen]
            listed = keep
        out[name] = listed
    return out

