"""Opening a store from what a harvest SOURCE names: a local path, ``file://``, ``http(s)://`` or ``s3://``.

Each scheme gets its fsspec filesystem configured for the catalogue's own time limit and
retry policy (the libraries' retries are turned off, see :mod:`catalogue.storage.access`);
bad sources fail here as one-line usage errors, before anything is read.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import fsspec

from catalogue.errors import SourceNotFound, UsageError
from catalogue.model.paths import PATH_SAFE, quote_path
from catalogue.storage.access import (
    DEFAULT_CONCURRENCY,
    DEFAULT_MAX_DOCUMENT_BYTES,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    StoreAccess,
)
from catalogue.storage.icechunk import open_icechunk, split_icechunk
from catalogue.storage.references import open_references, split_reference

__all__ = ["open_store"]

#: Characters left alone when an http source URL is made a valid URI
#: (existing %XX escapes are kept, so an already-encoded URL is unchanged).
_URL_SAFE = PATH_SAFE + "%[]"

def _local_root(source: str) -> str:
    if source.startswith("file://"):
        parts = urlsplit(source)
        if parts.netloc not in ("", "localhost"):
            raise UsageError(f"{source}: file URLs with a host are not supported")
        return unquote(parts.path)
    return source


def _check_limits(timeout: float, retries: int, concurrency: int) -> None:
    if not timeout > 0:
        raise UsageError(f"timeout must be a positive number of seconds, not {timeout!r}")
    if retries < 0:
        raise UsageError(f"retries must be 0 or more, not {retries!r}")
    if concurrency < 1:
        raise UsageError(f"concurrency must be 1 or more, not {concurrency!r}")


def open_store(
    source: str,
    *,
    max_document_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES,
    storage_options: dict[str, Any] | None = None,
    timeout: float = DEFAULT_TIMEOUT,
    retries: int = DEFAULT_RETRIES,
    concurrency: int = DEFAULT_CONCURRENCY,
) -> StoreAccess:
    """Open the store a harvest SOURCE names: a local path, ``file://``, ``http(s)://`` or ``s3://`` URL.

    A kerchunk or VirtualiZarr reference set (a ``.json`` file, a ``.parq`` folder), or a
    node inside one, opens as a virtual store (:mod:`catalogue.storage.references`); a
    version of an Icechunk repository (``REPO@REF``, a local repository named without
    ``@`` opens ``main``) through Icechunk (:mod:`catalogue.storage.icechunk`).

    Local roots are made absolute (symlinks are *not* resolved, so the IRIs
    are the paths the operator gave) and must be existing folders. Remote
    roots are not contacted here: the first read says whether they can be
    reached (as :class:`~catalogue.errors.SourceUnavailable`).

    ``storage_options`` go to fsspec unchanged (s3fs: ``endpoint_url``,
    ``key``, ``secret``, ``anon``, ``client_kwargs``...; credentials may also
    come from the environment), except that the time limit and the retry
    policy of this module are filled in where the caller did not set them.
    ``timeout`` bounds each request attempt (seconds); ``retries`` is the
    number of retries after a transient failure; ``concurrency`` bounds the
    requests in flight.
    """
    _check_limits(timeout, retries, concurrency)
    scheme = source.split("://", 1)[0].lower() if "://" in source else ""
    limits = {"max_document_bytes": max_document_bytes, "timeout": timeout, "retries": retries,
              "concurrency": concurrency}
    repository = split_icechunk(source)
    if repository is not None:
        return open_icechunk(source, repository, storage_options=storage_options, **limits)
    reference = split_reference(source)
    if reference is not None:
        return open_references(source, reference, storage_options=storage_options, **limits)
    if scheme in ("http", "https"):
        return _open_http(source, scheme, storage_options, **limits)
    if scheme == "s3":
        return _open_s3(source, storage_options, **limits)
    if scheme not in ("", "file"):
        raise UsageError(
            f"{source}: '{scheme}://' stores are not supported; give a local path, or a file://, http(s):// or s3:// URL"
        )
    local = os.path.abspath(os.path.expanduser(_local_root(source)))
    if not os.path.exists(local):
        raise SourceNotFound(f"{local}: no such file or folder")
    if not os.path.isdir(local):
        raise SourceNotFound(f"{local}: is a file; give the folder of a Zarr hierarchy root")
    fs = fsspec.filesystem("file", **(storage_options or {}))
    url = Path(local).as_uri().rstrip("/")
    return StoreAccess(fs=fs, root=local.rstrip("/") or "/", url=url, **limits)  # type: ignore[arg-type]


def _open_http(source: str, scheme: str, storage_options: dict[str, Any] | None, **limits: Any) -> StoreAccess:
    import aiohttp

    parts = urlsplit(source)
    if not parts.hostname:
        raise UsageError(f"{source}: an http URL needs a host")
    if parts.query or parts.fragment:
        raise UsageError(f"{source}: a store URL cannot have a query or fragment (keys are appended to it)")
    # a valid URI (spaces and the like escaped, existing %XX escapes kept): it is the hierarchy IRI
    url = quote(source.rstrip("/"), safe=_URL_SAFE)
    options = dict(storage_options or {})
    client_kwargs = dict(options.pop("client_kwargs", None) or {})
    client_kwargs.setdefault("timeout", aiohttp.ClientTimeout(total=limits["timeout"]))
    options.setdefault("encoded", True)
    fs = fsspec.filesystem(scheme, client_kwargs=client_kwargs, **options)
    return StoreAccess(fs=fs, root=url, url=url, listable=False, **limits)


def _open_s3(source: str, storage_options: dict[str, Any] | None, **limits: Any) -> StoreAccess:
    bucket, _, prefix = source[len("s3://"):].strip("/").partition("/")
    if not bucket:
        raise UsageError(f"{source}: an s3 URL needs a bucket (s3://bucket/path/to/store.zarr)")
    prefix = prefix.strip("/")
    options = dict(storage_options or {})
    config_kwargs = dict(options.pop("config_kwargs", None) or {})
    config_kwargs.setdefault("connect_timeout", limits["timeout"])
    config_kwargs.setdefault("read_timeout", limits["timeout"])
    # botocore's own retries would multiply ours (and s3fs's) into minutes per unreachable key
    config_kwargs.setdefault("retries", {"max_attempts": 1, "mode": "standard"})
    try:
        fs = fsspec.filesystem("s3", config_kwargs=config_kwargs, **options)
    except ImportError as exc:  # pragma: no cover - s3fs is a dependency
        raise UsageError(f"{source}: s3:// stores need the s3fs package ({exc})") from exc
    fs.retries = 1  # s3fs retries some errors itself (5 times by default); ours apply instead
    fs.invalidate_cache()  # a cached instance may hold listings from an earlier harvest
    root = f"{bucket}/{prefix}" if prefix else bucket
    url = f"s3://{bucket}/{quote_path(prefix)}" if prefix else f"s3://{bucket}"
    return StoreAccess(fs=fs, root=root, url=url, **limits)
