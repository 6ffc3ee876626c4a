"""Load test of the web server: many concurrent clients running discovery queries.

Usage (from the repository root; ``make bench-web`` runs the first line)::

    .venv/bin/python -m bench.web_load                                  # 500 datasets, 50 clients, 20 s
    .venv/bin/python -m bench.web_load --datasets 100 --clients 10 --seconds 5

What runs:

* **The server** is ``catalogue serve`` in a process of its own on a free
  loopback port, over a SQLite catalogue of synthetic datasets
  (:mod:`bench.web_data`; built once and kept under ``bench/data/``). A
  separate process, so that the load generator's own CPU use is not charged
  to the server's event loop (both still share this machine's cores).
* **The clients** are ``--clients`` asyncio tasks in this process, each with
  its own connection (httpx), each sending its next request as soon as the
  previous answer arrived (a closed loop: the offered load adapts to the
  server, as real portal users waiting for pages do), for ``--seconds``.
  Each client cycles through a workload mixing ``/datasets`` searches (free
  text, facet filters taken from the live facet counts, paging, sorting)
  with ``/sparql`` discovery queries (SELECT with joins, OPTIONAL, FILTER,
  aggregates) in SPARQL JSON.
* **The reference** is the same workload sent by one client for a few
  seconds before the load starts: each endpoint's median latency under load
  is reported as a ratio to its single-client median (machines here are
  noisy, so absolute figures mean little on their own).

Reported per endpoint: requests, errors (any non-2xx or transport error),
throughput (requests/s), p50/p95/p99 latency in ms, and the load/reference
ratio. Results go to ``bench/results/web_load.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import pathlib
import shutil
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

REPO = pathlib.Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.common import environment, spawn_server, stop  # noqa: E402

RESULTS = REPO / "bench" / "results" / "web_load.json"
DATA = REPO / "bench" / "data"

#: SPARQL discovery queries a portal or notebook would send (prefixes are pre-bound).
SPARQL_QUERIES = [
    # datasets with a title and their number of arrays
    """SELECT ?dataset ?title (COUNT(?array) AS ?arrays) WHERE {
         ?dataset a dcat:Dataset ; dct:title ?title ; zarr:member+ ?array . ?array a zarr:Array .
       } GROUP BY ?dataset ?title ORDER BY ?title LIMIT 20""",
    # arrays with a CF standard name, optionally their units
    """SELECT ?array ?units WHERE {
         ?array a zarr:Array ; zarr:standardName "sea_surface_temperature" .
         OPTIONAL { ?array zarr:units ?units }
       } LIMIT 50""",
    # invalid nodes and the rules they break
    """SELECT DISTINCT ?node ?rule WHERE { ?node zarr:valid false . ?result sh:focusNode ?node ; zarr:rule ?rule }
       LIMIT 50""",
    # datasets whose title mentions a word
    """SELECT ?dataset ?title WHERE { ?dataset a dcat:Dataset ; dct:title ?title .
         FILTER(CONTAINS(LCASE(?title), "ocean")) } LIMIT 20""",
    # is there any sharded array?
    """ASK { ?array a zarr:Array }""",
]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def build_database(n: int, seed: int = 0) -> pathlib.Path:
    """The synthetic catalogue of ``n`` datasets, built once and kept under bench/data/."""
    from bench.web_data import build_catalogue

    DATA.mkdir(parents=True, exist_ok=True)
    db = DATA / f"web-{n}-{seed}.db"
    if not db.exists():
        partial = db.with_suffix(".part.db")
        for leftover in DATA.glob(partial.name + "*"):  # files, and the harvests' lock folder
            if leftover.is_dir():
                shutil.rmtree(leftover)
            else:
                leftover.unlink()
        start = time.perf_counter()
        build_catalogue(str(partial), n, seed, folder=DATA / f"web-{n}-{seed}-stores")
        print(f"built {n} datasets in {time.perf_counter() - start:.1f} s: {db}", flush=True)
        partial.rename(db)
        for suffix in ("-wal", "-shm"):
            side = pathlib.Path(str(partial) + suffix)
            if side.exists():
                side.unlink()
    return db


@contextlib.contextmanager
def server_process(db: pathlib.Path | str, *, workers: int = 4, extra: list[str] | None = None,
                   env: dict[str, str] | None = None, fail_on_traceback: bool = False) -> Iterator[str]:
    """``catalogue serve`` in its own process; yields its base URL once /health answers.

    ``env`` replaces the environment; with ``fail_on_traceback`` a traceback in the
    server's log raises when the server is stopped (the stress test's server must
    never fail a request).
    """
    import httpx

    port = free_port()
    command = [sys.executable, "-m", "catalogue.cli", "serve", "--db", str(db), "--port", str(port),
               "--workers", str(workers), *(extra or [])]
    proc = spawn_server(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                        env={**(os.environ if env is None else env), "PYTHONUNBUFFERED": "1"})
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"catalogue serve exited: {proc.stderr.read() if proc.stderr else ''}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base}/health", timeout=2).status_code == 200:
                    break
            if time.monotonic() > deadline:
                raise RuntimeError("catalogue serve did not answer /health within 60 s")
            time.sleep(0.1)
        yield base
    finally:
        stop(proc)
        log = proc.stderr.read() if proc.stderr else ""
        if fail_on_traceback and "Traceback" in log:
            raise RuntimeError(f"catalogue serve logged a traceback:\n{log[-3000:]}")


def workload(base: str) -> list[tuple[str, str, dict[str, Any]]]:
    """(endpoint label, path, params) requests: searches built from the live facet values, and SPARQL."""
    import httpx

    facets = httpx.get(f"{base}/datasets", params={"limit": 1}, timeout=30).json()["facets"]

    def top(name: str, k: int = 3) -> list[str]:
        return [entry["value"] for entry in facets.get(name, [])[:k]]

    searches: list[dict[str, Any]] = [
        {"q": "temperature"}, {"q": "ocean sea"}, {"q": "precip"}, {"q": "wind", "sort": "title"},
        {"limit": 50, "offset": 100}, {"sort": "-harvested", "limit": 10}, {"valid": "false"},
    ]
    for name in ("dtype", "dimension", "standard_name", "units", "codec", "zarr_format"):
        for value in top(name):
            searches.append({name: value})
    for a, b in zip(top("standard_name"), top("codec"), strict=False):
        searches.append({"standard_name": a, "codec": b, "q": "sea"})
    requests = [("datasets", "/datasets", params) for params in searches]
    requests += [("sparql", "/sparql", {"query": q}) for q in SPARQL_QUERIES]
    return requests


async def _client(base: str, plan: list[tuple[str, str, dict[str, Any]]], start: int, stop_at: float,
                  samples: dict[str, list[float]], errors: dict[str, list[str]]) -> None:
    import httpx

    headers = {"Accept": "application/sparql-results+json, application/json"}
    async with httpx.AsyncClient(base_url=base, timeout=60, headers=headers) as client:
        i = start
        while time.perf_counter() < stop_at:
            label, path, params = plan[i % len(plan)]
            i += 1
            began = time.perf_counter()
            try:
                response = await client.get(path, params=params)
                await response.aread()
                failed = None if response.is_success else f"{response.status_code} {path} {params}: {response.text[:200]}"
            except httpx.HTTPError as exc:
                failed = f"{type(exc).__name__} {path} {params}: {exc}"
            elapsed = time.perf_counter() - began
            if failed:
                errors.setdefault(label, []).append(failed)
            else:
                samples.setdefault(label, []).append(elapsed)


def run_load(base: str, clients: int, seconds: float) -> dict[str, Any]:
    """Closed-loop load from ``clients`` concurrent clients for ``seconds``; per-endpoint statistics."""
    plan = workload(base)
    samples: dict[str, list[float]] = {}
    errors: dict[str, list[str]] = {}

    async def main() -> float:
        began = time.perf_counter()
        stop_at = began + seconds
        await asyncio.gather(*(_client(base, plan, k * 7, stop_at, samples, errors) for k in range(clients)))
        return time.perf_counter() - began

    wall = asyncio.run(main())
    out: dict[str, Any] = {"clients": clients, "seconds": wall, "endpoints": {}}
    for label in sorted(set(samples) | set(errors)):
        times = sorted(samples.get(label, []))
        row: dict[str, Any] = {"requests": len(times) + len(errors.get(label, [])), "errors": len(errors.get(label, [])),
                               "error_examples": errors.get(label, [])[:5], "throughput": len(times) / wall}
        if times:
            q = statistics.quantiles(times, n=100, method="inclusive") if len(times) > 1 else [times[0]] * 99
            row.update(p50_ms=1000 * statistics.median(times), p95_ms=1000 * q[94], p99_ms=1000 * q[98],
                       max_ms=1000 * times[-1])
        out["endpoints"][label] = row
    return out


def report(results: dict[str, Any], reference: dict[str, Any] | None = None) -> str:
    lines = [f"{results['clients']} clients for {results['seconds']:.1f} s",
             f"{'endpoint':>9} {'requests':>9} {'errors':>7} {'req/s':>8} {'p50 ms':>8} {'p95 ms':>8} {'p99 ms':>8} {'p50 vs 1 client':>16}"]
    for label, row in results["endpoints"].items():
        ratio = ""
        if reference and label in reference["endpoints"] and "p50_ms" in row:
            ratio = f"{row['p50_ms'] / reference['endpoints'][label]['p50_ms']:.1f}x"
        lines.append(f"{label:>9} {row['requests']:>9} {row['errors']:>7} {row['throughput']:8.1f} "
                     f"{row.get('p50_ms', float('nan')):8.1f} {row.get('p95_ms', float('nan')):8.1f} "
                     f"{row.get('p99_ms', float('nan')):8.1f} {ratio:>16}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--datasets", type=int, default=500)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--workers", type=int, default=4, help="database connections per server process")
    parser.add_argument("--processes", type=int, default=1, help="server processes (catalogue serve --processes)")
    parser.add_argument("--json", type=pathlib.Path, default=RESULTS)
    args = parser.parse_args(argv)
    db = build_database(args.datasets)
    with server_process(db, workers=args.workers, extra=["--processes", str(args.processes)]) as base:
        reference = run_load(base, 1, min(5.0, args.seconds))
        print("reference: " + report(reference), flush=True)
        results = run_load(base, args.clients, args.seconds)
    print(f"\n{args.datasets} datasets; " + report(results, reference))
    results.update(datasets=args.datasets, workers=args.workers, processes=args.processes, reference=reference,
                   environment=environment(("zarr-catalogue", "fastapi", "uvicorn", "httpx", "rdflib", "sqlalchemy")))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"results: {args.json}")
    errors = sum(row["errors"] for row in results["endpoints"].values())
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
