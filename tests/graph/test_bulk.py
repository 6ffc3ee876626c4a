"""Bulk loading (``catalogue load``): every format round-trips, loads are idempotent and
atomic, and the N-Triples parser agrees with rdflib's on every valid line."""

from __future__ import annotations

import gzip
import re
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from rdflib import BNode, Dataset, Graph, Literal, Namespace, URIRef
from rdflib.compare import isomorphic
from rdflib.graph import DATASET_DEFAULT_GRAPH_ID
from rdflib.namespace import RDF, XSD
from sqlalchemy import create_engine, inspect

from catalogue.cli import main
from catalogue.errors import UsageError
from catalogue.graph.database import database_url
from catalogue.graph.load import batches, bulk, ntriples, writer
from catalogue.graph.load.bulk import load_file, load_quads, resolve_format
from catalogue.graph.load.ntriples import NQuadsParser, NTriplesSyntaxError, TermTable, parse_term
from catalogue.graph.load.rdflib_input import exact_literals  # how the loader parses
from catalogue.graph.load.report import LoadError
from catalogue.graph.store import SQLStore
from catalogue.graph.terms import BLANK, IRI, LITERAL, decode, term_hash

EX = Namespace("http://example.org/")
G1 = URIRef("http://example.org/graph/1")
DEFAULT = DATASET_DEFAULT_GRAPH_ID
QUAD_INDEXES = {"ix_quads_spog", "ix_quads_posg", "ix_quads_ospg"}


# ----------------------------------------------------------------------- helpers


