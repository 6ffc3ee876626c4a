"""Read W3C SPARQL test manifests into plain records.

Why our own reader: rdflib's manifest helpers live in its (uninstalled) test folder, and
we need more than they keep (approval status, feature requirements, entailment regimes,
manifest oddities) to report honestly on what was and was not run.

Everything is addressed by ``file:`` IRIs of the local copy: the manifests, queries,
data and results are parsed with their own file IRI as base, so relative IRIs in data,
queries (``FROM <data-g1.ttl>``) and expected results (``rs:value <data-g1.ttl>``) all
resolve to the same IRIs.  The suites' test IRIs themselves are absolute W3C IRIs
(``http://www.w3.org/2009/sparql/docs/tests/data-sparql11/...``), so they are stable
across machines and usable as keys of the baseline file.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import unquote, urlparse
from urllib.request import url2pathname

from rdflib import RDF, RDFS, BNode, Graph, Literal, Namespace, URIRef
from rdflib.term import Node

from tests.support.paths import REPO

__all__ = [
    "DAWGT",
    "MF",
    "QT",
    "SUITES",
    "UT",
    "GraphData",
    "QueryTest",
    "Suite",
    "conformance_root",
    "iri_to_path",
    "load_suite",
    "path_to_iri",
]

MF = Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#")
QT = Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-query#")
UT = Namespace("http://www.w3.org/2009/sparql/tests/test-update#")
DAWGT = Namespace("http://www.w3.org/2001/sw/DataAccess/tests/test-dawg#")
SD = Namespace("http://www.w3.org/ns/sparql-service-description#")

#: Suite name -> (folder under the conformance root, top manifest).
SUITES: dict[str, tuple[str, str]] = {
    "sparql10": ("dawg-data-r2", "manifest-evaluation.ttl"),
    "sparql11": ("sparql11", "manifest-all.ttl"),
}

#: Test types that are query evaluations.  ``mf:CSVResultFormatTest`` is one too (a
#: query whose expected result happens to be CSV), so it is run like the others.
EVALUATION_TYPES: frozenset[URIRef] = frozenset({MF.QueryEvaluationTest, MF.CSVResultFormatTest})

#: Environment variable that overrides where the W3C suites are found.
ROOT_ENV = "CATALOGUE_W3C_SUITES"


def conformance_root() -> Path | None:
    """Folder holding ``dawg-data-r2`` and ``sparql11``, or ``None`` when absent.

    The suites are shared between checkouts rather than vendored, at
    ``<repo>/../shared/conformance/w3c``; ``$CATALOGUE_W3C_SUITES`` overrides that.
    """
    override = os.environ.get(ROOT_ENV)
    root = Path(override) if override else REPO / ".." / "shared" / "conformance" / "w3c"
    root = root.resolve()
    return root if all((root / folder).is_dir() for folder, _ in SUITES.values()) else None


def path_to_iri(path: Path) -> URIRef:
    """The ``file:`` IRI of a local file (the base every file is parsed with)."""
    return URIRef(path.resolve().as_uri())


def iri_to_path(iri: Node) -> Path:
    """The local file of a ``file:`` IRI; anything else is a manifest we cannot run."""
    parsed = urlparse(str(iri))
    if parsed.scheme != "file":
        raise ValueError(f"not a local file IRI: {iri}")
    return Path(url2pathname(unquote(parsed.path)))


@dataclass(frozen=True)
class GraphData:
    """One named graph of a test dataset: the graph's name and the file to load."""

    name: URIRef
    source: Path


