"""GeoSPARQL relations (``geof:sfIntersects`` and the other Simple Features relations)
compiled to SQL that the spatial index (:mod:`catalogue.graph.spatial`) answers.

A relation between a variable and a constant geometry compiles to a membership test,
``?g's id IN <matching ids>``, where the matching ids are a *spatial lookup* resolved
just before the statement runs (:func:`resolve`): the index lists the geometries whose
boxes overlap the constant's, shapely tests those candidates exactly, and the ids that
pass become one bound parameter (a JSON array read by ``json_each`` on SQLite, a
``bigint[]`` on PostgreSQL).  The index is an R*Tree on SQLite and, on PostgreSQL,
PostGIS's GiST on a ``geometry`` envelope or a core GiST on ``box`` (whichever the
database has, :func:`.spatial.index_kind`); either way only the candidates come from
it: PostGIS's own relations are planar and would break at the antimeridian.  That keeps the answer exact on PostgreSQL too, where no
Python runs inside the server, and the database can drive the rest of the join from
those few ids.  Every relation implies that the two shapes intersect, so one candidate
search serves them all; ``sfDisjoint`` is the complement: every indexed geometry that
is not a candidate, plus the candidates shapely finds disjoint.
Candidates are tested with :func:`.geof.relate`'s reading of the antimeridian (one
meridian, not two lines), and a query box reaching ±180 is also looked up at the other
side of the seam (:func:`.spatial.seam_boxes`).

Errors: a relation is an error (SQL NULL) when the term is not a readable
``geo:wktLiteral``.  Inside a FILTER (and its ``&&`` conjuncts) an error and false both
drop the row, so there the plain membership test is written; elsewhere (under ``!``,
``||``, in BIND) a ``CASE`` tells false (an indexed geometry, which always has a row
with part number 0) from error.

Two variables (``sfIntersects(?a, ?b)``): SQLite calls :func:`.geof.relate_text` per row
through a registered function; PostgreSQL leaves the filter to rdflib (the ``geof:``
functions are registered with it, :mod:`.geof`).  Two constants are decided while
compiling.  ``geof:distance``, ``geof:envelope`` and ``geof:buffer`` return values and
are evaluated by rdflib.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from rdflib.plugins.sparql.parserutils import CompValue
from rdflib.term import Literal, Variable
from sqlalchemy.engine import Connection

from ..deadline import check_deadline
from ..spatial import (
    INDEX_NAMES,
    PARTS,
    candidate_sql,
    candidate_terms,
    geometry_boxes,
    index_kind,
    indexed_ids,
    seam_boxes,
)
from ..wkt import WKT_LITERAL, WktError, parse_wkt
from .geof import GEOF, RELATIONS, on_seam, relate
from .sql import Unsupported, Val

if TYPE_CHECKING:  # shapely loads with the first geometry tested, not with the compiler
    from shapely.geometry.base import BaseGeometry

__all__ = ["LookupReport", "SpatialLookup", "compile_call", "resolve"]

# The relation seen from the other side: r(a, b) == CONVERSE[r](b, a).
_CONVERSE: Final = {"sfWithin": "sfContains", "sfContains": "sfWithin"}
_ERROR: Final = object()


@dataclass(frozen=True)
class SpatialLookup:
    """The ids of the stored geometries ``g`` with ``relation(g, geometry)``, to be
    put into the bound parameter ``param`` before the statement runs."""

    param: str
    relation: str
    geometry: BaseGeometry


@dataclass(frozen=True)
class LookupReport:
    """What one lookup did, for ``catalogue query --explain``."""

    sql: str
    params: dict[str, Any]
    comment: str
    shown: str  # how the parameter is shown in the statement's parameter list


def compile_call(
    c: Any, value: Callable[[Any], Val], e: CompValue, *, positive: bool
) -> tuple[str, Any]:
    """SQL for a call of a ``geof:`` relation (``c`` is the compiler: its dialect,
    names, datatype ids and lookups); Unsupported for everything else."""
    iri = str(e.iri)
    name = iri[len(GEOF) :] if iri.startswith(GEOF) else None
    if name is None:
        raise Unsupported(f"function <{iri}>")
    if name not in RELATIONS:
        raise Unsupported(f"geof:{name} (a value, not a relation: rdflib evaluates it)")
    args = list(e.expr or [])
    if len(args) != 2:
        raise Unsupported(f"geof:{name} with {len(args)} arguments")
    a, b = (_constant(x) for x in args)
    if a is not None and b is not None:
        if a is _ERROR or b is _ERROR:
            return ("bool", "NULL")
        result = relate(name, a, b)  # type: ignore[arg-type]
        return ("bool", "NULL" if result is None else ("TRUE" if result else "FALSE"))
    if a is None and b is None:
        return _two_variables(c, value, name, args)
    if a is None:
        var, geometry = args[0], b
    else:
        var, geometry, name = args[1], a, _CONVERSE.get(name, name)
    if geometry is _ERROR:
        return ("bool", "NULL")
    v = value(var)
    if v.id is None:
        raise Unsupported(f"geof:{name} of a computed value")
    param = c.names.param(None)
    c.lookups.append(SpatialLookup(param, name, geometry))  # type: ignore[arg-type]
    if c.dialect.is_pg:
        member = f"({v.id} = ANY(CAST(:{param} AS BIGINT[])))"
    else:
        member = f"({v.id} IN (SELECT value FROM json_each(:{param})))"
    if positive:
        return ("bool", member)
    indexed = f"EXISTS (SELECT 1 FROM geo_index WHERE key = {v.id} * {PARTS})"
    return ("bool", f"(CASE WHEN {member} THEN TRUE WHEN {indexed} THEN FALSE END)")


def _constant(x: Any) -> BaseGeometry | object | None:
    """The geometry of a constant argument, ``_ERROR`` for an unusable constant, None
    for a variable."""
    if isinstance(x, Variable):
        return None
    if isinstance(x, Literal):
        if x.datatype is None or str(x.datatype) != WKT_LITERAL:
            return _ERROR
        try:
            return parse_wkt(str(x))
        except WktError:
            return _ERROR
    if isinstance(x, CompValue):
        raise Unsupported("geof: relation of a computed geometry")
    return _ERROR  # an IRI or blank node


def _two_variables(c: Any, value: Callable[[Any], Val], name: str, args: list[Any]) -> tuple[str, Any]:
    if c.dialect.is_pg:
        raise Unsupported(
            f"geof:{name} between two variables needs Python per row, which PostgreSQL does not run"
        )
    va, vb = value(args[0]), value(args[1])
    if va.id is None or vb.id is None:
        raise Unsupported(f"geof:{name} of a computed value")
    wkt = c.datatype_ids.get(WKT_LITERAL)
    if wkt is None:
        return ("bool", "NULL")  # no geometry stored: every row is an error
    c.need_function("geo_relate")
    relation = c.dialect.text_param(c.names.param(name))
    return (
        "bool",
        f"(CASE WHEN {va.dt} = {wkt} AND {vb.dt} = {wkt} "
        f"THEN geo_relate({relation}, {va.lex}, {vb.lex}) = 1 END)",
    )


# ------------------------------------------------------------------ resolution


def resolve(conn: Connection, lookups: list[SpatialLookup], params: dict[str, Any]) -> list[LookupReport]:
    """Fill in the parameters of ``lookups`` (index candidates, tested by shapely)."""
    reports = []
    sqlite = conn.dialect.name == "sqlite"
    for lookup in lookups:
        ids, candidates = _matching_ids(conn, lookup)
        params[lookup.param] = json.dumps(ids) if sqlite else ids
        boxes = seam_boxes(geometry_boxes(lookup.geometry))
        kind = index_kind(conn)
        reports.append(
            LookupReport(
                sql=candidate_sql(kind),
                params=dict(zip(("x0", "y0", "x1", "y1"), boxes[0], strict=True)),
                comment=(
                    f"spatial index used (geo_index, {INDEX_NAMES[kind]}) for geof:{lookup.relation}: "
                    f"{len(boxes)} query box(es), {candidates} candidate(s), "
                    f"{len(ids)} exact match(es) by shapely"
                ),
                shown=f"<{len(ids)} term ids from the spatial index>",
            )
        )
    return reports


def _matching_ids(conn: Connection, lookup: SpatialLookup) -> tuple[list[int], int]:
    import shapely
    from shapely import prepare
    from shapely.errors import GEOSException

    query = lookup.geometry
    prepare(query)
    # The stored geometry is the first argument; test with the prepared query first.
    converse = _CONVERSE.get(lookup.relation, lookup.relation)
    test = getattr(shapely, RELATIONS[converse])
    seam = on_seam(query)
    candidates = dict(candidate_terms(conn, seam_boxes(geometry_boxes(query))))
    hits = []
    for term_id, text in candidates.items():
        check_deadline()
        try:
            stored = parse_wkt(text)
            if seam and on_seam(stored):  # both reach ±180: glued on the globe
                if relate(converse, query, stored):
                    hits.append(term_id)
            elif test(query, stored):
                hits.append(term_id)
        except (WktError, GEOSException):  # unreadable, or GEOS cannot decide: an error
            continue
    if lookup.relation == "sfDisjoint":
        # Boxes cover their shapes: every geometry that is no candidate is disjoint.
        hits += [term_id for term_id in indexed_ids(conn) if term_id not in candidates]
    return sorted(hits), len(candidates)
