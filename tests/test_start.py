"""What a process loads before it does its work: the server, the CLI and a query start
without the harvest's, the chunks' and the geometries' libraries.

A server's start (issue 17: answering ``/datasets`` within 2 s) and every CLI command's
latency are mostly imports. The heavy packages (NumPy and shapely, fsspec, Jinja2, YAML
and the schemas, psycopg on a SQLite catalogue, the harvest and chunk layers) load where
they are first used; these tests fail when a module-level import brings one back.
Each runs in a fresh interpreter, since this one has loaded everything.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

#: Loaded only by the work that needs them.
HEAVY = ("numpy", "shapely", "pyproj", "fsspec", "jinja2", "yaml", "jsonschema", "pyld", "psycopg", "alembic",
         "zarr", "icechunk", "catalogue.harvest", "catalogue.chunks.read", "catalogue.validate.hierarchy",
         "catalogue.storage.access")


def loaded_after(code: str, *, cwd: str | None = None) -> set[str]:
    """The :data:`HEAVY` modules loaded after running ``code`` in a new interpreter."""
    probe = (f"{code}\nimport sys, json\n"
             f"print(json.dumps(sorted(m for m in {list(HEAVY)!r} if m in sys.modules)))")
    out = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True, cwd=cwd)
    return set(json.loads(out.stdout.strip().splitlines()[-1]))


@pytest.fixture(scope="module")
def catalogue_db(tmp_path_factory, good_stores) -> str:
    """A SQLite catalogue holding one harvested store, made in another process."""
    db = tmp_path_factory.mktemp("start") / "c.db"
    store = next(iter(good_stores.values()))
    subprocess.run([sys.executable, "-m", "catalogue.cli", "harvest", str(store), "--db", str(db)],
                   check=True, capture_output=True)
    return str(db)


def test_the_server_answers_a_search_without_the_heavy_packages(catalogue_db: str) -> None:
    code = f"""
import warnings
warnings.simplefilter("ignore")
from starlette.testclient import TestClient
from catalogue.web.app import create_app
from catalogue.web.settings import Settings
with TestClient(create_app(Settings(db={catalogue_db!r}))) as client:
    r = client.get("/datasets", params={{"q": "temperature", "bbox": "-180,-90,180,90", "limit": 5}})
    assert r.status_code == 200 and r.json()["total"] >= 0, r.text
    assert client.get("/stac").status_code == 200
"""
    assert loaded_after(code) == set()


def test_a_sparql_query_from_the_cli_loads_no_heavy_package(catalogue_db: str) -> None:
    code = f"""
import sys
from catalogue.cli import main
sys.argv = ["catalogue", "query", "--db", {catalogue_db!r}, "SELECT (COUNT(*) AS ?n) WHERE {{ ?s ?p ?o }}"]
try:
    main()
except SystemExit as exit:
    assert not exit.code, exit.code
"""
    assert loaded_after(code) == set()


def test_the_cli_starts_without_them() -> None:
    assert loaded_after("import catalogue.cli, catalogue.api, catalogue.graph.store") == set()


def test_the_work_that_needs_them_still_loads_them(catalogue_db: str) -> None:
    """The lazy imports are where the work is: validating loads the rules and the schemas."""
    code = f"""
import catalogue
with catalogue.open({catalogue_db!r}) as cat:
    [(iri,)] = list(cat.query("SELECT ?d WHERE {{ ?d a <http://www.w3.org/ns/dcat#Dataset> }} LIMIT 1"))
    assert cat.validate(str(iri)).nodes > 0
"""
    assert {"catalogue.validate.hierarchy", "yaml"} <= loaded_after(code)
