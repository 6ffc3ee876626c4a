"""W3C SPARQL query-evaluation suites on the catalogue store, against a Memory baseline.

The bar: every test that rdflib's Memory store passes with our runner
(``tests/graph/sparql/w3c/baseline-memory.json``) must pass on each catalogue backend too.  Each
backend runs a whole suite once (loading a suite per test would cost more than the
tests); the assertion lists regressions by test IRI with the reason.  Counts are
printed (visible with ``pytest -s``) and written to ``build/w3c/<suite>-<store>.json``.

The suites are not in the repository (``../shared/conformance/w3c``); without them
the suite runs skip.  The comparison logic has its own unit tests below, including
cases that must fail, since a comparison that cannot fail would make the bar
meaningless.
"""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
from rdflib import XSD, BNode, Graph, Literal, URIRef
from rdflib.term import Node

from tests.graph.sparql.w3c.manifest import conformance_root, load_suite, path_to_iri
from tests.graph.sparql.w3c.results import (
    NUMERIC_LEXICAL_ONLY,
    Solutions,
    compare_graphs,
    compare_solutions,
    csv_solutions,
    inspect_query,
    load_expected,
)
from tests.graph.sparql.w3c.runner import (
    BASELINE_PATH,
    Report,
    format_report,
    load_baseline,
    make_backend,
    run_suite,
)
from tests.support.paths import REPO

REPORT_DIR = REPO / "build" / "w3c"
SUITE_NAMES = ("sparql10", "sparql11")

needs_suites = pytest.mark.skipif(
    conformance_root() is None,
    reason="W3C SPARQL suites not found at ../shared/conformance/w3c "
    "(or $CATALOGUE_W3C_SUITES); they are shared, not vendored",
)


def _write_report(report: Report, regressions: list[str], beyond: list[str]) -> Path:
    REPORT_DIR.mkdir(parents=True, exist_ok=True)
    path = REPORT_DIR / f"{report.suite}-{report.store}.json"
    data = report.to_json() | {"regressions": regressions, "beyond_memory_baseline": beyond}
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def _run(suite: str, store: str, url: str | None = None) -> Report:
    backend = make_backend(store, url)
    try:
        return run_suite(suite, backend)
    finally:
        backend.close()


# ------------------------------------------------------------------ the suites


