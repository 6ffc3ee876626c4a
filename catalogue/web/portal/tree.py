"""The hierarchy tree of a node page: whole, or around the current node when very large."""

from __future__ import annotations

from .graph_digest import GraphDigest, NodeInfo
from .node_views import MAX_LISTED, TreeEntry

#: Hierarchies up to this many nodes show their whole tree; larger ones show the path to
#: the current node with the children of each group on it, and count what they leave out.
MAX_TREE = 100


def _on_path(path: str, current: str) -> bool:
    return path == current or not path or current.startswith(path + "/")


def build_tree(digest: GraphDigest, current: str) -> TreeEntry:
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
