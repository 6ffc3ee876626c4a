"""Icechunk repositories: each branch, tag or snapshot read as a Zarr store.

An Icechunk repository (``refs/``, ``snapshots/``, ``manifests/`` in a folder or under an
S3 prefix) holds versions of one Zarr v3 hierarchy: snapshots, named by branches (that
move) and tags (that do not). The catalogue reads one version at a time through
Icechunk's own store (the ``icechunk`` package), adapted here to the fsspec interface the
rest of the store layer speaks (:class:`IcechunkFileSystem`), so documents, listings,
coordinate values and chunk reads go through the same retry and size rules as any store.

**Naming.** A version is its repository's URL, ``@`` and the branch, tag or snapshot id:
``file:///data/era5.icechunk@main``, ``s3://bucket/repo@v1.0``,
``…@GG5VQST93YQXFECCK5PG``. That is the version's graph and the IRI of its root; its
nodes are below it (``…@main/t2m``). A repository named without ``@`` opens its ``main``
branch; ``catalogue harvest`` expands it into every branch and tag head (and, with
``--history N``, the N latest snapshots of each branch's ancestry) as
:func:`catalogue.harvest.discover.expand_sources` does for folders of stores.

**What the catalogue adds.** :meth:`IcechunkAccess.version` describes the version
(snapshot id, parent, time written, message, branch or tag), the change token of a
version is its snapshot id with its repository's virtual chunk containers
(:func:`version_token`; a harvest of the repository reads its refs once and opens no
unchanged version), and the containers are recorded, so a user sees which storage a
version's virtual chunks need and what reading it takes.
"""

from __future__ import annotations

import atexit
import hashlib
import logging
import os
import posixpath
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from itertools import islice
from pathlib import Path
from typing import Any, Final
from urllib.parse import unquote, urlsplit

from fsspec.asyn import AsyncFileSystem

from catalogue.errors import SourceNotFound, SourceUnavailable, UsageError
from catalogue.model.paths import quote_path
from catalogue.storage.access import StoreAccess

__all__ = ["Container", "IcechunkAccess", "IcechunkFileSystem", "Version", "container_of", "open_icechunk",
           "split_icechunk", "version_token"]

log = logging.getLogger(__name__)

#: The folders that make a folder an Icechunk repository.
_MARKERS = ("refs", "snapshots")
DEFAULT_BRANCH = "main"


@dataclass(frozen=True)
class Version:
    """One version of a repository: the ref it was named by and its snapshot."""

    ref: str
    #: "branch", "tag" or "snapshot" (named by its id).
    kind: str
    snapshot: str
    parent: str | None
    written_at: datetime
    message: str


def split_icechunk(source: str) -> tuple[str, str, str | None, str] | None:
    """``(repository location, repository URL, ref or None, path inside)`` when ``source``
    names an Icechunk repository, a version of one (``@ref``) or a node inside one."""
    scheme = source.split("://", 1)[0].lower() if "://" in source else ""
    if scheme in ("", "file"):
        path = unquote(urlsplit(source).path) if scheme == "file" else source
        parts = Path(os.path.abspath(os.path.expanduser(path))).parts
        for end in range(len(parts), 0, -1):
            name, at, ref = parts[end - 1].rpartition("@") if "@" in parts[end - 1] else (parts[end - 1], "", "")
            candidate = Path(*parts[: end - 1], name)
            if _is_local_repository(candidate):
                return str(candidate), candidate.as_uri(), (ref if at else None), "/".join(parts[end:])
        return None
    if scheme != "s3":
        return None
    bucket_and_path = source[len("s3://"):].rstrip("/")
    segments = bucket_and_path.split("/")
    for end in range(len(segments), 0, -1):
        name, at, ref = segments[end - 1].rpartition("@")
        if at and name and ref and not name.lower().endswith((".zarr", ".zr3", ".zarr2", ".zarr3")):
            location = "s3://" + "/".join([*segments[: end - 1], name])
            return location, location, unquote(ref), unquote("/".join(segments[end:]))
    return None


