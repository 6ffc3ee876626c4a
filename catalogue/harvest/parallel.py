"""Several sources harvested at once, in worker processes (``catalogue harvest --jobs N``).

Harvesting is mostly CPU work in Python (parsing, validation, conversion to RDF), so
sources are spread over processes, not threads. Each worker opens its own catalogue
connection once (``open_records``, a picklable factory the library passes in) and
harvests one source at a time with :func:`~catalogue.harvest.run.harvest_source`,
exactly as a single ``catalogue harvest`` would: each source takes its own lock
(:mod:`catalogue.graph.lock`), so the same source is never harvested twice at once,
while different sources are read, validated and converted side by side and take turns
only for their write transactions. Reports come back to the parent as each source
ends (``on_result``), in completion order; the :class:`~catalogue.harvest.batch.BatchReport`
lists them in the order of the sources.

Workers are started with ``spawn``: nothing (connections, threads, locks) is inherited
from the parent. An interrupt (Ctrl-C) reaches the workers too; their runs are recorded
as interrupted and the parent stops waiting.
"""

from __future__ import annotations

import collections
import multiprocessing
import multiprocessing.connection
import os
import queue
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from typing import Any

from catalogue.errors import CatalogueError
from catalogue.harvest.records import RunRecords
from catalogue.harvest.run import HarvestReport, harvest_source
from catalogue.harvest.sources import Source

__all__ = ["harvest_in_workers"]

#: The worker's catalogue connection (one per worker process, opened by its initializer).
_RECORDS: RunRecords | None = None


def _start_worker(open_records: Callable[[], RunRecords]) -> None:
    global _RECORDS
    _exit_with_parent()
    _RECORDS = open_records()


def _exit_with_parent() -> None:
    """End this worker when the parent process is gone.

    A parent killed outright (SIGKILL, or SIGTERM from cron's ``timeout``, which Python
    does not turn into an exception) cannot stop its pool: the workers waited for work for
    ever, each holding a catalogue connection (a PostgreSQL session, which also kept the
    database from being dropped). A thread waits on the parent's sentinel and exits the
    process when it closes; a write transaction under way is rolled back by the database
    (the connection goes with the process), and the run shows as ``interrupted``."""
    parent = multiprocessing.parent_process()
    if parent is None:
        return

    def watch() -> None:
        multiprocessing.connection.wait([parent.sentinel])
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _harvest_one(source: Source, options: dict[str, Any]) -> HarvestReport | CatalogueError:
    """One source in a worker: its report, or the catalogue error that stopped it (returned,
    not raised, so that it crosses with its attributes)."""
    assert _RECORDS is not None
    try:
        report = harvest_source(_RECORDS, source.url, name=source.name, seen_state=source.seen_state,
                                **{**options, **source.load_options()})
    except CatalogueError as exc:
        return exc
    report.extents = None  # read by nothing after the write: not worth sending back
    return report


def harvest_in_workers(
    open_records: Callable[[], RunRecords],
    entries: Iterable[Source],
    jobs: int,
    options: dict[str, Any],
    on_done: Callable[[int, HarvestReport | CatalogueError], None],
) -> None:
    """Harvest ``entries`` with ``jobs`` worker processes; ``on_done(position, outcome)``
    hears of each source (its position in ``entries``) as it ends, in the parent.

    ``entries`` may be slow to draw (:func:`~catalogue.harvest.discover.iter_expanded`
    reads each source to tell a store from a folder of stores): it is drawn in a thread of
    its own, so that the workers start (and import) while it is, and each worker takes
    the next entry as soon as it is free, instead of waiting for the whole list."""
    context = multiprocessing.get_context("spawn")
    # One queue of what the parent waits for: entries from the drawing thread, the end of
    # them, and the futures of the sources under way as each completes.
    events: queue.Queue[Source | _End | Future[HarvestReport | CatalogueError]] = queue.Queue()
    stop = threading.Event()
    drawing = threading.Thread(target=_draw, args=(entries, events, stop), name="harvest-entries", daemon=True)
    drawing.start()
    with ProcessPoolExecutor(max_workers=jobs, mp_context=context, initializer=_start_worker,
                             initargs=(open_records,)) as pool:
        running: dict[Future[HarvestReport | CatalogueError], int] = {}
        ready: collections.deque[Source] = collections.deque()
        drawn = 0
        end: _End | None = None
        try:
            while True:
                # Keep each worker busy with one source, and no more: a source waiting in
                # the pool's queue would show as started before it is.
                while ready and len(running) < jobs:
                    future = pool.submit(_harvest_one, ready.popleft(), options)
                    running[future] = drawn
                    drawn += 1
                    future.add_done_callback(events.put)
                if end is not None and not running:
                    break
                event = events.get()
                if isinstance(event, _End):
                    end = event
                elif isinstance(event, Future):
                    on_done(running.pop(event), event.result())
                else:
                    ready.append(event)
        except BaseException:
            stop.set()
            pool.shutdown(wait=False, cancel_futures=True)
            raise
    assert end is not None  # the loop ends only after the entries did
    if end.error is not None:
        raise end.error


@dataclass(frozen=True)
class _End:
    """The last item of the feed: the entries are all drawn, or drawing them failed."""

    error: BaseException | None = None


def _draw(entries: Iterable[Source], feed: queue.Queue[Any], stop: threading.Event) -> None:
    """Draw ``entries`` into ``feed``, ended by :class:`_End` (carrying the exception that
    stopped the drawing, raised again in the parent's thread once the sources under way end)."""
    try:
        for entry in entries:
            if stop.is_set():
                return
            feed.put(entry)
    except BaseException as exc:  # re-raised by harvest_in_workers, in the caller's thread
        feed.put(_End(exc))
    else:
        feed.put(_End())
