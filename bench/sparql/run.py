"""SPARQL discovery benchmark: the catalogue store next to Oxigraph and rdflib's Memory store.

Usage (from the repository root; ``make bench-sparql`` generates the data and runs the
first line)::

    .venv/bin/python -m bench.sparql.run                          # scale 1: ~1,003,000 triples
    .venv/bin/python -m bench.sparql.run --scale 0.05 --runs 3
    .venv/bin/python -m bench.sparql.run --engines oxigraph,sqlite --queries 01,05,13
    .venv/bin/python -m bench.sparql.run --postgres postgresql+psycopg://postgres@127.0.0.1/test
    .venv/bin/python bench/sparql/run.py --skip-memory --timeout 20

What runs, in one process:

1. The catalogue from ``bench.sparql.generate`` (N-Quads, generated into ``bench/data/``
   when missing) is loaded into each engine, timed: ``sqlite`` (the catalogue store on
   a SQLite file in a temporary folder, through ``catalogue.graph.load.bulk`` when it exists,
   else ``SQLStore.addN`` in one transaction), ``postgres`` (the same on a fresh
   PostgreSQL database, dropped afterwards), ``oxigraph`` (``pyoxigraph.Store()`` in
   memory, ``bulk_load``) and ``memory`` (``rdflib.Dataset`` on the Memory store).
   Disk use per triple is reported for SQLite and PostgreSQL.
2. Every query of ``queries/*.rq`` runs on every engine, engine after engine for one
   query before the next query, so that drift of a noisy machine hits all engines
   alike: one warm-up run, then the median of ``--runs`` timed runs, each consuming the
   whole result.  Queries see the union of all named graphs, as ``catalogue query``
   does.  Slow engines get a time budget (``--timeout``): a run longer than that is
   cancelled, and fewer runs are made when one run takes a large part of it.
3. The answers are compared with Oxigraph's, as canonical N-Triples strings (in order
   when the query has ORDER BY, else as bags; graphs with blank nodes renamed by
   position).  DESCRIBE is implementation-defined, so a different DESCRIBE graph is
   reported as such rather than as a wrong answer.

Ratios are engine time / Oxigraph time for the same query in the same process; compare
ratios, not seconds, between machines.  Results: ``bench/results/sparql-<UTC time>.json``
and ``bench/results/sparql-latest.json`` (git-ignored, like all of bench/results/).
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import math
import os
import platform
import re
import signal
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any, Literal

REPO = Path(__file__).resolve().parents[2]
if __package__ in (None, ""):  # run as a script: make ``bench.sparql`` importable
    sys.path.insert(0, str(REPO))

from bench.sparql import compare, generate  # noqa: E402

QUERIES_DIR = Path(__file__).resolve().parent / "queries"
RESULTS_DIR = REPO / "bench" / "results"
ENGINES = ("oxigraph", "sqlite", "postgres", "memory")
LABELS = {
    "oxigraph": "oxigraph",
    "sqlite": "catalogue sqlite",
    "postgres": "catalogue pg",
    "memory": "rdflib memory",
}
DEFAULT_POSTGRES = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
#: The goals the catalogue store is held to (bench/README.md), checked on SQLite.
TARGETS = {
    "max_ratio": 1.5,
    "geomean_ratio": 1.0,
    "load_triples_per_second": 200_000,
    "bytes_per_triple": 100,
}
#: Quads handed to the store per addN call in the fallback loader.
ADD_BATCH = 50_000


# ------------------------------------------------------------------------- answers
@dataclass
class Answer:
    """A query result in engine-neutral form (see :mod:`bench.sparql.compare`)."""

    kind: Literal["select", "ask", "graph"]
    variables: list[str] = field(default_factory=list)
    rows: list[tuple[str | None, ...]] = field(default_factory=list)
    boolean: bool | None = None
    triples: list[str] = field(default_factory=list)

    @property
    def size(self) -> int | bool:
        if self.kind == "ask":
            return bool(self.boolean)
        return len(self.rows) if self.kind == "select" else len(self.triples)

    def keyed_rows(self) -> list[tuple[tuple[str, str | None], ...]]:
        """Rows as (variable, value) pairs in variable-name order, so column order is moot."""
        order = sorted(range(len(self.variables)), key=lambda i: self.variables[i])
        return [tuple((self.variables[i], row[i]) for i in order) for row in self.rows]


def ordered(query: str) -> bool:
    return re.search(r"\bORDER\s+BY\b", _strip_comments(query), re.IGNORECASE) is not None


def query_form(query: str) -> str:
    body = re.sub(r"(?im)^\s*(PREFIX|BASE)\s+\S+\s*<[^>]*>\s*", "", _strip_comments(query))
    match = re.search(r"\b(SELECT|ASK|CONSTRUCT|DESCRIBE)\b", body, re.IGNORECASE)
    return match.group(1).upper() if match else "SELECT"


def _strip_comments(query: str) -> str:
    return re.sub(r"(?m)^\s*#.*$", "", query)


def compare_answers(reference: Answer, other: Answer, query: str) -> dict[str, Any]:
    """Whether two answers are the same; when not, how they differ (a few examples)."""
    if reference.kind != other.kind:
        return {"same": False, "detail": f"{reference.kind} versus {other.kind}"}
    if reference.kind == "ask":
        same = reference.boolean == other.boolean
        return {
            "same": same,
            "detail": "" if same else f"{reference.boolean} versus {other.boolean}",
        }
    if reference.kind == "graph":
        a, b = Counter(reference.triples), Counter(other.triples)
    else:
        if sorted(reference.variables) != sorted(other.variables):
            return {
                "same": False,
                "detail": f"variables {reference.variables} versus {other.variables}",
            }
        ra, rb = reference.keyed_rows(), other.keyed_rows()
        if ordered(query) and Counter(ra) == Counter(rb) and ra != rb:
            first = next(i for i, (x, y) in enumerate(zip(ra, rb, strict=True)) if x != y)
            return {"same": False, "detail": f"same rows, different order from row {first}"}
        a, b = Counter(ra), Counter(rb)
    if a == b:
        return {"same": True, "detail": ""}
    missing, extra = a - b, b - a
    return {
        "same": False,
        "detail": f"{sum(missing.values())} only in the reference, {sum(extra.values())} only here",
        "only_reference": [str(x) for x in list(missing.elements())[:5]],
        "only_here": [str(x) for x in list(extra.elements())[:5]],
    }


# ------------------------------------------------------------------------- timeouts
class QueryTimeout(Exception):
    """A run went over its time budget and was cancelled."""


class _Watchdog:
    """One thread that cancels a run's statement when its deadline passes.

    A ``threading.Timer`` per run started a thread inside the timed region: 0.3-0.5 ms
    on this class of machine, added to every engine's every run, which hid most of the
    difference on sub-millisecond queries (query 14: Oxigraph 0.15 ms measured as
    0.4 ms). The thread looks at the deadline twice a second; arming it is an
    assignment.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._due: float | None = None
        self._interrupt: Callable[[], None] | None = None
        self.fired = threading.Event()
        threading.Thread(target=self._watch, name="bench-deadline", daemon=True).start()

    def arm(self, seconds: float, interrupt: Callable[[], None]) -> None:
        with self._lock:
            self.fired.clear()
            self._due, self._interrupt = time.monotonic() + seconds, interrupt

    def disarm(self) -> None:
        with self._lock:
            self._due = self._interrupt = None

    def _watch(self) -> None:
        while True:
            time.sleep(0.5)
            with self._lock:
                if self._due is None or time.monotonic() < self._due:
                    continue
                interrupt, self._due, self._interrupt = self._interrupt, None, None
                self.fired.set()
            if interrupt is not None:
                with contextlib.suppress(Exception):
                    interrupt()


