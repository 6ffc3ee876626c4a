"""GeoSPARQL filter functions on the SQL store, against shapely, on SQLite and PostgreSQL.

The stored geometries are a fixed random set (boxes, polygons, points, and footprints
split at the antimeridian, on a coarse grid so that shapes often share edges and
corners: that is where touches, overlaps and equals differ); hypothesis draws the query
geometries.  Every relation is checked three ways: compiled to SQL (the spatial index
plus shapely), evaluated by rdflib (the compiler switched off) and, as the reference,
shapely on the same geometries.

The database fixtures run every test on three indexes: SQLite's R*Tree, PostgreSQL
with PostGIS (a GiST on a ``geometry`` envelope; skipped, saying so, where the server
has no PostGIS) and PostgreSQL's core ``box`` GiST (``CATALOGUE_POSTGIS=off`` while
that database's migrations run: the choice is then stored in its catalog).
"""

from __future__ import annotations

import contextlib
import os
import random
from collections.abc import Iterator

import numpy as np
import pytest
import shapely
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rdflib import Dataset, Literal, Namespace, URIRef
from shapely.geometry import MultiPolygon, Point, Polygon, box
from shapely.geometry.base import BaseGeometry
from sqlalchemy import create_engine, text

from catalogue.graph.database import downgrade, ensure_schema, make_engine, upgrade
from catalogue.graph.sparql.geof import RELATIONS
from catalogue.graph.spatial import INDEX_NAMES, POSTGIS_ENV, index_kind
from catalogue.graph.store import SQLStore
from catalogue.graph.wkt import WKT_LITERAL
from tests.support.postgres import temporary_postgres_database

EX = Namespace("http://example.org/")
WKT = URIRef(WKT_LITERAL)
P = (
    "PREFIX geo: <http://www.opengis.net/ont/geosparql#>\n"
    "PREFIX geof: <http://www.opengis.net/def/function/geosparql/>\n"
    "PREFIX uom: <http://www.opengis.net/def/uom/OGC/1.0/>\n"
    "PREFIX ex: <http://example.org/>\n"
)


def _grid(rng: random.Random, low: int, high: int) -> float:
    return float(rng.randrange(low, high + 1, 5))


def _box(rng: random.Random) -> BaseGeometry:
    x0, y0 = _grid(rng, -60, 50), _grid(rng, -60, 50)
    return box(x0, y0, x0 + _grid(rng, 5, 40), y0 + _grid(rng, 5, 40))


def _shape(rng: random.Random) -> BaseGeometry:
    kind = rng.randrange(4)
    if kind == 0:
        return _box(rng)
    if kind == 1:
        points = [(_grid(rng, -60, 60), _grid(rng, -60, 60)) for _ in range(4)]
        hull = shapely.MultiPoint(points).convex_hull
        return hull if isinstance(hull, Polygon) else _box(rng)
    if kind == 2:
        return Point(_grid(rng, -60, 60), _grid(rng, -60, 60))
    # A footprint across the antimeridian, split at ±180 as the catalogue writes it.
    y0 = _grid(rng, -60, 40)
    west, east = _grid(rng, 150, 175), _grid(rng, -175, -150)
    return MultiPolygon([box(west, y0, 180, y0 + 20), box(-180, y0, east, y0 + 20)])


RNG = random.Random(16)
STORED: dict[URIRef, BaseGeometry] = {EX[f"d{i}"]: _shape(RNG) for i in range(60)}
STORED[EX.empty] = shapely.from_wkt("POLYGON EMPTY")


def _literal(geometry: BaseGeometry) -> Literal:
    return Literal(geometry.wkt, datatype=WKT)


def _fill(ds: Dataset) -> None:
    graph = ds.graph(EX.g)
    for node, geometry in STORED.items():
        graph.add((node, EX.bbox, _literal(geometry)))
    graph.add((EX.bad, EX.bbox, Literal("POLYGON((0 0, 1 1", datatype=WKT)))
    graph.add((EX.text, EX.bbox, Literal("POINT(0 0)")))  # not a wktLiteral


# ------------------------------------------------------------------ databases
# The index each backend parameter must end up with (see the module docstring).
KINDS = {"sqlite": "rtree", "postgis": "postgis", "pg-box": "box"}
BACKENDS = [
    "sqlite",
    pytest.param("postgis", marks=pytest.mark.postgres),
    pytest.param("pg-box", marks=pytest.mark.postgres),
]


def _postgis_available(url: str) -> bool:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return conn.execute(
                text("SELECT 1 FROM pg_available_extensions WHERE name = 'postgis'")
            ).scalar() is not None
    finally:
        engine.dispose()


