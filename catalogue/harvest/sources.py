"""Harvest sources: URLs given on the command line or listed in a TOML sources file.

A sources file lists ``[[source]]`` tables::

    [[source]]
    url = "s3://climate/era5.zarr"
    name = "ERA5 single levels"            # optional, for reports
    storage_options = { endpoint_url = "https://s3.example.org", anon = true }
    include = ["*"]                        # optional fnmatch globs on node paths
    exclude = ["scratch/*"]
    max_depth = 3                          # optional; the root is depth 0
    nodes = ["temperature", "wind/u"]      # optional: nodes an unlistable store cannot reveal
    concurrency = 32                       # optional overrides of --concurrency, --timeout, --retries
    timeout = 10.0
    retries = 5

``storage_options`` go to fsspec unchanged, so every option of the
filesystem (s3fs's ``endpoint_url``, ``key``, ``secret``, ``anon``,
``client_kwargs``; credentials from the environment when absent) works.
Every error names the file and the entry (``sources.toml: source[2].include``).
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from catalogue.errors import UsageError

_KEYS = {"url", "name", "storage_options", "include", "exclude", "max_depth", "nodes", "concurrency", "timeout", "retries",
         "coordinate_bytes", "discover", "prune", "max_listings", "implicit_root",
         "history"}


@dataclass(frozen=True)
class Source:
    """One store to harvest and how."""

    url: str
    name: str = ""
    storage_options: dict[str, Any] = field(default_factory=dict)
    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    max_depth: int | None = None
    nodes: tuple[str, ...] = ()
    #: Per-source overrides of the command line's --concurrency, --timeout, --retries.
    concurrency: int | None = None
    timeout: float | None = None
    retries: int | None = None
    #: Per-source override of --coordinate-bytes (coordinate values read for the extents).
    coordinate_bytes: int | None = None
    #: Find the stores below the URL when it is not one itself (None: do so when it is
    #: not; False: refuse as before). ``include``/``exclude``/``max_depth`` then choose
    #: stores (paths relative to the URL), each harvested whole (:mod:`.discover`).
    discover: bool | None = None
    #: With discovery: remove the graphs of stores below the URL that are gone.
    prune: bool = False
    #: With discovery: folders listed at most.
    max_listings: int | None = None
    #: A store whose root has no document (set by discovery for ``x.zarr`` folders).
    implicit_root: bool = False
    #: An Icechunk repository: also this many snapshots of each branch's ancestry (0: the
    #: heads of its branches and tags only; see :mod:`catalogue.storage.icechunk`).
    history: int = 0
    #: The change token the expansion saw (an Icechunk version's, :func:`~catalogue.storage.
    #: icechunk.version_token`; set by discovery, never by a sources file or a caller): a run
    #: finding the graph's recorded state made of it stops there, without opening the
    #: version (:func:`.run.harvest_source`).
    seen_state: str | None = None

    @property
    def label(self) -> str:
        return self.name or self.url

    def load_options(self) -> dict[str, Any]:
        """The options this entry sets, as keyword arguments of ``Catalogue.harvest``
        (unset ones are left out, so the command line's values apply)."""
        options: dict[str, Any] = {}
        if self.storage_options:
            options["storage_options"] = self.storage_options
        for key in ("include", "exclude", "nodes"):
            if getattr(self, key):
                options[key] = getattr(self, key)
        for key in ("max_depth", "concurrency", "timeout", "retries", "coordinate_bytes"):
            if getattr(self, key) is not None:
                options[key] = getattr(self, key)
        if self.implicit_root:
            options["implicit_root"] = True
        elif self.discover is False:  # refused as it is: no implicit root by the folder's name either
            options["implicit_root"] = False
        return options


def load_sources(path: str | Path) -> list[Source]:
    """The sources of a TOML sources file, checked entry by entry."""
    path = Path(path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as exc:
        raise UsageError(f"{path}: no such sources file") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"{path}: not a valid TOML file: {exc}") from exc
    entries = data.get("source")
    unknown = set(data) - {"source"}
    if unknown:
        raise UsageError(f"{path}: unknown top-level key {sorted(unknown)[0]!r} (expected [[source]] tables)")
    if isinstance(entries, dict):
        raise UsageError(f"{path}: 'source' must be [[source]] tables (an array of tables), not one [source] table")
    if not isinstance(entries, list) or not entries:
        raise UsageError(f"{path}: no [[source]] entries")
    return [_source(entry, f"{path}: source[{i}]") for i, entry in enumerate(entries, start=1)]


def _source(entry: Any, where: str) -> Source:
    if not isinstance(entry, dict):
        raise UsageError(f"{where}: expected a table")
    for key in entry:
        if key not in _KEYS:
            raise UsageError(f"{where}: unknown key {key!r} (expected one of {', '.join(sorted(_KEYS))})")
    url = entry.get("url")
    if not isinstance(url, str) or not url.strip():
        raise UsageError(f"{where}.url: expected a non-empty string")
    options = entry.get("storage_options", {})
    if not isinstance(options, dict):
        raise UsageError(f"{where}.storage_options: expected a table")
    max_depth = entry.get("max_depth")
    if max_depth is not None and not (type(max_depth) is int and max_depth >= 0):
        raise UsageError(f"{where}.max_depth: expected a non-negative integer")
    for key, kind, lowest in (("concurrency", int, 1), ("retries", int, 0), ("timeout", float, 0.1),
                              ("coordinate_bytes", int, 0)):
        value = entry.get(key)
        if value is not None and not (type(value) in (int, kind) and not isinstance(value, bool) and value >= lowest):
            raise UsageError(f"{where}.{key}: expected a number >= {lowest}")
    name = entry.get("name", "")
    if not isinstance(name, str):
        raise UsageError(f"{where}.name: expected a string")
    for key in ("discover", "prune", "implicit_root"):
        if key in entry and type(entry[key]) is not bool:
            raise UsageError(f"{where}.{key}: expected true or false")
    listings = entry.get("max_listings")
    if listings is not None and not (type(listings) is int and listings >= 1):
        raise UsageError(f"{where}.max_listings: expected a number >= 1")
    history = entry.get("history", 0)
    if not (type(history) is int and history >= 0):
        raise UsageError(f"{where}.history: expected a non-negative integer")
    if entry.get("prune") and entry.get("discover") is False:
        raise UsageError(f"{where}.prune: needs discovery (discover = false is set)")
    return Source(
        url=url.strip(),
        name=name,
        storage_options=options,
        include=_strings(entry, "include", where),
        exclude=_strings(entry, "exclude", where),
        max_depth=max_depth,
        nodes=tuple(n.strip("/") for n in _strings(entry, "nodes", where)),
        concurrency=entry.get("concurrency"),
        timeout=float(entry["timeout"]) if entry.get("timeout") is not None else None,
        retries=entry.get("retries"),
        coordinate_bytes=entry.get("coordinate_bytes"),
        discover=entry.get("discover"),
        prune=bool(entry.get("prune", False)),
        max_listings=listings,
        implicit_root=bool(entry.get("implicit_root", False)),
        history=history,
    )


def _strings(entry: dict[str, Any], key: str, where: str) -> tuple[str, ...]:
    value = entry.get(key, [])
    if not (isinstance(value, list) and all(isinstance(v, str) for v in value)):
        raise UsageError(f"{where}.{key}: expected a list of strings")
    return tuple(value)


def storage_options_for(sources: list[Source], url: str) -> dict[str, Any] | None:
    """The storage options of the source whose URL contains ``url`` (the longest such), if any.

    Chunk reads (``catalogue read``/``resolve``) use them, so an operator's
    sources file gives the same endpoint and credentials to reading as to
    harvesting; credentials never go into the graph.
    """
    best: Source | None = None
    for source in sources:
        root = source.url.rstrip("/")
        if (url == root or url.startswith(root + "/")) and (best is None or len(root) > len(best.url.rstrip("/"))):
            best = source
    return dict(best.storage_options) if best is not None and best.storage_options else None

