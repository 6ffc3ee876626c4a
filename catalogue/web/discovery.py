"""Dataset discovery for portals: an in-memory search index over the harvested hierarchies.

A *dataset* is one harvested hierarchy: its root node (a ``dcat:Dataset``
whose IRI is the name of its graph) and, as its *variables*, every array of
the hierarchy (dependent arrays included). :class:`DatasetIndex` answers
``/datasets`` searches (free text, filters, disjunctive facet counts, paging,
sorting) without touching the database; :func:`current_index` keeps one per
server process and rebuilds it when the catalogue changed.

Building
    :func:`build_index` reads the whole catalogue with a fixed number of
    set-oriented SPARQL queries (one per property of interest, each of the form
    ``GRAPH ?g { ?s <p> ?o }``, which the SPARQL compiler turns into a single
    index range scan), never one query per dataset, and assembles datasets,
    variables, RDF lists (shape, chunks, dimension names, codecs), codec names
    and validation findings in Python. One pattern per query is deliberate:
    SQLite plans a pattern with many OPTIONALs badly (a six-OPTIONAL form was
    five times slower than the separate scans together). On the 500-dataset
    benchmark catalogue (``bench/web_data.py``, 3,800 nodes) a build takes
    1.3-2 s on SQLite and about 3 s on PostgreSQL (2 cores), most of it in
    rdflib term decoding. The signature (below) is read first, so a harvest
    committed during a build is picked up by the next check.

Searching
    Datasets are numbered in title order and every posting list is a Python
    ``int`` used as a bitset (bit *i* = dataset *i*). Text terms, filter values
    and facet values all map to such bitsets, so a query is a handful of
    ``&``/``|`` operations and ``int.bit_count()`` calls over ~N/64 machine
    words; title order is bit order, so sorting by title costs nothing.
    Typical searches on 500 datasets take 50-100 µs in CPython.

    * Text: title, summary, keywords and variables (names, long names and CF
      standard names) are tokenised into runs of letters and digits after NFKD
      accent stripping and case folding (``Température`` → ``temperature``;
      ``sea_ice`` → ``sea``, ``ice``). All query terms must match (AND); the
      last one also matches as a prefix (search as you type). Ranking: each
      term scores the weight of the best field it matches in (title 8,
      keywords 4, variables 2, summary 1); datasets sort by the total, then by
      title. At most :data:`MAX_TERMS` distinct terms.
    * Filters: several values of one filter are OR'd, different filters are
      AND'd. A dataset has a value when any of its arrays has it (``dtype``,
      ``dimension``, ``standard_name``, ``units``, ``codec``); ``zarr_format``
      is the root's; ``valid`` is false when any node has ``zarr:valid false``,
      true when some node is flagged and none is false; ``harvested_since``
      compares the end time of the harvest run that generated the current
      version (root ``prov:wasGeneratedBy`` → ``prov:endedAtTime``).
    * Data types are reported in the Zarr v3 vocabulary: v2 ``<f4`` and v3
      ``float32`` are both ``float32``; byte order is dropped (in v3 it is a
      codec setting); ``|b1`` → ``bool``, ``<c8`` → ``complex64``, ``<U4`` →
      ``fixed_length_utf32``, ``|S4`` → ``null_terminated_bytes``, ``<M8[ns]`` →
      ``numpy.datetime64``, ``<m8[s]`` → ``numpy.timedelta64``, ``|V2`` →
      ``r16``, structured (list) dtypes → ``structured``, ``|O`` → ``string``
      with a ``vlen-utf8`` filter, ``variable_length_bytes`` with
      ``vlen-bytes``, else ``object``. v3 extension types written as objects
      give their ``name``.
    * Codecs: the names of the v3 codec chain and of the v2 filters and
      compressor, lower-cased, with a ``numcodecs.`` prefix removed (zarr-python
      3 writes v2 codecs into v3 metadata as ``numcodecs.zlib``...); the codecs
      inside a ``sharding_indexed`` configuration (not its index codecs) count
      too, as they compress the data.
    * Facets (``dtype``, ``dimension``, ``standard_name``, ``units``,
      ``zarr_format``, ``codec``, ``valid``) are *disjunctive*: the counts of one
      facet are computed with the text query, ``harvested_since`` and every
      *other* filter applied, but not its own, so a portal can show how many
      datasets each alternative would add. Counts are of datasets. Each facet
      lists values with a non-zero count plus the selected ones, by count
      (descending) then value, at most :data:`FACET_VALUES` of them.

Refreshing
    The index is rebuilt when the catalogue's *signature* changes: the number
    of harvest runs and the latest ``prov:endedAtTime`` in
    ``<urn:zarr-catalogue:harvests>``, plus the set of graph ids (two cheap
    queries). The signature is checked at most once every
    :data:`REFRESH_INTERVAL` seconds (``app.state.datasets_refresh_interval``
    overrides it), in the background: no request waits for the check, and at
    most one check or rebuild runs at a time (an asyncio task guarded by a
    flag); requests keep using the previous index until the new one is ready.
    Only the very first request of a process waits, for the first build.

Limits
    Changes that record no harvest run and create or drop no graph (a
    ``catalogue load`` into an existing graph, a SPARQL Update) are not seen
    until the next harvest or restart. The index holds every dataset summary
    in memory (about 8 KB per benchmark dataset, plus 3 KB of cached hit
    JSON). Searches run on the event loop while the index has at most
    :data:`INLINE_LIMIT` datasets, in a worker thread beyond. A rebuild is
    Python work on a worker thread: it shares the interpreter with the
    requests served meanwhile.
"""

