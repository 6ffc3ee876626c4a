"""Read-only access to Zarr stores (local folders, ``file://``, ``http(s)://``, ``s3://``) via fsspec.

:mod:`~catalogue.storage.opening` opens a store from a source URL,
:mod:`~catalogue.storage.access` reads it (:class:`StoreAccess`),
:mod:`~catalogue.storage.retry` is the retry policy of remote requests and
:mod:`~catalogue.storage.failures` sorts their failures, and
:mod:`~catalogue.storage.limits` says how large a document may be.
"""

from __future__ import annotations

import importlib
from typing import Any

from catalogue.storage.limits import DEFAULT_MAX_DOCUMENT_BYTES

_LAZY = {"StoreAccess": "access", "open_store": "opening"}


def __getattr__(name: str) -> Any:
    """The stores' classes load (with fsspec) when first asked for, not with the package."""
    if name in _LAZY:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["DEFAULT_MAX_DOCUMENT_BYTES", "StoreAccess", "open_store"]
