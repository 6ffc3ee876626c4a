"""A non-editable install works: the wheel ships contexts, schemas and migrations.

The data folders live at the top of the source tree (``contexts/``, ``schemas/``,
``migrations/``) and are mapped into the package as ``catalogue.contexts``,
``catalogue.schemas`` and ``catalogue.migrations`` (pyproject).  An editable install
finds them in the checkout whatever the packaging says, so this test builds a real
wheel from a copy of the tree, checks its contents and entry points, installs it
into a folder of its own and runs the CLI from there, in a working directory outside
the repository, so nothing can come from the checkout.

A clean install is also checked as users make it (``pip install zarr-catalogue``, as
``make demo`` does): the wheel goes into a fresh virtualenv with no extras, pip
resolving the runtime dependencies from the index, and that install's console script
harvests, reads and resolves every array the clients write (``stores.build_client_variety``),
compared with zarr-python's reads here. A codec package that only the dev extras bring
(crc32c once was) shows up there as a failed read.
"""

from __future__ import annotations

import configparser
import json
import os
import pathlib
import shutil
import subprocess
import sys
import zipfile
from importlib.metadata import PackageNotFoundError, version
from typing import Any

import numpy as np
import pytest

from tests.support import stores
from tests.support.paths import REPO
from tests.support.zarr_reference import arrays_of, same, same_dtype, zarr_read

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::UserWarning")]

#: Source folder -> package folder inside the wheel (pyproject's package-dir).
DATA_PACKAGES = {
    "contexts": "catalogue/contexts",
    "schemas": "catalogue/schemas",
    "migrations": "catalogue/migrations",
}
REQUIRED = [
    "catalogue/__init__.py",
    "catalogue/resources.py",
    "catalogue/contexts/catalogue.jsonld",
    "catalogue/contexts/zarr.ttl",
    "catalogue/contexts/iliad-zarr-array-metadata.jsonld",
    "catalogue/contexts/iliad-zarr-array-metadata.fixed.jsonld",
    "catalogue/schemas/zarr_array_metadata.upstream.yaml",
    "catalogue/schemas/zarr_array_metadata.yaml",
    "catalogue/schemas/zom/zom-v2.json",
    "catalogue/schemas/zom/zom-v3.json",
    "catalogue/schemas/zom/zom-v2.upstream.json",
    "catalogue/schemas/zom/zom-v3.upstream.json",
    "catalogue/schemas/conventions/proj.json",
    "catalogue/schemas/conventions/spatial.json",
    "catalogue/schemas/conventions/multiscales.json",
    "catalogue/schemas/conventions/proj.upstream.json",
    "catalogue/schemas/conventions/LICENSE.zarr-conventions",
    "catalogue/schemas/stac/datacube-v2.3.0.json",
    "catalogue/schemas/stac/projection-v2.0.0.json",
    "catalogue/schemas/stac/zarr-v1.1.0.json",
    "catalogue/schemas/stac/LICENSE.stac-extensions",
    "catalogue/validate/rules.py",
    "catalogue/chunks/read.py",
    "catalogue/model/chunk_keys.py",
    "catalogue/migrations/env.py",
    "catalogue/migrations/script.py.mako",
    "catalogue/migrations/versions/0001_initial.py",
    "catalogue/migrations/versions/0002_sequential_terms.py",
    "catalogue/migrations/versions/0003_spatial_index.py",
    "catalogue/migrations/versions/0004_spatial_lon_lat.py",
    "catalogue/migrations/versions/0005_spatial_postgis.py",
    "catalogue/migrations/versions/0006_search_index.py",
    "catalogue/migrations/versions/0007_parallel_harvests.py",
    "catalogue/migrations/versions/0008_search_layout.py",
    "catalogue/migrations/versions/0009_temporal_values.py",
    "catalogue/migrations/versions/0010_search_huge.py",
    "catalogue/migrations/versions/0011_quads_statistics.py",
    "catalogue/migrations/versions/0012_search_huge_layout.py",
]
# Left out of the copy the wheel is built from: VCS, venv, caches, build output and
# folders that are not packaged (the wheel needs only pyproject and the package folders).
_NOT_SOURCE_TOP = {".git", ".venv", "build", "dist", ".pytest_cache", ".ruff_cache", "bench", "tests", "examples"}