@needs_suites
@pytest.mark.slow
@pytest.mark.parametrize("suite", SUITE_NAMES)
@pytest.mark.parametrize(
    "store", ["catalogue", "sqlite-file", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def test_w3c_suite_meets_memory_baseline(
    suite: str, store: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Every test Memory passes also passes on this catalogue backend."""
    url = None
    if store == "sqlite-file":
        url = f"sqlite:///{tmp_path / 'w3c.db'}"
    elif store == "postgres":
        url = request.getfixturevalue("postgres_url")  # fresh database, dropped after
    baseline = load_baseline()[suite]
    report = _run(suite, store, url)
    outcomes = report.by_iri()
    passed = report.passed()
    regressions = sorted(baseline - passed)
    beyond = sorted(passed - baseline)
    path = _write_report(report, regressions, beyond)
    print()
    print(format_report(report, baseline))
    print(f"  beyond the Memory baseline: {len(beyond)}; report: {path}")
    missing = [iri for iri in regressions if iri not in outcomes]
    assert not missing, f"baseline tests not run at all (manifest changed?): {missing}"
    lines = [
        f"  {iri}\n    {outcomes[iri].status}: {textwrap.shorten(outcomes[iri].reason, 240)}"
        for iri in regressions
    ]
    assert not regressions, (
        f"{len(regressions)} W3C {suite} test(s) pass on Memory but not on {store}:\n"
        + "\n".join(lines)
    )


@needs_suites
@pytest.mark.slow
@pytest.mark.parametrize("suite", SUITE_NAMES)
def test_memory_baseline_is_reproducible(suite: str) -> None:
    """Running Memory now gives exactly the recorded baseline (both directions), so the
    bar neither silently drops tests nor holds the catalogue to a stale set."""
    report = _run(suite, "Memory")
    baseline = load_baseline()[suite]
    passed = report.passed()
    assert passed == baseline, (
        f"Memory passes differ from {BASELINE_PATH.name} for {suite}: "
        f"newly passing {sorted(passed - baseline)}, no longer passing "
        f"{sorted(baseline - passed)}; regenerate with --write-baseline if intended"
    )


@needs_suites
def test_manifests_are_read_completely() -> None:
    """Every evaluation test listed in the manifests is collected, with its files.

    Counts are those of the shared copy (rdflib 7.6.0's); they change only if the suites
    are replaced, and then the baseline must be regenerated anyway.
    """
    s10, s11 = load_suite("sparql10"), load_suite("sparql11")
    assert len(s10.tests) == 249
    assert len(s11.tests) == 256
    for suite in (s10, s11):
        assert all(t.query.is_file() for t in suite.tests)
        assert all(p.is_file() for t in suite.tests for p in t.data)
        assert not [n for n in suite.notes if "missing" in n]
    approvals = {t.approval for t in s10.tests} | {t.approval for t in s11.tests}
    assert approvals == {"Approved", "NotClassified", "Withdrawn", None}
    graph_data = [g for t in s10.tests + s11.tests for g in t.graph_data]
    assert len(graph_data) > 20
    assert all(g.name == path_to_iri(g.source) for g in graph_data)


# ----------------------------------------------------- comparison: unit tests

EX = "http://example.org/"


def sols(*rows: dict[str, object], variables: list[str] | None = None) -> Solutions:
    """Solutions from rows of str (IRI if it starts with http, else plain literal),
    BNode or Literal values."""

    def term(value: object) -> object:
        if isinstance(value, str) and not isinstance(value, Node):
            return URIRef(value) if value.startswith("http") else Literal(value)
        return value

    converted = [{k: term(v) for k, v in row.items()} for row in rows]
    names = variables if variables is not None else sorted({k for r in rows for k in r})
    return Solutions(names, converted)  # type: ignore[arg-type]


a, b, c = BNode("a"), BNode("b"), BNode("c")
x, y, z = BNode("x"), BNode("y"), BNode("z")


def test_blank_nodes_may_be_renamed_consistently() -> None:
    expected = sols({"s": a, "o": "1"}, {"s": b, "o": "2"}, {"s": a, "o": "3"})
    actual = sols({"s": y, "o": "2"}, {"s": x, "o": "1"}, {"s": x, "o": "3"})
    assert compare_solutions(expected, actual) is None


def test_blank_node_coreference_must_match() -> None:
    expected = sols({"s": a, "o": "1"}, {"s": b, "o": "2"}, {"s": a, "o": "3"})
    # Same shape, but the shared node is attached to the wrong rows.
    actual = sols({"s": x, "o": "1"}, {"s": x, "o": "2"}, {"s": y, "o": "3"})
    assert compare_solutions(expected, actual) is not None
    # Two blank nodes merged into one: not a bijection.
    merged = sols({"s": x, "o": "1"}, {"s": x, "o": "2"}, {"s": x, "o": "3"})
    assert compare_solutions(expected, merged) is not None
    # Within one row: _:a _:a is not _:x _:y.
    assert compare_solutions(sols({"p": a, "q": a}), sols({"p": x, "q": y})) is not None
    assert compare_solutions(sols({"p": a, "q": b}), sols({"p": x, "q": x})) is not None


def test_blank_nodes_need_backtracking() -> None:
    """The first candidate pairing is wrong; the matcher must try another."""
    expected = sols({"p": a, "q": b}, {"p": b, "q": c}, {"p": c, "q": a})
    actual = sols({"p": x, "q": z}, {"p": y, "q": x}, {"p": z, "q": y})
    assert compare_solutions(expected, actual) is None
    broken = sols({"p": x, "q": z}, {"p": y, "q": x}, {"p": z, "q": x})
    assert compare_solutions(expected, broken) is not None


def test_solutions_are_a_bag() -> None:
    expected = sols({"v": f"{EX}1"}, {"v": f"{EX}1"}, {"v": f"{EX}2"})
    assert (
        compare_solutions(expected, sols({"v": f"{EX}2"}, {"v": f"{EX}1"}, {"v": f"{EX}1"})) is None
    )
    assert compare_solutions(expected, sols({"v": f"{EX}1"}, {"v": f"{EX}2"})) is not None
    assert (
        compare_solutions(expected, sols({"v": f"{EX}1"}, {"v": f"{EX}2"}, {"v": f"{EX}2"}))
        is not None
    )
    # An empty solution counts (e.g. OPTIONAL that binds nothing).
    assert compare_solutions(
        sols({}, {"v": "1"}, variables=["v"]), sols({"v": "1"}, variables=["v"])
    )


def test_unbound_is_not_a_value() -> None:
    expected = sols({"a": "1", "b": "2"})
    assert compare_solutions(expected, sols({"a": "1"}, variables=["a", "b"])) is not None


def test_order_matters_only_with_order_by() -> None:
    expected = sols({"v": Literal(1)}, {"v": Literal(2)}, {"v": Literal(3)})
    reversed_ = sols({"v": Literal(3)}, {"v": Literal(2)}, {"v": Literal(1)})
    assert compare_solutions(expected, reversed_) is None
    reason = compare_solutions(expected, reversed_, ordered=True, order_keys=["v"])
    assert reason is not None and "wrong order" in reason
    # An unordered source (rs: graph without rs:index) cannot impose an order.
    unordered = Solutions(expected.variables, expected.rows, ordered=False)
    assert compare_solutions(unordered, reversed_, ordered=True, order_keys=["v"]) is None


def test_rows_with_equal_sort_keys_may_swap() -> None:
    expected = sols(
        {"k": Literal(1), "v": "a"}, {"k": Literal(1), "v": "b"}, {"k": Literal(2), "v": "c"}
    )
    swapped = sols(
        {"k": Literal(1), "v": "b"}, {"k": Literal(1), "v": "a"}, {"k": Literal(2), "v": "c"}
    )
    assert compare_solutions(expected, swapped, ordered=True, order_keys=["k"]) is None
    # ...but not across different keys.
    moved = sols(
        {"k": Literal(1), "v": "a"}, {"k": Literal(2), "v": "c"}, {"k": Literal(1), "v": "b"}
    )
    assert compare_solutions(expected, moved, ordered=True, order_keys=["k"]) is not None
    # Unknown keys (ORDER BY on an unprojected variable): only identical rows swap.
    assert compare_solutions(expected, swapped, ordered=True, order_keys=None) is not None


def test_order_between_incomparable_values_is_free() -> None:
    """SPARQL leaves the order of "1" and 1, or of two blank nodes, undefined."""
    expected = sols({"k": Literal("1")}, {"k": Literal(1)}, {"k": f"{EX}x"})
    swapped = sols({"k": Literal(1)}, {"k": Literal("1")}, {"k": f"{EX}x"})
    assert compare_solutions(expected, swapped, ordered=True, order_keys=["k"]) is None
    # IRIs sort before literals: that order is defined.
    iri_last = sols({"k": Literal("1")}, {"k": f"{EX}x"}, {"k": Literal(1)})
    assert compare_solutions(expected, iri_last, ordered=True, order_keys=["k"]) is not None
    # Numbers compare by value: 1 and 1.0 tie, 1 and 2 do not.
    numbers = sols(
        {"k": Literal(1)}, {"k": Literal("1.0", datatype=XSD.decimal)}, {"k": Literal(2)}
    )
    assert (
        compare_solutions(
            numbers,
            sols({"k": Literal("1.0", datatype=XSD.decimal)}, {"k": Literal(1)}, {"k": Literal(2)}),
            ordered=True,
            order_keys=["k"],
        )
        is None
    )
    assert (
        compare_solutions(
            numbers,
            sols({"k": Literal(2)}, {"k": Literal(1)}, {"k": Literal("1.0", datatype=XSD.decimal)}),
            ordered=True,
            order_keys=["k"],
        )
        is not None
    )


def test_xsd_string_equals_simple_literal() -> None:
    assert (
        compare_solutions(sols({"v": Literal("a")}), sols({"v": Literal("a", datatype=XSD.string)}))
        is None
    )
    assert (
        compare_solutions(sols({"v": Literal("a")}), sols({"v": Literal("a", lang="en")}))
        is not None
    )
    assert compare_solutions(sols({"v": Literal("a")}), sols({"v": f"{EX}a"})) is not None


def test_language_tags_compare_case_insensitively() -> None:
    assert (
        compare_solutions(
            sols({"v": Literal("a", lang="en-GB")}), sols({"v": Literal("a", lang="EN-gb")})
        )
        is None
    )
    assert (
        compare_solutions(
            sols({"v": Literal("a", lang="en")}), sols({"v": Literal("a", lang="fr")})
        )
        is not None
    )


def test_lexical_forms_must_match_exactly() -> None:
    one = Literal("1", datatype=XSD.integer, normalize=False)
    zero_one = Literal("01", datatype=XSD.integer, normalize=False)
    reason = compare_solutions(sols({"v": one}), sols({"v": zero_one}))
    assert reason is not None and reason.startswith(NUMERIC_LEXICAL_ONLY)
    # Equal value, different type: a plain failure.
    decimal = Literal("1", datatype=XSD.decimal, normalize=False)
    reason = compare_solutions(sols({"v": one}), sols({"v": decimal}))
    assert reason is not None and not reason.startswith(NUMERIC_LEXICAL_ONLY)


def test_variables_are_compared() -> None:
    expected = sols({"a": "1"}, variables=["a", "b"])
    assert compare_solutions(expected, sols({"a": "1"}, variables=["a"])) is not None
    assert compare_solutions(expected, sols({"a": "1"}, variables=["b", "a"])) is None
    assert (
        compare_solutions(expected, sols({"a": "1"}, variables=["a"]), check_variables=False)
        is None
    )


def test_lax_cardinality() -> None:
    expected = sols({"v": "1"}, {"v": "1"}, {"v": "2"})
    assert compare_solutions(expected, sols({"v": "1"}, {"v": "2"}), lax=True) is None
    assert compare_solutions(expected, sols({"v": "1"}, {"v": "1"}, {"v": "2"}), lax=True) is None
    assert compare_solutions(
        expected, sols({"v": "1"}, {"v": "1"}, {"v": "1"}, {"v": "2"}), lax=True
    )
    assert compare_solutions(expected, sols({"v": "1"}), lax=True) is not None


def test_graph_isomorphism() -> None:
    def graph(text: str) -> Graph:
        return Graph().parse(data=f"@prefix : <{EX}> .\n{text}", format="turtle")

    expected = graph('_:a :p "x" ; :q _:b . _:b :p "y" .')
    assert (
        compare_graphs(
            expected,
            graph('_:m :q _:n ; :p "x"^^<http://www.w3.org/2001/XMLSchema#string> . _:n :p "y" .'),
        )
        is None
    )
    assert compare_graphs(expected, graph('_:m :p "x" ; :q _:n . _:o :p "y" .')) is not None
    assert compare_graphs(expected, graph('_:m :p "x" ; :q _:n . _:n :p "y"@en .')) is not None
    assert (
        compare_graphs(expected, graph('_:m :p "x" ; :q _:n . _:n :p "y" . _:n :p "z" .'))
        is not None
    )


# ---------------------------------------------------------- result formats


def _write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


def _load(path: Path, form: str | None = "SELECT"):
    return load_expected(path, str(path_to_iri(path)), form)


def test_parse_srx_and_srj_agree(tmp_path: Path) -> None:
    srx = _write(
        tmp_path,
        "r.srx",
        """
        <?xml version="1.0"?>
        <sparql xmlns="http://www.w3.org/2005/sparql-results#">
          <head><variable name="s"/><variable name="o"/></head>
          <results>
            <result><binding name="s"><bnode>r1</bnode></binding>
                    <binding name="o"><literal xml:lang="en">hi</literal></binding></result>
            <result><binding name="s"><uri>http://example.org/a</uri></binding>
                    <binding name="o"><literal datatype="http://www.w3.org/2001/XMLSchema#integer">01</literal></binding></result>
            <result></result>
          </results>
        </sparql>
        """,
    )
    srj = _write(
        tmp_path,
        "r.srj",
        """
        {"head": {"vars": ["s", "o"]}, "results": {"bindings": [
          {"s": {"type": "bnode", "value": "b0"}, "o": {"type": "literal", "value": "hi", "xml:lang": "en"}},
          {"s": {"type": "uri", "value": "http://example.org/a"},
           "o": {"type": "typed-literal", "value": "01", "datatype": "http://www.w3.org/2001/XMLSchema#integer"}},
          {}
        ]}}
        """,
    )
    from_xml, from_json = _load(srx).solutions, _load(srj).solutions
    assert from_xml is not None and from_json is not None
    assert str(from_xml.rows[1]["o"]) == "01"  # not normalised to "1"
    assert compare_solutions(from_xml, from_json) is None
    assert _load(_write(tmp_path, "b.srj", '{"head": {}, "boolean": true}'), "ASK").boolean is True


def test_parse_tsv_numbers_and_escapes(tmp_path: Path) -> None:
    tsv = _write(
        tmp_path,
        "r.tsv",
        '?s\t?o\n<http://example.org/a>\t1.0e6\n_:b0\t"a\\tb"@en\n<http://example.org/c>\t\n',
    )
    expected = _load(tsv).solutions
    assert expected is not None
    actual = sols(
        {"s": f"{EX}a", "o": Literal("1.0E6", datatype=XSD.double, normalize=False)},
        {"s": x, "o": Literal("a\tb", lang="en")},
        {"s": f"{EX}c"},
    )
    assert compare_solutions(expected, actual, tsv=True) is None
    wrong = sols(
        {"s": f"{EX}a", "o": Literal("1000000.0", datatype=XSD.double, normalize=False)},
        {"s": x, "o": Literal("a\tb", lang="en")},
        {"s": f"{EX}c"},
    )
    assert compare_solutions(expected, wrong, tsv=True) is not None


def test_csv_compares_text_only(tmp_path: Path) -> None:
    path = _write(tmp_path, "r.csv", "s,o\nhttp://example.org/a,4\nhttp://example.org/b,_:x\n")
    expected = _load(path).solutions
    assert expected is not None
    actual = sols({"s": f"{EX}a", "o": Literal(4)}, {"s": f"{EX}b", "o": y})
    assert compare_solutions(expected, csv_solutions(actual)) is None
    wrong = sols({"s": f"{EX}a", "o": Literal(5)}, {"s": f"{EX}b", "o": y})
    assert compare_solutions(expected, csv_solutions(wrong)) is not None


def test_parse_result_set_graph_with_index(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "r.ttl",
        """
        @prefix rs: <http://www.w3.org/2001/sw/DataAccess/tests/result-set#> .
        [] a rs:ResultSet ; rs:resultVariable "v" ;
           rs:solution [ rs:index 2 ; rs:binding [ rs:variable "v" ; rs:value <b> ] ] ,
                       [ rs:index 1 ; rs:binding [ rs:variable "v" ; rs:value <a> ] ] .
        """,
    )
    expected = _load(path).solutions
    assert expected is not None and expected.ordered
    base = path_to_iri(path)
    first, second = URIRef(str(base).replace("r.ttl", "a")), URIRef(str(base).replace("r.ttl", "b"))
    assert [r["v"] for r in expected.rows] == [first, second]
    in_order = Solutions(["v"], [{"v": first}, {"v": second}])
    out_of_order = Solutions(["v"], [{"v": second}, {"v": first}])
    assert compare_solutions(expected, in_order, ordered=True, order_keys=["v"]) is None
    assert compare_solutions(expected, out_of_order, ordered=True, order_keys=["v"]) is not None
    # As a CONSTRUCT result the same file is a plain graph.
    assert _load(path, "CONSTRUCT").graph is not None


def test_inspect_query_finds_order_keys() -> None:
    shape = inspect_query("SELECT ?x ?y WHERE { ?x ?p ?y } ORDER BY DESC(?y) ?x LIMIT 2")
    assert (shape.form, shape.ordered, shape.order_keys) == ("SELECT", True, ["y", "x"])
    hidden = inspect_query("SELECT ?x WHERE { ?x ?p ?y } ORDER BY ?y")
    assert hidden.ordered and hidden.order_keys is None
    sub = inspect_query("SELECT ?x WHERE { { SELECT ?x WHERE { ?x ?p ?y } ORDER BY ?x LIMIT 1 } }")
    assert not sub.ordered
    assert inspect_query("ASK { ?s ?p ?o }").form == "ASK"


# ------------------------------------------------------------- manifests


def test_manifest_reader(tmp_path: Path) -> None:
    """includes, entries, approval, graph data in both forms, unlisted tests."""
    root = tmp_path / "w3c"
    suite = root / "sparql11" / "t"
    suite.mkdir(parents=True)
    (root / "dawg-data-r2").mkdir()
    prefixes = """
        @prefix rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#> .
        @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
        @prefix mf: <http://www.w3.org/2001/sw/DataAccess/tests/test-manifest#> .
        @prefix qt: <http://www.w3.org/2001/sw/DataAccess/tests/test-query#> .
        @prefix ut: <http://www.w3.org/2009/sparql/tests/test-update#> .
        @prefix dawgt: <http://www.w3.org/2001/sw/DataAccess/tests/test-dawg#> .
        @prefix : <http://example.org/tests#> .
    """
    _write(
        root / "sparql11",
        "manifest-all.ttl",
        prefixes + "<> a mf:Manifest ; mf:include ( <t/manifest.ttl> ) .\n",
    )
    _write(
        suite,
        "manifest.ttl",
        prefixes
        + """
        <> a mf:Manifest ; mf:entries ( :one :two :syntax ) .
        :one a mf:QueryEvaluationTest ; mf:name "one" ; dawgt:approval dawgt:NotClassified ;
            mf:action [ qt:query <q.rq> ; qt:data <d1.ttl>, <d2.ttl> ; qt:graphData <g.ttl> ] ;
            mf:result <r.srx> .
        :two a mf:QueryEvaluationTest ; mf:name "two" ;
            mf:action [ qt:query <q.rq> ; qt:graphData [ ut:graph <g.ttl> ; rdfs:label "http://example.org/g" ] ] ;
            mf:result <r.srx> .
        :syntax a mf:PositiveSyntaxTest11 ; mf:action <q.rq> .
        :unlisted a mf:QueryEvaluationTest ; mf:action [ qt:query <q.rq> ] ; mf:result <r.srx> .
        """,
    )
    for name in ("q.rq", "d1.ttl", "d2.ttl", "g.ttl", "r.srx"):
        (suite / name).write_text("", encoding="utf-8")
    loaded = load_suite("sparql11", root)
    one, two = loaded.tests
    assert one.iri == "http://example.org/tests#one" and one.approval == "NotClassified"
    assert [p.name for p in one.data] == ["d1.ttl", "d2.ttl"]
    assert one.graph_data[0].name == path_to_iri(suite / "g.ttl")
    assert two.approval is None
    assert two.graph_data[0].name == URIRef("http://example.org/g")
    assert two.graph_data[0].source == suite / "g.ttl"
    assert loaded.other_types == {"PositiveSyntaxTest11": 1}
    assert any("unlisted" in note for note in loaded.notes)


@needs_suites
def test_cli_smoke(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI runs a filtered suite and writes its JSON report."""
    from tests.graph.sparql.w3c.runner import main

    out = tmp_path / "report.json"
    assert (
        main(["--suite", "sparql10", "--only", r"basic/manifest#term-[12]$", "--json", str(out)])
        == 0
    )
    assert "sparql10 on Memory: 2 passed, 0 failed, 0 error, 0 skipped" in capsys.readouterr().out
    report = json.loads(out.read_text(encoding="utf-8"))
    assert report["counts"]["passed"] == 2
    assert {o["status"] for o in report["outcomes"]} == {"passed"}
