"""Read-only access to Zarr stores (local folders, ``file://``, ``http(s)://``, ``s3://``) via fsspec."""

from catalogue.storage.store import DEFAULT_MAX_DOCUMENT_BYTES, StoreAccess, open_store

__all__ = ["DEFAULT_MAX_DOCUMENT_BYTES", "StoreAccess", "open_store"]
