"""zarr-catalogue: a linked-data metadata catalogue for Zarr hierarchies.

    >>> import catalogue
    >>> cat = catalogue.open("catalogue.db")
    >>> report = cat.harvest("examples/air-temperature-v3.zarr")
    >>> cat.query("SELECT ?a WHERE { ?a a zarr:Array }")

The facade is imported on first use (PEP 562), not with the package: every
``catalogue.*`` module imports this package first, and a command or a server
process should pay only for the modules it uses (``catalogue serve`` answers
within two seconds of starting; the whole library takes about one to import).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from catalogue.api import Catalogue, open
    from catalogue.harvest.run import HarvestReport

__all__ = ["Catalogue", "HarvestReport", "__version__", "open"]

_LAZY = {"Catalogue": "catalogue.api", "open": "catalogue.api", "HarvestReport": "catalogue.harvest.run"}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'catalogue' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_LAZY})