from __future__ import annotations

import asyncio
import bisect
import json
import logging
import re
import time
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from rdflib import RDF, Literal, URIRef

from catalogue.model.codecs import codec_name
from catalogue.rdf.dcat import iri_name
from catalogue.rdf.provenance import HARVESTS_GRAPH

if TYPE_CHECKING:
    from fastapi import FastAPI, Request

    from catalogue.api import Catalogue

log = logging.getLogger(__name__)

#: Seconds between two checks of the catalogue's signature (``app.state.datasets_refresh_interval``).
REFRESH_INTERVAL = 2.0
#: Searches run on the event loop up to this many datasets, in a worker thread beyond.
INLINE_LIMIT = 20_000
#: Distinct free-text terms a query may have.
MAX_TERMS = 32
#: Values listed per facet (selected values are always listed).
FACET_VALUES = 100
#: Facet names, in the order the API lists them.
FACETS = ("dtype", "dimension", "standard_name", "units", "zarr_format", "codec", "valid")
#: Sort orders.
SORTS = ("relevance", "title", "harvested", "-harvested")
#: Field weights for relevance: title > keywords > variables > summary.
WEIGHTS = (8, 4, 2, 1)


# ------------------------------------------------------------------ data classes
@dataclass
class Variable:
    """One array of a dataset, as a portal lists it."""

    iri: str
    path: str
    name: str
    long_name: str | None
    standard_name: str | None
    units: str | None
    #: Data type in the Zarr v3 vocabulary (see the module docstring).
    dtype: str | None
    shape: list[int] | None
    dimensions: list[str]
    chunks: list[int] | None
    #: Codec names, normalised, in chain order (a sharding codec's inner codecs follow it).
    codecs: list[str]
    valid: bool | None
    #: The data type exactly as the metadata writes it (``<f4``, ``float32``, a JSON object...).
    native_dtype: str | None = None


@dataclass
class DatasetSummary:
    """One harvested hierarchy: its root's description and its variables."""

    iri: str
    title: str
    summary: str | None
    keywords: list[str]
    zarr_format: int | None
    #: End of the harvest run that generated the current version (UTC).
    harvested: datetime | None
    valid: bool | None
    groups: int
    arrays: int
    variables: list[Variable]
    #: Rule ids of the error and warning findings anywhere in the hierarchy, sorted.
    rules: list[str]


@dataclass
class SearchQuery:
    """A ``/datasets`` search (see the module docstring for the semantics)."""

    q: str = ""
    dtype: list[str] = field(default_factory=list)
    dimension: list[str] = field(default_factory=list)
    standard_name: list[str] = field(default_factory=list)
    units: list[str] = field(default_factory=list)
    zarr_format: list[int] = field(default_factory=list)
    codec: list[str] = field(default_factory=list)
    valid: bool | None = None
    harvested_since: datetime | None = None
    limit: int = 20
    offset: int = 0
    sort: str = "relevance"  # relevance | title | harvested | -harvested


