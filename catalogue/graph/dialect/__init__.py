"""The SQL that differs between SQLite and PostgreSQL, one module per database.

The store picks its dialect once per engine (:func:`dialect_for`) and calls it for
every statement whose text or driver-level parameters differ; everything else is
portable SQLAlchemy.  A new database is a new module here implementing
:class:`.base.Dialect`.
"""

from __future__ import annotations

from .base import Dialect
from .postgres import POSTGRES
from .sqlite import SQLITE

__all__ = ["Dialect", "dialect_for"]

_DIALECTS: dict[str, Dialect] = {SQLITE.name: SQLITE, POSTGRES.name: POSTGRES}


def dialect_for(name: str) -> Dialect:
    """The dialect for SQLAlchemy's dialect ``name`` (``engine.dialect.name``)."""
    try:
        return _DIALECTS[name]
    except KeyError:
        raise ValueError(f"the catalogue store runs on SQLite or PostgreSQL, not {name!r}") from None
