"""The W3C SPARQL 1.1 Update evaluation tests (``mf:UpdateEvaluationTest``) on a store.

Each test starts from an empty graph store holding its ``ut:data`` (the unnamed default
graph) and ``ut:graphData`` (named graphs, named by their ``rdfs:label``), applies its
request, and compares the store with ``mf:result``: the default graph and every
non-empty named graph, each up to blank node renaming (an empty graph and no graph are
alike, as the Graph Store Protocol sees them).

On the catalogue's stores the request goes through :func:`catalogue.graph.sparql.update.run_update`,
the path of ``Catalogue.update`` and the web endpoint, refusals included: ``LOAD``
and ``SERVICE`` are refused by design (the server would fetch URLs, read its own files or
query other servers), which such tests record as ``refused``. rdflib's Memory store runs
``Dataset.update`` as the reference.

Usage::

    python -m tests.graph.sparql.w3c.update --store sqlite-file
    python -m tests.graph.sparql.w3c.update --store postgres   # $CATALOGUE_TEST_POSTGRES_URL
"""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from rdflib import RDF, Dataset, Graph
from rdflib.compare import isomorphic
from rdflib.graph import DATASET_DEFAULT_GRAPH_ID
from rdflib.term import Node

from .manifest import (
    DAWGT,
    MF,
    UT,
    GraphData,
    _graph_data,
    _manifest_entries,
    conformance_root,
    iri_to_path,
    path_to_iri,
)
from .runner import (
    POSTGRES_URL_ENV,
    Backend,
    _load_file,
    make_backend,
    rdflib_settings,
    scratch_postgres,
    time_limit,
)

__all__ = ["UpdateOutcome", "UpdateTest", "load_update_tests", "run_update_suite"]


@dataclass
class UpdateTest:
    iri: str
    name: str
    request: Path
    approved: bool
    data: list[Path] = field(default_factory=list)
    graph_data: list[GraphData] = field(default_factory=list)
    result_data: list[Path] = field(default_factory=list)
    result_graphs: list[GraphData] = field(default_factory=list)


@dataclass
class UpdateOutcome:
    iri: str
    #: passed | failed | error | refused
    status: str
    detail: str = ""


def load_update_tests(root: Path | None = None) -> list[UpdateTest]:
    """Every update evaluation test listed by the SPARQL 1.1 manifests, in order."""
    root = root or conformance_root()
    if root is None:
        raise FileNotFoundError("W3C SPARQL suites not found (see conformance_root)")
    tests: list[UpdateTest] = []
    pending, visited = [root / "sparql11" / "manifest-all.ttl"], set()
    notes: list[str] = []
    while pending:
        path = pending.pop(0).resolve()
        if path in visited:
            continue
        visited.add(path)
        graph = Graph().parse(path, format="turtle", publicID=path_to_iri(path))
        pending += [iri_to_path(i) for lst in graph.objects(None, MF.include) for i in graph.items(lst)]
        for entry in _manifest_entries(graph):
            if (entry, RDF.type, MF.UpdateEvaluationTest) not in graph:
                continue
            action, result = graph.value(entry, MF.action), graph.value(entry, MF.result)
            test = UpdateTest(
                iri=str(entry), name=str(graph.value(entry, MF.name) or entry),
                request=iri_to_path(graph.value(action, UT.request)),
                approved=(entry, DAWGT.approval, DAWGT.Approved) in graph)
            test.data = [iri_to_path(d) for d in graph.objects(action, UT.data)]
            test.graph_data = [_graph_data(graph, g, str(entry), notes) for g in graph.objects(action, UT.graphData)]
            if result is not None:
                test.result_data = [iri_to_path(d) for d in graph.objects(result, UT.data)]
                test.result_graphs = [_graph_data(graph, g, str(entry), notes)
                                      for g in graph.objects(result, UT.graphData)]
            tests.append(test)
    return tests


def _parsed(paths: list[Path]) -> Graph:
    out = Graph()
    for path in paths:
        _load_file(Dataset(), out, path)
    return out


def _store_graphs(dataset: Dataset) -> tuple[Graph, dict[str, Graph]]:
    """The default graph and the non-empty named graphs of ``dataset``."""
    default = Graph()
    named: dict[str, Graph] = {}
    for graph in dataset.graphs():
        triples = list(graph)
        if graph.identifier == DATASET_DEFAULT_GRAPH_ID:
            for t in triples:
                default.add(t)
        elif triples:
            copy = named.setdefault(str(graph.identifier), Graph())
            for t in triples:
                copy.add(t)
    return default, named


