"""GeoSPARQL bounding-box search: the spatial index against a full scan, on SQLite and PostgreSQL.

One question: how much does the spatial index (``geo_index``: an R*Tree on SQLite; on
PostgreSQL a GiST on a PostGIS ``geometry`` envelope, ``postgis``, when the server has
PostGIS, and a GiST-indexed core ``box``, ``postgres``, kept with
``CATALOGUE_POSTGIS=off``) save on the query every portal map search runs,

    SELECT ?d WHERE { ?d dct:spatial/dcat:bbox ?g .
                      FILTER(geof:sfIntersects(?g, "POLYGON((...))"^^geo:wktLiteral)) }

over N synthetic dataset footprints (default 100,000: boxes of 1 to 20 degrees
anywhere on the globe, a few percent of them split at the antimeridian as the
catalogue writes them)?  The data is bulk-loaded once per database; then each round
runs, alternating the order (``bench/common.py``):

| step | what runs |
| --- | --- |
| index | the query above through ``Dataset.query`` (compiled SQL: index candidates, exact test by shapely, then the join) |
| scan | the same pattern without the filter through ``Dataset.query`` (compiled SQL, every footprint), each literal tested with the same shapely ``intersects`` in Python (parse cache cleared first) |

Both must return the same datasets (checked every round); the ratio is scan / index
per round, reported as the median.  The PostGIS run is left out, saying so, when the
server has no PostGIS.

    PYTHONPATH=. .venv/bin/python bench/geosparql.py [--count 100000] [--repeat 5]
        [--db-url postgresql+psycopg://postgres@127.0.0.1:5432/test] [--no-postgres]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from bench.common import environment, interleaved_rounds, timed  # noqa: E402

RESULTS = REPO / "bench" / "results" / "geosparql.json"
WKT = "http://www.opengis.net/ont/geosparql#wktLiteral"
DCT_SPATIAL = "http://purl.org/dc/terms/spatial"
DCAT_BBOX = "http://www.w3.org/ns/dcat#bbox"
QUERY_BOX = "POLYGON((0 40, 20 40, 20 60, 0 60, 0 40))"
PREFIXES = (
    "PREFIX geo: <http://www.opengis.net/ont/geosparql#>\n"
    "PREFIX geof: <http://www.opengis.net/def/function/geosparql/>\n"
    "PREFIX dct: <http://purl.org/dc/terms/>\nPREFIX dcat: <http://www.w3.org/ns/dcat#>\n"
)
INDEXED = PREFIXES + (
    "SELECT ?d WHERE { ?d dct:spatial/dcat:bbox ?g . "
    f'FILTER(geof:sfIntersects(?g, "{QUERY_BOX}"^^geo:wktLiteral)) }}'
)
SCAN = PREFIXES + "SELECT ?d ?g WHERE { ?d dct:spatial/dcat:bbox ?g }"


def footprint(rng: random.Random) -> str:
    """A CRS84 footprint as the catalogue writes it (``model/extents.py`` ``Box.wkt``)."""
    width, height = rng.uniform(1, 20), rng.uniform(1, 20)
    west, south = rng.uniform(-180, 180), rng.uniform(-90, 90 - height)
    east, north = west + width, south + height
    if east <= 180:
        return f"POLYGON(({west} {south}, {east} {south}, {east} {north}, {west} {north}, {west} {south}))"
    east -= 360
    return (
        f"MULTIPOLYGON((({west} {south}, 180 {south}, 180 {north}, {west} {north}, {west} {south})), "
        f"((-180 {south}, {east} {south}, {east} {north}, -180 {north}, -180 {south})))"
    )


def write_data(path: Path, count: int) -> None:
    rng = random.Random(16)
    with path.open("w") as out:
        for i in range(count):
            d, s, g = f"http://example.org/d{i}", f"http://example.org/d{i}#extent", f"http://example.org/g{i // 1000}"
            out.write(f"<{d}> <{DCT_SPATIAL}> <{s}> <{g}> .\n")
            out.write(f'<{s}> <{DCAT_BBOX}> "{footprint(rng)}"^^<{WKT}> <{g}> .\n')


def steps(url: str) -> tuple[list[Callable[[], dict[str, Any]]], Callable[[], None]]:
    import shapely
    from rdflib import Dataset

    from catalogue.graph import wkt
    from catalogue.graph.store import SQLStore

    store = SQLStore(url)
    ds = Dataset(store=store, default_union=True)
    query_box = shapely.from_wkt(QUERY_BOX)
    shapely.prepare(query_box)

    def indexed() -> dict[str, Any]:
        seconds, found = timed(lambda: {str(row[0]) for row in ds.query(INDEXED)})
        store.rollback()
        return {"index": seconds, "_index_matches": len(found), "_found": found}

    def scan() -> dict[str, Any]:
        wkt._parse_cached.cache_clear()

        def run() -> set[str]:
            return {
                str(d) for d, g in ds.query(SCAN) if query_box.intersects(wkt.parse_wkt(str(g)))
            }

        seconds, found = timed(run)
        store.rollback()
        return {"scan": seconds, "_scan_matches": len(found), "_scan_found": found}

    return [indexed, scan], store.close


@contextmanager
def database(backend: str, pg_url: str) -> Iterator[str]:
    if backend == "sqlite":
        with tempfile.TemporaryDirectory() as folder:
            yield f"sqlite:///{folder}/bench.db"
        return
    from catalogue.graph.database import scratch_postgres_database

    with scratch_postgres_database(pg_url, "bench_geosparql") as url:
        yield url


def postgis_available(pg_url: str) -> bool:
    from sqlalchemy import create_engine, text

    from catalogue.graph.database import database_url

    engine = create_engine(database_url(pg_url))
    try:
        with engine.connect() as conn:
            return conn.execute(
                text("SELECT 1 FROM pg_available_extensions WHERE name = 'postgis'")
            ).scalar() is not None
    finally:
        engine.dispose()


@contextmanager
def postgis_setting(backend: str) -> Iterator[None]:
    """``CATALOGUE_POSTGIS`` for ``backend`` while its store creates the schema."""
    from catalogue.graph.spatial import POSTGIS_ENV

    old = os.environ.get(POSTGIS_ENV)
    if backend == "postgres":
        os.environ[POSTGIS_ENV] = "off"
    else:
        os.environ.pop(POSTGIS_ENV, None)
    try:
        yield
    finally:
        if old is None:
            os.environ.pop(POSTGIS_ENV, None)
        else:
            os.environ[POSTGIS_ENV] = old


def run_backend(backend: str, args: argparse.Namespace, data: Path) -> dict[str, Any]:
    from catalogue.graph.load.bulk import load_file
    from catalogue.graph.spatial import INDEX_NAMES, index_kind
    from catalogue.graph.store import SQLStore

    with database(backend, args.db_url) as url:
        with postgis_setting(backend):
            store = SQLStore(url)
        kind = index_kind(store.connection)
        if kind != {"sqlite": "rtree", "postgres": "box", "postgis": "postgis"}[backend]:
            raise SystemExit(f"{backend}: the database has a {kind} index")
        load_seconds, _ = timed(lambda: load_file(store, data, format="nquads"))
        store.close()
        step_list, close = steps(url)
        try:
            samples, counts = interleaved_rounds(
                step_list,
                args.repeat,
                1,
                lambda label, rnd: print(
                    f"  {backend} {label}: " + ", ".join(f"{k} {v * 1000:.1f} ms" for k, v in rnd.items())
                ),
            )
        finally:
            close()
    if counts["found"] != counts["scan_found"]:
        raise SystemExit(f"{backend}: the indexed query and the scan disagree")
    ratios = [s / i for s, i in zip(samples["scan"], samples["index"], strict=True)]
    return {
        "index": INDEX_NAMES[kind],
        "load_seconds": load_seconds,
        "index_ms": statistics.median(samples["index"]) * 1000,
        "scan_ms": statistics.median(samples["scan"]) * 1000,
        "ratio": statistics.median(ratios),
        "matches": counts["index_matches"],
        "samples": samples,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=100_000, help="footprints (default 100,000)")
    parser.add_argument("--repeat", type=int, default=5, help="timed rounds per database")
    parser.add_argument(
        "--db-url",
        default=os.environ.get("CATALOGUE_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test"),
        help="PostgreSQL server to create a scratch database on",
    )
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()
    results: dict[str, Any] = {
        "count": args.count,
        "query_box": QUERY_BOX,
        "environment": environment(["rdflib", "shapely", "SQLAlchemy", "psycopg"]),
    }
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "footprints.nq"
        write_data(data, args.count)
        backends = ["sqlite"] + ([] if args.no_postgres else ["postgres"])
        if not args.no_postgres:
            if postgis_available(args.db_url):
                backends.append("postgis")
            else:
                print("postgis: left out, the PostgreSQL server has no PostGIS")
        for backend in backends:
            results[backend] = outcome = run_backend(backend, args, data)
            print(
                f"{backend} ({outcome['index']}): {outcome['matches']} of {args.count} footprints; index "
                f"{outcome['index_ms']:.1f} ms, scan {outcome['scan_ms']:.1f} ms, "
                f"scan / index = {outcome['ratio']:.1f}x (median of {args.repeat} rounds)"
            )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2))
    print(f"results: {args.output}")


if __name__ == "__main__":
    main()
