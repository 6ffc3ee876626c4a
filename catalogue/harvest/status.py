"""Per-source harvest status for operators: the latest outcome of every source, failing ones first.

A data centre harvesting 10^5 sources needs "which sources are failing, since when,
and why" without reading every run's PROV record. ``harvest_sources`` (one row per
source, :mod:`catalogue.graph.schema`) holds the latest run's outcome, times and first
error, the end of the latest run that did not fail, and the start of the first failed
run since then. :class:`~catalogue.harvest.records.RunRecords` keeps it in the same
transactions that record the runs (:func:`note_start`, :func:`note_end`), so it always
agrees with the PROV records; :func:`statuses` lists it, the sources failing for
longest first. A run still ``running`` whose process is gone shows as ``interrupted``
(the holder check of :func:`catalogue.graph.lock.holder_alive`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import asdict, dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Final

from sqlalchemy import text
from sqlalchemy.engine import Connection

from catalogue.rdf.provenance import Run

__all__ = ["SourceStatus", "note_end", "note_interrupted", "note_start", "replay", "running", "statuses"]

_EPOCH: Final = datetime(1970, 1, 1, tzinfo=UTC)
#: Outcomes that mean the source failed (the others: it was harvested, perhaps partly).
FAILED: Final = frozenset({"failed", "interrupted"})


def _micros(moment: datetime | None) -> int | None:
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return (moment - _EPOCH) // timedelta(microseconds=1)


def _moment(micros: int | None) -> datetime | None:
    return None if micros is None else _EPOCH + timedelta(microseconds=int(micros))


def _upsert(conn: Connection) -> str:
    return (
        "INSERT INTO harvest_sources (source, name, graph, run, holder, outcome, started, ended, error, runs, "
        "last_success, failing_since, failures) VALUES (:source, :name, NULL, :run, :holder, 'running', :started, "
        "NULL, NULL, 1, NULL, NULL, 0) ON CONFLICT (source) DO UPDATE SET name = excluded.name, run = excluded.run, "
        "holder = excluded.holder, outcome = 'running', started = excluded.started, ended = NULL, error = NULL, "
        "runs = harvest_sources.runs + 1"
    )


def note_start(conn: Connection, run: Run) -> None:
    """The run started (in the transaction that records its start)."""
    conn.execute(text(_upsert(conn)), {"source": run.source, "name": run.label, "run": str(run.iri),
                                       "holder": run.holder or None, "started": _micros(run.started)})


_END: Final = text(
    "UPDATE harvest_sources SET outcome = :outcome, ended = :ended, error = :error, "
    "graph = COALESCE(:graph, graph), "
    "last_success = CASE WHEN :failed = 1 THEN last_success ELSE :ended END, "
    "failing_since = CASE WHEN :failed = 1 THEN COALESCE(failing_since, started) ELSE NULL END, "
    "failures = CASE WHEN :failed = 1 THEN failures + 1 ELSE 0 END "
    "WHERE source = :source AND run = :run"
)


def note_end(conn: Connection, run: Run) -> None:
    """The run ended (in the transaction that records its end, or writes its graph)."""
    conn.execute(_END, {"source": run.source, "run": str(run.iri), "outcome": run.outcome,
                        "ended": _micros(run.ended), "error": run.errors[0][:2000] if run.errors else None,
                        "graph": run.graph, "failed": int(run.outcome in FAILED)})


_INTERRUPTED: Final = text(
    "UPDATE harvest_sources SET outcome = 'interrupted', failing_since = COALESCE(failing_since, started), "
    "failures = failures + 1 WHERE source = :source AND run = :run AND outcome = 'running'"
)


def note_interrupted(conn: Connection, source: str, run: str) -> None:
    """The source's latest run was found interrupted (its process gone before it recorded
    an end): a failure, from its start, as :func:`statuses` already showed it."""
    conn.execute(_INTERRUPTED, {"source": source, "run": run})


def running(conn: Connection, source: str) -> list[tuple[str, str | None]]:
    """``(run IRI, lock holder)`` of the source's latest run if it has not ended."""
    rows = conn.execute(text("SELECT run, holder FROM harvest_sources WHERE source = :s AND outcome = 'running' "
                             "AND run IS NOT NULL"), {"s": source})
    return [(run, holder) for run, holder in rows]


