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