@dataclass
class SearchResult:
    total: int
    hits: list[DatasetSummary]
    #: facet -> [(value, count)], count descending then value.
    facets: dict[str, list[tuple[str, int]]]


class QueryError(ValueError):
    """A search the index refuses (too many terms, unknown sort): HTTP 400."""


# ------------------------------------------------------------------ normalisation
_WORD = re.compile(r"[^\W_]+")


def fold(text: str) -> str:
    """Case- and accent-insensitive form: NFKD, combining marks dropped, case folded."""
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def tokenize(text: str | None) -> list[str]:
    """The search tokens of ``text``: runs of letters and digits of its folded form."""
    return _WORD.findall(fold(text)) if text else []


_V2_DTYPE = re.compile(r"^[<>|=]?([biufcmMOSUV])(\d*)(?:\[\w+\])?$")
_V2_NUMERIC = {"i": "int", "u": "uint", "f": "float", "c": "complex"}


def normalise_dtype(value: str | None, codecs: Iterable[str] = ()) -> str | None:
    """A data type in the Zarr v3 vocabulary (``<f4`` → ``float32``); see the module docstring.

    ``value`` is the ``zarr:dataType`` lexical form: a name, or JSON (a v3 extension
    object, a v2 structured list). ``codecs`` (normalised names) tell what a v2
    object dtype holds. v3 names and anything unknown are returned as written.
    """
    if value is None:
        return None
    text = value.strip()
    if text.startswith(("{", "[")):
        try:
            parsed = json.loads(text)
        except ValueError:
            return text
        if isinstance(parsed, list):
            return "structured"
        if isinstance(parsed, dict) and isinstance(parsed.get("name"), str):
            return str(parsed["name"])
        return text
    m = _V2_DTYPE.match(text)
    if not m:
        return text
    kind, size = m.group(1), int(m.group(2) or 0)
    if kind in _V2_NUMERIC and size:
        return f"{_V2_NUMERIC[kind]}{8 * size}"
    if kind == "b" and size in (0, 1):
        return "bool"
    simple = {"M": "numpy.datetime64", "m": "numpy.timedelta64", "U": "fixed_length_utf32",
              "S": "null_terminated_bytes"}
    if kind in simple:
        return simple[kind]
    if kind == "V" and size:
        return f"r{8 * size}"
    if kind == "O":
        names = set(codecs)
        if "vlen-utf8" in names:
            return "string"
        if "vlen-bytes" in names:
            return "variable_length_bytes"
        return "object"
    return text


def normalise_codec(name: str) -> str:
    """A codec name for facets: lower case, without zarr-python's ``numcodecs.`` prefix."""
    name = name.strip().lower()
    return name.removeprefix("numcodecs.")


def _inner_codecs(configuration: Any, depth: int = 0) -> list[str]:
    """Names of the codecs inside a parsed sharding configuration (recursively), not its index codecs."""
    if not isinstance(configuration, dict) or depth > 8:
        return []
    out: list[str] = []
    codecs = configuration.get("codecs")
    for codec in codecs if isinstance(codecs, list) else []:
        name = codec_name(codec)
        if name is None:
            continue
        out.append(normalise_codec(name))
        if name == "sharding_indexed" and isinstance(codec, dict):
            out += _inner_codecs(codec.get("configuration"), depth + 1)
    return out


def _json_value(text: str | None) -> Any:
    """``text`` parsed as JSON (None when absent or malformed)."""
    if text is None:
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


def parse_time(text: str) -> datetime | None:
    """An xsd:dateTime lexical form as an aware UTC datetime (naive ones are taken as UTC)."""
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.astimezone(UTC)


