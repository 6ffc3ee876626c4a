"""Node paths as they appear in IRIs.

A node's IRI is its hierarchy's URL, a slash and its path percent-encoded;
the harvest, the store access, chunk resolution and the model all build
them, so the one rule of which characters stay literal lives here.
"""

from __future__ import annotations

from urllib.parse import quote

#: Characters left unescaped in node paths when they become IRIs.
PATH_SAFE = "/!$&'()*+,;=:@-._~"


def quote_path(path: str) -> str:
    """Percent-encode a node path for use in an IRI (slashes kept)."""
    return quote(path, safe=PATH_SAFE)
