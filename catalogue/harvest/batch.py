"""Several sources harvested one after another, as ``catalogue harvest`` does.

Each source goes into its own graph (:func:`catalogue.harvest.run.harvest_source`, with
its own lock); a source that fails is recorded and the others go on. The
:class:`BatchReport` says what happened to each, the exit code the command ends with
(the worst of them: 1 a source or node failed, 3 a source was busy) and the one-line
summary, so that a Python user gets what the command prints.
"""

from __future__ import annotations

import functools
import itertools
import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from catalogue.errors import CatalogueError, UsageError
from catalogue.harvest.records import RunRecords
from catalogue.harvest.run import HarvestReport, harvest_source
from catalogue.harvest.sources import Source, load_sources
from catalogue.storage.access import DEFAULT_MAX_DOCUMENT_BYTES

if TYPE_CHECKING:
    from catalogue.harvest.discover import Expanded

__all__ = ["BatchReport", "OverallProgress", "Progress", "SourceResult", "harvest_sources", "plan_sources"]

log = logging.getLogger(__name__)


class Progress(Protocol):
    """A progress display of one source: told the nodes read, closed when the source is done."""

    def update(self, n: int = 1) -> Any: ...

    def close(self) -> Any: ...


class OverallProgress(Progress, Protocol):
    """The display of a harvest with several jobs: told the sources done, and how many
    there are as a folder of stores turns out to hold more than one."""

    total: Any


@dataclass
class SourceResult:
    """One source of a batch: its report, or the error that stopped it."""

    source: Source
    report: HarvestReport | None = None
    error: CatalogueError | None = None

    def exit_code(self, strict: bool = False) -> int:
        """0, or 1 when a node failed (or, with ``strict``, was invalid), or the error's exit code."""
        if self.error is not None:
            return self.error.exit_code
        assert self.report is not None
        return 1 if not self.report.ok or (strict and self.report.invalid) else 0

    def error_line(self) -> str:
        """The error as one line naming the source (unless the message already does)."""
        label = self.source.label
        return f"{label}: {self.error}" if label not in str(self.error) else str(self.error)

    def as_json(self) -> dict[str, Any]:
        if self.report is None:
            return {"source": self.source.url, "name": self.source.name, "outcome": "failed", "error": str(self.error)}
        return self.report.as_json()


@dataclass
class BatchReport:
    """What a harvest of several sources did."""

    results: list[SourceResult] = field(default_factory=list)
    strict: bool = False
    #: What each discovering source found (:mod:`catalogue.harvest.discover`).
    discovered: list[Any] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """The worst exit code of the sources (0 when every source was harvested fully)."""
        return max((r.exit_code(self.strict) for r in self.results), default=0)

    def as_json(self) -> dict[str, Any]:
        sources = [r.as_json() for r in self.results]
        return {"ok": self.exit_code == 0, "sources": sources,
                "failed_sources": sum(r["outcome"] == "failed" for r in sources)}

    def summary(self) -> str:
        """One line over every source: how many were harvested, nodes by change, invalid nodes."""
        results = [r.as_json() for r in self.results]
        removed = [r for r in results if r["outcome"] == "removed"]
        results = [r for r in results if r["outcome"] != "removed"]
        failed = sum(r["outcome"] == "failed" for r in results)
        done = [r for r in results if r["outcome"] != "failed"]
        total = {k: sum(r.get(k, 0) for r in done) for k in ("added", "changed", "unchanged", "removed", "failed")}
        return (
            f"harvested {len(done)} of {len(results)} sources"
            + (f" ({failed} failed)" if failed else "")
            + (f", removed {len(removed)} that are gone ({sum(r.get('removed', 0) for r in removed)} nodes)"
               if removed else "")
            + f": {sum(r['groups'] + r['arrays'] for r in done)} nodes "
            f"({total['added']} added, {total['changed']} changed, {total['unchanged']} unchanged, "
            f"{total['removed']} removed, {total['failed']} failed), "
            f"{sum(r['invalid_nodes'] for r in done)} invalid"
        )


