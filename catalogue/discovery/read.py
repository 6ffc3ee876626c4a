"""Reading dataset summaries from graphs, in SQL: what the index holds of each dataset.

:func:`summaries` reads a batch of graphs with a few statements whatever their size:
the quads of the graphs whose predicate is one the index uses (one range scan of the
quads' primary key per graph), the terms they name (by primary key), their triple
counts, and the end times of the harvest runs that generated them.  It works on a plain connection
(no store, no rdflib terms), inside the transaction of the writer that changed the
graphs (:mod:`.indexer`), in a migration, or in ``catalogue reindex``.

Semantics (each mirrors the graph layout of :mod:`catalogue.rdf.convert`): a graph is a
*dataset* when its name is also a node typed ``dcat:Dataset`` (a harvested hierarchy's
root); its variables are the nodes typed ``zarr:Array``; lists (shape, chunk shape,
dimension names, codecs) are rebuilt from their ``rdf:first``/``rdf:rest`` cells; data
types and codec names are normalised by the model; ``valid`` is false when a node of
the graph has ``zarr:valid false``; ``rules`` are those of the error and warning
results of its SHACL report; ``harvested`` is the ``prov:endedAtTime`` of the root's
``prov:wasGeneratedBy`` run in the provenance graph.
"""

from __future__ import annotations

import json
import logging
import re
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final, NamedTuple

from sqlalchemy import bindparam, text
from sqlalchemy.engine import Connection, Engine

from catalogue.graph.terms import IRI, LITERAL, content, term_hash
from catalogue.graph.written import WrittenGraph
from catalogue.model.codecs import codec_name, inner_codec_names, normalise_codec_name
from catalogue.model.datatypes import v3_vocabulary_name
from catalogue.model.extents import Extent, Period
from catalogue.rdf.dcat import iri_name
from catalogue.rdf.extents import box_from_wkt
from catalogue.rdf.provenance import HARVESTS_GRAPH

from .normalise import fold, parse_time
from .summary import DatasetSummary, Variable

__all__ = ["GraphRecord", "summaries"]

log = logging.getLogger(__name__)

_RDF: Final = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
_XSD: Final = "http://www.w3.org/2001/XMLSchema#"
_ZARR: Final = "https://w3id.org/zarr-catalogue/vocab#"
_DCT: Final = "http://purl.org/dc/terms/"
_DCAT: Final = "http://www.w3.org/ns/dcat#"
_PROV: Final = "http://www.w3.org/ns/prov#"
_SH: Final = "http://www.w3.org/ns/shacl#"
_RDF_JSON: Final = _RDF + "JSON"
_NIL: Final = _RDF + "nil"

#: The predicates the index reads, by the name this module uses.
PREDICATES: Final = {
    "type": _RDF + "type", "first": _RDF + "first", "rest": _RDF + "rest",
    "title": _DCT + "title", "description": _DCT + "description", "keyword": _DCAT + "keyword",
    "zarr_format": _ZARR + "zarrFormat", "generated_by": _PROV + "wasGeneratedBy",
    "path": _ZARR + "path", "valid": _ZARR + "valid", "label": "http://www.w3.org/2000/01/rdf-schema#label",
    "standard_name": _ZARR + "standardName", "units": _ZARR + "units", "data_type": _ZARR + "dataType",
    "shape": _ZARR + "shape", "chunk_shape": _ZARR + "chunkShape", "dimension_names": _ZARR + "dimensionNames",
    "codecs": _ZARR + "codecs", "name": _ZARR + "name", "configuration": _ZARR + "configuration",
    "spatial": _DCT + "spatial", "bbox": _DCAT + "bbox", "temporal": _DCT + "temporal",
    "start": _DCAT + "startDate", "end": _DCAT + "endDate", "calendar": _ZARR + "calendar",
    "severity": _SH + "resultSeverity", "rule": _ZARR + "rule",
    "multiscales": _ZARR + "multiscales", "axis_types": _ZARR + "axisTypes", "axis_units": _ZARR + "axisUnits",
}
_MULTI: Final = frozenset({"type", "keyword", "rule"})
_DATASET: Final = _DCAT + "Dataset"
_ARRAY: Final = _ZARR + "Array"
_GROUP: Final = _ZARR + "Group"
_ENDED: Final = _PROV + "endedAtTime"
_SEVERITIES: Final = frozenset({_SH + "Violation", _SH + "Warning"})
_INTEGERS: Final = frozenset(_XSD + t for t in (
    "integer", "int", "long", "short", "byte", "nonNegativeInteger", "positiveInteger", "nonPositiveInteger",
    "negativeInteger", "unsignedLong", "unsignedInt", "unsignedShort", "unsignedByte"))