# ------------------------------------------------------------------ building
#: One query per property: ``GRAPH ?g { ?s <p> ?o }`` is one index range scan.
_PROPERTY_QUERY = "SELECT ?g ?s ?o WHERE {{ GRAPH ?g {{ ?s {p} ?o }} }}"
_TYPE_QUERY = "SELECT ?g ?s WHERE {{ GRAPH ?g {{ ?s a {c} }} }}"
_RUNS_QUERY = f"SELECT ?run ?ended WHERE {{ GRAPH <{HARVESTS_GRAPH}> {{ ?run prov:endedAtTime ?ended }} }}"
_CELLS_QUERY = "SELECT ?g ?c ?first ?rest WHERE { GRAPH ?g { ?c rdf:first ?first ; rdf:rest ?rest } }"
_SHARDING_QUERY = (
    'SELECT ?g ?c ?conf WHERE { GRAPH ?g { ?c zarr:name "sharding_indexed" ; zarr:configuration ?conf } }'
)
_SIGNATURE_QUERY = (
    f"SELECT (COUNT(?run) AS ?runs) (MAX(?ended) AS ?last) "
    f"WHERE {{ GRAPH <{HARVESTS_GRAPH}> {{ ?run prov:endedAtTime ?ended }} }}"
)
_SEVERITIES = {"http://www.w3.org/ns/shacl#Violation", "http://www.w3.org/ns/shacl#Warning"}


def catalogue_signature(cat: Catalogue) -> tuple[Any, ...]:
    """What changes whenever a harvest ran or a graph appeared or went (cheap: two queries)."""
    row = next(iter(cat.query(_SIGNATURE_QUERY)), None)
    runs = int(row[0]) if row is not None and row[0] is not None else 0
    last = str(row[1]) if row is not None and row[1] is not None else ""
    graphs = tuple(sorted(str(g) for g in cat.store.graph_ids()))
    return runs, last, graphs


def _text(node: Any) -> str | None:
    return None if node is None else str(node)


def _json_or_text(node: Any) -> Any:
    """The Python value of a list item: numbers and strings as such, rdf:JSON parsed."""
    if isinstance(node, Literal):
        if node.datatype is not None and str(node.datatype) == str(RDF.JSON):
            try:
                return json.loads(str(node))
            except ValueError:
                return str(node)
        value = node.toPython()
        return value if isinstance(value, int | float | str | bool) else str(node)
    return node


class _Lists:
    """RDF lists of all graphs, rebuilt from their cells (keyed by graph and cell)."""

    def __init__(self, cells: dict[tuple[str, Any], tuple[Any, Any]]) -> None:
        self.cells = cells

    def items(self, graph: str, head: Any) -> list[Any] | None:
        """The items of the list starting at ``head`` (None when ``head`` is not a list)."""
        if head == RDF.nil:
            return []
        out: list[Any] = []
        seen: set[Any] = set()
        cell = head
        while cell != RDF.nil:
            entry = self.cells.get((graph, cell))
            if entry is None or cell in seen or len(out) > 10_000:
                return out if out else None
            seen.add(cell)
            out.append(entry[0])
            cell = entry[1]
        return out


def _select(cat: Catalogue, query: str) -> list[tuple[Any, ...]]:
    """The rows of a SELECT as plain tuples, in projection order.

    Reading ``Result.bindings`` (the solution dicts) skips building one
    rdflib ``ResultRow`` per row, a third of the build time.
    """
    result = cat.query(query)
    names = list(result.vars or ())
    return [tuple(b.get(v) for v in names) for b in result.bindings]


