"""The one table of RDF and SPARQL-result formats: names, media types, extensions.

Every reader and writer of the catalogue (``catalogue load``, ``catalogue export``,
``catalogue query``, the web's export, node, DCAT and SPARQL routes) looks formats up
here, so that ``--format ttl`` and ``?format=ttl`` and ``Accept: text/turtle`` mean the
same thing everywhere.  An endpoint chooses *which* formats it offers (a SPARQL
endpoint offers result formats for SELECT and graph formats for CONSTRUCT); it does not
keep a table of its own.

Names follow rdflib's plugin names (``turtle``, ``nt``, ``nquads``, ``trig``,
``json-ld``, ``xml``), because that is what ``Graph.parse``/``serialize`` take; the
aliases are the spellings users and clients (SPARQLWrapper, Fuseki, Virtuoso) send.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Final, TypeVar

from catalogue.errors import UsageError

__all__ = [
    "RDF_FORMATS",
    "RESULT_FORMATS",
    "RDFFormat",
    "ResultFormat",
    "parse_rdf_format",
    "parse_result_format",
    "rdf_format_for_extension",
    "rdf_format_for_media_type",
    "result_format_for_media_type",
]


@dataclass(frozen=True, slots=True)
class Format:
    """One serialisation: the names it is asked for by and the media types it travels as."""

    #: The canonical name: rdflib's plugin name for ``Graph.parse(format=)`` and
    #: ``serialize(format=)``, or its result serialiser's (``json``, ``xml``, ``csv``,
    #: ``tsv``; ``table`` for terminals).
    name: str
    #: The registered media type (the one answers carry).
    media_type: str
    #: File extension without the dot (download names, ``load`` format guessing).
    extension: str
    #: Other names accepted for ``--format`` / ``?format=``.
    aliases: tuple[str, ...] = ()
    #: Other media types that clients send for this format.
    media_aliases: tuple[str, ...] = ()
    #: Other file extensions files of this format have (``.json`` for JSON-LD).
    suffixes: tuple[str, ...] = field(default=(), kw_only=True)

    @property
    def names(self) -> tuple[str, ...]:
        return (self.name, *self.aliases)

    @property
    def media_types(self) -> tuple[str, ...]:
        return (self.media_type, *self.media_aliases)


@dataclass(frozen=True, slots=True)
class RDFFormat(Format):
    """One RDF serialisation."""

    #: Whether the format carries graph names (N-Quads, TriG, JSON-LD).
    quads: bool = field(default=False, kw_only=True)


@dataclass(frozen=True, slots=True)
class ResultFormat(Format):
    """One serialisation of SELECT/ASK results."""


TURTLE: Final = RDFFormat(
    "turtle", "text/turtle", "ttl", ("ttl",), ("application/x-turtle", "application/turtle")
)
NTRIPLES: Final = RDFFormat("nt", "application/n-triples", "nt", ("ntriples", "n-triples", "nt11"))
NQUADS: Final = RDFFormat("nquads", "application/n-quads", "nq", ("nq", "n-quads"), quads=True)
TRIG: Final = RDFFormat("trig", "application/trig", "trig", quads=True)
JSONLD: Final = RDFFormat("json-ld", "application/ld+json", "jsonld", ("jsonld",), quads=True, suffixes=("json",))
RDFXML: Final = RDFFormat(
    "xml", "application/rdf+xml", "rdf", ("rdf", "rdf/xml", "rdf+xml", "rdfxml", "owl"), ("application/xml",),
    suffixes=("xml", "owl"),
)
#: Notation 3, read by ``catalogue load`` (rdflib's parser); no endpoint offers it.
N3: Final = RDFFormat("n3", "text/n3", "n3")

#: Every RDF format, in the order servers prefer them when a client accepts several.
RDF_FORMATS: Final[tuple[RDFFormat, ...]] = (TURTLE, NTRIPLES, NQUADS, TRIG, JSONLD, RDFXML, N3)

SPARQL_JSON: Final = ResultFormat("json", "application/sparql-results+json", "srj", (), ("application/json",))
SPARQL_XML: Final = ResultFormat(
    "xml", "application/sparql-results+xml", "srx", (), ("application/xml", "text/xml")
)
CSV: Final = ResultFormat("csv", "text/csv", "csv")
TSV: Final = ResultFormat("tsv", "text/tab-separated-values", "tsv")
#: An aligned text table for terminals (``catalogue query``); no media type of its own.
TABLE: Final = ResultFormat("table", "text/plain", "txt")

#: Result formats, in the order servers prefer them.
RESULT_FORMATS: Final[tuple[ResultFormat, ...]] = (SPARQL_JSON, SPARQL_XML, CSV, TSV, TABLE)


_F = TypeVar("_F", bound=Format)


def _lookup(value: str, formats: Iterable[_F], what: str, offered: Iterable[_F] | None) -> _F:
    key = value.strip().lower()
    choices = tuple(offered if offered is not None else formats)
    for fmt in choices:
        if key in fmt.names:
            return fmt
    names = ", ".join(sorted(fmt.name for fmt in choices))
    raise UsageError(f"unknown {what} {value!r}; choose from {names}")


def parse_rdf_format(
    value: str, offered: Iterable[RDFFormat] | None = None, *, what: str = "format"
) -> RDFFormat:
    """The RDF format named ``value`` (any alias, any case); ``UsageError`` naming it if none.

    ``offered`` narrows the choice to what a caller supports (a streamed export offers
    no RDF/XML); ``what`` names the choice in the message (``export format``).
    """
    return _lookup(value, RDF_FORMATS, what, offered)


def parse_result_format(
    value: str, offered: Iterable[ResultFormat] | None = None, *, what: str = "result format"
) -> ResultFormat:
    """The SPARQL result format named ``value``; ``UsageError`` naming it if none."""
    return _lookup(value, RESULT_FORMATS, what, offered)


def rdf_format_for_extension(extension: str) -> RDFFormat | None:
    """The RDF format a file extension (``ttl``, ``.json``; any case) stands for, or ``None``."""
    key = extension.lower().removeprefix(".")
    return next((fmt for fmt in RDF_FORMATS if key == fmt.extension or key in fmt.suffixes), None)


def rdf_format_for_media_type(media_type: str) -> RDFFormat | None:
    """The RDF format a media type (parameters ignored) stands for, or ``None``."""
    key = media_type.split(";", 1)[0].strip().lower()
    return next((fmt for fmt in RDF_FORMATS if key in fmt.media_types), None)


def result_format_for_media_type(media_type: str) -> ResultFormat | None:
    """The result format a media type stands for, or ``None``."""
    key = media_type.split(";", 1)[0].strip().lower()
    return next((fmt for fmt in RESULT_FORMATS if key in fmt.media_types), None)
