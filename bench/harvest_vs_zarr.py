"""How long does harvesting a 1,000-array Zarr v3 hierarchy take next to zarr-python?

Usage (from the repository root; ``make bench`` runs exactly the first line)::

    .venv/bin/python bench/harvest_vs_zarr.py
    .venv/bin/python bench/harvest_vs_zarr.py --arrays 200 --groups 5 --repeat 3
    .venv/bin/python bench/harvest_vs_zarr.py --db-url postgresql+psycopg://postgres@127.0.0.1:5432/test
    .venv/bin/python bench/harvest_vs_zarr.py --profile

The store is written to a temporary folder by ``tests/support/stores.big_v3_hierarchy``
(metadata only, written by zarr-python).  Then, in this one process, after
``--warmup`` untimed rounds, ``--repeat`` rounds run, each timing once:

* ``zarr``     ``list(zarr.open_group(store, mode="r").members(max_depth=None))``
* ``harvest``  ``catalogue.open(<fresh database>).harvest(store)``
* ``split``    the same harvest again, with ``SourceReader.load`` (read + model),
  ``SourceReader.extents`` (where and when, coordinate values included),
  ``validate_hierarchy`` (validation), ``hierarchy_triples`` (conversion to RDF) and
  ``index_graphs`` (the search index rows, written in the harvest's commit) timed
  inside it; the SQL write is the remainder.

``--coordinates`` gives every group ``time``/``lat``/``lon`` coordinate arrays with values
(``tests/support/stores.add_coordinates``), so that every array has an extent; the
extents' overhead is reported as ``extents / (instrumented harvest - extents)``.

The order of the three alternates from round to round (A B C, C B A, ...) so that
machine noise and drift hit all of them alike.  Every harvest gets a fresh, empty
database (a new SQLite file, or with ``--db-url`` a new PostgreSQL database with a
random name, dropped afterwards), created outside the timed section.  Medians are
reported, as seconds and as ratios to zarr-python's median.  Results go to
``bench/results/harvest_vs_zarr.json`` (git-ignored).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import pathlib
import shutil
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

REPO = pathlib.Path(__file__).resolve().parent.parent
# The repository itself first (the checkout is what is measured; tests.support holds the
# store builders).  Running ``python bench/harvest_vs_zarr.py`` puts only bench/ on the path.
sys.path[:0] = [str(REPO)]

import zarr  # noqa: E402
from sqlalchemy import create_engine  # noqa: E402
from sqlalchemy.engine import make_url  # noqa: E402

import catalogue  # noqa: E402
import catalogue.api  # noqa: E402
from bench.common import environment, interleaved_rounds, timed  # noqa: E402
from catalogue.discovery import indexer  # noqa: E402
from catalogue.graph.database import database_url  # noqa: E402
from catalogue.harvest import SourceReader  # noqa: E402
from catalogue.harvest import run as harvest_run  # noqa: E402
from catalogue.harvest import writer as harvest_writer  # noqa: E402
from tests.support import stores  # noqa: E402

RESULTS = REPO / "bench" / "results" / "harvest_vs_zarr.json"
PROFILE = REPO / "bench" / "results" / "harvest_vs_zarr.prof"


# ---------------------------------------------------------------- databases
class SQLiteDatabases:
    """A fresh SQLite file per harvest, in a scratch folder."""

    label = "SQLite"

    def __init__(self, folder: pathlib.Path) -> None:
        self.folder = folder
        self.folder.mkdir(parents=True, exist_ok=True)

    def describe(self) -> str:
        return "sqlite (fresh file per run)"

    @contextlib.contextmanager
    def fresh(self) -> Iterator[str]:
        path = self.folder / f"run-{uuid.uuid4().hex[:12]}.db"
        try:
            yield str(path)
        finally:
            for leftover in self.folder.glob(path.name + "*"):  # -wal, -shm, -harvest-locks/
                if leftover.is_dir():
                    shutil.rmtree(leftover)
                else:
                    leftover.unlink()

    def close(self) -> None:
        pass


class PostgresDatabases:
    """A fresh PostgreSQL database with a random name per harvest, dropped afterwards.

    Like the ``postgres_url`` test fixture: the database named in the URL is only
    used to run CREATE/DROP DATABASE, never read or written.
    """

    label = "PostgreSQL"

    def __init__(self, url: str) -> None:
        self.base = make_url(database_url(url))
        self.admin = create_engine(self.base, isolation_level="AUTOCOMMIT")
        with self.admin.connect() as conn:  # fail early, before the store is built
            conn.exec_driver_sql("SELECT 1")

    def describe(self) -> str:
        return f"postgresql ({self.base.render_as_string(hide_password=True)}, fresh database per run)"

    @contextlib.contextmanager
    def fresh(self) -> Iterator[str]:
        name = f"catalogue_bench_{uuid.uuid4().hex[:16]}"
        with self.admin.connect() as conn:
            conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
        try:
            yield self.base.set(database=name).render_as_string(hide_password=False)
        finally:
            with self.admin.connect() as conn:
                conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def close(self) -> None:
        self.admin.dispose()


# ----------------------------------------------------------------- runners


def run_zarr(store: pathlib.Path) -> dict[str, float]:
    seconds, members = timed(lambda: list(zarr.open_group(store, mode="r").members(max_depth=None)))
    return {"zarr": seconds, "_members": len(members)}


def run_harvest(store: pathlib.Path, databases: Any) -> dict[str, float]:
    with databases.fresh() as db:
        opened, cat = timed(lambda: catalogue.open(db))
        try:
            seconds, report = timed(lambda: cat.harvest(str(store)))
        finally:
            cat.close()
    if not report.ok:
        raise RuntimeError(f"harvest failed: {report.errors[:3]}")
    return {"harvest": seconds, "open": opened, "_triples": report.triples}


@contextlib.contextmanager
def _instrumented() -> Iterator[dict[str, float]]:
    """Time the parts of a harvest (:data:`PARTS`) inside it, by wrapping the functions that do them.

    The harvest's writer materialises the triples with ``list(...)`` anyway; the wrapper
    does that itself so that the conversion is timed on its own.
    """
    spent = dict.fromkeys(PARTS, 0.0)
    originals = [(owner, attribute, getattr(owner, attribute)) for owner, attribute, _key, _listed in _WRAPPED]

    def wrap(function: Callable[..., Any], key: str, listed: bool) -> Callable[..., Any]:
        def timed_part(*args: Any, **kwargs: Any) -> Any:
            start = time.perf_counter()
            try:
                return iter(list(function(*args, **kwargs))) if listed else function(*args, **kwargs)
            finally:
                spent[key] += time.perf_counter() - start
        return timed_part

    for (owner, attribute, function), (_o, _a, key, listed) in zip(originals, _WRAPPED, strict=True):
        setattr(owner, attribute, wrap(function, key, listed))
    try:
        yield spent
    finally:
        for owner, attribute, function in originals:
            setattr(owner, attribute, function)


#: The timed parts of an instrumented harvest; the SQL write is the rest.
PARTS = ("read", "extents", "validate", "convert", "index")
_WRAPPED: list[tuple[Any, str, str, bool]] = [
    (SourceReader, "load", "read", False),
    (SourceReader, "extents", "extents", False),
    (harvest_run, "validate_hierarchy", "validate", False),
    (harvest_writer, "hierarchy_triples", "convert", True),
    (indexer, "index_graphs", "index", False),
]


def run_split(store: pathlib.Path, databases: Any) -> dict[str, float]:
    with databases.fresh() as db:
        cat = catalogue.open(db)
        try:
            with _instrumented() as spent:
                seconds, _ = timed(lambda: cat.harvest(str(store)))
        finally:
            cat.close()
    return {
        "split_total": seconds,
        **spent,
        "write": seconds - sum(spent.values()),
        "extents_overhead": spent["extents"] / (seconds - spent["extents"]),
    }


def profile_harvest(store: pathlib.Path, databases: Any, top: int = 25) -> None:
    import cProfile
    import pstats

    with databases.fresh() as db:
        cat = catalogue.open(db)
        profiler = cProfile.Profile()
        try:
            profiler.enable()
            cat.harvest(str(store))
            profiler.disable()
        finally:
            cat.close()
    PROFILE.parent.mkdir(parents=True, exist_ok=True)
    profiler.dump_stats(PROFILE)
    stats = pstats.Stats(profiler)
    print(f"\n== cProfile of one harvest (cumulative, top {top}; full profile: {PROFILE.relative_to(REPO)}) ==")
    stats.sort_stats("cumulative").print_stats(top)
    print(f"== cProfile of one harvest (own time, top {top}) ==")
    stats.sort_stats("tottime").print_stats(top)


# ------------------------------------------------------------------ report
ROWS = [
    ("zarr", "zarr-python members(max_depth=None)", 0),
    ("harvest", "catalogue harvest ({db})", 0),
    ("split_total", "harvest, instrumented run", 2),
    ("read", "read + model (SourceReader.load)", 4),
    ("extents", "where and when (SourceReader.extents)", 4),
    ("validate", "validation (validate_hierarchy)", 4),
    ("convert", "to triples (hierarchy_triples)", 4),
    ("index", "search index rows (index_graphs)", 4),
    ("write", "SQL write (remainder)", 4),
    ("open", "catalogue.open: fresh db + migrations", 0),
]


def summarise(runs: dict[str, list[float]]) -> dict[str, dict[str, Any]]:
    """Medians, and ratios to zarr-python paired round by round.

    ``ratio_to_zarr`` is the median over rounds of (this step / zarr-python in the same
    round), which cancels slow drift of the machine; ``ratio_of_medians`` is kept too.
    """
    zarr_runs = runs["zarr"]
    zarr_median = statistics.median(zarr_runs)
    split_median = statistics.median(runs["split_total"])
    out: dict[str, dict[str, Any]] = {}
    for key, values in runs.items():
        median = statistics.median(values)
        entry: dict[str, Any] = {
            "median_s": median,
            "min_s": min(values),
            "max_s": max(values),
            "runs_s": values,
            "ratio_to_zarr": statistics.median(v / z for v, z in zip(values, zarr_runs, strict=True)),
            "ratio_of_medians": median / zarr_median,
        }
        if key in (*PARTS, "write"):
            entry["share_of_harvest"] = median / split_median
        out[key] = entry
    return out


def print_table(summary: dict[str, dict[str, Any]], header: str, db_label: str) -> None:
    print(header)
    print(f"{'':42} {'median s':>9} {'min s':>8} {'x zarr':>8} {'share':>6}")
    for key, label, indent in ROWS:
        s = summary[key]
        share = f"{s['share_of_harvest']:6.0%}" if "share_of_harvest" in s else ""
        name = " " * indent + label.format(db=db_label)
        print(f"{name:42} {s['median_s']:9.3f} {s['min_s']:8.3f} {s['ratio_to_zarr']:8.2f} {share:>6}")
    print(
        "x zarr: median over rounds of (step / zarr-python in the same round); "
        "share: of the instrumented harvest"
    )


def _metadata_bytes(store: pathlib.Path) -> tuple[int, int]:
    docs = list(store.rglob("zarr.json"))
    return len(docs), sum(p.stat().st_size for p in docs)


# -------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arrays", type=int, default=1000, help="arrays in the hierarchy (default 1000)")
    parser.add_argument("--groups", type=int, default=20, help="groups under the root (default 20)")
    parser.add_argument("--repeat", type=int, default=5, help="timed rounds (default 5)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed rounds first (default 1)")
    parser.add_argument(
        "--db-url",
        help="harvest into PostgreSQL: a server URL such as postgresql+psycopg://postgres@127.0.0.1:5432/test "
        "(a scratch database with a random name is created and dropped per run)",
    )
    parser.add_argument("--output", type=pathlib.Path, default=RESULTS, help=f"JSON results (default {RESULTS.relative_to(REPO)})")
    parser.add_argument("--profile", action="store_true", help="also cProfile one harvest and print the top functions")
    parser.add_argument("--coordinates", action="store_true",
                        help="give every group time/lat/lon coordinate arrays with values (every array gets an extent)")
    args = parser.parse_args(argv)
    if args.repeat < 1 or args.warmup < 0 or args.arrays < 0 or args.groups < 0:
        parser.error("--repeat must be >= 1; --warmup, --arrays and --groups >= 0")

    with tempfile.TemporaryDirectory(prefix="catalogue-bench-") as tmp:
        scratch = pathlib.Path(tmp)
        databases: Any = PostgresDatabases(args.db_url) if args.db_url else SQLiteDatabases(scratch / "db")
        try:
            built, store = timed(lambda: stores.big_v3_hierarchy(scratch, n_arrays=args.arrays, n_groups=args.groups))
            if args.coordinates:
                stores.add_coordinates(store)
            n_docs, doc_bytes = _metadata_bytes(store)
            print(
                f"store: {args.arrays} arrays in {args.groups} groups, {n_docs} zarr.json "
                f"({doc_bytes / 1e6:.2f} MB of metadata), written in {built:.2f} s"
            )
            print(f"database: {databases.describe()}")

            steps: list[Callable[[], dict[str, float]]] = [
                lambda: run_zarr(store),
                lambda: run_harvest(store, databases),
                lambda: run_split(store, databases),
            ]
            def report(label: str, this_round: dict[str, float]) -> None:
                print(
                    f"  {label}: zarr {this_round['zarr']:.3f} s, harvest {this_round['harvest']:.3f} s, "
                    f"instrumented harvest {this_round['split_total']:.3f} s",
                    flush=True,
                )

            runs, counts = interleaved_rounds(steps, args.repeat, args.warmup, report)

            summary = summarise(runs)
            header = (
                f"\nharvest vs zarr-python: {args.arrays} arrays in {args.groups} groups "
                f"({counts['members']:.0f} members + root), {counts['triples']:.0f} triples; "
                f"{databases.label}; median of {args.repeat} interleaved rounds after {args.warmup} warm-up"
            )
            print_table(summary, header, databases.label)
            print(
                f"\nharvest = {summary['harvest']['ratio_to_zarr']:.1f} x zarr-python's listing; "
                f"read + model alone = {summary['read']['ratio_to_zarr']:.1f} x; "
                f"extents add {summary['extents_overhead']['median_s']:.1%} to the harvest"
                + (" (with coordinate arrays)" if args.coordinates else " (no coordinate arrays)")
            )

            results = {
                "benchmark": "harvest_vs_zarr",
                "created": datetime.now(UTC).isoformat(timespec="seconds"),
                "parameters": {
                    "arrays": args.arrays,
                    "groups": args.groups,
                    "repeat": args.repeat,
                    "warmup": args.warmup,
                    "coordinates": args.coordinates,
                    "database": databases.describe(),
                },
                "store": {
                    "members": counts["members"],
                    "zarr_json_documents": n_docs,
                    "metadata_bytes": doc_bytes,
                    "build_s": built,
                },
                "triples": counts["triples"],
                "timings": summary,
                "notes": {
                    "zarr": "list(zarr.open_group(store, mode='r').members(max_depth=None))",
                    "harvest": "catalogue.open(fresh db).harvest(store); open not included",
                    "split_total": "a second harvest per round, with the three parts timed inside it",
                    "read": "catalogue.harvest.SourceReader.load",
                    "extents": "catalogue.harvest.SourceReader.extents (coordinate values included)",
                    "extents_overhead": "extents / (split_total - extents), per round",
                    "convert": "list(catalogue.rdf.convert.hierarchy_triples(...))",
                    "validate": "catalogue.harvest.run.validate_hierarchy",
                    "index": "catalogue.discovery.indexer.index_graphs (in the commit)",
                    "write": "split_total minus the parts above: graph replacement in SQL, commit",
                    "open": "catalogue.open on a fresh database: schema creation (Alembic)",
                },
                "environment": environment(("zarr-catalogue", "zarr", "rdflib", "pyld", "sqlalchemy", "jsonschema", "psycopg")),
            }
            args.output.parent.mkdir(parents=True, exist_ok=True)
            args.output.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
            print(f"results: {args.output}")

            if args.profile:
                profile_harvest(store, databases)
        finally:
            databases.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