_FLOATS: Final = frozenset(_XSD + t for t in ("double", "float"))
_INTEGER_TEXT: Final = re.compile(r"\s*[+-]?[0-9]+\s*", re.ASCII)
#: Graphs read per statement (an ``IN`` list).
BATCH: Final = 200
#: Longest list rebuilt (a corrupt list that loops or never ends stops there).
MAX_LIST: Final = 10_000


class Term(NamedTuple):
    """A stored term as the index needs it: id, kind, lexical form, datatype IRI (a tuple:
    a rebuild makes millions of them)."""

    id: int
    kind: int
    value: str
    datatype: str | None = None


@dataclass
class GraphRecord:
    """What the index writes for one graph: the summary (None when the graph is not a
    dataset), the term ids of its generating run and of that run's end time, and its
    triple count."""

    gid: int
    summary: DatasetSummary | None
    run: int | None = None
    run_ended: int | None = None
    triples: int = 0
    #: Reading it failed (logged): the index keeps its previous rows and the graph queued.
    failed: bool = False


@dataclass
class _Graph:
    """One graph's statements of interest, keyed by subject id."""

    name: Term | None = None
    single: dict[str, dict[int, Term]] = field(default_factory=dict)
    multi: dict[str, dict[int, list[Term]]] = field(default_factory=dict)
    subjects: dict[int, Term] = field(default_factory=dict)

    def one(self, name: str, subject: int | None) -> Term | None:
        return None if subject is None else self.single.get(name, {}).get(subject)

    def many(self, name: str, subject: int) -> list[Term]:
        return self.multi.get(name, {}).get(subject, [])

    def typed(self, cls: str) -> list[int]:
        return [s for s, types in self.multi.get("type", {}).items() if any(t.value == cls for t in types)]

    def items(self, head: Term | None) -> list[Term] | None:
        """The items of the list starting at ``head`` (None when it is not a list)."""
        if head is None:
            return None
        if head.kind == IRI and head.value == _NIL:
            return []
        out: list[Term] = []
        seen: set[int] = set()
        cell: Term | None = head
        firsts, rests = self.single.get("first", {}), self.single.get("rest", {})
        while cell is not None and not (cell.kind == IRI and cell.value == _NIL):
            item = firsts.get(cell.id)
            if item is None or cell.id in seen or len(out) > MAX_LIST:
                return out if out else None
            seen.add(cell.id)
            out.append(item)
            cell = rests.get(cell.id)
        return out


def _python(term: Term) -> Any:
    """A list item's value: numbers, booleans and strings as such, ``rdf:JSON`` parsed,
    other literals as their text; a node (blank or IRI) stays the term."""
    if term.kind != LITERAL:
        return term
    if term.datatype == _RDF_JSON:
        try:
            return json.loads(term.value)
        except ValueError:
            return term.value
    if term.datatype in _INTEGERS and _INTEGER_TEXT.fullmatch(term.value):
        return int(term.value)
    if term.datatype == _XSD + "boolean":
        return term.value.strip() in ("true", "1")
    if term.datatype in _FLOATS:
        try:
            return float(term.value)
        except ValueError:
            return term.value
    return term.value


def _text(term: Term | None) -> str | None:
    return None if term is None else term.value


#: IRIs looked up by :func:`_lookups`, by name.
_LOOKED_UP: Final = {**PREDICATES, "ended": _ENDED, "harvests": str(HARVESTS_GRAPH)}
_HASHES: Final = {term_hash(IRI, iri, None, None): (name, iri) for name, iri in _LOOKED_UP.items()}


def _lookups(conn: Connection) -> dict[str, int]:
    """Name -> term id of the predicates the index reads, the provenance graph and
    ``prov:endedAtTime``, those that are stored (one statement)."""
    stmt = text("SELECT id, hash, value FROM terms WHERE hash IN :h").bindparams(bindparam("h", expanding=True))
    out: dict[str, int] = {}
    for term_id, h, value in conn.execute(stmt, {"h": list(_HASHES)}):
        name, iri = _HASHES[int(h)]
        if value == iri:
            out[name] = int(term_id)
    return out


