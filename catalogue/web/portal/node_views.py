"""What the dataset/node page (``/browse``) shows: its view models and limits (no HTML here).

Assembled by :func:`catalogue.web.portal.node_page.node_page`, rendered by
``templates/node.html``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from catalogue.rdf.dcat import iri_name
from catalogue.rdf.ome import OmeStructure

from .arrays import ArrayView, AttributeRow
from .extent_view import ExtentView
from .graph_digest import Finding, NodeInfo
from .versions import Versions

#: Arrays listed with their layout on a group page.
MAX_LISTED = 200


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
    #: Where and when (``None`` on nodes that neither declare an extent nor are a dataset).
    extent: ExtentView | None = None
    #: A group's OME-Zarr structure (plate and wells, well and fields, image and labels).
    ome: OmeStructure | None = None
    #: The dataset's versions (Icechunk) and the storage its chunks are read from (dataset pages).
    versions: Versions | None = None

    @property
    def root_name(self) -> str:
        """The store's name (last segment of the root URL), for the tree's root."""
        return iri_name(self.root.iri)

    @property
    def kind_label(self) -> str:
        return {"group": "Group", "array": "Array", "dependent": "Dependent array"}[self.info.kind]
