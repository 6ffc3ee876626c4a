"""Harvests in parallel: ``--jobs N`` worker processes, and several harvest commands on one
catalogue at once, lose nothing; the per-source status and the search index agree with them.

Stores are bench/web_data.py's synthetic hierarchies (v2 and v3, some invalid) and a
missing one. Two ``catalogue harvest --jobs`` processes share overlapping sources files
at the same time (``--wait``: a source the other is harvesting is waited for, not
skipped), on SQLite and PostgreSQL; afterwards every store is a dataset exactly once,
its graph equals a harvest on its own, the index equals a rebuild and each source's
status is its latest run.
"""

from __future__ import annotations

import functools
import json
import os
import pathlib
import random
import subprocess
import sys
import threading
import time

import pytest

import catalogue
from bench.web_data import write_hierarchy
from catalogue.discovery.query import SearchQuery
from catalogue.harvest.run import source_url
from catalogue.harvest.sources import Source
from tests.discovery.test_index_state import rebuilt, snapshot

CATALOGUE = str(pathlib.Path(sys.executable).with_name("catalogue"))


def _stores(folder: pathlib.Path, n: int) -> list[pathlib.Path]:
    rng = random.Random(11)
    return [write_hierarchy(folder, i, rng) for i in range(n)]


def _config(path: pathlib.Path, sources: list[str]) -> pathlib.Path:
    path.write_text("".join(f'[[source]]\nurl = "{s}"\nname = "{pathlib.Path(s).name}"\n' for s in sources))
    return path