#: Datatype IRIs by id, per database: a datatype row is never deleted or changed, so
#: an id once seen means the same IRI for ever (the store caches them the same way).
_DATATYPES: weakref.WeakKeyDictionary[Engine, dict[int, str]] = weakref.WeakKeyDictionary()


def _datatypes(conn: Connection, wanted: Iterable[int]) -> dict[int, str]:
    known = _DATATYPES.setdefault(conn.engine, {})
    if any(i not in known for i in wanted):
        known.update({int(i): iri for i, iri in conn.execute(text("SELECT id, iri FROM datatypes"))})
    return known


def _term_id(conn: Connection, iri: str) -> int | None:
    """The id of a stored IRI (``iri`` may be an rdflib ``URIRef``: compared as text)."""
    iri = str(iri)
    row = conn.execute(text("SELECT id, value FROM terms WHERE hash = :h"),
                       {"h": term_hash(IRI, iri, None, None)}).first()
    return int(row[0]) if row is not None and row[1] == iri else None


def summaries(conn: Connection, gids: Iterable[int],
              written: Mapping[int, WrittenGraph] | None = None) -> dict[int, GraphRecord]:
    """The :class:`GraphRecord` of each graph id (a graph that does not exist, or is not a
    dataset, has ``summary=None``). The rows of the ``written`` graphs are taken from
    there (what their writer wrote in this transaction) instead of read back."""
    ids = sorted(set(gids))
    out: dict[int, GraphRecord] = {}
    if not ids:
        return out
    found = _lookups(conn)
    harvests, ended_id = found.get("harvests"), found.get("ended")
    read = {i: n for n, i in found.items() if n in PREDICATES}
    for start in range(0, len(ids), BATCH):
        batch = ids[start:start + BATCH]
        graphs = _read_batch(conn, batch, read, written or {})
        counts = _triple_counts(conn, batch)
        runs = {gid: g.one("generated_by", gid) for gid, g in graphs.items() if g.name is not None}
        ended = _run_ends(conn, harvests, ended_id, [r.id for r in runs.values() if r is not None])
        for gid in batch:
            graph = graphs.get(gid)
            run = runs.get(gid)
            end = ended.get(run.id) if run is not None else None
            record = GraphRecord(gid=gid, summary=None, triples=counts.get(gid, 0))
            if graph is not None and graph.name is not None:
                try:
                    record.summary = _summary(gid, graph, end)
                except Exception:  # one odd graph must not stop the others: logged, left queued
                    log.exception("search index: graph <%s> could not be summarised", graph.name.value)
                    record.failed = True
            if record.summary is not None:
                record.run = run.id if run is not None else None
                record.run_ended = end.id if end is not None else None
            out[gid] = record
    return out


def _read_batch(conn: Connection, gids: list[int], predicates: dict[int, str],
                written: Mapping[int, WrittenGraph]) -> dict[int, _Graph]:
    graphs: dict[int, _Graph] = {}
    names = text("SELECT id, kind, value FROM terms WHERE id IN :g").bindparams(bindparam("g", expanding=True))
    for gid, kind, value in conn.execute(names, {"g": gids}):
        graph = graphs.setdefault(int(gid), _Graph())
        if kind == IRI:
            graph.name = Term(int(gid), IRI, value)
    if not predicates:
        return graphs
    # The quads first, then their terms by id: joined in one statement, PostgreSQL's
    # planner hashed the whole terms table (a parallel scan of millions of rows) for every
    # batch of a 100,000-graph load, a third of a second each. Read through the driver's
    # own cursor: a graph of a thousand arrays is some 40,000 rows, and SQLAlchemy's
    # result rows cost more than the statement.
    held = [gid for gid in gids if gid in written]
    rest = [gid for gid in gids if gid not in written]
    rows: list[tuple[Any, ...]] = []
    terms: dict[int, Term] = {}
    if rest:
        rows = _fetch_ids(conn, "SELECT g, s, p, o FROM quads WHERE g IN ({}) AND p IN ({})", rest, list(predicates))
        terms = _terms(conn, {t for row in rows for t in (row[1], row[3])})
    for gid in held:  # as the writer wrote them: the same rows and terms, not read back
        nodes = written[gid].nodes
        kept = [row for row in written[gid].rows if row[2] in predicates]
        for term_id in {t for row in kept for t in (row[1], row[3])} - terms.keys():
            kind, value, datatype, _lang = content(nodes[term_id])
            terms[term_id] = Term(term_id, kind, value, datatype)
        rows += kept
    for g, subject, p, o in rows:
        graph = graphs.get(g)
        if graph is None or graph.name is None:
            continue
        name = predicates[p]
        obj = terms[o]
        if subject not in graph.subjects:
            graph.subjects[subject] = terms[subject]
        if name in _MULTI:
            graph.multi.setdefault(name, {}).setdefault(subject, []).append(obj)
        else:
            # One value is expected; of several (an update added one), the least, so
            # that every reading of the same graph picks the same.
            found = graph.single.setdefault(name, {})
            held = found.get(subject)
            if held is None or (obj.value, obj.id) < (held.value, held.id):
                found[subject] = obj
    return graphs


