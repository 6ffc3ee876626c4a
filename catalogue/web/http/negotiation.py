"""HTTP content negotiation (RFC 9110 §12.5.1), shared by every endpoint.

One concept, two levels: :func:`best_media_type` matches an ``Accept`` header
against media types; :func:`negotiate` chooses a :class:`Representation` for
a request, where ``format=`` wins over ``Accept`` and failures are HTTP
errors (400, 406).

The offers are in the server's order of preference; a client's ``Accept``
picks among them by q-value from its most specific matching range, and ties
go to the earlier offer. ``Accept`` is read leniently: malformed ranges are
skipped, media-type parameters other than ``q`` only make a range more
specific, and no valid range at all means "anything".

Representations of RDF take their media type and ``format=`` aliases from the
one format table, :mod:`catalogue.rdf.formats` (:meth:`Representation.of`);
only the URL-visible name (``jsonld``, ``ntriples``, ``rdfxml``…) is the
endpoint's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from starlette.requests import Request

from catalogue.rdf.formats import RDFFormat

from .errors import HTTPError

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


def best_media_type(header: str | None, offers: Sequence[str]) -> str | None:
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


@dataclass(frozen=True)
class Representation:
    """One negotiable representation: its ``format=`` name (and aliases) and media type.

    ``rdf`` is the RDF format it serialises to, for the RDF representations.
    """

    name: str
    media_type: str
    aliases: tuple[str, ...] = ()
    rdf: RDFFormat | None = None

    @classmethod
    def of(cls, name: str, fmt: RDFFormat) -> Representation:
        """The representation ``name`` of an RDF format: its media type and every alias of the table."""
        aliases = tuple(alias for alias in fmt.names if alias != name)
        return cls(name, fmt.media_type, aliases, fmt)


def negotiate(request: Request, offers: Sequence[Representation]) -> Representation:
    """The representation to answer with: ``format=`` if given, else the best for ``Accept``.

    Among equally acceptable offers the earlier one wins (``offers`` is in the
    server's order of preference); no ``Accept`` means the first offer. An
    unknown ``format`` is a 400, an ``Accept`` nothing satisfies a 406.
    """
    fmt = request.query_params.get("format")
    if fmt is not None:
        wanted = fmt.strip().lower()
        for offer in offers:
            if wanted == offer.name or wanted in offer.aliases or wanted == offer.media_type:
                return offer
        names = ", ".join(o.name for o in offers)
        raise HTTPError(400, f"unknown format {fmt[:40]!r}; choose from {names}")
    media_type = best_media_type(request.headers.get("accept"), [o.media_type for o in offers])
    best = next((o for o in offers if o.media_type == media_type), None)
    if best is None:
        types = ", ".join(o.media_type for o in offers)
        raise HTTPError(406, f"none of the acceptable media types is available; available: {types}", {"Vary": "Accept"})
    return best
