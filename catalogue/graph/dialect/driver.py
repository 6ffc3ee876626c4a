"""Statements run on the driver's own connection, with errors as SQLAlchemy raises them.

Hot statements (a compiled query's rows, the look-up of its constants, a DESCRIBE) go
straight to the driver: SQLAlchemy's result set-up costs more than a sub-millisecond
statement. Their errors must still reach the callers as SQLAlchemy's, which those tell
apart (a lock wait, a timeout, a database fault against a fault of the query), and a
lost connection must still be invalidated.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from sqlalchemy.engine import Connection
from sqlalchemy.exc import DBAPIError

__all__ = ["driver_connection", "driver_errors"]


def driver_connection(conn: Connection) -> Any:
    """The driver's connection of ``conn``, in the transaction SQLAlchemy began (begun
    now if none was: the store's ``begin`` hook sends the ``BEGIN``)."""
    if not conn.in_transaction():
        conn.begin()
    return conn.connection.driver_connection


@contextlib.contextmanager
def driver_errors(conn: Connection, statement: str, params: Any = None) -> Iterator[None]:
    """The driver's errors raised inside as SQLAlchemy raises them (``OperationalError``
    for a cancelled or interrupted statement), the connection invalidated when lost."""
    dialect = conn.dialect
    try:
        yield
    except dialect.loaded_dbapi.Error as exc:
        lost = dialect.is_disconnect(exc, conn.connection.dbapi_connection, None)
        if lost:
            with contextlib.suppress(Exception):
                conn.invalidate(exc)
        raise DBAPIError.instance(statement, params, exc, dialect.loaded_dbapi.Error,
                                  connection_invalidated=lost, dialect=dialect) from exc
