"""What a bulk load reports, and how it fails: shared by every loader of :mod:`catalogue.graph.load`."""

from __future__ import annotations

from dataclasses import dataclass

from catalogue.errors import DocumentError

__all__ = ["LoadError", "LoadReport"]


@dataclass
class LoadReport:
    """What one load did."""

    path: str
    format: str
    #: The graph statements without a graph went to.
    graph: str
    #: Statements read from the file (duplicates included).
    triples: int = 0
    #: Quads that were not in the store before.
    quads: int = 0
    #: Terms that were not in the store before.
    terms: int = 0
    seconds: float = 0.0
    #: Whether ``graph`` did not exist before the load.
    created: bool = False

    @property
    def rate(self) -> float:
        """Statements read per second."""
        return self.triples / self.seconds if self.seconds > 0 else 0.0

    def summary(self) -> str:
        return (
            f"loaded {self.triples:,} triples ({self.quads:,} new quads, {self.terms:,} new "
            f"terms) in {self.seconds:.1f} s: {self.rate:,.0f} triples/s"
        )


class LoadError(DocumentError):
    """A file that cannot be loaded: prints as ``<file>:<line>: <reason>``.

    ``line`` is ``None`` where the parser does not say (or the problem is not one
    line's, such as a term hash collision).
    """

    def __init__(self, path: str, line: int | None, reason: str) -> None:
        self.path = path
        self.line = line
        super().__init__(path if line is None else f"{path}:{line}", reason)
