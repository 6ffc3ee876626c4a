"""Expected-result parsing and result comparison for the W3C SPARQL suites.

Why our own: the comparison decides whether a store "passes", so it must be exact where
SPARQL is exact and lenient only where the W3C rules are.  Specifically:

* SELECT results are compared as bags of solutions.  Blank nodes may be renamed, but
  consistently: one bijection between expected and actual blank nodes must hold across
  all solutions (found by backtracking; the suites are small).
* Order matters only when the query has a top-level ORDER BY and the expected result
  carries an order (SRX/SRJ/TSV/CSV document order, or ``rs:index``).  Then solutions
  must appear in the expected sequence, except that solutions with equal sort keys may
  come in any order among themselves (blank nodes count as equal keys: SPARQL leaves
  their relative order undefined).
* Terms are compared exactly (lexical form, datatype, language), with two RDF 1.1
  equivalences: language tags are case-insensitive, and ``"a"`` equals
  ``"a"^^xsd:string``.  CSV is compared through the CSV form of the actual results
  (the format drops types), and TSV numbers, written in Turtle's short form, compare
  ``1.0e6`` and ``1.0E6`` as the same double token.
* ``mf:LaxCardinality`` (REDUCED) allows fewer duplicates than expected, never more.
* CONSTRUCT/DESCRIBE graphs are compared with :func:`rdflib.compare.isomorphic` after
  the same literal canonicalisation.

Literals are always built with ``normalize=False`` and RDF result files are parsed with
rdflib's literal normalisation switched off, so ``"01"^^xsd:integer`` stays ``"01"``.
"""

from __future__ import annotations

import csv
import json
import re
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

import rdflib
from rdflib import RDF, XSD, BNode, Graph, Literal, Namespace, URIRef, Variable
from rdflib.compare import graph_diff, isomorphic
from rdflib.query import Result
from rdflib.term import Node

__all__ = [
    "RS",
    "ComparisonError",
    "Expected",
    "QueryShape",
    "Solutions",
    "compare_graphs",
    "compare_result",
    "compare_solutions",
    "inspect_query",
    "literal_normalisation",
    "load_expected",
    "parse_csv",
    "parse_result_graph",
    "parse_srj",
    "parse_srx",
    "parse_tsv",
    "solutions_from_result",
    "term_key",
]

RS = Namespace("http://www.w3.org/2001/sw/DataAccess/tests/result-set#")
_SRX = "{http://www.w3.org/2005/sparql-results#}"
_XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"

#: RDF syntaxes of expected-result (and data) files, by extension.
RDF_FORMATS: dict[str, str] = {
    ".ttl": "turtle",
    ".n3": "n3",
    ".nt": "nt",
    ".rdf": "xml",
    ".owl": "xml",
    ".xml": "xml",
    ".nq": "nquads",
    ".trig": "trig",
    ".jsonld": "json-ld",
}

#: Bound on backtracking steps in blank-node matching: far above what the suites need,
#: low enough that a pathological result fails fast instead of hanging the run.
MAX_MATCH_STEPS = 200_000
#: Prefix of failure reasons where the solutions are equal by value and only the
#: lexical forms of numbers differ (e.g. "3.21E4" vs "32100.0"): still failures under
#: term equality, but worth telling apart from wrong answers.
NUMERIC_LEXICAL_ONLY = "only numeric lexical forms differ"

Row = dict[str, Node]
Key = tuple[Any, ...]


class ComparisonError(Exception):
    """The comparison itself could not be carried out (not a wrong result)."""


@contextmanager
def literal_normalisation(enabled: bool) -> Iterator[None]:
    """Temporarily set ``rdflib.NORMALIZE_LITERALS`` (restored afterwards)."""
    previous = rdflib.NORMALIZE_LITERALS
    rdflib.NORMALIZE_LITERALS = enabled
    try:
        yield
    finally:
        rdflib.NORMALIZE_LITERALS = previous


# --------------------------------------------------------------------- data classes


@dataclass
class Solutions:
    """A sequence of solutions; ``variables`` is ``None`` when the source has no head."""

    variables: list[str] | None
    rows: list[Row]
    #: Whether the row order is meaningful in the source (false for rs: graphs without
    #: ``rs:index``, whose solutions are an unordered set of nodes).
    ordered: bool = True