@dataclass(frozen=True)
class QueryTest:
    """One query-evaluation test, with everything needed to run and classify it."""

    iri: str
    name: str
    type: str  # local name of the test type, e.g. "QueryEvaluationTest"
    manifest: Path
    query: Path
    data: tuple[Path, ...] = ()
    graph_data: tuple[GraphData, ...] = ()
    result: Path | None = None
    approval: str | None = None  # local name: Approved, NotClassified, Withdrawn, ...
    lax_cardinality: bool = False
    requires: tuple[str, ...] = ()  # mf:requires (optional features), local names
    entailment: tuple[str, ...] = ()  # sd:entailmentRegime IRIs
    service_data: bool = False  # qt:serviceData: needs remote SERVICE endpoints
    uses_service: bool = False  # the query text has a SERVICE clause
    comment: str = ""

    @property
    def query_iri(self) -> URIRef:
        """Base IRI the query is parsed with (the query file's own IRI)."""
        return path_to_iri(self.query)

    def why_skipped(self, *, entailment: bool = False) -> str | None:
        """Why the runner does not run this test, or ``None``.

        Only tests that need something outside query evaluation are skipped: remote
        SERVICE endpoints (which would mean network access) and entailment regimes
        beyond simple entailment (no store here implements them; a "pass" would only
        mean that the answer happens not to depend on entailment).  ``entailment``
        runs the latter anyway, for comparison with runners that do.
        """
        if self.service_data:
            return "needs SERVICE endpoints (qt:serviceData)"
        if self.uses_service:
            return "query uses SERVICE (a remote endpoint: network access)"
        if self.entailment and not entailment:
            regimes = ", ".join(sorted(e.rsplit("/", 1)[-1] for e in self.entailment))
            return f"needs entailment regime {regimes}"
        if self.result is None:
            return "no mf:result"
        return None

    @property
    def skip_reason(self) -> str | None:
        """:meth:`why_skipped` with the defaults."""
        return self.why_skipped()


@dataclass
class Suite:
    """All evaluation tests of one suite, plus what was seen but not run."""

    name: str
    root: Path
    tests: list[QueryTest] = field(default_factory=list)
    manifests: list[Path] = field(default_factory=list)
    #: Other test types found in the included manifests (syntax, update, ...), by type.
    other_types: Counter[str] = field(default_factory=Counter)
    #: Oddities of the manifests (unlisted tests, missing files, ...), for the report.
    notes: list[str] = field(default_factory=list)

    def by_iri(self) -> dict[str, QueryTest]:
        return {test.iri: test for test in self.tests}


def _local(node: Node | None) -> str | None:
    if node is None:
        return None
    text = str(node)
    return text.rsplit("#", 1)[-1].rsplit("/", 1)[-1]


def _items(graph: Graph, node: Node) -> list[Node]:
    """Members of an RDF list, or the node itself when it is not a list.

    Entailment regimes are given either way (``sd:entailmentRegime ent:RDF`` or
    ``sd:entailmentRegime ( ent:RDF ent:RDFS )``).
    """
    if node == RDF.nil or (node, RDF.first, None) in graph:
        return list(graph.items(node))
    return [node]


def _existing(path: Path, what: str, test: str, notes: list[str]) -> Path:
    if not path.is_file():
        notes.append(f"{test}: {what} file is missing: {path}")
    return path


def _graph_data(graph: Graph, node: Node, test: str, notes: list[str]) -> GraphData:
    """A named graph of the test dataset.

    In the query suites ``qt:graphData`` is always the data file's IRI, which is also
    the graph name.  The update suites use a blank node with ``ut:graph`` (the file)
    and ``rdfs:label`` (the graph name); that form is accepted too so that a manifest
    using it for a query test would still be read correctly.
    """
    if isinstance(node, URIRef):
        return GraphData(node, _existing(iri_to_path(node), "graph data", test, notes))
    source = graph.value(node, UT.graph) or graph.value(node, QT.graph)
    label = graph.value(node, RDFS.label)
    if source is None:
        raise ValueError(f"{test}: graph data {node} has no ut:graph")
    name = URIRef(str(label)) if label is not None else URIRef(str(source))
    notes.append(f"{test}: graph data given as a blank node; graph name {name}")
    return GraphData(name, _existing(iri_to_path(source), "graph data", test, notes))


