"""The retry policy of remote requests: a time limit per attempt, exponential backoff.

One policy for every remote store (the libraries' own retries are turned off, see
:mod:`catalogue.storage.access`): transient failures (5xx, 429, time-outs, resets) are
retried with a doubling delay; a missing document is absent, never retried; refused
credentials and missing buckets stop at once. What still fails becomes a one-line
:class:`~catalogue.errors.SourceUnavailable` or :class:`~catalogue.errors.DocumentError`.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TypeVar

from catalogue.errors import DocumentError, SourceUnavailable
from catalogue.storage.failures import Failure, classify

__all__ = ["attempt"]

log = logging.getLogger(__name__)

T = TypeVar("T")


async def attempt(url: str, request: Callable[[], Awaitable[T]], *, timeout: float, retries: int,
                  backoff: float) -> T | bytes | None:
    """One remote request with the retry policy: None when absent, b"" for 416 on empty files.

    ``timeout`` bounds each attempt (seconds), ``retries`` counts the attempts after the
    first, ``backoff`` is the first delay (doubling per retry).
    Raises SourceUnavailable (denied, gone, or transient failures outlasting
    the retries) or DocumentError (anything else about this one key).
    """
    attempts = retries + 1
    last = ""
    connect = False
    for number in range(attempts):
        try:
            return await asyncio.wait_for(request(), timeout)
        except asyncio.CancelledError:
            raise
        except Exception as exc:
            kind, reason = classify(exc, timeout)
            if kind is Failure.ABSENT:
                return None
            if kind is Failure.EMPTY:
                return b""
            if kind is Failure.DENIED:
                raise SourceUnavailable(
                    url, f"access denied: {reason} (check the credentials in storage_options or the URL)", denied=True
                ) from None
            if kind is Failure.GONE:
                raise SourceUnavailable(url, reason) from None
            if kind is Failure.FATAL:
                raise DocumentError(url, f"cannot read: {reason}", rule="document.unreadable") from None
            last, connect = reason, kind is Failure.CONNECT
            if number + 1 < attempts:
                delay = backoff * 2**number
                log.debug("%s: %s; retrying in %.1f s", url, reason, delay)
                await asyncio.sleep(delay)
    tries = "1 attempt" if attempts == 1 else f"{attempts} attempts"
    raise SourceUnavailable(url, f"unavailable after {tries}: {last}", whole_source=connect)