_WATCHDOG: _Watchdog | None = None


@contextlib.contextmanager
def deadline(seconds: float, interrupt: Callable[[], None]) -> Iterator[None]:
    """Cancel the enclosed run after ``seconds``.

    Python code (rdflib's evaluator) is stopped by SIGALRM; a statement running inside
    SQLite or PostgreSQL does not see signals, so a watching thread also asks the
    database to cancel it (``sqlite3.Connection.interrupt``, psycopg's ``cancel``).
    """
    global _WATCHDOG
    if not hasattr(signal, "SIGALRM") or threading.current_thread() is not threading.main_thread():
        yield
        return
    if _WATCHDOG is None:
        _WATCHDOG = _Watchdog()
    watchdog = _WATCHDOG
    alarmed = False

    def on_alarm(_signum: int, _frame: Any) -> None:
        nonlocal alarmed
        alarmed = True
        raise QueryTimeout

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    watchdog.arm(seconds, interrupt)
    try:
        yield
    except QueryTimeout:
        raise
    except Exception as exc:
        if alarmed or watchdog.fired.is_set():
            raise QueryTimeout from exc
        raise
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        watchdog.disarm()
        signal.signal(signal.SIGALRM, previous)


# -------------------------------------------------------------------------- loading
def rdflib_quads(path: Path) -> Iterator[tuple[Any, Any, Any, Any]]:
    """The file's quads as rdflib terms, parsed by Oxigraph (rdflib's parser is slower).

    Literals keep their lexical form (``normalize=False``), as the catalogue's own
    converter makes them, so every engine holds exactly the same terms.
    """
    import pyoxigraph as ox
    from rdflib.term import BNode, Literal, URIRef

    xsd_string = "http://www.w3.org/2001/XMLSchema#string"
    lang_string = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"
    cache: dict[Any, Any] = {}

    def term(t: Any) -> Any:
        found = cache.get(t)
        if found is not None:
            return found
        if isinstance(t, ox.NamedNode):
            found = URIRef(t.value)
        elif isinstance(t, ox.BlankNode):
            found = BNode(t.value)
        elif isinstance(t, ox.Literal):
            dt = t.datatype.value
            if t.language:
                found = Literal(t.value, lang=t.language, normalize=False)
            elif dt in (xsd_string, lang_string):
                found = Literal(t.value, normalize=False)
            else:
                found = Literal(t.value, datatype=URIRef(dt), normalize=False)
        else:
            return None  # the default graph
        if len(cache) > 1_000_000:
            cache.clear()
        cache[t] = found
        return found

    for q in ox.parse(path=str(path), format=ox.RdfFormat.N_QUADS):
        yield term(q.subject), term(q.predicate), term(q.object), term(q.graph_name)


