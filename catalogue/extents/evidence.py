"""Evidence: what one source says about one node's extent, before the sources are combined.

Each source family (``conventions.py``, ``cf.py``, ``acdd.py``, ``stac_item.py``) reads
the hierarchy and yields evidence; ``extract.py`` combines the evidence of a node into
its :class:`~catalogue.model.extents.Extent`, records the source of every figure it
keeps, and turns disagreements between sources into findings instead of choosing
silently. Keeping the sources apart until then is what makes a conflict visible.
"""

from __future__ import annotations

from dataclasses import dataclass

from catalogue.model.extents import Box, NativeCRS, Period, Source

__all__ = ["Evidence"]


@dataclass(frozen=True)
class Evidence:
    """The figures one source gives for the node at ``path`` (``""`` is the root).

    ``edges`` says whether ``bbox``/``native_bbox`` are cell edges (bounds variables, a
    transform, regular spacing) rather than the centres of the outermost cells: edges
    are preferred when sources are combined.
    """

    path: str
    source: Source
    bbox: Box | None = None
    geometry: str | None = None
    crs: NativeCRS | None = None
    native_bbox: tuple[float, float, float, float] | None = None
    edges: bool = False
    spatial_resolution: float | None = None
    period: Period | None = None
    temporal_resolution: str | None = None
