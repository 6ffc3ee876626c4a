"""Virtual stores: kerchunk and VirtualiZarr reference sets, read as Zarr stores.

A reference set maps every key of a Zarr store either to inline content (the metadata
documents, small chunks) or to a byte range of another file: NetCDF/HDF5, GRIB or TIFF
archives that were never converted. fsspec's ``ReferenceFileSystem`` reads all three
formats the tools write, and is what this module opens:

* kerchunk JSON, version 0 (a flat key -> value mapping) and version 1
  (``{"version": 1, "refs": ..., "templates": ..., "gen": ...}``);
* kerchunk parquet references (``refs_to_dataframe``, VirtualiZarr's
  ``to_kerchunk(format="parquet")``): a folder with a ``.zmetadata`` that holds
  ``record_size``, and ``refs.N.parq`` files per array, read lazily.

**Naming.** The reference file (or parquet folder) is the store root: its URL is the
hierarchy's IRI and node IRIs are below it (``file:///refs/era5.json/t2m``), so an array
IRI names both the reference set and the array inside it. A source is taken for a
reference set by its name: a file (local, ``http(s)://``, ``s3://``) whose name ends in
``.json``, or a folder whose name ends in ``.parq`` or ``.parquet``; a local ``.json``
file must hold a JSON object.

**What the catalogue adds.** The distinct archive files the references point into
(:meth:`ReferenceAccess.referenced_files`, recorded as ``dct:source`` of the hierarchy),
each chunk's archive URL and byte range (:meth:`ReferenceAccess.location`, used by
``catalogue resolve``), and a change token of the reference file itself, so that an
unchanged reference set costs one look at it. Reads (``catalogue read``, coordinate
values for the extents) go through the references to the archives, with the store's
retry policy; ``storage_options`` apply to the reference file and to the archives.
"""

from __future__ import annotations

import operator
import os
import posixpath
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import unquote, urlsplit

from catalogue.errors import DocumentError, SourceNotFound, SourceUnavailable, UsageError
from catalogue.model.paths import quote_path
from catalogue.storage.access import StoreAccess

__all__ = ["REFERENCE_SUFFIXES", "ChunkReference", "ReferenceAccess", "open_references", "split_reference"]

#: Names taken for reference sets: JSON files, and parquet reference folders.
JSON_SUFFIXES = (".json",)
PARQUET_SUFFIXES = (".parq", ".parquet")
REFERENCE_SUFFIXES = JSON_SUFFIXES + PARQUET_SUFFIXES
#: Zarr metadata keys: a reference set without any of them is no Zarr store.
_ZARR_KEYS = (".zgroup", ".zarray", ".zattrs", ".zmetadata", "zarr.json")


@dataclass(frozen=True)
class ChunkReference:
    """Where a chunk's bytes are: ``url`` bytes ``[offset, offset + length)``; a whole file
    when ``length`` is None; inline in the reference set when ``url`` is None."""

    url: str | None
    offset: int = 0
    length: int | None = None

    def as_json(self) -> dict[str, Any]:
        if self.url is None:
            return {"inline": True, "length": self.length}
        return {"url": self.url, "offset": self.offset, "length": self.length}


def split_reference(source: str) -> tuple[str, str, str] | None:
    """``(reference location, its URL, path inside)`` when ``source`` names a reference set
    or a node inside one, else None. The location is what fsspec opens (a local path or a
    URL); the URL is the hierarchy IRI."""
    scheme = source.split("://", 1)[0].lower() if "://" in source else ""
    if scheme in ("", "file"):
        path = unquote(urlsplit(source).path) if scheme == "file" else source
        path = os.path.abspath(os.path.expanduser(path))
        parts = Path(path).parts
        for end in range(len(parts), 0, -1):
            candidate = Path(*parts[:end])
            if _is_local_reference(candidate):
                inner = "/".join(parts[end:])
                return str(candidate), candidate.as_uri(), inner
        return None
    if scheme not in ("http", "https", "s3"):
        return None
    base, _, query = source.partition("?")
    if query:
        return None
    head, _, rest = base.partition("://")
    segments = rest.rstrip("/").split("/")
    for end in range(len(segments), 1, -1):
        if segments[end - 1].lower().endswith(REFERENCE_SUFFIXES):
            location = f"{head}://{'/'.join(segments[:end])}"
            return location, location, unquote("/".join(segments[end:]))
    return None