def _batches(items: Iterator[Any], size: int) -> Iterator[list[Any]]:
    batch: list[Any] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def load_catalogue(cat: Any, path: Path) -> str:
    """Load ``path`` into an open catalogue, committed; return the method used.

    The bulk loader (``catalogue.graph.load.bulk.load_file`` or ``Catalogue.load``) is used
    when the checkout has one; otherwise quads go through ``SQLStore.addN`` in batches,
    all in one transaction.
    """
    try:
        from catalogue.graph.load import bulk  # type: ignore[attr-defined]
    except ImportError:
        bulk = None
    load_file = getattr(bulk, "load_file", None)
    if load_file is not None:
        load_file(cat.store, str(path))
        cat.store.commit()
        return "catalogue.graph.load.bulk.load_file"
    if hasattr(cat, "load"):
        cat.load(str(path))
        cat.store.commit()
        return "Catalogue.load"
    try:
        for batch in _batches(rdflib_quads(path), ADD_BATCH):
            cat.store.addN(batch)
        cat.store.commit()
    except BaseException:
        cat.store.rollback()
        raise
    return "SQLStore.addN (one transaction)"


# -------------------------------------------------------------------------- engines
class Engine:
    """One SPARQL engine holding the benchmark data."""

    name = "engine"

    def load(self, path: Path, triples: int) -> dict[str, Any]:
        raise NotImplementedError

    def execute(self, query: str) -> Any:
        """Run ``query`` and consume the whole result (this is what is timed)."""
        raise NotImplementedError

    def answer(self, raw: Any) -> Answer:
        """The engine-neutral form of what :meth:`execute` returned (not timed)."""
        raise NotImplementedError

    def interrupt(self) -> None:
        """Cancel a running statement from another thread, if the engine can."""

    def reset(self) -> None:
        """Get usable again after a cancelled run."""

    def close(self) -> None:
        """Release everything (files, databases)."""


class OxigraphEngine(Engine):
    name = "oxigraph"

    def load(self, path: Path, triples: int) -> dict[str, Any]:
        import pyoxigraph as ox

        self.store = ox.Store()
        start = time.perf_counter()
        self.store.bulk_load(path=str(path), format=ox.RdfFormat.N_QUADS)
        seconds = time.perf_counter() - start
        return {
            "seconds": seconds,
            "triples": len(self.store),
            "method": "Store().bulk_load (in memory)",
        }

    def execute(self, query: str) -> Any:
        import pyoxigraph as ox

        result = self.store.query(query, use_default_graph_as_union=True)
        if isinstance(result, ox.QueryBoolean):
            return ("ask", bool(result))
        if isinstance(result, ox.QuerySolutions):
            variables = [v.value for v in result.variables]
            return ("select", variables, [tuple(solution) for solution in result])
        return ("graph", [(t.subject, t.predicate, t.object) for t in result])

    def answer(self, raw: Any) -> Answer:
        term = compare.from_oxigraph
        if raw[0] == "ask":
            return Answer("ask", boolean=raw[1])
        if raw[0] == "select":
            return Answer("select", raw[1], [tuple(term(v) for v in row) for row in raw[2]])
        triples = [(term(s), term(p), term(o)) for s, p, o in raw[1]]
        return Answer("graph", triples=compare.canonical_graph(triples))  # type: ignore[arg-type]

    def close(self) -> None:
        self.store = None


class RdflibEngine(Engine):
    """Anything queried through ``rdflib.Dataset.query``: the Memory store, or ours."""

    dataset: Any

    def _query(self, query: str) -> Any:
        return self.dataset.query(query)

    def execute(self, query: str) -> Any:
        result = self._query(query)
        if result.type == "ASK":
            return ("ask", bool(result.askAnswer))
        if result.type == "SELECT":
            return ("select", [str(v) for v in result.vars or []], [tuple(row) for row in result])
        return ("graph", list(result.graph))

    def answer(self, raw: Any) -> Answer:
        term = compare.from_rdflib
        if raw[0] == "ask":
            return Answer("ask", boolean=raw[1])
        if raw[0] == "select":
            return Answer("select", raw[1], [tuple(term(v) for v in row) for row in raw[2]])
        triples = [(term(s), term(p), term(o)) for s, p, o in raw[1]]
        return Answer("graph", triples=compare.canonical_graph(triples))  # type: ignore[arg-type]


