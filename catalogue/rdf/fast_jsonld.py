"""Compact catalogue JSON-LD → rdflib triples without pyld: the same triples, much faster.

Why: pyld's toRDF was about 60% of a harvest. It is a general JSON-LD processor:
it processes the context, expands every document, flattens it into a node map
(deep copies, sorting, keyword checks on every key) and only then writes triples.
The node objects :mod:`catalogue.rdf.convert` makes use a small, known part of
JSON-LD, so this module writes their triples directly, following pyld 3.3's
rules where they matter (native-type conversion of numbers, list chains, blank
node identity, dropped nulls, per-property de-duplication).

It must never guess. Whatever it does not reproduce exactly raises
:class:`Unsupported`, and the caller converts that batch with pyld instead:
an unknown key, a keyword other than ``@id``/``@type``/``@value``, a value shape
convert never makes (nested lists, nulls in lists, numbers in value objects, a
non-string where an IRI belongs), an IRI pyld would resolve against a base or
drop as relative, one node described by two node objects, and a context
construct outside the subset below. The term definitions are read from the
bundled context through the same loader pyld uses (``document_loader``), so a
changed term is followed and a new kind of definition is refused.

The context subset: ``@version`` 1.1 and terms without ``:`` or ``/``, each a
string or an object with ``@id``, ``@type`` (``@id``, ``@vocab`` or a datatype
IRI), ``@container`` (``@list`` or ``@index``) and ``@context`` (a property-scoped
context of string terms).
"""

from __future__ import annotations

import itertools
import re
import uuid
from dataclasses import dataclass, field
from typing import Any

from rdflib import BNode, Literal, URIRef
from rdflib.term import Node as RDFNode

from catalogue.rdf.contexts import CATALOGUE_CONTEXT_IRI, document_loader

Triple = tuple[RDFNode, RDFNode, RDFNode]

RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
XSD = "http://www.w3.org/2001/XMLSchema#"
XSD_STRING, XSD_BOOLEAN = XSD + "string", XSD + "boolean"
XSD_INTEGER, XSD_DOUBLE = XSD + "integer", XSD + "double"
RDF_TYPE, RDF_FIRST, RDF_REST, RDF_NIL = (URIRef(RDF + n) for n in ("type", "first", "rest", "nil"))

#: pyld's test of an absolute IRI (toRDF drops triples whose IRIs fail it; we refuse them instead).
_ABSOLUTE = re.compile(r"^([A-Za-z][A-Za-z0-9+-.]*|_):[^\s]*$")
#: pyld's test of a simple term's IRI that makes the term usable as a prefix (JSON-LD 1.1).
_PREFIX_IRI = re.compile(r".*[:/\?#\[\]@]$")
_TERM_KEYS = {"@id", "@type", "@container", "@context"}


class Unsupported(Exception):
    """A construct this module does not reproduce exactly: convert the batch with pyld."""


# ------------------------------------------------------------------ context
@dataclass(frozen=True)
class Term:
    """One term definition, expanded: what pyld's active context holds for it."""

    iri: str
    type: str | None = None  # "@id", "@vocab", a datatype IRI, or None
    container: str | None = None  # "@list", "@index" or None
    scoped: dict[str, Any] | None = None  # a property-scoped context, as written
    prefix: bool = False
    predicate: URIRef = field(init=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "predicate", URIRef(self.iri))


