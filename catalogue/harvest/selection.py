"""Which nodes of a hierarchy a harvest reads: node paths, include/exclude globs, a depth
limit and the operator's explicit node list (see :mod:`catalogue.harvest.reader`)."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable
from dataclasses import dataclass
from fnmatch import fnmatchcase

from catalogue.errors import UsageError
from catalogue.model.nodes import Hierarchy

__all__ = ["Selection", "ancestors", "depth", "document_key", "explicit_nodes"]


def document_key(path: str, name: str) -> str:
    """The key of document ``name`` of the node at ``path``."""
    return posixpath.join(path, name) if path else name


def depth(path: str) -> int:
    """How far below the root a node is: 0 for the root, 1 for its children..."""
    return path.count("/") + 1 if path else 0


def ancestors(path: str) -> list[str]:
    """The proper ancestors of a node path, root ("") first."""
    parts = path.split("/") if path else []
    return ["/".join(parts[:i]) for i in range(len(parts))]


@dataclass(frozen=True)
class Selection:
    """Which nodes a harvest catalogues: include/exclude globs and a depth limit."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    max_depth: int | None = None

    def skipped(self, path: str) -> bool:
        """Not read at all: too deep, or the node or one of its ancestors is excluded."""
        if not path:
            return False
        if self.max_depth is not None and depth(path) > self.max_depth:
            return True
        return any(fnmatchcase(p, pattern) for p in (*ancestors(path)[1:], path) for pattern in self.exclude)

    def descends(self, path: str) -> bool:
        """Whether the children of a group at ``path`` are within the depth limit."""
        return self.max_depth is None or depth(path) < self.max_depth

    def prune(self, h: Hierarchy) -> None:
        """Drop nodes (and failures) that neither match ``include`` nor lead to a match."""
        if not self.include:
            return
        found = set(h.nodes) | set(h.failed)
        keep = {""}
        for path in found:
            if any(fnmatchcase(path, pattern) for pattern in self.include):
                keep.add(path)
                keep.update(ancestors(path))
        for path in found - keep:
            h.nodes.pop(path, None)
            h.failed.pop(path, None)


def explicit_nodes(nodes: Iterable[str]) -> tuple[str, ...]:
    """Normalise the operator's node list: relative paths without empty, '.' or '..' segments."""
    out: list[str] = []
    for raw in nodes:
        path = str(raw).strip("/")
        if not path:
            continue
        if any(part in ("", ".", "..") for part in path.split("/")):
            raise UsageError(f"nodes: {raw!r} is not a node path below the root (no empty, '.' or '..' parts)")
        out.append(path)
    return tuple(dict.fromkeys(out))
