"""Run a W3C SPARQL query-evaluation suite against an rdflib store.

Each test gets an empty :class:`rdflib.Dataset` (``default_union=False``) on the store
under test: ``qt:data`` files go into the default graph, ``qt:graphData`` files into
named graphs named by their IRI, then ``dataset.query(text, base=<query file IRI>)``
runs with rdflib's default ``use_store_provided=True``, so a store that implements
``Store.query`` is the one answering.  (The catalogue's SPARQL-to-SQL package hooks
into rdflib's evaluator when a catalogue store opens; catalogue runs install the hooks
first, see :func:`_activate_catalogue_query_path`.)  Documents named in FROM / FROM NAMED are
loaded as named graphs first (see :func:`load_test_data`).  Tests needing SERVICE
endpoints or an entailment regime are skipped and counted as such (see
:meth:`~.manifest.QueryTest.why_skipped`).

Stores (``--store``):

* ``Memory``: rdflib's in-memory store, the reference for the baseline;
* ``catalogue``: ``Dataset(store="catalogue")``, a private in-memory SQLite database,
  a new one per test;
* ``sqlite-file``: one :class:`~catalogue.graph.SQLStore` on a SQLite file for the
  whole run, emptied between tests;
* ``postgres``: the same on PostgreSQL.  The CLI creates a scratch database on the
  server of ``--url``/``$CATALOGUE_TEST_POSTGRES_URL`` and drops it afterwards, so an
  existing database is never emptied.

rdflib's global switches are set for the run the way strict SPARQL needs them (and as
rdflib's own W3C runner sets them), then restored: literal normalisation off (lexical
forms such as ``"01"^^xsd:integer`` must survive), ``SPARQL_DEFAULT_GRAPH_UNION`` off
(rdflib's evaluator ignores ``Dataset.default_union`` and reads this global), and
``DAWG_LITERAL_COLLATION`` on (comparing incompatible literals is an error, as SPARQL
says, rather than an order by datatype IRI).

Usage::

    python -m tests.graph.sparql.w3c.runner --suite sparql11 --store catalogue [-v] [--json out.json]
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import json
import logging
import os
import re
import signal
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import rdflib
import rdflib.plugins.sparql as rdflib_sparql
from rdflib import Dataset, Graph, URIRef
from rdflib.query import Result

from .manifest import (
    SUITES,
    QueryTest,
    Suite,
    conformance_root,
    iri_to_path,
    load_suite,
    path_to_iri,
)
from .results import (
    RDF_FORMATS,
    ComparisonError,
    compare_result,
    inspect_query,
    load_expected,
)

__all__ = [
    "BASELINE_PATH",
    "STORES",
    "Backend",
    "Outcome",
    "Report",
    "load_baseline",
    "main",
    "make_backend",
    "rdflib_settings",
    "run_suite",
]

STORES = ("Memory", "catalogue", "sqlite-file", "postgres")
BASELINE_PATH = Path(__file__).with_name("baseline-memory.json")
POSTGRES_URL_ENV = "CATALOGUE_TEST_POSTGRES_URL"
#: Per-test wall-clock limit: generous (the slowest Memory test takes well under a
#: second) but it keeps one runaway query from eating the CI budget.
DEFAULT_TIMEOUT = 60.0
QUAD_FORMATS = {"nquads", "trig", "json-ld"}
_S11 = "http://www.w3.org/2009/sparql/docs/tests/data-sparql11/"
#: Tests whose expected result files have a known defect, and the check it disables.
#: Kept explicit (and listed in reports) rather than loosening the comparison for all.
HEAD_ERRATA: dict[str, str] = {
    f"{_S11}aggregates/manifest#agg-empty-group": (
        "agg-empty-group.srx declares only ?max, but the query projects ?x and ?max; "
        "the variable (head) check is skipped, the solutions are still compared"
    ),
}


# ------------------------------------------------------------------ rdflib switches


@contextlib.contextmanager
def rdflib_settings() -> Iterator[None]:
    """Set rdflib's global switches for strict SPARQL (see module docstring)."""
    term_logger = logging.getLogger("rdflib.term")
    saved_level = term_logger.level
    # rdflib logs a traceback for every ill-typed literal the suites use on purpose;
    # formatting them (pytest captures logs) costs more than some test runs.
    term_logger.setLevel(logging.CRITICAL)
    saved = (
        rdflib.NORMALIZE_LITERALS,
        rdflib.DAWG_LITERAL_COLLATION,
        rdflib_sparql.SPARQL_DEFAULT_GRAPH_UNION,
    )
    rdflib.NORMALIZE_LITERALS = False
    rdflib.DAWG_LITERAL_COLLATION = True
    rdflib_sparql.SPARQL_DEFAULT_GRAPH_UNION = False
    try:
        yield
    finally:
        term_logger.setLevel(saved_level)
        (
            rdflib.NORMALIZE_LITERALS,
            rdflib.DAWG_LITERAL_COLLATION,
            rdflib_sparql.SPARQL_DEFAULT_GRAPH_UNION,
        ) = saved