@dataclass
class Expected:
    """A parsed expected result: solutions, a boolean or a graph."""

    format: str  # srx, srj, tsv, csv or rdf
    solutions: Solutions | None = None
    boolean: bool | None = None
    graph: Graph | None = None

    @property
    def kind(self) -> str:
        if self.graph is not None:
            return "graph"
        return "boolean" if self.boolean is not None else "solutions"


@dataclass
class QueryShape:
    """What comparison needs to know about the query (not how to evaluate it)."""

    form: str | None  # SELECT, ASK, CONSTRUCT, DESCRIBE; None if the query did not parse
    ordered: bool = False  # top-level ORDER BY
    #: Projected variables the sort keys depend on; ``None`` when unknown (then only
    #: identical solutions may swap places).
    order_keys: list[str] | None = None
    note: str = ""
    projected: list[str] = field(default_factory=list)
    #: IRIs named in FROM / FROM NAMED (resolved against the base), in query order.
    dataset_graphs: list[str] = field(default_factory=list)


# ------------------------------------------------------------------ query shape


def _walk_vars(node: Any) -> Iterator[str]:
    if isinstance(node, Variable):
        yield str(node)
    elif isinstance(node, dict):
        for key, value in node.items():
            if key != "_vars":
                yield from _walk_vars(value)
    elif isinstance(node, list | tuple):
        for item in node:
            yield from _walk_vars(item)


def inspect_query(text: str, base: str | None = None) -> QueryShape:
    """Query form and ORDER BY keys, from rdflib's parser and algebra translation.

    Only parses; evaluation always goes through the store under test.  When rdflib
    cannot parse the query (its parser may be stricter or older than the store's), the
    form is left open and ORDER BY is detected textually with unknown keys, which makes
    the order check stricter, never weaker.
    """
    from rdflib.plugins.sparql.algebra import translateQuery
    from rdflib.plugins.sparql.parser import parseQuery

    try:
        algebra = translateQuery(parseQuery(text), base=base).algebra
    except Exception as exc:
        ordered = re.search(r"\border\s+by\b", text, re.IGNORECASE) is not None
        return QueryShape(form=None, ordered=ordered, note=f"rdflib could not parse: {exc}")
    form = algebra.name.removesuffix("Query").upper()
    projected = [str(v) for v in algebra.get("PV") or []]
    dataset_graphs: list[str] = []
    for clause in algebra.get("datasetClause") or []:
        iri = clause.get("default") or clause.get("named")
        if iri is not None and str(iri) not in dataset_graphs:
            dataset_graphs.append(str(iri))
    node = algebra.p
    while node is not None and getattr(node, "name", None) in (
        "Slice",
        "Distinct",
        "Reduced",
        "Project",
    ):  # not into ToMultiSet: a subquery's order does not survive into the outer query
        node = node.p
    if getattr(node, "name", None) != "OrderBy" or form not in ("SELECT",):
        return QueryShape(form=form, projected=projected, dataset_graphs=dataset_graphs)
    keys: list[str] = []
    for condition in node.expr:
        expr = condition.expr if getattr(condition, "name", None) == "OrderCondition" else condition
        for var in _walk_vars(expr):
            if var not in keys:
                keys.append(var)
    known = bool(keys) and all(k in projected for k in keys)
    return QueryShape(
        form=form,
        ordered=True,
        order_keys=keys if known else None,
        projected=projected,
        dataset_graphs=dataset_graphs,
    )


# ---------------------------------------------------------------------- parsers


def _literal(lexical: str, datatype: str | None = None, lang: str | None = None) -> Literal:
    if lang:
        return Literal(lexical, lang=lang, normalize=False)
    if datatype:
        return Literal(lexical, datatype=URIRef(datatype), normalize=False)
    return Literal(lexical, normalize=False)


