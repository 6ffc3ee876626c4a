"""zarr-catalogue: a linked-data metadata catalogue for Zarr hierarchies.

    >>> import catalogue
    >>> cat = catalogue.open("catalogue.db")
    >>> report = cat.harvest("examples/air-temperature-v3.zarr")
    >>> cat.query("SELECT ?a WHERE { ?a a zarr:Array }")
"""

from __future__ import annotations

__version__ = "0.1.0"

from catalogue.api import Catalogue, open
from catalogue.harvest.run import HarvestReport

__all__ = ["Catalogue", "HarvestReport", "__version__", "open"]
