"""Smoke test of the chunk benchmark (bench/chunks.py) at a tiny size.

Why it is a test: a benchmark that nobody runs rots silently when the APIs it calls
change (``resolve_selection``, ``Resolution.keys``/``indices``, ``Catalogue.layout``,
``.resolve``, ``.read``).  This runs its ``main`` in-process with ``--quick`` (a grid
of 1,000 chunks, a 2 MB array), one round, and checks that the JSON it writes carries
every figure as a positive number, that the vectorised keys equal the naive ones and
that every read equals zarr-python's.  The timings themselves are not checked: at
this size they are noise.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from bench import chunks as bench_chunks


def _positive(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and value > 0


def _check_timing(timing: dict[str, Any], where: object) -> None:
    for key in ("median_s", "min_s", "max_s"):
        assert _positive(timing[key]), (where, key, timing[key])
    assert len(timing["runs_s"]) == 1, where


def test_chunks_benchmark_runs_and_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "chunks.json"
    argv = ["--quick", "--runs", "1", "--warmup", "0", "--json", str(out)]
    assert bench_chunks.main(argv) == 0

    document = json.loads(out.read_text())
    assert document["benchmark"] == "chunks"
    assert document["ok"] is True and document["failures"] == []
    assert document["parameters"]["quick"] is True

    resolution = document["resolution"]
    assert resolution["grid"] == 10
    assert {"v3, everything", "v2, everything", "v3, '::3, :, 5'"} <= set(resolution["cases"])
    for name, case in resolution["cases"].items():
        assert case["same_as_naive"] is True, name
        assert case["chunks"] > 0
        for reader in ("vectorised", "naive"):
            _check_timing(case[reader], (name, reader))
            assert _positive(case[reader]["chunks_per_s"]), (name, reader)
        assert _positive(case["speedup_vs_naive"]), name
    assert resolution["cases"]["v3, everything"]["chunks"] == 1000
    whole = resolution["cat_resolve"]
    assert whole["chunks"] == whole["fill_chunks"] + whole["present_chunks"] == 100
    assert 0 < whole["present_chunks"] < 100  # the listing found some chunks, and some are fill
    for step in ("cat.resolve", "cat.layout", "list store", "vectorised"):
        _check_timing(whole["timings"][step], step)
    assert _positive(whole["chunks_per_s"]) and _positive(whole["vs_vectorised"])

    read = document["read"]
    assert read["geometry"]["shape"] == [500, 1000]
    assert set(read["formats"]) == {"v3", "v2", "v3-sharded"}
    for fmt, entry in read["formats"].items():
        assert _positive(entry["store_bytes"]) and _positive(entry["compression_ratio"]), fmt
        assert set(entry["selections"]) == {"full", "partial", "unaligned", "strided"}
        for name, case in entry["selections"].items():
            assert case["equal"] is True, (fmt, name)
            assert _positive(case["nbytes"]), (fmt, name)
            for reader in ("catalogue", "zarr"):
                _check_timing(case[reader], (fmt, name, reader))
                assert _positive(case[reader]["mb_per_s"]), (fmt, name, reader)
            assert _positive(case["ratio"]), (fmt, name)
        assert entry["selections"]["full"]["nbytes"] == read["geometry"]["nbytes"]

    printed = capsys.readouterr().out
    assert "Resolution (vectorised" in printed
    assert "Catalogue.resolve(iri) on 100 chunks" in printed
    assert "Read throughput" in printed and "cat/zarr" in printed
    assert "MISMATCH" not in printed
    assert f"results: {out}" in printed


def test_chunks_benchmark_reuses_data(tmp_path: Path) -> None:
    """``--data DIR`` keeps the read stores and a second run reuses them (``--only read``)."""
    data = tmp_path / "data"
    argv = ["--quick", "--runs", "1", "--warmup", "0", "--only", "read", "--size-mb", "0.1", "--data", str(data)]
    assert bench_chunks.main([*argv, "--json", str(tmp_path / "1.json")]) == 0
    assert (data / bench_chunks.DATA_MARKER).exists()
    assert bench_chunks.main([*argv, "--json", str(tmp_path / "2.json")]) == 0
    first, second = (json.loads((tmp_path / f"{n}.json").read_text()) for n in (1, 2))
    assert "resolution" not in first
    assert first["read"]["reused_data"] is False and second["read"]["reused_data"] is True
    assert second["ok"] is True
