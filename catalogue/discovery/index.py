"""Dataset discovery for portals: an in-memory search index over the harvested hierarchies.

A *dataset* is one harvested hierarchy: its root node (a ``dcat:Dataset``
whose IRI is the name of its graph) and, as its *variables*, every array of
the hierarchy (dependent arrays included). :class:`DatasetIndex` answers
``/datasets`` searches (free text, filters, disjunctive facet counts, paging,
sorting) without touching the database; :func:`~catalogue.discovery.refresh.current_index`
keeps one per server process and rebuilds it when the catalogue changed.

The package, by concept: :mod:`~catalogue.discovery.index` (this module: the
data classes and the index), :mod:`~catalogue.discovery.normalise` (text
folding; data type and codec names come from the model), :mod:`~catalogue.discovery.build`
(reading the catalogue), :mod:`~catalogue.discovery.refresh` (one index per
server process, kept current). It is in-memory and temporary: database
tables replace it when discovery has to scale.

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

import bisect
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from catalogue.model.codecs import normalise_codec_name
from catalogue.model.datatypes import v3_vocabulary_name
from catalogue.model.extents import Box, Extent

from .normalise import fold, tokenize

#: Searches run on the event loop up to this many datasets, in a worker thread beyond.
INLINE_LIMIT = 20_000
#: Distinct free-text terms a query may have.
MAX_TERMS = 32
#: Values listed per facet (selected values are always listed).
FACET_VALUES = 100
#: Facet names, in the order the API lists them.
FACETS = ("dtype", "dimension", "standard_name", "units", "zarr_format", "codec", "valid")
#: Sort orders.
SORTS = ("relevance", "title", "harvested", "-harvested", "start", "-start")
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
    #: The root's extent as harvested (its CRS84 box and period), or ``None``.
    extent: Extent | None = None


@dataclass
class SearchQuery:
    """A ``/datasets`` search (see the module docstring for the semantics)."""

    q: str = ""
    #: Alternatives (STAC free text: ``q=EO,Earth Observation``): a dataset matches when
    #: every term of one alternative matches; it ranks by its best alternative. Used
    #: instead of ``q`` when not empty.
    any_of: list[str] = field(default_factory=list)
    dtype: list[str] = field(default_factory=list)
    dimension: list[str] = field(default_factory=list)
    standard_name: list[str] = field(default_factory=list)
    units: list[str] = field(default_factory=list)
    zarr_format: list[int] = field(default_factory=list)
    codec: list[str] = field(default_factory=list)
    valid: bool | None = None
    harvested_since: datetime | None = None
    #: Datasets whose CRS84 box intersects this one (see ``web/http/where_when.py``).
    bbox: Box | None = None
    #: Datasets whose period overlaps ``(start, end)``, aware UTC; ``None`` is an open end.
    datetime: tuple[datetime | None, datetime | None] | None = None
    limit: int = 20
    offset: int = 0
    sort: str = "relevance"  # relevance | title | harvested | -harvested | start | -start


@dataclass
class SearchResult:
    total: int
    hits: list[DatasetSummary]
    #: facet -> [(value, count)], count descending then value.
    facets: dict[str, list[tuple[str, int]]]


class QueryError(ValueError):
    """A search the index refuses (too many terms, unknown sort): HTTP 400."""


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
        boxes: list[tuple[Box, int]] = []
        periods: list[tuple[datetime, datetime, int]] = []
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
            if d.extent is not None and d.extent.bbox is not None:
                boxes.append((d.extent.bbox, bit))
            span = d.extent.period.instants() if d.extent is not None and d.extent.period is not None else None
            if span is not None:
                periods.append((span[0], span[1], i))
        self._fields = fields
        self._boxes = boxes
        self._periods = periods
        by_start = sorted(periods, key=lambda p: (p[0], p[2]))
        dated = {p[2] for p in periods}
        unknown = [i for i in range(self.size) if i not in dated]
        self._earliest_first = [i for _, _, i in by_start] + unknown
        self._latest_first = [i for _, _, i in sorted(periods, key=lambda p: (-p[0].timestamp(), p[2]))] + unknown
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

    def _within_box(self, box: Box) -> int:
        """Datasets whose box intersects ``box`` (a scan: the database index replaces it)."""
        key = ("bbox", box)
        if key not in self.cache:
            mask = 0
            for found, bit in self._boxes:
                if found.intersects(box):
                    mask |= bit
            self.cache[key] = mask
        return self.cache[key]

    def _within_period(self, start: datetime | None, end: datetime | None) -> int:
        """Datasets whose period overlaps ``start..end`` (``None``: open)."""
        mask = 0
        for first, last, i in self._periods:
            if (end is None or first <= end) and (start is None or last >= start):
                mask |= 1 << i
        return mask

    # ---------------------------------------------------------------- search
    def search(self, query: SearchQuery) -> SearchResult:
        """Filter, rank, page and count facets; see the module docstring for the semantics."""
        if query.sort not in SORTS:
            raise QueryError(f"sort must be one of {', '.join(SORTS)}")
        alternatives = [list(dict.fromkeys(tokenize(text))) for text in (query.any_of or [query.q])]
        alternatives = [terms for terms in alternatives if terms] or [[]]
        total_terms = len({t for terms in alternatives for t in terms})
        if total_terms > MAX_TERMS:
            raise QueryError(f"q has {total_terms} distinct terms; at most {MAX_TERMS} are allowed")
        base = 0
        matched: list[list[_Term]] = []
        for terms in alternatives:
            mask, found = self.all, []
            for n, token in enumerate(terms):
                term = self._term(token, prefix=n == len(terms) - 1)
                found.append(term)
                mask &= term.any
            matched.append(found)
            base |= mask
        if query.harvested_since is not None:
            since = query.harvested_since
            if since.tzinfo is None:
                since = since.replace(tzinfo=UTC)
            base &= self._since[bisect.bisect_left(self._times, since.timestamp())]
        if query.bbox is not None:
            base &= self._within_box(query.bbox)
        if query.datetime is not None:
            base &= self._within_period(*query.datetime)

        selected: dict[str, list[str]] = {  # dtype and codec values in the facets' vocabulary: <f4 is float32
            "dtype": list(dict.fromkeys(v3_vocabulary_name(v) or v for v in query.dtype)),
            "dimension": query.dimension, "standard_name": query.standard_name, "units": query.units,
            "zarr_format": [str(z) for z in query.zarr_format],
            "codec": list(dict.fromkeys(normalise_codec_name(v) for v in query.codec)),
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

    def _page(self, hits: int, alternatives: list[list[_Term]], query: SearchQuery) -> list[int]:
        """Dataset positions of the requested page of ``hits`` in the requested order."""
        limit, offset = max(0, query.limit), max(0, query.offset)
        if not hits or not limit:
            return []
        sort = query.sort
        if sort == "relevance" and not any(alternatives):
            sort = "title"
        if sort in ("harvested", "-harvested", "start", "-start"):
            sequence = {"harvested": self._oldest_first, "-harvested": self._newest_first,
                        "start": self._earliest_first, "-start": self._latest_first}[sort]
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
        groups = [hits] if sort == "title" else self._best_groups(hits, alternatives)
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

    @classmethod
    def _best_groups(cls, hits: int, alternatives: list[list[_Term]]) -> list[int]:
        """``hits`` split by the score of their best-scoring alternative, best first."""
        if len(alternatives) == 1:
            return cls._relevance_groups(hits, alternatives[0])
        by_score: dict[int, int] = {}
        for terms in alternatives:
            for score, mask in cls._relevance_scores(hits, terms).items():
                by_score[score] = by_score.get(score, 0) | mask
        out, placed = [], 0
        for score in sorted(by_score, reverse=True):
            mask = by_score[score] & ~placed
            if mask:
                out.append(mask)
                placed |= mask
        return out

    @classmethod
    def _relevance_groups(cls, hits: int, terms: list[_Term]) -> list[int]:
        """``hits`` split by score (sum over terms of the weight of the best field), best first."""
        scores = cls._relevance_scores(hits, terms)
        return [scores[s] for s in sorted(scores, reverse=True)]

    @staticmethod
    def _relevance_scores(hits: int, terms: list[_Term]) -> dict[int, int]:
        """Score -> the datasets of ``hits`` matching every term with that score (a dataset
        missing a term has none)."""
        scores: dict[int, int] = {0: hits}
        for term in terms:
            after: dict[int, int] = {}
            for score, mask in scores.items():
                for weight, level in zip(WEIGHTS, term.levels, strict=True):
                    part = mask & level
                    if part:
                        after[score + weight] = after.get(score + weight, 0) | part
            scores = after
        return scores
