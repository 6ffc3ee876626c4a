"""The W3C SPARQL 1.1 Update evaluation suite on the catalogue's stores (SQLite file and
PostgreSQL), through the path ``Catalogue.update`` and the web endpoint take
(:mod:`tests.graph.sparql.w3c.update`): every test passes, except those the catalogue
refuses by design (``LOAD``, which would make the server fetch URLs or read its own
files), and those must be refused, not failed."""

from __future__ import annotations

import pytest

from tests.graph.sparql.w3c.manifest import conformance_root
from tests.graph.sparql.w3c.runner import make_backend
from tests.graph.sparql.w3c.update import load_update_tests, run_update_suite

pytestmark = pytest.mark.skipif(
    conformance_root() is None,
    reason="W3C SPARQL suites not found at ../shared/conformance/w3c (or $CATALOGUE_W3C_SUITES); "
    "they are shared, not vendored",
)

#: Tests whose requests use LOAD (refused: see the module docstring). USING / USING NAMED
#: name graphs of the catalogue and pass (a graph not in it is empty, never fetched).
REFUSED = {"update-silent/manifest#load-silent", "update-silent/manifest#load-into-silent"}


@pytest.mark.parametrize("store", ["sqlite-file", pytest.param("postgres", marks=pytest.mark.postgres)])
def test_the_update_suite_passes(request, tmp_path, store: str) -> None:
    url = f"sqlite:///{tmp_path / 'update.db'}" if store == "sqlite-file" else request.getfixturevalue("postgres_url")
    tests = load_update_tests()
    backend = make_backend(store, url)
    try:
        outcomes = run_update_suite(backend, tests)
    finally:
        backend.close()
    assert len(outcomes) == 93
    short = {o.iri.split("data-sparql11/", 1)[-1]: o for o in outcomes}
    assert {name for name, o in short.items() if o.status == "refused"} == REFUSED
    wrong = {name: f"{o.status}: {o.detail}" for name, o in short.items() if o.status not in ("passed", "refused")}
    assert not wrong