@contextmanager
def opened(url: str) -> Iterator[SQLStore]:
    store = SQLStore(url)
    try:
        yield store
    finally:
        store.close()


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(main, list(args), catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


def stored_quads(url: str) -> set[tuple]:
    """Every quad in the database, as rdflib terms."""
    store = SQLStore(url)
    try:
        return {
            (s, p, o, getattr(c, "identifier", c))
            for s, p, o, c in Dataset(store=store).quads((None, None, None, None))
        }
    finally:
        store.close()


def snapshot(url: str) -> dict[str, object]:
    """Everything a failed load must leave as it was: quads as sorted N-Quads lines,
    the rows of the other tables, and the indexes."""
    store = SQLStore(url)
    try:
        lines = sorted(
            f"{s.n3()} {p.n3()} {o.n3()} {getattr(c, 'identifier', c).n3()} ."
            for s, p, o, c in Dataset(store=store).quads((None, None, None, None))
        )
        conn = store.connection
        tables = {
            name: sorted(map(tuple, conn.exec_driver_sql(f"SELECT * FROM {name}").all()))
            for name in ("terms", "datatypes", "graphs")
        }
        store.rollback()
    finally:
        store.close()
    return {"nquads": lines, **tables, "indexes": indexes(url)}


def indexes(url: str) -> set[str]:
    engine = create_engine(database_url(url))
    try:
        found = inspect(engine)
        return {ix["name"] for table in ("quads", "terms") for ix in found.get_indexes(table)}
    finally:
        engine.dispose()


def as_graph(quads: set[tuple]) -> Graph:
    """Quads folded into one graph (the graph name joins the predicate), so that
    isomorphism also checks blank nodes shared between graphs."""
    graph = Graph()
    for s, p, o, g in quads:
        graph.add((s, URIRef(f"{p}##{g}"), o))
    return graph


def same_quads(a: set[tuple], b: set[tuple]) -> bool:
    return len(a) == len(b) and isomorphic(as_graph(a), as_graph(b))


def reference(path: Path, fmt: str, graph: URIRef = DEFAULT) -> set[tuple]:
    """What rdflib's own parser makes of a file (lexical forms kept)."""
    with exact_literals():
        if fmt in ("nquads", "trig", "json-ld"):
            ds = Dataset()
            ds.parse(path, format=fmt)
            return {
                (s, p, o, graph if c == DEFAULT else c)
                for s, p, o, c in ds.quads((None, None, None, None))
            }
        g = Graph().parse(path, format=fmt)
        return {(s, p, o, graph) for s, p, o in g}


# --------------------------------------------------------------------- test data


def sample_dataset() -> Dataset:
    """Terms of every kind: unicode IRIs, tags, datatypes, exact lexical forms,
    escapes, blank nodes (one shared by two graphs), a named graph."""
    ds = Dataset()
    b1, b2 = BNode(), BNode()
    default = ds.default_graph
    for triple in [
        (EX.s, EX.p, EX.o),
        (EX.s, RDF.type, EX.Thing),
        (EX["é/ü"], EX.p, Literal("plain")),
        (EX.s, EX.label, Literal("chat", lang="fr")),
        (EX.s, EX.label, Literal("colour", lang="en-GB")),
        (EX.s, EX["count"], Literal("01", datatype=XSD.integer, normalize=False)),
        (EX.s, EX.ratio, Literal("1.0E0", datatype=XSD.double, normalize=False)),
        (EX.s, EX.text, Literal('tab\there, "quoted", back\\slash\nnew line')),
        (EX.s, EX.text, Literal("emoji 😀 and ü", datatype=XSD.string)),
        (EX.s, EX.json, Literal('{"a": [1, 2], "b": "x"}', datatype=RDF.JSON)),
        (EX.s, EX.when, Literal("2024-01-02T03:04:05Z", datatype=XSD.dateTime)),
        (EX.s, EX.flag, Literal("true", datatype=XSD.boolean)),
        (EX.s, EX.node, b1),
        (b1, EX.value, Literal("in a blank node")),
        (b1, EX.next, b2),
        (b2, EX.value, Literal("", lang="en")),
    ]:
        default.add(triple)
    named = ds.graph(G1)
    named.add((EX.s, EX.p, Literal("in graph 1")))
    named.add((b1, EX.value, Literal("shared blank node")))
    named.add((EX.s, EX.p, EX.o))
    return ds


FORMATS = {  # format name -> (extension, quads?)
    "nt": (".nt", False),
    "nquads": (".nq", True),
    "turtle": (".ttl", False),
    "trig": (".trig", True),
    "json-ld": (".jsonld", True),
    "xml": (".rdf", False),
    "n3": (".n3", False),
}


def write_sample(tmp_path: Path, fmt: str) -> Path:
    ext, quads = FORMATS[fmt]
    ds = sample_dataset()
    path = tmp_path / f"sample{ext}"
    if quads:
        ds.serialize(path, format=fmt)
    else:
        ds.default_graph.serialize(path, format=fmt, encoding="utf-8")
    return path


# ------------------------------------------------------------------- round trips


@pytest.mark.parametrize("fmt", list(FORMATS))
def test_every_format_round_trips(db_url, tmp_path, fmt):
    path = write_sample(tmp_path, fmt)
    expected = reference(path, fmt)
    with opened(db_url) as store:
        report = load_file(store, path)
    assert report.format == fmt
    assert report.triples == report.quads == len(expected)
    got = stored_quads(db_url)
    assert same_quads(got, expected)
    # Exact lexical forms, tags and datatypes (compared as terms, not by value).
    literals = {o for _s, _p, o, _g in got if isinstance(o, Literal)}
    assert literals == {o for _s, _p, o, _g in expected if isinstance(o, Literal)}
    assert {(str(o), o.language, o.datatype) for o in literals} == {
        (str(o), o.language, o.datatype) for _s, _p, o, _g in expected if isinstance(o, Literal)
    }


def test_blank_nodes_are_consistent_within_a_file_and_distinct_between_files(db_url, tmp_path):
    text = (
        "_:a <http://example.org/p> _:b .\n"
        "_:b <http://example.org/p> _:a <http://example.org/g> .\n"
        '_:a <http://example.org/q> "x" .\n'
    )
    first, second = tmp_path / "one.nq", tmp_path / "two.nq"
    first.write_text(text)
    second.write_text(text + "# another document\n")
    with opened(db_url) as store:
        load_file(store, first)
        one = stored_quads(db_url)
        assert len({s for s, *_ in one}) == 2  # _:a and _:b, each one node
        (a,) = {s for s, p, _o, _g in one if p == EX.q}
        assert {o for s, p, o, g in one if s == a and p == EX.p} == {
            s for s, _p, o, _g in one if o == a
        }
        load_file(store, second)
    both = stored_quads(db_url)
    assert len(both) == 6  # the second file's blank nodes are new ones
    assert len({n for q in both for n in q if isinstance(n, BNode)}) == 4


def test_loading_twice_is_idempotent(db_url, tmp_path):
    path = write_sample(tmp_path, "trig")
    with opened(db_url) as store:
        first = load_file(store, path)
        before = snapshot(db_url)
        second = load_file(store, path)
    assert first.quads > 0 and first.terms > 0
    assert (second.triples, second.quads, second.terms) == (first.triples, 0, 0)
    assert snapshot(db_url) == before


def test_loading_keeps_existing_data_and_reuses_its_terms(db_url, tmp_path):
    with opened(db_url) as store:
        graph = Graph(store=store, identifier=G1)
        graph.add((EX.s, EX.p, EX.old))
        graph.add((EX.s, EX.label, Literal("chat", lang="fr")))
        store.commit()
        path = write_sample(tmp_path, "nquads")
        report = load_file(store, path)
    expected = reference(path, "nquads")
    old = {(EX.s, EX.p, EX.old, G1), (EX.s, EX.label, Literal("chat", lang="fr"), G1)}
    assert same_quads(stored_quads(db_url), expected | old)
    # EX.s, EX.p, EX.label, the tagged literal and G1 were stored before.
    assert report.terms == len({n for quad in expected for n in quad}) - 5


def test_graph_option_names_the_graph_of_triple_formats(db_url, tmp_path):
    target = "http://example.org/target"
    nt = write_sample(tmp_path, "nt")
    with opened(db_url) as store:
        report = load_file(store, nt, graph=target)
    assert report.graph == target
    got = stored_quads(db_url)
    assert {g for *_t, g in got} == {URIRef(target)}
    assert same_quads(got, reference(nt, "nt", URIRef(target)))


def test_graph_option_only_replaces_the_default_graph_of_quad_formats(db_url, tmp_path):
    target = URIRef("http://example.org/target")
    nq = write_sample(tmp_path, "nquads")
    code, _out, err = run("load", str(nq), "--graph", str(target), "--db", db_url)
    assert code == 0, err
    got = stored_quads(db_url)
    assert {g for *_t, g in got} == {target, G1}
    assert same_quads(got, reference(nq, "nquads", target))


def test_load_quads_takes_term_tuples(db_url):
    quads = [
        (
            (IRI, "http://example.org/s", None, None),
            (IRI, "http://example.org/p", None, None),
            (LITERAL, "01", str(XSD.integer), None),
            None,
        ),
        (
            (BLANK, "b1", None, None),
            (IRI, "http://example.org/p", None, None),
            (LITERAL, "x", None, "en"),
            (IRI, str(G1), None, None),
        ),
    ]
    with opened(db_url) as store:
        report = load_quads(store, quads * 2)
    assert (report.triples, report.quads) == (4, 2)
    got = stored_quads(db_url)
    assert (EX.s, EX.p, Literal("01", datatype=XSD.integer, normalize=False), DEFAULT) in got
    assert (BNode("b1"), EX.p, Literal("x", lang="en"), G1) in got


def test_compressed_files(db_url, tmp_path):
    plain = write_sample(tmp_path, "nquads")
    packed = tmp_path / "sample.nq.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert resolve_format(packed) == ("nquads", ".gz")
    with opened(db_url) as store:
        report = load_file(store, packed)
    assert report.quads == len(reference(plain, "nquads"))
    assert same_quads(stored_quads(db_url), reference(plain, "nquads"))


@pytest.mark.parametrize("parallel", [False, True])
def test_large_load_rebuilds_indexes_and_answers_queries(db_url, tmp_path, monkeypatch, parallel):
    # Small batches and threshold: several batches are written with the indexes
    # dropped, as in a load of millions.
    monkeypatch.setattr(batches, "BATCH_QUADS", 100)
    monkeypatch.setattr(writer, "REBUILD_MIN_QUADS", 10)
    path = tmp_path / "big.nt"
    path.write_text(
        "".join(
            f'<http://example.org/s{i % 97}> <http://example.org/p{i % 7}> "v{i}" .\n'
            for i in range(1000)
        )
    )
    with opened(db_url) as store:
        report = load_file(store, path, parallel=parallel)
        assert report.quads == 1000
        assert indexes(db_url) >= QUAD_INDEXES | {"ix_terms_hash"}
        rows = list(store.triples((None, URIRef("http://example.org/p3"), None), None))
        assert len(rows) == len([i for i in range(1000) if i % 7 == 3])
        assert len(list(store.triples((None, None, Literal("v5")), None))) == 1


def all_visible(url: str, table: str) -> tuple[int, int]:
    """PostgreSQL's pages of ``table`` and how many of them the visibility map marks all-visible."""
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            pages, visible = conn.exec_driver_sql(
                f"SELECT relpages, relallvisible FROM pg_class WHERE oid = '{table}'::regclass").one()
            return int(pages), int(visible)
    finally:
        engine.dispose()


def numbered_triples(path: Path, count: int, first: int = 0) -> Path:
    path.write_text("".join(f'<http://example.org/s{i}> <http://example.org/p{i % 7}> "v{i}" .\n'
                            for i in range(first, first + count)))
    return path


@pytest.mark.postgres
def test_a_large_load_leaves_postgresql_pages_all_visible(postgres_url, tmp_path, monkeypatch):
    # Without the VACUUM after the commit the loaded pages wait for autovacuum: readers
    # check each row's transaction and index-only scans read the heap (search and SPARQL
    # three times slower after a load of 100,000 datasets).
    monkeypatch.setattr(bulk, "VACUUM_AFTER", 1_000)
    with opened(postgres_url) as store:
        assert load_file(store, numbered_triples(tmp_path / "big.nt", 3_000)).quads == 3_000
    pages, visible = all_visible(postgres_url, "quads")
    assert pages > 0 and visible == pages
    with opened(postgres_url) as store:  # below the threshold: left to autovacuum
        assert load_file(store, numbered_triples(tmp_path / "small.nt", 10, 5_000)).quads == 10
    pages_now, visible_now = all_visible(postgres_url, "quads")
    assert visible_now < pages_now  # the page its rows went to is not vacuumed


@pytest.mark.postgres
def test_a_vacuum_that_must_wait_is_left_to_autovacuum(postgres_url, tmp_path, monkeypatch):
    # Another VACUUM (here a lock of the same kind) holds the table: the load has committed
    # and reports success; the vacuum gives up after its short lock timeout.
    monkeypatch.setattr(bulk, "VACUUM_AFTER", 1_000)
    with opened(postgres_url) as store:
        load_file(store, numbered_triples(tmp_path / "first.nt", 10, 5_000))
    engine = create_engine(postgres_url)
    try:
        with engine.connect() as holder:
            holder.exec_driver_sql("LOCK TABLE quads IN SHARE UPDATE EXCLUSIVE MODE")
            with opened(postgres_url) as store:
                assert load_file(store, numbered_triples(tmp_path / "big.nt", 3_000)).quads == 3_000
            holder.rollback()
    finally:
        engine.dispose()
    assert len(stored_quads(postgres_url)) == 3_010
    assert all_visible(postgres_url, "quads")[1] == 0


def test_a_failed_vacuum_after_the_commit_is_logged_not_raised(db_url, tmp_path, monkeypatch, caplog):
    # The load has committed: a statement timeout or a lost connection in the VACUUM that
    # follows must not report the load as failed (users would run it again).
    monkeypatch.setattr(bulk, "VACUUM_AFTER", 1_000)
    with opened(db_url) as store:
        def fail(*_args: object) -> None:
            raise RuntimeError("canceling statement due to statement timeout\nCONTEXT: ...")

        monkeypatch.setattr(type(store._s.dialect), "vacuum", fail)
        report = load_file(store, numbered_triples(tmp_path / "big.nt", 3_000))
    assert report.quads == 3_000 and report.seconds > 0
    assert len(stored_quads(db_url)) == 3_000
    assert "VACUUM after the write was left to autovacuum: canceling statement due to statement timeout" in caplog.text


# ------------------------------------------------------------------- bad input


def bad_file(tmp_path: Path, good: int = 1000) -> Path:
    lines = [
        f"<http://example.org/s{i}> <http://example.org/p> _:b{i % 10} <http://example.org/g{i % 3}> .\n"
        for i in range(good)
    ]
    lines.append('<http://example.org/s> <http://example.org/p> "unterminated .\n')
    lines.append("<http://example.org/s> <http://example.org/p> <http://example.org/o> .\n")
    path = tmp_path / "bad.nq"
    path.write_text("".join(lines))
    return path


def test_bad_line_leaves_the_database_unchanged(db_url, tmp_path, monkeypatch):
    monkeypatch.setattr(batches, "BATCH_QUADS", 100)  # batches are written before the error
    monkeypatch.setattr(writer, "REBUILD_MIN_QUADS", 10)  # and the indexes are dropped
    before_path = write_sample(tmp_path, "trig")
    with opened(db_url) as store:
        load_file(store, before_path)
    before = snapshot(db_url)
    path = bad_file(tmp_path)
    code, out, err = run("load", str(path), "--db", db_url)
    assert code == 1 and out == ""
    assert err.splitlines() == [
        f"error: {path}:1001: bad object at column 47: expected an IRI, blank node or "
        "literal, found '\"unterminated .' (unterminated string)"
    ]
    assert snapshot(db_url) == before
    with opened(db_url) as store, pytest.raises(LoadError) as caught:
        load_file(store, path)
    assert (caught.value.line, caught.value.path) == (1001, str(path))
    assert snapshot(db_url) == before


@pytest.mark.parametrize(
    ("text", "line", "reason"),
    [
        (
            "<http://a> <http://b> <http://c> .\n<a> <http://b> <http://c> .\n",
            2,
            "relative IRI <a>",
        ),
        ('<http://a> <http://b> "x"@en^^<http://d> .\n', 1, "expected '.' at column 29"),
        ("<http://a> <http://b> <http://c>\n", 1, "expected '.' at column 33, found end of line"),
        ('<http://a> <http://b> "a\\qb" .\n', 1, "invalid escape '\\\\q'"),
        ("<http://a> <http://b> <http://c> . junk\n", 1, "unexpected text after '.'"),
        ('"lit" <http://b> <http://c> .\n', 1, "bad subject at column 1"),
        ("<http://a> _:p <http://c> .\n", 1, "bad predicate at column 12"),
        ("<http://a> <http://b> <http://c d> .\n", 1, "not allowed in an IRI"),
        ('<http://a> <http://b> "\\U00110000" .\n', 1, "beyond the last Unicode code point"),
        ('<http://a> <http://b> "\\uD800" .\n', 1, "lone UTF-16 surrogate"),
        (b'<http://a> <http://b> "\xff" .\n', 1, "invalid UTF-8 at byte 24"),
    ],
)
def test_syntax_errors_name_the_line_and_the_reason(text, line, reason):
    parser = NQuadsParser(
        TermTable(), quads=False, default_graph=(IRI, str(DEFAULT), None, None), blank_prefix=""
    )
    data = text if isinstance(text, bytes) else text.encode()
    with pytest.raises(NTriplesSyntaxError) as caught:
        parser.parse_chunk(data.rstrip(b"\n"), 1)
    assert caught.value.line == line
    assert reason in caught.value.reason


def test_bad_turtle_reports_its_line(db_url, tmp_path):
    path = tmp_path / "bad.ttl"
    path.write_text("@prefix ex: <http://example.org/> .\nex:a ex:b ex:c .\nex:a ex:b ;; .\n")
    with opened(db_url) as store, pytest.raises(LoadError) as caught:
        load_file(store, path)
    assert caught.value.line == 3
    assert str(caught.value).startswith(f"{path}:3: bad syntax")
    assert stored_quads(db_url) == set()


def test_hash_collision_fails_the_load(db_url, tmp_path, monkeypatch):
    path = tmp_path / "c.nt"
    path.write_text('<http://a> <http://b> "x" .\n<http://a> <http://b> "y" .\n')
    real = ntriples.term_hash
    monkeypatch.setattr(
        ntriples,
        "term_hash",
        lambda *t: real(LITERAL, "x", None, None) if t[1] == "y" else real(*t),
    )
    with opened(db_url) as store, pytest.raises(LoadError, match="collision"):
        load_file(store, path)
    assert stored_quads(db_url) == set()


def test_cli_summary_and_usage_errors(db_url, tmp_path):
    path = write_sample(tmp_path, "nt")
    code, out, err = run("load", str(path), "--db", db_url)
    assert code == 0, err
    assert re.fullmatch(
        r"loaded 16 triples \(16 new quads, \d+ new terms\) in \d+\.\d s: [\d,]+ triples/s\n", out
    )
    code, _out, err = run("load", str(path), "--format", "csv", "--db", db_url)
    assert code == 2 and err.startswith("error: unknown format 'csv'")
    code, _out, err = run("load", str(tmp_path / "missing.nt"), "--db", db_url)
    assert code == 2 and "no such file" in err
    (tmp_path / "data.txt").write_text("")
    code, _out, err = run("load", str(tmp_path / "data.txt"), "--db", db_url)
    assert code == 2 and "--format" in err
    code, _out, err = run("load", str(path), "--graph", "not an iri", "--db", db_url)
    assert code == 2 and "absolute IRI" in err


def test_format_resolution():
    assert resolve_format("a/b.NT") == ("nt", None)
    assert resolve_format("x.ttl.bz2") == ("turtle", ".bz2")
    assert resolve_format("x.json", "N-Quads") == ("nquads", None)
    with pytest.raises(UsageError):
        resolve_format("x.gz")


# ------------------------------------------------------------------ the parser


def parse(text: str, quads: bool = False) -> list[tuple]:
    """Parse with our parser; return the statements as rdflib terms."""
    table = TermTable()
    parser = NQuadsParser(
        table, quads=quads, default_graph=(IRI, str(DEFAULT), None, None), blank_prefix="p_"
    )
    parser.parse_chunk(text.encode("utf-8"), 1)
    terms = [decode(*t[1:]) for t in table.new_terms]
    flat = table.quads
    return [
        tuple(terms[i] for i in (flat[k + 1], flat[k + 2], flat[k + 3], flat[k]))
        for k in range(0, len(flat), 4)
    ]


def rdflib_parse(text: str, quads: bool = False) -> list[tuple]:
    with exact_literals():
        if quads:
            ds = Dataset()
            ds.parse(data=text, format="nquads")
            return list(ds.quads((None, None, None, None)))
        return [(s, p, o, DEFAULT) for s, p, o in Graph().parse(data=text, format="nt")]


def test_parser_handles_comments_blank_lines_whitespace_and_line_ends():
    text = (
        "# a comment\r\n"
        "\n"
        "  <http://a>\t<http://b>   <http://c>  .  # trailing comment\r\n"
        '<http://a> <http://b> "x y"@en-GB .\r'
        "<http://a><http://b>_:x.\n"
        '<http://a> <http://b> "1"^^<http://www.w3.org/2001/XMLSchema#integer> .'
    )
    got = parse(text)
    assert got[:2] == [
        (URIRef("http://a"), URIRef("http://b"), URIRef("http://c"), DEFAULT),
        (URIRef("http://a"), URIRef("http://b"), Literal("x y", lang="en-GB"), DEFAULT),
    ]
    assert got[2][2] == BNode("p_x")
    assert got[3][2] == Literal("1", datatype=XSD.integer)


def test_nquads_triples_and_quads_mix():
    text = (
        '<http://a> <http://b> "in default, with spaces" .\n'
        "<http://a> <http://b> <http://c> <http://g> .\n"
        "<http://a> <http://b> <http://c> .\n"
        '<http://a> <http://b> "x <http://g>" _:g .\n'
    )
    got = parse(text, quads=True)
    assert [q[3] for q in got] == [DEFAULT, URIRef("http://g"), DEFAULT, BNode("p_g")]
    assert got[3][2] == Literal("x <http://g>")


def test_escapes_decode_like_rdflib():
    text = (
        '<http://a/\\u00E9\\U0001F600> <http://b> "\\t\\b\\n\\r\\f\\"\\\'\\\\ \\u00e9\\U0001F600" .\n'
        '<http://a/é😀> <http://b> "\\uD83D\\uDE00" .\n'
    )
    got = parse(text)
    assert got[0][0] == got[1][0] == URIRef("http://a/é😀")
    assert str(got[0][2]) == "\t\b\n\r\f\"'\\ é😀"
    assert str(got[1][2]) == "😀"  # a surrogate pair becomes the character it encodes
    assert got[:1] == rdflib_parse(text.splitlines()[0])


def test_spellings_of_one_term_share_an_id():
    table = TermTable()
    parser = NQuadsParser(
        table, quads=False, default_graph=(IRI, str(DEFAULT), None, None), blank_prefix=""
    )
    parser.parse_chunk(
        b'<http://a/\\u0041> <http://b> "x"@EN .\n<http://a/A> <http://b> "x"@en .', 1
    )
    assert table.quads[:4] == table.quads[4:]
    assert table.size == 4  # graph, subject, predicate, literal


def test_parse_term():
    assert parse_term("<http://a>") == (IRI, "http://a", None, None)
    assert parse_term("_:x", "pre_") == (BLANK, "pre_x", None, None)
    assert parse_term('"a"@en') == (LITERAL, "a", None, "en")
    with pytest.raises(ValueError):
        parse_term('"a" ')


def test_simple_token_hashes_match_term_hash():
    table = TermTable()
    parser = NQuadsParser(
        table, quads=True, default_graph=(IRI, str(DEFAULT), None, None), blank_prefix="xyz_"
    )
    parser.parse_chunk(
        "<http://a/é> <http://b> _:b1 _:g-2 .\n_:x.y <http://b> <urn:c> .".encode(), 1
    )
    assert all(h == term_hash(*term) for h, *term in table.new_terms)


# Terms rdflib can serialise as N-Triples and parse back: absolute IRIs without the
# characters N-Triples forbids, ASCII blank node labels, any text without surrogates.
_IRI_CHARS = st.characters(
    blacklist_categories=("Cs", "Cc", "Zs", "Zl", "Zp"),
    blacklist_characters='<>"{}|^`\\ ',
)
iris = st.builds(
    lambda scheme, rest: URIRef(f"{scheme}:{rest}"),
    st.sampled_from(["http", "https", "urn", "s3", "tag"]),
    st.text(_IRI_CHARS, max_size=20),
)
blanks = st.from_regex(r"[A-Za-z][A-Za-z0-9]{0,8}", fullmatch=True).map(BNode)
texts = st.text(st.characters(blacklist_categories=("Cs",)), max_size=30)
langs = st.from_regex(r"[a-zA-Z]{1,8}(-[a-zA-Z0-9]{1,8}){0,2}", fullmatch=True)
literals = st.one_of(
    texts.map(Literal),
    st.builds(lambda t, lang: Literal(t, lang=lang), texts, langs),
    st.builds(lambda t, dt: Literal(t, datatype=dt, normalize=False), texts, iris),
    st.builds(
        lambda t, dt: Literal(t, datatype=dt, normalize=False),
        st.sampled_from(["01", "1.0", "-0", "1e3", "true", "2024-01-01T00:00:00Z", "x"]),
        st.sampled_from([XSD.integer, XSD.double, XSD.decimal, XSD.boolean, XSD.dateTime]),
    ),
)
statements = st.tuples(st.one_of(iris, blanks), iris, st.one_of(iris, blanks, literals))


def canonical(statements_: list[tuple]) -> Graph:
    graph = Graph()
    for s, p, o, _g in statements_:
        graph.add((s, p, o))
    return graph


@pytest.mark.filterwarnings("ignore::UserWarning")  # rdflib on ill-typed literals
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(statements, min_size=1, max_size=12))
def test_parser_agrees_with_rdflib_on_serialised_terms(triples):
    graph = Graph()
    for triple in triples:
        graph.add(triple)
    text = graph.serialize(format="nt", encoding="utf-8").decode("utf-8")
    ours, theirs = parse(text), rdflib_parse(text)
    assert len(ours) == len(theirs) == len(graph)
    assert isomorphic(canonical(ours), canonical(theirs))
    # Literal lexical forms, tags and datatypes exactly as rdflib reads them.
    key = lambda o: (str(o), o.language, o.datatype)  # noqa: E731
    assert sorted((key(o) for *_sp, o, _g in ours if isinstance(o, Literal)), key=repr) == sorted(
        (key(o) for *_sp, o, _g in theirs if isinstance(o, Literal)), key=repr
    )