def _not_source(folder: str, names: list[str]) -> set[str]:
    top = pathlib.Path(folder) == REPO
    return {
        n
        for n in names
        if n == "__pycache__"
        or n.endswith((".pyc", ".egg-info"))
        or (top and (n in _NOT_SOURCE_TOP or n.startswith("catalogue.db")))
    }


def _run(args: list[str], *, cwd: pathlib.Path, env: dict[str, str] | None = None, timeout: int = 300) -> subprocess.CompletedProcess[str]:
    proc = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout, check=False)
    assert proc.returncode == 0, (
        f"{' '.join(map(str, args))} exited {proc.returncode}\n"
        f"--- stdout ---\n{proc.stdout[-4000:]}\n--- stderr ---\n{proc.stderr[-4000:]}"
    )
    return proc


def _setuptools_major() -> int:
    try:
        return int(version("setuptools").split(".")[0])
    except (PackageNotFoundError, ValueError):
        return 0


def _build_wheel(tmp: pathlib.Path) -> pathlib.Path:
    """Build the project's wheel from a copy of the source tree (the checkout stays clean).

    The venv's own setuptools is used when it is recent enough for the project's
    metadata (SPDX ``license`` strings need setuptools 77): fast and offline.  Older
    setuptools means an isolated build, which fetches setuptools from the index pip
    is configured with.
    """
    src = tmp / "src"
    shutil.copytree(REPO, src, ignore=_not_source, symlinks=True)
    out = tmp / "wheelhouse"
    cmd = [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-cache-dir", "-q", "-w", str(out)]
    if _setuptools_major() >= 77:
        cmd.append("--no-build-isolation")
    _run([*cmd, str(src)], cwd=tmp)
    wheels = sorted(out.glob("zarr_catalogue-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def _source_data_files() -> list[str]:
    """Every file of the data folders, as the path it must have inside the wheel."""
    names = []
    for folder, package in DATA_PACKAGES.items():
        for path in sorted((REPO / folder).rglob("*")):
            rel = path.relative_to(REPO / folder)
            if path.is_file() and "__pycache__" not in rel.parts and path.suffix != ".pyc":
                names.append(f"{package}/{rel.as_posix()}")
    return names


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> pathlib.Path:
    return _build_wheel(tmp_path_factory.mktemp("wheel"))


def test_wheel_contents_and_entry_points(wheel: pathlib.Path) -> None:
    with zipfile.ZipFile(wheel) as zf:
        names = set(zf.namelist())
        dist_info = {n.split("/")[0] for n in names if n.split("/")[0].endswith(".dist-info")}
        assert len(dist_info) == 1, dist_info
        entry_points = zf.read(f"{dist_info.pop()}/entry_points.txt").decode()

    missing = [n for n in REQUIRED if n not in names]
    assert not missing, f"missing from {wheel.name}: {missing}"
    missing = [n for n in _source_data_files() if n not in names]
    assert not missing, f"files of contexts/, schemas/ or migrations/ missing from {wheel.name}: {missing}"
    assert all(n.startswith("catalogue/") or ".dist-info/" in n for n in names), sorted(
        n for n in names if not n.startswith("catalogue/") and ".dist-info/" not in n
    )

    parser = configparser.ConfigParser(delimiters=("=",))
    parser.optionxform = str  # keep entry point names as written
    parser.read_string(entry_points)
    assert parser.get("console_scripts", "catalogue").strip() == "catalogue.cli:main"
    assert parser.get("rdf.plugins.store", "catalogue").strip() == "catalogue.graph.store:SQLStore"


PROBE = """
import json, sys
import catalogue, catalogue.resources as r
from importlib.resources import files
import rdflib.plugin
from rdflib.store import Store
from catalogue.graph.database import alembic_config, head_revision
print(json.dumps({
    "catalogue": catalogue.__file__,
    "has_open": callable(getattr(catalogue, "open", None)),
    "contexts": str(files("catalogue.contexts")),
    "schemas": str(files("catalogue.schemas")),
    "migrations": alembic_config().get_main_option("script_location"),
    "head": head_revision(),
    "context_bytes": len(r.context_text(r.CATALOGUE_CONTEXT)),
    "schema_bytes": len(r.schema_text("zom/zom-v3.json")),
    "store_plugin": sys.modules[rdflib.plugin.get("catalogue", Store).__module__].__file__,
}))
"""


def test_installed_wheel_runs_outside_the_checkout(wheel: pathlib.Path, tmp_path: pathlib.Path) -> None:
    site = tmp_path / "site"
    _run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-cache-dir", "-q", "--target", str(site), str(wheel)], cwd=tmp_path)
    work = tmp_path / "work"
    work.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("CATALOGUE_DB", "PYTHONHOME", "PYTHONSTARTUP")}
    env["PYTHONPATH"] = str(site)
    env["PYTHONNOUSERSITE"] = "1"
    python = [sys.executable]

    # 1. the package, its data and its rdflib plugin come from the installed wheel
    probe = _run([*python, "-c", PROBE], cwd=work, env=env)
    found = json.loads(probe.stdout)
    for key in ("catalogue", "contexts", "schemas", "migrations", "store_plugin"):
        path = pathlib.Path(found[key]).resolve()
        assert path.is_relative_to(site.resolve()), f"{key} from {path}, not from the installed wheel"
        assert not path.is_relative_to(REPO), f"{key} from the checkout: {path}"
    assert found["has_open"]
    assert found["head"] == "0013_pgcrypto"
    assert found["context_bytes"] > 0 and found["schema_bytes"] > 0

    # 2. the ontology (contexts/zarr.ttl) prints
    vocab = _run([*python, "-m", "catalogue.cli", "vocab"], cwd=work, env=env)
    assert "zarr:Array" in vocab.stdout or "#Array" in vocab.stdout, vocab.stdout[:500]

    # 3. harvest (schemas, contexts, Alembic migrations) and rebuild from the graph
    store = stores.build_zarr_v3_lone_array(tmp_path / "stores")
    db = tmp_path / "x.db"
    _run([*python, "-m", "catalogue.cli", "harvest", str(store), "--db", str(db)], cwd=work, env=env)
    iri = pathlib.Path(store).absolute().as_uri()
    shown = _run([*python, "-m", "catalogue.cli", "metadata", iri, "--db", str(db)], cwd=work, env=env)
    assert json.loads(shown.stdout) == json.loads((store / "zarr.json").read_text(encoding="utf-8"))
    current = _run([*python, "-m", "catalogue.cli", "db", "current", "--db", str(db)], cwd=work, env=env)
    assert current.stdout.startswith("0013_pgcrypto"), current.stdout

    # 4. the console script pip generated for the wheel's entry point
    script = site / "bin" / "catalogue"
    assert script.is_file(), sorted(p.name for p in site.iterdir())
    _run([str(script), "--version"], cwd=work, env=env)


# --------------------------------------------------------- a clean install, as users make it
def _clean_env(venv: pathlib.Path) -> dict[str, str]:
    """The environment of the fresh virtualenv's commands: nothing of the dev venv leaks in.

    No PYTHONPATH, no VIRTUAL_ENV of the dev venv (nor its bin/ on PATH), no user site;
    pip's own settings (index, cache) stay, so pip resolves from the index as users' pip does.
    """
    drop = {"PYTHONPATH", "VIRTUAL_ENV", "PYTHONHOME", "PYTHONSTARTUP", "CATALOGUE_DB", "PYTHONSAFEPATH"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    dev_bin = pathlib.Path(sys.prefix, "bin").resolve()
    path = [p for p in env.get("PATH", "").split(os.pathsep) if p and pathlib.Path(p).resolve() != dev_bin]
    env["PATH"] = os.pathsep.join([str(venv / "bin"), *path])
    env["PYTHONNOUSERSITE"] = "1"
    return env


@pytest.fixture(scope="module")
def clean_install(wheel: pathlib.Path, tmp_path_factory) -> pathlib.Path:
    """A fresh virtualenv holding the wheel installed with NO extras: the runtime dependencies only.

    pip resolves them from the index (its cache keeps later runs fast), so a codec package
    missing from ``[project] dependencies`` is missing here, as it is after ``make demo``.
    """
    root = tmp_path_factory.mktemp("clean")
    venv = root / "venv"
    env = _clean_env(venv)
    _run([sys.executable, "-m", "venv", str(venv)], cwd=root, env=env)
    _run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(wheel)], cwd=root, env=env, timeout=1200)
    return venv


#: Run once by the fresh venv's Python: the installed console script, executed in this one
#: process for each array (``read`` and ``resolve``), so a hundred CLI runs do not each pay
#: the interpreter's start-up. Its exit code, stdout and stderr are kept as a shell would see them.
DRIVER = """
import contextlib, io, json, runpy, sys, traceback
import catalogue, numcodecs

job = json.loads(open(sys.argv[1], encoding="utf-8").read())

def console(*args):
    sys.argv = [job["script"], *args]
    out, err, code = io.StringIO(), io.StringIO(), 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            runpy.run_path(job["script"], run_name="__main__")
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else int(exc.code is not None)
        except BaseException:
            code = "crash: " + traceback.format_exc()
    return code, out.getvalue(), err.getvalue().strip()

found = {"catalogue": catalogue.__file__, "numcodecs": numcodecs.__file__, "arrays": {}}
for i, iri in enumerate(job["arrays"]):
    npy = f"{job['out']}/{i}.npy"
    read, resolve = console("read", iri, "-o", npy, "--db", job["db"]), console("resolve", iri, "--db", job["db"])
    found["arrays"][iri] = {"npy": npy, "read": read[0], "read_error": read[2],
                            "resolve": resolve[0], "resolution": resolve[1], "resolve_error": resolve[2]}
print(json.dumps(found))
"""


def _problems(label: str, store: pathlib.Path, path: str, npy: pathlib.Path, resolution: str) -> list[str]:
    """What is wrong with a clean install's ``read`` (.npy) and ``resolve`` (JSON) of one array."""
    problems = []
    mine = np.load(npy, allow_pickle=True)  # object arrays (strings) are pickled by `catalogue read`
    expected = zarr_read(store, path, (Ellipsis,))
    if not same(mine, expected) or not same_dtype(mine, expected):
        problems.append(f"{label}: read {mine.dtype}{list(mine.shape)} {mine.tolist()!r:.200} "
                        f"!= zarr-python's {expected.dtype}{list(expected.shape)} {expected.tolist()!r:.200}")
    try:
        result: dict[str, Any] = json.loads(resolution)
    except ValueError as exc:
        return [*problems, f"{label}: resolve printed no JSON ({exc}): {resolution[:200]!r}"]
    chunks = result.get("chunks")
    if not isinstance(chunks, list) or len(chunks) != result.get("chunk_count"):
        return [*problems, f"{label}: resolve lists {type(chunks).__name__} chunks, chunk_count {result.get('chunk_count')}"]
    folder = store / path if path else store
    for chunk in chunks:
        where = chunk.get("shard", chunk)  # a sharded array's entries are inner chunks: the file is the shard
        if not {"index", "fill"} <= chunk.keys() or not {"key", "url"} <= where.keys():
            problems.append(f"{label}: resolve entry without index, fill, key or url: {chunk}")
            break
        if not chunk["fill"] and not (folder / where["key"]).is_file():
            problems.append(f"{label}: resolve lists {where['key']} with data, no such file")
        if not chunk["fill"] and "shard" in chunk and len(chunk.get("byte_range", ())) != 2:
            problems.append(f"{label}: resolve gives an inner chunk without its byte range: {chunk}")
    if result.get("fill_chunks") != sum(bool(c["fill"]) for c in chunks):
        problems.append(f"{label}: fill_chunks {result.get('fill_chunks')} does not count the fill entries")
    return problems


def test_clean_install_harvests_reads_and_resolves_every_client_array(clean_install: pathlib.Path, tmp_path: pathlib.Path) -> None:
    """`pip install zarr-catalogue` (no extras) reads every array zarr-python, xarray and tensorstore write.

    Sharded v3 arrays check their shard index with crc32c, so this fails whenever a codec
    package the reader needs is in the dev extras only. zarr-python reads every one of these
    stores, so it is the reference throughout (as in test_chunks).
    """
    found = stores.build_client_variety(tmp_path / "stores")  # written here, by the clients, with the dev extras
    arrays = {iri: (name, store, path) for name, store in sorted(found.items()) for path, iri in arrays_of(store)}
    script = clean_install / "bin" / "catalogue"
    assert script.is_file(), sorted(p.name for p in (clean_install / "bin").iterdir())
    env = _clean_env(clean_install)
    work = tmp_path / "work"  # outside the repository: nothing can come from the checkout
    work.mkdir()
    db = str(tmp_path / "clean.db")

    # harvest every store, then list the arrays through the catalogue itself
    _run([str(script), "harvest", *map(str, found.values()), "--db", db], cwd=work, env=env)
    listed = _run([str(script), "query", "SELECT ?array WHERE { ?array a zarr:Array }", "--format", "json",
                   "--db", db], cwd=work, env=env)
    catalogued = {b["array"]["value"] for b in json.loads(listed.stdout)["results"]["bindings"]}
    assert catalogued == set(arrays), (sorted(catalogued ^ set(arrays)))

    # the console script as its own process, for the sharded arrays zarr-python and tensorstore write
    failures: list[str] = []
    sharded = [(found["zarr_v3"], "sharded"), (found["ts3_sharded_index_start"], "")]
    for store, path in sharded:
        iri = store.absolute().as_uri() + (f"/{path}" if path else "")
        label = f"{arrays[iri][0]}/{path} (own process)"
        npy = work / f"{arrays[iri][0]}.npy"
        read = subprocess.run([str(script), "read", iri, "-o", str(npy), "--db", db], cwd=work, env=env,
                              capture_output=True, text=True, timeout=300, check=False)
        resolve = subprocess.run([str(script), "resolve", iri, "--db", db], cwd=work, env=env,
                                 capture_output=True, text=True, timeout=300, check=False)
        if read.returncode or resolve.returncode:
            failures.append(f"{label}: read exit {read.returncode} {read.stderr.strip()!r}, "
                            f"resolve exit {resolve.returncode} {resolve.stderr.strip()!r}")
        else:
            failures += _problems(label, store, path, npy, resolve.stdout)

    # every array: read and resolve by the installed console script, run by one driver process
    job = tmp_path / "job.json"
    out = work / "reads"
    out.mkdir()
    job.write_text(json.dumps({"script": str(script), "db": db, "out": str(out), "arrays": sorted(arrays)}))
    driver = work / "driver.py"
    driver.write_text(DRIVER, encoding="utf-8")
    proc = _run([str(clean_install / "bin" / "python"), str(driver), str(job)], cwd=work, env=env, timeout=900)
    ran = json.loads(proc.stdout)
    for key in ("catalogue", "numcodecs"):
        where = pathlib.Path(ran[key]).resolve()
        assert where.is_relative_to(clean_install.resolve()) and not where.is_relative_to(REPO), (key, where)
    for iri, (name, store, path) in sorted(arrays.items()):
        result, label = ran["arrays"][iri], f"{name}/{path}"
        if result["read"] != 0 or result["resolve"] != 0:
            failures.append(f"{label}: read exit {result['read']} {result['read_error']!r}, "
                            f"resolve exit {result['resolve']} {result['resolve_error']!r}")
            continue
        failures += _problems(label, store, path, pathlib.Path(result["npy"]), result["resolution"])
    assert len(ran["arrays"]) == len(arrays) > 50
    assert not failures, f"{len(failures)} of {len(arrays)} arrays fail in a clean install:\n" + "\n".join(failures)


def test_clean_install_runs_processes_side_by_side_on_postgresql(clean_install: pathlib.Path,
                                                               tmp_path: pathlib.Path) -> None:
    """PostgreSQL from a clean install (its driver is a runtime dependency), with harvests
    and queries of several processes at once on a fresh database: no traceback."""
    base = os.environ.get("CATALOGUE_TEST_POSTGRES_URL")
    if not base:
        pytest.skip("CATALOGUE_TEST_POSTGRES_URL is not set, so PostgreSQL tests are skipped")
    from catalogue.graph.database import scratch_postgres_database

    script = str(clean_install / "bin" / "catalogue")
    env = _clean_env(clean_install)
    sources = [REPO / "examples" / name for name in
               ("cf_air_temperature_v3.zarr", "cf_sea_surface_v2.zarr", "ocean_model_v3.zarr")]
    with scratch_postgres_database(base, "catalogue_clean") as url:
        commands = [[script, "harvest", "--wait", str(source), "--db", url] for source in sources]
        commands += [[script, "query", "ASK { ?s ?p ?o }", "--db", url] for _ in range(3)]
        procs = [subprocess.Popen(c, cwd=tmp_path, env=env, text=True, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE) for c in commands]
        for command, proc in zip(commands, procs, strict=True):
            _out, err = proc.communicate(timeout=300)
            assert proc.returncode == 0 and "Traceback" not in err, (command[1:3], err[-2000:])
        graphs = _run([script, "graphs", "--db", url], cwd=tmp_path, env=env)
        assert all(source.absolute().as_uri() in graphs.stdout for source in sources), graphs.stdout
        # the search index (snowballstemmer is a runtime dependency), parallel harvests,
        # per-source status and stats, from the clean install
        config = tmp_path / "sources.toml"
        config.write_text("".join(f'[[source]]\nurl = "{s}"\n' for s in sources))
        _run([script, "harvest", "--config", str(config), "--jobs", "2", "--full", "--db", url], cwd=tmp_path,
             env=env)
        stats = json.loads(_run([script, "stats", "--json", "--db", url], cwd=tmp_path, env=env).stdout)
        assert (stats["datasets"], stats["queued"]) == (3, 0), stats
        status = _run([script, "harvests", "--sources", "--json", "--db", url], cwd=tmp_path, env=env)
        assert {s["runs"] for s in json.loads(status.stdout)} == {2}
        found = _run([script, "-v", "reindex", "--full", "--db", url], cwd=tmp_path, env=env)
        assert "3 dataset(s)" in found.stdout
        search = subprocess.run([str(clean_install / "bin" / "python"), "-c",
                                 "import catalogue, sys; from catalogue.discovery.query import SearchQuery\n"
                                 "with catalogue.open(sys.argv[1]) as cat:\n"
                                 "    print(cat.search(SearchQuery(q='temperatures')).total)", url],
                                cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
        assert search.returncode == 0 and search.stdout.strip() == "3", search.stderr[-2000:]
