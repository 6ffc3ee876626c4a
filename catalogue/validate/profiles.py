"""The validation profiles: which GeoZarr building-block schemas a store is checked against.

``corrected`` (the default) is the schema with its documented bugs fixed (docs/design.md);
``upstream`` is the schema as published. A module of its own so that naming a profile
(the CLI's options, the API's defaults) loads none of the schemas.
"""

from __future__ import annotations

from typing import Final

PROFILES: Final = ("corrected", "upstream")
DEFAULT_PROFILE: Final = "corrected"

__all__ = ["DEFAULT_PROFILE", "PROFILES"]
