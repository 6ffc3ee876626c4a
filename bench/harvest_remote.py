"""Harvesting over HTTP: nodes per second on a large store, and the cost of a no-change re-harvest.

Usage (from the repository root; ``make bench-remote`` runs the first line)::

    .venv/bin/python bench/harvest_remote.py
    .venv/bin/python bench/harvest_remote.py --arrays 4900 --groups 100 --concurrency 16 64 --runs 3

Why: operators harvest remote stores every hour. An HTTP server cannot list
folders, and this store has no consolidated metadata, so the nodes come from
the sources file's ``nodes`` list and each node costs its own requests: the
figure that matters is nodes per second at a given concurrency. The second
figure is what an hourly run costs when nothing changed (the incremental
harvest reads and compares, but rewrites nothing), as a ratio to the first
harvest of the same store into an empty catalogue, measured in the same run.

The store (``tests/support/stores.big_hierarchy``: groups of float32 arrays with CF
attributes, metadata only, written by zarr-python) is served by the tests'
loopback server (``tests/support/servers.http_server``), so network latency is ~0:
the figures measure the client, not a WAN.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import sys
import tempfile
from typing import Any

REPO = pathlib.Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import catalogue  # noqa: E402
from bench.common import environment, timed  # noqa: E402
from tests.support import servers, stores  # noqa: E402

RESULTS = REPO / "bench" / "results" / "harvest_remote.json"


def node_paths(store: pathlib.Path) -> list[str]:
    """Every node below the root (what a sources file's ``nodes`` list would name)."""
    return sorted(p.parent.relative_to(store).as_posix() for p in store.rglob("zarr.json") if p.parent != store)


def bench(args: argparse.Namespace) -> dict[str, Any]:
    results: dict[str, Any] = {"arrays": args.arrays, "groups": args.groups, "rows": []}
    with tempfile.TemporaryDirectory(prefix="bench-remote-") as scratch:
        root = pathlib.Path(scratch)
        store = stores.big_hierarchy(root / "served", n_arrays=args.arrays, n_groups=args.groups, zarr_format=3)
        nodes = node_paths(store)
        results["nodes"] = len(nodes) + 1
        with servers.http_server(root / "served") as server:
            url = f"{server.url}/{store.name}"
            for concurrency in args.concurrency:
                first_runs, again_runs = [], []
                for rnd in range(args.runs):
                    db = root / f"c{concurrency}-{rnd}.db"
                    with catalogue.open(str(db)) as cat:
                        def harvest(cat: Any = cat, concurrency: int = concurrency) -> Any:
                            return cat.harvest(url, nodes=nodes, concurrency=concurrency)

                        server.reset_counts()
                        first, report = timed(harvest)
                        requests_first = sum(server.counts.values())
                        assert report.ok and report.groups + report.arrays == len(nodes) + 1, report.summary()
                        server.reset_counts()
                        again, report2 = timed(harvest)
                        requests_again = sum(server.counts.values())
                        assert report2.run.unchanged == len(nodes) + 1 and report2.run.changed == 0
                    first_runs.append(first)
                    again_runs.append(again)
                    print(f"  concurrency {concurrency} round {rnd + 1}/{args.runs}: first {first:.2f} s "
                          f"({requests_first} requests), no-change re-harvest {again:.2f} s ({requests_again} requests)",
                          flush=True)
                first_s, again_s = statistics.median(first_runs), statistics.median(again_runs)
                results["rows"].append({
                    "concurrency": concurrency,
                    "first_s": first_s, "first_nodes_per_s": results["nodes"] / first_s,
                    "again_s": again_s, "again_nodes_per_s": results["nodes"] / again_s,
                    "again_vs_first": statistics.median(a / f for a, f in zip(again_runs, first_runs, strict=True)),
                    "requests_first": requests_first, "requests_again": requests_again,
                })
        results["unchanged"] = unchanged_sources(root, store, args.runs)
    return results


def unchanged_sources(root: pathlib.Path, store: pathlib.Path, runs: int) -> list[dict[str, Any]]:
    """First harvest and no-change re-harvest of the same store, where a change check is possible:
    over HTTP with consolidated metadata (one read) and on S3 (one listing)."""
    import shutil

    import zarr

    consolidated = root / "consolidated" / store.name
    shutil.copytree(store, consolidated)
    zarr.consolidate_metadata(str(consolidated))
    rows: list[dict[str, Any]] = []
    with servers.http_server(consolidated.parent) as server:
        rows.append(_first_and_again("HTTP, consolidated metadata", f"{server.url}/{store.name}", {}, root, runs,
                                     lambda: sum(server.counts.values()), server.reset_counts))
    with servers.s3_server() as s3:
        print("  uploading the store to the loopback S3 server ...", flush=True)
        url = s3.upload(store, f"s3://{s3.bucket()}/{store.name}")
        rows.append(_first_and_again("S3, listed (no consolidated metadata)", url,
                                     {"storage_options": s3.storage_options}, root, runs, None, None))
    return rows


def _first_and_again(label: str, url: str, options: dict[str, Any], root: pathlib.Path, runs: int,
                     count: Any, reset: Any) -> dict[str, Any]:
    first_runs, again_runs, requests = [], [], None
    for rnd in range(runs):
        with catalogue.open(str(root / f"{label[:4]}-{rnd}.db")) as cat:
            first, report = timed(lambda cat=cat: cat.harvest(url, **options))
            assert report.ok, report.summary()
            if reset:
                reset()
            again, report2 = timed(lambda cat=cat: cat.harvest(url, **options))
            assert report2.unchanged, report2.summary()
            requests = count() if count else None
        first_runs.append(first)
        again_runs.append(again)
        print(f"  {label} round {rnd + 1}/{runs}: first {first:.2f} s, no-change re-harvest {again:.3f} s", flush=True)
    return {"source": label, "first_s": statistics.median(first_runs), "again_s": statistics.median(again_runs),
            "again_vs_first": statistics.median(a / f for a, f in zip(again_runs, first_runs, strict=True)),
            "requests_again": requests}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arrays", type=int, default=4900)
    parser.add_argument("--groups", type=int, default=99)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[16, 64])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--json", type=pathlib.Path, default=RESULTS)
    args = parser.parse_args(argv)
    results = bench(args)
    print(f"\nHTTP harvest of {results['nodes']:,} nodes (no consolidated metadata, nodes listed in the source); "
          f"loopback server; median of {args.runs} rounds")
    print(f"{'concurrency':>11} {'first s':>8} {'nodes/s':>8} {'again s':>8} {'nodes/s':>8} {'again/first':>11} {'requests':>9}")
    for row in results["rows"]:
        print(f"{row['concurrency']:>11} {row['first_s']:8.2f} {row['first_nodes_per_s']:8.0f} {row['again_s']:8.2f} "
              f"{row['again_nodes_per_s']:8.0f} {row['again_vs_first']:10.2f}x {row['requests_first']:>9}")
    print("\nNo-change re-harvest where the source's state can be checked (same store, same rounds)")
    print(f"{'source':>40} {'first s':>8} {'again s':>8} {'again/first':>11} {'requests':>9}")
    for row in results["unchanged"]:
        requests = "1 listing" if row["requests_again"] is None else str(row["requests_again"])
        print(f"{row['source']:>40} {row['first_s']:8.2f} {row['again_s']:8.3f} {row['again_vs_first']:10.3f}x {requests:>9}")
    results["environment"] = environment(("zarr-catalogue", "fsspec", "aiohttp", "rdflib", "sqlalchemy"))
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    print(f"results: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