def _escape(text: str, data: st.DataObject, iri: bool) -> str:
    """Write ``text`` with randomly chosen N-Triples escapes for each character."""
    out = []
    for ch in text:
        forced = ch in '"\\\n\r' if not iri else False
        choice = data.draw(st.sampled_from(["raw", "u", "U", "echar"]))
        code = ord(ch)
        if choice == "u" and code <= 0xFFFF:
            out.append(f"\\u{code:04X}")
        elif choice == "U":
            out.append(f"\\U{code:08x}")
        elif not iri and (forced or choice == "echar") and ch in "\t\b\n\r\f\"'\\":
            out.append("\\" + {"\t": "t", "\b": "b", "\n": "n", "\r": "r", "\f": "f"}.get(ch, ch))
        elif forced:
            out.append(f"\\u{code:04X}")
        else:
            out.append(ch)
    return "".join(out)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), iris, texts)
def test_parser_agrees_with_rdflib_on_escapes(data, iri, text):
    # rdflib needs the scheme's colon unescaped (N-Triples does not).
    scheme, rest = str(iri).split(":", 1)
    subject = f"<{scheme}:{_escape(rest, data, iri=True)}>"
    line = f'{subject} <http://example.org/p> "{_escape(text, data, iri=False)}" .\n'
    ours, theirs = parse(line), rdflib_parse(line)
    assert ours == theirs
    assert str(ours[0][2]) == text and str(ours[0][0]) == str(iri)


