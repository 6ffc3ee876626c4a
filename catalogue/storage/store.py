"""One interface over every kind of store the harvester reads.

The harvester only ever needs three things from a store: read a small
document by key (or learn that it is absent), list the child folders of a
key, and say the URL of a key. Everything else (protocols, credentials,
retries) belongs to fsspec, so http and s3 stores plug in here later without
the harvester changing.
"""

from __future__ import annotations

import os
import posixpath
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote, urlsplit

import fsspec
from fsspec.implementations.local import LocalFileSystem

from catalogue.errors import DocumentError, SourceNotFound, UsageError

#: Metadata documents larger than this are refused: they are almost always
#: data stuffed into attributes, and reading them whole would let one hostile
#: store exhaust memory. Consolidated metadata gets a larger budget.
DEFAULT_MAX_DOCUMENT_BYTES = 4 * 1024 * 1024
CONSOLIDATED_FACTOR = 64

#: Characters left unescaped in node paths when they become IRIs.
_PATH_SAFE = "/!$&'()*+,;=:@-._~"


def quote_path(path: str) -> str:
    """Percent-encode a node path for use in an IRI (slashes kept)."""
    return quote(path, safe=_PATH_SAFE)


@dataclass
class StoreAccess:
    """A Zarr store root, read through an fsspec filesystem.

    ``url`` is the root URL without a trailing slash; it is the IRI of the
    hierarchy root and the prefix of every node IRI.
    """

    fs: fsspec.AbstractFileSystem
    root: str
    url: str
    max_document_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES
    _is_local: bool = field(init=False)

    def __post_init__(self) -> None:
        self._is_local = isinstance(self.fs, LocalFileSystem)

    # -------------------------------------------------------------- naming
    def _fs_path(self, key: str) -> str:
        return posixpath.join(self.root, key) if key else self.root

    def key_url(self, key: str) -> str:
        """The URL of a key (a document or a folder) below the root."""
        return f"{self.url}/{quote_path(key)}" if key else self.url

    def node_iri(self, path: str) -> str:
        """The IRI of the node at ``path``: root URL, slash, path."""
        return self.key_url(path)

    # ------------------------------------------------------------- reading
    def read(self, key: str, *, consolidated: bool = False) -> bytes | None:
        """The bytes of the document at ``key``, or ``None`` when it does not exist.

        Raises DocumentError when the key is a folder, is unreadable, or is
        larger than the document size limit (checked before reading).
        """
        path = self._fs_path(key)
        limit = self.max_document_bytes * (CONSOLIDATED_FACTOR if consolidated else 1)
        info = self._call(key, self.fs.info, path)
        if info is None:
            return None
        if info.get("type") == "directory":
            raise DocumentError(self.key_url(key), "is a folder, expected a JSON document", rule="document.unreadable")
        size = info.get("size")
        if size is not None and size > limit:
            raise DocumentError(
                self.key_url(key),
                f"document is {size:,} bytes, larger than the limit of {limit:,} bytes "
                "(see --max-document-size)",
                rule="json.too-large",
            )
        data = self._call(key, self.fs.cat_file, path)
        if data is None:
            return None
        if len(data) > limit:
            raise DocumentError(
                self.key_url(key),
                f"document is larger than the limit of {limit:,} bytes (see --max-document-size)",
                rule="json.too-large",
            )
        return data

    def exists(self, key: str) -> bool:
        """Whether ``key`` exists, without reading it (one metadata request)."""
        return self._call(key, self.fs.info, self._fs_path(key)) is not None

    def _call(self, key: str, method: Any, path: str) -> Any:
        """Run one fsspec call: None when the key is absent, DocumentError when unreadable."""
        try:
            return method(path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise DocumentError(self.key_url(key), f"cannot read: {exc.strerror or exc}") from exc

    # ---------------------------------------------------------------- data
    def read_ranges(self, keys: list[str], starts: list[int | None], ends: list[int | None]) -> list[bytes | None]:
        """Bytes ``[start, end)`` of each key (None for whole files; a negative start
        counts from the end); None where the key does not exist.

        One fsspec call for the lot: asynchronous filesystems (http, s3) fetch
        them concurrently, in bounded batches; local files are read in turn.
        No size limit applies: these are chunks, not metadata documents.
        """
        if not keys:
            return []
        results = self.fs.cat_ranges([self._fs_path(k) for k in keys], starts, ends, on_error="return")
        out: list[bytes | None] = []
        for key, result in zip(keys, results, strict=True):
            if isinstance(result, FileNotFoundError):
                out.append(None)
            elif isinstance(result, BaseException):
                raise DocumentError(self.key_url(key), f"cannot read: {result}", rule="document.unreadable") from result
            else:
                out.append(bytes(result))
        return out

    def list_keys(self) -> set[str] | None:
        """Every file key below the root (None when the store cannot be listed)."""
        try:
            found = self.fs.find(self.root)
        except (FileNotFoundError, NotImplementedError):
            return None
        root = self.root.rstrip("/") + "/"
        return {path[len(root):] for path in found if path.startswith(root)}

    def child_folders(self, key: str) -> list[str]:
        """Names of the folders directly below ``key``, sorted; empty if it cannot be listed."""
        try:
            entries = self.fs.ls(self._fs_path(key), detail=True)
        except (FileNotFoundError, NotADirectoryError):
            return []
        names = []
        for entry in entries:
            is_dir = entry.get("type") == "directory"
            if not is_dir and entry.get("islink"):
                # fsspec reports a symlink to a folder as type "other"; follow it
                # (loops are caught by the walker through real_location).
                is_dir = self.fs.isdir(entry["name"])
            if is_dir:
                name = posixpath.basename(entry["name"].rstrip("/"))
                if name and name not in (".", ".."):
                    names.append(name)
        return sorted(names)

    def real_location(self, key: str) -> str | None:
        """The symlink-free location of a folder, for loop detection (local stores only)."""
        if not self._is_local:
            return None
        return os.path.realpath(self._fs_path(key))


def _local_root(source: str) -> str:
    if source.startswith("file://"):
        parts = urlsplit(source)
        if parts.netloc not in ("", "localhost"):
            raise UsageError(f"{source}: file URLs with a host are not supported")
        return unquote(parts.path)
    return source


def open_store(
    source: str,
    *,
    max_document_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES,
    storage_options: dict[str, Any] | None = None,
) -> StoreAccess:
    """Open the store a harvest SOURCE names: a local path or a ``file://`` URL.

    Local roots are made absolute (symlinks are *not* resolved, so the IRIs
    are the paths the operator gave) and must be existing folders.
    """
    if "://" in source and not source.startswith("file://"):
        scheme = source.split("://", 1)[0]
        raise UsageError(
            f"{source}: '{scheme}://' stores are not supported yet; give a local path or file:// URL"
        )
    local = os.path.abspath(os.path.expanduser(_local_root(source)))
    if not os.path.exists(local):
        raise SourceNotFound(f"{local}: no such file or folder")
    if not os.path.isdir(local):
        raise SourceNotFound(f"{local}: is a file; give the folder of a Zarr hierarchy root")
    fs = fsspec.filesystem("file", **(storage_options or {}))
    url = Path(local).as_uri().rstrip("/")
    return StoreAccess(fs=fs, root=local.rstrip("/") or "/", url=url, max_document_bytes=max_document_bytes)
