"""Who may update: the operator's admin token as a bearer token."""

from __future__ import annotations

import hashlib
import hmac

from fastapi import Request

from ..http.errors import HTTPError

__all__ = ["authorise"]


def authorise(request: Request, token: str) -> None:
    """Bearer token check; digests of equal length compared in constant time."""
    header = request.headers.get("authorization", "")
    scheme, _, given = header.strip().partition(" ")
    realm = 'Bearer realm="zarr-catalogue SPARQL Update"'
    if scheme.lower() != "bearer" or not given.strip():
        raise HTTPError(401, "SPARQL Update needs the header Authorization: Bearer <admin token>",
                        {"WWW-Authenticate": realm})
    given_digest = hashlib.sha256(given.strip().encode("utf-8", "surrogateescape")).digest()
    token_digest = hashlib.sha256(token.encode("utf-8")).digest()
    if not hmac.compare_digest(given_digest, token_digest):
        raise HTTPError(401, "the admin token is not valid",
                        {"WWW-Authenticate": realm + ', error="invalid_token"'})
