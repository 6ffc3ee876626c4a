"""Many processes on one catalogue at once: the stress test of concurrency.

Usage (from the repository root; ``make bench-stress`` runs the first line)::

    .venv/bin/python -m bench.stress                                    # SQLite, 8 processes, 20 s
    .venv/bin/python -m bench.stress --db postgres --existing --seconds 60

What runs, for ``--seconds`` (and at least until every kind of
operation below has started once), on one catalogue (a fresh one, or with ``--existing`` one
where every source was harvested before the start):

* ``catalogue serve`` with an admin token, in a process of its own;
* ``--processes`` minus one workers, each starting one ``catalogue`` process after
  another (as cron jobs and people do) or sending one HTTP request, chosen at random
  from: ``harvest --wait`` and ``harvest`` (no wait) of six sources, some of them the
  same store harvested again while another worker harvests it, ``harvest --full``;
  ``query``; ``export``; ``load`` of a small N-Triples file into a graph of its own;
  ``validate`` of a catalogued node; ``graphs`` and ``harvests``; ``/datasets``,
  ``/sparql`` queries and SPARQL Update (``INSERT DATA``) through the server; and a
  change to one store's metadata, so that re-harvests rewrite nodes.

Every process must succeed, or (a harvest without ``--wait`` of a source another
harvest holds) exit 3 with the one documented line. A traceback, a lock error, any
other exit code or an HTTP error is a failure. Afterwards (server stopped, every
source harvested once more), the checks: every hierarchy graph equals a harvest of
the same store into a fresh catalogue (isomorphic, leaving out the per-run
triples), every load's graph and every update's triple is there, no quad refers to
a missing term, no run is left unended, and SQLite's integrity check passes.

Reported: processes, seconds, operations by kind (count, failures, median seconds),
failures (the first line of each), and the checks. Results go to
``bench/results/stress-<db>.json``.
"""

from __future__ import annotations

import argparse
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
import threading
import time
from dataclasses import dataclass, field
from typing import Any

REPO = pathlib.Path(__file__).resolve().parent.parent
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from bench.common import environment  # noqa: E402
from bench.web_load import server_process  # noqa: E402

RESULTS = REPO / "bench" / "results"
EXAMPLES = ["cf_air_temperature_v3.zarr", "cf_sea_surface_v2.zarr", "ocean_model_v3.zarr"]
#: The store one of whose arrays the "mutate" operation changes.
MUTABLE = "mutable_ocean_v3.zarr"
ADMIN_TOKEN = "stress-admin-token"
LOAD_TRIPLES = 200
#: (operation, weight): how often each is drawn.
OPERATIONS: list[tuple[str, int]] = [
    ("harvest-wait", 4), ("harvest-nowait", 3), ("harvest-full", 1), ("query", 3), ("export", 2),
    ("load", 2), ("validate", 2), ("graphs", 1), ("harvests", 1), ("http-datasets", 2),
    ("http-sparql", 2), ("http-update", 2), ("mutate", 1),
]
BUSY_LINE = "another harvest of"
FORBIDDEN = ("Traceback", "database is locked", "locked by another writer", "deadlock", "UniqueViolation")


@dataclass
class Outcome:
    op: str
    seconds: float
    ok: bool
    detail: str = ""


@dataclass
class Workload:
    """The stores and files one stress run works on, in a folder of its own."""

    root: pathlib.Path
    sources: list[pathlib.Path] = field(default_factory=list)
    nodes: list[str] = field(default_factory=list)  # catalogued node IRIs to validate
    load_file: pathlib.Path | None = None
    mutable: pathlib.Path | None = None  # the zarr.json of the array that changes


def prepare(root: pathlib.Path) -> Workload:
    """Six sources: the three examples, twice each (one copy changes during the run)."""
    work = Workload(root)
    stores = root / "stores"
    stores.mkdir(parents=True, exist_ok=True)
    for name in EXAMPLES:
        for copy in (name, "copy_" + name):
            target = stores / copy
            shutil.copytree(REPO / "examples" / name, target)
            work.sources.append(target)
    ocean = stores / "copy_ocean_model_v3.zarr"
    ocean.rename(stores / MUTABLE)
    work.sources[work.sources.index(ocean)] = stores / MUTABLE
    work.mutable = next(doc for doc in sorted((stores / MUTABLE).rglob("zarr.json"))
                        if json.loads(doc.read_text(encoding="utf-8")).get("node_type") == "array")
    for source in work.sources:
        for doc in sorted(source.rglob("zarr.json")) + sorted(source.rglob(".zarray")):
            work.nodes.append(doc.parent.absolute().as_uri())
    work.load_file = root / "small.nt"
    work.load_file.write_text("".join(
        f'<urn:stress:s{i}> <urn:stress:p{i % 7}> "value {i}" .\n' for i in range(LOAD_TRIPLES)
    ), encoding="utf-8")
    return work