@pytest.mark.slow
def test_two_commands_with_jobs_lose_nothing(db_url, tmp_path):
    roots = [str(r) for r in _stores(tmp_path / "stores", 12)]
    missing = str(tmp_path / "stores" / "missing.zarr")
    first = _config(tmp_path / "a.toml", [*roots[:8], missing])
    second = _config(tmp_path / "b.toml", roots[4:])
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    procs = [subprocess.Popen([CATALOGUE, "harvest", "--config", str(config), "--jobs", "3", "--wait", "--json",
                               "--db", db_url], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
             for config in (first, second)]
    outputs = [proc.communicate(timeout=600) for proc in procs]
    assert [p.returncode for p in procs] == [2, 0], outputs  # the missing store: a usage error (exit 2)
    reports = [json.loads(out) for out, _err in outputs]
    assert [r["failed_sources"] for r in reports] == [1, 0]
    # in the order of the sources file (a failed source's line names it as it was written)
    assert [s["source"] for s in reports[0]["sources"]] == [*roots[:8], missing]
    with catalogue.open(db_url) as cat:
        found = cat.search(SearchQuery(limit=50))
        assert sorted(h.iri for h in found.hits) == sorted(source_url(r) for r in roots)
        assert cat.totals().datasets == 12 and cat.stats().queued == 0
        # the index the writers kept is the one a rebuild gives
        cat.store.rollback()
        assert snapshot(cat.store.connection) == rebuilt(cat)
        status = {s.source: s for s in cat.harvest_status()}
        assert len(status) == 13
        assert status[source_url(missing)].outcome == "failed" and status[source_url(missing)].failing_since
        assert next(iter(status.values())).source == source_url(missing)  # failing first
        for root in roots:
            s = status[source_url(root)]
            assert s.outcome in ("succeeded", "unchanged") and s.failures == 0 and s.error is None
            assert s.runs == (2 if root in roots[4:8] else 1) and s.graph == source_url(root)
        runs = cat.harvests(limit=None)
        assert len(runs) == 8 + 1 + 8 and all(r["outcome"] != "running" for r in runs)
    # every graph equals that store harvested on its own
    alone = f"sqlite:///{tmp_path / 'alone.db'}"
    with catalogue.open(alone) as single:
        for root in roots[4:8]:
            single.harvest(root)
        expected = {h.iri: h.json for h in single.search(SearchQuery(limit=50)).hits}
    with catalogue.open(db_url) as cat:
        both = {h.iri: h.json for h in cat.search(SearchQuery(limit=50)).hits if h.iri in expected}

    def without_time(hit: bytes) -> dict:
        return {k: v for k, v in json.loads(hit).items() if k != "harvested"}
    assert {k: without_time(v) for k, v in both.items()} == {k: without_time(v) for k, v in expected.items()}


def test_jobs_from_the_library_report_in_source_order(sqlite_url, tmp_path):
    roots = [str(r) for r in _stores(tmp_path, 4)]
    seen: list[str] = []
    with catalogue.open(sqlite_url) as cat:
        batch = cat.harvest_sources([*roots, str(tmp_path / "nowhere.zarr")], jobs=2,
                                    on_result=lambda r: seen.append(r.source.url))
        assert [r.source.url for r in batch.results] == [*roots, str(tmp_path / "nowhere.zarr")]
        assert sorted(seen) == sorted(r.source.url for r in batch.results)
        assert batch.exit_code == 2 and batch.results[-1].error is not None  # a usage error crossed back
        assert "no such file" in batch.results[-1].error_line()
        assert all(r.report is not None and r.report.ok for r in batch.results[:-1])
        assert cat.totals().datasets == 4
        assert "harvested 4 of 5 sources (1 failed)" in batch.summary()



class _Bar:
    """An ``overall`` display that remembers what it was told."""

    def __init__(self, total: int) -> None:
        self.total, self.done, self.totals = total, 0, [total]

    def update(self, n: int = 1) -> None:
        self.done += n
        self.totals.append(self.total)

    def close(self) -> None:
        pass


def test_jobs_expand_folders_while_harvesting(sqlite_url, tmp_path):
    """With ``jobs``, the sources are told apart (a store, a folder of stores) while the
    first are harvested: the report still lists the failed discovery first and the stores
    in order, the display's total grows to the stores found, and every result is told once."""
    folder = tmp_path / "many"
    found = sorted(str(r) for r in _stores(folder, 3))
    alone = [str(r) for r in _stores(tmp_path / "one", 1)]
    empty = tmp_path / "empty"
    (empty / "sub").mkdir(parents=True)
    refused = Source(url=str(empty), max_depth=0)  # its discovery fails: a usage error
    seen: list[str] = []
    bars: list[_Bar] = []
    with catalogue.open(sqlite_url) as cat:
        batch = cat.harvest_sources([Source(url=alone[0]), refused, Source(url=str(folder))], jobs=2,
                                    on_result=lambda r: seen.append(r.source.url),
                                    overall=lambda total: bars.append(_Bar(total)) or bars[-1])
        assert [r.source.url for r in batch.results] == [str(empty), alone[0], *found]
        assert sorted(seen) == sorted(r.source.url for r in batch.results)  # each once
        assert "max_depth must be 1 or more" in batch.results[0].error_line()
        assert all(r.report is not None and r.report.ok for r in batch.results[1:])
        assert [f.stores for f in batch.discovered] == [[pathlib.Path(r).name for r in found]]
        assert cat.totals().datasets == 4
    (bar,) = bars
    assert bar.totals[0] == 3 and bar.totals[-1] == 4 and bar.done == 4


def _draw_after_first(first_done: threading.Event, entries: list[str], waited: list[bool],
                      fail: bool = False):
    yield Source(url=entries[0])
    waited.append(first_done.wait(120))  # the first source ends while the rest are drawn
    if fail:
        raise RuntimeError("the listing broke")
    for url in entries[1:]:
        yield Source(url=url)


@pytest.mark.parametrize("fail", [False, True], ids=["drawn", "drawing-fails"])
def test_workers_start_before_the_entries_are_drawn(sqlite_url, tmp_path, fail):
    """``harvest_in_workers`` draws its entries in a thread: a worker harvests the first
    while the next is still being found (a folder of stores, or 10^5 sources being told
    apart over a network). An error while drawing ends the harvest once the sources under
    way are done, and is raised to the caller."""
    from catalogue.api import _worker_records
    from catalogue.harvest.parallel import harvest_in_workers

    roots = [str(r) for r in _stores(tmp_path, 2)]
    with catalogue.open(sqlite_url):  # the catalogue exists before the workers open it
        pass
    first_done = threading.Event()
    waited: list[bool] = []
    outcomes: dict[int, object] = {}

    def done(position: int, outcome: object) -> None:
        outcomes[position] = outcome
        first_done.set()

    entries = _draw_after_first(first_done, roots, waited, fail)
    run = functools.partial(harvest_in_workers, functools.partial(_worker_records, sqlite_url), entries, 2, {}, done)
    if fail:
        with pytest.raises(RuntimeError, match="the listing broke"):
            run()
        assert list(outcomes) == [0]
    else:
        run()
        assert sorted(outcomes) == [0, 1]
    assert waited == [True], "the first source was not harvested before the rest were drawn"
    assert all(getattr(o, "ok", False) for o in outcomes.values())

def _children(pid: int) -> set[int]:
    found = set()
    for stat in pathlib.Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.add(int(stat.parent.name))
    return found


def _cmdline(pid: int) -> bytes:
    try:
        return pathlib.Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:  # gone meanwhile
        return b""


def _running(pid: int) -> bool:
    """Whether the process exists and has not exited (a zombie nobody reaped has)."""
    try:
        return pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


@pytest.mark.slow
@pytest.mark.skipif(not pathlib.Path("/proc/self/stat").exists(), reason="reads processes from /proc (Linux)")
def test_workers_end_with_a_killed_parent(db_url, tmp_path):
    """``catalogue harvest --jobs 2`` killed outright (SIGKILL; SIGTERM, as cron's timeout
    sends, ends Python the same way): its worker processes used to wait for work for
    ever, each holding a catalogue connection. They end with it, and the next harvest of
    the same sources runs."""
    from tests.support import stores

    roots = [str(stores.big_v3_hierarchy(tmp_path / f"s{i}", n_arrays=300, n_groups=3)) for i in range(4)]
    config = _config(tmp_path / "big.toml", roots)
    proc = subprocess.Popen([CATALOGUE, "harvest", "--config", str(config), "--jobs", "2", "--db", db_url],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: set[int] = set()
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and proc.poll() is None:
            with catalogue.open(db_url) as cat:
                if any(s.outcome == "running" for s in cat.harvest_status()):
                    workers = {p for p in _children(proc.pid) if b"spawn_main" in _cmdline(p)}
                    if len(workers) == 2:
                        break
            time.sleep(0.05)
        assert len(workers) == 2 and proc.poll() is None, "no two workers harvesting"
    finally:
        proc.kill()
        proc.wait(30)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and any(_running(p) for p in workers):
        time.sleep(0.1)
    assert not [p for p in workers if _running(p)], "workers outlived their parent"
    done = subprocess.run([CATALOGUE, "harvest", "--config", str(config), "--jobs", "2", "--db", db_url],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    with catalogue.open(db_url) as cat:
        assert cat.totals().datasets == 4
