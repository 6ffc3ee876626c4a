"""What the portal pages show, assembled from the catalogue (no HTML here).

The dataset/node page (``/browse``) needs one hierarchy graph: its nodes (the
tree), the node's metadata documents (rebuilt from the graph, exactly as
harvested), the SHACL validation findings stored with the graph and the PROV
record of the harvest that wrote it. Everything is read through the store's
triple patterns, each bound to the named graph and one predicate, so a page
costs a handful of indexed SQL queries whatever the catalogue's size, and a
user-supplied IRI is only ever a bound parameter, never SPARQL text.

Each graph is digested once (its nodes, titles, findings, counts; the tree's
shape) and kept in a small cache keyed by the graph and its generating harvest
run, so a re-harvest is seen on the next request while repeated page views
cost a few sub-millisecond queries; the graph's triple count (a COUNT over the
graph) is checked again at most once per dataset-index refresh interval, so a
load into an existing graph is seen within that time. Small graphs (up
to :data:`FULL_LOAD_LIMIT` triples, every ordinary dataset) are read whole in
one scan and every node's documents rebuilt at once; larger hierarchies are
scanned one predicate at a time and documents are rebuilt node by node when a
page needs them (then kept), so a group page of a huge hierarchy lists at most
:data:`MAX_LISTED_LARGE` arrays in full and the tree shows at most
:data:`MAX_TREE` nodes around the current one.

The module also holds the strict query-string parsing the HTML pages share
(``/datasets``'s rules: invalid UTF-8, control characters, over-long query
strings and malformed IRIs are client errors, answered with 400).
"""

from __future__ import annotations

import json
import math
import posixpath
import pprint
import threading
import time
import urllib.parse
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rdflib import DCAT, PROV, RDF, RDFS, SH, Graph, Literal, URIRef
from rdflib.namespace import DCTERMS
from rdflib.term import Node as RDFNode

from catalogue.errors import CatalogueError
from catalogue.model.codecs import ARRAY_TO_ARRAY, ARRAY_TO_BYTES, BYTES_TO_BYTES, codec_name
from catalogue.model.datatypes import item_size
from catalogue.rdf.dcat import iri_name
from catalogue.rdf.provenance import HARVESTS_GRAPH
from catalogue.rdf.rebuild import decode_literal, rebuild_documents
from catalogue.rdf.vocabulary import ZARR

from . import datasets as api
from . import discovery
from .discovery import DatasetSummary, SearchQuery, SearchResult, Variable
from .errors import HTTPError
from .nodes import check_iri as check_node_iri

if TYPE_CHECKING:
    from catalogue.api import Catalogue

#: Graphs up to this many triples are read whole in one scan (about 30 µs a triple, decoding
#: and rebuilding included: some 150 ms once for the largest, a few ms for a typical dataset).
FULL_LOAD_LIMIT = 5_000
#: Arrays listed with their layout on a group page.
MAX_LISTED = 200
#: The same for graphs over FULL_LOAD_LIMIT, whose documents are rebuilt node by node (~5 ms each).
MAX_LISTED_LARGE = 50
#: Rebuilt documents kept per large graph.
MAX_CACHED_DOCUMENTS = 5_000
#: Hierarchies up to this many nodes show their whole tree; larger ones show the path to
#: the current node with the children of each group on it, and count what they leave out.
MAX_TREE = 100
#: Characters of one attribute value shown (the rest is elided, with a count).
MAX_VALUE_CHARS = 4000
#: Validation findings listed on one page.
MAX_FINDINGS = 500
#: Digested graphs kept in memory (a typical dataset's digest is a few tens of KB).
CACHE_SIZE = 256

