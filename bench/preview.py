"""How long does a quicklook of a large array take, next to reading the array?

Usage (from the repository root; ``make bench-preview`` runs the first line)::

    .venv/bin/python bench/preview.py
    .venv/bin/python bench/preview.py --size-mb 1000 --runs 7
    .venv/bin/python bench/preview.py --raw     # one uncompressed chunk, as kerchunk keeps NetCDF-3

An array of ``--size-mb`` (default 100) float32 values (square, chunks of 500 x 500,
zstd, smooth waves plus noise) is written by zarr-python (v3) and harvested into a
fresh SQLite catalogue. Timed, in alternating order per round: ``Catalogue.preview``
(plan, bounded read within its 8 MiB budget, percentile scaling, PNG), and the
reference, zarr-python reading the whole array (``zarr.open_array(path)[:]``), which is
what drawing it without a budget would start with. Reported: medians in seconds, the
median ratio within rounds, the chunks the preview read and the picture's size. With
``--raw`` the array is one uncompressed chunk (as kerchunk's references keep a NetCDF-3
variable), which the preview reads as evenly spread rows, byte ranges of the chunk.
"""

from __future__ import annotations

import argparse
import math
import pathlib
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent))

import catalogue
from catalogue.chunks.preview import DEFAULT_MAX_BYTES, plan, sample


def write(path: pathlib.Path, size_mb: int, raw: bool = False) -> int:
    import zarr

    side = int(math.sqrt(size_mb * 1024 * 1024 / 4))
    if raw:
        array = zarr.create_array(str(path), shape=(side, side), chunks=(side, side), dtype="f4", compressors=None)
    else:
        array = zarr.create_array(str(path), shape=(side, side), chunks=(500, 500), dtype="f4")
    rng = np.random.default_rng(0)
    for row in range(0, side, 500):
        y = np.arange(row, min(row + 500, side))[:, None]
        x = np.arange(side)[None, :]
        block = np.sin(y / 700) * np.cos(x / 900) + rng.normal(0, 0.05, (len(y), side))
        array[row: row + len(y), :] = block.astype("f4")
    return side


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--size-mb", type=int, default=100)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--raw", action="store_true", help="one uncompressed chunk instead of 500 x 500 zstd chunks")
    args = parser.parse_args()
    import zarr

    with tempfile.TemporaryDirectory() as tmp:
        store = pathlib.Path(tmp) / "big.zarr"
        side = write(store, args.size_mb, args.raw)
        with catalogue.open(str(pathlib.Path(tmp) / "c.db")) as cat:
            cat.harvest(str(store))
            iri = store.as_uri()
            layout = cat.layout(iri)
            if args.raw:
                got = sample(layout, cat._chunk_store(layout), DEFAULT_MAX_BYTES)
                read = f"{got.values.shape[0]} rows of {side} read as byte ranges of the one chunk ({got.selection})"
                picks = list(got.values.shape)
            else:
                _leading, axes = plan(layout, DEFAULT_MAX_BYTES)
                picks = [sum(len(range(s.start, s.stop, s.step)) for s in axis.slices()) for axis in axes]
                chunks = math.prod(len(axis.chunks) for axis in axes)
                read = f"{chunks} chunks of {math.ceil(side / 500) ** 2} read ({', '.join(a.describe() for a in axes)})"
            cat.preview(iri)  # warm-up: imports, page cache
            previews, reads, ratios = [], [], []
            for round_ in range(args.runs):
                order = ("preview", "read") if round_ % 2 == 0 else ("read", "preview")
                took = {}
                for step in order:
                    start = time.perf_counter()
                    if step == "preview":
                        png = cat.preview(iri)
                    else:
                        zarr.open_array(str(store), mode="r")[:]
                    took[step] = time.perf_counter() - start
                previews.append(took["preview"])
                reads.append(took["read"])
                ratios.append(took["preview"] / took["read"])
    chunking = "one uncompressed chunk" if args.raw else "chunks 500 x 500, zstd"
    print(f"array {side} x {side} float32 ({side * side * 4 / 2**20:,.0f} MiB, {chunking})")
    print(f"preview: {statistics.median(previews):.3f} s (median of {args.runs}); {read}, "
          f"{picks[0]} x {picks[1]} samples, {len(png):,} bytes of PNG")
    print(f"zarr-python reading the whole array: {statistics.median(reads):.3f} s")
    print(f"preview / whole read: {statistics.median(ratios):.3f}")


if __name__ == "__main__":
    main()
