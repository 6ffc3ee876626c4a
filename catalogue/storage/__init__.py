"""Read-only access to Zarr stores (local folders, ``file://``, ``http(s)://``, ``s3://``) via fsspec.

:mod:`~catalogue.storage.opening` opens a store from a source URL,
:mod:`~catalogue.storage.access` reads it (:class:`StoreAccess`),
:mod:`~catalogue.storage.retry` is the retry policy of remote requests and
:mod:`~catalogue.storage.failures` sorts their failures.
"""

from catalogue.storage.access import DEFAULT_MAX_DOCUMENT_BYTES, StoreAccess
from catalogue.storage.opening import open_store

__all__ = ["DEFAULT_MAX_DOCUMENT_BYTES", "StoreAccess", "open_store"]