class PageError(Exception):
    """A request the portal answers with an HTML error page (status, one-line message)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


# --------------------------------------------------------------------------- parameters
def parse_query_string(raw: bytes, *, max_params: int = 200) -> dict[str, list[str]]:
    """The query string's parameters, decoded strictly.

    The rules are ``/datasets``'s (:func:`catalogue.web.datasets.check_query_string`:
    length, UTF-8, no control characters). Starlette replaces invalid UTF-8
    with U+FFFD, which would turn a garbled IRI into a different, silently
    wrong lookup; the portal refuses it instead.
    """
    try:
        api.check_query_string(raw)
    except HTTPError as exc:
        raise PageError(exc.status, exc.message) from None
    try:
        pairs = urllib.parse.parse_qsl(raw.decode("utf-8"), keep_blank_values=True, strict_parsing=False,
                                       encoding="utf-8", errors="strict", max_num_fields=max_params)
    except UnicodeDecodeError:  # pragma: no cover - check_query_string refused it already
        raise PageError(400, "the query string is not valid UTF-8 (after percent-decoding)") from None
    except ValueError:
        raise PageError(400, f"too many query parameters (at most {max_params})") from None
    out: dict[str, list[str]] = {}
    for key, value in pairs:
        out.setdefault(key, []).append(value)
    return out


def check_iri(values: list[str] | None) -> str:
    """The single ``iri`` parameter, if it is an absolute IRI (else :class:`PageError` 400).

    The rules are the node endpoint's (:func:`catalogue.web.nodes.check_iri`).
    The IRI is only compared with catalogued IRIs (nothing is fetched or
    opened), so a ``file:`` IRI or ``..`` segments cannot reach the file
    system; relative references (``../../etc/passwd``) are refused outright.
    """
    if not values or not values[0]:
        raise PageError(400, "missing parameter: iri (the IRI of a catalogued node)")
    if len(values) > 1:
        raise PageError(400, "give the parameter iri once")
    try:
        return check_node_iri(values[0])
    except HTTPError as exc:
        raise PageError(exc.status, "malformed IRI: " + exc.message) from None


# --------------------------------------------------------------------------- values
def json_text(value: Any, *, indent: int | None = None) -> str:
    """A JSON value as text (unicode kept, NaN/Infinity as zarr writes them), bounded."""
    try:
        text = json.dumps(value, ensure_ascii=False, indent=indent, allow_nan=True)
    except (TypeError, ValueError, RecursionError):
        text = repr(value)
    return elide(text)


def elide(text: str, limit: int = MAX_VALUE_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"… ({len(text) - limit:,} more characters)"


def human_bytes(n: int | None) -> str:
    if n is None:
        return ""
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB", "PiB"):
        if size < 1024 or unit == "PiB":
            return f"{int(size)} {unit}" if unit == "B" else f"{size:,.1f} {unit}"
        size /= 1024
    return f"{n} B"  # pragma: no cover


def _int_list(value: Any) -> list[int] | None:
    if isinstance(value, list) and all(isinstance(v, int) and not isinstance(v, bool) for v in value):
        return value
    return None


def shape_text(value: Any) -> str:
    """``[6, 9, 12]`` as ``6 × 9 × 12`` (``()`` for 0-d); anything else as its JSON."""
    ints = _int_list(value)
    if ints is None:
        return json_text(value)
    return " × ".join(str(v) for v in ints) if ints else "() scalar"


def _itemsize(dtype: Any, zarr_format: int | None) -> int | None:
    """Bytes per element when the data type says (None for variable-length, unknown and invalid)."""
    return item_size(dtype, zarr_format)


# --------------------------------------------------------------------------- page data
@dataclass
class NodeInfo:
    """A node as the tree and breadcrumbs need it."""

    iri: str
    path: str
    kind: str  # "group" | "array" | "dependent"
    label: str = ""
    valid: bool | None = None
    #: Last path segment ("" for the root).
    name: str = field(init=False, default="")

    def __post_init__(self) -> None:
        self.name = posixpath.basename(self.path) if self.path else ""


@dataclass
class TreeEntry:
    node: NodeInfo
    children: list[TreeEntry] = field(default_factory=list)
    current: bool = False
    #: The current node is this entry or below it.
    on_path: bool = False
    #: Children left out of a large tree.
    hidden: int = 0


@dataclass
class Finding:
    node_iri: str
    node_path: str
    rule: str
    severity: str  # "error" | "warning" | "info"
    pointer: str
    message: str
    document: str


@dataclass
class CodecView:
    name: str
    configuration: str = ""
    role: str = ""
    #: For sharding: the chunk shape inside each shard, the inner codecs and the index codecs.
    inner_chunks: str = ""
    codecs: list[CodecView] = field(default_factory=list)
    index_codecs: list[CodecView] = field(default_factory=list)
    index_location: str = ""


@dataclass
class AttributeRow:
    key: str
    text: str
    #: Not a plain string: shown as JSON.
    is_json: bool
    multiline: bool


@dataclass
class Dimension:
    name: str
    size: str
    chunk: str


@dataclass
class ArrayView:
    """One array's layout, read from its rebuilt metadata documents (any JSON tolerated)."""

    info: NodeInfo
    zarr_format: int | None
    shape: str
    chunks: str
    #: The shard shape when sharded (``chunks`` then names the innermost chunk shape).
    shards: str = ""
    inner_levels: list[str] = field(default_factory=list)
    dtype: str = ""
    fill_value: str = ""
    codecs: list[CodecView] = field(default_factory=list)
    dimensions: list[Dimension] = field(default_factory=list)
    dimension_names: list[str] = field(default_factory=list)
    chunk_key_encoding: str = ""
    order: str = ""
    storage_transformers: str = ""
    n_chunks: int | None = None
    n_shards: int | None = None
    nbytes: int | None = None
    units: str = ""
    standard_name: str = ""
    long_name: str = ""
    attributes: list[AttributeRow] = field(default_factory=list)
    primary: NodeInfo | None = None
    dependents: list[NodeInfo] = field(default_factory=list)
    #: Path relative to the group page listing it.
    relative: str = ""

    @property
    def size(self) -> str:
        return human_bytes(self.nbytes)

    @property
    def codec_summary(self) -> str:
        return " → ".join(c.name for c in self.codecs) or "none"


@dataclass
class Harvest:
    run: str
    source: str = ""
    name: str = ""
    started: str = ""
    ended: str = ""
    outcome: str = ""
    counts: dict[str, int] = field(default_factory=dict)
    software: str = ""
    errors: list[str] = field(default_factory=list)
    #: The most recent run of the same source (e.g. "unchanged" checks), when newer.
    last_checked: str = ""
    last_outcome: str = ""


@dataclass
class Snippet:
    id: str
    title: str
    language: str
    text: str
    note: str = ""
    run_link: str = ""


@dataclass
class Link:
    label: str
    href: str
    description: str = ""


@dataclass
class NodePage:
    iri: str
    info: NodeInfo
    root: NodeInfo
    title: str
    dataset_title: str
    breadcrumb: list[NodeInfo]
    tree: TreeEntry
    tree_size: int
    zarr_format: int | None
    summary: str = ""
    keywords: list[str] = field(default_factory=list)
    publisher: str = ""
    array: ArrayView | None = None
    attributes: list[AttributeRow] = field(default_factory=list)
    arrays: list[ArrayView] = field(default_factory=list)
    groups: list[NodeInfo] = field(default_factory=list)
    unlisted: int = 0
    findings: list[Finding] = field(default_factory=list)
    findings_total: int = 0
    #: Some findings are about other nodes (below a group, dependent arrays): show a node column.
    findings_elsewhere: bool = False
    counts: dict[str, int] = field(default_factory=dict)
    harvest: Harvest | None = None
    snippets: list[Snippet] = field(default_factory=list)
    links: list[Link] = field(default_factory=list)
    store_url: str = ""
    store_link: bool = False

    @property
    def root_name(self) -> str:
        """The store's name (last segment of the root URL), for the tree's root."""
        return iri_name(self.root.iri)

    @property
    def kind_label(self) -> str:
        return {"group": "Group", "array": "Array", "dependent": "Dependent array"}[self.info.kind]


