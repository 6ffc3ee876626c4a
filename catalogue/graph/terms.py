"""Dictionary encoding of RDF terms.

Every RDF term is stored once in the ``terms`` table and referenced from ``quads`` by a
64-bit integer id.  The id is a hash of the term's content, computed in Python, so a
bulk load never has to ask the database which id a term got: the same term always gets
the same id, in every process and on every database.  The price is the (tiny) risk of a
hash collision, which the store detects when it writes terms (see
:class:`TermCollisionError`).

The stored ``value`` is the exact lexical form.  Nothing is normalised, because the
catalogue must give back what the harvested metadata said: ``"1.0"^^xsd:double`` stays
``"1.0"``, ``"01"^^xsd:integer`` stays ``"01"``, and an ``rdf:JSON`` document keeps its
spacing and key order.

Language tags are the one exception in what the *id* covers: RDF (and rdflib's
``Literal.__eq__``) compares language tags case-insensitively, so the id is computed
from the lower-cased tag.  ``"chat"@EN`` and ``"chat"@en`` are therefore the same term
and the tag is stored as it was first written.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from typing import Final

from rdflib.term import BNode, Literal, Node, URIRef

__all__ = [
    "BLANK",
    "IRI",
    "LITERAL",
    "EncodedTerm",
    "TermCollisionError",
    "decode",
    "encode",
    "term_id",
]

IRI: Final = 1
BLANK: Final = 2
LITERAL: Final = 3

#: ``(id, kind, value, datatype, lang)`` as stored in the ``terms`` table.
EncodedTerm = tuple[int, int, str, str | None, str | None]

# Values longer than this are decoded without the cache: caching them would pin
# megabytes of text in memory for terms that are rarely read twice in a row.
_CACHE_MAX_VALUE_LENGTH: Final = 2048


class TermCollisionError(RuntimeError):
    """Two different terms hashed to the same 64-bit id.

    This is very unlikely (about 3 in a million for ten million distinct terms),
    but silently merging two terms would corrupt data, so the store checks and refuses.
    """

    def __init__(self, term_id: int, stored: tuple, new: tuple) -> None:
        super().__init__(
            f"term id collision for id {term_id}: stored term {stored!r} and new term "
            f"{new!r} hash to the same 64-bit id; the data cannot be stored with this "
            "id scheme"
        )
        self.term_id = term_id
        self.stored = stored
        self.new = new


def term_id(kind: int, value: str, datatype: str | None, lang: str | None) -> int:
    """Return the signed 64-bit id of a term from its parts.

    The hashed text is ``kind|len:datatype|len:lang|value``, with ``-1`` standing for
    a missing datatype or tag.  The length prefixes make the encoding unambiguous
    whatever characters the parts contain, and keep "no datatype" distinct from an
    empty datatype IRI.  ``surrogatepass`` lets lone surrogates (which can come out of
    JSON) be hashed instead of crashing the encoder.
    """
    dt_part = "-1" if datatype is None else f"{len(datatype)}:{datatype}"
    if lang is None:
        lang_part = "-1"
    else:
        lang = lang.lower()
        lang_part = f"{len(lang)}:{lang}"
    text = f"{kind}|{dt_part}|{lang_part}|{value}"
    digest = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest()
    return int.from_bytes(digest, "big", signed=True)


def encode(term: Node) -> EncodedTerm:
    """Encode an rdflib term as ``(id, kind, value, datatype, lang)``.

    Raises :class:`TypeError` for anything that is not an IRI, blank node or literal
    (variables, quoted graphs, paths), which cannot be stored.
    """
    # URIRef first: it is by far the most common term type.
    if isinstance(term, URIRef):
        value = str(term)
        return term_id(IRI, value, None, None), IRI, value, None, None
    if isinstance(term, Literal):
        value = str(term)
        dt = term.datatype
        datatype = None if dt is None else str(dt)
        lang = term.language
        return term_id(LITERAL, value, datatype, lang), LITERAL, value, datatype, lang
    if isinstance(term, BNode):
        value = str(term)
        return term_id(BLANK, value, None, None), BLANK, value, None, None
    raise TypeError(f"cannot store {type(term).__name__} {term!r} as an RDF term")


def decode(kind: int, value: str, datatype: str | None, lang: str | None) -> Node:
    """Rebuild the rdflib term for a ``terms`` row.

    Literals are built with ``normalize=False`` so the lexical form comes back exactly
    as it was stored; a literal with neither datatype nor language stays a plain
    literal (rdflib distinguishes it from ``xsd:string``).
    """
    if len(value) > _CACHE_MAX_VALUE_LENGTH:
        return _decode(kind, value, datatype, lang)
    return _decode_cached(kind, value, datatype, lang)


def _decode(kind: int, value: str, datatype: str | None, lang: str | None) -> Node:
    if kind == IRI:
        return URIRef(value)
    if kind == LITERAL:
        return Literal(
            value,
            datatype=None if datatype is None else URIRef(datatype),
            lang=lang,
            normalize=False,
        )
    if kind == BLANK:
        return BNode(value)
    raise ValueError(f"unknown term kind {kind!r}")


# Terms are immutable and rdflib treats equal terms as interchangeable, so sharing one
# instance between results is safe and saves re-parsing literal values.
_decode_cached = lru_cache(maxsize=65536)(_decode)