def build_index(cat: Catalogue) -> DatasetIndex:
    """Read the whole catalogue with a fixed number of set-oriented queries; return its index."""
    started = time.perf_counter()
    signature = catalogue_signature(cat)

    def prop(p: str) -> list[Any]:
        return _select(cat, _PROPERTY_QUERY.format(p=p))

    roots = {str(g) for g, s in _select(cat, _TYPE_QUERY.format(c="dcat:Dataset")) if g == s}
    arrays = {(str(g), s) for g, s in _select(cat, _TYPE_QUERY.format(c="zarr:Array")) if str(g) in roots}
    groups = {(str(g), s) for g, s in _select(cat, _TYPE_QUERY.format(c="zarr:Group")) if str(g) in roots}

    def by_node(p: str) -> dict[tuple[str, Any], Any]:
        return {(str(g), s): o for g, s, o in prop(p) if str(g) in roots}

    title, description, zarr_format = by_node("dct:title"), by_node("dct:description"), by_node("zarr:zarrFormat")
    generated_by = by_node("prov:wasGeneratedBy")
    keywords: dict[str, set[str]] = {}
    for g, s, o in prop("dcat:keyword"):
        if str(g) in roots and str(s) == str(g):
            keywords.setdefault(str(g), set()).add(str(o))
    ended = {run: parse_time(str(t)) for run, t in _select(cat, _RUNS_QUERY)}
    paths, valid = by_node("zarr:path"), by_node("zarr:valid")
    label, standard, units, dtype = (by_node("rdfs:label"), by_node("zarr:standardName"),
                                     by_node("zarr:units"), by_node("zarr:dataType"))
    shape, chunk_shape = by_node("zarr:shape"), by_node("zarr:chunkShape")
    dimension_names, codec_lists = by_node("zarr:dimensionNames"), by_node("zarr:codecs")
    names = by_node("zarr:name")
    lists = _Lists({(str(g), c): (first, rest) for g, c, first, rest in _select(cat, _CELLS_QUERY)
                    if str(g) in roots})
    sharding = {(str(g), c): str(conf) for g, c, conf in _select(cat, _SHARDING_QUERY)}
    severities = by_node("sh:resultSeverity")
    rules: dict[str, set[str]] = {}
    for g, r, rule in prop("zarr:rule"):
        if str(g) in roots and str(severities.get((str(g), r))) in _SEVERITIES:
            rules.setdefault(str(g), set()).add(str(rule))

    def int_list(graph: str, head: Any) -> list[int] | None:
        items = None if head is None else lists.items(graph, head)
        if items is None:
            return None
        values = [_json_or_text(i) for i in items]
        return values if all(type(v) is int for v in values) else None

    def codec_names(graph: str, head: Any) -> list[str]:
        items = None if head is None else lists.items(graph, head)
        out: list[str] = []
        for item in items or []:
            found = names.get((graph, item))
            name: str | None = str(found) if isinstance(found, Literal) else None
            if found is None:
                value = _json_or_text(item)
                name = codec_name(value)
                if name is None and isinstance(value, dict) and isinstance(value.get("id"), str):
                    name = value["id"]  # a v2 compressor or filter
            if name is None:
                continue
            out.append(normalise_codec(name))
            if name == "sharding_indexed":
                out += _inner_codecs(_json_value(sharding.get((graph, item))))
        return list(dict.fromkeys(out))

    variables: dict[str, list[Variable]] = {}
    for graph, node in arrays:
        head = dimension_names.get((graph, node))
        dims_items = lists.items(graph, head) if head is not None else None
        dims = [v if isinstance(v, str) else "" for v in map(_json_or_text, dims_items or [])]
        codecs = codec_names(graph, codec_lists.get((graph, node)))
        native = _text(dtype.get((graph, node)))
        path = _text(paths.get((graph, node))) or ""
        iri = str(node)
        flag = valid.get((graph, node))
        variables.setdefault(graph, []).append(Variable(
            iri=iri, path=path, name=path.rsplit("/", 1)[-1] if path else iri.rstrip("/").rsplit("/", 1)[-1],
            long_name=_text(label.get((graph, node))), standard_name=_text(standard.get((graph, node))),
            units=_text(units.get((graph, node))), dtype=normalise_dtype(native, codecs),
            shape=int_list(graph, shape.get((graph, node))), dimensions=dims,
            chunks=int_list(graph, chunk_shape.get((graph, node))), codecs=codecs,
            valid=None if flag is None else bool(flag.toPython()), native_dtype=native,
        ))

    flags: dict[str, list[bool]] = {}
    for (graph, _node), flag in valid.items():
        flags.setdefault(graph, []).append(bool(flag.toPython()))
    group_counts: dict[str, int] = {}
    for graph, _node in groups:
        group_counts[graph] = group_counts.get(graph, 0) + 1

    datasets: list[DatasetSummary] = []
    for graph in roots:
        key = (graph, URIRef(graph))
        fmt = zarr_format.get(key)
        fmt_value = fmt.toPython() if isinstance(fmt, Literal) else None
        run = generated_by.get(key)
        found = flags.get(graph, [])
        datasets.append(DatasetSummary(
            iri=graph,
            title=_text(title.get(key)) or iri_name(graph),
            summary=_text(description.get(key)),
            keywords=sorted(keywords.get(graph, ()), key=lambda k: (fold(k), k)),
            zarr_format=fmt_value if type(fmt_value) is int else None,
            harvested=ended.get(run) if run is not None else None,
            valid=all(found) if found else None,
            groups=group_counts.get(graph, 0),
            arrays=len(variables.get(graph, [])),
            variables=sorted(variables.get(graph, []), key=lambda v: v.path),
            rules=sorted(rules.get(graph, ())),
        ))
    index = DatasetIndex(datasets, signature=signature)
    index.build_seconds = time.perf_counter() - started
    log.info("dataset index: %d datasets built in %.2f s", len(datasets), index.build_seconds)
    return index