def _compare(test: UpdateTest, dataset: Dataset) -> str:
    """What differs from the expected store ("" when nothing)."""
    default, named = _store_graphs(dataset)
    expected_default = _parsed(test.result_data)
    expected_named = {str(g.name): _parsed([g.source]) for g in test.result_graphs}
    expected_named = {name: g for name, g in expected_named.items() if len(g)}
    problems = []
    if not isomorphic(default, expected_default):
        problems.append(f"default graph: {len(default)} triples, expected {len(expected_default)}")
    if set(named) != set(expected_named):
        problems.append(f"named graphs {sorted(named)}, expected {sorted(expected_named)}")
    for name in sorted(set(named) & set(expected_named)):
        if not isomorphic(named[name], expected_named[name]):
            problems.append(f"graph <{name}>: {len(named[name])} triples, expected {len(expected_named[name])}")
    return "; ".join(problems)


def _apply(backend: Backend, dataset: Dataset, test: UpdateTest) -> None:
    text = test.request.read_text(encoding="utf-8")
    if backend.name == "Memory":
        dataset.update(text)
        return
    from catalogue.graph.sparql.update import run_update

    run_update(dataset.store, text)


def run_update_test(backend: Backend, test: UpdateTest, timeout: float = 60.0) -> UpdateOutcome:
    from catalogue.errors import QueryError

    dataset = backend.new_dataset()
    try:
        with rdflib_settings(), time_limit(timeout):
            for path in test.data:
                _load_file(dataset, dataset.graph(DATASET_DEFAULT_GRAPH_ID), path)
            for graph_data in test.graph_data:
                _load_file(dataset, dataset.graph(graph_data.name), graph_data.source)
            dataset.commit()
            try:
                _apply(backend, dataset, test)
            except QueryError as exc:
                refused = any(word in str(exc) for word in ("LOAD", "SERVICE"))
                return UpdateOutcome(test.iri, "refused" if refused else "error", str(exc)[:300])
            except Exception as exc:
                return UpdateOutcome(test.iri, "error", f"{type(exc).__name__}: {exc}"[:300])
            differs = _compare(test, dataset)
        return UpdateOutcome(test.iri, "failed" if differs else "passed", differs)
    finally:
        backend.finish(dataset)


def run_update_suite(backend: Backend, tests: list[UpdateTest] | None = None) -> list[UpdateOutcome]:
    return [run_update_test(backend, test) for test in (tests if tests is not None else load_update_tests())]


def _node(value: Node | str) -> str:
    return str(value).rsplit("/", 2)[-2] + "/" + str(value).rsplit("#", 1)[-1]


@contextlib.contextmanager
def _backend(store: str, url: str | None) -> Iterator[Backend]:
    if store == "postgres":
        server = url or os.environ.get(POSTGRES_URL_ENV)
        if not server:
            raise SystemExit(f"postgres needs --url or ${POSTGRES_URL_ENV}")
        with scratch_postgres(server) as scratch:
            backend = make_backend(store, scratch)
            try:
                yield backend
            finally:
                backend.close()
        return
    if store == "sqlite-file" and not url:
        with tempfile.TemporaryDirectory() as folder:
            backend = make_backend(store, f"sqlite:///{folder}/w3c-update.db")
            try:
                yield backend
            finally:
                backend.close()
        return
    backend = make_backend(store, url)
    try:
        yield backend
    finally:
        backend.close()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tests.graph.sparql.w3c.update", description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", choices=("Memory", "sqlite-file", "postgres"), default="sqlite-file")
    parser.add_argument("--url")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    tests = load_update_tests()
    started = time.perf_counter()
    with _backend(args.store, args.url) as backend:
        outcomes = run_update_suite(backend, tests)
    counts = Counter(o.status for o in outcomes)
    print(f"SPARQL 1.1 Update on {args.store}: " + ", ".join(f"{n} {s}" for s, n in sorted(counts.items()))
          + f" ({len(tests)} tests, {time.perf_counter() - started:.1f} s)")
    for outcome in outcomes:
        if outcome.status != "passed" and (args.verbose or outcome.status in ("failed", "error")):
            print(f"  {outcome.status:8s} {_node(outcome.iri)}: {outcome.detail}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