# ------------------------------------------------------------ parser process


@pytest.mark.parametrize("parallel", [False, True])
def test_parser_process_gives_the_same_load_and_errors(tmp_path, parallel, monkeypatch):
    monkeypatch.setattr(batches, "BATCH_QUADS", 100)
    url = f"sqlite:///{tmp_path / 'p.db'}"
    path = bad_file(tmp_path)
    with opened(url) as store, pytest.raises(LoadError) as caught:
        load_file(store, path, parallel=parallel)
    assert caught.value.line == 1001
    good = tmp_path / "good.nq"
    good.write_text("".join(path.read_text().splitlines(keepends=True)[:1000]))
    with opened(url) as store:
        report = load_file(store, good, parallel=parallel)
    assert (report.triples, report.quads) == (1000, 1000)
    assert same_quads(stored_quads(url), reference(good, "nquads"))


def test_parser_process_stops_when_the_writer_fails(tmp_path, monkeypatch):
    import multiprocessing

    monkeypatch.setattr(batches, "BATCH_QUADS", 100)
    calls = []

    def failing_write(self, batch):
        calls.append(batch)
        raise RuntimeError("disk full")

    monkeypatch.setattr(writer.Writer, "write", failing_write)
    url = f"sqlite:///{tmp_path / 'p.db'}"
    good = tmp_path / "good.nq"
    good.write_text("".join(bad_file(tmp_path).read_text().splitlines(keepends=True)[:1000]))
    with opened(url) as store, pytest.raises(RuntimeError, match="disk full"):
        load_file(store, good, parallel=True)
    assert len(calls) == 1
    assert multiprocessing.active_children() == []