def _is_local_reference(path: Path) -> bool:
    name = path.name.lower()
    if name.endswith(JSON_SUFFIXES):
        return path.is_file()
    if name.endswith(PARQUET_SUFFIXES):
        return path.is_dir() and (path / ".zmetadata").is_file()
    return False


class ReferenceAccess(StoreAccess):
    """A reference set opened as a store (see the module docstring)."""

    #: The reference file or folder as fsspec opened it, and the filesystem it is on.
    reference_location: str = ""
    target: Any = None
    #: A key is a byte range of an archive file: a whole file sent for a range of the key
    #: cannot be cut to it here (the offsets are the file's, not the key's).
    _key_is_file: ClassVar[bool] = False

    @property
    def _http(self) -> bool:
        return False  # keys are reference keys, whatever the reference file is served over

    def list_keys(self) -> set[str] | None:
        refs = self.fs.references  # type: ignore[attr-defined]
        prefix = self.root + "/" if self.root else ""
        return {k[len(prefix):] for k in _keys(refs) if k.startswith(prefix)}

    def metadata_listing(self, names: Any) -> dict[str, str] | None:
        """The reference file's own change token (size and time, or ETag): references are
        rewritten whole, so one look at the file tells whether anything changed."""
        target = self.target
        try:
            info = target.info(_target_path(self.reference_location, target))
        except (OSError, ValueError):
            return None
        if info.get("type") == "directory":  # parquet: the metadata document changes with every rewrite
            try:
                info = target.info(posixpath.join(_target_path(self.reference_location, target), ".zmetadata"))
            except (OSError, ValueError):
                return None
        token = info.get("ETag") or info.get("etag")
        if token:
            return {"": f"etag:{str(token).strip(chr(34))}"}
        moment = info.get("LastModified") or info.get("Last-Modified") or info.get("last-modified") or info.get("mtime")
        if moment is None:  # nothing tells a rewrite of the same size: read it all
            return None
        return {"": f"size:{info.get('size')}:{moment}"}

    def real_location(self, key: str) -> str | None:
        return None

    def location(self, key: str) -> ChunkReference | None:
        """Where ``key``'s bytes are (None when the reference set has no such key: a fill chunk)."""
        full = posixpath.join(self.root, key) if self.root else key
        try:
            ref = self.fs.references[full]  # type: ignore[attr-defined]
        except (KeyError, FileNotFoundError):
            return None
        if isinstance(ref, bytes | str):
            return ChunkReference(None, 0, len(ref))
        ref = list(ref)
        url = ref[0] if ref and isinstance(ref[0], str) and ref[0] else None
        if url is None:
            return None
        if len(ref) >= 3:
            offset, length = _whole(ref[1]), _whole(ref[2])
            if offset is None or length is None or offset < 0 or length < 0:
                raise DocumentError(self.key_url(key), f"reference {ref!r}: offset and length must be non-negative "
                                                       "integers", rule="document.unreadable")
            return ChunkReference(_absolute(url), offset, length)
        return ChunkReference(_absolute(url))

    def referenced_files(self) -> list[str]:
        """The distinct archive files the references point into, as absolute URLs, sorted."""
        return sorted({_absolute(target) for _key, target in _targets(self.fs.references)})  # type: ignore[attr-defined]


def _whole(value: Any) -> int | None:
    """An integer (Python's or NumPy's, as parquet references give them), else None."""
    if isinstance(value, bool):
        return None
    try:
        return operator.index(value)
    except TypeError:
        return None


def _targets(refs: Any) -> Iterator[tuple[str, str]]:
    """``(key, archive URL or path)`` of every reference that points into a file (inline
    ones, and parquet rows whose path is empty or NaN, are left out)."""
    for key in _keys(refs):
        try:
            ref = refs[key]
        except (KeyError, FileNotFoundError):
            continue
        if isinstance(ref, list | tuple) and ref and isinstance(ref[0], str) and ref[0]:
            yield key, ref[0]


def _keys(refs: Any) -> list[str]:
    """The keys of a reference mapping (a dict, or fsspec's lazy parquet mapper)."""
    if isinstance(refs, dict):
        return list(refs)
    return [k for k in refs]


