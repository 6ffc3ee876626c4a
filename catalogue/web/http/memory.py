"""Few malloc arenas per server process, so that memory one thread frees another reuses.

glibc gives a thread that allocates while another holds the arena an arena of its own,
up to eight per core, and memory freed in one arena serves only allocations in it. The
server builds its answers (a page of ``/datasets`` over datasets of a hundred arrays is
a megabyte of JSON) on a pool of worker threads, so under many clients each of those
threads grows an arena of its own: on the scale-10 catalogue, 50 clients raised a
process's peak RSS from 190 MB (no search cache) to 356 MB with the 64 MB cache, and to
283 MB with two arenas, at the same throughput (``bench/search_scale.py``; the
operator's ``MALLOC_ARENA_MAX``, the documented way to say this, has the same effect).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from typing import Final

__all__ = ["ARENAS", "limit_arenas"]

#: Arenas a server process keeps (glibc's default: eight per core).
ARENAS: Final = 2
_M_ARENA_MAX: Final = -8  # glibc's <malloc.h>


def limit_arenas(count: int = ARENAS) -> bool:
    """Cap glibc's malloc arenas at ``count`` for threads started from now on; whether it
    was done (not where the operator set them, with ``MALLOC_ARENA_MAX`` or
    ``GLIBC_TUNABLES``, which glibc read at start, nor with another C library)."""
    if "MALLOC_ARENA_MAX" in os.environ or "glibc.malloc.arena_max" in os.environ.get("GLIBC_TUNABLES", ""):
        return False
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    try:
        libc = ctypes.CDLL(name)
    except OSError:
        return False
    if not hasattr(libc, "gnu_get_libc_version") or not hasattr(libc, "mallopt"):
        return False  # musl and others: their mallopt is not glibc's
    return bool(libc.mallopt(_M_ARENA_MAX, count))
