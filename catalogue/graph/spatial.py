"""The spatial index: the CRS84 envelope of every stored ``geo:wktLiteral`` term.

GeoSPARQL filters (:mod:`.sparql.geo`) ask which stored geometries relate to a query
geometry.  Testing every literal with shapely costs tens of microseconds each; the
index narrows the test to the literals whose envelope overlaps the query's, so a
bounding-box search over 100,000 footprints reads a handful of rows.

Table ``geo_index``, one row per *box* of a term, keyed ``term id * 16 + part``:

* SQLite: an R*Tree virtual table ``geo_index(key, minx, maxx, miny, maxy)`` (32-bit
  float bounds, which SQLite rounds outwards, so candidates are never lost);
* PostgreSQL with PostGIS: ``geo_index(key bigint primary key, env
  geometry(Polygon, 4326))`` with a GiST index on ``env``, queried with ``&&`` against
  ``ST_MakeEnvelope(..., 4326)``;
* PostgreSQL without PostGIS: ``geo_index(key bigint primary key, env box)`` with a
  GiST index on ``env`` (core PostgreSQL).

Which PostgreSQL path a database uses is decided once, by migration
``0005_spatial_postgis`` (PostGIS when the extension is available and may be created,
unless ``CATALOGUE_POSTGIS=off`` is set while it runs), and read back from the
catalog (the type of ``geo_index.env``) by :func:`index_kind`, cached per engine.  Only
the envelope's column type differs: PostGIS serves as an index, never as the
relations' semantics, which stay shapely's with the antimeridian rule of
:func:`.sparql.geof.relate` (PostGIS's planar relations break at the seam).

A geometry made of 2 to 16 parts (a footprint split at the antimeridian is a
two-polygon MULTIPOLYGON) gets one box per part: its single envelope would span the
whole globe and match every query.  Other geometries get one box.  An *empty*
geometry gets one box at :data:`EMPTY_BOX`, far outside lon/lat space, so that every
readable literal has at least one row: the index then also answers "which terms are
geometries", which ``sfDisjoint`` (the complement of ``sfIntersects``) and the
error-versus-false distinction need.  A literal that cannot be read has no row.

The key packs the term id so that one term's rows are a key range, which both
databases find through their primary key: deleting a term's rows (garbage collection,
:mod:`.collect`) never scans.  The index is written wherever terms are written
(:mod:`.load.ids` for the store's own writes, SPARQL Update included, and
:mod:`.load.writer` for bulk loads) and built for existing data by migration
``0003_spatial_index`` (rebuilt by ``0004_spatial_lon_lat``, when literals outside
lon/lat space stopped being readable, and moved to PostGIS by ``0005_spatial_postgis``).  Candidates are always tested exactly by shapely afterwards,
so the boxes only need to *cover* their geometry.
"""

from __future__ import annotations

import os
import weakref
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Final, Literal

from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import DBAPIError

from .wkt import WKT_LITERAL, WktError, parse_wkt

if TYPE_CHECKING:  # shapely loads with the first geometry indexed, not with the store
    from shapely.geometry.base import BaseGeometry

__all__ = [
    "EMPTY_BOX",
    "INDEX_NAMES",
    "PARTS",
    "POSTGIS_ENV",
    "POSTGIS_TABLES",
    "SPATIAL_TABLES",
    "Box",
    "candidate_sql",
    "candidate_terms",
    "create_index",
    "drop_index",
    "drop_orphans",
    "drop_terms",
    "fill_index",
    "forget_kind",
    "geometry_boxes",
    "include_name",
    "index_kind",
    "index_literals",
    "indexed_ids",
    "is_wkt",
    "postgis_wanted",
    "seam_boxes",
    "to_box",
    "to_postgis",
]

Box = tuple[float, float, float, float]  # minx, miny, maxx, maxy

#: Rows a term may have: keys are ``term id * PARTS + part``.
PARTS: Final = 16
#: The box of an empty geometry: outside every CRS84 shape, so never a candidate of one.
EMPTY_BOX: Final[Box] = (1e9, 1e9, 1e9, 1e9)
#: Tables the index consists of (SQLite's R*Tree keeps three shadow tables), which the
#: SQLAlchemy schema module does not describe (see tests/graph/test_database.py).
SPATIAL_TABLES: Final = frozenset({"geo_index", "geo_index_node", "geo_index_parent", "geo_index_rowid"})
#: Tables the PostGIS extension creates in the database's schema (not the catalogue's).
POSTGIS_TABLES: Final = frozenset({"spatial_ref_sys"})
#: The environment variable that keeps a PostgreSQL database on the core ``box`` path
#: (``off``, ``0``, ``false``, ``no``) when migration ``0005_spatial_postgis`` runs.
POSTGIS_ENV: Final = "CATALOGUE_POSTGIS"
#: What ``catalogue query --explain`` calls each kind of index.
INDEX_NAMES: Final = {"rtree": "R*Tree", "box": "box GiST", "postgis": "PostGIS GiST"}
IndexKind = Literal["rtree", "box", "postgis"]

