"""The SPARQL 1.1 Protocol's requests: parameters, bodies, the operation, its limits.

A request is parsed here into one :class:`Operation` (a query or an update, its
dataset and its ``format=``), with every HTTP 400/413/415 the Protocol's request
rules call for; nothing here touches the database.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, Literal

from fastapi import Request

from ..http.errors import HTTPError
from ..http.params import checked_iri
from ..settings import Settings

if TYPE_CHECKING:
    from catalogue.graph.sparql.dataset import RDFDataset

__all__ = [
    "FORM_TYPE",
    "MAX_NESTING",
    "QUERY_TYPE",
    "UPDATE_TYPE",
    "Operation",
    "body_text",
    "check_text",
    "content_media_type",
    "nesting_depth",
    "operation",
    "single",
]

#: Brackets a query may nest: rdflib's recursive-descent parser gives up far
#: earlier (about 20 parentheses), this only spares it hostile depths.
MAX_NESTING: Final = 64

FORM_TYPE: Final = "application/x-www-form-urlencoded"
QUERY_TYPE: Final = "application/sparql-query"
UPDATE_TYPE: Final = "application/sparql-update"
OPERATION_PARAMS: Final = ("query", "update")
_UPDATE_DATASET_PARAMS = ("using-graph-uri", "using-named-graph-uri")
_GRAPH_PARAMS = ("default-graph-uri", "named-graph-uri")


@dataclass(frozen=True)
class Operation:
    """One protocol request: a query or an update and its parameters."""

    kind: Literal["query", "update"]
    text: str
    default_graphs: tuple[str, ...] = ()
    named_graphs: tuple[str, ...] = ()
    formats: tuple[str, ...] = ()

    @property
    def dataset(self) -> RDFDataset:
        """The RDF dataset ``default-graph-uri``/``named-graph-uri`` name (empty: none)."""
        # rdflib's SPARQL engine is loaded by the first query (under a lock), not at start
        from catalogue.graph.store import install_sparql

        install_sparql()
        from catalogue.graph.sparql.dataset import RDFDataset

        return RDFDataset(self.default_graphs, self.named_graphs)


def _graph_iris(params: list[tuple[str, str]], name: str) -> tuple[str, ...]:
    """The distinct values of parameter ``name``, each checked as the node endpoint checks
    an IRI (:func:`catalogue.web.http.params.checked_iri`): HTTP 400 naming the parameter if not."""
    iris = [value for key, value in params if key == name]
    for iri in iris:
        checked_iri(iri, name)
    return tuple(dict.fromkeys(iris))


def operation(kind: Literal["query", "update"], text: str, params: list[tuple[str, str]]) -> Operation:
    """The operation of a request, its dataset and format parameters checked."""
    if kind == "update":
        for name in (*_UPDATE_DATASET_PARAMS, *_GRAPH_PARAMS):
            if any(key == name for key, _ in params):
                raise HTTPError(400, f"{name} is not supported with SPARQL Update; use GRAPH or WITH in the update")
        return Operation("update", text)
    for name in _UPDATE_DATASET_PARAMS:
        if any(key == name for key, _ in params):
            raise HTTPError(400, f"{name} applies to SPARQL Update; queries take default-graph-uri")
    return Operation(
        "query",
        text,
        default_graphs=_graph_iris(params, "default-graph-uri"),
        named_graphs=_graph_iris(params, "named-graph-uri"),
        formats=tuple(value for key, value in params if key == "format"),
    )


def single(params: list[tuple[str, str]], name: str) -> str | None:
    """The one value of parameter ``name`` (``None`` if absent; HTTP 400 if repeated)."""
    values = [value for key, value in params if key == name]
    if len(values) > 1:
        raise HTTPError(400, f"more than one {name} parameter")
    return values[0] if values else None


_IRIREF = re.compile(r"<[^\x00-\x20<>\"{}|^`\\]*>")


def _string_end(text: str, start: int, quote: str) -> int:
    """Where the string literal opened at ``start`` ends (one past its closing quote, or the end).

    One pass, so the cost is linear in the text whatever it holds (a regular
    expression with an alternative per literal form went quadratic on an
    unterminated string full of escapes).
    """
    n = len(text)
    if text.startswith(quote * 3, start):
        i = start + 3
        while i < n:
            if text[i] == "\\":
                i += 2
            elif text.startswith(quote * 3, i):
                return i + 3
            else:
                i += 1
        return n
    i = start + 1
    while i < n and text[i] not in (quote, "\n", "\r"):
        i += 2 if text[i] == "\\" else 1
    return min(i + 1, n)


def nesting_depth(text: str) -> int:
    """The deepest nesting of ``{ ( [`` in a query, outside strings, IRIs and comments (linear time)."""
    depth = deepest = 0
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char in "\"'":
            i = _string_end(text, i, char)
            continue
        if char == "<":
            iri = _IRIREF.match(text, i)
            if iri is not None:
                i = iri.end()
                continue
        elif char == "#":
            newline = min((k for k in (text.find("\n", i), text.find("\r", i)) if k >= 0), default=n)
            i = newline
            continue
        elif char in "{([":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "})]":
            depth = max(0, depth - 1)
        i += 1
    return deepest


def check_text(op: Operation, settings: Settings) -> None:
    """HTTP 400 for an empty or too deeply nested operation, 413 for one past ``max_query_chars``."""
    if not op.text.strip():
        raise HTTPError(400, f"empty {op.kind}")
    if len(op.text) > settings.max_query_chars:
        raise HTTPError(
            413,
            f"the {op.kind} has {len(op.text):,} characters, more than this server's "
            f"limit of {settings.max_query_chars:,} (max_query_chars)",
        )
    if nesting_depth(op.text) > MAX_NESTING:
        raise HTTPError(400, f"the {op.kind} nests brackets more than {MAX_NESTING} levels deep")


def content_media_type(request: Request) -> tuple[str, dict[str, str]]:
    """The request's ``Content-Type``: the media type (lower case) and its parameters."""
    raw = request.headers.get("content-type", "")
    media, *params = raw.split(";")
    parsed: dict[str, str] = {}
    for param in params:
        name, _, value = param.partition("=")
        parsed[name.strip().lower()] = value.strip().strip('"')
    return media.strip().lower(), parsed


def body_text(body: bytes, charset: str | None, what: str) -> str:
    """A query or update body decoded in its charset (UTF-8 by default): 415 unknown, 400 invalid."""
    encoding = (charset or "utf-8").lower()
    try:
        return body.decode(encoding)
    except LookupError:
        raise HTTPError(415, f"unknown charset {encoding[:40]!r} for the {what}") from None
    except UnicodeDecodeError:
        raise HTTPError(400, f"the {what} is not valid {encoding}") from None