class Context:
    """Terms of an active context; property-scoped contexts are built on first use."""

    def __init__(self, terms: dict[str, Term]) -> None:
        self.terms = terms
        self._scoped: dict[str, Context] = {}
        self._keys: dict[str, Term] = {}

    @classmethod
    def parse(cls, local: dict[str, Any], parent: Context | None = None) -> Context:
        """The active context after processing ``local`` (a ``@context`` object) on ``parent``.

        Raises Unsupported for anything outside the subset in the module docstring.
        """
        if not isinstance(local, dict):
            raise Unsupported("context is not an object")
        inherited = parent.terms if parent is not None else {}
        terms: dict[str, Term] = {}
        defining: set[str] = set()

        def lookup(name: str) -> Term | None:
            if name in local and not name.startswith("@"):
                return define(name)
            return inherited.get(name)

        def expand(value: Any) -> str:  # an IRI in a term definition: vocab-relative
            if not isinstance(value, str) or value.startswith("@"):
                raise Unsupported(f"context IRI {value!r}")
            term = lookup(value)
            if term is not None:
                return term.iri
            prefix, colon, suffix = value.partition(":")
            if colon and prefix and prefix != "_":
                if suffix.startswith("//"):
                    return value
                term = lookup(prefix)
                if term is not None and term.prefix:
                    return term.iri + suffix
                if _ABSOLUTE.match(value):
                    return value
            raise Unsupported(f"context IRI {value!r} is neither a term, a compact IRI nor absolute")

        def define(name: str) -> Term:
            if name in terms:
                return terms[name]
            if name in defining or not name or name.startswith("@") or ":" in name or "/" in name:
                raise Unsupported(f"context term {name!r}")
            defining.add(name)
            value = local[name]
            simple = isinstance(value, str)
            definition = {"@id": value} if simple else value
            if not isinstance(definition, dict) or not set(definition) <= _TERM_KEYS or "@id" not in definition:
                raise Unsupported(f"context term {name!r}: {value!r}")
            iri = expand(definition["@id"])
            if definition["@id"] == name or iri.startswith("_:") or not _ABSOLUTE.match(iri):
                raise Unsupported(f"context term {name!r}: IRI {iri!r}")
            kind = definition.get("@type")
            if kind is not None and kind not in ("@id", "@vocab"):
                kind = expand(kind)  # "@json", "@none" and other keywords are refused here
                if kind.startswith("_:") or not _ABSOLUTE.match(kind):
                    raise Unsupported(f"context term {name!r}: type {kind!r}")
            container = definition.get("@container")
            if container not in (None, "@list", "@index"):
                raise Unsupported(f"context term {name!r}: container {container!r}")
            scoped = definition.get("@context")
            if scoped is not None and (not isinstance(scoped, dict) or name in scoped
                                       or not all(isinstance(v, str) for v in scoped.values())):
                raise Unsupported(f"context term {name!r}: scoped context {scoped!r}")
            terms[name] = Term(iri, kind, container, scoped, simple and bool(_PREFIX_IRI.match(iri)))
            return terms[name]

        for name, value in local.items():
            if name == "@version" and value == 1.1 and parent is None:
                continue
            define(name)  # keywords and keyword-like names are refused there
        return cls({**inherited, **terms})

    def scoped(self, name: str, term: Term) -> Context:
        """The context a term's value is read in (its property-scoped context applied)."""
        if term.scoped is None:
            return self
        ctx = self._scoped.get(name)
        if ctx is None:
            ctx = self._scoped[name] = Context.parse(term.scoped, self)
        return ctx

    def key(self, key: str) -> Term:
        """The definition of a node object's key: a term, or a compact/absolute IRI (no coercion)."""
        term = self.terms.get(key) or self._keys.get(key)
        if term is None:
            if ":" not in key or key.startswith("_:"):
                raise Unsupported(f"unknown key {key!r}")  # pyld would drop it silently
            term = self._keys[key] = Term(expand_iri(self, key, vocab=True))
        return term


_CATALOGUE: list[Context | Unsupported] = []


def catalogue_context() -> Context:
    """The bundled catalogue context, parsed once (a refusal is remembered and raised again)."""
    if not _CATALOGUE:
        try:
            document = document_loader(CATALOGUE_CONTEXT_IRI)["document"]
            _CATALOGUE.append(Context.parse(document["@context"]))
        except Unsupported as refusal:
            _CATALOGUE.append(refusal)
    found = _CATALOGUE[0]
    if isinstance(found, Unsupported):
        raise Unsupported(f"catalogue context: {found}")
    return found


def expand_iri(ctx: Context, value: Any, *, vocab: bool) -> str:
    """An IRI as pyld expands it, where that needs no base IRI and gives an absolute IRI."""
    if not isinstance(value, str) or value.startswith("@"):
        raise Unsupported(f"IRI {value!r}")
    term = ctx.terms.get(value) if vocab else None
    if term is not None:
        iri = term.iri
    else:
        prefix, colon, suffix = value.partition(":")
        if not colon or not prefix or prefix == "_":
            raise Unsupported(f"relative IRI or blank node {value!r}")
        if suffix.startswith("//"):
            iri = value
        else:
            term = ctx.terms.get(prefix)
            iri = term.iri + suffix if term is not None and term.prefix else value
    if not _ABSOLUTE.match(iri):
        raise Unsupported(f"IRI {iri!r} is not absolute for pyld")
    return iri


# ------------------------------------------------------------------ literals
def _canonical_double(value: int | float) -> str:
    """pyld's canonical xsd:double lexical form (``1.0E0``); OverflowError beyond a double."""
    return re.sub(r"(\d)0*E\+?(-)?0*(\d)", r"\1E\2\3", f"{value:1.15E}")