def _is_local_repository(path: Path) -> bool:
    """Icechunk's own layout: ``refs/branch.NAME/ref.json`` beside ``snapshots/``, and no
    Zarr document (a v2 store with groups named refs and snapshots is a store)."""
    if not all((path / marker).is_dir() for marker in _MARKERS):
        return False
    if any((path / name).exists() for name in ("zarr.json", ".zgroup", ".zarray", ".zmetadata")):
        return False
    return any(path.glob("refs/branch.*/ref.json"))


# ------------------------------------------------------------------ fsspec adapter
class IcechunkFileSystem(AsyncFileSystem):
    """Icechunk's (async, zarr-python) store as a read-only fsspec filesystem.

    Paths are store keys. Icechunk answers ``None`` for an absent key and an error for a
    key it cannot parse: both are FileNotFoundError here. Metadata documents are read
    whole (Icechunk panics on a range past their end) and cut to the range asked for.
    """

    cachable = False
    protocol = "icechunk"

    def __init__(self, store: Any, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.store = store

    async def _cat_file(self, path: str, start: int | None = None, end: int | None = None, **kwargs: Any) -> bytes:
        from zarr.abc.store import OffsetByteRequest, RangeByteRequest, SuffixByteRequest
        from zarr.core.buffer import default_buffer_prototype

        key = path.strip("/")
        whole = posixpath.basename(key) == "zarr.json" or (not start and end is None)
        request: Any = None
        if not whole:
            if start is not None and start < 0 and end is None:
                request = SuffixByteRequest(-start)
            elif end is None:
                request = OffsetByteRequest(start or 0)
            else:
                request = RangeByteRequest(start or 0, end)
        try:
            buffer = await self.store.get(key, default_buffer_prototype(), request)
        except Exception as exc:  # icechunk.IcechunkError: a key it cannot parse has no value
            if "invalid zarr key" in str(exc) or "node not found" in str(exc).lower():
                raise FileNotFoundError(path) from None
            raise OSError(f"{key}: {exc}".splitlines()[0]) from exc
        if buffer is None:
            raise FileNotFoundError(path)
        data = buffer.to_bytes()
        return data[start or 0: end] if whole and (start or end is not None) else data

    async def _ls(self, path: str, detail: bool = True, **kwargs: Any) -> list[Any]:
        prefix = path.strip("/")
        names = [name async for name in self.store.list_dir(prefix + "/" if prefix else "")]
        entries = []
        for name in sorted(set(names)):
            full = f"{prefix}/{name}" if prefix else name
            # Icechunk holds Zarr v3 only: below a node, zarr.json is a document, and every
            # other name a node or a chunk folder (the walker reads their zarr.json)
            kind = "file" if name == "zarr.json" else "directory"
            entries.append({"name": full, "type": kind, "size": 0})
        return entries if detail else [e["name"] for e in entries]

    async def _find(self, path: str, detail: bool = False, **kwargs: Any) -> Any:
        prefix = path.strip("/")
        keys = [key async for key in self.store.list_prefix(prefix + "/" if prefix else "")]
        if detail:
            return {key: {"name": key, "type": "file", "size": None} for key in keys}
        return keys

    async def _info(self, path: str, **kwargs: Any) -> dict[str, Any]:
        data = await self._cat_file(path)
        return {"name": path, "type": "file", "size": len(data)}


# ------------------------------------------------------------------ the store
class IcechunkAccess(StoreAccess):
    """One version of an Icechunk repository opened as a store (see the module docstring)."""

    repository: Any = None
    repository_url: str = ""
    #: The version's IRI (``REPO@REF``): the root of its graph.
    version_url: str = ""
    current: Version | None = None
    #: The read-only session the store reads through.
    session: Any = None

    @property
    def _http(self) -> bool:
        return False

    def chunk_storage(self, index: Sequence[int]) -> str | None:
        """Where the chunk at ``index`` of the array at the store's root is kept: ``native``
        (in the repository), ``virtual`` (a byte range of a file in a virtual chunk container),
        ``inline`` (in the manifest itself), or None when the version has no such chunk.
        Icechunk says which, not where a virtual chunk is (its API keeps that to itself)."""
        try:
            kind = self.session.chunk_type("/" + self.root, list(index))
        except Exception as exc:  # icechunk.IcechunkError: storage errors, a damaged manifest
            raise SourceUnavailable(self.key_url(""), f"Icechunk cannot say how chunk {list(index)} is "
                                    f"kept: {_first_line(exc)}") from None
        name = str(kind).rsplit(".", 1)[-1].lower()  # ChunkType.Virtual
        return None if name == "uninitialized" else name

    def metadata_listing(self, names: Any) -> dict[str, str] | None:
        """The version's token (:func:`version_token`): a snapshot never changes, so equal
        snapshots and containers mean an equal version."""
        return {"": version_token(self.current.snapshot, self.virtual_chunk_containers())} if self.current else None

    def real_location(self, key: str) -> str | None:
        return None

    def virtual_chunk_containers(self) -> list[Container]:
        """The repository's virtual chunk containers (the storage that virtual chunks are
        read from, and what reading it takes), by URL prefix."""
        containers = getattr(self.repository.config, "virtual_chunk_containers", None) or {}
        found = {container_of(getattr(c, "url_prefix", None) or str(name), getattr(c, "store", None))
                 for name, c in containers.items()}
        return sorted(found, key=lambda c: c.prefix)

    def versions(self, history: int = 0) -> list[Version]:
        """The head of every branch and tag; with ``history``, also up to that many snapshots
        of each branch's ancestry (newest first, the head included), each named by its id."""
        return repository_versions(self.repository, history, self.repository_url)


@dataclass(frozen=True)
class Container:
    """A virtual chunk container of a repository: where its virtual chunks are, and what
    reading them takes. Icechunk keeps no credentials in a repository: ``anonymous`` says
    whether the storage is read without them (None where the configuration does not say),
    ``requester_pays`` whether the reader is billed."""

    prefix: str
    #: Icechunk's kind of object store: "s3", "s3compatible", "gcs", "azure", "http",
    #: "localfilesystem", "tigris", "inmemory" (lower case), or "" when unknown.
    storage: str = ""
    region: str | None = None
    endpoint: str | None = None
    anonymous: bool | None = None
    requester_pays: bool | None = None


def container_of(prefix: str, store: Any) -> Container:
    """The :class:`Container` of a URL prefix and Icechunk's store configuration (its Python
    classes are named ``PyObjectStoreConfig_<Kind>``, S3's options under ``_0``)."""
    kind = type(store).__name__.rpartition("_")[2].lower() if store is not None else ""
    options = getattr(store, "_0", None)
    region, endpoint = getattr(options, "region", None), getattr(options, "endpoint_url", None)
    anonymous, pays = getattr(options, "anonymous", None), getattr(options, "requester_pays", None)
    return Container(prefix=prefix, storage=kind, region=region if isinstance(region, str) else None,
                     endpoint=endpoint if isinstance(endpoint, str) else None,
                     anonymous=anonymous if isinstance(anonymous, bool) else None,
                     requester_pays=pays if isinstance(pays, bool) else None)


def version_token(snapshot: str, containers: Sequence[Container] = ()) -> str:
    """A version's change token (:meth:`IcechunkAccess.metadata_listing`), also made by the
    expansion that listed the repository's versions: its snapshot, and its virtual chunk
    containers, which live in the repository's configuration, outside every snapshot (a
    changed container is a changed description of the version)."""
    token = f"snapshot:{snapshot}"
    if containers:
        described = repr(sorted(containers, key=lambda c: c.prefix)).encode()
        token += f" containers:{hashlib.blake2b(described, digest_size=8).hexdigest()}"
    return token


def repository_versions(repository: Any, history: int = 0, url: str = "") -> list[Version]:
    try:
        return _versions(repository, history)
    except Exception as exc:  # icechunk.IcechunkError, storage errors: one line naming the repository
        raise SourceUnavailable(url, f"cannot list the repository's versions: {_first_line(exc)}") from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0].strip(" x") if text else type(exc).__name__


