"""The collector is relaxed while a harvest runs, and put back as it was found."""

from __future__ import annotations

import gc
import threading

import catalogue
from catalogue.harvest.heap import YOUNG_THRESHOLD, relaxed_collector


def test_a_harvest_runs_with_the_collector_relaxed_and_puts_it_back(good_stores, tmp_path):
    before = gc.get_threshold()
    seen: list[tuple[int, ...]] = []
    with catalogue.open(str(tmp_path / "c.db")) as cat:
        cat.harvest(str(good_stores["zarr_v3_deep"]), progress=lambda _n: seen.append(gc.get_threshold()))
    assert seen and all(t[0] >= YOUNG_THRESHOLD and t[1:] == before[1:] for t in seen)
    assert gc.get_threshold() == before


def test_nested_and_concurrent_harvests_restore_once_and_respect_a_change_made_meanwhile():
    before = gc.get_threshold()
    inside = threading.Event()
    leave = threading.Event()

    def other() -> None:
        with relaxed_collector():
            inside.set()
            leave.wait(10)

    thread = threading.Thread(target=other)
    with relaxed_collector():
        thread.start()
        inside.wait(10)
        with relaxed_collector():
            assert gc.get_threshold()[0] >= YOUNG_THRESHOLD
    assert gc.get_threshold()[0] >= YOUNG_THRESHOLD  # the other thread's harvest still runs
    leave.set()
    thread.join()
    assert gc.get_threshold() == before
    try:
        with relaxed_collector():
            gc.set_threshold(1234, 5, 6)  # the application decided otherwise meanwhile
        assert gc.get_threshold() == (1234, 5, 6)
    finally:
        gc.set_threshold(*before)


def test_a_collector_switched_off_stays_off():
    before = gc.get_threshold()
    try:
        gc.set_threshold(0, 10, 10)
        with relaxed_collector():
            assert gc.get_threshold()[0] == 0
        assert gc.get_threshold() == (0, 10, 10)
    finally:
        gc.set_threshold(*before)
