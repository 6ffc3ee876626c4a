"""Code that opens the node a page shows: zarr-python and xarray, SPARQL, TensorStore."""

from __future__ import annotations

import json
import pprint
import urllib.parse
from typing import Any

from catalogue.errors import CatalogueError

from .graph_digest import NodeInfo
from .node_views import NodePage, Snippet


def local_path(url: str) -> str | None:
    """The local path of a ``file:`` URL (the form zarr-python and xarray take best)."""
    parsed = urllib.parse.urlsplit(url)
    if parsed.scheme != "file" or parsed.netloc not in ("", "localhost"):
        return None
    return urllib.parse.unquote(parsed.path)


def _open_args(url: str) -> tuple[str, str]:
    """The store location as a Python literal, and the storage options argument if any."""
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    path = local_path(url)
    location = json.dumps(path if path is not None else url)
    if scheme in ("s3", "s3a"):
        return location, ', storage_options={"anon": True}'
    if scheme in ("gs", "gcs"):
        return location, ', storage_options={"token": "anon"}'
    return location, ""


def _storage_note(url: str) -> str:
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    if scheme in ("s3", "s3a"):
        return ("storage_options={\"anon\": True} reads a public bucket; drop it to use your AWS "
                "credentials, or add endpoint_url for other S3 services (needs s3fs).")
    if scheme in ("gs", "gcs"):
        return "Anonymous access to a public bucket; drop storage_options to use your credentials (needs gcsfs)."
    if scheme in ("http", "https"):
        return "Reading over HTTP needs fsspec's HTTP support (aiohttp)."
    if scheme == "file":
        return "A local store, as catalogued on the harvesting machine."
    return ""


#: How a version of each kind is opened (``Repository.readonly_session``'s keyword).
_SESSION_KEYWORD = {"branch": "branch", "tag": "tag", "snapshot": "snapshot_id"}


def _icechunk_storage(repository: str) -> tuple[str, str]:
    """The ``icechunk`` storage call opening ``repository``, and a note on credentials."""
    parts = urllib.parse.urlsplit(repository)
    path = local_path(repository)
    if path is not None:
        return f"icechunk.local_filesystem_storage({json.dumps(path)})", "A local repository, as catalogued on the harvesting machine."
    if parts.scheme.lower() in ("s3", "s3a"):
        prefix = urllib.parse.unquote(parts.path.strip("/"))
        return (f"icechunk.s3_storage(bucket={json.dumps(parts.netloc)}, prefix={json.dumps(prefix)}, from_env=True)",
                "Credentials from the environment (AWS_*); anonymous=True for a public bucket.")
    # The catalogue reads repositories on local disks and S3 only (storage/icechunk.py)
    return f"...  # the icechunk storage of {repository}", "Open the repository with icechunk's storage for its URL."


def _icechunk_snippet(page: NodePage) -> Snippet | None:
    """Code opening a node of an Icechunk version: through a read-only session, as zarr-python
    reads a repository (its URL with ``@ref`` is the catalogue's name, not a path zarr opens)."""
    versions = page.versions
    if versions is None or versions.this is None:
        return None
    version = versions.this
    storage, note = _icechunk_storage(versions.repository)
    keyword = _SESSION_KEYWORD.get(version.kind, "snapshot_id")
    ref = version.snapshot if keyword == "snapshot_id" else version.name
    path = page.info.path
    path_arg = f", path={json.dumps(path)}" if path else ""
    opener = "zarr.open_group" if page.info.kind == "group" else "zarr.open_array"
    lines = ["import icechunk", "import zarr", "",
             f"repo = icechunk.Repository.open({storage})",
             f"session = repo.readonly_session({keyword}={json.dumps(ref)})",
             f"node = {opener}(session.store{path_arg}, mode=\"r\")"]
    if page.info.kind == "group":
        lines += ["for name, array in node.arrays():", "    print(name, array.shape, array.dtype)"]
    else:
        lines += ["print(node.shape, node.dtype, node.chunks)"]
    if versions.sources:
        note = (note + " " if note else "") + ("Virtual chunks are read from the storage listed under "
                                               "Versions: pass authorize_virtual_chunk_access to Repository.open.")
    return Snippet("python", "Python (icechunk, zarr-python)", "python", "\n".join(lines), note=note)