def _versions(repository: Any, history: int) -> list[Version]:
    out: dict[str, Version] = {}
    for kind, names in (("branch", sorted(repository.list_branches())), ("tag", sorted(repository.list_tags()))):
        for name in names:
            try:
                # only as far back as asked: an ancestry may be thousands of snapshots long
                ancestry = list(islice(repository.ancestry(branch=name) if kind == "branch"
                                       else repository.ancestry(tag=name), history + 1 if kind == "branch" else 1))
            except Exception as exc:  # a ref Icechunk lists but cannot follow: the others go on
                log.warning("Icechunk %s %r: cannot read its history (%s); not catalogued", kind, name,
                            _first_line(exc))
                continue
            for depth, snapshot in enumerate(ancestry):
                if depth == 0:
                    out[f"{kind}:{name}"] = _version(name, kind, snapshot)
                if kind != "branch" or depth >= history:
                    break
                if snapshot.parent_id is None:  # the empty snapshot a repository starts with
                    break
                out.setdefault(f"snapshot:{snapshot.id}", _version(snapshot.id, "snapshot", snapshot))
    return list(out.values())


def _version(ref: str, kind: str, snapshot: Any) -> Version:
    return Version(ref=ref, kind=kind, snapshot=snapshot.id, parent=snapshot.parent_id,
                   written_at=snapshot.written_at, message=snapshot.message or "")


