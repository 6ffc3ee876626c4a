"""Keeping the search index: the rows of changed graphs rewritten in the writer's transaction.

:func:`index_graphs` is the store's index hook (:mod:`catalogue.graph.derived`): the
store hands it the graphs a transaction wrote, just before it commits, and it rewrites
exactly their rows (:func:`catalogue.discovery.read.summaries` reads them again from
the graph), the facet counts and the catalogue's totals by difference, and bumps the
index's *generation* (which tells servers that cached answers are stale).  A dataset is
therefore searchable in the same commit that stores it, and gone in the commit that
removes it.  :func:`reindex` serves ``catalogue reindex`` (the queue of graphs no hook
took, one graph, or everything from scratch) and :func:`index_state` checks the index
against a rebuild.

Rows, per dataset: ``search_datasets`` (sort keys, filters and the hit's JSON),
``search_facets`` (one row per facet value), ``search_text`` (the four weighted fields),
``search_boxes`` (its box, two across the antimeridian) and, for a huge box,
``search_huge`` instead; see :mod:`catalogue.graph.search_schema` for the
database-specific three.
"""

from __future__ import annotations

import json
import logging
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from sqlalchemy import bindparam, text
from sqlalchemy.engine import Connection

from catalogue.graph.derived import dequeue, queued_graphs
from catalogue.graph.dialect import dialect_for
from catalogue.graph.search_schema import (
    BOX_PARTS,
    NO_TIME,
    SEARCH_ROW_TABLES,
    copy_huge,
    fill_huge,
    is_huge,
)
from catalogue.graph.written import WrittenGraph
from catalogue.rdf.provenance import HARVESTS_GRAPH

from .normalise import fold
from .read import GraphRecord, _term_id, summaries
from .summary import FACETS, DatasetSummary

__all__ = ["ReindexReport", "index_graphs", "index_hook", "micros", "reindex", "text_document"]

log = logging.getLogger(__name__)

#: Distinct index terms per dataset, and characters per term (the same on both
#: databases; PostgreSQL refuses lexemes over 2 KB and tsvectors over 1 MB).
MAX_TERMS_INDEXED: Final = 20_000
MAX_TERM_CHARS: Final = 100
#: Graphs indexed per transaction by ``catalogue reindex``.
REINDEX_BATCH: Final = 500
_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
_ONE_MICROSECOND: Final = timedelta(microseconds=1)
_WEIGHTS: Final = "ABCD"  # title, keywords, variables, summary: tsvector weights


def micros(moment: datetime) -> int:
    """Whole microseconds since 1970 (UTC), exactly (a naive datetime is taken as UTC)."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - _EPOCH) // _ONE_MICROSECOND


def _ids() -> Any:
    """The ``:ids`` parameter of ``IN :ids``, a list."""
    return bindparam("ids", expanding=True)


def _fields(summary: DatasetSummary) -> list[list[str]]:
    """The four fields' distinct terms, capped (see :data:`MAX_TERMS_INDEXED`)."""
    seen: set[str] = set()
    out: list[list[str]] = []
    for terms in summary.text_fields():
        field: list[str] = []
        for term in dict.fromkeys(terms):
            if len(term) > MAX_TERM_CHARS:
                continue
            if term not in seen and len(seen) >= MAX_TERMS_INDEXED:
                continue
            seen.add(term)
            field.append(term)
        out.append(field)
    return out


def text_document(fields: list[list[str]]) -> str:
    """A ``tsvector`` in its input syntax: each term a lexeme at position 1..4, weighted
    by its field (A title, B keywords, C variables, D summary)."""
    positions: dict[str, list[str]] = {}
    for n, terms in enumerate(fields):
        for term in terms:
            positions.setdefault(term, []).append(f"{n + 1}{_WEIGHTS[n]}")
    return " ".join("'" + t.replace("\\", "\\\\").replace("'", "''") + "':" + ",".join(p)
                    for t, p in positions.items())