class MemoryEngine(RdflibEngine):
    name = "memory"

    def load(self, path: Path, triples: int) -> dict[str, Any]:
        from rdflib import Dataset

        self.dataset = Dataset(store="Memory", default_union=True)
        start = time.perf_counter()
        for batch in _batches(rdflib_quads(path), ADD_BATCH):
            self.dataset.addN(batch)
        seconds = time.perf_counter() - start
        return {
            "seconds": seconds,
            "triples": len(self.dataset.store),
            "method": "Dataset(store='Memory').addN (parsed by Oxigraph)",
        }

    def close(self) -> None:
        self.dataset = None


class CatalogueEngine(RdflibEngine):
    """The catalogue store, queried as ``catalogue query`` does (``Catalogue.query``)."""

    def __init__(self, name: str, url: str, *, vacuum: bool = True) -> None:
        self.name = name
        self.url = url
        self.vacuum = vacuum
        self.cat: Any = None
        self._dbapi: Any = None

    def _open(self) -> None:
        import catalogue

        self.cat = catalogue.open(self.url)
        self.dataset = self.cat.dataset
        try:
            self._dbapi = self.cat.store.connection.connection.dbapi_connection
        except Exception:
            self._dbapi = None

    def _query(self, query: str) -> Any:
        return self.cat.query(query)

    def _count(self) -> int | None:
        try:
            return int(
                self.cat.store.connection.exec_driver_sql("SELECT count(*) FROM quads").scalar()
            )
        except Exception:
            return None
        finally:
            self.cat.store.rollback()

    def load(self, path: Path, triples: int) -> dict[str, Any]:
        self._open()
        start = time.perf_counter()
        method = load_catalogue(self.cat, path)
        seconds = time.perf_counter() - start
        stats = {"seconds": seconds, "triples": self._count(), "method": method}
        stats.update(self._after_load(triples))
        return stats

    def _after_load(self, triples: int) -> dict[str, Any]:
        return {}

    def interrupt(self) -> None:
        dbapi = self._dbapi
        if dbapi is None:
            return
        if isinstance(dbapi, sqlite3.Connection):
            dbapi.interrupt()
        elif hasattr(dbapi, "cancel"):
            dbapi.cancel()

    def reset(self) -> None:
        """Drop the connection a cancelled run may have left mid-protocol, and reconnect."""
        with contextlib.suppress(Exception):
            self.cat.store.connection.invalidate()
        self.close()
        self._open()

    def close(self) -> None:
        if self.cat is not None:
            with contextlib.suppress(Exception):
                self.cat.close()
            self.cat = None


class SQLiteEngine(CatalogueEngine):
    def __init__(self, *, vacuum: bool = True) -> None:
        self.tmp = tempfile.TemporaryDirectory(prefix="bench-sparql-")
        self.path = Path(self.tmp.name) / "catalogue.db"
        super().__init__("sqlite", f"sqlite:///{self.path}", vacuum=vacuum)

    def _files(self) -> int:
        return sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*"))

    def _after_load(self, triples: int) -> dict[str, Any]:
        stats: dict[str, Any] = {"bytes_after_load": self._files()}  # db + -wal + -shm, still open
        self.close()  # the last connection checkpoints the WAL into the database
        stats["bytes"] = self._files()
        if self.vacuum:
            start = time.perf_counter()
            with contextlib.closing(sqlite3.connect(self.path)) as db:
                db.execute("VACUUM")
                db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            stats["vacuum_seconds"] = time.perf_counter() - start
            stats["bytes_vacuumed"] = self._files()
        self._open()
        return stats

    def cleanup(self) -> None:
        self.close()
        self.tmp.cleanup()


class PostgresEngine(CatalogueEngine):
    """The catalogue store on a new PostgreSQL database ``bench_sparql_<hex>``, dropped after."""

    def __init__(self, base_url: str) -> None:
        from sqlalchemy.engine import make_url

        from catalogue.graph.database import database_url

        self.base = make_url(database_url(base_url))
        self.database = f"bench_sparql_{uuid.uuid4().hex[:12]}"
        self._admin("CREATE DATABASE")
        url = self.base.set(database=self.database).render_as_string(hide_password=False)
        super().__init__("postgres", url)

    def _admin(self, statement: str) -> None:
        from sqlalchemy import create_engine

        admin = create_engine(self.base, isolation_level="AUTOCOMMIT")
        try:
            with admin.connect() as conn:
                if statement == "CREATE DATABASE":
                    conn.exec_driver_sql(f'CREATE DATABASE "{self.database}"')
                else:
                    conn.exec_driver_sql(f'DROP DATABASE IF EXISTS "{self.database}" WITH (FORCE)')
        finally:
            admin.dispose()

    def _after_load(self, triples: int) -> dict[str, Any]:
        # Autovacuum would analyse the new tables within a minute or so; doing it now
        # makes the query plans (and so the timings) reproducible.
        conn = self.cat.store.connection
        start = time.perf_counter()
        conn.exec_driver_sql("ANALYZE")
        self.cat.store.commit()
        analyze = time.perf_counter() - start
        rows = self.cat.store.connection.exec_driver_sql(
            "SELECT c.relname, pg_total_relation_size(c.oid) FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = current_schema() AND c.relkind = 'r'"
        ).all()
        self.cat.store.rollback()
        server = self.cat.store.connection.exec_driver_sql("SHOW server_version").scalar()
        self.cat.store.rollback()
        return {
            "analyze_seconds": analyze,
            "bytes": sum(int(size) for _, size in rows),
            "bytes_by_table": {name: int(size) for name, size in sorted(rows)},
            "server_version": server,
        }

    def cleanup(self) -> None:
        self.close()
        with contextlib.suppress(Exception):
            self._admin("DROP DATABASE")


