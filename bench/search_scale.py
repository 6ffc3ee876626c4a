"""Discovery at scale: the search index in the database, on large catalogues, SQLite and PostgreSQL.

Usage (from the repository root)::

    .venv/bin/python -m bench.search_scale                       # both catalogues, both databases
    .venv/bin/python -m bench.search_scale --catalogues extents --datasets 100000 --db sqlite
    .venv/bin/python -m bench.search_scale --catalogues extents --datasets 2000 --quick   # a smoke run

The catalogues (N-Quads, generated into ``bench/data/`` when missing, then bulk-loaded
with ``catalogue load``, which indexes every graph in the load's own transaction):

* ``scale10``: the SPARQL benchmark's scale-10 catalogue (``bench.sparql.generate --scale
  10``: about 2,000 datasets, 230,000 arrays, 10 million triples), shaped like harvests.
* ``extents``: ``--datasets`` (100,000 by default) small datasets with extents, written
  here as the harvest writes them (titles, summaries, keywords, 2 to 5 CF variables with
  coordinates, data types and codecs, a generating run with its end time in the provenance
  graph, a CRS84 box, 5% of them across the antimeridian, and a period), about 110
  triples each.

Measured for each, with ``catalogue serve`` in its own process on a free loopback port:

* **start**: seconds from starting the server to the first correct ``/datasets`` answer
  (``total`` equal to the catalogue's datasets);
* **memory**: the server's resident set (``VmHWM``, its peak) after the load;
* **one client**: p50/p95 of 200 distinct searches with text + bbox + datetime + 3 facet
  filters, each asked once (never from the server's answer cache), and the same for
  plain text searches; then 200 other full searches ("in service": the first searches
  after a load also bring the search tables into the database's caches);
* **50 clients for 20 s** (closed loop): a mix of those searches and the front page; req/s
  and errors, with the server's answer cache on (the default), and off (``--search-cache
  0``: every request is database work);
* **searchable after harvest**: a store is harvested (``catalogue harvest``) while the
  server runs; seconds from the harvest command's return to the first ``/datasets``
  answer that finds it (5 stores, median and max);
* sizes: ``catalogue stats`` (the index's tables and the whole database) and load time.

Results go to ``bench/results/search_scale.json``; ``docs/web.md`` quotes them.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import pathlib
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from typing import Any

REPO = pathlib.Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.common import environment, spawn_server, stop  # noqa: E402
from bench.sparql.generate import DCAT, DCT, PROV, RDF, RDFS, XSD, ZARR, Quads, integer, lit, typed  # noqa: E402
from bench.web_data import COORDINATES, KEYWORDS, REGIONS, THEMES, VARIABLES  # noqa: E402
from bench.web_load import free_port  # noqa: E402

RESULTS = REPO / "bench" / "results" / "search_scale.json"
DATA = REPO / "bench" / "data"
CATALOGUE = str(pathlib.Path(sys.executable).with_name("catalogue"))
DEFAULT_PG = os.environ.get("CATALOGUE_TEST_POSTGRES_URL", "postgresql+psycopg://postgres@127.0.0.1:5432/test")
HARVESTS = "urn:zarr-catalogue:harvests"
GEO_WKT = "http://www.opengis.net/ont/geosparql#wktLiteral"
DTYPES = ["float32", "float64", "int16", "uint8", "float16", "int32"]
CODECS = [["bytes", "zstd"], ["bytes", "blosc"], ["bytes", "gzip"], ["sharding_indexed", "bytes", "zstd"]]


# ------------------------------------------------------------------ the extents catalogue
def _box(rng: random.Random) -> tuple[float, float, float, float]:
    kind = rng.random()
    if kind < 0.1:
        return -180.0, -90.0, 180.0, 90.0
    width, height = rng.uniform(1, 60), rng.uniform(1, 40)
    south = rng.uniform(-90, 90 - height)
    if kind < 0.15:  # across the antimeridian
        west = rng.uniform(180 - width + 0.5, 179.5)
        east = west + width - 360
        return round(west, 3), round(south, 3), round(east, 3), round(south + height, 3)
    west = rng.uniform(-180, 180 - width)
    return round(west, 3), round(south, 3), round(west + width, 3), round(south + height, 3)


def _wkt(box: tuple[float, float, float, float]) -> str:
    west, south, east, north = box

    def ring(x0: float, y0: float, x1: float, y1: float) -> str:
        return f"(({x0} {y0},{x1} {y0},{x1} {y1},{x0} {y1},{x0} {y0}))"
    if west > east:
        return f"MULTIPOLYGON({ring(west, south, 180.0, north)},{ring(-180.0, south, east, north)})"
    return f"POLYGON{ring(west, south, east, north)}"


def write_extents_catalogue(path: pathlib.Path, n: int, seed: int = 7) -> None:
    """``n`` datasets with extents as N-Quads (see the module docstring)."""
    rng = random.Random(seed)
    tmp = path.with_suffix(".part")
    with open(tmp, "w", encoding="utf-8") as out:
        for i in range(n):
            iri = f"https://data.example.org/extents/ds-{i:07d}.zarr"
            q = Quads(iri, f"d{i}")
            root = f"<{iri}>"
            theme, region = rng.choice(THEMES), rng.choice(REGIONS)
            start_year = rng.randint(1950, 2023)
            years = rng.choice([0, 0, 1, 5, 10, 30])
            title = f"{region} {theme} {start_year}{'-' + str(start_year + years) if years else ''} #{i}"
            chosen = rng.sample(VARIABLES, rng.randint(1, 3))
            q.add(root, f"<{RDF}type>", f"<{DCAT}Dataset>")
            q.add(root, f"<{RDF}type>", f"<{ZARR}Group>")
            q.add(root, f"<{ZARR}path>", lit(""))
            q.add(root, f"<{ZARR}zarrFormat>", integer(rng.choice([2, 3, 3])))
            q.add(root, f"<{DCT}title>", lit(title))
            q.add(root, f"<{DCT}description>", lit(
                f"Synthetic {theme} fields ({', '.join(v[2].lower() for v in chosen)}) over {region}."))
            for word in rng.sample(KEYWORDS, rng.randint(1, 4)):
                q.add(root, f"<{DCAT}keyword>", lit(word))
            run = f"<urn:uuid:00000000-0000-4000-8000-{i:012d}>"
            q.add(root, f"<{PROV}wasGeneratedBy>", run)
            ended = f"2026-{rng.randint(1, 11):02d}-{rng.randint(1, 28):02d}T{rng.randint(0, 23):02d}:00:00.000Z"
            out.write(f"{run} <{PROV}endedAtTime> {typed(ended, XSD + 'dateTime')} <{HARVESTS}> .\n")
            out.write(f"{run} <{RDF}type> <{ZARR}HarvestRun> <{HARVESTS}> .\n")
            location, span = q.bnode(), q.bnode()
            q.add(root, f"<{DCT}spatial>", location)
            q.add(location, f"<{DCAT}bbox>", typed(_wkt(_box(rng)), GEO_WKT))
            q.add(root, f"<{DCT}temporal>", span)
            q.add(span, f"<{DCAT}startDate>", typed(f"{start_year}-01-01", XSD + "date"))
            q.add(span, f"<{DCAT}endDate>", typed(f"{start_year + years}-12-31", XSD + "date"))
            dims: dict[str, None] = {}
            arrays = []
            for name, std, long_name, units, d in chosen:
                arrays.append((name, std, long_name, units, d))
                dims.update(dict.fromkeys(d))
            for dim in list(dims)[:2]:
                std, long_name, units, _size = COORDINATES[dim]
                arrays.append((dim, std, long_name, units, (dim,)))
            invalid = i % 25 == 7
            for k, (name, std, long_name, units, d) in enumerate(arrays):
                node = f"<{iri}/{name}>"
                q.add(root, f"<{ZARR}member>", node)
                q.add(node, f"<{RDF}type>", f"<{ZARR}Array>")
                q.add(node, f"<{ZARR}path>", lit(name))
                q.add(node, f"<{ZARR}dataType>", lit(rng.choice(DTYPES)))
                if std:
                    q.add(node, f"<{ZARR}standardName>", lit(std))
                if units:
                    q.add(node, f"<{ZARR}units>", lit(units))
                q.add(node, f"<{RDFS}label>", lit(long_name))
                shape = [COORDINATES[x][3] * 10 for x in d]
                q.add(node, f"<{ZARR}shape>", q.rdf_list([integer(s) for s in shape]))
                q.add(node, f"<{ZARR}dimensionNames>", q.rdf_list([lit(x) for x in d]))
                codecs = [q.named_configuration({"name": c}) for c in rng.choice(CODECS)]
                q.add(node, f"<{ZARR}codecs>", q.rdf_list(codecs))
                q.add(node, f"<{ZARR}valid>", typed("false" if invalid and k == 0 else "true", XSD + "boolean"))
            out.writelines(q.lines)
    tmp.rename(path)


def catalogue_file(name: str, datasets: int) -> pathlib.Path:
    DATA.mkdir(parents=True, exist_ok=True)
    if name == "scale10":
        subprocess.run([sys.executable, "-m", "bench.sparql.generate", "--scale", "10", "--if-missing"],
                       check=True, cwd=REPO)
        from bench.sparql.generate import default_output

        return default_output(10)
    path = DATA / f"search-extents-{datasets}.nq"
    if not path.exists():
        print(f"writing {datasets:,} datasets with extents to {path} ...", flush=True)
        write_extents_catalogue(path, datasets)
    return path


# ------------------------------------------------------------------ server and measurements
@contextlib.contextmanager
def server(db: str, *extra: str) -> Iterator[tuple[str, subprocess.Popen[str], float]]:
    """``catalogue serve``; yields its URL, process and the seconds to the first /datasets answer."""
    import httpx

    port = free_port()
    started = time.perf_counter()
    proc = spawn_server([CATALOGUE, "serve", "--db", db, "--port", str(port), *extra],
                        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"catalogue serve exited: {proc.stderr.read() if proc.stderr else ''}")
            with contextlib.suppress(httpx.HTTPError):
                if httpx.get(f"{base}/datasets", params={"limit": 1}, timeout=30).status_code == 200:
                    break
            time.sleep(0.02)
        yield base, proc, time.perf_counter() - started
    finally:
        stop(proc)


def peak_rss_mb(pid: int) -> float:
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def searches(base: str, n: int, seed: int = 3) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """``n`` distinct text + bbox + datetime + 3-facet searches, and ``n`` text searches."""
    import httpx

    facets = httpx.get(f"{base}/datasets", params={"limit": 1}, timeout=120).json()["facets"]
    rng = random.Random(seed)
    words = ["temperature", "sea", "ocean", "wind", "ice", "climate", "precip", "model", "surface", "atlantic",
             "global", "arctic", "salinity", "reanalysis", "glacier", "hydrology", "atmosphere", "forecast"]

    def values(name: str) -> list[str]:
        return [v["value"] for v in facets[name][:8]] or [""]

    full, text = [], []
    seen: set[str] = set()
    while len(full) < n:
        lon, lat = rng.uniform(-170, 150), rng.uniform(-70, 50)
        year = rng.randint(1960, 2020)
        params = {"q": rng.choice(words), "bbox": f"{lon:.2f},{lat:.2f},{lon + rng.uniform(5, 30):.2f},"
                  f"{lat + rng.uniform(5, 20):.2f}", "datetime": f"{year}-01-01/{year + rng.randint(0, 10)}-12-31",
                  "dtype": rng.choice(values("dtype")), "units": rng.choice(values("units")),
                  "dimension": rng.choice(values("dimension"))}
        key = json.dumps(params, sort_keys=True)
        if key not in seen:
            seen.add(key)
            full.append(params)
    while len(text) < n:
        params = {"q": " ".join(rng.sample(words, rng.randint(1, 2))) + rng.choice(["", " s", " t"]),
                  "offset": str(rng.randint(0, 3) * 20)}
        key = json.dumps(params, sort_keys=True)
        if key not in seen:
            seen.add(key)
            text.append(params)
    return full, text


def one_client(base: str, plans: list[dict[str, Any]]) -> dict[str, float]:
    import httpx

    times = []
    with httpx.Client(base_url=base, timeout=120) as client:
        for params in plans:
            began = time.perf_counter()
            response = client.get("/datasets", params=params)
            times.append(time.perf_counter() - began)
            response.raise_for_status()
    q = statistics.quantiles(times, n=100, method="inclusive")
    return {"requests": len(times), "p50_ms": 1000 * statistics.median(times), "p95_ms": 1000 * q[94],
            "max_ms": 1000 * max(times)}


def many_clients(base: str, plans: list[dict[str, Any]], clients: int, seconds: float) -> dict[str, Any]:
    import httpx

    samples: list[float] = []
    errors: list[str] = []

    async def client(k: int, stop_at: float) -> None:
        async with httpx.AsyncClient(base_url=base, timeout=60) as http:
            i = k * 7
            while time.perf_counter() < stop_at:
                params = plans[i % len(plans)]
                i += 1
                began = time.perf_counter()
                try:
                    response = await http.get("/datasets", params=params)
                    await response.aread()
                    if not response.is_success:
                        errors.append(f"{response.status_code} {response.text[:200]}")
                        continue
                except httpx.HTTPError as exc:
                    errors.append(f"{type(exc).__name__}: {exc}")
                    continue
                samples.append(time.perf_counter() - began)

    async def main() -> float:
        began = time.perf_counter()
        await asyncio.gather(*(client(k, began + seconds) for k in range(clients)))
        return time.perf_counter() - began

    wall = asyncio.run(main())
    q = statistics.quantiles(samples, n=100, method="inclusive") if len(samples) > 1 else [0.0] * 99
    return {"clients": clients, "seconds": wall, "requests": len(samples) + len(errors), "errors": len(errors),
            "error_examples": errors[:3], "req_per_s": len(samples) / wall,
            "p50_ms": 1000 * statistics.median(samples) if samples else None, "p95_ms": 1000 * q[94]}


def searchable_after_harvest(base: str, db: str, scratch: pathlib.Path, rounds: int = 5) -> dict[str, Any]:
    import httpx

    delays = []
    source = REPO / "examples" / "ocean_model_v3.zarr"
    for k in range(rounds):
        token = f"zzfresh{k}x{random.randrange(10**6)}"
        store = scratch / f"fresh-{token}.zarr"
        shutil.copytree(source, store)
        doc = json.loads((store / "zarr.json").read_text())
        doc.setdefault("attributes", {})["title"] = f"Fresh store {token}"
        (store / "zarr.json").write_text(json.dumps(doc))
        subprocess.run([CATALOGUE, "harvest", str(store), "--db", db], check=True, capture_output=True)
        returned = time.perf_counter()
        while True:
            found = httpx.get(f"{base}/datasets", params={"q": token}, timeout=30).json()["total"]
            if found == 1:
                delays.append(time.perf_counter() - returned)
                break
            if time.perf_counter() - returned > 60:
                delays.append(float("inf"))
                break
            time.sleep(0.01)
    return {"rounds": rounds, "median_s": statistics.median(delays), "max_s": max(delays)}


def stats(db: str) -> dict[str, Any]:
    done = subprocess.run([CATALOGUE, "stats", "--json", "--db", db], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


def measure(name: str, db: str, scratch: pathlib.Path, args: argparse.Namespace) -> dict[str, Any]:
    row: dict[str, Any] = {"catalogue": name, "db": "sqlite" if db.startswith("/") else "postgresql"}
    row["stats"] = stats(db)
    expected = row["stats"]["datasets"]
    with server(db) as (base, proc, started):
        import httpx

        assert httpx.get(f"{base}/datasets", params={"limit": 1}, timeout=60).json()["total"] == expected
        row["start_s"] = started
        full, text = searches(base, args.searches)
        row["one_client_full"] = one_client(base, full)
        row["one_client_text"] = one_client(base, text)
        # The same kind of searches once the server is in service: the first ones after a
        # load also read the search tables into the database's caches.
        served, _text = searches(base, args.searches, seed=13)
        row["one_client_full_served"] = one_client(base, served)
        mixed = full + text + [{}]
        row["clients_cached"] = many_clients(base, mixed, args.clients, args.seconds)
        row["searchable"] = searchable_after_harvest(base, db, scratch)
        row["rss_mb"] = peak_rss_mb(proc.pid)
    with server(db, "--search-cache", "0") as (base, proc, _started):
        full2, text2 = searches(base, args.searches, seed=5)
        row["clients_uncached"] = many_clients(base, full2 + text2, args.clients, args.seconds)
        row["rss_uncached_mb"] = peak_rss_mb(proc.pid)
    print(json.dumps({k: v for k, v in row.items() if k != "stats"}, indent=1), flush=True)
    return row


def load(source: pathlib.Path, db: str) -> float:
    began = time.perf_counter()
    subprocess.run([CATALOGUE, "load", str(source), "--db", db], check=True)
    return time.perf_counter() - began


def bench(args: argparse.Namespace) -> dict[str, Any]:
    from catalogue.graph.database import scratch_postgres_database

    results: dict[str, Any] = {"rows": [], "environment": environment(["sqlalchemy", "psycopg", "rdflib"])}
    for name in args.catalogues:
        source = catalogue_file(name, args.datasets)
        for database in args.db:
            with tempfile.TemporaryDirectory(prefix="search-scale-") as tmp:
                scratch = pathlib.Path(tmp)
                if database == "sqlite":
                    db = str(scratch / "catalogue.db")
                    seconds = load(source, db)
                    row = measure(name, db, scratch, args)
                else:
                    with scratch_postgres_database(args.pg_url, prefix="catalogue_scale") as db:
                        seconds = load(source, db)
                        row = measure(name, db, scratch, args)
                row["load_s"] = seconds
                results["rows"].append(row)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--catalogues", nargs="+", choices=["scale10", "extents"], default=["scale10", "extents"])
    parser.add_argument("--datasets", type=int, default=100_000)
    parser.add_argument("--db", nargs="+", choices=["sqlite", "postgres"], default=["sqlite", "postgres"])
    parser.add_argument("--pg-url", default=DEFAULT_PG)
    parser.add_argument("--searches", type=int, default=200)
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=20)
    parser.add_argument("--json", type=pathlib.Path, default=RESULTS)
    args = parser.parse_args(argv)
    results = bench(args)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2))
    print()
    print("| catalogue | db | datasets | load s | start s | RSS MB | 1 client p50/p95 ms (full) | (full, in service) | "
          "(text) | "
          "50 clients req/s cached / uncached | errors | searchable after harvest s (median/max) | index MB |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in results["rows"]:
        f, t, w = r["one_client_full"], r["one_client_text"], r["one_client_full_served"]
        print(f"| {r['catalogue']} | {r['db']} | {r['stats']['datasets']:,} | {r['load_s']:.0f} | {r['start_s']:.2f} | "
              f"{r['rss_mb']:.0f} | {f['p50_ms']:.1f} / {f['p95_ms']:.1f} | {w['p50_ms']:.1f} / {w['p95_ms']:.1f} | "
              f"{t['p50_ms']:.1f} / {t['p95_ms']:.1f} | "
              f"{r['clients_cached']['req_per_s']:.0f} / {r['clients_uncached']['req_per_s']:.0f} | "
              f"{r['clients_cached']['errors'] + r['clients_uncached']['errors']} | "
              f"{r['searchable']['median_s']:.2f} / {r['searchable']['max_s']:.2f} | "
              f"{r['stats']['index_bytes'] / 2**20:.0f} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
