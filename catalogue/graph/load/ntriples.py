"""A fast N-Triples / N-Quads parser that produces encoded terms, not rdflib objects.

Why not rdflib's parser: it builds three or four rdflib term objects per statement and
runs a handful of regular expressions over every line, which makes it the bottleneck
of a bulk load by an order of magnitude.  This parser instead

* splits canonical lines (``<s> <p> <o> <g> .``, single spaces, which is what every
  serializer writes) with two ``bytes.split`` calls and looks the raw tokens up in
  dictionaries, so a term that occurs a thousand times is decoded, validated and
  hashed once, and a statement costs four dictionary lookups;
* hands each *new* token to a strict validator (the N-Triples 1.1 grammar: IRIs with
  ``\\u``/``\\U`` escapes, blank node labels with the full ``PN_CHARS`` ranges, string
  escapes, language tags, datatypes), so the fast split can never accept something the
  grammar rejects: a token that does not validate sends its line to the slow path;
* parses every other line (comments, blank lines, tabs, missing spaces, CR line ends,
  triples inside N-Quads) with a regular expression of the full grammar, which also
  explains what is wrong with a bad line.

Terms are numbered with *local ids* (0, 1, 2, ... in order of first appearance) by a
:class:`TermTable`, which also merges tokens that spell the same term differently
(``<http://a/\\u0041>`` and ``<http://a/A>``, ``"x"@EN`` and ``"x"@en``) by their
content hash (:func:`.terms.term_hash`).  The bulk writer maps local ids to store ids
in batches (:mod:`.bulk`).

Blank node labels are scoped: ``_:b1`` becomes the blank node ``<prefix>b1`` where the
prefix names the document (see :func:`catalogue.graph.load.bulk.blank_node_prefix`), so
two documents never share blank nodes by accident, while loading the same document
again finds the same blank nodes (loads are idempotent).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from functools import cache
from hashlib import blake2b
from typing import IO, Final

from ..terms import BLANK, IRI, LITERAL, TermCollisionError, same_content, term_hash

__all__ = [
    "EncodedTerm",
    "NQuadsParser",
    "NTriplesSyntaxError",
    "Term",
    "TermTable",
    "iter_chunks",
    "parse_term",
]

#: ``(kind, value, datatype IRI, lang)``: a term's content.
Term = tuple[int, str, str | None, str | None]
#: ``(hash, kind, value, datatype IRI, lang)``, as :func:`.terms.encode` returns.
EncodedTerm = tuple[int, int, str, str | None, str | None]

#: Bytes read per chunk; a chunk is cut at its last line end.
CHUNK_SIZE: Final = 4 << 20

# ---------------------------------------------------------------- the grammar
#
# N-Triples 1.1 / N-Quads 1.1 (https://www.w3.org/TR/n-triples/#n-triples-grammar).
# These expressions work on decoded text, so the character ranges are the grammar's.

_UCHAR = r"\\u[0-9A-Fa-f]{4}|\\U[0-9A-Fa-f]{8}"
_ECHAR = r"\\[tbnrf\"'\\]"
_IRIREF = rf"<(?:[^\x00-\x20<>\"{{}}|^`\\]|{_UCHAR})*>"
_PN_CHARS_BASE = (
    "A-Za-z\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u02ff\u0370-\u037d\u037f-\u1fff"
    "\u200c-\u200d\u2070-\u218f\u2c00-\u2fef\u3001-\ud7ff\uf900-\ufdcf\ufdf0-\ufffd"
    "\U00010000-\U000effff"
)
_PN_CHARS_U = _PN_CHARS_BASE + "_:"
_PN_CHARS = _PN_CHARS_U + r"\-0-9\u00b7\u0300-\u036f\u203f-\u2040"
_BLANK = rf"_:[{_PN_CHARS_U}0-9](?:[{_PN_CHARS}.]*[{_PN_CHARS}])?"
_STRING = rf"\"(?:[^\"\\\n\r]|{_ECHAR}|{_UCHAR})*\""
_LANGTAG = r"@[a-zA-Z]+(?:-[a-zA-Z0-9]+)*"
_LITERAL = rf"{_STRING}(?:{_LANGTAG}|\^\^{_IRIREF})?"
_WS = r"[ \t]*"

_IRI_TOKEN: Final = re.compile(_IRIREF)
_BLANK_TOKEN: Final = re.compile(_BLANK)
_LITERAL_TOKEN: Final = re.compile(
    rf"\"((?:[^\"\\\n\r]|{_ECHAR}|{_UCHAR})*)\"(?:@([a-zA-Z]+(?:-[a-zA-Z0-9]+)*)|\^\^({_IRIREF}))?"
)
_SUBJECT = rf"{_IRIREF}|{_BLANK}"
_OBJECT = rf"{_IRIREF}|{_BLANK}|{_LITERAL}"


@cache
def _line_re(quads: bool) -> re.Pattern[str]:
    """The whole-line grammar (compiled on first use: the Unicode ranges of blank node
    labels take a noticeable fraction of a second to compile)."""
    graph = rf"(?:({_SUBJECT}){_WS})?" if quads else ""
    return re.compile(
        rf"{_WS}(?:({_SUBJECT}){_WS}({_IRIREF}){_WS}({_OBJECT}){_WS}{graph}\.{_WS})?(?:#.*)?"
    )


# Tokens that :meth:`NQuadsParser._simple` takes: ASCII blank node labels (the grammar
# restricted to ASCII) and IRIs with a scheme and without escapes (any UTF-8 allowed).
_SIMPLE_BLANK: Final = re.compile(rb"_:[A-Za-z0-9_:](?:[A-Za-z0-9_:.\-]*[A-Za-z0-9_:\-])?")
_SIMPLE_IRI: Final = re.compile(rb"<[A-Za-z][A-Za-z0-9+.\-]*:[^\x00-\x20<>\"{}|^`\\]*>")
_IRI_HASH_HEAD: Final = f"{IRI}|-1|-1|".encode()

# An absolute IRI starts with a scheme (RFC 3987); N-Triples allows no relative ones.
_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")
_ESCAPE: Final = re.compile(r"\\(?:([tbnrf\"'\\])|u([0-9A-Fa-f]{4})|U([0-9A-Fa-f]{8}))")
_ECHARS: Final = {
    "t": "\t",
    "b": "\b",
    "n": "\n",
    "r": "\r",
    "f": "\f",
    '"': '"',
    "'": "'",
    "\\": "\\",
}


class NTriplesSyntaxError(ValueError):
    """A line that is not N-Triples (or N-Quads); ``line`` counts from 1."""

    def __init__(self, line: int, reason: str) -> None:
        super().__init__(f"line {line}: {reason}")
        self.line = line
        self.reason = reason


class _TokenError(ValueError):
    """A token that does not validate (the caller decides whether that is final)."""


def _escape_char(match: re.Match[str]) -> str:
    echar, short, long = match.groups()
    if echar is not None:
        return _ECHARS[echar]
    code = int(short or long, 16)
    if code > 0x10FFFF:
        raise _TokenError(f"escape \\U{long} is beyond the last Unicode code point")
    return chr(code)


def _unescape(text: str) -> str:
    """Decode ``ECHAR``/``UCHAR`` escapes (the text already matched the grammar).

    A pair of ``\\u`` escapes of UTF-16 surrogates (as JSON writes them) is joined to
    the character it encodes; a lone surrogate cannot be stored as UTF-8 and is an
    error.  rdflib keeps surrogates as they are, but its output then cannot be
    written to either database.
    """
    if "\\" not in text:
        return text
    value = _ESCAPE.sub(_escape_char, text)
    if any("\ud800" <= ch <= "\udfff" for ch in value):
        try:
            value = value.encode("utf-16", "surrogatepass").decode("utf-16")
        except UnicodeDecodeError:
            raise _TokenError("escape of a lone UTF-16 surrogate") from None
    return value


def _iri_value(token: str) -> str:
    """Value of an ``<...>`` token that matched :data:`_IRI_TOKEN`."""
    value = _unescape(token[1:-1])
    if _SCHEME.match(value) is None:
        raise _TokenError(f"relative IRI {token} (N-Triples needs absolute IRIs)")
    return value


def parse_term(text: str, blank_prefix: str = "") -> Term:
    """Parse one N-Triples term (``<iri>``, ``_:label`` or a literal) to its content.

    Raises :class:`ValueError` if ``text`` is not exactly one valid term.
    """
    if text.startswith("<"):
        if _IRI_TOKEN.fullmatch(text) is None:
            raise _TokenError(f"invalid IRI {_snippet(text)}")
        return IRI, _iri_value(text), None, None
    if text.startswith("_"):
        if _BLANK_TOKEN.fullmatch(text) is None:
            raise _TokenError(f"invalid blank node label {_snippet(text)}")
        return BLANK, blank_prefix + text[2:], None, None
    match = _LITERAL_TOKEN.fullmatch(text)
    if match is None:
        raise _TokenError(f"invalid term {_snippet(text)}")
    lexical, lang, datatype = match.groups()
    value = _unescape(lexical)
    if datatype is not None:
        return LITERAL, value, _iri_value(datatype), None
    return LITERAL, value, None, lang


def _snippet(text: str, width: int = 40) -> str:
    return repr(text if len(text) <= width else text[:width] + "...")


class TermTable:
    """Numbers the distinct terms of one load with local ids, in order of appearance.

    Terms are identified by content hash, so differently spelled tokens of one term
    share an id; a different term with the same hash raises
    :class:`~catalogue.graph.terms.TermCollisionError` (the store could not keep both).
    New terms and quads accumulate until :meth:`take` hands them to the writer.
    """

    def __init__(self) -> None:
        #: hash -> (local id, content) of every term seen.
        self._by_hash: dict[int, tuple[int, Term]] = {}
        self.size = 0
        #: Terms first seen since the last :meth:`take`, in local id order.
        self.new_terms: list[EncodedTerm] = []
        #: Quads since the last :meth:`take`: local ids, flat, ``g, s, p, o`` each.
        self.quads: list[int] = []

    def intern(self, term: Term, term_h: int | None = None) -> int:
        """Local id of ``term`` (whose hash may be given), numbering it if it is new."""
        if term_h is None:
            term_h = term_hash(*term)
        found = self._by_hash.get(term_h)
        if found is not None:
            if not same_content(found[1], term):
                raise TermCollisionError(term_h, found[1], term)
            return found[0]
        local = self.size
        self.size = local + 1
        self._by_hash[term_h] = (local, term)
        self.new_terms.append((term_h, *term))
        return local

    def lookup(self, term: Term) -> int | None:
        """Local id of ``term`` if it was seen."""
        found = self._by_hash.get(term_hash(*term))
        return None if found is None or not same_content(found[1], term) else found[0]

    @property
    def pending_quads(self) -> int:
        return len(self.quads) >> 2

    def take(self) -> tuple[list[EncodedTerm], list[int]]:
        """The new terms and quads collected so far; the table starts a new batch."""
        new_terms, quads = self.new_terms, self.quads
        self.new_terms, self.quads = [], []
        return new_terms, quads


class _Tokens(dict[bytes, int]):
    """Raw token -> local id for one kind of position.  A token not seen yet is validated
    and registered by ``parse`` (through ``__missing__``), so the parser's hot loops do
    one dictionary lookup per token whether they find it or not."""

    __slots__ = ("parse",)

    def __init__(self, parse: Callable[[bytes], int]) -> None:
        super().__init__()
        self.parse = parse

    def __missing__(self, token: bytes) -> int:
        return self.parse(token)


class NQuadsParser:
    """Parses N-Triples (``quads=False``) or N-Quads into a :class:`TermTable`.

    Statements without a graph go to ``default_graph``.  Feed the text chunk by chunk
    (:meth:`parse_chunk`), each chunk a whole number of lines.
    """

    def __init__(
        self,
        table: TermTable,
        *,
        quads: bool,
        default_graph: Term,
        blank_prefix: str,
    ) -> None:
        self.table = table
        self.quads = quads
        self.blank_prefix = blank_prefix
        self.default_graph = table.intern(default_graph)
        # Raw token -> local id, one dictionary per kind of position, so that a token
        # found in one was validated for that position: IRIs and blank nodes
        # (subjects, graphs), IRIs (predicates), anything (objects).
        self._resources = _Tokens(self._resource)
        self._iris = _Tokens(self._iri)
        self._objects = _Tokens(self._object)
        self._blank_dicts = (self._resources, self._objects)
        self._iri_dicts = (self._resources, self._iris, self._objects)
        self._blank_hash_head = f"{BLANK}|-1|-1|{blank_prefix}".encode()
        self.statements = 0

    # ------------------------------------------------------------ new tokens

    def _register(self, token: bytes, term: Term, term_h: int | None = None) -> int:
        local = self.table.intern(term, term_h)
        kind = term[0]
        if kind != LITERAL:
            self._resources[token] = local
            if kind == IRI:
                self._iris[token] = local
        self._objects[token] = local
        return local

    def _simple(self, token: bytes) -> int | None:
        """Register an ASCII blank node or an IRI without escapes, the common cases,
        hashing the raw bytes (what :func:`.terms.term_hash` hashes for these terms)
        instead of building the hashed text; ``None`` for any other token."""
        if token[:2] == b"_:":
            label = token[2:]
            # Letters and digits only (bytes.isalnum is ASCII-only) always match the
            # label grammar; anything else is checked against it.
            if not label.isalnum() and _SIMPLE_BLANK.fullmatch(token) is None:
                return None
            term: Term = (BLANK, self.blank_prefix + label.decode("ascii"), None, None)
            hashed = self._blank_hash_head + label
            dicts = self._blank_dicts
        else:
            if _SIMPLE_IRI.fullmatch(token) is None:
                return None
            value = token[1:-1]
            term = (IRI, value.decode("utf-8"), None, None)
            hashed = _IRI_HASH_HEAD + value
            dicts = self._iri_dicts
        local = self.table.intern(
            term, int.from_bytes(blake2b(hashed, digest_size=8).digest(), "big", signed=True)
        )
        for tokens in dicts:
            tokens[token] = local
        return local

    def _resource(self, token: bytes) -> int:
        local = self._simple(token)
        if local is not None:
            return local
        text = token.decode("utf-8")
        if not text.startswith(("<", "_")):
            raise _TokenError(f"expected an IRI or blank node, found {_snippet(text)}")
        return self._register(token, parse_term(text, self.blank_prefix))

    def _iri(self, token: bytes) -> int:
        if token[:1] == b"<":
            local = self._simple(token)
            if local is not None:
                return local
        text = token.decode("utf-8")
        if not text.startswith("<"):
            raise _TokenError(f"expected an IRI, found {_snippet(text)}")
        return self._register(token, parse_term(text))

    def _object(self, token: bytes) -> int:
        if token[:1] != b'"':
            local = self._simple(token)
            if local is not None:
                return local
        return self._register(token, parse_term(token.decode("utf-8"), self.blank_prefix))

    # ---------------------------------------------------------------- lines

    def parse_chunk(self, chunk: bytes, first_line: int) -> int:
        """Parse the lines of ``chunk`` (line ``first_line`` first); return their count."""
        if b"\r" in chunk:
            chunk = chunk.replace(b"\r\n", b"\n")
        lines = chunk.split(b"\n")
        self._parse_lines(lines, first_line)
        return len(lines)

    def _parse_lines(self, lines: list[bytes], first_line: int) -> None:
        """The fast path: lines of single-space-separated tokens (what writers emit),
        each token looked up once; any other line goes to :meth:`_slow_line`."""
        resources, iris, objects = self._resources, self._iris, self._objects
        out = self.table.quads.extend
        default = self.default_graph
        # N-Triples: <s> <p> <o> . ; N-Quads: <s> <p> <o> <g> . (a graph-less line splits
        # ambiguously and takes the slow path).
        parts = 3 if self.quads else 2
        count = 0
        for i, line in enumerate(lines):
            try:
                s, p, rest = line.split(b" ", 2)
                *o_g, dot = rest.rsplit(b" ", parts - 1)
                if dot != b"." or len(o_g) != parts - 1:
                    raise _TokenError
                a = resources[s]
                b = iris[p]
                c = objects[o_g[0]]
                d = resources[o_g[1]] if parts == 3 else default
            except ValueError:
                count += self._slow_line(line, first_line + i)
                continue
            out((d, a, b, c))
            count += 1
        self.statements += count

    def _canonical_triple(self, line: bytes) -> bool:
        """Take ``<s> <p> <o> .`` (single spaces, no graph) in N-Quads, if it is one."""
        try:
            s, p, rest = line.split(b" ", 2)
            o, dot = rest.rsplit(b" ", 1)
            if dot != b".":
                return False
            a = self._resources[s]
            b = self._iris[p]
            c = self._objects[o]
        except ValueError:
            return False
        self.table.quads.extend((self.default_graph, a, b, c))
        return True

    def _slow_line(self, line: bytes, number: int) -> int:
        """Parse a line the fast split did not take; return its statement count (0/1).

        Also reached by canonical lines with a token not seen before that fails to
        validate, and by N-Quads triples (no graph), which split ambiguously: those
        are tried as canonical N-Triples lines first.
        """
        if self.quads and self._canonical_triple(line):
            return 1
        try:
            text = line.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise NTriplesSyntaxError(number, f"invalid UTF-8 at byte {exc.start + 1}") from None
        count = 0
        # A lone CR also ends a line (EOL ::= [#xD#xA]+); CRLF was normalised before.
        for part in text.split("\r"):
            match = _line_re(self.quads).fullmatch(part)
            if match is None:
                raise NTriplesSyntaxError(number, self._diagnose(part))
            if match.group(1) is None:
                continue  # blank line or comment
            try:
                s, p, o = (t.encode("utf-8") for t in match.group(1, 2, 3))
                a = self._resources[s]
                b = self._iris[p]
                c = self._objects[o]
                graph = match.group(4) if self.quads else None
                d = self.default_graph if graph is None else self._resources[graph.encode("utf-8")]
            except _TokenError as exc:
                raise NTriplesSyntaxError(number, str(exc)) from None
            self.table.quads.extend((d, a, b, c))
            count += 1
        return count

    def _diagnose(self, text: str) -> str:
        """Say what is wrong with a line that does not match the grammar."""
        pos = _skip_ws(text, 0)
        positions = ["subject", "predicate", "object"] + (["graph"] if self.quads else [])
        patterns = {
            "subject": (_SUBJECT, "an IRI or blank node"),
            "predicate": (_IRIREF, "an IRI"),
            "object": (_OBJECT, "an IRI, blank node or literal"),
            "graph": (_SUBJECT, "an IRI or blank node"),
        }
        for name in positions:
            if name == "graph" and text.startswith(".", pos):
                break
            pattern, expected = patterns[name]
            match = re.compile(pattern).match(text, pos)
            if match is None:
                return (
                    f"bad {name} at column {pos + 1}: expected {expected}, found "
                    + (_snippet(text[pos:]) if pos < len(text) else "end of line")
                    + _token_hint(text[pos:])
                )
            pos = _skip_ws(text, match.end())
        if not text.startswith(".", pos):
            found = _snippet(text[pos:]) if pos < len(text) else "end of line"
            return f"expected '.' at column {pos + 1}, found {found}"
        pos = _skip_ws(text, pos + 1)
        return f"unexpected text after '.' at column {pos + 1}: {_snippet(text[pos:])}"


def _skip_ws(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t":
        pos += 1
    return pos


def _token_hint(text: str) -> str:
    """A more precise reason for a term that starts right but does not parse."""
    if text.startswith('"'):
        if re.match(r"\"(?:[^\"\\\n\r]|\\.)*\"", text) is None:
            return " (unterminated string)"
        bad = re.search(r"\\(?![tbnrf\"'\\]|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8})", text)
        if bad is not None and text.find('"', 1) > bad.start():
            return f" (invalid escape {_snippet(text[bad.start() : bad.start() + 2])})"
    if text.startswith("<"):
        end = text.find(">")
        if end < 0:
            return " (unterminated IRI)"
        bad_chars = re.search(
            r"[\x00-\x20<\"{}|^`]|\\(?!u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8})", text[1:end]
        )
        if bad_chars is not None:
            return f" (character {bad_chars.group()!r} is not allowed in an IRI)"
    return ""


def iter_chunks(stream: IO[bytes], size: int = CHUNK_SIZE) -> Iterator[bytes]:
    """Yield the content of ``stream`` in chunks of whole lines (line ends removed
    from the chunk's end only), the last one possibly without a final line end."""
    rest = b""
    while True:
        block = stream.read(size)
        if not block:
            if rest:
                yield rest
            return
        cut = block.rfind(b"\n")
        if cut < 0:
            rest += block
            continue
        yield rest + block[:cut] if rest else block[:cut]
        rest = block[cut + 1 :]