@dataclass
class SourceStatus:
    """One source as ``catalogue harvests --sources`` lists it."""

    source: str
    name: str
    graph: str | None
    outcome: str
    started: datetime | None
    ended: datetime | None
    #: Seconds the latest run took (None while it runs).
    seconds: float | None
    error: str | None
    runs: int
    last_success: datetime | None
    #: Start of the first failed run since the last success (None: not failing).
    failing_since: datetime | None
    failures: int
    run: str | None = None

    def as_json(self) -> dict[str, Any]:
        out = asdict(self)
        for key in ("started", "ended", "last_success", "failing_since"):
            out[key] = out[key].isoformat().replace("+00:00", "Z") if out[key] is not None else None
        return out


def statuses(conn: Connection, *, alive: Callable[[str], bool | None] | None = None,
             limit: int | None = None, failing: bool = False) -> list[SourceStatus]:
    """Every source (or ``limit`` of them; only the failing ones with ``failing``), those
    failing for longest first, then partly harvested ones, then the rest by source.
    ``alive(holder)`` tells a running run from an interrupted one.

    A run killed before it recorded its end is failing from its start (its outcome is
    ``interrupted``, one of :data:`FAILED`), although the table, which only a recorded end
    updates, does not say so until the source's next run. So the runs still marked
    ``running`` (few: one per harvest under way or killed) are read apart, judged, and
    merged into the table's own order, which the database gives for the rest."""
    columns = ("SELECT source, name, graph, outcome, started, ended, error, runs, last_success, failing_since, "
               "failures, run, holder FROM harvest_sources")
    # Sources in code-point order, as Python compares them (SQLite's default; PostgreSQL's
    # database collation may differ).
    by_source = "source" if conn.dialect.name == "sqlite" else 'source COLLATE "C"'
    order = (" ORDER BY CASE WHEN failing_since IS NULL THEN 1 ELSE 0 END, failing_since, "
             f"CASE WHEN outcome = 'partial' THEN 0 ELSE 1 END, {by_source}")
    settled = " WHERE outcome <> 'running'" + (" AND failing_since IS NOT NULL" if failing else "")
    rows = [_status(row, alive) for row in conn.execute(text(
        columns + settled + order + (f" LIMIT {int(limit)}" if limit else "")))]
    runs = [_status(row, alive) for row in conn.execute(text(columns + " WHERE outcome = 'running'"))]
    rows += [s for s in runs if not failing or s.failing_since is not None]
    rows.sort(key=_listed_order)
    return rows[:limit] if limit else rows


def _listed_order(status: SourceStatus) -> tuple[Any, ...]:
    """:func:`statuses`'s order (the SQL ``ORDER BY`` of its query, in Python)."""
    since = status.failing_since
    return (since is None, since or _EPOCH, status.outcome != "partial", status.source)


def _status(row: Any, alive: Callable[[str], bool | None] | None) -> SourceStatus:
    outcome, failing_since, failures = row.outcome, row.failing_since, int(row.failures)
    if outcome == "running" and row.holder and alive is not None and alive(row.holder) is False:
        # judged here, not yet recorded: counted as the next run will record it
        outcome = "interrupted"
        failing_since = failing_since if failing_since is not None else row.started
        failures += 1
    seconds = (row.ended - row.started) / 1e6 if row.ended is not None and row.started is not None else None
    return SourceStatus(
        source=row.source, name=row.name, graph=row.graph, outcome=outcome, started=_moment(row.started),
        ended=_moment(row.ended), seconds=seconds, error=row.error, runs=int(row.runs),
        last_success=_moment(row.last_success), failing_since=_moment(failing_since),
        failures=failures, run=row.run)


def replay(conn: Connection, runs: Iterable[Run]) -> None:
    """Rebuild rows from runs in the order they started (the migration that made the table
    reads the PROV records of existing catalogues through this)."""
    for run in sorted(runs, key=lambda r: (r.started, str(r.iri))):
        note_start(conn, run)
        if run.ended is not None:
            note_end(conn, run)
