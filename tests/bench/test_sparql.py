"""Smoke test of the SPARQL discovery benchmark (bench/sparql/) at a tiny scale.

Why it is a test: a benchmark is only worth its numbers if the engines it compares
give the same answers, and if its synthetic data looks like what the catalogue really
stores.  So this checks, on ~10,000 triples: the generator makes exactly the triples
the real converter makes of the same metadata documents, and every benchmark query
gets the same answer from the catalogue store (in-memory SQLite) as from Oxigraph.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("pyoxigraph")

from bench.sparql import compare, generate, run
from catalogue.model.nodes import Hierarchy, Node
from catalogue.rdf.convert import hierarchy_triples

SCALE = 0.01  # ~10,000 triples, 10 groups
QUERIES = sorted(run.QUERIES_DIR.glob("*.rq"))


def _split(line: str) -> tuple[str, str, str]:
    """Subject, predicate and object of one generated N-Quads line (graph dropped)."""
    s, p, rest = line.split(" ", 2)
    return s, p, rest.rsplit(" ", 2)[0]


def test_generator_is_deterministic_and_sized() -> None:
    first = generate.plan(SCALE)
    second = generate.plan(SCALE)
    digest = [
        hashlib.sha256("".join(generate.iter_quads(c)).encode()).hexdigest()
        for c in (first, second)
    ]
    assert digest[0] == digest[1]
    assert first.groups == 10
    assert abs(first.triples - generate.TARGET_TRIPLES * SCALE) < 200
    assert sum(1 for _ in generate.iter_quads(first)) == first.triples


def test_generator_writes_what_the_converter_makes() -> None:
    """Each generated hierarchy, converted by catalogue.rdf.convert, gives the same graph."""
    catalogue = generate.plan(SCALE)
    assert {h.zarr_format for h in catalogue.hierarchies} == {2, 3}
    for h in catalogue.hierarchies:
        model = Hierarchy(url=h.url, zarr_format=h.zarr_format)
        for path, node in h.nodes.items():
            model.nodes[path] = Node(
                path=path,
                kind=node.kind,
                zarr_format=h.zarr_format,
                documents=node.documents,
                locations={},
                members=list(node.members),
            )
        real = compare.canonical_graph(
            tuple(compare.from_rdflib(t) for t in triple)
            for triple in hierarchy_triples(model)  # type: ignore[misc]
        )
        lines = [line for line in generate.hierarchy_quads(h) if generate.HARVESTED not in line]
        assert compare.canonical_graph(_split(line) for line in lines) == real, h.url
        assert all(line.endswith(f" <{h.url}> .\n") for line in lines)  # one graph per hierarchy


@pytest.fixture(scope="module")
def engines(tmp_path_factory: pytest.TempPathFactory) -> Any:
    path = tmp_path_factory.mktemp("sparql") / "catalogue.nq"
    info = generate.generate(path, SCALE)
    oxigraph = run.OxigraphEngine()
    ours = run.CatalogueEngine("sqlite", "sqlite://")  # in memory
    assert oxigraph.load(path, info["triples"])["triples"] == info["triples"]
    ours.load(path, info["triples"])
    yield oxigraph, ours
    ours.close()
    oxigraph.close()


@pytest.mark.parametrize("query", QUERIES, ids=[q.stem for q in QUERIES])
def test_query_answers_match_oxigraph(engines: Any, query: Path) -> None:
    oxigraph, ours = engines
    text = query.read_text()
    expected = oxigraph.answer(oxigraph.execute(text))
    assert expected.size, (
        f"{query.stem} finds nothing at scale {SCALE}: the benchmark would time nothing"
    )
    got = ours.answer(ours.execute(text))
    result = run.compare_answers(expected, got, text)
    if result["same"] or run.query_form(text) != "DESCRIBE":
        assert result["same"], result
        return
    # DESCRIBE is implementation-defined: at least the nodes' own triples must be there.
    for node in re.findall(r"<[^>]+>", text.split("DESCRIBE", 1)[1]):
        construct = f"CONSTRUCT {{ {node} ?p ?o }} WHERE {{ {node} ?p ?o }}"
        own = oxigraph.answer(oxigraph.execute(construct))
        assert own.triples
        assert {t for t in own.triples if " _:" not in t} <= set(got.triples), node


def test_a_run_past_its_deadline_is_cancelled_inside_the_database() -> None:
    """The benchmark's timeout stops a statement that signals cannot reach (SQLite
    counting without end), and the next run gets its whole budget again."""
    import sqlite3
    import time

    db = sqlite3.connect(":memory:")
    endless = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT max(x) FROM c"
    start = time.monotonic()
    with pytest.raises(run.QueryTimeout), run.deadline(0.2, db.interrupt):
        db.execute(endless).fetchone()
    assert time.monotonic() - start < 5
    interrupted: list[bool] = []
    with run.deadline(5, lambda: interrupted.append(True)):
        time.sleep(0.8)  # the watch looks again in this time: nothing left armed
    assert not interrupted
    assert db.execute("SELECT 1").fetchone() == (1,)