@contextlib.contextmanager
def _postgis_setting(backend: str) -> Iterator[None]:
    """``CATALOGUE_POSTGIS`` as ``backend`` wants it, while its migrations run."""
    with pytest.MonkeyPatch.context() as mp:
        if backend == "pg-box":
            mp.setenv(POSTGIS_ENV, "off")
        else:
            mp.delenv(POSTGIS_ENV, raising=False)
        yield


@contextlib.contextmanager
def _postgres(backend: str, *, template: bool = True) -> Iterator[str]:
    """A database for ``backend``; ``template=False``: without PostGIS installed yet."""
    with temporary_postgres_database(template=template) as url:
        if backend == "postgis" and not _postgis_available(url):
            pytest.skip("PostGIS is not installed on this PostgreSQL server "
                        "(no postgis in pg_available_extensions): the PostGIS index is untested")
        yield url


def _schema(url: str, backend: str) -> None:
    """Create ``url``'s schema now, with ``backend``'s setting, and check the index."""
    engine = make_engine(url)
    try:
        with _postgis_setting(backend):
            ensure_schema(engine)
        with engine.connect() as conn:
            assert index_kind(conn) == KINDS[backend]
    finally:
        engine.dispose()


@pytest.fixture(scope="module", params=BACKENDS)
def module_db_url(request, tmp_path_factory) -> Iterator[str]:
    """A database shared by the module's tests, on each of the three indexes."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path_factory.mktemp('db') / 'catalogue.db'}"
        return
    with _postgres(request.param) as url:
        _schema(url, request.param)
        yield url


@pytest.fixture(params=BACKENDS)
def db_url(request, tmp_path) -> Iterator[str]:
    """A fresh, empty database (no schema) on each of the three indexes; the test runs
    with ``CATALOGUE_POSTGIS`` set for its backend, so that the migrations it runs (or
    its store runs) choose that index."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'catalogue.db'}"
        return
    with _postgres(request.param) as url, _postgis_setting(request.param):
        yield url


def _backend(request) -> str:
    params = request.node.callspec.params
    return params.get("db_url") or params["module_db_url"]


@pytest.fixture(scope="module")
def geo_ds(module_db_url: str) -> Iterator[Dataset]:
    store = SQLStore(module_db_url)
    ds = Dataset(store=store, default_union=True)
    _fill(ds)
    store.commit()
    yield ds
    store.close()


def _select(ds: Dataset, query: str, *, compiled: bool = True) -> tuple[set[str], list[str]]:
    store = ds.store
    store.sql_log = log = []
    store.compile_sparql = compiled
    try:
        found = {str(row[0]) for row in ds.query(P + query)}
    finally:
        store.sql_log = None
        store.compile_sparql = True
    return found, [entry.render() for entry in log]


def _on_globe(geometry: BaseGeometry) -> BaseGeometry:
    """The geometry cut at meridian 100 (which no test geometry reaches) instead of at
    ±180: longitudes below 100 move by +360 and the pieces are unioned, so the halves
    of a split footprint are glued along the antimeridian as on the globe.  Relations
    of these are the reference (an isometry of the globe's lon/lat cylinder minus
    meridian 100 onto a strip of the plane)."""
    east = shapely.intersection(geometry, box(100, -90, 460, 90))
    west = shapely.intersection(geometry, box(-540, -90, 100, 90))
    return shapely.union(east, shapely.transform(west, lambda xy: xy + np.array([360, 0])))


def _expected(relation: str, query: BaseGeometry, *, reverse: bool = False) -> set[str]:
    test = getattr(shapely, RELATIONS[relation])
    q = _on_globe(query)
    return {
        str(node)
        for node, geometry in STORED.items()
        if (test(q, _on_globe(geometry)) if reverse else test(_on_globe(geometry), q))
    }


queries = st.builds(lambda seed: _shape(random.Random(seed)), st.integers(0, 10**6))
EXAMPLES = settings(
    max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)


@pytest.mark.parametrize("relation", sorted(RELATIONS))
@EXAMPLES
@given(query=queries)
def test_relation_with_a_constant_matches_shapely(geo_ds: Dataset, relation: str, query: BaseGeometry) -> None:
    constant = f'"{query.wkt}"^^geo:wktLiteral'
    sparql = f"SELECT ?d WHERE {{ ?d ex:bbox ?g FILTER(geof:{relation}(?g, {constant})) }}"
    found, log = _select(geo_ds, sparql)
    assert found == _expected(relation, query)
    name = INDEX_NAMES[index_kind(geo_ds.store.connection)]
    assert any(f"spatial index used (geo_index, {name})" in line for line in log), log
    assert not any("evaluated by rdflib" in line for line in log), log
    # The constant first: the converse relation.
    flipped = f"SELECT ?d WHERE {{ ?d ex:bbox ?g FILTER(geof:{relation}({constant}, ?g)) }}"
    assert _select(geo_ds, flipped)[0] == _expected(relation, query, reverse=True)
    # rdflib's evaluator, with the functions the store registers, agrees.
    assert _select(geo_ds, sparql, compiled=False)[0] == found


