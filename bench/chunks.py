"""How fast does the catalogue resolve and read chunks, next to plain Python and zarr-python?

Usage (from the repository root; ``make bench-chunks`` runs the first line)::

    .venv/bin/python bench/chunks.py
    .venv/bin/python bench/chunks.py --runs 7 --size-mb 500 --chunks-million 8
    .venv/bin/python bench/chunks.py --only read --data /tmp/chunks-data --json /tmp/chunks.json
    .venv/bin/python bench/chunks.py --quick --runs 1 --warmup 0      # a smoke run, seconds

Why: ``catalogue resolve`` and ``catalogue read`` (``Catalogue.resolve`` / ``.read``)
answer from the catalogued metadata alone, then touch only the chunks a selection
needs.  Absolute seconds depend on the machine, so every figure is also given as a
ratio to a reference measured in the same process and the same rounds.

Two benchmarks:

1. **Resolution.**  Arrays whose metadata declares a grid of ``--chunks-million``
   million chunks (default 1.0: shape (1000, 1000, 1000), chunks (10, 10, 10), float32;
   metadata only, written by zarr-python), Zarr v3 and v2.  Timed:
   ``resolve_selection(layout, sel)`` + ``.keys()`` + ``.indices()`` (the vectorised
   resolution), against the naive Python way, a list comprehension over
   ``itertools.product`` building the same key strings with ``"/".join`` (``"."`` for v2).
   Then ``Catalogue.resolve(iri)`` (the whole JSON-ready answer: layout from the graph,
   one listing of the store, one dict per chunk) on an array with a tenth of the chunks,
   next to its parts.
2. **Read throughput.**  A ``--size-mb`` (default 200) float32 array (5000 x 10000,
   chunks 500 x 1000: smooth waves plus noise, quantised to 1/1024 so that it compresses
   about 3x with zstd) written by zarr-python three times: v3 (default codecs: bytes +
   zstd), v2 (``numcodecs.Blosc()``: lz4, shuffle) and v3 sharded (shards 1000 x 2000 of
   500 x 1000 chunks), each harvested into one fresh SQLite catalogue.  For each, and for
   the full array, a chunk-aligned part, an unaligned part and a strided selection:
   ``Catalogue.read(iri, sel)`` against ``zarr.open_array(path, mode="r")[sel]``.  Both
   results are compared with ``np.array_equal`` once, untimed, before the rounds.

Each measurement runs ``--warmup`` untimed rounds, then ``--runs`` rounds with the
steps in alternating order (A B, then B A ...); ratios are the median over rounds of
the ratio *within* a round.  Data generation, harvesting and ``catalogue.open`` are
outside every timed section.  The stores are written to a temporary folder (removed
afterwards) or, with ``--data DIR``, kept there and reused by later runs with the same
sizes.  The files are read through the page cache (they were just written), so the
figures are CPU costs, not disk speed.  Results go to ``bench/results/chunks.json``
(git-ignored) or to ``--json PATH``; the exit status is 1 when a result differs.
"""

from __future__ import annotations

import argparse
import gc
import itertools
import json
import math
import os
import pathlib
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import numpy as np

REPO = pathlib.Path(__file__).resolve().parent.parent
# The checkout itself is what is measured; ``python bench/chunks.py`` puts only bench/ on the path.
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import numcodecs  # noqa: E402
import zarr  # noqa: E402

import catalogue  # noqa: E402
from bench.common import environment, interleaved_rounds, timed  # noqa: E402
from catalogue.chunks.resolve import resolve_selection  # noqa: E402
from catalogue.storage.opening import open_store  # noqa: E402

RESULTS = REPO / "bench" / "results" / "chunks.json"
ARRAY = "data"  # every store here is a root group holding one array of this name
DATA_MARKER = "chunks-bench.json"  # what --data DIR holds, to know when it can be reused
QUICK = {"size_mb": 2.0, "chunks_million": 0.001}
MB = 1e6


# ------------------------------------------------------------------ helpers
def iri_of(store: pathlib.Path) -> str:
    """The catalogue IRI of the store's array: root URL, slash, node path."""
    return store.absolute().as_uri() + "/" + ARRAY


def summarise(values: list[float]) -> dict[str, Any]:
    return {"median_s": statistics.median(values), "min_s": min(values), "max_s": max(values), "runs_s": values}


