"""Bulk-load benchmark: ``catalogue load`` of an N-Quads file into SQLite and PostgreSQL.

Usage (from the repository root)::

    .venv/bin/python -m bench.load                     # bench/data/*.nq, else generate scale 1
    .venv/bin/python -m bench.load --data /tmp/x.nq --repeat 3
    .venv/bin/python -m bench.load --scale 0.1 --no-postgres --no-rdflib
    .venv/bin/python -m bench.load --postgres postgresql+psycopg://postgres@127.0.0.1:5432/test

What is measured, per backend and run, into a database created for the run:

* ``catalogue load FILE --db DB`` in a subprocess, end to end: interpreter start,
  imports, schema creation, parse, write, index builds, ``ANALYZE``, commit.  Reported:
  the wall time of the subprocess, its CPU time (user + system, which is what the load
  costs when other processes compete for the CPU), and the loader's own time from its
  summary line (without interpreter start and schema creation).
* Disk use per triple: SQLite's database file plus its ``-wal`` file after a
  ``wal_checkpoint(TRUNCATE)``; PostgreSQL's ``pg_total_relation_size`` of the
  catalogue's tables (indexes and TOAST included).
* The reference: rdflib's own ``Dataset.parse`` of the same file (parse only, into
  rdflib's in-memory store), timed inside a fresh Python process.  The ratio is our
  load (the loader's own time, like for like) over rdflib's parse: below 1, a complete
  load into the database takes less time than merely parsing the file with rdflib.

Triples per second count the statements of the file.  The PostgreSQL database is
``bench_load_<hex>``, created from the URL's server and dropped afterwards (the
database named in the URL is only used to issue ``CREATE``/``DROP DATABASE``).
Results go to ``bench/results/load-latest.json`` (git-ignored).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
DATA_DIR = REPO / "bench" / "data"
RESULTS = REPO / "bench" / "results" / "load-latest.json"
CATALOGUE = [sys.executable, "-m", "catalogue.cli"]
SUMMARY = re.compile(
    r"loaded ([\d,]+) triples \(([\d,]+) new quads, ([\d,]+) new terms\) in ([\d.]+) s"
)
DEFAULT_POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432/test"


def find_data(scale: float) -> Path:
    """An N-Quads file of the SPARQL benchmark: bench/data/ or freshly generated."""
    if scale == 1.0:
        found = sorted(DATA_DIR.glob("*.nq"), key=lambda p: p.stat().st_size, reverse=True)
        if found:
            return found[0]
    target = Path(tempfile.gettempdir()) / f"bench-load-scale{scale:g}.nq"
    if not target.exists():
        print(f"generating {target} (scale {scale:g}) ...", flush=True)
        subprocess.run(
            [
                sys.executable,
                "-m",
                "bench.sparql.generate",
                "--scale",
                str(scale),
                "-o",
                str(target),
            ],
            check=True,
            cwd=REPO,
        )
    return target


def run_load(path: Path, db: str) -> dict[str, Any]:
    """``catalogue load`` in a subprocess: wall time, CPU time and its summary."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run(
        [*CATALOGUE, "load", str(path), "--db", db], capture_output=True, text=True, cwd=REPO
    )
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"catalogue load failed ({done.returncode}): {done.stderr.strip()}")
    match = SUMMARY.search(done.stdout)
    if match is None:
        raise SystemExit(f"unexpected output: {done.stdout!r}")
    triples, quads, terms = (int(g.replace(",", "")) for g in match.groups()[:3])
    return {
        "wall_s": wall,
        "cpu_s": (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime),
        "loader_s": float(match.group(4)),
        "triples": triples,
        "new_quads": quads,
        "new_terms": terms,
        "summary": done.stdout.strip(),
    }


def sqlite_run(path: Path) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="bench-load-") as tmp:
        db = Path(tmp) / "catalogue.db"
        result = run_load(path, str(db))
        with sqlite3.connect(db) as conn:
            conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        wal = db.with_name(db.name + "-wal")
        size = db.stat().st_size + (wal.stat().st_size if wal.exists() else 0)
        result["bytes"] = size
        result["bytes_per_triple"] = size / result["triples"]
    return result


def postgres_run(path: Path, url: str) -> dict[str, Any]:
    from sqlalchemy import create_engine, text

    from catalogue.graph.database import scratch_postgres_database

    with scratch_postgres_database(url, "bench_load") as db:
        result = run_load(path, db)
        engine = create_engine(db)
        try:
            with engine.connect() as conn:
                size = conn.execute(
                    text(
                        "SELECT sum(pg_total_relation_size(c)) FROM unnest(ARRAY["
                        "'terms', 'quads', 'graphs', 'datatypes', 'namespaces']::regclass[]) c"
                    )
                ).scalar_one()
        finally:
            engine.dispose()
    result["bytes"] = int(size)
    result["bytes_per_triple"] = int(size) / result["triples"]
    return result


