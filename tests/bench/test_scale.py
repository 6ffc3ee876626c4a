"""Smoke tests of the scale benchmarks (``bench/search_scale.py``, ``bench/harvest_jobs.py``)
at a tiny size.

Why they are tests: issue figures and ``docs/web.md`` / ``docs/harvesting.md`` quote these
benchmarks, and a benchmark nobody runs rots when the commands and APIs it drives change
(``catalogue load``, ``serve``, ``stats --json``, ``harvest --config --jobs``). Each runs its
``main`` in-process on a few datasets or stores and checks that every figure it reports is
there and plausible (every dataset found, no request failed); the timings themselves are
noise at this size and are not checked.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from bench import harvest_jobs, search_scale

pytestmark = pytest.mark.slow


def _positive(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(value) and value > 0


def test_search_scale_benchmark_runs_and_reports(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(search_scale, "DATA", tmp_path / "data")  # not bench/data
    out = tmp_path / "search_scale.json"
    argv = ["--catalogues", "extents", "--datasets", "60", "--db", "sqlite", "--searches", "4", "--clients", "2",
            "--seconds", "0.5", "--json", str(out)]
    assert search_scale.main(argv) == 0
    (row,) = json.loads(out.read_text())["rows"]
    assert row["stats"]["datasets"] == 60 and row["stats"]["index_bytes"] > 0
    for key in ("load_s", "start_s", "rss_mb"):
        assert _positive(row[key]), key
    for key in ("one_client_full", "one_client_text", "one_client_full_served"):
        assert row[key]["requests"] == 4 and _positive(row[key]["p50_ms"]), key
    for key in ("clients_cached", "clients_uncached"):
        assert row[key]["requests"] > 0 and row[key]["errors"] == 0, row[key]
    assert row["searchable"]["rounds"] == 5 and row["searchable"]["max_s"] < 30
    table = capsys.readouterr().out.splitlines()
    assert table[-1].startswith("| extents | sqlite | 60 |"), table[-3:]


def test_harvest_jobs_benchmark_runs_and_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "harvest_jobs.json"
    assert harvest_jobs.main(["--stores", "6", "--jobs", "1", "2", "--rounds", "1", "--db", "sqlite",
                              "--json", str(out)]) == 0
    results = json.loads(out.read_text())
    assert [row["jobs"] for row in results["rows"]] == [1, 2]
    for row in results["rows"]:
        assert _positive(row["median_s"]) and _positive(row["stores_per_s"]) and _positive(row["throughput_vs_first"])
    assert results["rows"][0]["throughput_vs_first"] == 1
    assert "| 2 |" in capsys.readouterr().out
