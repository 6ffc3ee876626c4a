"""How large a metadata document may be: a module of its own (no fsspec) so that the
API's defaults and the CLI's options can name the limit without loading the stores."""

from __future__ import annotations

from typing import Final

#: Metadata documents larger than this are refused: they are almost always
#: data stuffed into attributes, and reading them whole would let one hostile
#: store exhaust memory. Consolidated metadata gets a larger budget.
DEFAULT_MAX_DOCUMENT_BYTES: Final = 4 * 1024 * 1024
CONSOLIDATED_FACTOR: Final = 64

__all__ = ["CONSOLIDATED_FACTOR", "DEFAULT_MAX_DOCUMENT_BYTES"]