# --------------------------------------------------------------------------- the graph, digested
@dataclass
class _Digest:
    """What one hierarchy graph holds, decoded once (unchanged once cached, but for ``checked``
    and the documents of large graphs)."""

    graph: str
    nodes: dict[str, NodeInfo]
    titles: dict[str, str]
    descriptions: dict[str, str]
    keywords: dict[str, list[str]]
    publishers: dict[str, str]
    findings: list[Finding]
    run: str | None
    #: Rebuilt documents by node IRI: all of them for small graphs, filled as pages need them
    #: for large ones (a dict's item assignment is atomic, so threads may share it).
    documents: dict[str, dict[str, Any] | None]
    full: bool
    #: Triples in the graph when it was read, and when that was last confirmed (``time.monotonic()``).
    size: int = 0
    checked: float = 0.0
    by_path: dict[str, NodeInfo] = field(default_factory=dict)
    #: Path -> child nodes, groups first, then by name.
    children: dict[str, list[NodeInfo]] = field(default_factory=dict)
    root: NodeInfo | None = None
    #: Groups and arrays (dependent arrays included) in the hierarchy.
    counts: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.by_path = {n.path: n for n in self.nodes.values()}
        groups = sum(1 for n in self.nodes.values() if n.kind == "group")
        self.counts = {"groups": groups, "arrays": len(self.nodes) - groups}
        if not self.nodes:
            return
        self.root = self.by_path.get("") or min(self.nodes.values(), key=lambda n: (len(n.path), n.path))
        for node in self.nodes.values():
            if node is self.root:
                continue
            parent = posixpath.dirname(node.path)
            while parent not in self.by_path and parent:
                parent = posixpath.dirname(parent)
            if parent not in self.by_path:
                parent = self.root.path
            self.children.setdefault(parent, []).append(node)
        for kids in self.children.values():
            kids.sort(key=lambda n: (n.kind != "group", n.name.lower(), n.name))


#: (database, graph, generating run) -> digest.
_cache: OrderedDict[tuple[str, str, str], _Digest] = OrderedDict()
_cache_lock = threading.Lock()

_SEVERITY = {SH.Violation: "error", SH.Warning: "warning", SH.Info: "info"}
_SEVERITY_ORDER = {"error": 0, "warning": 1, "info": 2}


def _by_subject(graph: Graph, predicate: URIRef) -> dict[RDFNode, list[RDFNode]]:
    out: dict[RDFNode, list[RDFNode]] = {}
    for s, o in graph.subject_objects(predicate):
        out.setdefault(s, []).append(o)
    return out


def _first(values: dict[RDFNode, list[RDFNode]], key: RDFNode) -> str:
    """One value of ``key`` as text (the least, so a node with several gets a stable one)."""
    found = values.get(key)
    return min(str(v) for v in found) if found else ""


def _texts(graph: Graph, predicate: URIRef) -> dict[str, str]:
    values = _by_subject(graph, predicate)
    return {str(s): _first(values, s) for s in values}


def node_graph_iri(cat: Catalogue, iri: str) -> str | None:
    """The named graph holding node ``iri`` (the most specific one if several do), or None."""
    node = URIRef(iri)
    holders = [str(g.identifier) for g in cat.store.contexts((node, ZARR.path, None))]
    holders = [g for g in holders if g != str(HARVESTS_GRAPH)]
    if not holders:
        return None
    holders.sort(key=lambda g: (not iri.startswith(g), -len(g)))
    return holders[0]


def _digest(cat: Catalogue, graph_iri: str, recheck: float | None = None) -> _Digest:
    """The digested graph, from the cache when the graph has not changed since.

    A new harvest run is seen at once (the run is part of the key); other
    changes (a ``catalogue load`` into the graph) when the graph's triple
    count, a COUNT over the whole graph, is checked again: at most once every
    ``recheck`` seconds (default: the dataset index's
    :data:`~catalogue.web.discovery.REFRESH_INTERVAL`).
    """
    gid = URIRef(graph_iri)
    sql_graph = Graph(store=cat.store, identifier=gid)
    run = sql_graph.value(gid, PROV.wasGeneratedBy)
    key = (cat.url, graph_iri, str(run or ""))
    interval = discovery.REFRESH_INTERVAL if recheck is None else recheck
    now = time.monotonic()
    with _cache_lock:
        cached = _cache.get(key)
        if cached is not None:
            _cache.move_to_end(key)
    if cached is not None and now - cached.checked < interval:
        return cached
    size = len(sql_graph)
    if cached is not None and cached.size == size:
        cached.checked = now
        return cached
    full = size <= FULL_LOAD_LIMIT
    if full:
        source = Graph(store="SimpleMemory")
        source.addN((s, p, o, source) for s, p, o in cat.store.graph_triples(gid))
    else:
        source = sql_graph
    digest = _read_digest(source, graph_iri, run, full)
    digest.size, digest.checked = size, now
    with _cache_lock:
        _cache[key] = digest
        _cache.move_to_end(key)
        while len(_cache) > CACHE_SIZE:
            _cache.popitem(last=False)
    return digest


