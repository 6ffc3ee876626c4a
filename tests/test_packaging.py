"""A non-editable install works: the wheel ships contexts, schemas and migrations.

The data folders live at the top of the source tree (``contexts/``, ``schemas/``,
``migrations/``) and are mapped into the package as ``catalogue.contexts``,
``catalogue.schemas`` and ``catalogue.migrations`` (pyproject).  An editable install
finds them in the checkout whatever the packaging says, so this test builds a real
wheel from a copy of the tree, checks its contents and entry points, installs it
into a folder of its own and runs the CLI from there, in a working directory outside
the repository, so nothing can come from the checkout.
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

import pytest

try:
    from tests import stores
except ImportError:  # tests/ is not a package: pytest put tests/ itself on sys.path
    import stores

pytestmark = [pytest.mark.slow, pytest.mark.filterwarnings("ignore::UserWarning")]

REPO = pathlib.Path(__file__).resolve().parents[1]
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
    "catalogue/validate/rules.py",
    "catalogue/chunks/read.py",
    "catalogue/model/chunk_keys.py",
    "catalogue/migrations/env.py",
    "catalogue/migrations/script.py.mako",
    "catalogue/migrations/versions/0001_initial.py",
    "catalogue/migrations/versions/0002_sequential_terms.py",
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
    assert found["head"] == "0002_sequential_terms"
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
    assert current.stdout.startswith("0002_sequential_terms"), current.stdout

    # 4. the console script pip generated for the wheel's entry point
    script = site / "bin" / "catalogue"
    assert script.is_file(), sorted(p.name for p in site.iterdir())
    _run([str(script), "--version"], cwd=work, env=env)
