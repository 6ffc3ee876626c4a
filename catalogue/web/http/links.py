"""The server's own URLs in answers: public base, link prefix, IRIs made fit for headers."""

from __future__ import annotations

from urllib.parse import quote

from starlette.requests import Request


def iri_to_uri(iri: str) -> str:
    """The IRI with non-ASCII characters percent-encoded (RFC 3987 3.1), for HTTP headers."""
    return quote(iri, safe="/:?#[]@!$&'()*+,;=%~")


def link_base(request: Request) -> str:
    """The prefix of links in headers: ``Settings.base_url``, else none (relative links).

    Never the request's ``Host``: a redirect or ``Link`` built from it would
    let a client point other clients elsewhere through a shared cache.
    """
    return (request.app.state.settings.base_url or "").rstrip("/")


def public_base(request: Request) -> str:
    """The server's public base URL without a trailing slash: ``Settings.base_url`` or the request's."""
    configured = request.app.state.settings.base_url
    return (configured or str(request.base_url)).rstrip("/")