def postgres_reachable(url: str) -> str | None:
    """None when a PostgreSQL server answers at ``url``, else why not."""
    try:
        from sqlalchemy import create_engine, text

        from catalogue.graph.database import database_url

        engine = create_engine(database_url(url), connect_args={"connect_timeout": 3})
        try:
            with engine.connect() as conn:
                conn.execute(text("SELECT 1"))
        finally:
            engine.dispose()
    except Exception as exc:
        return f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
    return None


# ------------------------------------------------------------------------ measuring
@dataclass
class Measurement:
    status: Literal["ok", "timeout", "error"] = "ok"
    samples: list[float] = field(default_factory=list)
    warmup: float | None = None
    note: str = ""
    error: str = ""
    answer: Answer | None = None

    @property
    def median(self) -> float | None:
        return statistics.median(self.samples) if self.samples else None


def run_once(engine: Engine, query: str, limit: float) -> tuple[float, Any]:
    gc.collect()
    start = time.perf_counter()
    with deadline(limit, engine.interrupt):
        raw = engine.execute(query)
    return time.perf_counter() - start, raw


def measure(engine: Engine, query: str, runs: int, timeout: float) -> Measurement:
    """Warm-up, then up to ``runs`` timed runs within about ``timeout`` seconds.

    A run is cancelled after ``timeout``.  A warm-up longer than half the budget is the
    only sample; otherwise timed runs go on while the next one would still end within
    the budget (at least one), so a slow engine costs at most ~1.5 x ``timeout``.
    """
    m = Measurement()
    raw: Any = None
    try:
        m.warmup, raw = run_once(engine, query, timeout)
        # What the warm-up left behind for good (a parser's grammar built on first use,
        # caches of compiled statements) joins the frozen data: otherwise the
        # ``gc.collect()`` before each timed run walks it (20,000 objects after the
        # first SPARQL query, 3 ms), and the run then starts with the processor's caches
        # full of the collector's work: 0.44 -> 1.0-1.5 ms for query 14 on PostgreSQL
        # at a million triples, an engine in Python paying for its heap on every run.
        # (Frozen objects are still freed when their last reference goes; frozen cycles
        # only when the run ends and everything is unfrozen.)
        gc.collect()
        gc.freeze()
        if m.warmup > timeout / 2:
            m.samples = [m.warmup]
            m.note = "warm-up only"
        else:
            spent = m.warmup
            for _ in range(runs):
                seconds, raw = run_once(engine, query, timeout)
                m.samples.append(seconds)
                spent += seconds
                if spent + seconds > timeout:
                    break
            if len(m.samples) < runs:
                m.note = f"{len(m.samples)} of {runs} runs (budget)"
    except QueryTimeout:
        engine.reset()
        m.status = "timeout"
        if m.samples:
            m.note = f"timed out after {len(m.samples)} runs"
            m.status = "ok"
    except Exception as exc:
        engine.reset()
        m.status, m.error = "error", f"{type(exc).__name__}: {exc}"[:500]
        return m
    if raw is not None:
        try:
            m.answer = engine.answer(raw)
        except Exception as exc:
            m.status, m.error = "error", f"answer: {type(exc).__name__}: {exc}"[:500]
    return m


# ------------------------------------------------------------------------ reporting
def fmt_seconds(value: float | None) -> str:
    if value is None:
        return "-"
    if value < 0.01:
        return f"{value:.4f}"
    if value < 1:
        return f"{value:.3f}"
    return f"{value:.2f}" if value < 100 else f"{value:.0f}"


def geomean(values: list[float]) -> float | None:
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


def versions() -> dict[str, str]:
    out = {"python": platform.python_version(), "sqlite": sqlite3.sqlite_version}
    for package in ("rdflib", "pyoxigraph", "sqlalchemy", "psycopg", "zarr-catalogue"):
        with contextlib.suppress(PackageNotFoundError):
            out[package] = version(package)
    return out


def git_state() -> dict[str, Any]:
    try:
        head = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True
        ).stdout.strip()
        dirty = (
            subprocess.run(
                ["git", "status", "--porcelain", "--untracked-files=no"],
                cwd=REPO,
                capture_output=True,
                text=True,
                check=True,
            ).stdout.strip()
            != ""
        )
        return {"commit": head, "dirty": dirty}
    except (OSError, subprocess.CalledProcessError):
        return {}


def table(rows: list[list[str]], header: list[str]) -> str:
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(len(header))]

    def line(cells: list[str]) -> str:
        return " | ".join(
            c.ljust(w) if i == 0 else c.rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        )

    return "\n".join([line(header), "-+-".join("-" * w for w in widths), *map(line, rows)])