def _dataset_row(record: GraphRecord) -> dict[str, Any]:
    # The STAC module (with the data cube's) loads at the first row indexed, not with every catalogue.
    from catalogue.rdf.stac import collection_id

    d = record.summary
    assert d is not None
    extent = d.extent
    box = extent.bbox if extent is not None else None
    span = extent.period.instants() if extent is not None and extent.period is not None else None
    return {
        "gid": record.gid, "iri": d.iri, "title_key": fold(d.title), "title": d.title,
        "zarr_format": d.zarr_format, "valid": None if d.valid is None else int(d.valid),
        "harvested": micros(d.harvested) if d.harvested is not None else None,
        "run": record.run, "run_ended": record.run_ended,
        "start_time": micros(span[0]) if span else None, "end_time": micros(span[1]) if span else None,
        "west": box.west if box else None, "south": box.south if box else None,
        "east": box.east if box else None, "north": box.north if box else None,
        "groups": d.groups, "arrays": d.arrays, "triples": record.triples,
        "tags": json.dumps(facet_tags(d), ensure_ascii=False, separators=(",", ":")),
        "hit": d.hit_bytes().decode("utf-8"), "collection_id": collection_id(d.iri),
    }


_INSERT_DATASET = text(
    "INSERT INTO search_datasets (gid, iri, title_key, title, zarr_format, valid, harvested, run, run_ended, "
    "start_time, end_time, west, south, east, north, groups, arrays, triples, tags, hit, collection_id, words) "
    "VALUES (:gid, :iri, :title_key, :title, :zarr_format, :valid, :harvested, :run, :run_ended, :start_time, "
    ":end_time, :west, :south, :east, :north, :groups, :arrays, :triples, :tags, :hit, :collection_id, :words)"
)
_INSERT_DATASET_PG = text(
    "INSERT INTO search_datasets (gid, iri, title_key, title, zarr_format, valid, harvested, run, run_ended, "
    "start_time, end_time, west, south, east, north, groups, arrays, triples, tags, hit, collection_id, words, doc, "
    "env, env2, facets) VALUES (:gid, :iri, :title_key, :title, :zarr_format, :valid, :harvested, :run, :run_ended, "
    ":start_time, :end_time, :west, :south, :east, :north, :groups, :arrays, :triples, :tags, :hit, :collection_id, "
    ":words, CAST(:doc AS tsvector), CAST(:env AS box), CAST(:env2 AS box), CAST(:facets AS text[]))"
)
_COUNT_FACET = text(
    "INSERT INTO search_facet_counts (facet, value, datasets) VALUES (:facet, :value, :n) "
    "ON CONFLICT (facet, value) DO UPDATE SET datasets = search_facet_counts.datasets + excluded.datasets"
)
_COUNT_FACETS_PG = text(
    "INSERT INTO search_facet_counts (facet, value, datasets) "
    "SELECT * FROM unnest(CAST(:f AS smallint[]), CAST(:v AS text[]), CAST(:n AS bigint[])) "
    "ON CONFLICT (facet, value) DO UPDATE SET datasets = search_facet_counts.datasets + excluded.datasets"
)
_TOTALS = text(
    "INSERT INTO search_totals (id, datasets, groups, arrays, triples, generation) "
    "VALUES (1, :datasets, :groups, :arrays, :triples, 1) ON CONFLICT (id) DO UPDATE SET "
    "datasets = search_totals.datasets + excluded.datasets, groups = search_totals.groups + excluded.groups, "
    "arrays = search_totals.arrays + excluded.arrays, triples = search_totals.triples + excluded.triples, "
    "generation = search_totals.generation + 1"
)


def _delete_rows(conn: Connection, gids: list[int]) -> tuple[list[Any], list[Any]]:
    """Delete the rows of ``gids``; return the deleted datasets' (groups, arrays, triples)
    and facet (facet, value) rows, whose counts the totals lose."""
    gone = conn.execute(text("DELETE FROM search_datasets WHERE gid IN :ids RETURNING groups, arrays, triples")
                        .bindparams(_ids()), {"ids": gids}).all()
    facets = conn.execute(text("DELETE FROM search_facets WHERE gid IN :ids RETURNING facet, value")
                          .bindparams(_ids()), {"ids": gids}).all()
    conn.execute(text("DELETE FROM search_huge WHERE gid IN :ids").bindparams(_ids()), {"ids": gids})
    if conn.dialect.name == "sqlite":  # PostgreSQL keeps text and boxes in search_datasets' row
        conn.execute(text("DELETE FROM search_text WHERE rowid IN :ids").bindparams(_ids()), {"ids": gids})
        # Key equality (an R*Tree finds rows by key equality only).
        keys = [g * BOX_PARTS + part for g in gids for part in range(BOX_PARTS)]
        conn.execute(text("DELETE FROM search_boxes WHERE key IN :ids").bindparams(_ids()), {"ids": keys})
    return gone, facets