def _read_digest(graph: Graph, graph_iri: str, run: RDFNode | None, full: bool) -> _Digest:
    paths = _by_subject(graph, ZARR.path)
    types = _by_subject(graph, RDF.type)
    labels = _by_subject(graph, RDFS.label)
    valid = _by_subject(graph, ZARR.valid)
    nodes: dict[str, NodeInfo] = {}
    for subject, values in paths.items():
        if not isinstance(subject, URIRef):
            continue
        kinds = set(types.get(subject, ()))
        if ZARR.DependentArray in kinds:
            kind = "dependent"
        elif ZARR.Array in kinds:
            kind = "array"
        elif ZARR.Group in kinds:
            kind = "group"
        else:
            continue
        flags = valid.get(subject, [])
        nodes[str(subject)] = NodeInfo(
            iri=str(subject), path=str(values[0]), kind=kind, label=_first(labels, subject),
            valid=bool(decode_literal(flags[0])) if flags and isinstance(flags[0], Literal) else None,
        )
    titles = _texts(graph, DCTERMS.title)
    descriptions = _texts(graph, DCTERMS.description)
    publishers = _texts(graph, DCTERMS.publisher)
    keywords = {str(s): sorted(str(k) for k in v) for s, v in _by_subject(graph, DCAT.keyword).items()}
    findings = _read_findings(graph, nodes)
    documents: dict[str, dict[str, Any] | None] = {}
    if full:
        for iri in nodes:
            documents[iri] = _documents(graph, iri)
    return _Digest(graph=graph_iri, nodes=nodes, titles=titles, descriptions=descriptions,
                   keywords=keywords, publishers=publishers, findings=findings,
                   run=str(run) if run is not None else None, documents=documents, full=full)


def _read_findings(graph: Graph, nodes: dict[str, NodeInfo]) -> list[Finding]:
    focus = _by_subject(graph, SH.focusNode)
    if not focus:
        return []
    columns = {name: _by_subject(graph, prop) for name, prop in (
        ("rule", ZARR.rule), ("severity", SH.resultSeverity), ("pointer", ZARR.jsonPointer),
        ("message", SH.resultMessage), ("document", ZARR.document))}
    out = []
    for result, targets in focus.items():
        target = str(targets[0])
        severity = columns["severity"].get(result, [None])[0]
        info = nodes.get(target)
        out.append(Finding(
            node_iri=target, node_path=info.path if info else "",
            rule=_first(columns["rule"], result), severity=_SEVERITY.get(severity, "info"),  # type: ignore[arg-type]
            pointer=_first(columns["pointer"], result), message=_first(columns["message"], result),
            document=_first(columns["document"], result)))
    out.sort(key=lambda f: (f.node_path, _SEVERITY_ORDER[f.severity], f.pointer, f.rule, f.message))
    return out


def _documents(graph: Graph, iri: str) -> dict[str, Any] | None:
    try:
        return rebuild_documents(graph, iri)
    except (CatalogueError, ValueError, TypeError, RecursionError):
        # An inconsistent graph (triples loaded by hand, a literal that is not what its
        # datatype says): the page shows what the tree knows instead of failing.
        return None


# --------------------------------------------------------------------------- views
def _attributes(docs: dict[str, Any] | None) -> dict[str, Any] | Any:
    if not docs:
        return {}
    if "zarr.json" in docs:
        return docs["zarr.json"].get("attributes", {}) if isinstance(docs["zarr.json"], dict) else {}
    return docs.get(".zattrs", {})


def attribute_rows(attrs: Any) -> list[AttributeRow]:
    """The attributes as table rows: strings as text, anything else as JSON."""
    if not isinstance(attrs, dict):
        text = json_text(attrs, indent=2)
        return [AttributeRow("(not an object)", text, True, "\n" in text)]
    rows = []
    for key, value in attrs.items():
        if isinstance(value, str):
            rows.append(AttributeRow(str(key), elide(value), False, "\n" in value or len(value) > 120))
        else:
            compact = json_text(value)
            text = compact if len(compact) <= 80 else json_text(value, indent=2)
            rows.append(AttributeRow(str(key), text, True, "\n" in text))
    return rows


def _named(value: Any) -> tuple[str, Any]:
    """A v3 named configuration (or short-form name) as (name, configuration); a malformed name as its JSON."""
    name = codec_name(value)
    if name is None:
        name = json_text(value.get("name") if isinstance(value, dict) else value)
    return name, value.get("configuration") if isinstance(value, dict) else None


def _role(name: str) -> str:
    """The codec's kind, as the validator knows it ("" for a codec it does not know)."""
    if name in ARRAY_TO_ARRAY:
        return "array → array"
    if name in ARRAY_TO_BYTES:
        return "array → bytes"
    return "bytes → bytes" if name in BYTES_TO_BYTES else ""


def _v3_codecs(value: Any, levels: list[str], depth: int = 0) -> list[CodecView]:
    if not isinstance(value, list):
        return [CodecView(name=json_text(value), role="(not a list)")] if value is not None else []
    out = []
    for item in value[:50]:
        name, conf = _named(item)
        codec = CodecView(name=name, role=_role(name))
        if name == "sharding_indexed" and isinstance(conf, dict) and depth < 8:
            codec.inner_chunks = shape_text(conf.get("chunk_shape"))
            levels.append(codec.inner_chunks)
            codec.codecs = _v3_codecs(conf.get("codecs"), levels, depth + 1)
            codec.index_codecs = _v3_codecs(conf.get("index_codecs"), [], depth + 1)
            codec.index_location = str(conf.get("index_location", "end"))
        elif conf is not None:
            codec.configuration = json_text(conf)
        out.append(codec)
    return out


def _v2_codec(value: Any, role: str) -> CodecView:
    if isinstance(value, dict):
        conf = {k: v for k, v in value.items() if k != "id"}
        ident = value.get("id")
        return CodecView(name=ident if isinstance(ident, str) else json_text(ident), role=role,
                         configuration=json_text(conf) if conf else "")
    return CodecView(name=json_text(value), role=role)