def _storage(location: str, options: dict[str, Any]) -> Any:
    """Icechunk storage for a local folder or an ``s3://`` prefix; s3fs-style
    ``storage_options`` (key, secret, endpoint_url, client_kwargs.region_name, anon) mapped."""
    import icechunk

    if not location.startswith("s3://"):
        return icechunk.local_filesystem_storage(location)
    bucket, _, prefix = location[len("s3://"):].partition("/")
    endpoint = options.get("endpoint_url") or (options.get("client_kwargs") or {}).get("endpoint_url")
    region = (options.get("client_kwargs") or {}).get("region_name") or options.get("region")
    return icechunk.s3_storage(
        bucket=bucket, prefix=prefix or None, region=region, endpoint_url=endpoint,
        allow_http=bool(endpoint and endpoint.startswith("http://")), force_path_style=bool(endpoint),
        access_key_id=options.get("key"), secret_access_key=options.get("secret"),
        session_token=options.get("token"), anonymous=True if options.get("anon") else None,
        from_env=None if options.get("key") or options.get("anon") else True,
    )


def open_icechunk(source: str, split: tuple[str, str, str | None, str], *,
                  storage_options: dict[str, Any] | None, **limits: Any) -> IcechunkAccess:
    """The version ``split`` names (:func:`split_icechunk`; the ``main`` branch when none),
    opened read-only as a store rooted at the path inside it."""
    try:
        import icechunk
    except ImportError as exc:  # pragma: no cover - a runtime dependency
        raise UsageError(f"{source}: Icechunk repositories need the icechunk package ({exc})") from None
    location, url, ref, inner = split
    options = dict(storage_options or {})
    _quiet_logs(icechunk)
    _settle_before_exit()
    try:
        storage = _storage(location, options)
        # Virtual chunks are read only from the containers the repository declares, with
        # credentials from the environment (as fsspec finds them for any other store).
        config = icechunk.Repository.fetch_config(storage)
        containers = list((config.virtual_chunk_containers or {}) if config is not None else {})
        if location.startswith("s3://"):  # a remote repository may not make us read local files
            containers = [prefix for prefix in containers if not prefix.startswith("file:")]
        repository = icechunk.Repository.open(
            storage, authorize_virtual_chunk_access=icechunk.containers_credentials(
                {prefix: None for prefix in containers}) if containers else None)
    except Exception as exc:  # icechunk.IcechunkError and the storage's own errors
        message = _first_line(exc)
        if location.startswith("s3://"):
            raise SourceUnavailable(url, f"cannot open the Icechunk repository: {message}") from None
        raise SourceNotFound(f"{url}: not an Icechunk repository ({message})") from None
    ref = ref or DEFAULT_BRANCH
    try:
        version, session = _session(repository, url, ref)
    except SourceNotFound:
        raise
    except Exception as exc:  # icechunk.IcechunkError: a ref it lists but cannot read, storage errors
        raise SourceUnavailable(f"{url}@{ref}", f"cannot open the version: {_first_line(exc)}") from None
    inner = inner.strip("/")
    version_url = f"{url}@{quote_path(ref)}"
    store_url = f"{version_url}/{quote_path(inner)}" if inner else version_url
    fs = IcechunkFileSystem(session.store)
    access = IcechunkAccess(fs=fs, root=inner, url=store_url, listable=True, **limits)
    access.repository, access.repository_url, access.current = repository, url, version
    access.session = session
    access.version_url = version_url
    return access