_SQLITE_CREATE: Final = "CREATE VIRTUAL TABLE geo_index USING rtree(key, minx, maxx, miny, maxy)"
_PG_CREATE: Final = (
    "CREATE TABLE geo_index (key BIGINT PRIMARY KEY, env BOX NOT NULL)",
    "CREATE INDEX ix_geo_index_env ON geo_index USING gist (env)",
)
_SQLITE_INSERT: Final = "INSERT OR REPLACE INTO geo_index (key, minx, maxx, miny, maxy) VALUES (?, ?, ?, ?, ?)"
_POSTGIS_INSERT: Final = (
    "INSERT INTO geo_index (key, env) SELECT k, ST_MakeEnvelope(x0, y0, x1, y1, 4326) FROM "
    "unnest(%s::bigint[], %s::float8[], %s::float8[], %s::float8[], %s::float8[]) "
    "AS r(k, x0, y0, x1, y1) ON CONFLICT (key) DO UPDATE SET env = excluded.env"
)
_PG_INSERT: Final = (
    "INSERT INTO geo_index (key, env) SELECT k, box(point(x0, y0), point(x1, y1)) FROM "
    "unnest(%s::bigint[], %s::float8[], %s::float8[], %s::float8[], %s::float8[]) "
    "AS r(k, x0, y0, x1, y1) ON CONFLICT (key) DO UPDATE SET env = excluded.env"
)


def include_name(name: str | None, type_: str, _parents: object) -> bool:
    """Alembic's ``include_name`` hook: leave the index out of schema comparisons.  Its
    DDL differs by database (an R*Tree virtual table, a ``box`` column), which the
    SQLAlchemy schema module cannot describe; its own tests check it.  The same holds
    for the search index's free-text and box tables (:mod:`.search_schema`)."""
    from .search_schema import (  # the search index's are alike
        SEARCH_COLUMNS,
        SEARCH_INDEXES,
        SEARCH_TABLES,
    )

    if type_ == "column" and name in SEARCH_COLUMNS:
        return (_parents or {}).get("table_name") != "search_datasets"  # type: ignore[attr-defined]
    if type_ == "index" and name in SEARCH_INDEXES:
        return False
    return not (type_ == "table" and name in SPATIAL_TABLES | POSTGIS_TABLES | SEARCH_TABLES)


# Per engine: which kind of index its database has (read from the catalog once).
_KINDS: weakref.WeakKeyDictionary[Engine, IndexKind] = weakref.WeakKeyDictionary()


def index_kind(conn: Connection) -> IndexKind:
    """Which index ``conn``'s database has: ``"rtree"`` (SQLite), ``"postgis"`` (a
    PostGIS ``geometry`` envelope) or ``"box"`` (core PostgreSQL), from the type of
    ``geo_index.env`` in the catalog, cached per engine (:func:`forget_kind` after DDL)."""
    if conn.dialect.name == "sqlite":
        return "rtree"
    kind = _KINDS.get(conn.engine)
    if kind is None:
        type_name = conn.exec_driver_sql(
            "SELECT t.typname FROM pg_attribute a JOIN pg_type t ON t.oid = a.atttypid "
            "WHERE a.attrelid = to_regclass('geo_index') AND a.attname = 'env' AND NOT a.attisdropped"
        ).scalar()
        if type_name is None:  # no index yet (a migration is running): do not cache
            return "box"
        kind = "postgis" if type_name == "geometry" else "box"
        _KINDS[conn.engine] = kind
    return kind


def forget_kind(conn: Connection) -> None:
    """Drop the cached :func:`index_kind` of ``conn``'s engine (after changing the index)."""
    _KINDS.pop(conn.engine, None)


def postgis_wanted() -> bool:
    """Whether the operator allows PostGIS (``CATALOGUE_POSTGIS`` is not ``off``)."""
    return os.environ.get(POSTGIS_ENV, "").strip().lower() not in {"off", "0", "false", "no"}


