"""What every benchmark script shares: timing one step, and recording the environment.

Results are only comparable between runs on the same machine and software, so
each results file carries the interpreter, platform and package versions.
"""

from __future__ import annotations

import gc
import os
import platform
import time
from collections.abc import Callable, Iterable
from importlib.metadata import PackageNotFoundError, version
from typing import Any


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
