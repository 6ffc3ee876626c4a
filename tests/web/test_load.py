"""Load test: 50 concurrent clients for 20 seconds of discovery queries on 500 datasets.

The server is ``catalogue serve`` in its own process (bench/web_load.py), so
this also tests the command operators run. Every request must succeed; the
latencies (p50/p95/p99 per endpoint) are printed in the run's summary and
kept in ``build/test-artifacts/web_load.json``. Under pytest-xdist the
measurement is reported as it is: the other worker competes for the CPU.
"""

from __future__ import annotations

import json

import pytest

from bench import web_load
from tests.support.measurements import report_measurement
from tests.support.paths import (  # bench/ (not an installed package) is found through pyproject's pythonpath
    ARTIFACTS,
    REPO,
)


@pytest.mark.slow
def test_fifty_clients_for_twenty_seconds_without_errors(tmp_path):
    from bench.web_data import build_catalogue

    db = tmp_path / "web.db"
    iris = build_catalogue(str(db), 500, folder=tmp_path / "stores")
    assert len(iris) == 500
    with web_load.server_process(db) as base:
        results = web_load.run_load(base, clients=50, seconds=20)
    endpoints = results["endpoints"]
    assert set(endpoints) == {"datasets", "sparql"}
    for label, row in endpoints.items():
        assert row["errors"] == 0, (label, row["error_examples"])
        assert row["requests"] > 50, (label, row)  # every client got answers, not just a few
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / "web_load.json").write_text(json.dumps(results, indent=2))
    for line in web_load.report(results).splitlines():
        report_measurement(f"load test (500 datasets): {line}")


def test_serve_with_several_processes(tmp_path):
    """``catalogue serve --processes 2``: worker processes get the settings and answer."""
    import httpx

    import catalogue

    db = tmp_path / "c.db"
    with catalogue.open(str(db)) as cat:
        cat.harvest(str(REPO / "examples" / "cf_sea_surface_v2.zarr"))
    with web_load.server_process(db, extra=["--processes", "2", "--max-results", "3"]) as base:
        for _ in range(10):
            assert httpx.get(f"{base}/datasets", params={"q": "sea"}, timeout=30).json()["total"] == 1
        # the settings reached the workers: the result cap of 3 rows applies
        too_many = httpx.get(f"{base}/sparql", params={"query": "SELECT * WHERE { ?s ?p ?o }"}, timeout=30)
        assert too_many.status_code == 413, too_many.text
