"""A TensorStore spec that opens a catalogued array (seed: the TensorStore zarr3 driver).

``driver`` is ``zarr3`` for Zarr v3 and ``zarr`` for v2; ``kvstore`` is the
array's folder as a ``file``, ``http`` or ``s3`` kvstore. With
``assume_metadata`` the spec carries the array's full metadata from the
catalogue and TensorStore opens it without reading ``zarr.json``/``.zarray``.

Dependent arrays have no metadata document of their own and use the
``prefix`` chunk key encoding, which TensorStore does not know: their spec
always assumes the metadata, points the kvstore at the primary's folder plus
the prefix, and gives the base encoding. A suffix (or a prefix that is not a
folder, ending in ``/``) cannot be expressed and is an error.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import unquote, urlsplit

from catalogue.chunks.layout import ArrayLayout, UnsupportedArray
from catalogue.storage.icechunk import split_icechunk
from catalogue.storage.references import split_reference


def kvstore(url: str) -> dict[str, Any]:
    """A TensorStore kvstore for a folder URL (always with a trailing slash)."""
    if split_icechunk(url) is not None:
        raise UnsupportedArray(
            f"{url}: the array is in an Icechunk repository, which TensorStore cannot open; use "
            "`catalogue read`, or icechunk's own store with zarr-python or xarray")
    if split_reference(url) is not None:
        raise UnsupportedArray(
            f"{url}: the array is read through kerchunk/VirtualiZarr references, which TensorStore cannot "
            "open; use `catalogue read`, or fsspec's reference:// filesystem (`catalogue resolve` gives "
            "each chunk's file and byte range)")
    folder = url.rstrip("/") + "/"
    parts = urlsplit(folder)
    if parts.scheme == "file":
        return {"driver": "file", "path": unquote(parts.path)}
    if parts.scheme in ("http", "https"):
        return {"driver": "http", "base_url": folder}
    if parts.scheme == "s3":
        return {"driver": "s3", "bucket": parts.netloc, "path": unquote(parts.path.lstrip("/"))}
    raise UnsupportedArray(f"{url}: TensorStore has no kvstore for {parts.scheme!r} URLs here")


def tensorstore_spec(layout: ArrayLayout, *, assume_metadata: bool = False, dependent: bool = False) -> dict[str, Any]:
    encoding = layout.encoding
    base_url = layout.base_url
    metadata = dict(layout.metadata or {})
    if encoding.prefix or encoding.suffix:
        if encoding.suffix or not encoding.prefix.endswith("/"):
            raise UnsupportedArray(
                f"{layout.iri}: TensorStore cannot express the chunk key encoding "
                f"(prefix {encoding.prefix!r}, suffix {encoding.suffix!r}); only a folder prefix ending in '/'"
            )
        base_url = base_url.rstrip("/") + "/" + encoding.prefix.rstrip("/")
        metadata["chunk_key_encoding"] = encoding.as_v3()
        assume_metadata = True
    elif dependent:
        assume_metadata = True
    spec: dict[str, Any] = {"driver": "zarr3" if layout.zarr_format == 3 else "zarr", "kvstore": kvstore(base_url)}
    if assume_metadata:
        if layout.zarr_format == 3:
            metadata.pop("attributes", None)
        spec["metadata"] = metadata
        spec["open"] = True
        spec["assume_metadata"] = True
    return spec
