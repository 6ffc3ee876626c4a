"""A graph's whole content as the transaction that replaced it wrote it.

:meth:`~catalogue.graph.store.SQLStore.replace_graph` empties a graph and writes it
again; the term ids and the nodes of every row are then in the writer's hands. The
derived indexes (:mod:`.derived`) are brought up to date just before the commit, and
would otherwise read back the rows just written (for a harvest of 1,000 arrays, 42,000
rows and 16,000 terms: 8% of the harvest). So the session keeps what it wrote, per graph,
for the hooks, until anything else in the transaction touches that graph (every write
path reports the graphs it touches to the session, which then forgets them here) or the
transaction ends.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Final

from rdflib.term import Node

__all__ = ["MAX_WRITTEN_ROWS", "WrittenGraph"]

#: Rows kept per transaction at most (all its graphs together): a larger graph is read
#: back by the hooks, so memory stays bounded as for any write.
MAX_WRITTEN_ROWS: Final = 500_000


@dataclass
class WrittenGraph:
    """The rows of one graph as ``(g, s, p, o)`` term ids, as the quads table holds them
    (each once, in the order written), and the node of every id they use."""

    name: Node
    rows: dict[tuple[int, int, int, int], None] = field(default_factory=dict)
    nodes: dict[int, Node] = field(default_factory=dict)
    #: More rows than :data:`MAX_WRITTEN_ROWS`: nothing kept, the hooks read the graph.
    overflowed: bool = False

    def take(self, rows: list[tuple[int, int, int, int]], ids: list[int], nodes: list[Node]) -> None:
        """Keep one batch: its ``(g, s, p, o)`` rows and the nodes of its ids."""
        if self.overflowed:
            return
        if len(self.rows) + len(rows) > MAX_WRITTEN_ROWS:
            self.overflowed = True
            self.rows.clear()
            self.nodes.clear()
            return
        self.rows.update(dict.fromkeys(rows))
        self.nodes.update(zip(ids, nodes, strict=True))