def words(fields: list[list[str]]) -> str:
    """``search_datasets.words``: each field's lexemes between spaces, the fields parted
    by ``" | "`` (see :func:`field_words`)."""
    return " " + " | ".join(" ".join(field) for field in fields) + " "


def field_words(stored: str) -> list[str]:
    """The fields of a ``words`` value, each its lexemes separated by spaces."""
    return stored.split("|")


def facet_tags(summary: DatasetSummary) -> list[str]:
    """The dataset's facet values as PostgreSQL's ``facets`` array holds them:
    ``"<facet number>:<value>"``."""
    return sorted(f"{FACETS.index(name)}:{value}" for name, values in summary.facet_values().items()
                  for value in values)


def _insert_rows(conn: Connection, records: list[GraphRecord]) -> None:
    if not records:
        return
    sqlite = conn.dialect.name == "sqlite"
    rows = [_dataset_row(r) for r in records]
    fields = {r.gid: _fields(r.summary) for r in records}  # type: ignore[arg-type]
    for row in rows:
        row["words"] = words(fields[row["gid"]])
    if sqlite:
        conn.execute(_INSERT_DATASET, rows)
    else:  # the text, boxes and facets are columns of the row (graph/search_schema.py)
        for row, r in zip(rows, records, strict=True):
            d = r.summary
            assert d is not None
            parts = d.extent.bbox.parts() if d.extent is not None and d.extent.bbox is not None else ()
            row["doc"] = text_document(fields[r.gid])
            row["facets"] = facet_tags(d)
            for name, part in zip(("env", "env2"), (*parts, None, None), strict=False):
                row[name] = f"(({part[0]},{part[1]}),({part[2]},{part[3]}))" if part else None
        conn.execute(_INSERT_DATASET_PG, rows)
        # copied by PostgreSQL's own test of a huge box, the one the searches ask
        fill_huge(conn, [r.gid for r in records])
    facets = [(FACETS.index(name), value, r.gid)
              for r in records for name, values in r.summary.facet_values().items()  # type: ignore[union-attr]
              for value in sorted(values)]
    if facets and sqlite:  # the driver's own executemany: no per-row parameter processing
        conn.exec_driver_sql("INSERT INTO search_facets (facet, value, gid) VALUES (?, ?, ?)", facets)
    elif facets:
        columns = list(zip(*facets, strict=True))
        conn.exec_driver_sql("INSERT INTO search_facets (facet, value, gid) SELECT * FROM "
                             "unnest(%s::smallint[], %s::text[], %s::bigint[])",
                             (list(columns[0]), list(columns[1]), list(columns[2])))
    if not sqlite:
        return
    conn.execute(text("INSERT INTO search_text (rowid, title, keywords, variables, summary) "
                      "VALUES (:gid, :a, :b, :c, :d)"),
                 [{"gid": gid, "a": " ".join(f[0]), "b": " ".join(f[1]), "c": " ".join(f[2]),
                   "d": " ".join(f[3])} for gid, f in fields.items()])
    boxes: list[tuple[Any, ...]] = []
    huge: list[int] = []
    for r in records:
        extent = r.summary.extent  # type: ignore[union-attr]
        if extent is not None and extent.bbox is not None:
            parts = extent.bbox.parts()
            if is_huge(parts[0]):  # search_huge, not the R*Tree (graph/search_schema.py)
                huge.append(r.gid)
                continue
            span = extent.period.instants() if extent.period is not None else None
            t0, t1 = (micros(span[0]) / 1e6, micros(span[1]) / 1e6) if span else (-NO_TIME, NO_TIME)
            for part, (x0, y0, x1, y1) in enumerate(parts):
                boxes.append((r.gid * BOX_PARTS + part, x0, x1, y0, y1, t0, t1))
    if boxes:
        conn.exec_driver_sql("INSERT INTO search_boxes (key, minx, maxx, miny, maxy, mint, maxt) "
                             "VALUES (?, ?, ?, ?, ?, ?, ?)", boxes)
    copy_huge(conn, huge)