# ------------------------------------------------------------------ the index
@dataclass
class _Term:
    """Bitsets of one query term: datasets matching it in each field, best field first."""

    levels: tuple[int, int, int, int]  # title, keywords (not title), variables (not above), summary (not above)
    any: int


def _bits(mask: int) -> list[int]:
    """Positions of the set bits of ``mask``, ascending."""
    text = bin(mask)[:1:-1]
    return [i for i, c in enumerate(text) if c == "1"]


class DatasetIndex:
    """Immutable search structures over a list of dataset summaries (see the module docstring)."""

    def __init__(self, datasets: Iterable[DatasetSummary], *, signature: Any = None) -> None:
        self.signature = signature
        self.build_seconds = 0.0
        #: Derived data that callers compute once per index (serialised hits...); a rebuilt
        #: index starts with an empty cache, so nothing outlives the data it came from.
        self.cache: dict[str, Any] = {}
        self.datasets: list[DatasetSummary] = sorted(datasets, key=lambda d: (fold(d.title), d.title, d.iri))
        self.size = len(self.datasets)
        self.all = (1 << self.size) - 1
        self._by_iri = {d.iri: d for d in self.datasets}
        # field -> token -> bitset
        fields: list[dict[str, int]] = [{}, {}, {}, {}]
        self._facets: dict[str, dict[str, int]] = {name: {} for name in FACETS}
        times: list[tuple[float, int]] = []
        for i, d in enumerate(self.datasets):
            bit = 1 << i
            texts: list[list[str]] = [
                tokenize(d.title),
                [t for k in d.keywords for t in tokenize(k)],
                [t for v in d.variables for t in (*tokenize(v.name), *tokenize(v.long_name),
                                                  *tokenize(v.standard_name))],
                tokenize(d.summary),
            ]
            for level, tokens in enumerate(texts):
                postings = fields[level]
                for token in set(tokens):
                    postings[token] = postings.get(token, 0) | bit
            values: dict[str, set[str]] = {name: set() for name in FACETS}
            for v in d.variables:
                if v.dtype:
                    values["dtype"].add(v.dtype)
                values["dimension"].update(x for x in v.dimensions if x)
                if v.standard_name:
                    values["standard_name"].add(v.standard_name)
                if v.units:
                    values["units"].add(v.units)
                values["codec"].update(v.codecs)
            if d.zarr_format is not None:
                values["zarr_format"].add(str(d.zarr_format))
            if d.valid is not None:
                values["valid"].add("true" if d.valid else "false")
            for name, found in values.items():
                facet = self._facets[name]
                for value in found:
                    facet[value] = facet.get(value, 0) | bit
            if d.harvested is not None:
                times.append((d.harvested.timestamp(), i))
        self._fields = fields
        self._vocabulary = sorted(set().union(*fields))
        self._facet_items = {name: sorted(values.items()) for name, values in self._facets.items()}
        times.sort()
        self._times = [t for t, _ in times]
        # _since[k]: datasets harvested at or after the k-th smallest time (suffix unions)
        self._since = [0] * (len(times) + 1)
        for k in range(len(times) - 1, -1, -1):
            self._since[k] = self._since[k + 1] | (1 << times[k][1])
        by_time = [i for _, i in times]
        undated = [i for i in range(self.size) if self.datasets[i].harvested is None]
        self._oldest_first = by_time + undated
        newest = sorted(times, key=lambda x: (-x[0], x[1]))
        self._newest_first = [i for _, i in newest] + undated
        self._term_cache: dict[tuple[str, bool], _Term] = {}

    # ---------------------------------------------------------------- lookups
    def get(self, iri: str) -> DatasetSummary | None:
        """The dataset whose root (graph) IRI is ``iri``."""
        return self._by_iri.get(iri)

    def __len__(self) -> int:
        return self.size

    def facet_values(self, name: str) -> list[str]:
        """Every value of one facet in the whole catalogue, sorted."""
        return [value for value, _ in self._facet_items[name]]

    def _term(self, token: str, prefix: bool) -> _Term:
        key = (token, prefix)
        cached = self._term_cache.get(key)
        if cached is not None:
            return cached
        if prefix:
            lo = bisect.bisect_left(self._vocabulary, token)
            hi = bisect.bisect_left(self._vocabulary, token + "\U0010ffff")
            tokens = self._vocabulary[lo:hi]
        else:
            tokens = [token]
        raw = []
        for postings in self._fields:
            mask = 0
            for t in tokens:
                mask |= postings.get(t, 0)
            raw.append(mask)
        seen = 0
        levels = []
        for mask in raw:
            levels.append(mask & ~seen)
            seen |= mask
        term = _Term(levels=(levels[0], levels[1], levels[2], levels[3]), any=seen)
        if len(self._term_cache) > 10_000:
            self._term_cache.clear()
        self._term_cache[key] = term
        return term

    # ---------------------------------------------------------------- search
    def search(self, query: SearchQuery) -> SearchResult:
        """Filter, rank, page and count facets; see the module docstring for the semantics."""
        if query.sort not in SORTS:
            raise QueryError(f"sort must be one of {', '.join(SORTS)}")
        terms = list(dict.fromkeys(tokenize(query.q)))
        if len(terms) > MAX_TERMS:
            raise QueryError(f"q has {len(terms)} distinct terms; at most {MAX_TERMS} are allowed")
        base = self.all
        matched: list[_Term] = []
        for n, token in enumerate(terms):
            term = self._term(token, prefix=n == len(terms) - 1)
            matched.append(term)
            base &= term.any
        if query.harvested_since is not None:
            since = query.harvested_since
            if since.tzinfo is None:
                since = since.replace(tzinfo=UTC)
            base &= self._since[bisect.bisect_left(self._times, since.timestamp())]

        selected: dict[str, list[str]] = {  # dtype and codec values in the facets' vocabulary: <f4 is float32
            "dtype": list(dict.fromkeys(normalise_dtype(v) or v for v in query.dtype)),
            "dimension": query.dimension, "standard_name": query.standard_name, "units": query.units,
            "zarr_format": [str(z) for z in query.zarr_format],
            "codec": list(dict.fromkeys(normalise_codec(v) for v in query.codec)),
            "valid": [] if query.valid is None else ["true" if query.valid else "false"],
        }
        masks: dict[str, int] = {}
        for name, values in selected.items():
            if values:
                facet = self._facets[name]
                mask = 0
                for value in values:
                    mask |= facet.get(value, 0)
                masks[name] = mask
        hits = base
        for mask in masks.values():
            hits &= mask

        facets: dict[str, list[tuple[str, int]]] = {}
        for name in FACETS:
            others = base
            for other, mask in masks.items():
                if other != name:
                    others &= mask
            chosen = set(selected[name])
            counts = [(value, (mask & others).bit_count()) for value, mask in self._facet_items[name]]
            listed = [(v, c) for v, c in counts if c or v in chosen]
            listed += [(v, 0) for v in chosen if v not in self._facets[name]]
            listed.sort(key=lambda vc: (-vc[1], vc[0]))
            if len(listed) > FACET_VALUES:
                keep = listed[:FACET_VALUES]
                keep += [vc for vc in listed[FACET_VALUES:] if vc[0] in chosen]
                listed = keep
            facets[name] = listed

        order = self._page(hits, matched, query)
        return SearchResult(total=hits.bit_count(), hits=[self.datasets[i] for i in order], facets=facets)

    def _page(self, hits: int, terms: list[_Term], query: SearchQuery) -> list[int]:
        """Dataset positions of the requested page of ``hits`` in the requested order."""
        limit, offset = max(0, query.limit), max(0, query.offset)
        if not hits or not limit:
            return []
        sort = query.sort
        if sort == "relevance" and not terms:
            sort = "title"
        if sort in ("harvested", "-harvested"):
            sequence = self._oldest_first if sort == "harvested" else self._newest_first
            out: list[int] = []
            skip = offset
            for i in sequence:
                if hits >> i & 1:
                    if skip:
                        skip -= 1
                        continue
                    out.append(i)
                    if len(out) == limit:
                        break
            return out
        groups = [hits] if sort == "title" else self._relevance_groups(hits, terms)
        out = []
        skip = offset
        for group in groups:
            count = group.bit_count()
            if skip >= count:
                skip -= count
                continue
            positions = _bits(group)[skip:skip + limit - len(out)]
            skip = 0
            out += positions
            if len(out) >= limit:
                break
        return out

    @staticmethod
    def _relevance_groups(hits: int, terms: list[_Term]) -> list[int]:
        """``hits`` split by score (sum over terms of the weight of the best field), best first."""
        scores: dict[int, int] = {0: hits}
        for term in terms:
            after: dict[int, int] = {}
            for score, mask in scores.items():
                for weight, level in zip(WEIGHTS, term.levels, strict=True):
                    part = mask & level
                    if part:
                        after[score + weight] = after.get(score + weight, 0) | part
            scores = after
        return [scores[s] for s in sorted(scores, reverse=True)]


