"""What a folder holds: its files and its folders, one listing each, for finding stores.

A hierarchy walk lists only folders (:meth:`StoreAccess.child_folders_many`), and never
over HTTP. Finding the stores below a folder or a bucket prefix that is not a store
itself (:mod:`catalogue.harvest.discover`) needs the file names too (a folder holding
``zarr.json`` is a store root), and on HTTP it reads the index page a server gives for
a folder URL (Apache's, nginx's ``autoindex``, Python's ``http.server``), through
fsspec's link parsing.

A listing that fails is returned as its error, in place, so that a caller knows which
folders it could not see (and, say, never prunes what is below them).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any
from urllib.parse import unquote

from catalogue.errors import CatalogueError, SourceUnavailable
from catalogue.storage.access import EMPTY_LISTING, Listing, StoreAccess

__all__ = ["Listing", "list_folders"]


def list_folders(store: StoreAccess, keys: Sequence[str]) -> list[Listing | CatalogueError]:
    """The listing of each folder ``key`` below the store root ("" is the root), in order;
    remote listings run concurrently (bounded by the store's ``concurrency``, each with
    its retries). A missing folder lists as empty."""
    if not keys:
        return []
    if not store.remote:
        return [_local(store, key) for key in keys]
    fs: Any = store.fs
    http = store.url.startswith(("http://", "https://"))

    def job(key: str) -> Callable[[], Awaitable[Any]]:
        # An HTTP folder's index is the URL with a trailing slash.
        path = store.key_url(key) + "/" if http else store._fs_path(key)
        return lambda: fs._ls(path, detail=True, **({} if http else {"refresh": True}))

    results = store._gather([(key, job(key)) for key in keys])
    out: list[Listing | CatalogueError] = []
    for key, result in zip(keys, results, strict=True):
        if isinstance(result, CatalogueError):
            out.append(result)
        elif isinstance(result, BaseException):
            out.append(SourceUnavailable(store.key_url(key), f"cannot list: {result}"))
        elif result is None:  # absent
            out.append(EMPTY_LISTING)
        else:
            out.append(_index_entries(store, key, result) if http else store.remote_listing(key, result))
    return out


def _index_entries(store: StoreAccess, key: str, entries: list[dict[str, Any]]) -> Listing:
    """A folder's listing from the links of its HTTP index page."""
    files, folders = set(), set()
    parent = store.key_url(key).rstrip("/") + "/"
    for entry in entries:
        raw = str(entry.get("name", ""))
        # Index pages link elsewhere too (sorting links, parents, other sites): only
        # the folder's own children count.
        if not raw.startswith(parent):
            continue
        rest = raw[len(parent):]
        if "?" in rest or "#" in rest or rest.strip("/").count("/"):
            continue
        name = rest.strip("/")
        if not name or name in (".", ".."):
            continue
        (folders if rest.endswith("/") else files).add(unquote(name))
    return Listing(tuple(sorted(files)), tuple(sorted(folders)))


def _local(store: StoreAccess, key: str) -> Listing | CatalogueError:
    try:
        return store.local_listing(key)
    except OSError as exc:
        return SourceUnavailable(store.key_url(key), f"cannot list: {exc.strerror or exc}")
