"""Harvests in parallel: ``catalogue harvest --jobs N`` of many small stores over HTTP into PostgreSQL.

Usage (from the repository root)::

    .venv/bin/python -m bench.harvest_jobs                       # 1,000 stores, --jobs 1 and 2, 2 rounds
    .venv/bin/python -m bench.harvest_jobs --stores 200 --jobs 1 2 4 --rounds 3
    .venv/bin/python -m bench.harvest_jobs --db sqlite

Why: a data centre has 10^5 stores; one harvest at a time cannot keep up. The stores are
``bench/web_data.py``'s synthetic hierarchies (1 to 4 CF variables with their
coordinates, v2 and v3, some invalid), each with consolidated metadata (an HTTP server
cannot list folders), served by the tests' loopback HTTP server
(``tests/support/servers.http_server``, threads in this process). Each round harvests
every store with ``catalogue harvest --config sources.toml --jobs N`` as a subprocess
into a new PostgreSQL database (``scratch_postgres_database``: created and dropped here),
rounds alternating between the job counts so that drift hits all of them; the figure is
stores per second, and the ratio of each job count's median to ``--jobs 1``'s, measured
in the same run. After each run the catalogue must hold every store (``catalogue stats``).

The harvest commands run with the package's bytecode, as an installed wheel has it (pip
compiles it): the package is compiled once before the rounds, and ``PYTHONDONTWRITEBYTECODE``
(which some sandboxes set) is dropped from their environment. Without bytecode every
process compiles the package's ~200 modules from source at each start, 0.3 s more for
each worker. ``--no-bytecode`` measures that case too.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import random
import statistics
import subprocess
import sys
import tempfile
import time
from typing import Any

REPO = pathlib.Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.common import environment  # noqa: E402
from bench.web_data import write_hierarchy  # noqa: E402
from catalogue.graph.database import scratch_postgres_database  # noqa: E402
from tests.support import servers  # noqa: E402

RESULTS = REPO / "bench" / "results" / "harvest_jobs.json"
CATALOGUE = str(pathlib.Path(sys.executable).with_name("catalogue"))
DEFAULT_PG = os.environ.get("CATALOGUE_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")


def consolidate(root: pathlib.Path) -> None:
    """Write consolidated metadata as zarr-python does: ``.zmetadata`` (v2), or the root
    ``zarr.json``'s ``consolidated_metadata`` (v3)."""
    if (root / "zarr.json").exists():
        docs = {p.parent.relative_to(root).as_posix(): json.loads(p.read_text())
                for p in sorted(root.rglob("zarr.json")) if p.parent != root}
        top = json.loads((root / "zarr.json").read_text())
        top["consolidated_metadata"] = {"kind": "inline", "must_understand": False, "metadata": docs}
        (root / "zarr.json").write_text(json.dumps(top))
        return
    docs = {p.relative_to(root).as_posix(): json.loads(p.read_text())
            for p in sorted(root.rglob(".z*")) if p.name in (".zgroup", ".zarray", ".zattrs")}
    (root / ".zmetadata").write_text(json.dumps({"zarr_consolidated_format": 1, "metadata": docs}))


def write_stores(folder: pathlib.Path, n: int) -> list[pathlib.Path]:
    rng = random.Random(17)
    roots = []
    for i in range(n):
        root = write_hierarchy(folder, i, rng)
        consolidate(root)
        roots.append(root)
    return roots


def harvest_environment(bytecode: bool) -> dict[str, str]:
    """The harvest commands' environment: with ``bytecode``, the package compiled (once,
    here) and read as compiled, as where it is installed."""
    if not bytecode:
        return dict(os.environ)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "catalogue")], env=env, check=True)
    return env


def run_once(config: pathlib.Path, db: str, jobs: int, env: dict[str, str]) -> tuple[float, dict[str, Any]]:
    started = time.perf_counter()
    done = subprocess.run([CATALOGUE, "harvest", "--config", str(config), "--jobs", str(jobs), "--db", db],
                          capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"harvest failed ({done.returncode}): {done.stderr[-2000:]}")
    stats = subprocess.run([CATALOGUE, "stats", "--json", "--db", db], capture_output=True, text=True, check=True)
    return seconds, json.loads(stats.stdout)


def bench(args: argparse.Namespace) -> dict[str, Any]:
    results: dict[str, Any] = {"stores": args.stores, "db": args.db, "bytecode": args.bytecode, "rounds": [],
                               "environment": environment(["sqlalchemy", "psycopg", "rdflib", "pyld"])}
    env = harvest_environment(args.bytecode)
    with tempfile.TemporaryDirectory(prefix="bench-jobs-") as scratch:
        folder = pathlib.Path(scratch) / "served"
        folder.mkdir()
        print(f"writing {args.stores} stores ...", flush=True)
        roots = write_stores(folder, args.stores)
        with servers.http_server(folder) as server:
            config = pathlib.Path(scratch) / "sources.toml"
            config.write_text("".join(f'[[source]]\nurl = "{server.url}/{r.name}"\n' for r in roots))
            times: dict[int, list[float]] = {j: [] for j in args.jobs}
            for rnd in range(args.rounds):
                order = args.jobs if rnd % 2 == 0 else list(reversed(args.jobs))
                for jobs in order:
                    if args.db == "sqlite":
                        db = str(pathlib.Path(scratch) / f"r{rnd}-j{jobs}.db")
                        seconds, stats = run_once(config, db, jobs, env)
                    else:
                        with scratch_postgres_database(args.pg_url, prefix="catalogue_bench") as db:
                            seconds, stats = run_once(config, db, jobs, env)
                    assert stats["datasets"] == args.stores, stats
                    times[jobs].append(seconds)
                    results["rounds"].append({"round": rnd, "jobs": jobs, "seconds": seconds,
                                              "stores_per_s": args.stores / seconds})
                    print(f"  round {rnd + 1}/{args.rounds} --jobs {jobs}: {seconds:.1f} s, "
                          f"{args.stores / seconds:.1f} stores/s", flush=True)
    base = statistics.median(times[args.jobs[0]])
    results["rows"] = [{"jobs": j, "median_s": statistics.median(t), "stores_per_s": args.stores / statistics.median(t),
                        "throughput_vs_first": base / statistics.median(t)} for j, t in times.items()]
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--stores", type=int, default=1000)
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--db", choices=["postgres", "sqlite"], default="postgres")
    parser.add_argument("--pg-url", default=DEFAULT_PG)
    parser.add_argument("--json", type=pathlib.Path, default=RESULTS)
    parser.add_argument("--no-bytecode", dest="bytecode", action="store_false",
                        help="run the harvests as the environment says (PYTHONDONTWRITEBYTECODE kept)")
    args = parser.parse_args(argv)
    results = bench(args)
    print()
    print(f"| jobs | median s | stores/s | throughput vs --jobs {args.jobs[0]} |")
    print("|---|---|---|---|")
    for row in results["rows"]:
        print(f"| {row['jobs']} | {row['median_s']:.1f} | {row['stores_per_s']:.1f} | {row['throughput_vs_first']:.2f}× |")
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
