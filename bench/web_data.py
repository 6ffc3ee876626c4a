"""A synthetic catalogue for the web benchmarks and tests: many small, varied Zarr hierarchies.

``build_catalogue(db_url, n, seed)`` writes ``n`` hierarchies as bare metadata
documents (``zarr.json``, or ``.zgroup``/``.zarray``/``.zattrs``; no chunk data,
no zarr-python: plain ``json.dump`` is what makes 500 of them cheap), harvests
each into the catalogue at ``db_url`` and returns the dataset IRIs (the root
IRIs, which are also the graph names) in harvest order.

What varies, deterministically from ``seed``: Zarr v2 or v3 (about a third v2);
titles, summaries and keywords (keywords as a comma string, a semicolon string
or a JSON list, as real stores write them; some words accented, so search
folding is exercised); two to six CF variables with standard names, long names
and units over dimensions such as ``time``/``lat``/``lon``/``depth``; data types
(``float32``, ``float64``, ``int16``, ``uint8``...; ``<f4`` style in v2); codecs
(v3 ``bytes`` + ``zstd``/``gzip``/``blosc``/none or ``sharding_indexed``; v2
``blosc``/``zstd``/``zlib``/``gzip``/``lz4``/none compressors and ``delta``
filters); sometimes a sub-group. Every 25th dataset (index 7, 32, 57, ...) is
invalid (a v3 fill value its data type cannot hold, or v2 chunks of the wrong
rank), and every 40th (index 11, 51, ...) has a ``cf.coordinates`` warning.

Usage::

    .venv/bin/python -m bench.web_data --db /tmp/web.db -n 500     # prints the timing

Harvesting is one ``Catalogue.harvest`` per hierarchy (each its own
transaction and PROV record, as in production); on the 2-core reference
machine 500 datasets take about 30 s on SQLite (see ``docs/web.md``).
"""

from __future__ import annotations

import argparse
import json
import pathlib
import random
import tempfile
import time
from typing import Any

#: (name, standard_name, long_name, units, dimensions) of the data variables drawn from.
VARIABLES: list[tuple[str, str, str, str, tuple[str, ...]]] = [
    ("tas", "air_temperature", "Near-surface air temperature", "K", ("time", "lat", "lon")),
    ("pr", "precipitation_flux", "Precipitation", "kg m-2 s-1", ("time", "lat", "lon")),
    ("uas", "eastward_wind", "Eastward near-surface wind", "m s-1", ("time", "lat", "lon")),
    ("vas", "northward_wind", "Northward near-surface wind", "m s-1", ("time", "lat", "lon")),
    ("hurs", "relative_humidity", "Near-surface relative humidity", "%", ("time", "lat", "lon")),
    ("psl", "air_pressure_at_mean_sea_level", "Sea level pressure", "Pa", ("time", "lat", "lon")),
    ("sst", "sea_surface_temperature", "Sea surface temperature", "K", ("time", "lat", "lon")),
    ("siconc", "sea_ice_area_fraction", "Sea-ice area fraction", "1", ("time", "lat", "lon")),
    ("thetao", "sea_water_potential_temperature", "Potential température", "degC", ("time", "depth", "lat", "lon")),
    ("so", "sea_water_salinity", "Sea water salinity", "1e-3", ("time", "depth", "lat", "lon")),
    ("zos", "sea_surface_height_above_geoid", "Sea surface height", "m", ("time", "lat", "lon")),
    ("chl", "mass_concentration_of_chlorophyll_a_in_sea_water", "Chlorophyll-a", "mg m-3", ("time", "lat", "lon")),
    ("ndvi", "normalized_difference_vegetation_index", "Vegetation index", "1", ("time", "y", "x")),
    ("elev", "surface_altitude", "Surface elevation", "m", ("y", "x")),
]

#: Coordinate variables: name -> (standard_name, long_name, units, size).
COORDINATES: dict[str, tuple[str | None, str, str | None, int]] = {
    "time": ("time", "time", "days since 2000-01-01", 12),
    "lat": ("latitude", "latitude", "degrees_north", 18),
    "lon": ("longitude", "longitude", "degrees_east", 36),
    "depth": ("depth", "depth below sea surface", "m", 5),
    "y": ("projection_y_coordinate", "y coordinate", "m", 20),
    "x": ("projection_x_coordinate", "x coordinate", "m", 20),
}

THEMES = ["climate reanalysis", "ocean model", "sea ice", "land surface", "atmosphere", "hydrology",
          "biogeochemistry", "remote sensing", "weather forecast", "glacier"]
REGIONS = ["Global", "North Atlantic", "Arctic", "Mediterranean", "Pacific", "Southern Ocean",
           "Europe", "Alps", "Côte d'Azur", "Baltic Sea", "Andes", "Sahel"]