# ---------------------------------------------------------------------------- main
def select_queries(spec: str | None) -> list[Path]:
    files = sorted(QUERIES_DIR.glob("*.rq"))
    if not spec:
        return files
    wanted = [s.strip() for s in spec.split(",") if s.strip()]
    chosen = [f for f in files if any(f.stem == w or f.stem.startswith(w) for w in wanted)]
    if not chosen:
        raise SystemExit(f"no query matches --queries {spec!r} in {QUERIES_DIR}")
    return chosen


def ensure_data(args: argparse.Namespace) -> tuple[Path, dict[str, Any]]:
    path = args.data or generate.default_output(args.scale)
    if args.data is None and not generate.up_to_date(path, args.scale):
        print(f"generating {path} (scale {args.scale:g}) ...", file=sys.stderr)
        generate.generate(path, args.scale)
    if not path.exists():
        raise SystemExit(f"no data file {path}")
    try:
        info = json.loads(generate.sidecar(path).read_text())
    except (OSError, ValueError):
        info = {}
    if not info.get("triples"):
        with open(path, "rb") as f:
            info["triples"] = sum(1 for _ in f)
    return path, info


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description="SPARQL discovery benchmark: the catalogue store next to Oxigraph and rdflib.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--scale",
        type=float,
        default=1.0,
        help="data size; 1.0 = 1,003,000 triples (default), 0.01 for a smoke run",
    )
    parser.add_argument(
        "--data",
        type=Path,
        default=None,
        help="use this N-Quads file instead of bench/data/catalogue-<scale>.nq",
    )
    parser.add_argument("--runs", type=int, default=5, help="timed runs per query (default 5)")
    parser.add_argument(
        "--engines",
        default=",".join(ENGINES),
        help=f"comma-separated subset of {','.join(ENGINES)}",
    )
    parser.add_argument(
        "--queries",
        default=None,
        help="comma-separated query names or number prefixes, e.g. 01,05,13",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=60.0,
        help="seconds: a run is cancelled after this, and each engine spends "
        "about this long per query at most (default 60)",
    )
    parser.add_argument(
        "--skip-memory", action="store_true", help="leave out rdflib's Memory store"
    )
    parser.add_argument(
        "--postgres",
        default=None,
        help="server URL to create a scratch database on (default "
        "$CATALOGUE_TEST_POSTGRES_URL or " + DEFAULT_POSTGRES + ")",
    )
    parser.add_argument("--no-vacuum", action="store_true", help="do not VACUUM the SQLite file")
    parser.add_argument(
        "--output",
        type=Path,
        default=None,
        help="write the JSON results here only (default: bench/results/sparql-<time>.json "
        "and bench/results/sparql-latest.json)",
    )
    args = parser.parse_args(argv)

    engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    unknown = sorted(set(engines) - set(ENGINES))
    if unknown:
        parser.error(f"unknown engines {unknown}; choose from {list(ENGINES)}")
    if args.skip_memory and "memory" in engines:
        engines.remove("memory")
    engines = [e for e in ENGINES if e in engines]
    queries = select_queries(args.queries)
    path, data_info = ensure_data(args)
    triples = int(data_info["triples"])
    print(
        f"data: {path} ({triples:,} triples, {data_info.get('arrays', '?')} arrays, "
        f"{data_info.get('groups', '?')} groups)",
        file=sys.stderr,
    )

    skipped: dict[str, str] = {}
    pg_url = args.postgres or os.environ.get("CATALOGUE_TEST_POSTGRES_URL") or DEFAULT_POSTGRES
    if "postgres" in engines:
        why = postgres_reachable(pg_url)
        if why:
            print(f"postgres: skipped, no server at {pg_url} ({why})", file=sys.stderr)
            skipped["postgres"] = why
            engines.remove("postgres")

    loaded: dict[str, Engine] = {}
    load_stats: dict[str, dict[str, Any]] = {}
    cleanups: list[Callable[[], None]] = []
    started = datetime.now(UTC)
    try:
        for name in engines:
            engine: Engine
            if name == "oxigraph":
                engine = OxigraphEngine()
            elif name == "memory":
                engine = MemoryEngine()
            elif name == "sqlite":
                engine = SQLiteEngine(vacuum=not args.no_vacuum)
                cleanups.append(engine.cleanup)
            else:
                engine = PostgresEngine(pg_url)
                cleanups.append(engine.cleanup)
            print(f"loading into {LABELS[name]} ...", file=sys.stderr, flush=True)
            gc.collect()
            try:
                stats = engine.load(path, triples)
            except Exception as exc:
                print(f"{name}: load failed: {type(exc).__name__}: {exc}", file=sys.stderr)
                skipped[name] = f"load failed: {type(exc).__name__}: {exc}"[:500]
                engine.close()
                continue
            stats["triples_per_second"] = triples / stats["seconds"] if stats["seconds"] else None
            if stats.get("triples") not in (None, triples):
                stats["warning"] = f"holds {stats['triples']} triples, the file has {triples}"
            for key in ("bytes", "bytes_after_load", "bytes_vacuumed"):
                if key in stats:
                    stats[key.replace("bytes", "bytes_per_triple")] = stats[key] / triples
            load_stats[name] = stats
            loaded[name] = engine
            print(
                f"  {stats['seconds']:.1f} s, {triples / stats['seconds']:,.0f} triples/s "
                f"({stats['method']})",
                file=sys.stderr,
                flush=True,
            )

        # The loaded data (rdflib's Memory store alone is tens of millions of objects)
        # would otherwise be rescanned by every full garbage collection, and those
        # pauses would land in whichever engine's run happens to trigger them.
        gc.collect()
        gc.freeze()
        results: dict[str, dict[str, Any]] = {}
        for qpath in queries:
            text = qpath.read_text()
            form = query_form(text)
            print(f"{qpath.stem} ...", file=sys.stderr, flush=True)
            measurements = {
                name: measure(e, text, args.runs, args.timeout) for name, e in loaded.items()
            }
            ref_name = next((n for n, m in measurements.items() if m.answer is not None), None)
            reference = measurements[ref_name].answer if ref_name else None
            entry: dict[str, Any] = {
                "form": form,
                "ordered": ordered(text),
                "reference": ref_name,
                "rows": reference.size if reference else None,
                "engines": {},
            }
            for name, m in measurements.items():
                info: dict[str, Any] = {
                    "status": m.status,
                    "median": m.median,
                    "samples": m.samples,
                    "warmup": m.warmup,
                    "note": m.note,
                }
                if m.error:
                    info["error"] = m.error
                if m.answer is not None:
                    info["rows"] = m.answer.size
                if reference is not None and m.answer is not None and name != ref_name:
                    cmp = compare_answers(reference, m.answer, text)
                    if not cmp["same"] and form == "DESCRIBE":
                        cmp["implementation_defined"] = True
                    info["compare"] = cmp
                base = measurements.get("oxigraph")
                if base and base.median and m.median is not None and name != "oxigraph":
                    info["ratio"] = m.median / base.median
                    info["ratio_is_lower_bound"] = m.status != "ok"
                elif base and base.median and m.status == "timeout" and name != "oxigraph":
                    info["ratio"] = args.timeout / base.median
                    info["ratio_is_lower_bound"] = True
                entry["engines"][name] = info
                print(
                    f"  {LABELS[name]}: {fmt_seconds(m.median)} s {m.status} {m.note}".rstrip(),
                    file=sys.stderr,
                    flush=True,
                )
            results[qpath.stem] = entry
    finally:
        gc.unfreeze()
        for engine in loaded.values():
            with contextlib.suppress(Exception):
                engine.close()
        for cleanup in cleanups:
            with contextlib.suppress(Exception):
                cleanup()

    report = build_report(args, path, data_info, engines, skipped, load_stats, results, started)
    print(render(report))
    text = json.dumps(report, indent=2) + "\n"
    if args.output:  # an explicit file only: ad-hoc runs leave sparql-latest.json alone
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text)
        print(f"\nresults: {args.output}")
    else:
        RESULTS_DIR.mkdir(parents=True, exist_ok=True)
        out = RESULTS_DIR / f"sparql-{started.strftime('%Y%m%dT%H%M%SZ')}.json"
        out.write_text(text)
        (RESULTS_DIR / "sparql-latest.json").write_text(text)
        print(f"\nresults: {out} (and {RESULTS_DIR / 'sparql-latest.json'})")
    mismatches = [
        q
        for q, e in results.items()
        for i in e["engines"].values()
        if "compare" in i
        and not i["compare"]["same"]
        and not i["compare"].get("implementation_defined")
    ]
    if mismatches:
        print(f"\nANSWERS DIFFER FROM THE REFERENCE: {', '.join(sorted(set(mismatches)))}")
        return 1
    return 0