def _absolute(url: str) -> str:
    """A referenced location as a URL: local paths become ``file://`` URLs (a relative path
    is relative to the working directory, as fsspec reads it)."""
    if "://" in url:
        return url
    return Path(url).expanduser().absolute().as_uri()


def _refuse_local_targets(url: str, refs: Any) -> None:
    """A reference set that is not itself a local file may only point to remote archives:
    otherwise anyone who can publish one (or answer for a URL) could make the harvester,
    ``catalogue read`` or the server's previews read files of the machine they run on."""
    import fsspec

    for key, target in _targets(refs):
        if "://" not in target or fsspec.utils.get_protocol(target) in ("file", "local"):
            raise UsageError(f"{url}: refused: {key} refers to the local file {target!r}, and a reference "
                             "set that is not itself local may only refer to remote archives")


def _remote_protocol(refs: Any) -> str | None:
    """The protocol of the first archive a reference mapping points into (None: none)."""
    import fsspec

    return next((fsspec.utils.get_protocol(target) for _key, target in _targets(refs)), None)


def _target_path(location: str, target: Any) -> str:
    return target._strip_protocol(location) if hasattr(target, "_strip_protocol") else location


def open_references(source: str, split: tuple[str, str, str], *, storage_options: dict[str, Any] | None,
                    **limits: Any) -> ReferenceAccess:
    """The reference set ``split`` names (:func:`split_reference`), opened as a store rooted at
    the path inside it. Refuses, in one line naming the file, what is not a reference set."""
    import fsspec

    location, url, inner = split
    options = dict(storage_options or {})
    target_protocol = fsspec.utils.get_protocol(location)
    target = fsspec.filesystem(target_protocol, **options)
    try:
        if location.lower().rstrip("/").endswith(PARQUET_SUFFIXES):
            from fsspec.implementations.reference import LazyReferenceMapper

            # pyarrow: pandas deprecates the fastparquet engine fsspec would choose
            fo: Any = LazyReferenceMapper(target._strip_protocol(location), fs=target, engine="pyarrow")
            # fsspec guesses the archives' protocol from the first reference it meets, and
            # fails on an inline one read through pyarrow (its path is NaN): said here instead
            # (all inline: any protocol will do, none is used)
            remote = _remote_protocol(fo) or target_protocol
        else:
            fo, remote = location, None
        fs = fsspec.filesystem("reference", fo=fo, target_protocol=target_protocol, target_options=options,
                               remote_protocol=remote, remote_options=options, skip_instance_cache=True)
    except FileNotFoundError as exc:
        raise SourceNotFound(f"{url}: no such reference file ({exc})") from None
    except UnicodeDecodeError as exc:
        raise UsageError(f"{url}: not a kerchunk reference file: invalid JSON ({exc})") from None
    except ImportError as exc:
        raise UsageError(f"{url}: parquet references need pandas and fastparquet or pyarrow ({exc})") from None
    except (OSError, TypeError, ValueError, KeyError, AttributeError) as exc:
        if "JSONDecodeError" in type(exc).__name__:  # the json module's, or ujson's (fsspec prefers it)
            raise UsageError(f"{url}: not a kerchunk reference file: invalid JSON ({exc})") from None
        if isinstance(exc, OSError) and "://" in location and not location.startswith("file://"):
            raise SourceUnavailable(url, f"cannot read the references: {exc}") from None
        raise UsageError(f"{url}: not a kerchunk reference set ({type(exc).__name__}: {exc})") from None
    refs = fs.references
    if target_protocol not in ("file", "local"):
        _refuse_local_targets(url, refs)
    if isinstance(refs, dict) and not any(k.rsplit("/", 1)[-1] in _ZARR_KEYS for k in refs):
        raise UsageError(f"{url}: not a kerchunk reference set: none of its {len(refs):,} keys is a Zarr "
                         "metadata document (.zgroup, .zarray, zarr.json)")
    inner = inner.strip("/")
    store_url = f"{url}/{quote_path(inner)}" if inner else url
    access = ReferenceAccess(fs=fs, root=inner, url=store_url, listable=True, **limits)
    access.reference_location = location
    access.target = target
    return access
