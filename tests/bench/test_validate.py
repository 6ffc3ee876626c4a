"""Smoke test of the validation benchmark (bench/validate.py) at a tiny size.

Why it is a test: a benchmark that nobody runs rots silently when the APIs it calls
change (``load_hierarchy``, ``validate_hierarchy``, ``Catalogue.harvest(validate=...)``).
This runs its ``main`` in-process on 20 arrays, one round, and checks that the JSON
it writes and the table it prints carry every figure, as positive numbers.  The
timings themselves are not checked: at this size they are noise.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from bench import validate as bench_validate

ARRAYS, GROUPS = 20, 2
NODES = 1 + GROUPS + ARRAYS  # root, groups, arrays


def _positive(value: Any) -> bool:
    return isinstance(value, int | float) and math.isfinite(value) and value > 0


def test_validate_benchmark_runs_and_reports(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "validate.json"
    argv = ["--arrays", str(ARRAYS), "--groups", str(GROUPS), "--runs", "1", "--warmup", "0"]
    assert bench_validate.main([*argv, "--json", str(out)]) == 0

    document = json.loads(out.read_text())
    assert document["benchmark"] == "validate"
    assert document["parameters"]["arrays"] == ARRAYS
    assert set(document["stores"]) == {"v3", "v2"}
    for name, store in document["stores"].items():
        assert store["nodes"] == NODES, name
        assert store["findings"] >= 0
        assert store["triples_validated"] >= store["triples"] > 0
        assert set(store["timings"]) == set(bench_validate.STEPS)
        for step, timing in store["timings"].items():
            for key in ("median_s", "min_s", "max_s", "nodes_per_s"):
                assert _positive(timing[key]), (name, step, key, timing[key])
            assert len(timing["runs_s"]) == 1
        for key, ratio in store["ratios"].items():
            assert _positive(ratio), (name, key, ratio)

    printed = capsys.readouterr().out
    assert "validate-only throughput / harvest (no validation) throughput" in printed
    assert "harvest with validation / without (time)" in printed
    assert f"results: {out}" in printed


def test_validate_benchmark_without_v2(tmp_path: Path) -> None:
    out = tmp_path / "validate.json"
    argv = ["--arrays", "3", "--groups", "0", "--runs", "1", "--warmup", "0", "--no-v2"]
    assert bench_validate.main([*argv, "--json", str(out)]) == 0
    document = json.loads(out.read_text())
    assert set(document["stores"]) == {"v3"}
    assert document["stores"]["v3"]["nodes"] == 4