def lexical(value: Any, datatype: str | None) -> tuple[str, str]:
    """The lexical form and datatype pyld's toRDF writes for an expanded ``@value``/``@type``.

    pyld's order of tests, kept: booleans; non-integral floats (NaN and infinities
    included) as doubles; anything typed xsd:double through float(); integers (and
    integral floats, so ``1.0`` and ``-0.0`` read as integers) of 1e21 or more as doubles;
    other integers; strings.
    """
    if isinstance(value, bool):
        return ("true" if value else "false"), datatype or XSD_BOOLEAN
    if isinstance(value, str):
        if datatype == XSD_DOUBLE:
            try:
                number = float(value)
            except ValueError:
                return value, XSD_DOUBLE
            return _canonical_double(number), XSD_DOUBLE
        return value, datatype or XSD_STRING
    if isinstance(value, float) and not value.is_integer():
        return _canonical_double(value), datatype or XSD_DOUBLE
    if datatype == XSD_DOUBLE:
        return _canonical_double(float(value)), XSD_DOUBLE
    if abs(value) >= 1e21:
        return _canonical_double(value), datatype or XSD_DOUBLE
    return str(int(value)), datatype or XSD_INTEGER


# ------------------------------------------------------------------ conversion
class _Conversion:
    """One document's conversion: its triples, blank node labels and caches."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        # Fresh blank nodes: one random prefix per conversion and a counter, since a uuid4
        # per BNode() (rdflib's default) was a third of the conversion's time.
        prefix, counter = f"f{uuid.uuid4().hex}b", itertools.count()
        self.bnode = lambda: BNode(f"{prefix}{next(counter)}")
        self.triples: list[Triple] = []
        self.labels: dict[str, BNode] = {}
        self.described: set[str] = set()  # node ids given properties (pyld would merge a second)
        self.indexed: set[str] = set()  # node ids given an @index (pyld fails on a second)
        self.iris: dict[str, URIRef] = {}
        self.literals: dict[tuple[str, str], Literal] = {}
        # The same JSON values recur (shapes, chunk sizes, data types): their literal by
        # (type, value, datatype), before the lexical form is even worked out. The type
        # keeps True and 1, 1 and 1.0 apart.
        self.by_value: dict[tuple[type, Any, str | None], Literal] = {}

    def iri(self, iri: str) -> URIRef:
        term = self.iris.get(iri)
        if term is None:
            term = self.iris[iri] = URIRef(iri)
        return term

    def literal(self, value: Any, datatype: str | None) -> Literal:
        # float.hex keeps 0.0 and -0.0 apart (equal as numbers, not as xsd:double texts)
        seen = (value.__class__, value.hex() if value.__class__ is float else value, datatype)
        term = self.by_value.get(seen)
        if term is not None:
            return term
        term = self.by_value[seen] = self._literal(value, datatype)
        return term

    def _literal(self, value: Any, datatype: str | None) -> Literal:
        try:
            key = lexical(value, datatype)
        except OverflowError as exc:  # an integer beyond a double: pyld fails the same way, let it
            raise Unsupported(f"integer {value} too large for a double") from exc
        term = self.literals.get(key)
        if term is None:
            text, dt = key
            term = Literal(text, normalize=False) if dt == XSD_STRING else Literal(text, datatype=URIRef(dt), normalize=False)
            self.literals[key] = term
        return term

    def node(self, obj: dict[str, Any], ctx: Context) -> RDFNode:
        """A node object's triples; returns its subject (IRI, labelled or fresh blank node)."""
        if "@id" in obj:
            ident = obj["@id"]
            if isinstance(ident, str) and ident.startswith("_:"):
                subject: RDFNode = self.labels.get(ident) or self.labels.setdefault(ident, self.bnode())
            else:
                ident = expand_iri(ctx, ident, vocab=False)
                subject = self.iri(ident)
            if len(obj) > 1:
                if ident in self.described:
                    raise Unsupported(f"node {ident} described twice")
                self.described.add(ident)
        else:
            subject = self.bnode()
        seen: dict[object, set[RDFNode]] = {}
        for key, value in obj.items():
            if key == "@id":
                continue
            if key == "@type":
                for name in value if isinstance(value, list) else [value]:
                    type_term = ctx.terms.get(name) if isinstance(name, str) else None
                    if type_term is not None and type_term.scoped is not None:
                        raise Unsupported(f"type-scoped context of {name!r}")
                    self.add(subject, RDF_TYPE, self.iri(expand_iri(ctx, name, vocab=True)), seen, "@type")
                continue
            if key.startswith("@"):
                raise Unsupported(f"keyword {key!r} in a node object")
            term = ctx.key(key)
            if value is not None:
                self.property(subject, key, term, value, ctx, seen)
        return subject

    def add(self, s: RDFNode, p: URIRef, o: RDFNode, seen: dict[object, set[RDFNode]], key: object) -> None:
        """A triple, unless the node already has that value for the property (pyld's add_value)."""
        values = seen.get(key)
        if values is None:
            seen[key] = {o}
        elif o in values:
            return
        else:
            values.add(o)
        self.triples.append((s, p, o))

    def property(self, subject: RDFNode, name: str, term: Term, value: Any, ctx: Context,
                 seen: dict[object, set[RDFNode]]) -> None:
        inner = ctx.scoped(name, term)
        if term.container == "@list":
            if not isinstance(value, list):
                raise Unsupported(f"{name}: a list container holding {type(value).__name__}")
            self.triples.append((subject, term.predicate, self.list(value, term, inner)))
        elif term.container == "@index":
            if not isinstance(value, dict) or term.type != "@id":
                raise Unsupported(f"{name}: index container of this shape")
            for index, item in value.items():
                if index.startswith("@") or not isinstance(item, str):
                    raise Unsupported(f"{name}: index entry {index!r}")
                iri = expand_iri(inner, item, vocab=False)
                if iri in self.indexed:
                    raise Unsupported(f"{iri} indexed twice")
                self.indexed.add(iri)
                self.add(subject, term.predicate, self.iri(iri), seen, term.iri)
        else:
            for item in value if isinstance(value, list) else (value,):
                self.add(subject, term.predicate, self.value(item, term, inner), seen, term.iri)

    def list(self, items: list[Any], term: Term, ctx: Context) -> RDFNode:
        """An rdf:List of the items (rdf:nil when empty), fresh blank nodes as in pyld."""
        if not items:
            return RDF_NIL
        head = cell = self.bnode()
        last = len(items) - 1
        for i, item in enumerate(items):
            self.triples.append((cell, RDF_FIRST, self.value(item, term, ctx)))
            rest = self.bnode() if i < last else RDF_NIL
            self.triples.append((cell, RDF_REST, rest))
            cell = rest
        return head

    def value(self, item: Any, term: Term, ctx: Context) -> RDFNode:
        """One value of a term: coerced as the term says, or a value object, or a nested node."""
        kind = type(item)
        if kind is str or kind is bool or kind is int or kind is float:
            if term.type == "@id" or term.type == "@vocab":
                if kind is not str:
                    raise Unsupported(f"{item!r} where an IRI belongs")
                return self.iri(expand_iri(ctx, item, vocab=term.type == "@vocab"))
            return self.literal(item, term.type)
        if kind is dict:
            if "@value" not in item:
                return self.node(item, ctx)
            text, datatype = item["@value"], item.get("@type")
            if type(text) is not str or not set(item) <= {"@value", "@type"} or ("@type" in item and datatype is None):
                raise Unsupported(f"value object {item!r}")
            if datatype is not None:
                datatype = expand_iri(ctx, datatype, vocab=True)
                if datatype.startswith("_:"):
                    raise Unsupported(f"blank node datatype {datatype!r}")
            return self.literal(text, datatype)
        raise Unsupported(f"value {item!r}")  # None and lists inside lists or arrays