class TestTimeout(Exception):
    """A test exceeded its time limit."""

    __test__ = False  # not a pytest test class


@contextlib.contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Raise :class:`TestTimeout` after ``seconds`` (main thread on POSIX only).

    Elsewhere (e.g. a worker thread) there is no limit rather than a broken one.
    """
    usable = (
        seconds
        and hasattr(signal, "setitimer")
        and threading.current_thread() is threading.main_thread()
    )
    if not usable:
        yield
        return

    def on_alarm(_signum: int, _frame: FrameType | None) -> None:
        raise TestTimeout(f"no answer within {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# ---------------------------------------------------------------------- backends


class Backend:
    """Hands out an empty dataset per test and cleans up after it."""

    name = "?"
    #: Seconds spent emptying the store between tests (persistent backends).
    reset_seconds = 0.0
    #: Whether the loaded test data is committed before the query runs.
    commit_data = True

    def new_dataset(self) -> Dataset:
        raise NotImplementedError

    def finish(self, dataset: Dataset) -> None:
        """Called after every test, whatever its outcome."""

    def close(self) -> None:
        """Called once at the end of the run."""


class MemoryBackend(Backend):
    name = "Memory"

    def new_dataset(self) -> Dataset:
        return Dataset(store="Memory", default_union=False)


class CatalogueMemoryBackend(Backend):
    """``Dataset(store="catalogue")``: a fresh private in-memory SQLite store per test."""

    name = "catalogue"

    def new_dataset(self) -> Dataset:
        return Dataset(store="catalogue", default_union=False)

    def finish(self, dataset: Dataset) -> None:
        with contextlib.suppress(Exception):
            dataset.store.close()


class SQLStoreBackend(Backend):
    """One :class:`SQLStore` on a real database for the whole run, emptied between tests.

    ``reset`` chooses how: ``remove`` (default) drops every graph with
    ``remove_graph`` plus ``remove((None, None, None))`` and commits, which is the
    public API path; ``destroy`` drops the tables (``SQLStore.destroy``) and reopens,
    which re-runs the migrations; ``rollback`` never commits the test data.
    """

    def __init__(self, name: str, url: str, reset: str = "remove") -> None:
        from catalogue.graph.store import SQLStore

        self.name = name
        self.url = url
        self.reset = reset
        self.commit_data = reset != "rollback"
        self._factory = SQLStore
        self.store = SQLStore(url)
        if len(self.store) or list(self.store.contexts()):
            self.store.close()
            raise RuntimeError(f"refusing to run on a non-empty database: {url}")
        self.reset_failures = 0

    def new_dataset(self) -> Dataset:
        return Dataset(store=self.store, default_union=False)

    def finish(self, dataset: Dataset) -> None:
        started = time.perf_counter()
        try:
            if self.reset == "rollback":
                self.store.rollback()
            else:
                # Keep what the query phase wrote: rdflib binds its ~29 default prefixes
                # on a graph's first namespace lookup; rolled back, they would be
                # rewritten by every test (a long-lived store binds them once).
                try:
                    self.store.commit()
                except Exception:
                    self.store.rollback()  # e.g. a PostgreSQL transaction aborted by an error
            if self.reset == "remove":
                for graph in list(self.store.contexts()):
                    self.store.remove_graph(graph)
                self.store.remove((None, None, None), None)
                self.store.commit()
            elif self.reset == "destroy":
                self.store.destroy()
                self.store = self._factory(self.url)
            if len(self.store) or list(self.store.contexts()):
                raise RuntimeError("store not empty after reset")
        except Exception:
            # Start over from a dropped schema so the next test is not poisoned.
            self.reset_failures += 1
            with contextlib.suppress(Exception):
                self.store.close()
            self.store = self._factory(self.url)
            self.store.destroy()
            self.store = self._factory(self.url)
        finally:
            self.reset_seconds += time.perf_counter() - started

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.store.destroy()
        with contextlib.suppress(Exception):
            self.store.close()


@contextlib.contextmanager
def scratch_postgres(server_url: str) -> Iterator[str]:
    """A uniquely named PostgreSQL database on ``server_url``'s server, dropped after."""
    from catalogue.graph.database import scratch_postgres_database

    with scratch_postgres_database(server_url, "catalogue_w3c") as url:
        yield url