def test_concurrently_stored_terms_are_reused(db_url, tmp_path, monkeypatch):
    """PostgreSQL: a term another transaction stored after our lookup makes the COPY
    into ``terms`` fail; the load then skips it and uses the stored id."""
    if not db_url.startswith("postgresql"):
        pytest.skip("SQLite loads hold the write lock: no one else can store terms")
    first = write_sample(tmp_path, "nt")
    with opened(db_url) as store:
        load_file(store, first, graph="http://example.org/first")
    monkeypatch.setattr(writer.Writer, "_existing_terms", lambda self, new_terms: {})
    with opened(db_url) as store:
        report = load_file(store, first, graph="http://example.org/second")
    # New: the graph name, and the two blank nodes (scoped to the file and the graph).
    assert report.terms == 3
    got = stored_quads(db_url)
    firsts = {(s, p, o) for s, p, o, g in got if g == URIRef("http://example.org/first")}
    seconds = {(s, p, o) for s, p, o, g in got if g == URIRef("http://example.org/second")}
    assert len(firsts) == len(seconds) == 16
    assert {s for s, *_ in seconds} & {s for s, *_ in firsts}  # the same IRIs and ids


def test_empty_files_and_byte_order_marks(db_url, tmp_path):
    empty, comments, bom = tmp_path / "e.nt", tmp_path / "c.nq", tmp_path / "b.nt"
    empty.write_bytes(b"")
    comments.write_bytes(b"# nothing here\n\n")
    bom.write_bytes(b"\xef\xbb\xbf<http://a> <http://b> <http://c> .\n")
    with opened(db_url) as store:
        assert load_file(store, empty).triples == 0
        assert load_file(store, comments).triples == 0
        assert load_file(store, bom).quads == 1
    assert stored_quads(db_url) == {
        (URIRef("http://a"), URIRef("http://b"), URIRef("http://c"), DEFAULT)
    }