def paired_ratio(numerator: list[float], denominator: list[float]) -> float:
    """Median over rounds of the within-round ratio (cancels slow drift of the machine)."""
    return statistics.median(n / d for n, d in zip(numerator, denominator, strict=True))


def folder_bytes(path: pathlib.Path) -> int:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file())


def fmt_rate(value: float) -> str:
    """Chunks per second, readable from a thousand to a hundred million."""
    if value >= 1e6:
        return f"{value / 1e6:.2f} M/s"
    if value >= 1e3:
        return f"{value / 1e3:.1f} k/s"
    return f"{value:.0f} /s"


def _printer(prefix: str) -> Callable[[str, dict[str, float]], None]:
    def report(label: str, this_round: dict[str, float]) -> None:
        print(f"  {prefix} {label}: " + ", ".join(f"{k} {v:.3f} s" for k, v in this_round.items()), flush=True)

    return report


# --------------------------------------------------------------- resolution
@dataclass(frozen=True)
class ResolveCase:
    """One resolution measurement: which array, which selection (as text and as a tuple)."""

    name: str
    store: str  # "v3" or "v2"
    text: str | None
    items: tuple[object, ...]  # the same selection as Python objects, for the naive reference


def resolve_cases(grid: int) -> list[ResolveCase]:
    """The full selection on v3 and v2; two strided ones (step within, and beyond, a chunk)."""
    cases = [
        ResolveCase("v3, everything", "v3", None, ()),
        ResolveCase("v2, everything", "v2", None, ()),
        ResolveCase("v3, '::3, :, 5'", "v3", "::3, :, 5", (slice(None, None, 3), slice(None), 5)),
    ]
    if grid >= 4:  # a step of 3 chunks needs a few chunks to skip
        cases.append(
            ResolveCase("v3, '::30, ::-1, :'", "v3", "::30, ::-1, :", (slice(None, None, 30), slice(None, None, -1), slice(None)))
        )
    return cases


