"""One interface over every kind of store the harvester reads.

The harvester only ever needs a few things from a store: read small
documents by key (or learn that they are absent), list the child folders of a
key, and say the URL of a key. Protocols and credentials belong to fsspec
(local folders, ``http(s)://`` through HTTPFileSystem, ``s3://`` through
s3fs); what this module adds on top is what a harvest from cron needs:

* **Bounded, classified failure.** Every remote request has a time limit and
  is retried with exponential backoff when the failure is transient (5xx,
  429 throttling, connection resets, time-outs). A missing document (404,
  ``NoSuchKey``) is simply absent and never retried; refused credentials are
  never retried. Whatever still fails becomes a one-line
  :class:`~catalogue.errors.SourceUnavailable` naming the URL, never a
  traceback from aiohttp or botocore.
* **Concurrency.** ``read_many`` fetches a whole level of a hierarchy at once
  (bounded by ``concurrency``), so a walk over HTTP costs one round trip per
  level rather than one per document.
* **One retry policy.** fsspec's HTTP ``info`` turns every error (500, 403,
  time-outs) into FileNotFoundError, and s3fs/botocore each retry on their own
  (seconds per unreachable request). So remote documents are read with a
  single ranged GET (which also enforces the size limit without a HEAD),
  and the libraries' own retries are turned off in favour of the policy here.
"""

from __future__ import annotations

import asyncio
import logging
import os
import posixpath
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, TypeVar

import fsspec
from fsspec.asyn import AsyncFileSystem, sync
from fsspec.implementations.local import LocalFileSystem

from catalogue.errors import CatalogueError, DocumentError, SourceUnavailable
from catalogue.model.paths import quote_path
from catalogue.model.strays import backup_of
from catalogue.storage.limits import CONSOLIDATED_FACTOR, DEFAULT_MAX_DOCUMENT_BYTES
from catalogue.storage.retry import attempt

log = logging.getLogger(__name__)

T = TypeVar("T")


#: Remote defaults: seconds per request attempt, retries after the first
#: attempt, and documents fetched at once.
DEFAULT_TIMEOUT = 30.0
DEFAULT_RETRIES = 3
DEFAULT_CONCURRENCY = 16
#: First backoff delay in seconds; it doubles with every retry (0.2, 0.4, 0.8, ...).
BACKOFF_SECONDS = 0.2

REMOTE_SCHEMES = ("http", "https", "s3")


@dataclass(frozen=True)
class Listing:
    """The names of the files and of the folders directly in one folder, sorted."""

    files: tuple[str, ...]
    folders: tuple[str, ...]


EMPTY_LISTING = Listing((), ())