def _stale_run_ends(conn: Connection) -> set[int]:
    """Datasets whose generating run's end time is no longer the one indexed (the
    provenance graph was changed by something other than a harvest)."""
    harvests = _term_id(conn, HARVESTS_GRAPH)
    ended = _term_id(conn, "http://www.w3.org/ns/prov#endedAtTime")
    if harvests is None or ended is None:
        rows = conn.execute(text("SELECT gid FROM search_datasets WHERE run_ended IS NOT NULL"))
        return {int(g) for g in rows.scalars()}
    rows = conn.execute(text(
        "SELECT d.gid FROM search_datasets d WHERE d.run IS NOT NULL AND "
        "(SELECT min(q.o) FROM quads q WHERE q.g = :h AND q.s = d.run AND q.p = :p) IS DISTINCT FROM d.run_ended"
        if conn.dialect.name == "postgresql" else
        "SELECT d.gid FROM search_datasets d WHERE d.run IS NOT NULL AND "
        "(SELECT min(q.o) FROM quads q WHERE q.g = :h AND q.s = d.run AND q.p = :p) IS NOT d.run_ended"
    ), {"h": harvests, "p": ended})
    return {int(g) for g in rows.scalars()}


def index_graphs(conn: Connection, graphs: Iterable[int], written: Mapping[int, WrittenGraph] | None = None) -> set[int]:
    """Rewrite the index rows of ``graphs`` (term ids) in ``conn``'s transaction, which
    holds the write lock; return the graphs indexed (a graph whose reading failed is
    left as it was, and stays queued). ``written``: graphs whose rows the writer still
    holds (:mod:`catalogue.graph.written`), taken from there instead of read back."""
    gids = set(graphs)
    if not gids:
        return set()
    if _term_id(conn, HARVESTS_GRAPH) in gids:
        gids |= _stale_run_ends(conn)
    records = summaries(conn, gids, written)
    done = sorted(g for g, r in records.items() if not r.failed)
    if not done:
        return set()
    old_totals = Counter[str]()
    old_facets = Counter[tuple[int, str]]()
    for start in range(0, len(done), 500):
        chunk = done[start:start + 500]
        gone, facets = _delete_rows(conn, chunk)
        for groups, arrays, triples in gone:
            old_totals.update({"datasets": 1, "groups": groups, "arrays": arrays, "triples": triples})
        for facet, value in facets:
            old_facets[(int(facet), value)] += 1
    new = [records[g] for g in done if records[g].summary is not None]
    new_totals = Counter[str]()
    new_facets = Counter[tuple[int, str]]()
    for r in new:
        d = r.summary
        assert d is not None
        new_totals.update({"datasets": 1, "groups": d.groups, "arrays": d.arrays, "triples": r.triples})
        for name, values in d.facet_values().items():
            for value in values:
                new_facets[(FACETS.index(name), value)] += 1
    for start in range(0, len(new), 500):
        _insert_rows(conn, new[start:start + 500])
    delta = {(f, v): new_facets[(f, v)] - old_facets[(f, v)] for f, v in set(new_facets) | set(old_facets)}
    changes = [{"facet": f, "value": v, "n": n} for (f, v), n in sorted(delta.items()) if n]
    if changes:
        if conn.dialect.name == "sqlite":
            conn.execute(_COUNT_FACET, changes)
        else:  # one statement, not one per value: a harvest of a small store changes some twenty
            conn.execute(_COUNT_FACETS_PG, {"f": [c["facet"] for c in changes], "v": [c["value"] for c in changes],
                                            "n": [c["n"] for c in changes]})
        if any(c["n"] < 0 for c in changes):
            conn.execute(text("DELETE FROM search_facet_counts WHERE datasets <= 0"))
    conn.execute(_TOTALS, {k: new_totals[k] - old_totals[k] for k in ("datasets", "groups", "arrays", "triples")})
    return set(done)


def index_hook(conn: Connection, graphs: set[int], *, shared: bool = False,
               written: Mapping[int, WrittenGraph] | None = None) -> set[int]:
    """The store's index hook (:class:`catalogue.graph.derived.IndexHook`): the graphs of
    the transaction and, while it holds the write lock alone anyway, up to
    :data:`QUEUE_PER_COMMIT` queued ones."""
    queued = [] if shared else queued_graphs(conn, QUEUE_PER_COMMIT)
    done = index_graphs(conn, graphs | set(queued), written)
    dequeue(conn, [g for g in queued if g in done])
    if len(done) >= ANALYZE_AFTER:
        analyze(conn)
    return done & graphs