def naive_axes(items: tuple[object, ...], shape: tuple[int, ...], chunks: tuple[int, ...]) -> list[list[int]]:
    """Per dimension, the sorted chunk indices a selection touches, the plain Python way."""
    items = items + (slice(None),) * (len(shape) - len(items))
    axes = []
    for item, n, c in zip(items, shape, chunks, strict=True):
        if isinstance(item, int):
            axes.append([(item % n) // c])
        else:
            assert isinstance(item, slice)
            axes.append(sorted({i // c for i in range(*item.indices(n))}))
    return axes


def naive_keys(fmt: str, items: tuple[object, ...], shape: tuple[int, ...], chunks: tuple[int, ...]) -> list[str]:
    """The reference: one key string per chunk, built by a list comprehension."""
    axes = naive_axes(items, shape, chunks)
    if fmt == "v3":
        return ["/".join(("c", *map(str, index))) for index in itertools.product(*axes)]
    return [".".join(map(str, index)) for index in itertools.product(*axes)]


def vectorised(layout: Any, text: str | None) -> tuple[dict[str, float], Any, Any]:
    """The catalogue's resolution, timed in its three parts."""
    t_resolve, resolution = timed(lambda: resolve_selection(layout, text))
    t_keys, keys = timed(resolution.keys)
    t_indices, indices = timed(resolution.indices)
    times = {"resolve": t_resolve, "keys": t_keys, "indices": t_indices}
    return times, keys, indices


def write_resolution_stores(folder: pathlib.Path, grid: int) -> dict[str, pathlib.Path]:
    """Metadata-only arrays of grid**3 chunks (v3, v2), and one of grid**3 / 10 for ``cat.resolve``."""
    shape, chunks = (10 * grid,) * 3, (10, 10, 10)
    out: dict[str, pathlib.Path] = {}
    for fmt in ("v3", "v2"):
        path = folder / f"resolve-{fmt}.zarr"
        zarr.create_array(store=str(path), name=ARRAY, shape=shape, chunks=chunks, dtype="f4",
                          zarr_format=3 if fmt == "v3" else 2)
        out[fmt] = path
    # The whole-answer path: a tenth of the chunks, and a corner of them written, so that the
    # listing finds some chunks present and the rest are reported as fill.
    path = folder / "resolve-json.zarr"
    small = (10 * max(1, grid // 10), 10 * grid, 10 * grid)
    array = zarr.create_array(store=str(path), name=ARRAY, shape=small, chunks=chunks, dtype="f4", zarr_format=3)
    corner = tuple(slice(0, max(10, min(s // 2, 100))) for s in small[1:])
    array[(slice(0, 10), *corner)] = 1.0
    out["json"] = path
    return out


def bench_resolve_case(cat: Any, case: ResolveCase, store: pathlib.Path, runs: int, warmup: int) -> dict[str, Any]:
    iri = iri_of(store)
    layout = cat.layout(iri)
    shape, chunks = layout.shape, layout.chunk_shape

    # Same keys, same order, same indices: checked once, untimed.
    _, keys, indices = vectorised(layout, case.text)
    reference = naive_keys(case.store, case.items, shape, chunks)
    axes = naive_axes(case.items, shape, chunks)
    same = keys.tolist() == reference and indices.tolist() == [list(i) for i in itertools.product(*axes)]
    count = len(reference)
    del keys, indices, reference

    def run_vectorised() -> dict[str, Any]:
        parts, _, _ = vectorised(layout, case.text)
        return {"vectorised": sum(parts.values()), **parts}

    def run_naive() -> dict[str, Any]:
        seconds, _ = timed(lambda: naive_keys(case.store, case.items, shape, chunks))
        return {"naive": seconds}

    samples, _ = interleaved_rounds([run_vectorised, run_naive], runs, warmup, _printer(case.name))
    vec, naive = samples["vectorised"], samples["naive"]
    med_vec, med_naive = statistics.median(vec), statistics.median(naive)
    return {
        "store": case.store,
        "selection": case.text or "",
        "shape": list(shape),
        "chunk_shape": list(chunks),
        "chunks": count,
        "same_as_naive": same,
        "vectorised": {**summarise(vec), "chunks_per_s": count / med_vec},
        "vectorised_parts_median_s": {k: statistics.median(samples[k]) for k in ("resolve", "keys", "indices")},
        "naive": {**summarise(naive), "chunks_per_s": count / med_naive},
        "speedup_vs_naive": paired_ratio(naive, vec),
        "speedup_vs_naive_of_medians": med_naive / med_vec,
    }


def bench_resolve_json(cat: Any, store: pathlib.Path, runs: int, warmup: int) -> dict[str, Any]:
    """``Catalogue.resolve(iri)`` whole, and its parts: layout from the graph, listing, vectorised."""
    iri = iri_of(store)
    answer = cat.resolve(iri)
    count, fill = answer["chunk_count"], answer["fill_chunks"]
    present = sum(1 for c in answer["chunks"] if not c["fill"])
    del answer
    layout = cat.layout(iri)

    def run_resolve() -> dict[str, Any]:
        seconds, _ = timed(lambda: cat.resolve(iri))
        return {"cat.resolve": seconds}

    def run_layout() -> dict[str, Any]:
        seconds, _ = timed(lambda: cat.layout(iri))
        return {"cat.layout": seconds}

    def run_listing() -> dict[str, Any]:
        seconds, _ = timed(lambda: open_store(layout.base_url).list_keys())
        return {"list store": seconds}

    def run_vectorised() -> dict[str, Any]:
        parts, _, _ = vectorised(layout, None)
        return {"vectorised": sum(parts.values())}

    steps = [run_resolve, run_layout, run_listing, run_vectorised]
    samples, _ = interleaved_rounds(steps, runs, warmup, _printer("cat.resolve"))
    timings = {key: summarise(values) for key, values in samples.items()}
    med = {key: t["median_s"] for key, t in timings.items()}
    return {
        "shape": list(layout.shape),
        "chunk_shape": list(layout.chunk_shape),
        "chunks": count,
        "fill_chunks": fill,
        "present_chunks": present,
        "timings": timings,
        "chunks_per_s": count / med["cat.resolve"],
        # What is left once the parts are taken away: one dict (key, URL, fill) per chunk.
        "entries_s": med["cat.resolve"] - med["cat.layout"] - med["list store"] - med["vectorised"],
        "vs_vectorised": paired_ratio(samples["cat.resolve"], samples["vectorised"]),
    }


def run_resolution(folder: pathlib.Path, chunks_million: float, runs: int, warmup: int) -> dict[str, Any]:
    grid = max(1, round(100 * chunks_million ** (1 / 3)))
    built, stores = timed(lambda: write_resolution_stores(folder, grid))
    print(f"resolution: grids of {grid}^3 = {grid ** 3:,} chunks (metadata only), written in {built:.2f} s", flush=True)
    with catalogue.open(str(folder / "resolve.db")) as cat:
        for path in stores.values():
            report = cat.harvest(str(path))
            if not report.ok:
                raise RuntimeError(f"harvest of {path} failed: {report.errors[:3]}")
        cases = {case.name: bench_resolve_case(cat, case, stores[case.store], runs, warmup) for case in resolve_cases(grid)}
        whole = bench_resolve_json(cat, stores["json"], runs, warmup)
    return {"grid": grid, "cases": cases, "cat_resolve": whole}


# --------------------------------------------------------------------- read
FORMATS = {
    "v3": "v3 (bytes + zstd)",
    "v2": "v2 (Blosc lz4, shuffle)",
    "v3-sharded": "v3 sharded (2x2 chunks/shard)",
}


def read_geometry(size_mb: float) -> dict[str, Any]:
    """Shape 1:2 of about ``size_mb`` MB of float32, chunks a tenth, shards a fifth of each side."""
    rows = max(20, round(math.sqrt(size_mb * MB / 4 / 2) / 20) * 20)
    cols = 2 * rows
    return {
        "shape": [rows, cols],
        "chunks": [rows // 10, cols // 10],
        "shards": [rows // 5, cols // 5],
        "nbytes": rows * cols * 4,
    }


def read_selections(rows: int, cols: int) -> dict[str, tuple[str | None, tuple[object, ...]]]:
    """Name -> (text for the catalogue, the same as a tuple for zarr-python)."""
    r0, r1, c0, c1 = rows // 5, 3 * rows // 5, cols // 5, 7 * cols // 10  # 1000:3000, 2000:7000
    dr, dc = rows // 40 + 3, cols // 40 + 7  # shifted off the chunk boundaries
    return {
        "full": (None, (slice(None), slice(None))),
        "partial": (f"{r0}:{r1}, {c0}:{c1}", (slice(r0, r1), slice(c0, c1))),
        "unaligned": (f"{r0 + dr}:{r1 + dr}, {c0 + dc}:{c1 + dc}", (slice(r0 + dr, r1 + dr), slice(c0 + dc, c1 + dc))),
        "strided": ("1::3, ::2", (slice(1, None, 3), slice(None, None, 2))),
    }


def generate_block(r0: int, r1: int, rows: int, cols: int) -> np.ndarray:
    """Rows ``r0:r1``: waves plus 1 % noise, rounded to 1/1024 (a 10-bit instrument, say)."""
    rng = np.random.default_rng(r0)
    y = np.arange(r0, r1, dtype=np.float32)[:, None] / np.float32(rows)
    x = np.arange(cols, dtype=np.float32)[None, :] / np.float32(cols)
    data = np.sin(np.float32(2 * np.pi) * (3 * y + 2 * x)) * np.cos(np.float32(10 * np.pi) * x * y)
    data += rng.standard_normal(data.shape, dtype=np.float32) * np.float32(0.01)
    return (np.round(data * 1024) / 1024).astype(np.float32)


def write_read_stores(folder: pathlib.Path, geometry: dict[str, Any]) -> dict[str, pathlib.Path]:
    rows, cols = geometry["shape"]
    chunks, shards = tuple(geometry["chunks"]), tuple(geometry["shards"])
    options: dict[str, dict[str, Any]] = {
        "v3": {"zarr_format": 3},
        "v2": {"zarr_format": 2, "compressors": numcodecs.Blosc()},
        "v3-sharded": {"zarr_format": 3, "shards": shards},
    }
    stores = {}
    for fmt, kwargs in options.items():
        path = folder / f"read-{fmt}.zarr"
        array = zarr.create_array(store=str(path), name=ARRAY, shape=(rows, cols), chunks=chunks, dtype="f4", **kwargs)
        for r0 in range(0, rows, shards[0]):  # whole shards at a time
            r1 = min(rows, r0 + shards[0])
            array[r0:r1] = generate_block(r0, r1, rows, cols)
        stores[fmt] = path
    return stores


def prepare_read_data(data_dir: pathlib.Path | None, scratch: pathlib.Path, geometry: dict[str, Any]) -> tuple[dict[str, pathlib.Path], float, bool]:
    """The three stores: reused from ``--data DIR`` when written there with the same geometry."""
    folder = data_dir or scratch
    marker = folder / DATA_MARKER
    wanted = {"geometry": geometry, "formats": list(FORMATS), "zarr": zarr.__version__}
    stores = {fmt: folder / f"read-{fmt}.zarr" for fmt in FORMATS}
    if data_dir is not None and marker.exists():
        try:
            if json.loads(marker.read_text()) == wanted and all(p.exists() for p in stores.values()):
                return stores, 0.0, True
        except (OSError, ValueError):
            pass
    folder.mkdir(parents=True, exist_ok=True)
    marker.unlink(missing_ok=True)
    for path in stores.values():  # only the stores this benchmark writes
        shutil.rmtree(path, ignore_errors=True)
    built, stores = timed(lambda: write_read_stores(folder, geometry))
    marker.write_text(json.dumps(wanted, indent=2) + "\n")
    return stores, built, False


def bench_read_case(cat: Any, store: pathlib.Path, text: str | None, items: tuple[object, ...],
                    runs: int, warmup: int, label: str) -> dict[str, Any]:
    iri, path = iri_of(store), str(store / ARRAY)

    def zarr_read() -> np.ndarray:
        return zarr.open_array(path, mode="r")[items]

    # Checked once, untimed (it also warms the page cache and both readers).
    ours, theirs = cat.read(iri, text), zarr_read()
    equal = ours.shape == theirs.shape and ours.dtype == theirs.dtype and bool(np.array_equal(ours, theirs))
    nbytes = theirs.nbytes
    del ours, theirs

    def run_catalogue() -> dict[str, Any]:
        seconds, _ = timed(lambda: cat.read(iri, text))
        return {"catalogue": seconds}

    def run_zarr() -> dict[str, Any]:
        seconds, _ = timed(zarr_read)
        return {"zarr": seconds}

    samples, _ = interleaved_rounds([run_catalogue, run_zarr], runs, warmup, _printer(label))
    ours_s, theirs_s = samples["catalogue"], samples["zarr"]
    return {
        "selection": text or "",
        "nbytes": nbytes,
        "equal": equal,
        "catalogue": {**summarise(ours_s), "mb_per_s": nbytes / MB / statistics.median(ours_s)},
        "zarr": {**summarise(theirs_s), "mb_per_s": nbytes / MB / statistics.median(theirs_s)},
        # time ratio: <= 1.0 means the catalogue is at least as fast as zarr-python
        "ratio": paired_ratio(ours_s, theirs_s),
        "ratio_of_medians": statistics.median(ours_s) / statistics.median(theirs_s),
    }


def run_read(folder: pathlib.Path, data_dir: pathlib.Path | None, size_mb: float, runs: int, warmup: int) -> dict[str, Any]:
    geometry = read_geometry(size_mb)
    rows, cols = geometry["shape"]
    stores, built, reused = prepare_read_data(data_dir, folder, geometry)
    how = f"reused from {data_dir}" if reused else f"written in {built:.1f} s"
    print(
        f"\nread: {rows} x {cols} float32 ({geometry['nbytes'] / MB:.0f} MB), chunks {geometry['chunks']}, "
        f"shards {geometry['shards']}; {how}",
        flush=True,
    )
    formats: dict[str, Any] = {}
    with catalogue.open(str(folder / "read.db")) as cat:
        for fmt, path in stores.items():
            harvest_s, report = timed(lambda path=path: cat.harvest(str(path)))
            if not report.ok:
                raise RuntimeError(f"harvest of {path} failed: {report.errors[:3]}")
            on_disk = folder_bytes(path)
            formats[fmt] = {
                "label": FORMATS[fmt],
                "store_bytes": on_disk,
                "compression_ratio": geometry["nbytes"] / on_disk,
                "harvest_s": harvest_s,
                "selections": {},
            }
            for name, (text, items) in read_selections(rows, cols).items():
                formats[fmt]["selections"][name] = bench_read_case(
                    cat, path, text, items, runs, warmup, f"{fmt} {name}"
                )
    return {"geometry": geometry, "write_s": built, "reused_data": reused, "formats": formats}


# ------------------------------------------------------------------- tables
def print_resolution(result: dict[str, Any], runs: int, warmup: int) -> None:
    print(
        f"\nResolution (vectorised = resolve_selection + .keys() + .indices(); naive = list comprehension "
        f"with str.join): median of {runs} rounds after {warmup} warm-up"
    )
    print(f"  {'case':22} {'chunks':>10} {'vectorised s':>13} {'chunks/s':>11} {'naive s':>9} {'chunks/s':>11} {'speed-up':>9} {'same':>5}")
    for name, c in result["cases"].items():
        print(
            f"  {name:22} {c['chunks']:10,d} {c['vectorised']['median_s']:13.4f} {fmt_rate(c['vectorised']['chunks_per_s']):>11} "
            f"{c['naive']['median_s']:9.3f} {fmt_rate(c['naive']['chunks_per_s']):>11} {c['speedup_vs_naive']:8.1f}x "
            f"{'yes' if c['same_as_naive'] else 'NO':>5}"
        )
    for name, c in result["cases"].items():
        p = c["vectorised_parts_median_s"]
        print(f"    {name}: resolve {p['resolve']:.4f} s, keys {p['keys']:.4f} s, indices {p['indices']:.4f} s")
    w = result["cat_resolve"]
    t = w["timings"]
    print(
        f"\nCatalogue.resolve(iri) on {w['chunks']:,} chunks (shape {tuple(w['shape'])}, {w['present_chunks']} present, "
        f"{w['fill_chunks']:,} fill): {t['cat.resolve']['median_s']:.3f} s = {fmt_rate(w['chunks_per_s'])}, "
        f"{w['vs_vectorised']:.1f}x the vectorised resolution"
    )
    print(
        f"  of which layout from the graph {t['cat.layout']['median_s']:.4f} s, store listing "
        f"{t['list store']['median_s']:.4f} s, vectorised {t['vectorised']['median_s']:.4f} s, "
        f"per-chunk entries (rest) {w['entries_s']:.3f} s"
    )


def print_read(result: dict[str, Any], runs: int, warmup: int) -> None:
    g = result["geometry"]
    print(
        f"\nRead throughput: {g['shape'][0]} x {g['shape'][1]} float32 = {g['nbytes'] / MB:.0f} MB, chunks {g['chunks']}; "
        f"Catalogue.read vs zarr.open_array(...)[sel]; MB/s of decoded data; median of {runs} rounds after {warmup} warm-up"
    )
    print(
        f"  {'format':38} {'selection':10} {'MB':>6} {'catalogue s':>12} {'MB/s':>7} {'zarr s':>8} {'MB/s':>7} "
        f"{'cat/zarr':>9} {'med/med':>8} {'equal':>6}"
    )
    for fmt in result["formats"].values():
        label = f"{fmt['label']} [{fmt['compression_ratio']:.1f}x]"
        for name, s in fmt["selections"].items():
            print(
                f"  {label:38} {name:10} {s['nbytes'] / MB:6.1f} {s['catalogue']['median_s']:12.3f} "
                f"{s['catalogue']['mb_per_s']:7.0f} {s['zarr']['median_s']:8.3f} {s['zarr']['mb_per_s']:7.0f} "
                f"{s['ratio']:8.2f}x {s['ratio_of_medians']:7.2f}x {'yes' if s['equal'] else 'NO':>6}"
            )
            label = ""
    print(
        "  [n.nx]: compression ratio on disk; cat/zarr: time ratio, median over rounds of the within-round "
        "ratio (<= 1.0: at least as fast); med/med: ratio of the median times"
    )
    sels = read_selections(*g["shape"])
    print("  selections: " + "; ".join(f"{k} {v[0] or '(all)'!r}" for k, v in sels.items()))


# --------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> int:
    """Write the stores, time them, print the tables and write the JSON (``argv`` for tests)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5, help="timed rounds (default 5)")
    parser.add_argument("--warmup", type=int, default=1, help="untimed rounds first (default 1)")
    parser.add_argument("--size-mb", type=float, default=None, help="size of the array read (default 200; --quick 2)")
    parser.add_argument(
        "--chunks-million", type=float, default=None, help="chunks in the resolution grid, in millions (default 1.0; --quick 0.001)"
    )
    parser.add_argument("--quick", action="store_true", help="tiny sizes, for a smoke test")
    parser.add_argument("--only", choices=("resolve", "read"), help="run one of the two benchmarks")
    parser.add_argument("--data", type=pathlib.Path, metavar="DIR", help="write the read stores there and reuse them (not removed)")
    parser.add_argument(
        "--json", type=pathlib.Path, default=RESULTS, metavar="PATH",
        help=f"write the figures there (default {RESULTS.relative_to(REPO)})",
    )
    args = parser.parse_args(argv)
    size_mb = args.size_mb if args.size_mb is not None else QUICK["size_mb"] if args.quick else 200.0
    chunks_million = args.chunks_million if args.chunks_million is not None else QUICK["chunks_million"] if args.quick else 1.0
    if args.runs < 1 or args.warmup < 0 or size_mb <= 0 or chunks_million <= 0:
        parser.error("--runs must be >= 1, --warmup >= 0, --size-mb and --chunks-million > 0")

    document: dict[str, Any] = {
        "benchmark": "chunks",
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
        "parameters": {
            "runs": args.runs,
            "warmup": args.warmup,
            "size_mb": size_mb,
            "chunks_million": chunks_million,
            "quick": args.quick,
            "only": args.only,
            "database": "sqlite (one fresh file per benchmark)",
        },
    }
    # The modules loaded so far (rdflib, zarr, SQLAlchemy ...) are moved out of the garbage
    # collector's way, so that the collection ``timed`` runs before each step takes
    # milliseconds rather than a tenth of a second (in a test process, more).
    gc.collect()
    gc.freeze()
    try:
        with tempfile.TemporaryDirectory(prefix="catalogue-bench-chunks-") as tmp:
            scratch = pathlib.Path(tmp)
            if args.only in (None, "resolve"):
                (scratch / "resolve").mkdir()
                document["resolution"] = run_resolution(scratch / "resolve", chunks_million, args.runs, args.warmup)
            if args.only in (None, "read"):
                (scratch / "read").mkdir()
                document["read"] = run_read(scratch / "read", args.data, size_mb, args.runs, args.warmup)
    finally:
        gc.unfreeze()

    if "resolution" in document:
        print_resolution(document["resolution"], args.runs, args.warmup)
    if "read" in document:
        print_read(document["read"], args.runs, args.warmup)

    failures = [name for name, c in document.get("resolution", {}).get("cases", {}).items() if not c["same_as_naive"]]
    failures += [
        f"read {fmt} {name}"
        for fmt, f in document.get("read", {}).get("formats", {}).items()
        for name, s in f["selections"].items()
        if not s["equal"]
    ]
    document["ok"] = not failures
    document["failures"] = failures
    document["notes"] = {
        "vectorised": "resolve_selection(layout, sel) + .keys() + .indices(); layout taken from the catalogue untimed",
        "naive": "list comprehension over itertools.product of per-dimension chunk indices, key = str.join",
        "speedup_vs_naive": "naive / vectorised seconds, median of within-round ratios",
        "cat_resolve": "Catalogue.resolve(iri): layout from the graph, store listing, one dict per chunk",
        "read.catalogue": "Catalogue.read(iri, sel) (layout from the graph, fetch, decode, assemble)",
        "read.zarr": "zarr.open_array(path, mode='r')[sel] (open included)",
        "read.ratio": "catalogue / zarr seconds, median of within-round ratios; <= 1.0 is at least as fast",
        "mb_per_s": "decoded bytes of the selection (1 MB = 1e6 bytes) / median seconds",
    }
    document["environment"] = {
        **environment(("zarr-catalogue", "zarr", "numcodecs", "numpy", "fsspec", "sqlalchemy", "rdflib")),
        "zarr_config": {
            "async.concurrency": zarr.config.get("async.concurrency"),
            "threading.max_workers": zarr.config.get("threading.max_workers"),
        },
        "catalogue_read_workers": min(8, os.cpu_count() or 1),
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    if failures:
        print("MISMATCH: " + ", ".join(failures))
    print(f"results: {args.json}")
    return 0 if not failures else 1


if __name__ == "__main__":
    sys.exit(main())
