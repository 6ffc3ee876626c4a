"""What an operator can set on a running server, in one place.

Every limit has a default that keeps one bad client from taking the server
down (docs/web.md). ``catalogue serve`` fills this from its options.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Settings:
    """Server settings: database, public base URL, limits, CORS and the admin token."""

    #: Database URL or SQLite path (``catalogue.graph.database.database_url`` rules).
    db: str | None = None
    #: The server's public base URL (no trailing slash), e.g. ``https://data.example.org``.
    #: Node IRIs starting with it are dereferenceable under their own path. ``None``: the
    #: base of each request.
    base_url: str | None = None
    #: Seconds a query may run before the database work is stopped (HTTP 503).
    query_timeout: float = 30.0
    #: Rows (SELECT) or triples (CONSTRUCT/DESCRIBE) a query may return (HTTP 413 beyond).
    max_results: int = 100_000
    #: Bytes a request body may have (HTTP 413 beyond).
    max_body_bytes: int = 1_000_000
    #: Characters a SPARQL query may have (HTTP 413 beyond).
    max_query_chars: int = 100_000
    #: Database connections (hence requests doing database work at once).
    workers: int = 4
    #: Connections for streamed responses (exports, chunk listings), apart from ``workers``:
    #: slow readers of streams cannot take connections away from queries and pages.
    stream_workers: int = 2
    #: Seconds a request waits for a free connection before HTTP 503 (bounded queueing
    #: keeps latency and memory bounded under load instead of piling requests up).
    queue_timeout: float = 10.0
    #: Bytes of search answers each process keeps until the search index changes (0: none;
    #: :mod:`catalogue.web.search_cache`).
    search_cache_bytes: int = 64 * 1024 * 1024
    #: Origins allowed by CORS (``["*"]`` for any); empty: CORS off.
    cors_origins: tuple[str, ...] = ()
    #: Token that allows SPARQL Update (``Authorization: Bearer <token>``); ``None``: read-only.
    admin_token: str | None = field(default=None, repr=False)