@EXAMPLES
@given(query=queries)
def test_negated_relation_is_an_error_for_non_geometries(geo_ds: Dataset, query: BaseGeometry) -> None:
    sparql = (
        "SELECT ?d WHERE { ?d ex:bbox ?g "
        f'FILTER(!geof:sfIntersects(?g, "{query.wkt}"^^geo:wktLiteral)) }}'
    )
    found, _ = _select(geo_ds, sparql)
    assert found == {str(n) for n, g in STORED.items() if not g.intersects(query)}
    assert str(EX.bad) not in found and str(EX.text) not in found
    assert _select(geo_ds, sparql, compiled=False)[0] == found


@pytest.mark.parametrize("relation", ["sfIntersects", "sfWithin", "sfTouches"])
def test_relation_between_two_variables(geo_ds: Dataset, relation: str) -> None:
    sparql = f"SELECT ?a ?b WHERE {{ ?a ex:bbox ?g . ?b ex:bbox ?h FILTER(geof:{relation}(?g, ?h)) }}"
    store = geo_ds.store
    store.sql_log = log = []
    try:
        found = {(str(a), str(b)) for a, b in geo_ds.query(P + sparql)}
    finally:
        store.sql_log = None
    test = getattr(shapely, RELATIONS[relation])
    assert found == {
        (str(a), str(b))
        for a, ga in STORED.items()
        for b, gb in STORED.items()
        if test(_on_globe(ga), _on_globe(gb))
    }
    notes = [entry.render() for entry in log if entry.sql is None]
    if store.dialect_name == "postgresql":
        assert any("between two variables" in note for note in notes), notes
    else:
        assert notes == []  # SQLite: compiled, shapely called per row


@EXAMPLES
@given(a=queries, b=queries)
def test_value_functions_match_shapely(geo_ds: Dataset, a: BaseGeometry, b: BaseGeometry) -> None:
    la, lb = (f'"{g.wkt}"^^geo:wktLiteral' for g in (a, b))
    row = next(
        iter(
            geo_ds.query(
                P + f"SELECT (geof:distance({la}, {lb}, uom:degree) AS ?d) "
                f"(geof:envelope({la}) AS ?e) (geof:buffer({la}, 2.5, uom:degree) AS ?b) "
                f"(geof:distance({la}, {lb}, uom:metre) AS ?m) WHERE {{}}"
            )
        )
    )
    assert float(row[0]) == pytest.approx(a.distance(b))
    assert shapely.from_wkt(str(row[1])).equals(a.envelope)
    assert row[1].datatype == WKT
    if a.buffer(2.5).bounds[1] < -90 or a.buffer(2.5).bounds[3] > 90:
        assert row[2] is None  # past a pole: no lon/lat geometry, an error
        return
    buffered = shapely.from_wkt(str(row[2]))
    if a.buffer(2.5).bounds[0] >= -180 and a.buffer(2.5).bounds[2] <= 180:
        assert buffered.equals_exact(a.buffer(2.5), 1e-9)
    else:  # split at the antimeridian, as footprints are
        assert buffered.is_valid and buffered.bounds[0] >= -180 and buffered.bounds[2] <= 180
        # The buffer of the halves glued on the globe (up to the unions' rounding).
        assert _on_globe(buffered).symmetric_difference(_on_globe(a.buffer(2.5))).area < 1e-9
    if isinstance(a, Point) and isinstance(b, Point):
        from pyproj import Geod

        assert float(row[3]) == pytest.approx(Geod(ellps="WGS84").inv(a.x, a.y, b.x, b.y)[2])
    elif a.intersects(b):
        assert float(row[3]) == 0.0
    else:
        assert float(row[3]) > 0.0


def test_metre_buffer_is_true_metres() -> None:
    from pyproj import Geod

    ds = Dataset()
    SQLStore("sqlite://")  # opening a store installs the geof: functions
    (row,) = ds.query(
        P + 'SELECT (geof:buffer("POINT(10 60)"^^geo:wktLiteral, 1000, uom:metre) AS ?b) WHERE {}'
    )
    ring = shapely.from_wkt(str(row[0])).exterior.coords
    geod = Geod(ellps="WGS84")
    assert all(abs(geod.inv(10, 60, x, y)[2] - 1000) < 1 for x, y in ring)