def build_report(
    args: argparse.Namespace,
    path: Path,
    data_info: dict[str, Any],
    engines: list[str],
    skipped: dict[str, str],
    load_stats: dict[str, dict[str, Any]],
    results: dict[str, dict[str, Any]],
    started: datetime,
) -> dict[str, Any]:
    summary: dict[str, Any] = {}
    for name in engines:
        if name == "oxigraph" or name not in load_stats:
            continue
        ratios = [
            e["engines"][name]["ratio"]
            for e in results.values()
            if e["engines"].get(name, {}).get("ratio") is not None
        ]
        lower = any(
            e["engines"].get(name, {}).get("ratio_is_lower_bound") for e in results.values()
        )
        summary[name] = {
            "geomean_ratio": geomean(ratios),
            "max_ratio": max(ratios) if ratios else None,
            "queries_with_ratio": len(ratios),
            "includes_timeouts": lower,
        }
    targets: dict[str, Any] = {}
    if "sqlite" in summary and "oxigraph" in load_stats:
        s, load = summary["sqlite"], load_stats["sqlite"]
        all_timed = s["queries_with_ratio"] == len(results) and not s["includes_timeouts"]
        targets = {
            "every_query_at_most_1.5x_oxigraph": all_timed
            and (s["max_ratio"] or 0) <= TARGETS["max_ratio"],
            "geomean_at_most_1.0x": all_timed
            and (s["geomean_ratio"] or 0) <= TARGETS["geomean_ratio"],
            "load_at_least_200k_triples_per_s": (load.get("triples_per_second") or 0)
            >= TARGETS["load_triples_per_second"],
            "at_most_100_bytes_per_triple": (load.get("bytes_per_triple") or math.inf)
            <= TARGETS["bytes_per_triple"],
        }
    return {
        "benchmark": "sparql-discovery",
        "started": started.isoformat(),
        "data": {"path": str(path), **data_info},
        "options": {
            "runs": args.runs,
            "timeout": args.timeout,
            "engines": engines,
            "vacuum": not args.no_vacuum,
        },
        "skipped": skipped,
        "machine": {
            "platform": platform.platform(),
            "cpus": os.cpu_count(),
            "processor": platform.processor(),
        },
        "versions": versions(),
        "git": git_state(),
        "load": load_stats,
        "queries": results,
        "summary": summary,
        "targets": targets,
    }