def _activate_catalogue_query_path() -> None:
    """Install the catalogue's SPARQL-to-SQL hooks if there are any.

    The first query on a catalogue store installs them (``CUSTOM_EVALS``); installing them here,
    before any test, makes catalogue runs deterministic whatever ran before in the
    process (under pytest-xdist: whichever test modules shared the worker).  The hook
    only acts on SQLStore graphs, so Memory runs are unaffected.
    """
    if importlib.util.find_spec("catalogue.graph.sparql.hooks") is not None:
        hooks = importlib.import_module("catalogue.graph.sparql.hooks")
        store = importlib.import_module("catalogue.graph.store")
        hooks.install(store.SQLStore)


def make_backend(store: str, url: str | None = None, reset: str = "remove") -> Backend:
    """A backend for ``store`` (one of :data:`STORES`); persistent ones need ``url``."""
    # Memory too: the hooks also give rdflib RE2 regular expressions and the parse lock,
    # and the baseline must not depend on whether a store was opened earlier in the process.
    _activate_catalogue_query_path()
    if store == "Memory":
        return MemoryBackend()
    if store == "catalogue":
        return CatalogueMemoryBackend()
    if store in ("sqlite-file", "postgres"):
        if not url:
            raise ValueError(f"store {store} needs a database URL")
        return SQLStoreBackend(store, url, reset)
    raise ValueError(f"unknown store {store!r}; choose from {', '.join(STORES)}")


# ------------------------------------------------------------------------ running


@dataclass
class Outcome:
    """How one test went."""

    iri: str
    status: str  # passed, failed, error, skipped
    reason: str = ""
    seconds: float = 0.0
    approval: str | None = None
    name: str = ""
    load_seconds: float = 0.0  # new dataset + loading + commit
    query_seconds: float = 0.0  # query + pulling all results
    #: Catalogue stores: why parts of the query were left to rdflib's evaluator (the
    #: ``--explain`` notes of the entries that ran no SQL); empty when all compiled.
    fallbacks: list[str] = field(default_factory=list)


