"""What every benchmark script shares: timing one step, and recording the environment.

Results are only comparable between runs on the same machine and software, so
each results file carries the interpreter, platform and package versions.
"""

from __future__ import annotations

import contextlib
import gc
import os
import platform
import signal
import subprocess
import time
from collections.abc import Callable, Iterable
from importlib.metadata import PackageNotFoundError, version
from typing import Any


def stop(proc: subprocess.Popen[Any], timeout: float = 15) -> None:
    """End a server process the way an operator would (SIGTERM), killing it if it hangs.

    A server started in a session of its own (``start_new_session=True``, as
    :func:`spawn_server` does) has its whole process group killed afterwards, as a
    service manager would: a ``--processes`` worker that uvicorn's supervisor restarted
    while it was shutting down outlived it once, holding the server's stderr pipe open,
    and the test reading that pipe waited for ever."""
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if getattr(proc, "own_group", False):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)


def spawn_server(command: list[str], **options: Any) -> subprocess.Popen[Any]:
    """``subprocess.Popen(command, **options)`` in a session (process group) of its own,
    which :func:`stop` kills whole."""
    proc = subprocess.Popen(command, start_new_session=True, **options)
    proc.own_group = True  # type: ignore[attr-defined]
    return proc


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Seconds taken by ``fn()`` and its result, after a collection so that garbage
    left by the previous step is not charged to this one."""
    gc.collect()
    start = time.perf_counter()
    result = fn()
    return time.perf_counter() - start, result


def package_version(dist: str) -> str | None:
    """Installed version of ``dist`` (None when it is not installed)."""
    try:
        return version(dist)
    except PackageNotFoundError:
        return None


def environment(packages: Iterable[str]) -> dict[str, Any]:
    """Interpreter, platform, CPU count and the versions of ``packages``."""
    return {
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        **{name: package_version(name) for name in packages},
    }


def interleaved_rounds(
    steps: list[Callable[[], dict[str, Any]]],
    runs: int,
    warmup: int,
    report: Callable[[str, dict[str, float]], None],
) -> tuple[dict[str, list[float]], dict[str, Any]]:
    """Run every step once per round, in alternating order (A B C, then C B A ...).

    Alternating spreads machine noise and drift over all steps alike. Each step
    returns ``{name: seconds}`` plus ``{"_name": value}`` counts (kept, not
    timed). Returns the seconds of the counted rounds by name, and the counts;
    ``report(label, this_round)`` is called after each round (warm-ups included).
    """
    samples: dict[str, list[float]] = {}
    counts: dict[str, Any] = {}
    for rnd in range(warmup + runs):
        counted = rnd >= warmup
        this_round: dict[str, float] = {}
        for step in steps if rnd % 2 == 0 else steps[::-1]:
            for key, value in step().items():
                if key.startswith("_"):
                    counts[key[1:]] = value
                else:
                    this_round[key] = value
                    if counted:
                        samples.setdefault(key, []).append(value)
        report(f"round {rnd - warmup + 1}/{runs}" if counted else f"warm-up {rnd + 1}/{warmup}", this_round)
    return samples, counts