def catalogue_command() -> list[str]:
    script = pathlib.Path(sys.executable).parent / "catalogue"
    return [str(script)] if script.exists() else [sys.executable, "-m", "catalogue.cli"]


def server(db: str, env: dict[str, str]) -> contextlib.AbstractContextManager[str]:
    """``catalogue serve`` with the admin token, in a process of its own; yields its base URL.
    A traceback in its log fails the run."""
    return server_process(db, extra=["--admin-token", ADMIN_TOKEN], env=env, fail_on_traceback=True)


class Runner:
    """Draws and runs operations, records their outcomes (thread-safe)."""

    def __init__(self, work: Workload, db: str, env: dict[str, str], base_url: str | None, seed: int) -> None:
        self.work, self.db, self.env, self.base_url = work, db, env, base_url
        self.rng = random.Random(seed)
        self.lock = threading.Lock()
        self.started: set[str] = set()  # kinds of operation started at least once
        self.outcomes: list[Outcome] = []
        self.loaded: list[str] = []  # graphs of successful loads
        self.updated: list[str] = []  # subjects of successful updates
        self.counter = 0

    def next_number(self) -> int:
        with self.lock:
            self.counter += 1
            return self.counter

    def draw(self) -> tuple[str, int]:
        """The next operation: one of each kind first (in random order), then by weight."""
        with self.lock:
            names, weights = zip(*OPERATIONS, strict=True)
            unstarted = [name for name in names if name not in self.started]
            op = self.rng.choice(unstarted) if unstarted else self.rng.choices(names, weights)[0]
            self.started.add(op)
            return op, self.rng.randrange(1 << 30)

    def every_kind_started(self) -> bool:
        with self.lock:
            return len(self.started) == len(OPERATIONS)

    def cli(self, op: str, args: list[str], *, busy_ok: bool = False) -> Outcome:
        started = time.perf_counter()
        proc = subprocess.run([*catalogue_command(), *args, "--db", self.db], env=self.env,
                              capture_output=True, text=True, timeout=600, check=False)
        seconds = time.perf_counter() - started
        err = proc.stderr.strip()
        forbidden = next((word for word in FORBIDDEN if word in proc.stderr or word in proc.stdout), None)
        if forbidden is None and proc.returncode == 0:
            return Outcome(op, seconds, True)
        if (forbidden is None and busy_ok and proc.returncode == 3 and len(err.splitlines()) == 1
                and BUSY_LINE in err):
            return Outcome(op, seconds, True, "busy")
        first = next((line for line in err.splitlines() if line.strip()), "")
        shown = err[-1500:] if forbidden else first
        return Outcome(op, seconds, False, f"exit {proc.returncode}: {shown}")

    def http(self, op: str, method: str, path: str, **kwargs: Any) -> Outcome:
        import httpx

        started = time.perf_counter()
        try:
            response = httpx.request(method, f"{self.base_url}{path}", timeout=120, **kwargs)
        except httpx.HTTPError as exc:
            return Outcome(op, time.perf_counter() - started, False, f"{type(exc).__name__}: {exc}")
        seconds = time.perf_counter() - started
        if response.status_code != 200:
            return Outcome(op, seconds, False, f"HTTP {response.status_code}: {response.text[:300]}")
        return Outcome(op, seconds, True)

    def run(self, op: str, pick: int) -> Outcome:
        sources = self.work.sources
        source = str(sources[pick % len(sources)])
        if op == "harvest-wait":
            return self.cli(op, ["harvest", "--wait", source])
        if op == "harvest-nowait":
            return self.cli(op, ["harvest", source], busy_ok=True)
        if op == "harvest-full":
            return self.cli(op, ["harvest", "--wait", "--full", source])
        if op == "query":
            return self.cli(op, ["query", "SELECT ?a ?units WHERE { ?a a zarr:Array . OPTIONAL { ?a zarr:units ?units } }"])
        if op == "export":
            return self.cli(op, ["export", "--format", "nquads", "-o", str(self.work.root / f"export-{pick}.nq")])
        if op == "load":
            graph = f"urn:stress:load:{self.next_number()}"
            outcome = self.cli(op, ["load", str(self.work.load_file), "--graph", graph])
            if outcome.ok:
                with self.lock:
                    self.loaded.append(graph)
            return outcome
        if op == "validate":
            return self.cli(op, ["validate", self.work.nodes[pick % len(self.work.nodes)]])
        if op in ("graphs", "harvests"):
            return self.cli(op, [op])
        if op == "mutate":
            return self.mutate(pick)
        if self.base_url is None:
            return self.cli("query", ["query", "ASK { ?s ?p ?o }"])
        if op == "http-datasets":
            return self.http(op, "GET", "/datasets", params={"q": "temperature"})
        if op == "http-sparql":
            return self.http(op, "GET", "/sparql", params={"query": "SELECT (COUNT(*) AS ?n) WHERE { ?s a zarr:Array }"},
                             headers={"Accept": "application/sparql-results+json"})
        subject = f"urn:stress:update:{self.next_number()}"
        outcome = self.http(op, "POST", "/sparql",
                            data={"update": f"INSERT DATA {{ GRAPH <urn:stress:updates> {{ <{subject}> <urn:stress:n> {pick} }} }}"},
                            headers={"Authorization": f"Bearer {ADMIN_TOKEN}"})
        if outcome.ok:
            with self.lock:
                self.updated.append(subject)
        return outcome

    def mutate(self, pick: int) -> Outcome:
        """Change one array's attributes, atomically (a reader sees the old or the new file)."""
        started = time.perf_counter()
        doc = self.work.mutable
        assert doc is not None
        with self.lock:
            meta = json.loads(doc.read_text(encoding="utf-8"))
            meta.setdefault("attributes", {})["stress_revision"] = pick
            tmp = doc.with_suffix(".json.tmp")
            tmp.write_text(json.dumps(meta, indent=2), encoding="utf-8")
            os.replace(tmp, doc)
        return Outcome("mutate", time.perf_counter() - started, True)

    def worker(self, deadline: float) -> None:
        """Run operations until the deadline, and at least until every kind has started."""
        while time.monotonic() < deadline or not self.every_kind_started():
            op, pick = self.draw()
            try:
                outcome = self.run(op, pick)
            except Exception as exc:  # the driver's own failure counts as a failure too
                outcome = Outcome(op, 0.0, False, f"driver: {type(exc).__name__}: {exc}")
            with self.lock:
                self.outcomes.append(outcome)