def test_database_errors_are_not_reported_as_syntax_errors(tmp_path, monkeypatch):
    monkeypatch.setattr(batches, "BATCH_QUADS", 2)

    def failing_write(self, batch):
        raise RuntimeError("database went away")

    monkeypatch.setattr(writer.Writer, "write", failing_write)
    url = f"sqlite:///{tmp_path / 'w.db'}"
    path = write_sample(tmp_path, "turtle")
    with opened(url) as store, pytest.raises(RuntimeError, match="database went away"):
        load_file(store, path)


@pytest.mark.filterwarnings("ignore::UserWarning")  # rdflib on ill-typed literals
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.tuples(statements, st.one_of(st.none(), iris)), min_size=1, max_size=12))
def test_parser_agrees_with_rdflib_on_serialised_quads(quads):
    ds = Dataset()
    for (s, p, o), g in quads:
        (ds.default_graph if g is None else ds.graph(g)).add((s, p, o))
    text = ds.serialize(format="nquads", encoding="utf-8").decode("utf-8")
    ours, theirs = parse(text, quads=True), rdflib_parse(text, quads=True)
    assert len(ours) == len(theirs)
    assert same_quads(set(ours), set(theirs))


def test_multi_row_inserts_go_in_statements_of_a_bounded_length(tmp_path):
    """insert_values: rows past one statement's length go in the next ones, the last one
    shorter; rows ON CONFLICT skips are not counted as inserted."""
    import sqlite3

    from catalogue.graph.dialect.sqlite import ROWS_PER_STATEMENT, insert_values

    conn = sqlite3.connect(tmp_path / "rows.db")
    conn.execute("CREATE TABLE t (a INTEGER PRIMARY KEY, b TEXT)")
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    cursor = conn.cursor()
    rows = 2 * ROWS_PER_STATEMENT + 1
    assert insert_values(cursor, "INSERT INTO t (a, b)", 2, [v for i in range(rows) for v in (i, str(i))]) == rows
    assert len([s for s in statements if s.startswith("INSERT")]) == 3
    again = [v for i in range(rows - 5, rows + 5) for v in (i, "again")]  # five stored, five new
    assert insert_values(cursor, "INSERT INTO t (a, b)", 2, again, "ON CONFLICT (a) DO NOTHING") == 5
    assert conn.execute("SELECT count(*), count(DISTINCT b) FROM t").fetchone() == (rows + 5, rows + 1)
    conn.close()