def _read_test(graph: Graph, entry: Node, manifest: Path, notes: list[str]) -> QueryTest:
    test = str(entry)
    action = graph.value(entry, MF.action)
    if action is None:
        raise ValueError(f"{test}: no mf:action")
    query = graph.value(action, QT.query)
    if not isinstance(query, URIRef):
        raise ValueError(f"{test}: no qt:query")
    data = tuple(
        _existing(iri_to_path(d), "data", test, notes)
        for d in sorted(graph.objects(action, QT.data), key=str)
    )
    graph_data = tuple(
        _graph_data(graph, g, test, notes)
        for g in sorted(graph.objects(action, QT.graphData), key=str)
    )
    result_node = graph.value(entry, MF.result)
    result = None
    if isinstance(result_node, URIRef):
        result = _existing(iri_to_path(result_node), "result", test, notes)
    elif result_node is not None:
        notes.append(f"{test}: mf:result is not a file IRI ({result_node!r})")
    entailment = tuple(
        str(regime)
        for node in graph.objects(action, SD.entailmentRegime)
        for regime in _items(graph, node)
    )
    comment = graph.value(entry, RDFS.comment)
    name = graph.value(entry, MF.name)
    types = set(graph.objects(entry, RDF.type)) & EVALUATION_TYPES
    return QueryTest(
        iri=test,
        name=str(name) if name is not None else test,
        type=_local(min(types)) or "",
        manifest=manifest,
        query=_existing(iri_to_path(query), "query", test, notes),
        data=data,
        graph_data=graph_data,
        result=result,
        approval=_local(graph.value(entry, DAWGT.approval)),
        lax_cardinality=graph.value(entry, MF.resultCardinality) == MF.LaxCardinality,
        requires=tuple(sorted(_local(r) or "" for r in graph.objects(entry, MF.requires))),
        entailment=entailment,
        service_data=(action, QT.serviceData, None) in graph,
        uses_service=_mentions_service(iri_to_path(query)),
        comment=str(comment) if isinstance(comment, Literal) else "",
    )


def _mentions_service(query: Path) -> bool:
    """Whether a query has a SERVICE clause (comments and strings are not excluded,
    which errs on the side of not contacting the network)."""
    try:
        text = query.read_text(encoding="utf-8")
    except OSError:
        return False
    return re.search(r"\bSERVICE\b", text, re.IGNORECASE) is not None


def _manifest_entries(graph: Graph) -> Iterator[Node]:
    for lst in graph.objects(None, MF.entries):
        yield from graph.items(lst)


def load_suite(name: str, root: Path | None = None) -> Suite:
    """Read suite ``name`` (a key of :data:`SUITES`), following ``mf:include``.

    Tests are taken from ``mf:entries`` lists, the manifests' own statement of what
    belongs to the suite; tests described in a manifest but not listed are reported in
    :attr:`Suite.notes` rather than run.
    """
    root = root or conformance_root()
    if root is None:
        raise FileNotFoundError("W3C SPARQL suites not found (see conformance_root)")
    folder, top = SUITES[name]
    suite = Suite(name=name, root=root / folder)
    seen_tests: set[str] = set()
    pending = [suite.root / top]
    visited: set[Path] = set()
    while pending:
        path = pending.pop(0).resolve()
        if path in visited:
            continue
        visited.add(path)
        suite.manifests.append(path)
        graph = Graph()
        graph.parse(path, format="turtle", publicID=path_to_iri(path))
        includes = [
            iri_to_path(i) for lst in graph.objects(None, MF.include) for i in graph.items(lst)
        ]
        pending.extend(includes)
        listed = list(_manifest_entries(graph))
        for entry in listed:
            types = set(graph.objects(entry, RDF.type))
            if not types:
                suite.notes.append(f"{entry}: listed in {path.name} but not described")
                continue
            if str(entry) in seen_tests:
                suite.notes.append(f"{entry}: listed twice (second time in {path})")
                continue
            seen_tests.add(str(entry))
            if types & EVALUATION_TYPES:
                suite.tests.append(_read_test(graph, entry, path, suite.notes))
            else:
                for t in types:
                    suite.other_types[_local(t) or str(t)] += 1
        described = {
            s
            for t in EVALUATION_TYPES
            for s in graph.subjects(RDF.type, t)
            if not isinstance(s, BNode)
        }
        for entry in sorted(described - set(listed), key=str):
            suite.notes.append(f"{entry}: described in {path.name} but not in mf:entries; not run")
    return suite