def plan_sources(sources: Iterable[str | Source] = (), config: str | None = None, **choice: Any) -> list[Source]:
    """The sources to harvest: ``sources`` (URLs or entries), then the ``[[source]]`` entries
    of the ``config`` file; a usage error when there are none. ``choice`` sets
    :class:`Source` fields (``include``, ``exclude``, ``max_depth``, ``discover``, ``prune``,
    ``max_listings``, ``history``) of the sources given as URLs, as the command line's options do."""
    given = {k: v for k, v in choice.items() if v not in (None, ())}
    if given.get("prune") and given.get("discover") is False:
        raise UsageError("--prune needs discovery (it removes the stores a discovery no longer finds)")
    entries = [s if isinstance(s, Source) else Source(url=s, **given) for s in sources]
    entries += load_sources(config) if config else []
    if not entries:
        raise UsageError("nothing to harvest: give SOURCE arguments or --config SOURCES.TOML")
    return entries


def harvest_sources(
    records: RunRecords,
    entries: list[Source],
    *,
    strict: bool = False,
    progress: Callable[[Source, int, int], Progress | None] | None = None,
    on_result: Callable[[SourceResult], None] | None = None,
    jobs: int = 1,
    open_records: Callable[[], RunRecords] | None = None,
    overall: Callable[[int], OverallProgress | None] | None = None,
    **options: Any,
) -> BatchReport:
    """Harvest every source in turn, or ``jobs`` at a time; a source that fails does not
    stop the others.

    ``options`` go to :func:`~catalogue.harvest.run.harvest_source` for every source
    (``profile``, ``full``, ``wait``, ``max_document_bytes``, and ``concurrency``,
    ``timeout``, ``retries`` unless a source sets its own). ``progress(source, number,
    total)`` may give a :class:`Progress` for a source; it is closed before
    ``on_result`` hears of the source, so output does not interleave with it.

    With ``jobs`` > 1, sources are harvested in that many worker processes
    (:mod:`catalogue.harvest.parallel`), each opening its catalogue with ``open_records``
    (picklable); ``overall(total)`` may give one :class:`Progress` counting the sources
    done, and ``on_result`` hears of each source as it ends. The report lists the sources
    whose discovery failed, then the sources in the order given (a folder of stores in
    place of its stores: :func:`~catalogue.harvest.discover.expand_sources`), then the
    stores a prune removed.
    """
    from catalogue.harvest.discover import Expanded, iter_expanded, vanished, vanished_versions

    limits = {k: options[k] for k in ("concurrency", "timeout", "retries") if options.get(k) is not None}
    if options.get("storage_options"):  # the whole harvest's, for the entries without their own
        entries = [e if e.storage_options else replace(e, storage_options=dict(options["storage_options"]))
                   for e in entries]
    catalogued = {s.graph for s in records.sources() if s.graph and s.outcome != "removed"}
    expanded = Expanded()
    stream = iter_expanded(entries, expanded, catalogued=catalogued, **limits,
                           max_document_bytes=options.get("max_document_bytes", DEFAULT_MAX_DOCUMENT_BYTES))
    first = list(itertools.islice(stream, 2))
    if jobs > 1 and len(first) > 1:
        if open_records is None:
            raise UsageError("harvesting with several jobs needs a way to open the catalogue in each worker")
        batch = _in_workers(open_records, itertools.chain(first, stream), expanded, len(entries), jobs, strict,
                            on_result, overall, options)
        # The terms the workers' new versions orphaned, now that no harvest shares the lock.
        records.store.collect_queued(wait=True)
    else:
        first += stream
        for source, error in expanded.failed:
            if on_result is not None:
                on_result(SourceResult(source, error=error))
        batch = _in_turn(records, first, strict, progress, on_result, options)
    batch.results = [SourceResult(source, error=error) for source, error in expanded.failed] + batch.results
    wait = options.get("wait", False)
    for source, found in expanded.discoveries:
        batch.discovered.append(found)
        if source.prune:
            if not found.complete:
                log.warning("%s: not pruned, the discovery was incomplete (%s)", source.label, found.unseen[0])
                continue
            batch.results += _prune(records, source, functools.partial(vanished, source, found), wait, on_result)
    for source, repository, present in expanded.versioned:
        batch.results += _prune(records, source, functools.partial(vanished_versions, repository, present),
                                wait, on_result)
    return batch