def _create_postgis(conn: Connection) -> bool:
    """Create the PostGIS extension if it is available and this role may; a failure
    is rolled back to a savepoint, leaving the transaction usable."""
    available = conn.exec_driver_sql(
        "SELECT 1 FROM pg_available_extensions WHERE name = 'postgis'"
    ).scalar()
    if not available:
        return False
    savepoint = conn.begin_nested()
    try:
        conn.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS postgis")
        conn.exec_driver_sql("SELECT ST_MakeEnvelope(0, 0, 1, 1, 4326)")
    except DBAPIError:
        savepoint.rollback()
        return False
    savepoint.commit()
    return True


def to_postgis(conn: Connection) -> bool:
    """Turn a PostgreSQL ``box`` index into a PostGIS one (the envelopes converted in
    place, the GiST index rebuilt) when PostGIS is wanted, available and creatable;
    return whether the index is now PostGIS's.  Migration ``0005_spatial_postgis``."""
    if conn.dialect.name != "postgresql":
        return False
    forget_kind(conn)
    if index_kind(conn) == "postgis":
        return True
    if not postgis_wanted() or not _create_postgis(conn):
        return False
    conn.exec_driver_sql("DROP INDEX IF EXISTS ix_geo_index_env")
    conn.exec_driver_sql(
        "ALTER TABLE geo_index ALTER COLUMN env TYPE geometry(Polygon, 4326) USING "
        "ST_MakeEnvelope((env[1])[0], (env[1])[1], (env[0])[0], (env[0])[1], 4326)"
    )
    conn.exec_driver_sql("CREATE INDEX ix_geo_index_env ON geo_index USING gist (env)")
    forget_kind(conn)
    return True


def to_box(conn: Connection) -> None:
    """Turn a PostGIS index back into a core ``box`` one (the extension stays: other
    objects may use it).  Downgrading ``0005_spatial_postgis``."""
    if conn.dialect.name != "postgresql":
        return
    forget_kind(conn)
    if index_kind(conn) != "postgis":
        return
    conn.exec_driver_sql("DROP INDEX IF EXISTS ix_geo_index_env")
    conn.exec_driver_sql(
        "ALTER TABLE geo_index ALTER COLUMN env TYPE box USING "
        "box(point(ST_XMin(env), ST_YMin(env)), point(ST_XMax(env), ST_YMax(env)))"
    )
    conn.exec_driver_sql("CREATE INDEX ix_geo_index_env ON geo_index USING gist (env)")
    forget_kind(conn)


def create_index(conn: Connection) -> None:
    """Create the (empty) index tables on ``conn``'s database."""
    if conn.dialect.name == "sqlite":
        conn.exec_driver_sql(_SQLITE_CREATE)
    else:
        for statement in _PG_CREATE:
            conn.exec_driver_sql(statement)


def drop_index(conn: Connection) -> None:
    conn.exec_driver_sql("DROP TABLE IF EXISTS geo_index")
    forget_kind(conn)


def geometry_boxes(geometry: BaseGeometry) -> list[Box]:
    """The boxes indexed for ``geometry`` (see the module docstring)."""
    import shapely

    if geometry.is_empty:
        return [EMPTY_BOX]
    parts = shapely.get_parts(geometry) if shapely.get_num_geometries(geometry) > 1 else []
    if 1 < len(parts) <= PARTS:
        boxes = [tuple(part.bounds) for part in parts if not part.is_empty]
        if boxes:
            return boxes  # type: ignore[return-value]
    return [tuple(geometry.bounds)]  # type: ignore[list-item]


def seam_boxes(boxes: list[Box]) -> list[Box]:
    """``boxes`` and, for each that reaches longitude ±180, the same latitudes on the
    other side of the antimeridian (the same meridian on the globe), so that the index
    also finds the geometries touching the seam from the other side."""
    mirrored: list[Box] = []
    for x0, y0, x1, y1 in boxes:
        if x1 >= 180.0:
            mirrored.append((-180.0, y0, -180.0, y1))
        if x0 <= -180.0:
            mirrored.append((180.0, y0, 180.0, y1))
    return boxes + mirrored


def index_literals(conn: Connection, literals: Iterable[tuple[int, str]]) -> int:
    """Index ``(term id, lexical form)`` of new ``geo:wktLiteral`` terms; return how
    many boxes were written (unreadable literals get none)."""
    rows: list[tuple[int, float, float, float, float]] = []
    for term_id, value in literals:
        try:
            boxes = geometry_boxes(parse_wkt(value))
        except WktError:
            continue
        rows.extend((term_id * PARTS + i, *box) for i, box in enumerate(boxes))
    if not rows:
        return 0
    kind = index_kind(conn)
    if kind == "rtree":
        conn.exec_driver_sql(
            _SQLITE_INSERT, [(key, x0, x1, y0, y1) for key, x0, y0, x1, y1 in rows]
        )
    else:
        columns = list(zip(*rows, strict=True))
        insert = _POSTGIS_INSERT if kind == "postgis" else _PG_INSERT
        conn.exec_driver_sql(insert, tuple(list(c) for c in columns))
    return len(rows)


