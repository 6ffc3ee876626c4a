"""SPARQL ``REGEX`` and ``REPLACE`` in linear time, with RE2.

Python's ``re`` backtracks: ``^(a+)+$`` on a long non-matching string, or
even ``.*.*x`` searched through a 4 MB attributes literal, runs for hours,
in C code that holds the GIL, so no deadline can stop it and a public SPARQL
endpoint could be frozen by one request. RE2 (google-re2) matches in time
linear in the text. Both places where the catalogue evaluates SPARQL
regular expressions use it: the SQLite function the SQL compiler registers
(``sparql_regex``) and rdflib's own ``REGEX``/``REPLACE`` (used for
whatever the compiler leaves to rdflib), which :func:`.hooks.install` points at
:data:`RE2_MODULE`, a stand-in for the ``re`` module with the three calls
rdflib makes. PostgreSQL evaluates compiled regexes itself, under
``statement_timeout``.

What RE2 cannot do, and XPath regexes rarely need: backreferences and
lookaround. Such patterns are errors here, as an invalid pattern is in SPARQL
(the FILTER is false, the BIND unbound). They are detected with Python's own
pattern parser before RE2 sees them, which also keeps RE2's C++ error log
off stderr. The ``x`` flag (XPath: ignore whitespace in the pattern) is
applied by removing whitespace outside character classes, since RE2 has no
verbose mode.
"""

from __future__ import annotations

import re
import re._constants as sre_constants
import re._parser as sre_parser
from functools import lru_cache
from typing import Any

import re2

_FLAG_LETTERS = {re.IGNORECASE: "i", re.DOTALL: "s", re.MULTILINE: "m"}
_UNSUPPORTED = {sre_constants.GROUPREF, sre_constants.GROUPREF_EXISTS, sre_constants.ASSERT,
                sre_constants.ASSERT_NOT}


def _strip_whitespace(pattern: str) -> str:
    """XPath's ``x`` flag: whitespace outside character classes is not part of the pattern."""
    out, in_class, escaped = [], False, False
    for char in pattern:
        if escaped:
            out.append(char)
            escaped = False
        elif char == "\\":
            out.append(char)
            escaped = True
        elif char == "[":
            in_class = True
            out.append(char)
        elif char == "]":
            in_class = False
            out.append(char)
        elif in_class or char not in " \t\n\r":
            out.append(char)
    return "".join(out)


def _check_supported(pattern: str) -> None:
    """Raise ``re.error`` for invalid patterns and for constructs RE2 does not have."""
    stack = [sre_parser.parse(pattern)]
    while stack:
        for op, av in stack.pop():
            if op in _UNSUPPORTED:
                raise re.error("backreferences and lookaround are not supported (linear-time matching)")
            for value in av if isinstance(av, tuple | list) else (av,):
                if isinstance(value, sre_parser.SubPattern):
                    stack.append(value)
                elif isinstance(value, list):
                    stack.extend(v for v in value if isinstance(v, sre_parser.SubPattern))


@lru_cache(maxsize=256)
def compile_pattern(pattern: str, flags: str = "") -> Any:
    """The RE2 program for a SPARQL pattern and flag letters (``i s m x``); ``re.error`` if unusable."""
    if "x" in flags:
        pattern = _strip_whitespace(pattern)
    try:
        _check_supported(pattern)
    except (RecursionError, OverflowError) as exc:
        raise re.error(f"pattern too complex: {exc}") from None
    inline = "".join(sorted({f for f in flags if f in "ism"}))
    try:
        return re2.compile(f"(?{inline}){pattern}" if inline else pattern)
    except Exception as exc:  # re2 raises its own error type
        raise re.error(str(exc)) from None


def _letters(flags: int) -> str:
    return "".join(letter for flag, letter in _FLAG_LETTERS.items() if flags & flag)


class _RE2Module:
    """What rdflib's SPARQL operators use of ``re``, answered by RE2."""

    IGNORECASE = re.IGNORECASE
    DOTALL = re.DOTALL
    MULTILINE = re.MULTILINE
    error = re.error

    @staticmethod
    def search(pattern: str, text: str, flags: int = 0) -> Any:
        return compile_pattern(str(pattern), _letters(flags)).search(str(text))

    @staticmethod
    def sub(pattern: str, replacement: str, text: str, flags: int = 0) -> str:
        # plain str: RE2 builds its result with type(text)(), which rdflib's Literal cannot do
        return compile_pattern(str(pattern), _letters(flags)).sub(str(replacement), str(text))


RE2_MODULE = _RE2Module()
