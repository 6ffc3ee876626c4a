"""Validation: every node of a hierarchy against the schemas and Zarr's own rules.

``validate_hierarchy`` runs, for each node:

1. the Zarr rules of its version (``zarr_v3``, ``zarr_v2``; for v2 arrays the
   GeoZarr ``zarr_array_metadata`` schema in the chosen profile),
2. the attribute rules (CF, ``_ARRAY_DIMENSIONS``, ``zarr_conventions``), the GeoZarr
   conventions' (``proj:``, ``spatial:``, ``multiscales``: ``geozarr.py``) and OME-Zarr's
   (the NGFF schemas of its version: ``ome.py``),
3. the corrected ZEP 6 ZOM schema on the node's ZOM (reported only where no
   more specific rule already points),

then the hierarchy-wide dependent-array rules. Documents the harvester could
not use at all are findings too (their ``DocumentError`` carries the rule).
Nothing is fetched or executed: validation reads the parsed documents only.
"""

from __future__ import annotations

import importlib
from typing import Any

from catalogue.validate.profiles import DEFAULT_PROFILE, PROFILES

#: Where each name of the package lives. They load when first asked for, so that what
#: only needs the profiles (the CLI's options, the web server) does not load the schemas,
#: their YAML and every rule module.
_LAZY = {
    "RULES": "rules", "Rule": "rules", "Severity": "rules", "rule": "rules",
    "Finding": "findings", "Report": "findings",
    "check_node": "hierarchy", "validate_hierarchy": "hierarchy",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(f"{__name__}.{_LAZY[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "DEFAULT_PROFILE", "PROFILES", "RULES", "Finding", "Report", "Rule", "Severity", "rule", "validate_hierarchy",
]