SPLIT = "MULTIPOLYGON(((170 0, 180 0, 180 30, 170 30, 170 0)), ((-180 0, -170 0, -170 30, -180 30, -180 0)))"
WORLD = "POLYGON((-180 -90, 180 -90, 180 90, -180 90, -180 -90))"


def _one_answer(ds: Dataset, sparql: str) -> set[str]:
    """The answer, compiled and by rdflib (which must agree)."""
    found = _select(ds, sparql)[0]
    assert _select(ds, sparql, compiled=False)[0] == found, sparql
    return found


def test_the_antimeridian_is_one_meridian(sql_store: SQLStore) -> None:
    ds = Dataset(store=sql_store, default_union=True)
    g = ds.graph(EX.g)
    g.add((EX["split"], EX.bbox, Literal(SPLIT, datatype=WKT)))
    g.add((EX.world, EX.bbox, Literal(WORLD, datatype=WKT)))
    g.add((EX.east, EX.bbox, Literal("POINT(180 15)", datatype=WKT)))
    g.add((EX.west, EX.bbox, Literal("POINT(-180 15)", datatype=WKT)))
    g.add((EX.west_box, EX.bbox, Literal("POLYGON((-180 40, -170 40, -170 50, -180 50, -180 40))", datatype=WKT)))
    sql_store.commit()
    every = {str(EX[n]) for n in ("split", "world", "east", "west", "west_box")}

    def q(filter_: str) -> set[str]:
        return _one_answer(ds, f"SELECT ?d WHERE {{ ?d ex:bbox ?g FILTER({filter_}) }}")

    for point in ("POINT(180 15)", "POINT(-180 15)"):
        lit = f'"{point}"^^geo:wktLiteral'
        # Both points are this point (the seam is one meridian), as is the split box's.
        on_it = {str(EX["split"]), str(EX.world), str(EX.east), str(EX.west)}
        assert q(f"geof:sfContains(?g, {lit})") == on_it
        assert q(f"geof:sfWithin({lit}, ?g)") == on_it
        assert q(f"geof:sfEquals(?g, {lit})") == {str(EX.east), str(EX.west)}
        assert q(f"geof:sfDisjoint(?g, {lit})") == {str(EX.west_box)}
        assert q(f"!geof:sfIntersects(?g, {lit})") == {str(EX.west_box)}
    # The seam is no boundary of the split box or of the world.
    assert q(f'geof:sfWithin(?g, "{SPLIT}"^^geo:wktLiteral)') == {str(EX["split"]), str(EX.east), str(EX.west)}
    assert q(f'geof:sfTouches(?g, "{SPLIT}"^^geo:wktLiteral)') == set()
    assert q(f'geof:sfContains("{WORLD}"^^geo:wktLiteral, ?g)') == every
    # Touching across the seam: a box east of the antimeridian meets west_box's edge.
    east_box = '"POLYGON((170 45, 180 45, 180 60, 170 60, 170 45))"^^geo:wktLiteral'
    assert q(f"geof:sfTouches(?g, {east_box})") == {str(EX.west_box)}
    # Two variables (SQLite: compiled, per row; PostgreSQL: rdflib) and two constants.
    pairs = {
        (str(a), str(b))
        for a, b in ds.query(P + "SELECT ?a ?b WHERE { ?a ex:bbox ?g . ?b ex:bbox ?h "
                             "FILTER(geof:sfContains(?g, ?h) && !sameTerm(?a, ?b)) }")
    }
    assert pairs == {
        (str(EX["split"]), str(EX.east)), (str(EX["split"]), str(EX.west)),
        (str(EX.world), str(EX["split"])), (str(EX.world), str(EX.east)),
        (str(EX.world), str(EX.west)), (str(EX.world), str(EX.west_box)),
        (str(EX.east), str(EX.west)), (str(EX.west), str(EX.east)),
    }
    (row,) = ds.query(P + f'ASK {{ FILTER(geof:sfContains("{SPLIT}"^^geo:wktLiteral, "POINT(180 15)"^^geo:wktLiteral)) }}')
    assert row is True