# ------------------------------------------------------------------ store
@dataclass
class StoreAccess:
    """A Zarr store root, read through an fsspec filesystem.

    ``url`` is the root URL without a trailing slash; it is the IRI of the
    hierarchy root and the prefix of every node IRI. ``listable`` is False
    for stores whose folders cannot be listed (HTTP; S3 without list
    permission, found out on the first refused listing): the harvester then
    depends on consolidated metadata or an explicit node list.
    """

    fs: fsspec.AbstractFileSystem
    root: str
    url: str
    max_document_bytes: int = DEFAULT_MAX_DOCUMENT_BYTES
    timeout: float = DEFAULT_TIMEOUT
    retries: int = DEFAULT_RETRIES
    concurrency: int = DEFAULT_CONCURRENCY
    listable: bool = True
    #: First retry delay in seconds (doubles per retry); tests may shorten it.
    backoff: float = BACKOFF_SECONDS
    _is_local: bool = field(init=False)
    _is_async: bool = field(init=False)
    #: ETags seen in listings, by key: fingerprints prefer them (no extra requests).
    _etags: dict[str, str] = field(init=False, default_factory=dict)
    #: Whether a server answered a byte range with more than the range (it ignores ``Range``):
    #: a reader of many small ranges of a large chunk then fetches it whole each time.
    ranges_ignored: bool = field(init=False, default=False)
    #: Whether a key is a file of its own, so that a whole file sent for a range of it can be
    #: cut to the range (not where a key is a range of a larger file: references).
    _key_is_file: ClassVar[bool] = True

    def __post_init__(self) -> None:
        self._is_local = isinstance(self.fs, LocalFileSystem)
        self._is_async = isinstance(self.fs, AsyncFileSystem)

    @property
    def remote(self) -> bool:
        """Whether reads go over the network (http, s3): retries and concurrency apply."""
        return self._is_async

    # -------------------------------------------------------------- naming
    def _fs_path(self, key: str) -> str:
        if self._http:
            # HTTP paths are URLs: escape the key as in the IRI (the filesystem is
            # created with encoded=True, so what is fetched is exactly key_url).
            return self.key_url(key)
        return posixpath.join(self.root, key) if key else self.root

    @property
    def _http(self) -> bool:
        return self.url.startswith(("http://", "https://"))

    def key_url(self, key: str) -> str:
        """The URL of a key (a document or a folder) below the root."""
        return f"{self.url}/{quote_path(key)}" if key else self.url

    def node_iri(self, path: str) -> str:
        """The IRI of the node at ``path``: root URL, slash, path."""
        return self.key_url(path)

    def etag(self, key: str) -> str | None:
        """The ETag a listing reported for ``key``, if any (no request is made)."""
        return self._etags.get(key)

    # ------------------------------------------------------------- reading
    def _limit(self, consolidated: bool) -> int:
        return self.max_document_bytes * (CONSOLIDATED_FACTOR if consolidated else 1)

    def _too_large(self, key: str, limit: int, size: int | None = None) -> DocumentError:
        what = f"document is {size:,} bytes, larger than" if size is not None else "document is larger than"
        return DocumentError(
            self.key_url(key), f"{what} the limit of {limit:,} bytes (see --max-document-size)", rule="json.too-large"
        )

    def read(self, key: str, *, consolidated: bool = False) -> bytes | None:
        """The bytes of the document at ``key``, or ``None`` when it does not exist.

        Raises DocumentError when the key is a folder, is unreadable, or is
        larger than the document size limit (checked before reading where the
        store says the size; remote documents are fetched with a byte range
        one past the limit, so from servers that honour ranges an oversized
        one never arrives whole).
        Raises SourceUnavailable when a remote store cannot be reached,
        refuses access, or keeps failing after the retries.
        """
        if self._is_async:
            result = self._remote_documents([key], self._limit(consolidated))[0]
            if isinstance(result, BaseException):
                raise result
            return result
        return self._read_local(key, consolidated)

    def read_many(
        self, keys: Sequence[str], consolidated: bool = False, *, return_errors: bool = False
    ) -> list[bytes | CatalogueError | None]:
        """``read`` for many keys at once, in order; remote stores fetch them concurrently.

        At most ``concurrency`` requests are in flight; each is retried on its
        own. The first error is raised, unless ``return_errors`` is set: then
        a DocumentError or SourceUnavailable takes the place of that key's
        bytes, so one bad document does not hide the others.
        """
        if not keys:
            return []
        results: list[bytes | CatalogueError | None]
        if self._is_async:
            results = list(self._remote_documents(list(keys), self._limit(consolidated)))
        else:
            results = self._local_many(list(keys), consolidated)
        if not return_errors:
            for result in results:
                if isinstance(result, BaseException):
                    raise result
        return results

    def _local_many(self, keys: list[str], consolidated: bool) -> list[bytes | CatalogueError | None]:
        """Local reads go through ``read`` (one code path), one after the other.

        Measured on a 1,000-array hierarchy in the page cache, a thread pool
        made the walk twice as slow: a local read costs less than the hand-off.
        """
        out: list[bytes | CatalogueError | None] = []
        for key in keys:
            try:
                out.append(self.read(key, consolidated=consolidated))
            except CatalogueError as exc:
                out.append(exc)
        return out

    def _read_local(self, key: str, consolidated: bool) -> bytes | None:
        path = self._fs_path(key)
        limit = self._limit(consolidated)
        if self._is_local:
            return self._read_file(key, path, limit)
        return self._read_through_fsspec(key, path, limit)

    def _read_through_fsspec(self, key: str, path: str, limit: int) -> bytes | None:
        info = self._call(key, self.fs.info, path)
        if info is None:
            return None
        if info.get("type") == "directory":
            raise DocumentError(self.key_url(key), "is a folder, expected a JSON document", rule="document.unreadable")
        size = info.get("size")
        if size is not None and size > limit:
            raise self._too_large(key, limit, size)
        data = self._call(key, self.fs.cat_file, path)
        if data is None:
            return None
        if len(data) > limit:
            raise self._too_large(key, limit)
        return data

    def _read_file(self, key: str, path: str, limit: int) -> bytes | None:
        """A file of a local folder, read with the system's own calls (open, fstat, read):
        fsspec's ``info`` and ``cat_file`` cost as much again (a 1,000-array walk reads
        1,021 documents). Where the system refuses (a permission, a path through a file),
        the answer is fsspec's, as it always was."""
        try:
            with open(path, "rb") as file:
                size = os.fstat(file.fileno()).st_size
                if size > limit:
                    raise self._too_large(key, limit, size)
                # The size read, and one byte more: a file that grew since (or a device that
                # has no size) is read on only up to the limit and one byte past it.
                data = file.read(size + 1)
                if len(data) > size:
                    data += file.read(limit + 1 - len(data))
        except FileNotFoundError:
            return None
        except IsADirectoryError:
            raise DocumentError(self.key_url(key), "is a folder, expected a JSON document",
                                rule="document.unreadable") from None
        except OSError:
            return self._read_through_fsspec(key, path, limit)
        if len(data) > limit:
            raise self._too_large(key, limit)
        return data

    def exists(self, key: str) -> bool:
        """Whether ``key`` exists, without reading it (one request; remote: one byte)."""
        if self._is_async:
            result = self._remote_documents([key], 0)[0]
            if isinstance(result, DocumentError) and result.rule == "json.too-large":
                return True
            if isinstance(result, BaseException):
                raise result
            return result is not None
        return self._call(key, self.fs.info, self._fs_path(key)) is not None

    def _call(self, key: str, method: Any, path: str) -> Any:
        """Run one local fsspec call: None when the key is absent, DocumentError when unreadable."""
        try:
            return method(path)
        except FileNotFoundError:
            return None
        except OSError as exc:
            raise DocumentError(self.key_url(key), f"cannot read: {exc.strerror or exc}") from exc

    # ------------------------------------------------------ remote machinery
    def _run(self, make: Callable[[], Awaitable[T]]) -> T:
        """Run a coroutine on the filesystem's event loop (fsspec's IO thread)."""

        async def main() -> T:
            return await make()

        return sync(self.fs.loop, main)  # type: ignore[attr-defined]

    async def _attempt(self, key: str, request: Callable[[], Awaitable[T]]) -> T | bytes | None:
        """One remote request for ``key`` under the store's retry policy (:func:`~catalogue.storage.retry.attempt`)."""
        return await attempt(self.key_url(key), request, timeout=self.timeout, retries=self.retries,
                             backoff=self.backoff)

    def _remote_documents(self, keys: list[str], limit: int) -> list[bytes | CatalogueError | None]:
        """Fetch documents concurrently, each as bytes [0, limit] (one past the limit)."""
        fs: Any = self.fs

        def job(key: str) -> Callable[[], Awaitable[bytes]]:
            path = self._fs_path(key)
            return lambda: fs._cat_file(path, start=0, end=limit + 1)

        results = self._gather([(k, job(k)) for k in keys])
        out: list[bytes | CatalogueError | None] = []
        for key, result in zip(keys, results, strict=True):
            if isinstance(result, bytes | bytearray | memoryview) and len(result) > limit:
                out.append(self._too_large(key, limit))
            elif isinstance(result, bytearray | memoryview):
                out.append(bytes(result))
            else:
                out.append(result)
        return out

    def _gather(self, jobs: list[tuple[str, Callable[[], Awaitable[Any]]]]) -> list[Any]:
        """Run (key, request) jobs with the retry policy, ``concurrency`` at a time; errors returned in place."""

        async def main() -> list[Any]:
            gate = asyncio.Semaphore(self.concurrency)

            async def one(key: str, request: Callable[[], Awaitable[Any]]) -> Any:
                async with gate:
                    try:
                        return await self._attempt(key, request)
                    except CatalogueError as exc:
                        return exc

            return await asyncio.gather(*(one(k, r) for k, r in jobs))

        return self._run(main)

    # ---------------------------------------------------------------- data
    def read_ranges(self, keys: list[str], starts: list[int | None], ends: list[int | None]) -> list[bytes | None]:
        """Bytes ``[start, end)`` of each key (None for whole files; a negative start
        counts from the end); None where the key does not exist.

        Remote stores fetch them concurrently (``concurrency`` at a time) with
        the retry policy; local files are read in one fsspec call.
        No size limit applies: these are chunks, not metadata documents.
        """
        if not keys:
            return []
        if self._is_async:
            fs: Any = self.fs

            def job(path: str, start: int | None, end: int | None) -> Callable[[], Awaitable[bytes]]:
                # a whole file as "bytes=0-": one GET, where s3fs would HEAD first for the size
                first = 0 if start is None and end is None else start
                return lambda: fs._cat_file(path, start=first, end=end)

            jobs = [(k, job(self._fs_path(k), s, e)) for k, s, e in zip(keys, starts, ends, strict=True)]
            results = []
            for key, r, s, e in zip(keys, self._gather(jobs), starts, ends, strict=True):
                span = _requested_span(r, s, e)
                if span is not r:  # more came than was asked for: the server ignores Range
                    self.ranges_ignored = True
                    if not self._key_is_file:
                        span = SourceUnavailable(self.key_url(key), f"{len(r):,} bytes came for a range of "
                                                 f"{(e or 0) - (s or 0):,}: the server ignores byte ranges")
                results.append(span)
        else:
            results = self.fs.cat_ranges([self._fs_path(k) for k in keys], starts, ends, on_error="return")
        out: list[bytes | None] = []
        for key, result in zip(keys, results, strict=True):
            if result is None or isinstance(result, FileNotFoundError):
                out.append(None)
            elif isinstance(result, CatalogueError):
                raise result
            elif isinstance(result, BaseException):
                raise DocumentError(self.key_url(key), f"cannot read: {result}", rule="document.unreadable") from result
            else:
                out.append(bytes(result))
        return out

    def _remote_find(self) -> dict[str, dict[str, Any]] | None:
        """One recursive listing of the root (path -> info) with the retry policy; None when refused
        (the store is then unlistable from here on)."""
        fs: Any = self.fs
        try:
            found = self._run(lambda: self._attempt("", lambda: fs._find(self.root, detail=True)))
        except SourceUnavailable as exc:
            if exc.denied:
                self.listable = False
                return None
            raise
        return found or {}

    def list_keys(self) -> set[str] | None:
        """Every file key below the root (None when the store cannot be listed)."""
        if not self.listable:
            return None
        if self._is_async:
            found = self._remote_find()
            if found is None:
                return None
        else:
            try:
                found = self.fs.find(self.root)
            except (FileNotFoundError, NotImplementedError):
                return None
        root = self.root.rstrip("/") + "/"
        return {path[len(root):] for path in found if path.startswith(root)}

    def metadata_listing(self, names: Sequence[str]) -> dict[str, str] | None:
        """Key -> version token of every file below the root whose name is in ``names`` or
        is a copy of a document (:mod:`catalogue.model.strays`), from one recursive listing
        (S3: ListObjectsV2, 1,000 keys per page); None when the store cannot be listed that
        way (HTTP, refused listing, local folders).

        The token is the ETag the listing reports (S3 gives one for every object, so no
        document needs to be read to know whether it changed), else size and modification
        time. This is what makes a no-change re-harvest of a listable store cost one listing.
        """
        if not (self._is_async and self.listable and not self._http):
            return None
        found = self._remote_find()
        if found is None:
            return None
        wanted = set(names)
        root = self.root.rstrip("/") + "/"
        out: dict[str, str] = {}
        for path, info in found.items():
            name = posixpath.basename(path)
            # Copies of documents too: one appearing or going changes what validation says
            if not path.startswith(root) or (name not in wanted and backup_of(name) is None):
                continue
            key = path[len(root):]
            # Not remembered for fingerprints: those must not depend on whether this check ran
            # (harvest --full skips it), or every node would look changed.
            etag = info.get("ETag") or info.get("etag")
            if etag:
                out[key] = "etag:" + str(etag).strip('"')
            else:
                out[key] = f"size:{info.get('size')}:{info.get('LastModified') or info.get('mtime')}"
        return out

    # ------------------------------------------------------------- listing
    def child_folders(self, key: str) -> list[str]:
        """Names of the folders directly below ``key``, sorted; empty if it cannot be listed."""
        return self.child_folders_many([key])[0]

    def child_folders_many(self, keys: Sequence[str]) -> list[list[str]]:
        """``child_folders`` of many keys; remote listings run concurrently."""
        return [list(listing.folders) for listing in self.list_many(keys)]

    def list_many(self, keys: Sequence[str]) -> list[Listing]:
        """The files and folders directly below each of ``keys``; remote listings run concurrently.

        A store that refuses a listing (S3 without list permission) is marked
        unlistable from then on, and every key gets an empty listing.
        """
        if not keys:
            return []
        if not self.listable:
            return [EMPTY_LISTING for _ in keys]
        if not self._is_async:
            return [self.local_listing(k) for k in keys]
        fs: Any = self.fs

        def job(path: str) -> Callable[[], Awaitable[Any]]:
            return lambda: fs._ls(path, detail=True, refresh=True)

        results = self._gather([(k, job(self._fs_path(k))) for k in keys])
        out: list[Listing] = []
        for key, result in zip(keys, results, strict=True):
            if isinstance(result, SourceUnavailable) and result.denied:
                log.info("%s: listing refused; treating the store as unlistable", self.key_url(key))
                self.listable = False
                return [EMPTY_LISTING for _ in keys]
            if isinstance(result, CatalogueError):
                raise result
            out.append(self.remote_listing(key, result or []))
        return out

    def remote_listing(self, key: str, entries: list[dict[str, Any]]) -> Listing:
        """A folder's listing from the entries of fsspec's ``ls(detail=True)`` on a bucket (the
        ETags it gives are kept for fingerprints)."""
        files, folders = set(), set()
        for entry in entries:
            name = posixpath.basename(str(entry.get("name", "")).rstrip("/"))
            if not name or name in (".", ".."):
                continue
            if entry.get("type") == "directory":
                folders.add(name)
                continue
            files.add(name)
            if entry.get("ETag"):
                self._etags[posixpath.join(key, name) if key else name] = str(entry["ETag"]).strip('"')
        return Listing(tuple(sorted(files)), tuple(sorted(folders)))

    def local_listing(self, key: str) -> Listing:
        """The listing of a local folder (empty when it is missing; other OSErrors raise)."""
        try:
            entries = self.fs.ls(self._fs_path(key), detail=True)
        except (FileNotFoundError, NotADirectoryError):
            return EMPTY_LISTING
        files, folders = [], []
        for entry in entries:
            name = posixpath.basename(str(entry["name"]).rstrip("/"))
            if not name or name in (".", ".."):
                continue
            is_dir = entry.get("type") == "directory"
            if not is_dir and entry.get("islink"):
                # fsspec reports a symlink to a folder as type "other"; follow it
                # (loops are caught by the walker through real_location).
                is_dir = self.fs.isdir(entry["name"])
            (folders if is_dir else files).append(name)
        return Listing(tuple(sorted(files)), tuple(sorted(folders)))

    def local_files(self, key: str) -> list[str]:
        """The names of the files (not folders) in the local folder ``key``, from one
        ``scandir`` (empty when it cannot be listed or the store is not local): for folders
        known to hold few entries."""
        if not self._is_local:
            return []
        try:
            with os.scandir(self._fs_path(key)) as entries:
                return [entry.name for entry in entries if not entry.is_dir(follow_symlinks=False)]
        except OSError:
            return []

    def present(self, keys: Sequence[str]) -> list[str]:
        """Which of ``keys`` exist as files (not folders; a dangling symlink counts, as
        Emacs's lock is one), asked of local folders only: a stat each, where remotely it
        would be a request each, so nothing is asked and nothing is said to exist."""
        if not self._is_local:
            return []
        out = []
        for key in keys:
            path = self._fs_path(key)
            if os.path.lexists(path) and not os.path.isdir(path):
                out.append(key)
        return out

    def real_location(self, key: str) -> str | None:
        """The symlink-free location of a folder, for loop detection (local stores only)."""
        if not self._is_local:
            return None
        return os.path.realpath(self._fs_path(key))


def _requested_span(data: Any, start: int | None, end: int | None) -> Any:
    """Cut ``[start, end)`` out of a whole file that a server sent instead of the range.

    A server that ignores ``Range`` answers 200 with the whole body, and
    fsspec's HTTP ``cat_file`` passes it on as if it were the range: a shard
    index read would get the whole shard. When the length gives it away
    (longer than the span asked for), the span is taken from it. An open
    range from a positive start cannot be told apart; the chunk reader asks
    for those only as whole files (start 0).
    """
    if not isinstance(data, bytes | bytearray | memoryview):
        return data
    if start is not None and start < 0 and end is None and len(data) > -start:
        return data[start:]
    if start is not None and start >= 0 and end is not None and end >= 0 and len(data) > end - start:
        return data[start:end]
    return data