def parse_srx(path: Path) -> Expected:
    """SPARQL Query Results XML Format."""
    root = ET.parse(path).getroot()
    boolean = root.find(f"{_SRX}boolean")
    if boolean is not None:
        return Expected("srx", boolean=(boolean.text or "").strip() == "true")
    head = root.find(f"{_SRX}head")
    variables = [] if head is None else [v.attrib["name"] for v in head.findall(f"{_SRX}variable")]
    rows: list[Row] = []
    results = root.find(f"{_SRX}results")
    for result in [] if results is None else results.findall(f"{_SRX}result"):
        row: Row = {}
        for binding in result.findall(f"{_SRX}binding"):
            children = list(binding)
            if len(children) != 1:
                raise ComparisonError(
                    f"{path.name}: binding {binding.attrib.get('name')} malformed"
                )
            value = children[0]
            tag = value.tag.removeprefix(_SRX)
            text = value.text or ""
            if tag == "uri":
                term: Node = URIRef(text)
            elif tag == "bnode":
                term = BNode(text)
            elif tag == "literal":
                term = _literal(text, value.attrib.get("datatype"), value.attrib.get(_XML_LANG))
            else:
                raise ComparisonError(f"{path.name}: unknown binding value <{tag}>")
            row[binding.attrib["name"]] = term
        rows.append(row)
    return Expected("srx", solutions=Solutions(variables, rows))


def _json_term(value: dict[str, str]) -> Node:
    kind = value["type"]
    if kind == "uri":
        return URIRef(value["value"])
    if kind == "bnode":
        return BNode(value["value"])
    if kind in ("literal", "typed-literal"):
        return _literal(value["value"], value.get("datatype"), value.get("xml:lang"))
    raise ComparisonError(f"unknown JSON term type {kind!r}")


def parse_srj(path: Path) -> Expected:
    """SPARQL Query Results JSON Format (also accepts the older ``typed-literal``)."""
    doc = json.loads(path.read_text(encoding="utf-8"))
    if "boolean" in doc:
        return Expected("srj", boolean=bool(doc["boolean"]))
    variables = list(doc.get("head", {}).get("vars", []))
    rows = [
        {name: _json_term(value) for name, value in binding.items()}
        for binding in doc["results"]["bindings"]
    ]
    return Expected("srj", solutions=Solutions(variables, rows))