@pytest.mark.parametrize(
    "wkt",
    [
        "<http://www.opengis.net/def/crs/EPSG/0/4326> POINT(95 10)",  # latitude 95
        "POINT(181 0)",
        "<http://www.opengis.net/def/crs/OGC/1.3/CRS84> POINT(0 -90.5)",
        "POLYGON((0 0, 1e300 0, 1 1, 0 0))",
        "POINT(nan 0)",
        "POINT(inf 0)",
    ],
)
def test_coordinates_outside_lon_lat_are_errors(sql_store: SQLStore, wkt: str) -> None:
    ds = Dataset(store=sql_store, default_union=True)
    ds.graph(EX.g).add((EX.bad, EX.bbox, Literal(wkt, datatype=WKT)))
    ds.graph(EX.g).add((EX.ok, EX.bbox, Literal("POINT(1 1)", datatype=WKT)))
    sql_store.commit()
    assert _indexed(sql_store) == {_term_id(sql_store, "POINT(1 1)")}
    world = f'"{WORLD}"^^geo:wktLiteral'
    lit = f'"{wkt}"^^geo:wktLiteral'
    for relation in ("sfIntersects", "sfWithin", "sfDisjoint"):
        assert _one_answer(ds, f"SELECT ?d WHERE {{ ?d ex:bbox ?g FILTER(geof:{relation}(?g, {world})) }}") == (
            set() if relation == "sfDisjoint" else {str(EX.ok)}
        )
        # The bad literal as the constant: an error for every row, negated or not.
        for filter_ in (f"geof:{relation}(?g, {lit})", f"!geof:{relation}(?g, {lit})"):
            assert _one_answer(ds, f"SELECT ?d WHERE {{ ?d ex:bbox ?g FILTER({filter_}) }}") == set()
    assert not ds.query(P + f"ASK {{ FILTER(geof:sfDisjoint({lit}, {world}) || true && !geof:sfIntersects({lit}, {world})) }}").askAnswer


@pytest.mark.parametrize(
    ("call", "ok"),
    [
        ('geof:buffer("POINT(0 0)"^^geo:wktLiteral, 1e308, uom:metre)', False),
        ('geof:buffer("POINT(0 0)"^^geo:wktLiteral, 3e7, uom:metre)', False),
        ('geof:buffer("POINT(0 0)"^^geo:wktLiteral, "INF"^^xsd:double, uom:degree)', False),
        ('geof:buffer("POINT(0 89)"^^geo:wktLiteral, 2, uom:degree)', False),  # past the pole
        ('geof:buffer("POINT(179.9 0)"^^geo:wktLiteral, 50000, uom:metre)', True),
        ('geof:buffer("POINT(-179 1)"^^geo:wktLiteral, 3, uom:degree)', True),
    ],
)
def test_buffer_is_a_valid_lon_lat_geometry_or_an_error(call: str, ok: bool) -> None:
    ds = Dataset()
    SQLStore("sqlite://")  # opening a store installs the geof: functions
    query = P + f"PREFIX xsd: <http://www.w3.org/2001/XMLSchema#> SELECT (({call}) AS ?b) WHERE {{}}"
    rows = list(ds.query(query))
    if not ok:  # an error: rdflib leaves ?b unbound or drops the row
        assert all(row[0] is None for row in rows)
        return
    (row,) = rows
    result = shapely.from_wkt(str(row[0]))
    assert result.is_valid and result.geom_type == "MultiPolygon"  # split at ±180
    assert (result.bounds[0], result.bounds[2]) == (-180, 180)
    (row,) = ds.query(P + f'ASK {{ FILTER(geof:sfContains({call}, "POINT(180 0)"^^geo:wktLiteral)) }}')
    assert row is True


def test_epsg_4326_is_latitude_first(sql_store: SQLStore) -> None:
    ds = Dataset(store=sql_store, default_union=True)
    g = ds.graph(EX.g)
    g.add((EX.a, EX.bbox, Literal("<http://www.opengis.net/def/crs/EPSG/0/4326> POINT(50 10)", datatype=WKT)))
    g.add((EX.b, EX.bbox, Literal("POINT(50 10)", datatype=WKT)))
    g.add((EX.c, EX.bbox, Literal("<http://www.opengis.net/def/crs/EPSG/0/3857> POINT(1113194.9 6446275.8)", datatype=WKT)))
    sql_store.commit()
    around = '"POLYGON((9 49, 11 49, 11 51, 9 51, 9 49))"^^geo:wktLiteral'
    query = f"SELECT ?d WHERE {{ ?d ex:bbox ?g FILTER(geof:sfWithin(?g, {around})) }}"
    assert _select(ds, query)[0] == {str(EX.a), str(EX.c)}
    assert _select(ds, query, compiled=False)[0] == {str(EX.a), str(EX.c)}
    lat_lon = '"<http://www.opengis.net/def/crs/EPSG/0/4326> POINT(10 50)"^^geo:wktLiteral'
    query = f"SELECT ?d WHERE {{ ?d ex:bbox ?g FILTER(geof:sfIntersects(?g, {lat_lon})) }}"
    assert _select(ds, query)[0] == {str(EX.b)}