def _env(db: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("CATALOGUE_DB",)}
    env["PYTHONWARNINGS"] = "ignore"
    return env


def comparable(db: str, graph: str) -> Any:
    """The graph without what differs from run to run (times, run IRIs)."""
    from rdflib import DCTERMS, PROV, Graph

    import catalogue

    out = Graph()
    with catalogue.open(db) as cat:
        for s, p, o, _g in cat.quads(graph):
            if p not in (DCTERMS.created, PROV.wasGeneratedBy):
                out.add((s, p, o))
    return out


def _check(problems: list[Any]) -> bool | list[Any]:
    """True when there are no problems, else the problems (shown in the report)."""
    return problems or True


def verify(work: Workload, db: str, runner: Runner, env: dict[str, str]) -> dict[str, Any]:
    """Harvest every source once more, then check the catalogue (see the module docstring)."""
    from rdflib.compare import isomorphic
    from sqlalchemy import text

    import catalogue

    checks: dict[str, Any] = {}
    final = subprocess.run([*catalogue_command(), "harvest", "--wait", *map(str, work.sources), "--db", db],
                           env=env, capture_output=True, text=True, timeout=600, check=False)
    checks["final harvest"] = final.returncode == 0 or final.stderr[-500:]
    reference = str(work.root / "reference.db")
    with catalogue.open(reference) as ref:
        for source in work.sources:
            ref.harvest(str(source))
    different = [str(s) for s in work.sources
                 if not isomorphic(comparable(db, s.absolute().as_uri()), comparable(reference, s.absolute().as_uri()))]
    checks["graphs equal a fresh harvest"] = _check(different)
    with catalogue.open(db) as cat:
        sizes = dict(cat.graphs())
        short = [g for g in runner.loaded if sizes.get(g) != LOAD_TRIPLES]
        checks["loads complete"] = _check(short)
        present = {str(r.s) for r in cat.query("SELECT ?s WHERE { GRAPH <urn:stress:updates> { ?s ?p ?o } }")}
        missing = [s for s in runner.updated if s not in present]
        checks["updates present"] = _check(missing)
        unended = [r for r in cat.harvests(limit=None) if r["outcome"] in ("running", "interrupted")]
        checks["no unended run"] = _check([(r["source"], r["outcome"]) for r in unended])
        conn = cat.store.connection
        dangling = conn.execute(text(
            "SELECT count(*) FROM quads q WHERE NOT EXISTS (SELECT 1 FROM terms t WHERE t.id = q.s) "
            "OR NOT EXISTS (SELECT 1 FROM terms t WHERE t.id = q.p) OR NOT EXISTS (SELECT 1 FROM terms t WHERE t.id = q.o) "
            "OR NOT EXISTS (SELECT 1 FROM terms t WHERE t.id = q.g)")).scalar_one()
        checks["no quad refers to a missing term"] = dangling == 0 or dangling
        if cat.store.dialect_name == "sqlite":
            integrity = conn.exec_driver_sql("PRAGMA integrity_check").scalar_one()
            checks["sqlite integrity_check"] = integrity == "ok" or integrity
        cat.store.rollback()
        hierarchies = sum(1 for g in sizes if g.startswith("file:"))
        checks["one graph per source"] = hierarchies == len(work.sources) or hierarchies
    return checks