# ------------------------------------------------------------------ per-app holder
class _Holder:
    """The app's current index and the state of its refresh (event-loop side only)."""

    def __init__(self) -> None:
        self.index: DatasetIndex | None = None
        self.checked = 0.0
        self.task: asyncio.Task[None] | None = None
        self.first: asyncio.Lock | None = None
        self.builds = 0

    async def _refresh(self, app: FastAPI) -> None:
        """Check the signature; rebuild (in a worker thread) if it changed."""
        pool = app.state.pool
        current = self.index
        try:
            if current is not None:
                signature = await pool.run(catalogue_signature)
                if signature == current.signature:
                    return
            index = await pool.run(build_index)
            self.index = index
            self.builds += 1
        finally:
            self.checked = time.monotonic()


def _holder(app: FastAPI) -> _Holder:
    holder = getattr(app.state, "dataset_index", None)
    if holder is None:
        holder = _Holder()
        app.state.dataset_index = holder
    return holder


def refresh_interval(app: FastAPI) -> float:
    return float(getattr(app.state, "datasets_refresh_interval", REFRESH_INTERVAL))


async def current_index(request: Request) -> DatasetIndex:
    """The index for this app, (re)built through ``request.app.state.pool`` when the catalogue changed.

    The first call waits for the first build (concurrent first calls share it);
    later calls return the current index at once and, at most every
    ``refresh_interval`` seconds, start one background check (and rebuild) that
    later calls will see when it is done.
    """
    return await index_for(request.app)


async def index_for(app: FastAPI) -> DatasetIndex:
    """:func:`current_index` for an app (e.g. to warm the index when the server starts)."""
    holder = _holder(app)
    if holder.index is None:
        if holder.first is None:
            holder.first = asyncio.Lock()
        async with holder.first:
            if holder.index is None:
                await holder._refresh(app)
        assert holder.index is not None
        return holder.index
    if holder.task is None and time.monotonic() - holder.checked >= refresh_interval(app):
        holder.task = asyncio.create_task(_background(holder, app))
    return holder.index


async def _background(holder: _Holder, app: FastAPI) -> None:
    from .pool import Overloaded

    try:
        await holder._refresh(app)
    except Overloaded:  # every connection busy: the next interval tries again
        log.info("dataset index check skipped: the server is busy")
    except Exception:  # the old index keeps serving; the next interval tries again
        log.exception("dataset index refresh failed")
    finally:
        holder.task = None