@pytest.mark.parametrize(
    "constant",
    ['"POLYGON((0 0, 1"^^geo:wktLiteral', '"POINT(0 0)"', "ex:x",
     '"<urn:no-such-crs> POINT(0 0)"^^geo:wktLiteral'],
)
def test_invalid_constants_are_errors_not_crashes(geo_ds: Dataset, constant: str) -> None:
    for sparql in (
        f"SELECT ?d WHERE {{ ?d ex:bbox ?g FILTER(geof:sfIntersects(?g, {constant})) }}",
        f"SELECT ?d WHERE {{ ?d ex:bbox ?g FILTER(!geof:sfIntersects(?g, {constant})) }}",
        f"SELECT ?d WHERE {{ ?d ex:bbox ?g FILTER(geof:distance(?g, {constant}, uom:metre) > 0) }}",
    ):
        assert _select(geo_ds, sparql)[0] == set()
        assert _select(geo_ds, sparql, compiled=False)[0] == set()


def test_cli_explain_says_the_spatial_index_was_used(tmp_path) -> None:
    from click.testing import CliRunner

    from catalogue.cli import main

    db = tmp_path / "c.db"
    store = SQLStore(f"sqlite:///{db}")
    _fill(Dataset(store=store, default_union=True))
    store.commit()
    store.close()
    query = (
        "SELECT ?d WHERE { ?d <http://example.org/bbox> ?g "
        'FILTER(geof:sfIntersects(?g, "POLYGON((0 0, 20 0, 20 20, 0 20, 0 0))"^^geo:wktLiteral)) }'
    )
    result = CliRunner().invoke(main, ["query", "--db", str(db), "--explain", "--format", "tsv", query])
    assert result.exit_code == 0, result.output
    assert "spatial index used (geo_index, R*Tree) for geof:sfIntersects" in result.stderr
    assert {line.strip("<>") for line in result.stdout.split()[1:]} == _expected(
        "sfIntersects", box(0, 0, 20, 20)
    )


# ------------------------------------------------------------------ index upkeep