def fill_index(conn: Connection, batch: int = 2000) -> int:
    """Index every stored ``geo:wktLiteral`` term (migrations: the table is empty or
    being rebuilt), in id-ordered batches; return how many boxes were written."""
    from sqlalchemy import text

    dt_id = conn.execute(
        text("SELECT id FROM datatypes WHERE iri = :iri"), {"iri": WKT_LITERAL}
    ).scalar()
    if dt_id is None:
        return 0
    select = text(
        "SELECT id, value FROM terms WHERE datatype = :dt AND id > :last ORDER BY id LIMIT :n"
    )
    last, written = 0, 0
    while rows := conn.execute(select, {"dt": dt_id, "last": last, "n": batch}).all():
        written += index_literals(conn, [(int(term_id), value) for term_id, value in rows])
        last = int(rows[-1][0])
    return written


def drop_terms(conn: Connection, term_ids: Iterable[int]) -> None:
    """Remove the rows of deleted terms."""
    ids = list(term_ids)
    if not ids:
        return
    if conn.dialect.name == "sqlite":
        # An R*Tree finds rows by key equality only (a key range scans the tree).
        keys = [(t * PARTS + part,) for t in ids for part in range(PARTS)]
        conn.exec_driver_sql("DELETE FROM geo_index WHERE key = ?", keys)
    else:
        ranges = [(t * PARTS, t * PARTS + PARTS - 1) for t in ids]
        conn.exec_driver_sql("DELETE FROM geo_index WHERE key BETWEEN %s AND %s", ranges)


def drop_orphans(conn: Connection) -> None:
    """Remove the rows of every term that no longer exists (after a full collection)."""
    conn.exec_driver_sql(
        f"DELETE FROM geo_index WHERE NOT EXISTS (SELECT 1 FROM terms WHERE terms.id = geo_index.key / {PARTS})"
    )


def candidate_sql(kind: IndexKind) -> str:
    """The statement listing the terms with a box overlapping ``:x0 :y0 :x1 :y1``
    (bound parameters, SQLAlchemy ``text`` style), each once, on an index of ``kind``
    (:func:`index_kind`)."""
    if kind == "rtree":
        where = "maxx >= :x0 AND minx <= :x1 AND maxy >= :y0 AND miny <= :y1"
    elif kind == "postgis":
        where = "env && ST_MakeEnvelope(:x0, :y0, :x1, :y1, 4326)"
    else:
        where = "env && box(point(:x0, :y0), point(:x1, :y1))"
    return f"SELECT DISTINCT key / {PARTS} FROM geo_index WHERE {where}"


def candidate_terms(conn: Connection, boxes: Iterable[Box]) -> Iterator[tuple[int, str]]:
    """``(id, lexical form)`` of the stored geometries whose boxes overlap any of
    ``boxes`` (the index's answer; the caller tests them exactly)."""
    from sqlalchemy import text

    ids: set[int] = set()
    statement = text(candidate_sql(index_kind(conn)))
    for x0, y0, x1, y1 in boxes:
        ids.update(conn.execute(statement, {"x0": x0, "y0": y0, "x1": x1, "y1": y1}).scalars())
    yield from _values(conn, ids)


def indexed_ids(conn: Connection) -> set[int]:
    """The ids of every readable stored geometry (a full index scan)."""
    return set(conn.exec_driver_sql(f"SELECT DISTINCT key / {PARTS} FROM geo_index").scalars())


def _values(conn: Connection, ids: set[int]) -> Iterator[tuple[int, str]]:
    from sqlalchemy import bindparam, text

    statement = text("SELECT id, value FROM terms WHERE id IN :ids").bindparams(
        bindparam("ids", expanding=True)
    )
    ordered = sorted(ids)
    for start in range(0, len(ordered), 900):
        chunk = ordered[start : start + 900]
        for term_id, value in conn.execute(statement, {"ids": chunk}):
            yield int(term_id), value


def is_wkt(datatype: str | None) -> bool:
    """Whether a term of this datatype IRI is indexed."""
    return datatype == WKT_LITERAL