def _prune(records: RunRecords, source: Source, candidates: Callable[[list[str]], list[str]], wait: bool,
           on_result: Callable[[SourceResult], None] | None) -> list[SourceResult]:
    """Remove the graphs ``candidates`` picks of the catalogued ones (the stores below a
    discovering ``source`` that its discovery no longer finds, :func:`~.discover.vanished`;
    the versions of an Icechunk repository no longer found, :func:`~.discover.vanished_versions`)
    that are gone when asked again under their lock (:func:`~.discover.is_gone`)."""
    from catalogue.harvest.discover import is_gone
    from catalogue.harvest.run import withdraw_source

    sources = {s.graph: s.source for s in records.sources() if s.graph and s.outcome != "removed"}
    options = source.storage_options or None
    out = []
    for iri in candidates(list(sources)):
        entry = Source(url=sources[iri], name="")
        try:
            report = withdraw_source(records, sources[iri], iri, wait=wait,
                                     still_gone=lambda s=sources[iri]: is_gone(s, options))  # type: ignore[misc]
        except CatalogueError as exc:
            result = SourceResult(entry, error=exc)
        else:
            if report is None:
                log.warning("%s: not pruned, the store is there again", sources[iri])
                continue
            result = SourceResult(entry, report=report)
        out.append(result)
        if on_result is not None:
            on_result(result)
    return out


def _in_turn(records: RunRecords, entries: list[Source], strict: bool,
             progress: Callable[[Source, int, int], Progress | None] | None,
             on_result: Callable[[SourceResult], None] | None, options: dict[str, Any]) -> BatchReport:
    """The entries one after another, in this process."""
    batch = BatchReport(strict=strict)
    for number, source in enumerate(entries, 1):
        bar = progress(source, number, len(entries)) if progress is not None else None
        try:
            try:
                report = harvest_source(records, source.url, name=source.name,
                                        progress=bar.update if bar is not None else None,
                                        seen_state=source.seen_state, **{**options, **source.load_options()})
            finally:
                if bar is not None:
                    bar.close()
        except CatalogueError as exc:
            result = SourceResult(source, error=exc)
        else:
            result = SourceResult(source, report=report)
        batch.results.append(result)
        if on_result is not None:
            on_result(result)
    return batch


def _in_workers(open_records: Callable[[], RunRecords], entries: Iterator[Source], expanded: Expanded, given: int,
                jobs: int, strict: bool, on_result: Callable[[SourceResult], None] | None,
                overall: Callable[[int], OverallProgress | None] | None, options: dict[str, Any]) -> BatchReport:
    """The entries in ``jobs`` worker processes, drawn from ``entries`` (which expands the
    ``given`` sources into ``expanded.entries``, in order) while the first are harvested."""
    from catalogue.harvest.parallel import harvest_in_workers

    found: dict[int, SourceResult] = {}
    bar = overall(given) if overall is not None else None
    told = 0  # of the discoveries that failed, those reported

    def tell_failed() -> None:
        nonlocal told
        for source, error in expanded.failed[told:]:
            told += 1
            if on_result is not None:
                on_result(SourceResult(source, error=error))

    def done(position: int, outcome: HarvestReport | CatalogueError) -> None:
        tell_failed()
        source = expanded.entries[position]
        result = (SourceResult(source, error=outcome) if isinstance(outcome, CatalogueError)
                  else SourceResult(source, report=outcome))
        found[position] = result
        if bar is not None:
            bar.total = len(expanded.entries) + given - expanded.expanded  # a source not yet expanded counts one
            bar.update(1)
        if on_result is not None:
            on_result(result)

    try:
        harvest_in_workers(open_records, entries, jobs, options, done)
    finally:
        if bar is not None:
            bar.close()
        tell_failed()  # also when the drawing failed: what was found is still told
    return BatchReport(results=[found[i] for i in sorted(found)], strict=strict)
