"""Streamed answers that still fail properly: errors before the first piece are HTTP errors."""

from __future__ import annotations

from collections.abc import AsyncIterator


async def first_then_rest(items: AsyncIterator[str]) -> AsyncIterator[str]:
    """``items`` with its first piece already produced, so errors raised before the
    first piece become proper HTTP errors (not a 200 cut short).

    Returns an async iterator that yields the first piece and then the rest,
    and closes ``items`` (returning its database connection) however the
    response ends.
    """
    try:
        first = await items.__anext__()
    except StopAsyncIteration:
        first = None
    except BaseException:
        await items.aclose()  # type: ignore[attr-defined]
        raise

    async def rest() -> AsyncIterator[str]:
        try:
            if first is not None:
                yield first
            async for piece in items:
                yield piece
        finally:
            await items.aclose()  # type: ignore[attr-defined]

    return rest()