#: How long a process that read through Icechunk waits, as it exits, for Icechunk's
#: threads to leave the interpreter (:func:`_settle_before_exit`).
SETTLE_SECONDS: Final = 0.05
_SETTLE_REGISTERED = threading.Event()


def _settle_before_exit() -> None:
    """Let Icechunk's threads leave Python before the interpreter is finalised.

    Icechunk completes each read on a thread of its own (tokio), which wakes the asyncio
    loop waiting for it by writing to the loop's socket, the interpreter lock released,
    and takes the lock back to return. If the process has meanwhile got its answer and
    begun to exit, taking the lock after finalisation makes Python end that thread,
    and ending a thread that is inside Rust code aborts the process: ``catalogue resolve``
    printed its answer, then died of SIGABRT (exit 134) in 17 of 200 runs with both cores
    of the machine busy. A short sleep at exit, the lock released, lets such a thread
    return first: 0 of 200 runs under the same load."""
    if not _SETTLE_REGISTERED.is_set():
        _SETTLE_REGISTERED.set()
        atexit.register(time.sleep, SETTLE_SECONDS)


def _quiet_logs(icechunk: Any) -> None:
    """Icechunk's own log (Rust, to stderr) at errors only, unless ``ICECHUNK_LOG`` says
    otherwise: it warns on every open of a local repository that local storage is unsafe
    for concurrent *commits*, which a catalogue that only reads need not print per version."""
    if "ICECHUNK_LOG" not in os.environ:
        icechunk.set_logs_filter("icechunk=error")


def _session(repository: Any, url: str, ref: str) -> tuple[Version, Any]:
    """The read-only session of ``ref``: a branch, else a tag, else a snapshot id."""
    branches, tags = set(repository.list_branches()), set(repository.list_tags())
    if ref in branches:
        kind, session = "branch", repository.readonly_session(branch=ref)
        snapshot = next(iter(repository.ancestry(branch=ref)))
    elif ref in tags:
        kind, session = "tag", repository.readonly_session(tag=ref)
        snapshot = next(iter(repository.ancestry(tag=ref)))
    else:
        try:
            session = repository.readonly_session(snapshot_id=ref)
            snapshot = next(iter(repository.ancestry(snapshot_id=ref)))
        except Exception:
            known = ", ".join(sorted(branches | tags)) or "none"
            raise SourceNotFound(f"{url}@{ref}: no branch, tag or snapshot {ref!r} (branches and tags: {known})") \
                from None
        kind = "snapshot"
    return _version(ref, kind, snapshot), session
