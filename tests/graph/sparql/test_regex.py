"""SPARQL ``REGEX`` on RE2 (catalogue/graph/sparql/regex.py and the SQL function of evaluate.py).

End to end, test_compiler.py checks that ``regex()`` filters give rdflib's rows; these
pin the translation itself: XPath flag letters, what is refused (constructs that need
backtracking) and that a bad pattern is a SPARQL error (SQL NULL), not an exception.
"""

from __future__ import annotations

import re

import pytest

from catalogue.graph.sparql.evaluate import sparql_regex
from catalogue.graph.sparql.regex import compile_pattern


def test_x_flag_drops_whitespace_outside_character_classes_only():
    assert compile_pattern("a b", "x").search("ab")
    assert not compile_pattern("a b", "").search("ab")
    assert compile_pattern("[ ]", "x").search(" ")


def test_i_flag_ignores_case():
    assert compile_pattern("ABC", "i").search("xabc")
    assert not compile_pattern("ABC", "").search("xabc")


@pytest.mark.parametrize("pattern", [r"(a)\1", "(?=a)", "(?<!a)b"])
def test_backtracking_constructs_are_refused(pattern):
    with pytest.raises(re.error, match=r"^backreferences and lookaround are not supported \(linear-time matching\)$"):
        compile_pattern(pattern)


def test_invalid_pattern_is_a_re_error():
    with pytest.raises(re.error, match="missing \\), unterminated subpattern"):
        compile_pattern("(")


@pytest.mark.parametrize(("text", "pattern", "flags", "expected"), [
    ("Temperature", "^temp", "i", 1),
    ("Temperature", "^temp", "", 0),
    (None, "a", "", None),  # an unbound argument: an error, NULL in SQL
    ("a", None, "", None),
    ("a", "(", "", None),  # a bad pattern: an error, not an exception in the database
    ("a", r"(a)\1", None, None),
])
def test_sql_regex_function(text, pattern, flags, expected):
    assert sparql_regex(text, pattern, flags) == expected


def test_a_case_blind_word_calls_the_function_for_non_ascii_text_only(tmp_path, monkeypatch):
    """SQLite's LIKE answers ``regex(?t, "word", "i")`` for ASCII text; the exact function
    runs only where Unicode case folding can matter. (Written as ``LIKE OR (GLOB AND f)``
    inside a CASE branch, SQLite evaluated both sides of the OR and called it on every row.)"""
    from rdflib import Dataset, Literal, URIRef

    from catalogue.graph.sparql import evaluate
    from catalogue.graph.store import SQLStore

    calls = []

    def counted(text, pattern, flags):
        calls.append(text)
        return sparql_regex(text, pattern, flags)

    nargs, _fn = evaluate._FUNCTIONS["sparql_regex"]
    monkeypatch.setitem(evaluate._FUNCTIONS, "sparql_regex", (nargs, counted))
    store = SQLStore(f"sqlite:///{tmp_path / 'c.db'}")
    ds = Dataset(store=store, default_union=True)
    g = ds.graph(URIRef("http://x/g"))
    titles = ["Sea surface TEMPERATURE", "Wind speed", "Température de l'air", "Ice thickness – Arctic"]
    for n, title in enumerate(titles):
        g.add((URIRef(f"http://x/d{n}"), URIRef("http://x/title"), Literal(title)))
    store.commit()
    rows = ds.query('SELECT ?t WHERE { ?d <http://x/title> ?t FILTER regex(?t, "temp", "i") }')
    assert sorted(str(r[0]) for r in rows) == ["Sea surface TEMPERATURE", "Température de l'air"]
    assert calls == ["Ice thickness – Arctic"]  # LIKE found the others' ASCII "temp"
    rows = ds.query('SELECT ?t WHERE { ?d <http://x/title> ?t FILTER (!regex(?t, "temp", "i")) }')
    assert sorted(str(r[0]) for r in rows) == ["Ice thickness – Arctic", "Wind speed"]
    # Told apart by their bytes: a KELVIN SIGN (three bytes in UTF-8) goes to the function,
    # which folds it to k; a tab is ASCII, left to LIKE.
    g.add((URIRef("http://x/k"), URIRef("http://x/title"), Literal("\u212aelvin scale")))
    g.add((URIRef("http://x/t"), URIRef("http://x/title"), Literal("degrees\tKelvin")))
    store.commit()
    calls.clear()
    rows = ds.query('SELECT ?t WHERE { ?d <http://x/title> ?t FILTER regex(?t, "kelvin", "i") }')
    assert sorted(str(r[0]) for r in rows) == ["degrees\tKelvin", "\u212aelvin scale"]
    assert sorted(calls) == ["Ice thickness – Arctic", "Température de l'air", "\u212aelvin scale"]
    store.close()


@pytest.mark.postgres
def test_a_case_blind_word_on_postgresql_searches_ascii_text_without_the_regex(postgres_url):
    """PostgreSQL: ASCII text is searched for the lowercased word (exact there, whatever the
    database's locale); text with other characters keeps the case-blind regex, as before."""
    from rdflib import Dataset, Literal, URIRef

    from catalogue.graph.store import SQLStore

    store = SQLStore(postgres_url)
    try:
        ds = Dataset(store=store, default_union=True)
        g = ds.graph(URIRef("http://x/g"))
        titles = ["Sea surface TEMPERATURE", "Wind speed", "Température de l'air", "Air temPerature – höhe",
                  "degrees\tKelvin", "Tempera ture", "temperature"]
        for n, title in enumerate(titles):
            g.add((URIRef(f"http://x/d{n}"), URIRef("http://x/title"), Literal(title)))
        g.add((URIRef("http://x/n"), URIRef("http://x/title"), Literal("TEMPERATURE", lang="en")))
        g.add((URIRef("http://x/i"), URIRef("http://x/title"), Literal(7)))  # not a string: an error, no row
        store.commit()
        store.sql_log = log = []
        rows = ds.query('SELECT ?t WHERE { ?d <http://x/title> ?t FILTER regex(?t, "Temperature", "i") }')
        assert sorted(str(r[0]) for r in rows) == ["Air temPerature – höhe", "Sea surface TEMPERATURE", "TEMPERATURE",
                                                    "temperature"]
        statement = next(e.sql for e in log if e.sql)
        assert 'strpos(lower(' in statement and "~*" in statement
        rows = ds.query('SELECT ?t WHERE { ?d <http://x/title> ?t FILTER (!regex(?t, "temperature", "i")) }')
        assert sorted(str(r[0]) for r in rows) == ["Tempera ture", "Température de l'air", "Wind speed",
                                                    "degrees\tKelvin"]
        rows = ds.query('SELECT ?t WHERE { ?d <http://x/title> ?t FILTER regex(?t, "kelvin", "i") }')
        assert [str(r[0]) for r in rows] == ["degrees\tKelvin"]
    finally:
        store.sql_log = None
        store.close()
