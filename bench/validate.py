"""How fast is validation, next to harvesting the same hierarchy without it?

Usage (from the repository root; ``make bench-validate`` runs the first line)::

    .venv/bin/python bench/validate.py
    .venv/bin/python bench/validate.py --arrays 5000 --groups 50 --runs 7
    .venv/bin/python bench/validate.py --no-v2 --json /tmp/validate.json

Why: validation runs inside every ``catalogue harvest`` by default, so its cost is
paid on every harvest.  Absolute seconds depend on the machine, so the figures that
matter are ratios to a harvest *without* validation, measured in the same process
and the same rounds.

The v3 store is written to a temporary folder by ``tests/support/stores.big_v3_hierarchy``
(metadata only, written by zarr-python); unless ``--no-v2``, a Zarr v2 twin (same
groups, arrays and CF attributes, plus ``_ARRAY_DIMENSIONS``) is written by
zarr-python too (``stores.big_hierarchy(..., zarr_format=2)``).  For each store, after ``--warmup`` untimed rounds, ``--runs``
rounds each time once:

* ``read``       ``catalogue.harvest.load_hierarchy(store)``
* ``validate``   ``catalogue.validate.validate_hierarchy(h)`` on a hierarchy loaded
  beforehand (the load is not timed)
* ``harvest``    ``catalogue.open(<fresh SQLite file>).harvest(store, validate=False)``
* ``validated``  the same with ``validate=True`` (the default): validation plus
  the SHACL report stored in the graph

The order of the four alternates from round to round (A B C D, D C B A, ...) so that
machine noise and drift hit all of them alike, and ratios are the median over rounds
of the ratio *within* a round.  ``catalogue.open`` (schema creation) is outside the
timed section.  Results go to ``bench/results/validate.json`` (git-ignored) or to
``--json PATH``.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import json
import pathlib
import shutil
import statistics
import sys
import tempfile
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from typing import Any

REPO = pathlib.Path(__file__).resolve().parent.parent
# The repository itself first (the checkout is what is measured; tests.support holds the
# store builders).  Running ``python bench/validate.py`` puts only bench/ on the path.
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import catalogue  # noqa: E402
from bench.common import environment, interleaved_rounds, timed  # noqa: E402
from catalogue.harvest import load_hierarchy  # noqa: E402
from catalogue.model.nodes import Hierarchy  # noqa: E402
from catalogue.validate import validate_hierarchy  # noqa: E402
from tests.support import stores  # noqa: E402

RESULTS = REPO / "bench" / "results" / "validate.json"
PROFILE = "corrected"
STEPS = ("read", "validate", "harvest", "validated")
LABELS = {
    "read": "read only (load_hierarchy)",
    "validate": "validate only (validate_hierarchy)",
    "harvest": "harvest, validate=False",
    "validated": "harvest, validate=True",
}


# ----------------------------------------------------------------- runners


@contextlib.contextmanager
def _fresh_db(folder: pathlib.Path) -> Iterator[str]:
    """A new SQLite file per harvest: runs stay independent (no graph to replace)."""
    path = folder / f"run-{uuid.uuid4().hex[:12]}.db"
    try:
        yield str(path)
    finally:
        for leftover in folder.glob(path.name + "*"):  # -wal, -shm, -harvest-locks/
            if leftover.is_dir():
                shutil.rmtree(leftover)
            else:
                leftover.unlink()


def run_read(store: str) -> dict[str, Any]:
    """The reading every harvest and every validation starts with, for scale."""
    seconds, h = timed(lambda: load_hierarchy(store))
    return {"read": seconds, "_nodes": len(h.nodes), "_failed": len(h.failed)}


def run_validate(store: str) -> dict[str, Any]:
    """Validation alone: what ``validate=True`` adds before the SHACL report is stored."""
    h: Hierarchy = load_hierarchy(store)  # a fresh model each round, loaded untimed
    seconds, report = timed(lambda: validate_hierarchy(h, profile=PROFILE))
    return {"validate": seconds, "_findings": len(report.findings), "_report_nodes": report.nodes}


def _harvest(store: str, folder: pathlib.Path, validate: bool) -> tuple[float, Any]:
    """One harvest into a fresh database; ``catalogue.open`` (migrations) is not timed."""
    with _fresh_db(folder) as db, catalogue.open(db) as cat:
        seconds, report = timed(lambda: cat.harvest(store, validate=validate))
    if not report.ok:
        raise RuntimeError(f"harvest failed: {report.errors[:3]}")
    return seconds, report


def run_harvest(store: str, folder: pathlib.Path) -> dict[str, Any]:
    """The reference every ratio is taken against: a harvest without validation."""
    seconds, report = _harvest(store, folder, validate=False)
    return {"harvest": seconds, "_triples": report.triples}


def run_validated(store: str, folder: pathlib.Path) -> dict[str, Any]:
    """What ``catalogue harvest`` does by default; its findings are cross-checked."""
    seconds, report = _harvest(store, folder, validate=True)
    return {
        "validated": seconds,
        "_triples_validated": report.triples,
        "_harvest_findings": len(report.validation.findings),
    }


# ------------------------------------------------------------------ report
def summarise(runs: dict[str, list[float]], nodes: int) -> dict[str, Any]:
    """Medians and throughputs per step, and the two ratios paired round by round.

    A ratio is the median over rounds of the ratio within one round, which cancels
    slow drift of the machine; the ratio of the medians is kept alongside.
    """
    timings: dict[str, dict[str, Any]] = {}
    for key in STEPS:
        values = runs[key]
        median = statistics.median(values)
        timings[key] = {
            "median_s": median,
            "min_s": min(values),
            "max_s": max(values),
            "runs_s": values,
            "nodes_per_s": nodes / median,
        }
    pairs = list(zip(runs["validate"], runs["harvest"], runs["validated"], strict=True))
    speedup = statistics.median(h / v for v, h, _ in pairs)
    overhead = statistics.median(w / h for _, h, w in pairs)
    med = {key: timings[key]["median_s"] for key in STEPS}
    return {
        "nodes": nodes,
        "timings": timings,
        "ratios": {
            # nodes/s validating / nodes/s harvesting = harvest time / validate time
            "validate_vs_harvest_throughput": speedup,
            "validate_vs_harvest_throughput_of_medians": med["harvest"] / med["validate"],
            # time with validation / time without
            "harvest_validated_vs_harvest_time": overhead,
            "harvest_validated_vs_harvest_time_of_medians": med["validated"] / med["harvest"],
            # what the overhead would be if validating were all it added (no SHACL report)
            "expected_overhead_from_validate_only": 1 + med["validate"] / med["harvest"],
        },
    }


def print_table(name: str, summary: dict[str, Any]) -> None:
    """One store's steps, then the two ratios the benchmark exists for."""
    nodes = summary["nodes"]
    print(f"\nzarr {name}: {nodes} nodes, {summary['findings']} findings")
    print(f"  {'':36} {'median s':>9} {'min s':>8} {'nodes/s':>10}")
    for key in STEPS:
        t = summary["timings"][key]
        print(f"  {LABELS[key]:36} {t['median_s']:9.3f} {t['min_s']:8.3f} {t['nodes_per_s']:10,.0f}")
    r = summary["ratios"]
    print(
        f"  validate-only throughput / harvest (no validation) throughput = "
        f"{r['validate_vs_harvest_throughput']:.1f}x"
    )
    print(
        f"  harvest with validation / without (time) = {r['harvest_validated_vs_harvest_time']:.2f}x "
        f"(+{r['harvest_validated_vs_harvest_time'] - 1:.0%}; validating alone would add "
        f"+{r['expected_overhead_from_validate_only'] - 1:.0%})"
    )