def _fetch_ids(conn: Connection, sql: str, *id_lists: list[int]) -> list[tuple[Any, ...]]:
    """The rows of ``sql`` with each ``{}`` replaced by one list of ids, through the
    driver's cursor. The ids are written into the statement (they are integers, made
    so here), so that no driver rewrites ten thousand placeholders either."""
    statement = sql.format(*(",".join(str(int(i)) for i in ids) for ids in id_lists))
    cursor = conn.connection.cursor()
    try:
        cursor.execute(statement)
        return cursor.fetchall()
    finally:
        cursor.close()


#: Term ids asked for per statement.
_TERMS_PER_STATEMENT = 10_000


def _terms(conn: Connection, ids: set[int]) -> dict[int, Term]:
    """Term id -> :class:`Term`, by primary key: one object per term, however many
    statements use it."""
    wanted = sorted(ids)
    rows: list[tuple[Any, ...]] = []
    for start in range(0, len(wanted), _TERMS_PER_STATEMENT):
        rows += _fetch_ids(conn, "SELECT id, kind, value, datatype FROM terms WHERE id IN ({})",
                           wanted[start:start + _TERMS_PER_STATEMENT])
    datatypes = _datatypes(conn, {row[3] for row in rows if row[3] is not None})
    return {term_id: Term(term_id, kind, value, None if datatype is None else datatypes[datatype])
            for term_id, kind, value, datatype in rows}


def _triple_counts(conn: Connection, gids: list[int]) -> dict[int, int]:
    stmt = text("SELECT g, count(*) FROM quads WHERE g IN :g GROUP BY g").bindparams(bindparam("g", expanding=True))
    return {int(g): int(n) for g, n in conn.execute(stmt, {"g": gids})}


def _run_ends(conn: Connection, harvests: int | None, ended: int | None, runs: list[int]) -> dict[int, Term]:
    """Run term id -> its ``prov:endedAtTime`` literal in the provenance graph.

    ``q.g + 0`` keeps the planner off the primary key's ``(g, ...)`` prefix: a prepared
    statement's generic plan took ``g = $1`` for selective and scanned the whole provenance
    graph (every run ever recorded) per batch, where the runs' own ``(s, p)`` are a probe each."""
    if harvests is None or ended is None or not runs:
        return {}
    stmt = text(
        "SELECT q.s, o.id, o.value FROM quads q JOIN terms o ON o.id = q.o "
        "WHERE q.g + 0 = :h AND q.p = :p AND q.s IN :r ORDER BY q.s, o.id"
    ).bindparams(bindparam("r", expanding=True))
    out: dict[int, Term] = {}
    for run, term_id, value in conn.execute(stmt, {"h": harvests, "p": ended, "r": sorted(set(runs))}):
        out.setdefault(int(run), Term(int(term_id), LITERAL, value))
    return out


