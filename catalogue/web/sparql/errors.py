"""The library's query errors as the endpoint's HTTP statuses, in one place.

400 a query or update at fault (:class:`~catalogue.errors.QueryError`); 413 an answer
or dataset past a limit (:class:`~catalogue.errors.TooLarge`: the request asks for more
than the server is willing to produce); 503 past ``query_timeout``
(:class:`~catalogue.errors.QueryTimeout`: the server stopped the work, a temporary
refusal of this much work rather than a client syntax error; the same status as when
every connection is busy). Busy databases and full pools are answered by the app's
handlers (:mod:`catalogue.web.http.errors`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from catalogue.errors import QueryError, QueryTimeout, TooLarge

from ..http.errors import HTTPError

__all__ = ["http_errors", "timeout_message"]


def timeout_message(exc: QueryTimeout, what: str = "query") -> str:
    """The 503's message: the time limit, whose it is, and what to do."""
    message = f"{exc} (this server's query_timeout); make the query more selective, or add LIMIT"
    return message if what == "query" else message.replace("query", what, 1)


@contextmanager
def http_errors(what: str = "query") -> Iterator[None]:
    """Raise the library's query errors inside the block as :class:`HTTPError`."""
    try:
        yield
    except QueryTimeout as exc:
        raise HTTPError(503, timeout_message(exc, what)) from None
    except TooLarge as exc:
        raise HTTPError(413, str(exc)) from None
    except QueryError as exc:
        raise HTTPError(400, str(exc)) from None