def node_triples(nodes: list[dict[str, Any]], context: Context | None = None) -> list[Triple]:
    """The triples of compact node objects, as ``{"@context": <catalogue>, "@graph": nodes}``
    converts with pyld: fresh blank nodes per call, labels shared within it."""
    ctx = context or catalogue_context()
    conversion = _Conversion(ctx)
    for obj in nodes:
        if not isinstance(obj, dict) or "@value" in obj or "@context" in obj:
            raise Unsupported("a top-level item that is not a node object")
        conversion.node(obj, ctx)
    return conversion.triples


def document_triples(document: dict[str, Any]) -> list[Triple]:
    """The triples of a JSON-LD document as pyld's toRDF gives them (rdflib terms).

    The document's ``@context`` is the catalogue context's IRI or an inline context
    (parsed here by the same rules); its body is ``@graph`` with node objects, or one
    node object.
    """
    if not isinstance(document, dict) or "@context" not in document:
        raise Unsupported("not a document with a @context")
    local = document["@context"]
    ctx = catalogue_context() if local == CATALOGUE_CONTEXT_IRI else Context.parse(local)
    body = {k: v for k, v in document.items() if k != "@context"}
    if "@graph" in body:
        if set(body) != {"@graph"} or not isinstance(body["@graph"], list):
            raise Unsupported("a @graph beside other keys")
        return node_triples(body["@graph"], ctx)
    return node_triples([body], ctx)