@dataclass
class Report:
    """Outcomes of one suite on one store, plus what the manifests held besides."""

    suite: str
    store: str
    outcomes: list[Outcome] = field(default_factory=list)
    seconds: float = 0.0
    #: CPU time of this process (excludes the database server's work).
    cpu_seconds: float = 0.0
    reset_seconds: float = 0.0
    other_types: dict[str, int] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    #: Problems of the backend itself (e.g. a store that could not be emptied).
    backend_notes: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        counter = Counter(o.status for o in self.outcomes)
        return {s: counter.get(s, 0) for s in ("passed", "failed", "error", "skipped")}

    def counts_by_approval(self) -> dict[str, dict[str, int]]:
        """Counts per ``dawgt:approval`` (``unclassified`` when the test has none)."""
        out: dict[str, Counter[str]] = {}
        for o in self.outcomes:
            out.setdefault(o.approval or "unclassified", Counter())[o.status] += 1
        return {k: dict(sorted(v.items())) for k, v in sorted(out.items())}

    def passed(self) -> set[str]:
        return {o.iri for o in self.outcomes if o.status == "passed"}

    def fallbacks(self) -> Counter[str]:
        """How many queries left a part to rdflib, by reason (the note's first words)."""
        return Counter(note for o in self.outcomes for note in dict.fromkeys(o.fallbacks))

    def by_iri(self) -> dict[str, Outcome]:
        return {o.iri: o for o in self.outcomes}

    def to_json(self) -> dict[str, Any]:
        return {
            "suite": self.suite,
            "store": self.store,
            "counts": self.counts(),
            "counts_by_approval": self.counts_by_approval(),
            "seconds": round(self.seconds, 3),
            "cpu_seconds": round(self.cpu_seconds, 3),
            "reset_seconds": round(self.reset_seconds, 3),
            "load_seconds": round(sum(o.load_seconds for o in self.outcomes), 3),
            "query_seconds": round(sum(o.query_seconds for o in self.outcomes), 3),
            "not_evaluation_tests": self.other_types,
            "manifest_notes": self.notes,
            "backend_notes": self.backend_notes,
            "fallbacks": {"queries": sum(1 for o in self.outcomes if o.fallbacks and o.status != "skipped"),
                          "by_reason": dict(self.fallbacks().most_common())},
            "outcomes": [
                asdict(o)
                | {k: round(getattr(o, k), 4) for k in ("seconds", "load_seconds", "query_seconds")}
                for o in self.outcomes
            ],
        }


def _load_file(dataset: Dataset, target: Graph, path: Path) -> None:
    """Parse one data file and add its triples to ``target`` in one ``addN`` batch.

    Parsing into a scratch graph first gives the store one bulk insert instead of a
    round trip per triple; the file's own IRI is the base, as for the query.
    """
    fmt = RDF_FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise ValueError(f"no RDF parser for data file {path.name}")
    if fmt in QUAD_FORMATS:
        dataset.parse(path, format=fmt, publicID=path_to_iri(path))
        return
    scratch = Graph()
    scratch.parse(path, format=fmt, publicID=path_to_iri(path))
    target.addN((s, p, o, target) for s, p, o in scratch)


def _default_graph(dataset: Dataset) -> Graph:
    # rdflib 7.2 renamed default_context (now deprecated) to default_graph.
    if hasattr(type(dataset), "default_graph"):
        return dataset.default_graph
    return dataset.default_context


def load_test_data(
    dataset: Dataset, test: QueryTest, dataset_graphs: Iterable[str] = (), commit: bool = True
) -> None:
    """Default graph from ``qt:data``, named graphs from ``qt:graphData``; committed
    unless ``commit`` is false (then the query sees the store's own uncommitted writes).

    ``dataset_graphs`` are the query's FROM / FROM NAMED IRIs.  Tests like
    ``dataset-01`` have no data and expect the engine to fetch those documents.  A
    store answers from what it holds, so the local files they name are loaded as
    named graphs of that name beforehand (as Oxigraph's test runner does); rdflib's
    engine then uses the stored graph instead of fetching, with the same result.
    """
    for path in test.data:
        _load_file(dataset, _default_graph(dataset), path)
    loaded = set()
    for graph_data in test.graph_data:
        _load_file(dataset, dataset.graph(graph_data.name), graph_data.source)
        loaded.add(str(graph_data.name))
    for iri in dataset_graphs:
        if iri in loaded or not iri.startswith("file:"):
            continue
        path = iri_to_path(URIRef(iri))
        if path.is_file():
            _load_file(dataset, dataset.graph(URIRef(iri)), path)
            loaded.add(iri)
    if commit:
        dataset.commit()


