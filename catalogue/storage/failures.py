"""What a failed remote request means: absent, empty, transient, denied, gone or fatal.

fsspec's backends (aiohttp for HTTP, botocore for S3) fail in dozens of ways and wrap
each other's exceptions; :func:`classify` walks the exception chain once and sorts the
failure into a :class:`Failure` and a short reason, so that the retry policy
(:mod:`catalogue.storage.retry`) decides on the kind alone and the message an operator
reads names the cause in one line, never a traceback.
"""

from __future__ import annotations

import errno
from enum import Enum
from typing import Any

__all__ = ["Failure", "classify"]

class Failure(Enum):
    """What a failed remote request means for the harvest."""

    ABSENT = "absent"  # 404, NoSuchKey: the document does not exist
    EMPTY = "empty"  # 416 on a ranged read: the file exists and is empty
    TRANSIENT = "transient"  # 5xx, 429, time-outs, resets: try again later
    CONNECT = "connect"  # cannot connect at all: transient, but about the whole source
    DENIED = "denied"  # 401/403, bad or missing credentials: never retried
    GONE = "gone"  # the bucket does not exist: the whole source is missing
    FATAL = "fatal"  # anything else: this document cannot be read


_AUTH_CODES = {
    "AccessDenied", "AllAccessDisabled", "InvalidAccessKeyId", "SignatureDoesNotMatch",
    "ExpiredToken", "InvalidToken", "TokenRefreshRequired", "AccountProblem", "InvalidSecurity",
    "RequestTimeTooSkewed", "NotSignedUp", "UnrecognizedClientException",
}
_THROTTLE_CODES = {
    "SlowDown", "Throttling", "ThrottlingException", "RequestLimitExceeded", "TooManyRequests",
    "RequestThrottled", "ServiceUnavailable", "InternalError", "RequestTimeout",
    "BandwidthLimitExceeded", "OperationAborted",
}
_CONNECT_ERRNOS = {errno.ECONNREFUSED, errno.EHOSTUNREACH, errno.ENETUNREACH, errno.EHOSTDOWN}
_RESET_ERRNOS = {errno.ECONNRESET, errno.ECONNABORTED, errno.EPIPE, errno.ETIMEDOUT}


def _chain(exc: BaseException) -> list[BaseException]:
    """The exception and its causes/contexts (the libraries wrap each other's errors)."""
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen and len(seen) < 8:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def _status_failure(status: int) -> Failure | None:
    if status in (404, 410):
        return Failure.ABSENT
    if status == 416:
        return Failure.EMPTY
    if status in (401, 403):
        return Failure.DENIED
    if status in (408, 425, 429) or status >= 500:
        return Failure.TRANSIENT
    return None


def classify(exc: BaseException, timeout: float) -> tuple[Failure, str]:
    """Sort a failed request into a :class:`Failure` and a short reason for the message."""
    import aiohttp

    try:
        import botocore.exceptions as boto
    except ImportError:  # pragma: no cover - s3fs (and so botocore) is a dependency
        boto = None  # type: ignore[assignment]
    for item in _chain(exc):
        if boto is not None and isinstance(item, boto.ClientError):
            response: dict[str, Any] = getattr(item, "response", None) or {}
            code = str(response.get("Error", {}).get("Code", ""))
            status = int(response.get("ResponseMetadata", {}).get("HTTPStatusCode") or 0)
            message = str(response.get("Error", {}).get("Message", "")) or code
            reason = f"{code or 'error'} (HTTP {status}): {message}" if status else f"{code}: {message}"
            if code == "NoSuchBucket":
                return Failure.GONE, "the bucket does not exist"
            if code in ("NoSuchKey", "NotFound", "404"):
                return Failure.ABSENT, reason
            if code == "InvalidRange":
                return Failure.EMPTY, reason
            if code in _AUTH_CODES:
                return Failure.DENIED, reason
            if code in _THROTTLE_CODES:
                return Failure.TRANSIENT, reason
            return (_status_failure(status) or Failure.FATAL), reason
        if isinstance(item, aiohttp.ClientResponseError):
            reason = f"HTTP {item.status} {item.message}".strip()
            return (_status_failure(item.status) or Failure.FATAL), reason
    for item in _chain(exc):
        if isinstance(item, TimeoutError) or (  # asyncio's and fsspec's time-outs too
            boto is not None and isinstance(item, boto.ConnectTimeoutError | boto.ReadTimeoutError)
        ):
            return Failure.TRANSIENT, f"timed out after {timeout:g} s"
        if isinstance(item, aiohttp.ClientConnectorError):
            return Failure.CONNECT, f"cannot connect: {item.os_error.strerror or item.os_error}"
        if boto is not None and isinstance(item, boto.NoCredentialsError):
            return Failure.DENIED, "no credentials found (give key/secret or anon=True in storage_options, or set AWS_* variables)"
        if boto is not None and isinstance(item, boto.EndpointConnectionError):
            return Failure.CONNECT, f"cannot connect to {item.kwargs.get('endpoint_url', 'the endpoint')}"
        if isinstance(item, aiohttp.ServerDisconnectedError | aiohttp.ClientPayloadError | aiohttp.ClientOSError):
            return Failure.TRANSIENT, f"connection lost: {item}"
        if boto is not None and isinstance(item, boto.HTTPClientError | boto.ConnectionError):
            return Failure.TRANSIENT, f"connection error: {item}"
        if isinstance(item, aiohttp.ClientConnectionError):
            return Failure.TRANSIENT, f"connection error: {item}"
        if isinstance(item, OSError) and item.errno in _CONNECT_ERRNOS:
            return Failure.CONNECT, f"cannot connect: {item.strerror}"
        if isinstance(item, OSError) and item.errno in _RESET_ERRNOS:
            return Failure.TRANSIENT, f"connection lost: {item.strerror}"
    if isinstance(exc, FileNotFoundError):
        return Failure.ABSENT, "not found"
    if isinstance(exc, PermissionError):
        return Failure.DENIED, str(exc) or "permission denied"
    return Failure.FATAL, f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