_ESCAPE = re.compile(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|[tbnrf\"'\\])")
_SIMPLE_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'"}
_TSV_LITERAL = re.compile(
    r'^"(?P<lex>(?:[^"\\]|\\.)*)"(?:@(?P<lang>[A-Za-z]+(?:-[A-Za-z0-9]+)*)|\^\^<(?P<dt>[^>]*)>)?$'
)
_INTEGER = re.compile(r"^[+-]?\d+$")
_DECIMAL = re.compile(r"^[+-]?\d*\.\d+$")
_DOUBLE = re.compile(r"^[+-]?(?:\d+\.\d*|\.\d+|\d+)[eE][+-]?\d+$")


def _unescape(text: str) -> str:
    def repl(m: re.Match[str]) -> str:
        code = m.group(1)
        if code[0] in "uU":
            return chr(int(code[1:], 16))
        return _SIMPLE_ESCAPES.get(code, "\\")

    return _ESCAPE.sub(repl, text)


def tsv_term(cell: str) -> Node | None:
    """One TSV cell: a Turtle/N-Triples term, Turtle numeric/boolean short forms, or
    empty (unbound)."""
    if cell == "":
        return None
    if cell.startswith("<") and cell.endswith(">"):
        return URIRef(_unescape(cell[1:-1]))
    if cell.startswith("_:"):
        return BNode(cell[2:])
    m = _TSV_LITERAL.match(cell)
    if m:
        return _literal(_unescape(m.group("lex")), m.group("dt"), m.group("lang"))
    for pattern, datatype in (
        (_INTEGER, XSD.integer),
        (_DECIMAL, XSD.decimal),
        (_DOUBLE, XSD.double),
    ):
        if pattern.match(cell):
            return _literal(cell, datatype)
    if cell in ("true", "false"):
        return _literal(cell, XSD.boolean)
    raise ComparisonError(f"unparsable TSV term {cell!r}")


def parse_tsv(path: Path) -> Expected:
    """SPARQL 1.1 TSV results (header ``?x\\t?y``; terms in Turtle syntax)."""
    lines = path.read_text(encoding="utf-8").split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    lines = [line.removesuffix("\r") for line in lines]
    variables = [v.lstrip("?$") for v in lines[0].split("\t")] if lines and lines[0] else []
    rows: list[Row] = []
    for line in lines[1:]:
        cells = line.split("\t")
        if len(cells) != len(variables):
            raise ComparisonError(f"{path.name}: row has {len(cells)} cells: {line!r}")
        row: Row = {}
        for var, cell in zip(variables, cells, strict=True):
            term = tsv_term(cell)
            if term is not None:
                row[var] = term
        rows.append(row)
    return Expected("tsv", solutions=Solutions(variables, rows))


def csv_term(cell: str) -> Node | None:
    """One CSV cell as compared: CSV keeps only text, plus ``_:`` for blank nodes."""
    if cell == "":
        return None
    if cell.startswith("_:"):
        return BNode(cell[2:])
    return Literal(cell, normalize=False)


def csv_text(term: Node) -> str:
    """The CSV form of a result term (SPARQL 1.1 Query Results CSV, section 3)."""
    if isinstance(term, BNode):
        return f"_:{term}"
    return str(term)


def parse_csv(path: Path) -> Expected:
    """SPARQL 1.1 CSV results."""
    with path.open(encoding="utf-8", newline="") as handle:
        records = list(csv.reader(handle))
    variables = records[0] if records else []
    rows: list[Row] = []
    for record in records[1:]:
        if len(record) != len(variables):
            raise ComparisonError(f"{path.name}: row has {len(record)} cells: {record!r}")
        rows.append(
            {
                var: term
                for var, cell in zip(variables, record, strict=True)
                if (term := csv_term(cell))
            }
        )
    return Expected("csv", solutions=Solutions(variables, rows))


def parse_result_graph(graph: Graph) -> Expected:
    """A result set written in the ``rs:`` vocabulary (DAWG's RDF result sets)."""
    sets = set(graph.subjects(RDF.type, RS.ResultSet))
    sets |= set(graph.subjects(RS.solution, None)) | set(graph.subjects(RS.boolean, None))
    if len(sets) != 1:
        raise ComparisonError(f"expected one rs:ResultSet in the result graph, found {len(sets)}")
    (rs,) = sets
    boolean = graph.value(rs, RS.boolean)
    if boolean is not None:
        return Expected("rdf", boolean=str(boolean).strip().lower() in ("true", "1"))
    variables = sorted(str(v) for v in graph.objects(rs, RS.resultVariable))
    indexed: list[tuple[int | None, Row]] = []
    for solution in graph.objects(rs, RS.solution):
        row: Row = {}
        for binding in graph.objects(solution, RS.binding):
            var = graph.value(binding, RS.variable)
            value = graph.value(binding, RS.value)
            if var is None or value is None:
                raise ComparisonError(f"rs:binding without variable or value: {binding}")
            row[str(var)] = value
        index = graph.value(solution, RS["index"])  # RS.index is str.index
        indexed.append((int(index) if index is not None else None, row))
    ordered = bool(indexed) and all(i is not None for i, _ in indexed)
    if ordered:
        indexed.sort(key=lambda pair: pair[0] or 0)
    return Expected(
        "rdf", solutions=Solutions(variables or None, [row for _, row in indexed], ordered)
    )


def parse_rdf(path: Path, base: str) -> Graph:
    """An RDF file, parsed with its own IRI as base and without literal normalisation."""
    fmt = RDF_FORMATS.get(path.suffix.lower())
    if fmt is None:
        raise ComparisonError(f"no RDF parser for {path.name}")
    graph = Graph()
    with literal_normalisation(False):
        graph.parse(path, format=fmt, publicID=base)
    return graph


def load_expected(path: Path, base: str, form: str | None) -> Expected:
    """Parse an expected result; ``form`` (the query form) decides how RDF files are read.

    RDF files are result sets for SELECT/ASK and graphs for CONSTRUCT/DESCRIBE.  When
    the form is unknown, a file with an ``rs:ResultSet`` is taken as a result set.
    """
    suffix = path.suffix.lower()
    if suffix == ".srx":
        return parse_srx(path)
    if suffix == ".srj":
        return parse_srj(path)
    if suffix == ".tsv":
        return parse_tsv(path)
    if suffix == ".csv":
        return parse_csv(path)
    graph = parse_rdf(path, base)
    if form in ("SELECT", "ASK"):
        return parse_result_graph(graph)
    if form is None and (None, RDF.type, RS.ResultSet) in graph:
        return parse_result_graph(graph)
    return Expected("rdf", graph=graph)


def solutions_from_result(result: Result) -> Solutions:
    """The solutions of an rdflib SELECT result, in the order the store returned them.

    Reads ``result.bindings``, not ``iter(result)``: rdflib's iterator silently drops
    solutions that bind no variable, which SPARQL counts (e.g. after OPTIONAL).
    """
    variables = [str(v) for v in result.vars or []]
    rows = [{str(k): v for k, v in row.items() if v is not None} for row in result.bindings]
    return Solutions(variables, rows)


# ------------------------------------------------------------------- comparison


def term_key(term: Node, *, tsv: bool = False) -> Key:
    """Equality key of a term under the rules in the module docstring.

    Blank nodes keep their label: the matcher, not the key, decides which blank nodes
    correspond.
    """
    if isinstance(term, BNode):
        return ("B", str(term))
    if isinstance(term, URIRef):
        return ("I", str(term))
    if isinstance(term, Literal):
        lexical = str(term)
        if term.language:
            return ("L", lexical, None, term.language.lower())
        datatype = term.datatype
        if datatype is None or datatype == XSD.string:
            return ("L", lexical, None, None)
        if tsv and datatype == XSD.double:
            lexical = lexical.lower()  # Turtle DOUBLE token: e and E are the same
        return ("L", lexical, str(datatype), None)
    return ("?", type(term).__name__, str(term))


_RowKey = tuple[tuple[str, Key], ...]


def _row_key(row: Row, key: Callable[[Node], Key]) -> _RowKey:
    return tuple(sorted((var, key(term)) for var, term in row.items()))


def _signature(row: _RowKey) -> _RowKey:
    """The row with every blank node label hidden: rows can only match with equal ones."""
    return tuple((var, ("B",) if k[0] == "B" else k) for var, k in row)


def _is_ground(row: _RowKey) -> bool:
    return all(k[0] != "B" for _, k in row)


def _show_term(key: Key) -> str:
    kind = key[0]
    if kind == "I":
        text = f"<{key[1]}>"
    elif kind == "B":
        text = f"_:{key[1]}" if len(key) > 1 else "_:*"
    elif kind == "L":
        text = json.dumps(key[1], ensure_ascii=False)
        if key[3]:
            text += f"@{key[3]}"
        elif key[2]:
            text += f"^^<{key[2]}>"
    else:
        text = str(key)
    return text if len(text) <= 80 else text[:77] + "..."


def show_row(row: _RowKey) -> str:
    return "{" + ", ".join(f"?{var}={_show_term(k)}" for var, k in row) + "}"


def _show_rows(rows: Iterable[_RowKey], limit: int = 3) -> str:
    rows = list(rows)
    shown = "; ".join(show_row(r) for r in rows[:limit])
    return shown + (f"; ... ({len(rows)} in all)" if len(rows) > limit else "")


class _Matcher:
    """Find one blank-node bijection under which each expected row matches a distinct
    actual row from its allowed group (a run of equal sort keys, or everything)."""

    def __init__(self) -> None:
        self.steps = 0

    @staticmethod
    def _extend(
        e: _RowKey, a: _RowKey, fwd: dict[str, str], bwd: dict[str, str]
    ) -> list[tuple[str, str]] | None:
        new: list[tuple[str, str]] = []
        local_f: dict[str, str] = {}
        local_b: dict[str, str] = {}
        for (_, ek), (_, ak) in zip(e, a, strict=True):
            if ek[0] != "B":
                continue
            el, al = ek[1], ak[1]
            mapped = fwd.get(el, local_f.get(el))
            back = bwd.get(al, local_b.get(al))
            if mapped is None and back is None:
                local_f[el], local_b[al] = al, el
                new.append((el, al))
            elif mapped != al or back != el:
                return None
        return new

    def match(self, expected: list[tuple[int, _RowKey]], actual: list[tuple[int, _RowKey]]) -> bool:
        """``expected``/``actual``: (group, row) pairs of rows that contain blank nodes."""
        candidates: list[list[int]] = []
        for group, row in expected:
            sig = _signature(row)
            candidates.append(
                [i for i, (g, a) in enumerate(actual) if g == group and _signature(a) == sig]
            )
        order = sorted(range(len(expected)), key=lambda j: len(candidates[j]))
        fwd: dict[str, str] = {}
        bwd: dict[str, str] = {}
        used: set[int] = set()

        def solve(pos: int) -> bool:
            if pos == len(order):
                return True
            j = order[pos]
            for i in candidates[j]:
                if i in used:
                    continue
                self.steps += 1
                if self.steps > MAX_MATCH_STEPS:
                    raise ComparisonError("blank-node matching exceeded its step budget")
                new = self._extend(expected[j][1], actual[i][1], fwd, bwd)
                if new is None:
                    continue
                used.add(i)
                for el, al in new:
                    fwd[el], bwd[al] = al, el
                if solve(pos + 1):
                    return True
                used.discard(i)
                for el, al in new:
                    del fwd[el], bwd[al]
            return False

        return solve(0)


def _bag_match(
    expected: Sequence[_RowKey],
    actual: Sequence[_RowKey],
    groups_e: Sequence[int],
    groups_a: Sequence[int],
) -> bool:
    """Whether the rows match group by group under one blank-node bijection."""
    ground_e = Counter((g, r) for g, r in zip(groups_e, expected, strict=True) if _is_ground(r))
    ground_a = Counter((g, r) for g, r in zip(groups_a, actual, strict=True) if _is_ground(r))
    if ground_e != ground_a:
        return False
    blank_e = [(g, r) for g, r in zip(groups_e, expected, strict=True) if not _is_ground(r)]
    blank_a = [(g, r) for g, r in zip(groups_a, actual, strict=True) if not _is_ground(r)]
    if Counter((g, _signature(r)) for g, r in blank_e) != Counter(
        (g, _signature(r)) for g, r in blank_a
    ):
        return False
    return _Matcher().match(blank_e, blank_a)


def _bag_difference(expected: Sequence[_RowKey], actual: Sequence[_RowKey]) -> str:
    """A short description of how two bags of rows differ (blank nodes anonymised)."""
    e = Counter(_signature(r) for r in expected)
    a = Counter(_signature(r) for r in actual)
    missing, extra = e - a, a - e
    parts = [f"expected {len(expected)} solutions, got {len(actual)}"]
    if missing:
        parts.append("missing " + _show_rows(missing.elements()))
    if extra:
        parts.append("unexpected " + _show_rows(extra.elements()))
    if not missing and not extra:
        parts.append("blank nodes are not shared the same way")
    return "; ".join(parts)


_INTEGER_TYPES = {
    XSD[name]
    for name in (
        "integer",
        "nonPositiveInteger",
        "negativeInteger",
        "long",
        "int",
        "short",
        "byte",
        "nonNegativeInteger",
        "unsignedLong",
        "unsignedInt",
        "unsignedShort",
        "unsignedByte",
        "positiveInteger",
    )
}
_NUMERIC_TYPES = _INTEGER_TYPES | {XSD.decimal, XSD.float, XSD.double}
_VALUE_TYPES = {XSD.boolean, XSD.dateTime, XSD.date, XSD.time}


def _number(term: Literal) -> Decimal | float | None:
    """Numeric value of a numeric literal (``None`` if ill-typed)."""
    lexical = str(term).strip()
    try:
        if term.datatype in (XSD.float, XSD.double):
            return float(lexical)
        value = Decimal(lexical)
    except (ValueError, InvalidOperation):
        return None
    if term.datatype in _INTEGER_TYPES and value != value.to_integral_value():
        return None
    return value


def _order_relation(a: Node | None, b: Node | None) -> str:
    """How ORDER BY relates two sort-key values: ``same``, ``ordered`` or ``undefined``.

    Follows SPARQL 1.1 section 15.1: unbound < blank nodes < IRIs < literals; IRIs
    and simple/xsd:string literals order by code point, numbers by value; the order
    between blank nodes, between literals of incompatible types (``"1"`` and ``1``),
    and between language-tagged literals is not defined.
    """
    if a is None or b is None:
        return "same" if a is b else "ordered"
    rank = {BNode: 0, URIRef: 1, Literal: 2}
    ra = next((r for t, r in rank.items() if isinstance(a, t)), 3)
    rb = next((r for t, r in rank.items() if isinstance(b, t)), 3)
    if ra != rb:
        return "ordered"
    if term_key(a) == term_key(b):
        return "same"
    if isinstance(a, BNode):
        return "undefined"
    if isinstance(a, URIRef):
        return "ordered"
    assert isinstance(a, Literal) and isinstance(b, Literal)
    if a.language or b.language:
        return "undefined"
    da, db = a.datatype or XSD.string, b.datatype or XSD.string
    if da in _NUMERIC_TYPES and db in _NUMERIC_TYPES:
        va, vb = _number(a), _number(b)
        if va is None or vb is None or va != va or vb != vb:  # ill-typed or NaN
            return "undefined"
        return "same" if va == vb else "ordered"
    if da == db == XSD.string:
        return "ordered"
    if da == db and da in _VALUE_TYPES:
        va, vb = a.value, b.value
        if va is None or vb is None:  # ill-typed
            return "undefined"
        if (getattr(va, "tzinfo", None) is None) != (getattr(vb, "tzinfo", None) is None):
            return "undefined"  # XSD: with vs without time zone may be indeterminate
        return "same" if va == vb else "ordered"
    return "undefined"


def _tied(a: Row, b: Row, keys: list[str] | None) -> bool:
    """Whether ORDER BY may put ``a`` and ``b`` in either order.

    ``keys`` are the sort-key variables, compared in turn as ORDER BY does.  With
    ``None`` (keys not projected, so unknown) only rows that are equal up to blank
    nodes may swap: stricter than SPARQL, never more lenient.  For sort expressions
    (``ORDER BY STR(?x)``) ``keys`` are the variables they use, and ties are judged on
    those variables' values: an approximation, off only where the raw values and the
    expression's values order differently.
    """
    if keys is None:
        return _signature(_row_key(a, term_key)) == _signature(_row_key(b, term_key))
    for name in keys:
        relation = _order_relation(a.get(name), b.get(name))
        if relation == "ordered":
            return False
        if relation == "undefined":
            return True
    return True


def value_key(term: Node) -> Key:
    """Like :func:`term_key`, but numbers and booleans by value within their datatype.

    Only used to explain failures ("only the lexical forms differ"), never to pass.
    """
    if isinstance(term, Literal) and not term.language and term.datatype is not None:
        if term.datatype in _NUMERIC_TYPES:
            number = _number(term)
            if number is not None:
                shown = repr(number) if isinstance(number, float) else str(number.normalize())
                return ("L", shown, str(term.datatype), None)
        if term.datatype == XSD.boolean and str(term) in ("0", "1", "true", "false"):
            return ("L", str(str(term) in ("1", "true")).lower(), str(term.datatype), None)
    return term_key(term)


def compare_solutions(
    expected: Solutions,
    actual: Solutions,
    *,
    ordered: bool = False,
    order_keys: list[str] | None = None,
    lax: bool = False,
    tsv: bool = False,
    check_variables: bool = True,
) -> str | None:
    """``None`` if ``actual`` matches ``expected``, else a short reason.

    ``ordered``: compare in sequence, letting runs of expected rows that ORDER BY
    leaves unordered (equal or incomparable values of ``order_keys``) come in any
    order among themselves.  ``lax``: LaxCardinality.  ``check_variables``: also
    compare the declared variables (heads) as sets.
    """

    def key(term: Node) -> Key:
        return term_key(term, tsv=tsv)

    if (
        check_variables
        and expected.variables is not None
        and actual.variables is not None
        and set(expected.variables) != set(actual.variables)
    ):
        return f"variables differ: expected {expected.variables}, got {actual.variables}"
    exp = [_row_key(r, key) for r in expected.rows]
    act = [_row_key(r, key) for r in actual.rows]
    if lax:
        return _compare_lax(exp, act)
    if len(exp) != len(act) or not _bag_match(exp, act, [0] * len(exp), [0] * len(act)):
        reason = _bag_difference(exp, act)
        by_value_e = [_row_key(r, value_key) for r in expected.rows]
        by_value_a = [_row_key(r, value_key) for r in actual.rows]
        if len(exp) == len(act) and _bag_match(
            by_value_e, by_value_a, [0] * len(exp), [0] * len(act)
        ):
            reason = f"{NUMERIC_LEXICAL_ONLY}: {reason}"
        return reason
    if not (ordered and expected.ordered):
        return None
    # Runs of consecutive expected rows that ORDER BY does not order among themselves;
    # the actual row at a position must come from the run of that position.
    runs: list[int] = []
    for i, row in enumerate(expected.rows):
        tied = i > 0 and _tied(expected.rows[i - 1], row, order_keys)
        runs.append(0 if i == 0 else runs[-1] + (not tied))
    if _bag_match(exp, act, runs, runs):
        return None
    for position, (e, a) in enumerate(zip(exp, act, strict=True)):
        if _signature(e) != _signature(a):
            return (
                f"right solutions, wrong order (ORDER BY); first difference at position "
                f"{position}: expected {show_row(e)}, got {show_row(a)}"
            )
    return "right solutions, wrong order (ORDER BY) of blank-node solutions"


def _compare_lax(exp: list[_RowKey], act: list[_RowKey]) -> str | None:
    """LaxCardinality: the same distinct solutions, each at most as often as expected."""
    exp_set, act_set = list(dict.fromkeys(exp)), list(dict.fromkeys(act))
    if len(exp_set) != len(act_set) or not _bag_match(
        exp_set, act_set, [0] * len(exp_set), [0] * len(act_set)
    ):
        return "(lax cardinality) " + _bag_difference(exp_set, act_set)
    e, a = Counter(_signature(r) for r in exp), Counter(_signature(r) for r in act)
    too_many = a - e
    if too_many:
        return "(lax cardinality) more duplicates than expected: " + _show_rows(too_many.elements())
    return None


def _canonical_graph(graph: Graph) -> Graph:
    """Copy with the RDF 1.1 literal equivalences applied (see module docstring)."""
    out = Graph()

    def canon(term: Node) -> Node:
        if isinstance(term, Literal):
            if term.language:
                return Literal(str(term), lang=term.language.lower(), normalize=False)
            if term.datatype == XSD.string:
                return Literal(str(term), normalize=False)
        return term

    for s, p, o in graph:
        out.add((canon(s), canon(p), canon(o)))
    return out


def compare_graphs(expected: Graph, actual: Graph) -> str | None:
    """``None`` if the graphs are isomorphic (after literal canonicalisation)."""
    e, a = _canonical_graph(expected), _canonical_graph(actual)
    if len(e) == len(a) and isomorphic(e, a):
        return None
    _, only_e, only_a = graph_diff(e, a)
    parts = [f"graphs differ: expected {len(e)} triples, got {len(a)}"]
    for label, g in (("missing", only_e), ("unexpected", only_a)):
        triples = sorted(" ".join(t.n3() for t in triple) for triple in g)
        if triples:
            parts.append(f"{label} {'; '.join(triples[:3])}" + (" ..." if len(triples) > 3 else ""))
    return "; ".join(parts)


def csv_solutions(solutions: Solutions) -> Solutions:
    """Actual solutions as the CSV format sees them (text only)."""
    rows = [
        {var: term for var, t in row.items() if (term := csv_term(csv_text(t))) is not None}
        for row in solutions.rows
    ]
    return Solutions(solutions.variables, rows, solutions.ordered)


def compare_result(
    expected: Expected,
    result: Result,
    shape: QueryShape,
    *,
    lax: bool = False,
    check_variables: bool = True,
) -> str | None:
    """Compare a store's query result with the expected one; ``None`` means equal.

    The result must be materialised already (see the runner); this only reads it.
    """
    actual_type = result.type
    if shape.form is not None and actual_type != shape.form:
        return f"result type {actual_type}, but the query is a {shape.form}"
    if expected.kind == "graph":
        if actual_type not in ("CONSTRUCT", "DESCRIBE") or result.graph is None:
            return f"expected a graph, got a {actual_type} result"
        assert expected.graph is not None
        return compare_graphs(expected.graph, result.graph)
    if expected.kind == "boolean":
        if actual_type != "ASK":
            return f"expected a boolean, got a {actual_type} result"
        if bool(result.askAnswer) != expected.boolean:
            return f"expected {expected.boolean}, got {result.askAnswer}"
        return None
    if actual_type != "SELECT":
        return f"expected solutions, got a {actual_type} result"
    assert expected.solutions is not None
    actual = solutions_from_result(result)
    if expected.format == "csv":
        actual = csv_solutions(actual)
    return compare_solutions(
        expected.solutions,
        actual,
        ordered=shape.ordered,
        order_keys=shape.order_keys,
        lax=lax,
        tsv=expected.format == "tsv",
        check_variables=check_variables,
    )
