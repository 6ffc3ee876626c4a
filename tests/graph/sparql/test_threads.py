"""rdflib's SPARQL parser from several threads at once (the web server's worker threads do that).

pyparsing keeps parse state in shared grammar objects: without the catalogue's
parse lock, concurrent parses fail ("postParse2() missing 1 required
positional argument"), which the web load test hit. The first query on a catalogue
store installs the lock on rdflib's own parser functions too.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest
from rdflib import Dataset
from rdflib.plugins.sparql import parser, processor

import catalogue
from catalogue.graph.store import SQLStore


@pytest.fixture(autouse=True, scope="module")
def _store_opened() -> Iterator[None]:
    """The first query on a store installs the parse lock (importing or opening installs nothing)."""
    store = SQLStore()
    store.open(None)
    list(Dataset(store=store).query("ASK {}"))
    yield
    store.close()

QUERIES = [
    "SELECT ?a (COUNT(?b) AS ?n) WHERE { ?a <http://x/p> ?b . OPTIONAL { ?b <http://x/q> ?c } "
    f"FILTER(?c > {i}) }} GROUP BY ?a" for i in range(20)
]


def _hammer(call) -> list[str]:
    errors: list[str] = []

    def work() -> None:
        for _ in range(2):
            for query in QUERIES:
                try:
                    call(query)
                except Exception as exc:  # the failure being tested for is any exception
                    errors.append(repr(exc)[:120])

    threads = [threading.Thread(target=work) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return errors


def test_rdflib_parser_functions_are_locked():
    assert getattr(parser.parseQuery, "_catalogue_locked", False)
    assert processor.parseQuery is parser.parseQuery and processor.parseUpdate is parser.parseUpdate


def test_concurrent_parses_through_rdflib():
    assert _hammer(parser.parseQuery) == []
    memory = Dataset()
    assert _hammer(lambda q: list(memory.query(q))) == []


def test_concurrent_queries_on_the_catalogue(tmp_path):
    """One connection per thread, as the web server's pool lends them (opened beforehand, as it does)."""
    db = str(tmp_path / "c.db")
    opened = [catalogue.open(db) for _ in range(8)]
    idle = list(opened)
    local = threading.local()
    handout = threading.Lock()

    def query(text: str) -> None:
        if not hasattr(local, "cat"):
            with handout:
                local.cat = idle.pop()
        list(local.cat.query(text))

    try:
        assert _hammer(query) == []
    finally:
        for cat in opened:
            cat.close()



FIRST_IMPORT = """
import sys, catalogue
import catalogue.graph.store as store

seen = []

class Watch:
    def find_spec(self, name, path=None, target=None):
        if name == "rdflib.plugins.sparql":
            seen.append(store._HOOKS_LOCK.locked())
        return None

sys.meta_path.insert(0, Watch())
cat = catalogue.open(sys.argv[1])
entry = sys.argv[2]
if entry == "query":
    list(cat.query("SELECT * WHERE { ?s ?p ?o } LIMIT 1"))
elif entry == "update":
    cat.update("INSERT DATA { <http://x/s> <http://x/p> 1 }")
elif entry == "rdflib":
    from rdflib import Dataset
    list(Dataset(store=cat.store).query("ASK {}"))
else:
    from catalogue.web.sparql.protocol import Operation
    Operation("query", "ASK {}").dataset
print(seen)
"""


@pytest.mark.parametrize("entry", ["query", "update", "rdflib", "web"])
def test_rdflibs_sparql_engine_is_first_imported_under_the_lock(tmp_path, entry):
    """rdflib's SPARQL modules import each other in a cycle: loaded lazily (a server's first
    requests) by several threads at once, a thread can get another's half-initialised
    module ("cannot import name 'evalQuery'", seen under load). So every lazy entry loads
    them through :func:`catalogue.graph.store.install_sparql`, under its lock: checked here
    by watching the first import of ``rdflib.plugins.sparql`` in a fresh process."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", FIRST_IMPORT, str(tmp_path / "c.db"), entry],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[True]", out.stdout + out.stderr
