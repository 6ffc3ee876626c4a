"""HTTP content negotiation (RFC 9110 §12.5.1), shared by every endpoint.

The offers are in the server's order of preference; a client's ``Accept``
picks among them by q-value from its most specific matching range, and ties
go to the earlier offer. ``Accept`` is read leniently: malformed ranges are
skipped, media-type parameters other than ``q`` only make a range more
specific, and no valid range at all means "anything".
"""

from __future__ import annotations

from collections.abc import Sequence

_MediaRange = tuple[str, str, float, int]  # type, subtype, q, specificity bonus


def parse_accept(header: str | None) -> list[_MediaRange]:
    """The media ranges of an ``Accept`` header; malformed ranges are skipped (RFC 9110 §12.5.1)."""
    ranges: list[_MediaRange] = []
    for item in (header or "").split(","):
        media, *params = item.split(";")
        media = media.strip().lower()
        type_, slash, subtype = media.partition("/")
        if not slash or not type_ or not subtype or "/" in subtype:
            continue
        if type_ == "*" and subtype != "*":
            continue
        q: float | None = 1.0
        extra = 0
        for param in params:
            name, _, value = param.strip().partition("=")
            if name.strip().lower() != "q":
                extra += 1
                continue
            try:
                q = float(value.strip())
            except ValueError:
                q = None
            if q is not None and not 0.0 <= q <= 1.0:  # also rejects NaN
                q = None
            break  # what follows q are accept-extensions
        if q is not None:
            ranges.append((type_, subtype, q, extra))
    return ranges


def negotiate(header: str | None, offers: Sequence[str]) -> str | None:
    """The offer the client prefers: highest q from the most specific matching
    range, ties to the earliest offer; ``None`` if nothing is acceptable.

    No ``Accept`` header (or one with no valid range) accepts anything: the first
    offer is the default.
    """
    ranges = parse_accept(header)
    if not ranges:
        return offers[0] if offers else None
    best: str | None = None
    best_q = 0.0
    for offer in offers:
        type_, _, subtype = offer.partition("/")
        match: tuple[int, float] | None = None
        for r_type, r_sub, q, extra in ranges:
            if r_type == type_ and r_sub == subtype:
                rank = 2 + extra
            elif r_type == type_ and r_sub == "*":
                rank = 1
            elif r_type == "*":
                rank = 0
            else:
                continue
            if match is None or rank > match[0] or (rank == match[0] and q > match[1]):
                match = (rank, q)
        if match is not None and match[1] > best_q:
            best, best_q = offer, match[1]
    return best