def python_snippet(page: NodePage, parent: NodeInfo | None) -> Snippet | None:
    """zarr-python (and xarray, where it applies) code opening the node."""
    if page.versions is not None and page.versions.this is not None:
        return _icechunk_snippet(page) if page.info.kind != "dependent" else None
    url = page.store_url
    location, options = _open_args(url)
    fmt = page.zarr_format
    fmt_arg = f", zarr_format={fmt}" if fmt in (2, 3) else ""
    info = page.info
    if info.kind == "dependent":
        return None
    if info.kind == "group":
        lines = [
            "import xarray as xr",
            "import zarr",
            "",
            "# The group and its arrays (metadata only; data is read when sliced).",
            f"group = zarr.open_group({location}, mode=\"r\"{fmt_arg}{options})",
            "for name, array in group.arrays():",
            "    print(name, array.shape, array.dtype)",
        ]
        own = [a for a in page.arrays if "/" not in a.relative]
        if any(a.dimension_names for a in own):
            lines += [
                "",
                "# The same arrays as a lazy xarray Dataset (CF decoding, coordinates).",
                "# consolidated=None uses consolidated metadata when the store has it.",
                f"ds = xr.open_zarr({location}{fmt_arg}, consolidated=None{options})",
                "print(ds)",
            ]
        return Snippet("python", "Python (zarr-python, xarray)", "python", "\n".join(lines),
                       note=_storage_note(url))
    array = page.array
    lines = ["import zarr", "", f"array = zarr.open_array({location}, mode=\"r\"{fmt_arg}{options})",
             "print(array.shape, array.dtype, array.chunks)"]
    if array is not None and array.dimensions:
        first = ", ".join(f"0:{d.chunk}" if d.chunk else ":" for d in array.dimensions)
        lines += ["", "# Read one chunk's worth of data (only the chunks a selection touches are fetched).",
                  f"block = array[{first}]"]
    if (array is not None and parent is not None and parent.kind == "group" and array.dimension_names
            and info.kind == "array"):
        parent_location, _ = _open_args(parent.iri)
        lines = ["import xarray as xr", *lines, "",
                 "# As a labelled xarray DataArray, with the coordinates of its group.",
                 f"ds = xr.open_zarr({parent_location}{fmt_arg}, consolidated=None{options})",
                 f"da = ds[{json.dumps(info.name)}]",
                 "print(da)"]
    return Snippet("python", "Python (zarr-python" + (", xarray)" if "xarray" in lines[0] else ")"),
                   "python", "\n".join(lines), note=_storage_note(url))


def sparql_snippets(page: NodePage, base: str) -> list[Snippet]:
    """DESCRIBE the node; for a group, also list the arrays below it.

    The IRI is written as ``<iri>``: pages are only made for IRIs that passed
    :func:`~catalogue.web.portal.params.iri_param`, which refuses every character an IRIREF cannot hold.
    """
    term = f"<{page.iri}>"
    describe = f"DESCRIBE {term}"
    out = [Snippet("sparql", "SPARQL: everything about this node", "sparql", describe,
                   run_link=f"{base}/sparql?" + urllib.parse.urlencode({"query": describe, "format": "turtle"}))]
    if page.info.kind == "group":
        query = (
            "SELECT ?array ?path ?dtype ?units ?standard_name WHERE {\n"
            f"  {term} zarr:member+ ?array .\n"
            "  ?array a zarr:Array ; zarr:path ?path ; zarr:dataType ?dtype .\n"
            "  OPTIONAL { ?array zarr:units ?units }\n"
            "  OPTIONAL { ?array zarr:standardName ?standard_name }\n"
            "} ORDER BY ?path"
        )
        out.append(Snippet("sparql-arrays", "SPARQL: the arrays below this group", "sparql", query,
                           run_link=f"{base}/sparql?" + urllib.parse.urlencode({"query": query, "format": "json"})))
    return out


def tensorstore_snippets(page: NodePage, docs: dict[str, Any] | None) -> list[Snippet]:
    """The TensorStore spec opening the array, as ``Catalogue.tensorstore_spec`` makes it.

    Built from the documents the page already rebuilt (a dependent array's
    chunks live under its primary array's URL), so it costs no extra query.
    """
    # The chunk layer (NumPy, fsspec, Icechunk's names) loads with the first array page, not with the server.
    from catalogue.chunks.layout import layout_from_documents
    from catalogue.chunks.tensorstore import tensorstore_spec

    if page.info.kind == "group" or page.array is None:
        return []
    primary = page.array.primary
    base_url = primary.iri if primary is not None else page.iri
    try:
        if docs is None:
            raise CatalogueError("its metadata could not be rebuilt from the graph")
        layout = layout_from_documents(docs, page.iri, base_url)
        spec = tensorstore_spec(layout, assume_metadata=False, dependent=base_url != page.iri)
    except Exception as exc:  # unsupported layouts, invalid arrays: say why instead of a snippet
        message = " ".join(str(exc).split())[:300] or type(exc).__name__
        return [Snippet("tensorstore", "TensorStore spec", "json", "",
                        note=f"No TensorStore spec for this array: {message}")]
    spec_json = json.dumps(spec, indent=2, ensure_ascii=False)
    code = "\n".join([
        "import tensorstore as ts",
        "",
        f"spec = {pprint.pformat(spec, indent=1, width=88, sort_dicts=False)}",
        "array = ts.open(spec, read=True).result()",
        "print(array.domain, array.dtype)",
    ])
    return [
        Snippet("tensorstore", "TensorStore spec (JSON)", "json", spec_json),
        Snippet("tensorstore-python", "TensorStore (Python)", "python", code),
    ]
