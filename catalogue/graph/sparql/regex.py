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

``REPLACE`` follows XPath's ``fn:replace`` here, in both places: ``$N`` group
references with XPath's digit rule, ``\\$`` and ``\\\\`` escapes, the ``q`` flag's literal
replacement, and errors (FORX0003, FORX0004) for a pattern that matches the empty
string and for a malformed replacement. rdflib's own version rewrites ``$N`` as
Python's ``\\N`` and lets Python decide the rest; :class:`_RE2Module` receives that
rewrite and hands the replacement back unchanged, so rdflib's ``REPLACE`` computes
what the compiled SQL does.
"""

from __future__ import annotations

import re
import re._constants as sre_constants
import re._parser as sre_parser
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import re2
from rdflib.plugins.sparql.sparql import SPARQLError

#: A conservative subset of XPath regular expressions that means the same in
#: PostgreSQL's ARE flavour (the compiler sends these to PostgreSQL's own operators).
_PG_SAFE = re.compile(
    r"(?:[A-Za-z0-9 _\-:,;'\"/@#&=<>~`!%]|\\[.\\dDwWsS\-*+?()\[\]{}|^$]"
    r"|[.^$*+?()|]|\[\^?[A-Za-z0-9 _\-]+\]|\{\d+(?:,\d*)?\})*"
)
#: Patterns that are plain text: with no regex metacharacters they can run as substring
#: searches and replacements, which every database does fast and exactly (characters
#: beyond ASCII are never metacharacters).
PLAIN = re.compile(r"[A-Za-z0-9 _\-:,;'\"/@#&=<>~`!\u0080-\U0010ffff]*")

_FLAG_LETTERS = {re.IGNORECASE: "i", re.DOTALL: "s", re.MULTILINE: "m"}
_UNSUPPORTED = {sre_constants.GROUPREF, sre_constants.GROUPREF_EXISTS, sre_constants.ASSERT,
                sre_constants.ASSERT_NOT}


def _tokens(pattern: str) -> Iterator[tuple[str, bool]]:
    """A pattern's characters and two-character escapes, each with whether it lies
    inside a character class (the class's own brackets count as outside; a ``]`` right
    after ``[`` or ``[^`` is a member)."""
    i, n, in_class, first = 0, len(pattern), False, False
    while i < n:
        if pattern[i] == "\\" and i + 1 < n:
            yield pattern[i : i + 2], in_class
            i, first = i + 2, False
            continue
        char = pattern[i]
        if in_class and char == "]" and not first:
            in_class = False
            yield char, False
        elif in_class:
            first = first and char == "^"
            yield char, True
        else:
            if char == "[":
                in_class, first = True, True
            yield char, False
        i += 1


def _strip_whitespace(pattern: str) -> str:
    """XPath's ``x`` flag: whitespace outside character classes is not part of the pattern."""
    return "".join(token for token, inside in _tokens(pattern) if inside or token not in " \t\n\r")


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
    pattern = xpath_to_re2(pattern, dotall="s" in flags)
    inline = "".join(sorted({f for f in flags if f in "ism"}))
    try:
        return re2.compile(f"(?{inline}){pattern}" if inline else pattern)
    except Exception as exc:  # re2 raises its own error type
        raise re.error(str(exc)) from None


# XPath's character class escapes (XSD's regular expressions), for RE2, whose own are
# ASCII (\w) or include more (\s: the form feed; ".": the carriage return).
_CLASSES_OUTSIDE = {"w": r"[\p{L}\p{M}\p{N}\p{S}]", "W": r"[\p{P}\p{Z}\p{C}]", "d": r"\p{Nd}",
                    "D": r"\P{Nd}", "s": "[ \\t\\n\\r]", "S": "[^ \\t\\n\\r]"}
_CLASSES_INSIDE = {"w": r"\p{L}\p{M}\p{N}\p{S}", "W": r"\p{P}\p{Z}\p{C}", "d": r"\p{Nd}", "D": r"\P{Nd}",
                   "s": " \\t\\n\\r"}
_NOT_A_LINE_END = "[^\\n\\r]"


def xpath_to_re2(pattern: str, *, dotall: bool) -> str:
    """An XPath pattern in RE2's syntax with XPath's meaning: ``.`` matches neither a
    line feed nor a carriage return (unless ``dotall``, the ``s`` flag), ``\\w`` is every
    character but punctuation, separators and others (``\\p{P}``, ``\\p{Z}``, ``\\p{C}``),
    ``\\d`` every decimal digit (``\\p{Nd}``), ``\\s`` space, tab, line feed and carriage
    return only."""
    out: list[str] = []
    for token, inside in _tokens(pattern):
        if len(token) == 2:
            out.append((_CLASSES_INSIDE if inside else _CLASSES_OUTSIDE).get(token[1], token))
        elif token == "." and not inside and not dotall:
            out.append(_NOT_A_LINE_END)
        else:
            out.append(token)
    return "".join(out)


_REPEAT = re.compile(r"\{(\d+)(?:,(\d*))?\}")
#: PostgreSQL refuses repetition counts above 255 ("invalid repetition count(s)").
_PG_MAX_REPEAT = 255


def pg_pattern(pattern: str, flags: str) -> str | None:
    """The pattern in PostgreSQL's ARE syntax with XPath's meaning, for the flags ``i``,
    ``q`` and ``x``, or None where the two could differ (the ``s`` and ``m`` flags, and
    ``\\w``, ``\\d`` and their complements, which PostgreSQL reads by its locale): those
    stay with RE2 (rdflib's evaluator through :data:`RE2_MODULE`)."""
    if set(flags) - set("iqx"):
        return None
    if "q" in flags:  # text: every ASCII punctuation escaped (a backslash before one is literal)
        return "".join(f"\\{c}" if c.isascii() and not c.isalnum() and c != " " else c for c in pattern)
    if "x" in flags:
        pattern = _strip_whitespace(pattern)
    if not _PG_SAFE.fullmatch(pattern):
        return None
    for low, high in _REPEAT.findall(pattern):
        if int(low) > _PG_MAX_REPEAT or (high and int(high) > _PG_MAX_REPEAT):
            return None
    out: list[str] = []
    for token, inside in _tokens(pattern):
        if len(token) == 2 and token[1] in "wWdD":
            return None
        if len(token) == 2:
            out.append({"s": "[ \t\n\r]", "S": "[^ \t\n\r]"}.get(token[1], token))
        elif token == "." and not inside:
            out.append("[^\n\r]")
        else:
            out.append(token)
    return "".join(out)


#: One part of a replacement: text to insert, or the number of a group whose match is inserted.
Template = tuple[str | int, ...]


def replacement_template(replacement: str, groups: int) -> Template:
    """XPath's ``fn:replace`` replacement string as literal text and group numbers.

    ``\\\\`` is a backslash and ``\\$`` a dollar sign; ``$`` and the digits after it name a
    group, and where that number exceeds the groups and 9 the last digit is literal
    text, as often as needed. ``re.error`` (FORX0004) for any other ``\\`` or ``$``.
    """
    parts: list[str | int] = []
    text: list[str] = []
    i, n = 0, len(replacement)
    while i < n:
        char = replacement[i]
        if char == "\\":
            if i + 1 < n and replacement[i + 1] in "\\$":
                text.append(replacement[i + 1])
                i += 2
                continue
            raise re.error(f"a backslash not before \\ or $ in the replacement {replacement!r}")
        if char == "$":
            j = i + 1
            while j < n and replacement[j].isascii() and replacement[j].isdigit():
                j += 1
            if j == i + 1:
                raise re.error(f"a $ not before a digit in the replacement {replacement!r}")
            digits = replacement[i + 1 : j]
            while len(digits) > 1 and int(digits) > max(groups, 9):
                digits = digits[:-1]
            if text:
                parts.append("".join(text))
                text = []
            parts.append(int(digits))
            i += 1 + len(digits)
            continue
        text.append(char)
        i += 1
    if text:
        parts.append("".join(text))
    return tuple(parts)


@lru_cache(maxsize=256)
def compile_replace(pattern: str, replacement: str, flags: str = "") -> tuple[Any, Template]:
    """The RE2 program and replacement template of a SPARQL ``REPLACE``; ``re.error`` for
    an unusable pattern or replacement and for a pattern that matches the empty string."""
    if "q" in flags:
        pattern, template = re.escape(pattern), (replacement,) if replacement else ()
        flags = flags.replace("q", "")
        rx = compile_pattern(pattern, flags)
    else:
        rx = compile_pattern(pattern, flags)
        template = replacement_template(replacement, rx.groups)
    if rx.search(""):
        raise re.error(f"the pattern {pattern!r} matches the empty string")
    return rx, template


def xpath_replace(text: str, pattern: str, replacement: str, flags: str = "") -> str:
    """XPath's ``fn:replace``: every non-overlapping match of ``pattern`` in ``text``
    replaced (groups that took no part in a match, or beyond the pattern's, insert nothing)."""
    rx, template = compile_replace(pattern, replacement, flags)
    groups = rx.groups

    def expand(match: Any) -> str:
        return "".join(
            part if isinstance(part, str) else (match.group(part) or "") if part <= groups else ""
            for part in template
        )

    return rx.sub(expand, text)


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
        try:
            return compile_pattern(str(pattern), _letters(flags)).search(str(text))
        except re.error as exc:  # an error in SPARQL (the FILTER is false), not a failed query
            raise SPARQLError(f"REGEX: {exc}") from None

    @staticmethod
    def sub(pattern: str, replacement: str, text: str, flags: int = 0) -> str:
        if pattern == _RDFLIB_DOLLAR_REWRITE[0] and replacement == _RDFLIB_DOLLAR_REWRITE[1]:
            return str(text)  # rdflib rewriting $N as \\N: the replacement stays XPath's
        try:
            # plain str: RE2 builds its result with type(text)(), which rdflib's Literal cannot do
            return xpath_replace(str(text), str(pattern), str(replacement), _letters(flags))
        except re.error as exc:
            raise SPARQLError(f"REPLACE: {exc}") from None


#: The call rdflib's ``Builtin_REPLACE`` makes first, to turn ``$N`` into Python's ``\\N``.
_RDFLIB_DOLLAR_REWRITE = ("\\$([0-9]*)", r"\\\1")


RE2_MODULE = _RE2Module()
