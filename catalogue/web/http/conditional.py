"""Conditional requests (RFC 9110 §13): ``If-None-Match`` against an entity tag."""

from __future__ import annotations


def etag_matches(header: str | None, etag: str) -> bool:
    """Whether ``If-None-Match`` matches ``etag`` (weak comparison, as RFC 9110 13.1.2 says)."""
    if not header:
        return False
    if header.strip() == "*":
        return True
    return any(tag.strip().removeprefix("W/") == etag for tag in header.split(",")[:64])