def _indexed(store: SQLStore) -> set[int]:
    rows = store.connection.execute(text("SELECT key FROM geo_index")).scalars()
    return {key // 16 for key in rows}


def _term_id(store: SQLStore, value: str) -> int | None:
    return store.connection.execute(
        text("SELECT id FROM terms WHERE value = :v"), {"v": value}
    ).scalar()


def test_index_follows_add_remove_update_load_and_gc(sql_store: SQLStore, tmp_path) -> None:
    from catalogue.graph.load.bulk import load_file

    ds = Dataset(store=sql_store, default_union=True)
    square = "POLYGON((0 0, 1 0, 1 1, 0 1, 0 0))"
    split = "MULTIPOLYGON(((170 0, 180 0, 180 5, 170 5, 170 0)), ((-180 0, -175 0, -175 5, -180 5, -180 0)))"
    ds.graph(EX.g).add((EX.a, EX.bbox, Literal(square, datatype=WKT)))
    ds.graph(EX.g).add((EX.b, EX.bbox, Literal(split, datatype=WKT)))
    ds.graph(EX.g).add((EX.c, EX.bbox, Literal("nonsense", datatype=WKT)))
    sql_store.commit()
    assert _indexed(sql_store) == {_term_id(sql_store, square), _term_id(sql_store, split)}
    keys = sql_store.connection.execute(text("SELECT count(*) FROM geo_index")).scalar()
    assert keys == 3  # one box per side of the antimeridian
    ds.update(
        'PREFIX geo: <http://www.opengis.net/ont/geosparql#> INSERT DATA { GRAPH <http://example.org/g> '
        '{ <http://example.org/u> <http://example.org/bbox> "POINT(3 3)"^^geo:wktLiteral } }'
    )
    sql_store.commit()
    assert _term_id(sql_store, "POINT(3 3)") in _indexed(sql_store)
    path = tmp_path / "more.nt"
    path.write_text(f'<{EX.l}> <{EX.bbox}> "POINT(4 4)"^^<{WKT_LITERAL}> <{EX.h}> .\n')
    load_file(sql_store, path, format="nquads")
    point_id = _term_id(sql_store, "POINT(4 4)")
    assert point_id in _indexed(sql_store)
    found, _ = _select(ds, 'SELECT ?d WHERE { ?d ex:bbox ?g FILTER(geof:sfIntersects(?g, "POINT(4 4)"^^geo:wktLiteral)) }')
    assert found == {str(EX.l)}
    # Removing a graph collects its terms, and their index rows with them.
    sql_store.remove_graph(ds.graph(EX.h))
    sql_store.commit()
    assert point_id not in _indexed(sql_store)
    # A removed triple leaves its term until the full collection.
    square_id = _term_id(sql_store, square)
    ds.graph(EX.g).remove((EX.a, EX.bbox, None))
    sql_store.commit()
    assert square_id in _indexed(sql_store)
    sql_store.gc()
    sql_store.commit()
    assert square_id not in _indexed(sql_store)
    assert _indexed(sql_store) == {_term_id(sql_store, split), _term_id(sql_store, "POINT(3 3)")}


def test_migration_indexes_stored_literals(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        upgrade(engine, "0002_sequential_terms")
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO datatypes (id, iri) VALUES (1, :iri)"), {"iri": WKT_LITERAL})
            for term_id, value in [(1, "POINT(1 2)"), (2, "broken"), (3, "LINESTRING(0 0, 5 5)")]:
                conn.execute(
                    text("INSERT INTO terms (id, hash, kind, value, datatype) VALUES (:i, :i, 3, :v, 1)"),
                    {"i": term_id, "v": value},
                )
            conn.execute(text("INSERT INTO terms (id, hash, kind, value) VALUES (4, 4, 3, 'POINT(9 9)')"))
        upgrade(engine)
        with engine.connect() as conn:
            rows = conn.execute(text("SELECT key FROM geo_index ORDER BY key")).scalars().all()
        assert rows == [16, 48]
        downgrade(engine, "0002_sequential_terms")
        with engine.connect() as conn:
            assert "geo_index" not in {
                r[0] for r in conn.execute(text(
                    "SELECT name FROM sqlite_master" if engine.dialect.name == "sqlite"
                    else "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"
                ))
            }
    finally:
        engine.dispose()


def test_migration_drops_literals_outside_lon_lat_from_the_index(db_url: str) -> None:
    engine = make_engine(db_url)
    try:
        upgrade(engine, "0003_spatial_index")
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO datatypes (id, iri) VALUES (1, :iri)"), {"iri": WKT_LITERAL})
            for term_id, value in [(1, "POINT(1 2)"), (2, "POINT(200 0)")]:
                conn.execute(
                    text("INSERT INTO terms (id, hash, kind, value, datatype) VALUES (:i, :i, 3, :v, 1)"),
                    {"i": term_id, "v": value},
                )
            # What 0003's code wrote for both (it read POINT(200 0) as a geometry).
            if engine.dialect.name == "sqlite":
                conn.execute(text("INSERT INTO geo_index VALUES (16, 1, 1, 2, 2), (32, 200, 200, 0, 0)"))
            else:
                conn.execute(text("INSERT INTO geo_index VALUES (16, box(point(1, 2), point(1, 2))), "
                                  "(32, box(point(200, 0), point(200, 0)))"))
        upgrade(engine)
        with engine.connect() as conn:
            assert conn.execute(text("SELECT key FROM geo_index ORDER BY key")).scalars().all() == [16]
    finally:
        engine.dispose()


def test_private_memory_store_has_the_index() -> None:
    store = SQLStore("sqlite://")
    try:
        ds = Dataset(store=store, default_union=True)
        ds.graph(EX.g).add((EX.a, EX.bbox, Literal("POINT(1 1)", datatype=WKT)))
        assert len(_indexed(store)) == 1
    finally:
        store.close()


def test_sqlite_engine_without_the_catalogue_can_read_the_file(tmp_path) -> None:
    """The R*Tree is a standard SQLite module: plain sqlite3 can open the catalogue."""
    db = tmp_path / "c.db"
    store = SQLStore(f"sqlite:///{db}")
    Dataset(store=store).graph(EX.g).add((EX.a, EX.bbox, Literal("POINT(1 1)", datatype=WKT)))
    store.commit()
    store.close()
    with create_engine(f"sqlite:///{db}").connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM geo_index WHERE minx <= 1 AND maxx >= 1")).scalar() == 1


# ------------------------------------------------------------------ PostGIS or box


def test_each_backend_has_its_index(geo_ds: Dataset, request) -> None:
    assert index_kind(geo_ds.store.connection) == KINDS[_backend(request)]


def test_cli_explain_names_the_index(db_url: str, request) -> None:
    from click.testing import CliRunner

    from catalogue.cli import main

    store = SQLStore(db_url)
    _fill(Dataset(store=store, default_union=True))
    store.commit()
    store.close()
    query = (
        "SELECT ?d WHERE { ?d <http://example.org/bbox> ?g "
        'FILTER(geof:sfIntersects(?g, "POLYGON((170 0, 180 0, 180 20, 170 20, 170 0))"^^geo:wktLiteral)) }'
    )
    result = CliRunner().invoke(main, ["query", "--db", db_url, "--explain", "--format", "tsv", query])
    assert result.exit_code == 0, result.output
    name = INDEX_NAMES[KINDS[_backend(request)]]
    assert f"spatial index used (geo_index, {name}) for geof:sfIntersects" in result.stderr
    assert {line.strip("<>") for line in result.stdout.split()[1:]} == _expected(
        "sfIntersects", box(170, 0, 180, 20)
    )


def _envelopes(engine) -> list[tuple[int, float, float, float, float]]:
    with engine.connect() as conn:
        if index_kind(conn) == "postgis":
            sql = "SELECT key, ST_XMin(env), ST_YMin(env), ST_XMax(env), ST_YMax(env) FROM geo_index ORDER BY key"
        else:
            sql = "SELECT key, (env[1])[0], (env[1])[1], (env[0])[0], (env[0])[1] FROM geo_index ORDER BY key"
        return [tuple(row) for row in conn.exec_driver_sql(sql)]


@pytest.mark.postgres
def test_migration_moves_an_existing_index_to_postgis_and_back(monkeypatch) -> None:
    """A catalogue made at 0004 (a box index, filled) upgraded where PostGIS is
    available gets the envelopes in a geometry column, and answers the same."""
    with _postgres("postgis", template=False) as url:
        engine = make_engine(url)
        try:
            monkeypatch.setenv(POSTGIS_ENV, "off")
            ensure_schema(engine)
            store = SQLStore(url)
            ds = Dataset(store=store, default_union=True)
            _fill(ds)
            store.commit()
            queries = [
                f'SELECT ?d WHERE {{ ?d ex:bbox ?g FILTER({f}(?g, "{q}"^^geo:wktLiteral)) }}'
                for f in ("geof:sfIntersects", "geof:sfWithin", "!geof:sfDisjoint", "geof:sfTouches")
                for q in (WORLD, SPLIT, "POLYGON((0 0, 20 0, 20 20, 0 20, 0 0))", "POINT(-180 15)")
            ]
            answers = [_select(ds, q)[0] for q in queries]
            store.close()
            boxes = _envelopes(engine)
            assert len(boxes) > len(STORED)  # split footprints have two rows
            downgrade(engine, "0004_spatial_lon_lat")
            monkeypatch.delenv(POSTGIS_ENV)
            upgrade(engine)
            with engine.connect() as conn:
                assert index_kind(conn) == "postgis"
                (typed,) = conn.exec_driver_sql(
                    "SELECT format_type(atttypid, atttypmod) FROM pg_attribute "
                    "WHERE attrelid = 'geo_index'::regclass AND attname = 'env'"
                ).scalars()
                assert typed == "geometry(Polygon,4326)"
                assert conn.exec_driver_sql(
                    "SELECT indexdef FROM pg_indexes WHERE tablename = 'geo_index' AND indexname = 'ix_geo_index_env'"
                ).scalar().endswith("USING gist (env)")
            assert _envelopes(engine) == boxes
            store = SQLStore(url)
            ds = Dataset(store=store, default_union=True)
            assert [_select(ds, q)[0] for q in queries] == answers
            store.close()
            # And back: the boxes again, the same answers.
            downgrade(engine, "0004_spatial_lon_lat")
            with engine.connect() as conn:
                assert index_kind(conn) == "box"
            assert _envelopes(engine) == boxes
        finally:
            engine.dispose()


@pytest.mark.postgres
def test_postgis_refused_falls_back_to_box(monkeypatch) -> None:
    """A role that may not create the extension keeps the core box index."""
    with _postgres("postgis", template=False) as url:
        admin = create_engine(url, isolation_level="AUTOCOMMIT")
        role = f"geo_nobody_{os.getpid()}"
        try:
            with admin.connect() as conn:
                conn.exec_driver_sql(f"CREATE ROLE {role} LOGIN")
                conn.exec_driver_sql(f"GRANT ALL ON SCHEMA public TO {role}")
            monkeypatch.delenv(POSTGIS_ENV, raising=False)
            limited = make_engine(url.replace("postgres@", f"{role}@", 1))
            try:
                ensure_schema(limited)
                with limited.connect() as conn:
                    assert index_kind(conn) == "box"
            finally:
                limited.dispose()
        finally:
            with admin.connect() as conn:
                conn.exec_driver_sql(f"DROP OWNED BY {role}")
                conn.exec_driver_sql(f"DROP ROLE {role}")
            admin.dispose()