def _summary(gid: int, g: _Graph, run_end: Term | None) -> DatasetSummary | None:
    """The dataset summary of one graph, or None when its name is no ``dcat:Dataset`` in it."""
    assert g.name is not None
    iri = g.name.value
    if not any(t.value == _DATASET for t in g.many("type", gid)):
        return None

    def int_list(head: Term | None) -> list[int] | None:
        items = g.items(head)
        if items is None:
            return None
        values = [_python(i) for i in items]
        return values if all(type(v) is int for v in values) else None

    def codec_names(head: Term | None) -> list[str]:
        names: list[str] = []
        for item in g.items(head) or []:
            found = g.one("name", item.id) if item.kind != LITERAL else None
            name = found.value if found is not None and found.kind == LITERAL else None
            if found is None:
                value = _python(item)
                name = codec_name(value) if not isinstance(value, Term) else None
                if name is None and isinstance(value, dict) and isinstance(value.get("id"), str):
                    name = value["id"]  # a v2 compressor or filter
            if name is None:
                continue
            names.append(normalise_codec_name(name))
            if name == "sharding_indexed":
                conf = g.one("configuration", item.id)
                try:
                    parsed = json.loads(conf.value) if conf is not None else None
                except ValueError:
                    parsed = None
                names += inner_codec_names(parsed)
        return list(dict.fromkeys(names))

    variables: list[Variable] = []
    for node in g.typed(_ARRAY):
        dims_items = g.items(g.one("dimension_names", node))
        dims = [v if isinstance(v, str) else "" for v in map(_python, dims_items or [])]
        codecs = codec_names(g.one("codecs", node))
        native = _text(g.one("data_type", node))
        path = _text(g.one("path", node)) or ""
        subject = g.subjects[node].value
        flag = g.one("valid", node)
        variables.append(Variable(
            iri=subject, path=path,
            name=path.rsplit("/", 1)[-1] if path else subject.rstrip("/").rsplit("/", 1)[-1],
            long_name=_text(g.one("label", node)), standard_name=_text(g.one("standard_name", node)),
            units=_text(g.one("units", node)), dtype=v3_vocabulary_name(native, codecs),
            shape=int_list(g.one("shape", node)), dimensions=dims,
            chunks=int_list(g.one("chunk_shape", node)), codecs=codecs,
            valid=None if flag is None else _flag(flag), native_dtype=native,
        ))
    flags = [_flag(t) for t in g.single.get("valid", {}).values()]
    rules = {rule.value for result, found in g.multi.get("rule", {}).items()
             if (sev := g.one("severity", result)) is not None and sev.value in _SEVERITIES for rule in found}
    fmt = g.one("zarr_format", gid)
    fmt_value = _python(fmt) if fmt is not None else None
    keywords = {k.value for k in g.many("keyword", gid)}
    axes: dict[str, set[str]] = {"axis_types": set(), "axis_units": set()}
    for head in g.single.get("multiscales", {}).values():
        for name, found in axes.items():
            listed = _python(term) if (term := g.one(name, head.id)) is not None else None
            found.update(v for v in (listed if isinstance(listed, list) else []) if isinstance(v, str) and v)
    return DatasetSummary(
        iri=iri,
        title=_text(g.one("title", gid)) or iri_name(iri),
        summary=_text(g.one("description", gid)),
        keywords=sorted(keywords, key=lambda k: (fold(k), k)),
        zarr_format=fmt_value if type(fmt_value) is int else None,
        harvested=parse_time(run_end.value) if run_end is not None else None,
        valid=all(flags) if flags else None,
        groups=len(g.typed(_GROUP)),
        arrays=len(variables),
        variables=sorted(variables, key=lambda v: (v.path, v.iri)),  # the same order, however read
        rules=sorted(rules),
        extent=_extent(g, gid),
        axis_types=sorted(axes["axis_types"]), axis_units=sorted(axes["axis_units"]),
    )


def _flag(term: Term) -> bool:
    return term.value.strip() not in ("false", "0") if term.kind == LITERAL else True


def _extent(g: _Graph, root: int) -> Extent | None:
    """The root's CRS84 box and period: what search filters on (the full extent, with its
    CRS, resolutions and sources, is read per dataset by ``rdf/extents.py``)."""
    location, span = g.one("spatial", root), g.one("temporal", root)
    wkt = g.one("bbox", location.id) if location is not None else None
    start = g.one("start", span.id) if span is not None else None
    end = g.one("end", span.id) if span is not None else None
    calendar = g.one("calendar", span.id) if span is not None else None
    try:
        box = box_from_wkt(wkt.value) if wkt is not None else None
        period = (Period(start.value, end.value, calendar.value if calendar is not None else "standard")
                  if start is not None and end is not None else None)
        if period is not None:
            period.instants()  # a period search cannot compare is no period to search by
    except ValueError:
        log.warning("dataset %s: unreadable extent %r %r %r", g.name.value if g.name else root,
                    wkt and wkt.value, start and start.value, end and end.value)
        return None
    return Extent(bbox=box, period=period) if box is not None or period is not None else None