def print_summary(results: dict[str, dict[str, Any]]) -> None:
    """One line per format, so that v3 and v2 compare at a glance."""
    print(
        f"\n{'format':8} {'nodes':>6} {'findings':>8} {'validate n/s':>13} {'harvest n/s':>12} "
        f"{'harvest+val n/s':>16} {'val/harvest thr':>16} {'overhead':>9}"
    )
    for name, s in results.items():
        t, r = s["timings"], s["ratios"]
        print(
            f"{name:8} {s['nodes']:6d} {s['findings']:8d} {t['validate']['nodes_per_s']:13,.0f} "
            f"{t['harvest']['nodes_per_s']:12,.0f} {t['validated']['nodes_per_s']:16,.0f} "
            f"{r['validate_vs_harvest_throughput']:15.1f}x "
            f"{r['harvest_validated_vs_harvest_time']:8.2f}x"
        )
    print(
        "val/harvest thr: nodes/s validating / nodes/s harvesting without validation; "
        "overhead: harvest time with / without validation (both median over rounds of the "
        "within-round ratio)"
    )




def bench_store(name: str, store: str, folder: pathlib.Path, runs: int, warmup: int) -> dict[str, Any]:
    """Warm-up and timed rounds on one store, the four steps in alternating order."""
    steps: list[Callable[[], dict[str, Any]]] = [
        lambda: run_read(store),
        lambda: run_validate(store),
        lambda: run_harvest(store, folder),
        lambda: run_validated(store, folder),
    ]
    def report(label: str, this_round: dict[str, float]) -> None:
        print(f"  zarr {name} {label}: " + ", ".join(f"{key} {this_round[key]:.3f} s" for key in STEPS), flush=True)

    samples, counts = interleaved_rounds(steps, runs, warmup, report)
    if counts["failed"]:
        raise RuntimeError(f"{name}: {counts['failed']} nodes could not be read")
    if counts["findings"] != counts["harvest_findings"]:
        raise RuntimeError(
            f"{name}: validate_hierarchy found {counts['findings']} findings, "
            f"the harvest {counts['harvest_findings']}"
        )
    summary = summarise(samples, counts["nodes"])
    summary.update(
        findings=counts["findings"],
        triples=counts["triples"],
        triples_validated=counts["triples_validated"],
    )
    return summary