PERIODS = ["1981-2010", "2015-2100", "2020", "2021", "monthly 1990s", "daily 2022", "hourly 2023"]
KEYWORDS = ["climate", "ocean", "atmosphere", "temperature", "precipitation", "wind", "salinity",
            "sea ice", "reanalysis", "projection", "CMIP6", "observations", "satellite", "modèle",
            "température", "hydrology", "ecology", "forecast"]
INSTITUTIONS = ["Synthetic Data Institute", "Institut Océanographique Fictif", "Example Weather Service"]

V3_DTYPES = ["float32", "float64", "float32", "int16", "uint8", "float16", "int32"]
V2_DTYPES = {"float32": "<f4", "float64": "<f8", "int16": "<i2", "uint8": "|u1", "float16": "<f2",
             "int32": "<i4", "int64": "<i8"}
V3_FILL = {"float32": "NaN", "float64": "NaN", "float16": "NaN", "int16": 0, "uint8": 0, "int32": -1, "int64": 0}
V2_FILL = {"<f4": "NaN", "<f8": "NaN", "<f2": "NaN", "<i2": 0, "|u1": 0, "<i4": -1, "<i8": 0}


def _v3_codecs(rng: random.Random, chunks: list[int]) -> list[dict[str, Any]]:
    choice = rng.choice(["zstd", "gzip", "blosc", "none", "sharding", "zstd"])
    endian = {"name": "bytes", "configuration": {"endian": "little"}}
    if choice == "zstd":
        return [endian, {"name": "zstd", "configuration": {"level": rng.randint(1, 9), "checksum": False}}]
    if choice == "gzip":
        return [endian, {"name": "gzip", "configuration": {"level": 5}}]
    if choice == "blosc":
        return [endian, {"name": "blosc", "configuration": {
            "cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4, "blocksize": 0}}]
    if choice == "none":
        return [endian]
    inner = [c // 2 if c % 2 == 0 else c for c in chunks]  # must divide the shard shape
    return [{"name": "sharding_indexed", "configuration": {
        "chunk_shape": inner,
        "codecs": [endian, {"name": "zstd", "configuration": {"level": 3, "checksum": False}}],
        "index_codecs": [endian, {"name": "crc32c"}],
        "index_location": "end",
    }}]


def _v2_codecs(rng: random.Random, dtype: str) -> tuple[dict[str, Any] | None, list[dict[str, Any]] | None]:
    compressor = rng.choice([
        {"id": "blosc", "cname": "lz4", "clevel": 5, "shuffle": 1, "blocksize": 0},
        {"id": "zstd", "level": 3},
        {"id": "zlib", "level": 4},
        {"id": "gzip", "level": 5},
        {"id": "lz4", "acceleration": 1},
        None,
    ])
    filters = [{"id": "delta", "dtype": dtype}] if rng.random() < 0.2 else None
    return compressor, filters


def _array_v3(shape: list[int], chunks: list[int], dtype: str, dims: list[str], attrs: dict[str, Any],
              codecs: list[dict[str, Any]], fill: Any) -> dict[str, Any]:
    return {
        "zarr_format": 3, "node_type": "array", "shape": shape, "data_type": dtype,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": chunks}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill, "codecs": codecs, "attributes": attrs, "dimension_names": dims,
    }


def _write(path: pathlib.Path, doc: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f)


def _keywords(rng: random.Random, words: list[str]) -> Any:
    style = rng.randrange(3)
    if style == 0:
        return ", ".join(words)
    if style == 1:
        return "; ".join(words)
    return list(words)


def write_hierarchy(folder: pathlib.Path, index: int, rng: random.Random) -> pathlib.Path:
    """One synthetic hierarchy ``folder/ds-NNNN.zarr``; returns its root folder."""
    fmt = 2 if rng.random() < 0.35 else 3
    root = folder / f"ds-{index:04d}.zarr"
    theme, region, period = rng.choice(THEMES), rng.choice(REGIONS), rng.choice(PERIODS)
    chosen = rng.sample(VARIABLES, rng.randint(1, 4))
    words = list(dict.fromkeys([theme.split()[0], *rng.sample(KEYWORDS, rng.randint(1, 4))]))
    title = f"{region} {theme} {period} #{index}"
    summary = (f"Synthetic {theme} fields ({', '.join(v[2].lower() for v in chosen)}) over {region}, "
               f"{period}, dataset number {index}, written for the zarr-catalogue web benchmarks.")
    root_attrs: dict[str, Any] = {"title": title, "summary": summary, "keywords": _keywords(rng, words),
                                  "institution": rng.choice(INSTITUTIONS), "Conventions": "CF-1.8"}
    invalid = index % 25 == 7
    warned = index % 40 == 11
    nested = rng.random() < 0.25
    group_path = "fields" if nested else ""
    dims_used: dict[str, None] = {}
    arrays: dict[str, tuple[list[int], list[int], str, list[str], dict[str, Any]]] = {}
    for name, std, long_name, units, dims in chosen:
        shape = [COORDINATES[d][3] for d in dims]
        chunks = [max(1, s // rng.choice([1, 2, 3])) for s in shape]
        dtype = rng.choice(V3_DTYPES)
        attrs: dict[str, Any] = {"standard_name": std, "long_name": long_name, "units": units}
        if warned and not arrays:
            attrs["coordinates"] = "no_such_variable"
        path = f"{group_path}/{name}" if group_path else name
        arrays[path] = (shape, chunks, dtype, list(dims), attrs)
        dims_used.update(dict.fromkeys(dims))
    for dim in dims_used:
        std, long_name, units, size = COORDINATES[dim]
        attrs = {"long_name": long_name, **({"standard_name": std} if std else {}), **({"units": units} if units else {})}
        arrays[dim] = ([size], [size], "float64" if dim != "time" else "int64", [dim], attrs)
    broken = next(iter(p for p in arrays if p not in dims_used)) if invalid else None

    if fmt == 3:
        _write(root / "zarr.json", {"zarr_format": 3, "node_type": "group", "attributes": root_attrs})
        if nested:
            _write(root / group_path / "zarr.json", {"zarr_format": 3, "node_type": "group",
                                                     "attributes": {"description": f"{theme} fields"}})
        for path, (shape, chunks, dtype, dims, attrs) in arrays.items():
            fill: Any = V3_FILL[dtype]
            if path == broken:
                fill = "not a number"  # v3.fill_value: readable, catalogued, flagged invalid
            _write(root / path / "zarr.json", _array_v3(shape, chunks, dtype, dims, attrs,
                                                        _v3_codecs(rng, chunks), fill))
    else:
        _write(root / ".zgroup", {"zarr_format": 2})
        _write(root / ".zattrs", root_attrs)
        if nested:
            _write(root / group_path / ".zgroup", {"zarr_format": 2})
            _write(root / group_path / ".zattrs", {"description": f"{theme} fields"})
        for path, (shape, chunks, dtype, dims, attrs) in arrays.items():
            v2dtype = V2_DTYPES[dtype]
            compressor, filters = _v2_codecs(rng, v2dtype)
            if path == broken:
                chunks = [*chunks, 1]  # v2.chunks.rank
            _write(root / path / ".zarray", {
                "zarr_format": 2, "shape": shape, "chunks": chunks, "dtype": v2dtype,
                "compressor": compressor, "fill_value": V2_FILL[v2dtype], "order": "C", "filters": filters,
            })
            _write(root / path / ".zattrs", {**attrs, "_ARRAY_DIMENSIONS": dims})
    return root


def write_hierarchies(folder: pathlib.Path, n: int, seed: int = 0) -> list[pathlib.Path]:
    """Write ``n`` synthetic hierarchies under ``folder``; returns their root folders."""
    rng = random.Random(seed)
    return [write_hierarchy(folder, i, rng) for i in range(n)]


def build_catalogue(db_url: str, n: int, seed: int = 0, folder: str | pathlib.Path | None = None) -> list[str]:
    """Write ``n`` synthetic hierarchies and harvest them into ``db_url``; returns the dataset IRIs.

    The IRIs are in harvest order. Without ``folder`` the metadata files go to a
    temporary folder that is removed afterwards (the catalogue keeps everything
    the index and the pages need; only chunk resolution would miss the files).
    With ``folder`` they are written there and kept, so the IRIs are predictable.
    """
    import catalogue

    def harvest(where: pathlib.Path) -> list[str]:
        roots = write_hierarchies(where, n, seed)
        with catalogue.open(db_url) as cat:
            iris = [cat.harvest(str(root)).graph for root in roots]
            cat.store.analyze()  # plans made for an empty store are slow for a full one
            cat.store.commit()
        return iris

    if folder is not None:
        pathlib.Path(folder).mkdir(parents=True, exist_ok=True)
        return harvest(pathlib.Path(folder))
    with tempfile.TemporaryDirectory(prefix="web-data-") as tmp:
        return harvest(pathlib.Path(tmp))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", required=True, help="catalogue database (path or SQLAlchemy URL)")
    parser.add_argument("-n", type=int, default=500, help="datasets to write and harvest (default 500)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    iris = build_catalogue(args.db, args.n, args.seed)
    took = time.perf_counter() - start
    print(f"harvested {len(iris)} synthetic datasets into {args.db} in {took:.1f} s "
          f"({1000 * took / max(1, len(iris)):.0f} ms each)")


if __name__ == "__main__":
    main()
