"""Measurements a passing test reports in the run's terminal summary (see conftest's hooks)."""

from __future__ import annotations

import os

from tests.support.paths import ARTIFACTS

MEASUREMENTS = "measurements-*.txt"


def report_measurement(line: str) -> None:
    """Show ``line`` in the run's terminal summary (pytest hides a passing test's output).

    Written to a file per process, because under pytest-xdist the test runs in
    a worker while the summary is printed by the controller.
    """
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with open(ARTIFACTS / f"measurements-{os.getpid()}.txt", "a", encoding="utf-8") as fh:
        fh.write(line + "\n")