#: Graphs indexed in one transaction (a bulk load, a full reindex, the upgrade that
#: builds the index) after which the search tables' statistics are refreshed in it.
ANALYZE_AFTER: Final = 1_000


def analyze(conn: Connection) -> None:
    """Refresh the planner's statistics of the search tables. After a bulk load they
    would describe the tables as they were (empty, often) until autovacuum comes round,
    and the first searches would be planned for empty tables."""
    dialect_for(conn.dialect.name).analyze(conn, SEARCH_ROW_TABLES)


#: Queued graphs a writer's commit indexes along with its own.
QUEUE_PER_COMMIT: Final = 20


@dataclass
class ReindexReport:
    """What ``catalogue reindex`` did."""

    graphs: int = 0
    datasets: int = 0
    failed: list[int] | None = None
    seconds: float = 0.0

    def summary(self) -> str:
        if not self.graphs and not self.failed:
            return f"the search index is up to date ({self.datasets:,} dataset(s)): no graph was waiting"
        failed = f", {len(self.failed)} could not be read (see the log)" if self.failed else ""
        return (f"reindexed {self.graphs:,} graph(s): {self.datasets:,} dataset(s) in the search index"
                f"{failed} in {self.seconds:.1f} s")


def reindex(begin: Callable[[], Any], *, graphs: Iterable[int] | None = None, full: bool = False,
            progress: Callable[[int], None] | None = None) -> ReindexReport:
    """Reindex the queue (default), the given graph ids, or (``full``) everything from
    scratch: the search tables emptied and every graph indexed again.

    ``begin()`` gives a context manager yielding a connection in a transaction that holds
    the write lock (``SQLStore.write_transaction``); each batch of
    :data:`REINDEX_BATCH` graphs is one transaction, except a full rebuild, which is one
    transaction so that readers never see a half-empty index.
    """
    started = time.perf_counter()
    report = ReindexReport(failed=[])
    if full:
        with begin() as conn:
            _empty(conn)
            ids = sorted({int(g) for g in conn.execute(text("SELECT id FROM graphs")).scalars()})
            for start in range(0, len(ids), REINDEX_BATCH):
                _batch(conn, ids[start:start + REINDEX_BATCH], report, progress)
            dequeue(conn, [g for g in ids if g not in report.failed])
            conn.execute(text("DELETE FROM reindex_queue WHERE gid NOT IN (SELECT id FROM graphs)"))
            analyze(conn)
    elif graphs is not None:
        ids = sorted(set(graphs))
        for start in range(0, len(ids), REINDEX_BATCH):
            with begin() as conn:
                done = _batch(conn, ids[start:start + REINDEX_BATCH], report, progress)
                dequeue(conn, done)
    else:
        while True:
            with begin() as conn:
                ids = [g for g in queued_graphs(conn, REINDEX_BATCH + len(report.failed))
                       if g not in report.failed]
                if not ids:
                    break
                done = _batch(conn, ids, report, progress)
                dequeue(conn, done)
    with begin() as conn:
        report.datasets = int(conn.execute(text("SELECT count(*) FROM search_datasets")).scalar_one())
    report.seconds = time.perf_counter() - started
    return report


def _batch(conn: Connection, ids: list[int], report: ReindexReport,
           progress: Callable[[int], None] | None) -> set[int]:
    done = index_graphs(conn, ids)
    report.graphs += len(done)
    assert report.failed is not None
    report.failed += [g for g in ids if g not in done]
    if progress is not None:
        progress(len(ids))
    return done


def _empty(conn: Connection) -> None:
    """Every search table emptied (a rebuild from scratch follows in the transaction)."""
    tables = ["search_datasets", "search_facets", "search_facet_counts", "search_huge"]
    if conn.dialect.name == "sqlite":
        tables += ["search_text", "search_boxes"]
    for table in tables:
        conn.execute(text(f"DELETE FROM {table}"))
    conn.execute(text(
        "INSERT INTO search_totals (id, datasets, groups, arrays, triples, generation) VALUES (1, 0, 0, 0, 0, 1) "
        "ON CONFLICT (id) DO UPDATE SET datasets = 0, groups = 0, arrays = 0, triples = 0, "
        "generation = search_totals.generation + 1"))