def postgres_available(url: str) -> str | None:
    """Why PostgreSQL cannot be used, or ``None`` if it answers."""
    try:
        from sqlalchemy import create_engine

        from catalogue.graph.database import database_url

        engine = create_engine(database_url(url))
        try:
            with engine.connect() as conn:
                conn.exec_driver_sql("SELECT 1")
        finally:
            engine.dispose()
    except Exception as exc:  # any failure to connect: report and skip
        return f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
    return None


RDFLIB_PARSE = """
import sys, time, rdflib
rdflib.NORMALIZE_LITERALS = False
started, cpu = time.perf_counter(), time.process_time()
ds = rdflib.Dataset()
ds.parse(sys.argv[1], format="nquads")
print(time.perf_counter() - started, time.process_time() - cpu, sum(1 for _ in ds.quads()))
"""


def rdflib_run(path: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", RDFLIB_PARSE, str(path)], capture_output=True, text=True, check=True
    )
    seconds, cpu, triples = done.stdout.split()
    return {"parse_s": float(seconds), "cpu_s": float(cpu), "triples": int(triples)}


def median(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(run[key] for run in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, help="N-Quads file (default: bench/data/*.nq)")
    parser.add_argument("--scale", type=float, default=1.0, help="generator scale (default 1)")
    parser.add_argument("--repeat", type=int, default=1, help="timed runs per backend")
    parser.add_argument(
        "--postgres",
        default=os.environ.get("CATALOGUE_TEST_POSTGRES_URL", DEFAULT_POSTGRES),
        help="PostgreSQL server URL (default $CATALOGUE_TEST_POSTGRES_URL or the local one)",
    )
    parser.add_argument("--no-postgres", action="store_true")
    parser.add_argument("--no-rdflib", action="store_true", help="skip the rdflib reference")
    parser.add_argument("--output", type=Path, default=RESULTS)
    args = parser.parse_args()

    path = args.data or find_data(args.scale)
    size = path.stat().st_size
    print(f"data: {path} ({size / 1e6:.1f} MB)")
    results: dict[str, Any] = {
        "data": str(path),
        "bytes": size,
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "load_average": os.getloadavg(),
            "sqlite": sqlite3.sqlite_version,
        },
        "backends": {},
    }
    backends: list[tuple[str, Any]] = [("sqlite", sqlite_run)]
    if not args.no_postgres:
        reason = postgres_available(args.postgres)
        if reason is None:
            backends.append(("postgres", lambda p: postgres_run(p, args.postgres)))
        else:
            print(f"postgres: skipped ({reason})")
    for name, run in backends:
        runs = [run(path) for _ in range(args.repeat)]
        results["backends"][name] = {"runs": runs}
        triples = runs[0]["triples"]
        wall, cpu, loader = (median(runs, k) for k in ("wall_s", "cpu_s", "loader_s"))
        print(
            f"{name:9s} {triples:,} triples: end to end {wall:.2f} s = {triples / wall:,.0f} "
            f"triples/s (CPU {cpu:.2f} s = {triples / cpu:,.0f}/s; loader alone {loader:.2f} s "
            f"= {triples / loader:,.0f}/s); {median(runs, 'bytes_per_triple'):.1f} bytes/triple"
        )
    if not args.no_rdflib:
        reference = rdflib_run(path)
        results["rdflib"] = reference
        print(
            f"rdflib    Dataset.parse alone: {reference['parse_s']:.2f} s = "
            f"{reference['triples'] / reference['parse_s']:,.0f} triples/s "
            f"(CPU {reference['cpu_s']:.2f} s)"
        )
        for name, backend in results["backends"].items():
            loader = median(backend["runs"], "loader_s")
            wall = median(backend["runs"], "wall_s")
            backend["ratio_loader_to_rdflib_parse"] = loader / reference["parse_s"]
            backend["ratio_end_to_end_to_rdflib_parse"] = wall / reference["parse_s"]
            print(
                f"  {name}: our load / rdflib's parse = {loader / reference['parse_s']:.3f} "
                f"({reference['parse_s'] / loader:.1f}x faster; end to end "
                f"{wall / reference['parse_s']:.3f})"
            )
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2))
    print(f"results: {args.output}")


if __name__ == "__main__":
    main()