def render(report: dict[str, Any]) -> str:
    engines = [e for e in report["options"]["engines"] if e in report["load"]]
    header = ["query"] + [
        f"{LABELS[e]} s" + ("" if e == "oxigraph" else " (ratio)") for e in engines
    ]
    header += ["rows", "same?"]
    rows: list[list[str]] = []
    notes: list[str] = []
    for qname, entry in report["queries"].items():
        row = [qname]
        verdicts: list[str] = []
        for e in engines:
            info = entry["engines"].get(e, {})
            if info.get("status") == "timeout" and not info.get("samples"):
                cell = f">{report['options']['timeout']:g} timeout"
            elif info.get("status") == "error":
                cell = "error"
                notes.append(f"{qname} on {LABELS[e]}: {info.get('error')}")
            else:
                cell = fmt_seconds(info.get("median"))
            if info.get("ratio") is not None:
                cell += f" ({'>=' if info.get('ratio_is_lower_bound') else ''}{info['ratio']:.2f}x)"
            if info.get("note"):
                cell += "*"
                notes.append(f"{qname} on {LABELS[e]}: {info['note']}")
            row.append(cell)
            cmp = info.get("compare")
            if cmp is not None and not cmp["same"]:
                kind = "impl-defined" if cmp.get("implementation_defined") else "MISMATCH"
                verdicts.append(f"{kind}: {e}")
                notes.append(
                    f"{qname} on {LABELS[e]} differs from {LABELS[entry['reference']]}: "
                    f"{cmp['detail']}"
                    + (" (DESCRIBE is implementation-defined)" if kind == "impl-defined" else "")
                )
        compared = any("compare" in i for i in entry["engines"].values())
        row.append(str(entry["rows"]) if entry["rows"] is not None else "-")
        row.append("; ".join(verdicts) if verdicts else ("yes" if compared else "-"))
        rows.append(row)
    gm = ["geometric mean of ratios"] + [""] * len(engines) + ["", ""]
    for i, e in enumerate(engines):
        s = report["summary"].get(e)
        if s and s["geomean_ratio"] is not None:
            gm[i + 1] = f"{'>=' if s['includes_timeouts'] else ''}{s['geomean_ratio']:.2f}x"
    lines = table([*rows, gm], header).splitlines()
    out = ["\n".join([*lines[:-1], lines[1], lines[-1]])]  # a rule above the mean
    if notes:
        out.append("\n" + "\n".join(f"* {n}" for n in notes))
    load_rows = []
    for e in engines:
        s = report["load"][e]
        per = s.get("bytes_per_triple")
        extra = []
        if "bytes_per_triple_after_load" in s:
            extra.append(f"{s['bytes_per_triple_after_load']:.0f} B/triple with -wal while open")
        if "bytes_per_triple_vacuumed" in s:
            extra.append(f"{s['bytes_per_triple_vacuumed']:.0f} B/triple after VACUUM")
        if "analyze_seconds" in s:
            extra.append(f"ANALYZE {s['analyze_seconds']:.1f} s")
        if s.get("warning"):
            extra.append("WARNING " + s["warning"])
        load_rows.append(
            [
                LABELS[e],
                f"{s['seconds']:.1f}",
                f"{s['triples_per_second']:,.0f}",
                f"{per:.0f}" if per is not None else "-",
                s["method"],
                "; ".join(extra),
            ]
        )
    out.append(
        "\n" + table(load_rows, ["load", "seconds", "triples/s", "bytes/triple", "how", "notes"])
    )
    for name, why in report["skipped"].items():
        out.append(f"skipped {name}: {why}")
    if report["targets"]:
        out.append(
            "\ntargets (catalogue on SQLite): "
            + ", ".join(f"{k} {'PASS' if v else 'FAIL'}" for k, v in report["targets"].items())
        )
    return "\n".join(out)


if __name__ == "__main__":
    sys.exit(main())