def _materialise(result: Result) -> None:
    """Pull every solution now, so evaluation errors count as this test's errors."""
    if result.type == "SELECT":
        _ = result.bindings
    elif result.type in ("CONSTRUCT", "DESCRIBE"):
        _ = len(result.graph) if result.graph is not None else 0


def _short(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {exc}".replace("\n", " ")
    return text if len(text) <= 300 else text[:297] + "..."


def run_test(
    test: QueryTest,
    backend: Backend,
    *,
    timeout: float | None = DEFAULT_TIMEOUT,
    include_entailment: bool = False,
) -> Outcome:
    """Run one test; never raises for anything the test or the store does."""
    outcome = Outcome(test.iri, "error", approval=test.approval, name=test.name)
    skip = test.why_skipped(entailment=include_entailment)
    if skip:
        outcome.status, outcome.reason = "skipped", skip
        return outcome
    started = time.perf_counter()
    assert test.result is not None
    try:
        query_text = test.query.read_text(encoding="utf-8")
        shape = inspect_query(query_text, base=str(test.query_iri))
        expected = load_expected(test.result, str(path_to_iri(test.result)), shape.form)
    except Exception as exc:
        outcome.reason = f"harness: cannot read the test: {_short(exc)}"
        return outcome
    phase = "new dataset"
    dataset: Dataset | None = None
    try:
        with time_limit(timeout):
            dataset = backend.new_dataset()
            phase = "load"
            load_test_data(dataset, test, shape.dataset_graphs, backend.commit_data)
            loaded = time.perf_counter()
            outcome.load_seconds = loaded - started
            phase = "query"
            log = [] if hasattr(dataset.store, "sql_log") else None
            if log is not None:
                dataset.store.sql_log = log
            try:
                result = dataset.query(query_text, base=str(test.query_iri))
                _materialise(result)
            finally:
                if log is not None:
                    dataset.store.sql_log = None
                    outcome.fallbacks = [e.note for e in log if e.sql is None]
            outcome.query_seconds = time.perf_counter() - loaded
        phase = "compare"
        reason = compare_result(
            expected,
            result,
            shape,
            lax=test.lax_cardinality,
            check_variables=test.iri not in HEAD_ERRATA,
        )
        outcome.status, outcome.reason = ("failed", reason) if reason else ("passed", "")
    except ComparisonError as exc:
        outcome.reason = f"compare: {_short(exc)}"
    except Exception as exc:
        outcome.reason = f"{phase}: {_short(exc)}"
    finally:
        outcome.seconds = time.perf_counter() - started
        if dataset is not None:
            backend.finish(dataset)
    return outcome


def run_suite(
    suite: Suite | str,
    backend: Backend,
    *,
    only: str | None = None,
    timeout: float | None = DEFAULT_TIMEOUT,
    include_entailment: bool = False,
    progress: Callable[[Outcome], None] | None = None,
) -> Report:
    """Run every evaluation test of ``suite`` (or those whose IRI matches ``only``)."""
    if isinstance(suite, str):
        suite = load_suite(suite)
    pattern = re.compile(only) if only else None
    report = Report(
        suite=suite.name,
        store=backend.name,
        other_types=dict(sorted(suite.other_types.items())),
        notes=list(suite.notes)
        + [f"{iri}: {why}" for iri, why in HEAD_ERRATA.items() if iri in suite.by_iri()],
    )
    started, cpu_started = time.perf_counter(), time.process_time()
    with rdflib_settings():
        for test in suite.tests:
            if pattern and not pattern.search(test.iri):
                continue
            outcome = run_test(
                test, backend, timeout=timeout, include_entailment=include_entailment
            )
            report.outcomes.append(outcome)
            if progress:
                progress(outcome)
    report.seconds = time.perf_counter() - started
    report.cpu_seconds = time.process_time() - cpu_started
    report.reset_seconds = backend.reset_seconds
    failures = getattr(backend, "reset_failures", 0)
    if failures:
        report.backend_notes.append(
            f"the store could not be emptied {failures} times and was recreated (destroy)"
        )
    return report


# ---------------------------------------------------------------------- baseline


def load_baseline(path: Path = BASELINE_PATH) -> dict[str, set[str]]:
    """Suite -> IRIs that rdflib's Memory store passes (empty when no file)."""
    if not path.is_file():
        return {}
    data = json.loads(path.read_text(encoding="utf-8"))
    return {suite: set(entry["passed"]) for suite, entry in data["suites"].items()}


def write_baseline(report: Report, path: Path = BASELINE_PATH) -> None:
    """Record ``report``'s passes as the Memory baseline of its suite (others kept).

    The tests Memory does not pass are listed too, with the reason, so that a
    backend passing them can be checked by hand before the baseline is raised.
    """
    suites: dict[str, Any] = {}
    if path.is_file():
        suites = json.loads(path.read_text(encoding="utf-8"))["suites"]
    root = conformance_root()
    local = root.as_uri() if root is not None else "\0"

    suites[report.suite] = {
        "counts": report.counts(),
        "passed": sorted(report.passed()),
        "not_passed": {  # local file IRIs shortened so the file is machine-independent
            o.iri: f"{o.status}: {o.reason}".replace(local, "<w3c>")
            for o in sorted(report.outcomes, key=lambda o: o.iri)
            if o.status != "passed"
        },
    }
    data = {
        "about": (
            "Tests rdflib's Memory store passes with tests/graph/sparql/w3c/runner.py; regenerate with "
            "`python -m tests.graph.sparql.w3c.runner --suite SUITE --store Memory --write-baseline`."
        ),
        "rdflib": rdflib.__version__,
        "suites": dict(sorted(suites.items())),
    }
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------- CLI


def format_report(report: Report, baseline: set[str] | None = None, verbose: bool = False) -> str:
    """Human-readable summary: counts, then failures and errors with reasons."""
    counts = report.counts()
    lines = [
        f"{report.suite} on {report.store}: "
        + ", ".join(f"{n} {s}" for s, n in counts.items())
        + f" ({len(report.outcomes)} tests, {report.seconds:.1f} s, {report.cpu_seconds:.1f} s CPU)"
    ]
    load = sum(o.load_seconds for o in report.outcomes)
    query = sum(o.query_seconds for o in report.outcomes)
    lines.append(
        f"  time: loading {load:.1f} s, querying {query:.1f} s, "
        f"emptying the store {report.reset_seconds:.1f} s"
    )
    lines.extend(f"  BACKEND: {note}" for note in report.backend_notes)
    ran = [o for o in report.outcomes if o.status != "skipped"]
    if any(o.fallbacks for o in ran) or report.store != "Memory":
        falling = [o for o in ran if o.fallbacks]
        lines.append(f"  fallbacks to rdflib's evaluator: {len(falling)} of {len(ran)} queries")
        lines.extend(f"    {n:4d}  {reason}" for reason, n in report.fallbacks().most_common(15))
    for approval, by_status in report.counts_by_approval().items():
        lines.append(f"  {approval}: " + ", ".join(f"{n} {s}" for s, n in by_status.items()))
    if report.other_types:
        lines.append(
            "  not query-evaluation tests (not run): "
            + ", ".join(f"{n} {t}" for t, n in report.other_types.items())
        )
    if baseline is not None:
        passed = report.passed()
        ran = {o.iri for o in report.outcomes}
        regressions = sorted((baseline & ran) - passed)
        lines.append(
            f"  Memory baseline: {len(baseline & ran)} tests; regressions {len(regressions)}; "
            f"passing beyond it {len(passed - baseline)}"
        )
    for status in ("failed", "error") + (("skipped",) if verbose else ()):
        chosen = [o for o in report.outcomes if o.status == status]
        if chosen:
            lines.append(f"{status.upper()} ({len(chosen)}):")
            lines.extend(f"  {o.iri}\n      {o.reason}" for o in chosen)
    if verbose and report.notes:
        lines.append("MANIFEST NOTES:")
        lines.extend(f"  {note}" for note in report.notes)
    if verbose:
        slowest = sorted(report.outcomes, key=lambda o: o.seconds, reverse=True)[:5]
        lines.append("SLOWEST: " + ", ".join(f"{o.iri} {o.seconds:.2f}s" for o in slowest))
    return "\n".join(lines)


def _parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m tests.graph.sparql.w3c.runner", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--suite", choices=sorted(SUITES), required=True)
    parser.add_argument("--store", choices=STORES, default="Memory")
    parser.add_argument(
        "--url",
        help="sqlite-file: database file/URL (default: a temporary file); postgres: server "
        f"URL to create a scratch database on (default: ${POSTGRES_URL_ENV})",
    )
    parser.add_argument(
        "--reset",
        choices=("remove", "destroy", "rollback"),
        default="remove",
        help="how sqlite-file/postgres are emptied between tests (default: remove; see "
        "SQLStoreBackend)",
    )
    parser.add_argument("--json", type=Path, help="write the full report here")
    parser.add_argument("--only", help="regular expression on test IRIs")
    parser.add_argument("--timeout", type=float, default=DEFAULT_TIMEOUT, help="seconds per test")
    parser.add_argument(
        "--include-entailment",
        action="store_true",
        help="also run tests that need an entailment regime (skipped by default)",
    )
    parser.add_argument(
        "--write-baseline", action="store_true", help="record the passes (Memory store only)"
    )
    parser.add_argument("-v", "--verbose", action="store_true")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = _parse_args(argv)
    if args.write_baseline and (args.store != "Memory" or args.only or args.include_entailment):
        print("--write-baseline needs --store Memory, no --only, no --include-entailment")
        return 2
    root = conformance_root()
    if root is None:
        print("W3C suites not found (expected ../shared/conformance/w3c next to the repo)")
        return 2
    suite = load_suite(args.suite, root)
    with contextlib.ExitStack() as stack:
        url = args.url
        if args.store == "postgres":
            server = url or os.environ.get(POSTGRES_URL_ENV)
            if not server:
                print(f"--store postgres needs --url or ${POSTGRES_URL_ENV}")
                return 2
            url = stack.enter_context(scratch_postgres(server))
        elif args.store == "sqlite-file" and not url:
            folder = stack.enter_context(tempfile.TemporaryDirectory(prefix="w3c-"))
            url = f"sqlite:///{Path(folder) / 'w3c.db'}"
        backend = make_backend(args.store, url, args.reset)
        stack.callback(backend.close)

        def progress(outcome: Outcome) -> None:
            if args.verbose:
                print(f"{outcome.status:8} {outcome.seconds:6.2f}s {outcome.iri}", flush=True)

        report = run_suite(
            suite,
            backend,
            only=args.only,
            timeout=args.timeout,
            include_entailment=args.include_entailment,
            progress=progress,
        )
    baseline = load_baseline().get(args.suite)
    print(format_report(report, baseline, args.verbose))
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report.to_json(), indent=1) + "\n", encoding="utf-8")
    if args.write_baseline:
        write_baseline(report)
        print(f"baseline for {args.suite} written to {BASELINE_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