def _grid_count(shape: list[int] | None, chunks: list[int] | None) -> int | None:
    if shape is None or chunks is None or len(shape) != len(chunks) or any(c <= 0 for c in chunks):
        return None
    return math.prod(-(-s // c) for s, c in zip(shape, chunks, strict=True))


def array_view(info: NodeInfo, docs: dict[str, Any] | None) -> ArrayView:
    """An array's layout from its documents; malformed values are shown as their JSON."""
    if docs and isinstance(docs.get("zarr.json"), dict):
        meta = docs["zarr.json"]
        zarr_format: int | None = 3
        grid_name, grid_conf = _named(meta.get("chunk_grid"))
        chunk_shape = grid_conf.get("chunk_shape") if isinstance(grid_conf, dict) else grid_conf
        levels: list[str] = []
        codecs = _v3_codecs(meta.get("codecs"), levels)
        names = meta.get("dimension_names")
        cke_name, cke_conf = _named(meta.get("chunk_key_encoding"))
        separator = cke_conf.get("separator") if isinstance(cke_conf, dict) else None
        cke = cke_name + (f" (separator {separator!s})" if separator is not None else "")
        if "chunk_key_encoding" not in meta:
            cke = ""
        dtype_value = meta.get("data_type")
        dtype = dtype_value if isinstance(dtype_value, str) else json_text(dtype_value)
        order = ""
        transformers = meta.get("storage_transformers")
        transformers_text = json_text(transformers) if transformers else ""
        if grid_name not in ("regular", "") and grid_conf is None:
            chunk_shape = None
    elif docs and isinstance(docs.get(".zarray"), dict):
        meta = docs[".zarray"]
        zarr_format = 2
        chunk_shape = meta.get("chunks")
        levels = []
        codecs = [_v2_codec(f, "filter") for f in meta.get("filters") or []] if isinstance(
            meta.get("filters") or [], list) else [_v2_codec(meta.get("filters"), "filter")]
        if meta.get("compressor") is not None:
            codecs.append(_v2_codec(meta["compressor"], "compressor"))
        attrs = docs.get(".zattrs")
        names = attrs.get("_ARRAY_DIMENSIONS") if isinstance(attrs, dict) else None
        separator = meta.get("dimension_separator", ".")
        cke = f"v2 (separator {separator!s})"
        dtype_value = meta.get("dtype")
        dtype = dtype_value if isinstance(dtype_value, str) else json_text(dtype_value)
        order = str(meta.get("order", "")) if meta.get("order") is not None else ""
        transformers_text = ""
    else:
        return ArrayView(info=info, zarr_format=None, shape="", chunks="")
    shape = meta.get("shape")
    shape_ints = _int_list(shape)
    chunk_ints = _int_list(chunk_shape)
    view = ArrayView(
        info=info, zarr_format=zarr_format, shape=shape_text(shape) if "shape" in meta else "",
        chunks=shape_text(chunk_shape) if chunk_shape is not None else "",
        dtype=dtype, fill_value=json_text(meta.get("fill_value")) if "fill_value" in meta else "",
        codecs=codecs, chunk_key_encoding=cke, order=order, storage_transformers=transformers_text,
    )
    if levels:  # sharded: the grid's chunks are shards; the innermost level is the read unit
        view.shards = view.chunks
        view.inner_levels = levels
        view.chunks = levels[-1]
        view.n_shards = _grid_count(shape_ints, chunk_ints)
        inner = _int_list(_innermost(meta.get("codecs")))
        view.n_chunks = _grid_count(shape_ints, inner) if inner else None
    else:
        view.n_chunks = _grid_count(shape_ints, chunk_ints)
    if isinstance(names, list):
        view.dimension_names = [n if isinstance(n, str) else json_text(n) for n in names]
    if shape_ints is not None:
        itemsize = _itemsize(dtype_value, zarr_format)
        if itemsize is not None:
            view.nbytes = math.prod(shape_ints) * itemsize
        chunk_cells = _int_list(_innermost(meta.get("codecs"))) if levels else chunk_ints
        for i, size in enumerate(shape_ints):
            name = view.dimension_names[i] if i < len(view.dimension_names) else f"dim_{i}"
            chunk = str(chunk_cells[i]) if chunk_cells and i < len(chunk_cells) else ""
            view.dimensions.append(Dimension(name=name, size=str(size), chunk=chunk))
    attrs_all = _attributes(docs)
    view.attributes = attribute_rows(attrs_all)
    if isinstance(attrs_all, dict):
        for key, attr in (("units", "units"), ("standard_name", "standard_name"), ("long_name", "long_name")):
            if isinstance(attrs_all.get(key), str):
                setattr(view, attr, attrs_all[key])
    return view


def _innermost(codecs: Any, depth: int = 0) -> Any:
    """The chunk shape of the innermost sharding level of a v3 codec chain (None if unsharded)."""
    if not isinstance(codecs, list) or depth > 8:
        return None
    for item in codecs:
        name, conf = _named(item)
        if name == "sharding_indexed" and isinstance(conf, dict):
            deeper = _innermost(conf.get("codecs"), depth + 1)
            return deeper if deeper is not None else conf.get("chunk_shape")
    return None


# --------------------------------------------------------------------------- snippets
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


def python_snippet(page: NodePage, parent: NodeInfo | None) -> Snippet | None:
    """zarr-python (and xarray, where it applies) code opening the node."""
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
    :func:`check_iri`, which refuses every character an IRIREF cannot hold.
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


# --------------------------------------------------------------------------- the page
def _on_path(path: str, current: str) -> bool:
    return path == current or not path or current.startswith(path + "/")


def _tree(digest: _Digest, current: str) -> TreeEntry:
    """The hierarchy as nested entries (whole, or around the current node when very large)."""
    assert digest.root is not None
    whole = len(digest.nodes) <= MAX_TREE
    current_path = digest.nodes[current].path

    def build(info: NodeInfo) -> TreeEntry:
        entry = TreeEntry(node=info, current=info.path == current_path,
                          on_path=_on_path(info.path, current_path))
        kids = digest.children.get(info.path, [])
        if whole or entry.on_path:
            shown = kids[:MAX_LISTED] + [k for k in kids[MAX_LISTED:] if _on_path(k.path, current_path)]
            entry.children = [build(k) for k in shown]
            entry.hidden = len(kids) - len(shown)
        else:
            entry.hidden = len(kids)
        return entry

    return build(digest.root)


def _harvest(cat: Catalogue, digest: _Digest, root_iri: str) -> Harvest | None:
    if not digest.run:
        return None
    runs = Graph(store=cat.store, identifier=HARVESTS_GRAPH)
    run = URIRef(digest.run)
    values: dict[URIRef, list[RDFNode]] = {}
    for p, o in runs.predicate_objects(run):
        values.setdefault(p, []).append(o)  # type: ignore[arg-type]

    def one(p: URIRef) -> str:
        found = values.get(p)
        return str(found[0]) if found else ""

    def count(p: URIRef) -> int:
        found = values.get(p)
        return int(decode_literal(found[0])) if found and isinstance(found[0], Literal) else 0

    out = Harvest(
        run=digest.run, source=one(PROV.used), name=one(RDFS.label), started=one(PROV.startedAtTime),
        ended=one(PROV.endedAtTime), outcome=one(ZARR.outcome), software=one(PROV.wasAssociatedWith),
        counts={"added": count(ZARR.nodesAdded), "changed": count(ZARR.nodesChanged),
                "unchanged": count(ZARR.nodesUnchanged), "removed": count(ZARR.nodesRemoved),
                "failed": count(ZARR.nodesFailed)},
        errors=sorted(str(e) for e in values.get(ZARR.error, []))[:20],
    )
    latest = _latest_run(cat, root_iri)
    if latest is not None and latest[0] != digest.run and latest[1] > out.ended:
        out.last_checked, out.last_outcome = latest[1], latest[2]
    return out


_LATEST_RUN = (
    f"SELECT ?run ?ended ?outcome WHERE {{ GRAPH <{HARVESTS_GRAPH}> {{ ?run prov:used ?source ; "
    "prov:endedAtTime ?ended ; zarr:outcome ?outcome } } ORDER BY DESC(?ended) LIMIT 1"
)


def _latest_run(cat: Catalogue, source: str) -> tuple[str, str, str] | None:
    """The most recent run of ``source``: (run, ended, outcome).

    One fixed query text with ``?source`` bound, so it is parsed once per
    process (parsing SPARQL costs milliseconds; the lookup a fraction of one).
    """
    for row in cat.query(_LATEST_RUN, initBindings={"source": URIRef(source)}):
        return str(row[0]), str(row[1]), str(row[2])  # type: ignore[index]
    return None


def _node_documents(cat: Catalogue, digest: _Digest, iri: str) -> dict[str, Any] | None:
    if digest.full or iri in digest.documents:
        return digest.documents.get(iri)
    docs = _documents(Graph(store=cat.store, identifier=URIRef(digest.graph)), iri)
    if len(digest.documents) < MAX_CACHED_DOCUMENTS:
        digest.documents[iri] = docs
    return docs


def _children(digest: _Digest, info: NodeInfo) -> list[NodeInfo]:
    """The node's children, groups first, then by name (sorted once, by the digest)."""
    return digest.children.get(info.path, [])


def node_page(cat: Catalogue, iri: str, *, base: str, recheck: float | None = None) -> NodePage:
    """Everything the dataset/node page shows (:class:`PageError` 404 for an unknown IRI).

    ``base`` is the server's base URL (no trailing slash), used in the links and
    snippets; ``recheck`` the seconds a cached digest is trusted before the
    graph's size is checked again (see :func:`_digest`).
    """
    graph_iri = node_graph_iri(cat, iri)
    if graph_iri is None:
        raise PageError(404, "no catalogued node has this IRI")
    digest = _digest(cat, graph_iri, recheck)
    info = digest.nodes.get(iri)
    if info is None:
        raise PageError(404, "no catalogued node has this IRI")
    tree = _tree(digest, iri)
    root = tree.node
    breadcrumb = [info]
    path = info.path
    while path and path != root.path:
        path = posixpath.dirname(path)
        found = digest.by_path.get(path)
        if found is not None:
            breadcrumb.append(found)
    if breadcrumb[-1] is not root:
        breadcrumb.append(root)
    breadcrumb.reverse()
    dataset_title = digest.titles.get(root.iri) or root.label or iri_name(root.iri)
    title = dataset_title if info is root else info.name or iri_name(info.iri)
    docs = _node_documents(cat, digest, iri)
    zarr_format = _format(docs)
    page = NodePage(
        iri=iri, info=info, root=root, title=title, dataset_title=dataset_title, breadcrumb=breadcrumb,
        tree=tree, tree_size=len(digest.nodes), zarr_format=zarr_format,
        summary=digest.descriptions.get(iri, ""), keywords=digest.keywords.get(iri, []),
        publisher=digest.publishers.get(iri, ""), store_url=iri,
        store_link=urllib.parse.urlsplit(iri).scheme.lower() in ("http", "https"),
    )
    page.counts = dict(digest.counts)
    if info.kind == "group":
        page.attributes = attribute_rows(_attributes(docs))
        page.groups = [c for c in _children(digest, info) if c.kind == "group"]
        prefix = info.path + "/" if info.path else ""
        arrays = sorted((n for n in digest.nodes.values()
                         if n.kind == "array" and n.path.startswith(prefix) and n is not info),
                        key=lambda n: (n.path.count("/"), n.path.lower(), n.path))
        listed = MAX_LISTED if digest.full else MAX_LISTED_LARGE
        page.unlisted = max(0, len(arrays) - listed)
        page.arrays = []
        for node in arrays[:listed]:
            view = array_view(node, _node_documents(cat, digest, node.iri))
            view.relative = node.path[len(prefix):]
            page.arrays.append(view)
        inside = [f for f in digest.findings if f.node_iri == iri or f.node_path.startswith(prefix)
                  or (not info.path and f.node_iri in digest.nodes)]
    else:
        page.array = array_view(info, docs)
        page.attributes = page.array.attributes
        primary_path = posixpath.dirname(info.path) if info.kind == "dependent" else None
        if primary_path is not None:
            page.array.primary = digest.by_path.get(primary_path)
        page.array.dependents = [c for c in _children(digest, info) if c.kind == "dependent"]
        inside = [f for f in digest.findings if f.node_iri == iri or f.node_path.startswith(info.path + "/")]
    page.findings_total = len(inside)
    page.findings_elsewhere = any(f.node_iri != iri for f in inside)
    page.findings = inside[:MAX_FINDINGS]
    page.harvest = _harvest(cat, digest, root.iri)
    parent = breadcrumb[-2] if len(breadcrumb) >= 2 else None
    snippets = sparql_snippets(page, base)
    py = python_snippet(page, parent)
    if py is not None:
        snippets.append(py)
    snippets += tensorstore_snippets(page, docs)
    page.snippets = snippets
    page.links = node_links(page, base)
    return page


def node_links(page: NodePage, base: str) -> list[Link]:
    q = urllib.parse.urlencode({"iri": page.iri})
    links = [
        Link("Turtle", f"{base}/node?{q}&format=turtle", "the node's triples"),
        Link("JSON-LD", f"{base}/node?{q}&format=jsonld", "compacted with the catalogue context"),
        Link("Zarr metadata (JSON)", f"{base}/node?{q}&format=json", "rebuilt from the graph"),
    ]
    if page.info.kind != "group":
        links.append(Link("Chunks", f"{base}/node/chunks?{q}", "where every chunk lives (JSON)"))
        links.append(Link("TensorStore spec", f"{base}/node/tensorstore?{q}", "JSON"))
    links.append(Link("SPARQL endpoint", f"{base}/sparql", "query the whole catalogue"))
    return links


def _format(docs: dict[str, Any] | None) -> int | None:
    if not docs:
        return None
    if "zarr.json" in docs:
        return 3
    return 2


# --------------------------------------------------------------------------- the search page
#: Query parameters of the search page, in the order links write them.
SEARCH_LISTS = ("dtype", "dimension", "standard_name", "units", "zarr_format", "codec")
#: Results per page of the HTML search (``limit`` may ask for up to the API's maximum).
PAGE_SIZE = 20
#: Facet values shown before "more".
FACET_SHOWN = 8
#: Variables shown per result.
VARIABLES_SHOWN = 6

FACET_TITLES = {
    "dtype": "Data type", "dimension": "Dimension", "standard_name": "CF standard name",
    "units": "Units", "zarr_format": "Zarr format", "codec": "Codec", "valid": "Validity",
}
SORT_LABELS = {"relevance": "Relevance", "title": "Title", "-harvested": "Newest harvest",
               "harvested": "Oldest harvest"}


def _one(params: dict[str, list[str]], name: str) -> str | None:
    values = [v for v in params.get(name, []) if v != ""]
    if len(values) > 1:
        raise PageError(400, f"give the parameter {name} once")
    return values[0] if values else None


def parse_search(params: dict[str, list[str]]) -> SearchQuery:
    """The :class:`~catalogue.web.discovery.SearchQuery` of the page's parameters (same as ``/datasets``).

    The values are checked by ``/datasets``'s own parser
    (:func:`catalogue.web.datasets.search_query`); a bad value is a
    :class:`PageError` 400 saying which parameter and why. Empty values (an
    empty search box, "any" choices) mean "not given", a single-valued
    parameter given twice is refused; unknown parameters are ignored.
    """
    def many(name: str) -> list[str]:
        return [v for v in params.get(name, []) if v != ""]

    limit = _one(params, "limit")
    try:
        return api.search_query(
            q=_one(params, "q") or "", dtype=many("dtype"), dimension=many("dimension"),
            standard_name=many("standard_name"), units=many("units"), zarr_format=many("zarr_format"),
            codec=many("codec"), valid=_one(params, "valid"), harvested_since=_one(params, "harvested_since"),
            limit=PAGE_SIZE if limit is None else limit, offset=_one(params, "offset"), sort=_one(params, "sort"),
        )
    except HTTPError as exc:
        raise PageError(exc.status, exc.message) from None


@dataclass
class FacetValue:
    value: str
    label: str
    count: int
    active: bool
    href: str


@dataclass
class FacetView:
    name: str
    title: str
    shown: list[FacetValue]
    more: list[FacetValue]
    mono: bool


@dataclass
class ActiveFilter:
    label: str
    href: str


@dataclass
class HitView:
    dataset: DatasetSummary
    href: str
    #: Data variables (most dimensions) first.
    variables: list[Variable]
    more_variables: int
    harvested_iso: str


@dataclass
class PageLink:
    label: str
    href: str = ""
    current: bool = False


@dataclass
class SearchView:
    total: int
    catalogue_size: int
    hits: list[HitView]
    facets: list[FacetView]
    active: list[ActiveFilter]
    pages: list[PageLink]
    previous: str
    next: str
    first: int
    last: int
    clear_href: str
    #: Filters carried by the search form as hidden fields, so a new text keeps them.
    hidden: list[tuple[str, str]]
    sorts: list[tuple[str, str, bool]]


def _state(query: SearchQuery) -> dict[str, Any]:
    return {
        "q": query.q, "dtype": list(query.dtype), "dimension": list(query.dimension),
        "standard_name": list(query.standard_name), "units": list(query.units),
        "zarr_format": [str(z) for z in query.zarr_format], "codec": list(query.codec),
        "valid": [] if query.valid is None else ["true" if query.valid else "false"],
        "harvested_since": [query.harvested_since.isoformat().replace("+00:00", "Z")]
        if query.harvested_since is not None else [],
        "sort": query.sort, "limit": query.limit, "offset": query.offset,
    }


def _href(base: str, state: dict[str, Any]) -> str:
    pairs: list[tuple[str, str]] = []
    if state["q"]:
        pairs.append(("q", state["q"]))
    for name in (*SEARCH_LISTS, "valid", "harvested_since"):
        pairs += [(name, v) for v in state[name]]
    if state["sort"] != "relevance":
        pairs.append(("sort", state["sort"]))
    if state["limit"] != PAGE_SIZE:
        pairs.append(("limit", str(state["limit"])))
    if state["offset"]:
        pairs.append(("offset", str(state["offset"])))
    return f"{base}/" + ("?" + urllib.parse.urlencode(pairs) if pairs else "")


def _facet_label(name: str, value: str) -> str:
    if name == "zarr_format":
        return f"Zarr v{value}"
    if name == "valid":
        return {"true": "Valid", "false": "Invalid"}.get(value, value)
    return value


def _toggled(state: dict[str, Any], name: str, value: str) -> dict[str, Any]:
    new = {k: (list(v) if isinstance(v, list) else v) for k, v in state.items()}
    new["offset"] = 0
    values: list[str] = new[name]
    if value in values:
        values.remove(value)
    elif name == "valid":
        new[name] = [value]
    else:
        values.append(value)
    return new


def search_view(query: SearchQuery, result: SearchResult, *, base: str, catalogue_size: int) -> SearchView:
    """Links and labels of the search page: facet toggles, active filters, paging."""
    state = _state(query)
    facets = []
    for name in ("dtype", "dimension", "standard_name", "units", "codec", "zarr_format", "valid"):
        values = []
        for value, count in result.facets.get(name, []):
            active = value in state[name]
            values.append(FacetValue(value=value, label=_facet_label(name, value), count=count, active=active,
                                     href=_href(base, _toggled(state, name, value))))
        if not values:
            continue
        shown = values[:FACET_SHOWN] + [v for v in values[FACET_SHOWN:] if v.active]
        more = [v for v in values[FACET_SHOWN:] if not v.active]
        facets.append(FacetView(name=name, title=FACET_TITLES[name], shown=shown, more=more,
                                mono=name in ("dtype", "dimension", "standard_name", "units", "codec")))
    active = []
    for name in (*SEARCH_LISTS, "valid"):
        for value in state[name]:
            active.append(ActiveFilter(label=f"{FACET_TITLES[name]}: {_facet_label(name, value)}",
                                       href=_href(base, _toggled(state, name, value))))
    if state["harvested_since"]:
        without = dict(state, harvested_since=[], offset=0)
        active.append(ActiveFilter(label=f"Harvested since {state['harvested_since'][0]}",
                                   href=_href(base, without)))
    hits = []
    for d in result.hits:
        ranked = sorted(d.variables, key=lambda v: (-len(v.dimensions or []), v.path))
        hits.append(HitView(
            dataset=d, href=f"{base}/browse?" + urllib.parse.urlencode({"iri": d.iri}),
            variables=ranked[:VARIABLES_SHOWN], more_variables=max(0, len(ranked) - VARIABLES_SHOWN),
            harvested_iso=d.harvested.isoformat().replace("+00:00", "Z") if d.harvested else ""))
    limit, offset, total = query.limit, query.offset, result.total
    pages: list[PageLink] = []
    count = max(1, math.ceil(total / limit))
    current = offset // limit
    wanted = sorted({0, count - 1, *range(max(0, current - 2), min(count, current + 3))})
    wanted = [n for n in wanted if n * limit <= api.MAX_OFFSET]
    previous_number = -1
    for number in wanted:
        if previous_number >= 0 and number > previous_number + 1:
            pages.append(PageLink(label="…"))
        pages.append(PageLink(label=str(number + 1), href=_href(base, dict(state, offset=number * limit)),
                              current=number == current and offset % limit == 0))
        previous_number = number
    hidden: list[tuple[str, str]] = []
    for name in (*SEARCH_LISTS, "valid", "harvested_since"):
        hidden += [(name, v) for v in state[name]]
    if state["limit"] != PAGE_SIZE:
        hidden.append(("limit", str(state["limit"])))
    cleared = dict(_state(SearchQuery()), q=state["q"], sort=state["sort"], limit=state["limit"])
    return SearchView(
        total=total, catalogue_size=catalogue_size, hits=hits, facets=facets, active=active,
        pages=pages if count > 1 else [],
        previous=_href(base, dict(state, offset=max(0, offset - limit))) if offset > 0 else "",
        next=_href(base, dict(state, offset=offset + limit))
        if offset + limit < total and offset + limit <= api.MAX_OFFSET else "",
        first=offset + 1 if hits else 0, last=offset + len(hits), clear_href=_href(base, cleared),
        hidden=hidden,
        sorts=[(key, label, key == query.sort) for key, label in SORT_LABELS.items()],
    )