def run_stress(db: str, root: pathlib.Path, *, processes: int = 8, seconds: float = 20.0,
               existing: bool = False, seed: int = 0) -> dict[str, Any]:
    """One stress run on database ``db`` (a path or URL); returns the report."""
    work = prepare(root)
    env = _env(db)
    if existing:
        done = subprocess.run([*catalogue_command(), "harvest", *map(str, work.sources), "--db", db],
                              env=env, capture_output=True, text=True, timeout=600, check=False)
        if done.returncode:
            raise RuntimeError(f"the set-up harvest failed: {done.stderr[-2000:]}")
    started = time.monotonic()
    with server(db, env) as base_url:
        runner = Runner(work, db, env, base_url, seed)
        deadline = time.monotonic() + seconds
        threads = [threading.Thread(target=runner.worker, args=(deadline,), name=f"stress-{i}")
                   for i in range(max(processes - 1, 1))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    elapsed = time.monotonic() - started
    checks = verify(work, db, runner, env)
    by_op: dict[str, dict[str, Any]] = {}
    for name, _ in OPERATIONS:
        mine = [o for o in runner.outcomes if o.op == name]
        if mine:
            by_op[name] = {"count": len(mine), "failures": sum(not o.ok for o in mine),
                           "busy": sum(o.detail == "busy" for o in mine),
                           "median_s": round(statistics.median(o.seconds for o in mine), 3)}
    failures = [f"{o.op}: {o.detail}" for o in runner.outcomes if not o.ok]
    return {
        "database": "postgresql" if "postgres" in db else "sqlite",
        "catalogue": "existing" if existing else "fresh",
        "processes": processes, "seconds": round(elapsed, 1),
        "operations": len(runner.outcomes), "failures": len(failures), "failed": failures[:20],
        "by_operation": by_op, "checks": checks,
        "ok": not failures and all(v is True for v in checks.values()),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--db", choices=["sqlite", "postgres"], default="sqlite")
    parser.add_argument("--postgres-url", default=os.environ.get("CATALOGUE_TEST_POSTGRES_URL",
                                                                "postgresql+psycopg://postgres@127.0.0.1:5432/test"))
    parser.add_argument("--processes", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--existing", action="store_true", help="harvest every source before the start")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    from catalogue.graph.database import scratch_postgres_database

    with tempfile.TemporaryDirectory(prefix="catalogue-stress-") as tmp:
        root = pathlib.Path(tmp)
        if args.db == "postgres":
            with scratch_postgres_database(args.postgres_url, "catalogue_stress") as url:
                report = run_stress(url, root, processes=args.processes, seconds=args.seconds,
                                    existing=args.existing, seed=args.seed)
        else:
            report = run_stress(str(root / "catalogue.db"), root, processes=args.processes,
                                seconds=args.seconds, existing=args.existing, seed=args.seed)
    report["environment"] = environment(["rdflib", "sqlalchemy", "psycopg"])
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"stress-{args.db}{'-existing' if args.existing else ''}.json"
    out.write_text(json.dumps(report, indent=2), encoding="utf-8")
    print(json.dumps({k: v for k, v in report.items() if k != "environment"}, indent=2))
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