# -------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    """Build the stores, time them, print the tables and write the JSON (``argv`` for tests)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--arrays", type=int, default=1000, help="arrays in the hierarchy (default 1000)")
    parser.add_argument("--groups", type=int, default=20, help="groups under the root (default 20)")
    parser.add_argument("--runs", type=int, default=5, help="timed rounds (default 5)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed rounds first (default 1)")
    parser.add_argument("--no-v2", action="store_true", help="skip the Zarr v2 twin of the hierarchy")
    parser.add_argument(
        "--json",
        type=pathlib.Path,
        default=RESULTS,
        metavar="PATH",
        help=f"write the figures there (default {RESULTS.relative_to(REPO)})",
    )
    args = parser.parse_args(argv)
    if args.runs < 1 or args.warmup < 0 or args.arrays < 1 or args.groups < 0:
        parser.error("--runs and --arrays must be >= 1; --warmup and --groups >= 0")

    results: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="catalogue-bench-validate-") as tmp:
        scratch = pathlib.Path(tmp)
        folder = scratch / "db"
        folder.mkdir()
        builders: list[tuple[str, Callable[[pathlib.Path, int, int], pathlib.Path]]] = [
            ("v3", stores.big_v3_hierarchy)
        ]
        if not args.no_v2:
            builders.append(("v2", functools.partial(stores.big_hierarchy, zarr_format=2)))
        for name, build in builders:
            built, store = timed(functools.partial(build, scratch, args.arrays, args.groups))
            print(f"zarr {name}: {args.arrays} arrays in {args.groups} groups, written in {built:.2f} s", flush=True)
            results[name] = bench_store(name, str(store), folder, args.runs, args.warmup)
            results[name]["build_s"] = built

    print(
        f"\nvalidation ({PROFILE} profile) vs harvest without validation: {args.arrays} arrays "
        f"in {args.groups} groups; SQLite, fresh file per harvest; median of {args.runs} "
        f"interleaved rounds after {args.warmup} warm-up"
    )
    for name, summary in results.items():
        print_table(name, summary)
    print_summary(results)

    document = {
        "benchmark": "validate",
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "parameters": {
            "arrays": args.arrays,
            "groups": args.groups,
            "runs": args.runs,
            "warmup": args.warmup,
            "profile": PROFILE,
            "database": "sqlite (fresh file per run)",
        },
        "stores": results,
        "notes": {
            "read": "catalogue.harvest.load_hierarchy(store)",
            "validate": "catalogue.validate.validate_hierarchy(h) on a hierarchy loaded untimed",
            "harvest": "catalogue.open(fresh db).harvest(store, validate=False); open not included",
            "validated": "catalogue.open(fresh db).harvest(store) (validate=True); open not included",
            "validate_vs_harvest_throughput": "nodes/s of validate / nodes/s of harvest, median of within-round ratios",
            "harvest_validated_vs_harvest_time": "validated / harvest seconds, median of within-round ratios",
        },
        "environment": environment(("zarr-catalogue", "zarr", "rdflib", "pyld", "sqlalchemy", "jsonschema")),
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    print(f"results: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
