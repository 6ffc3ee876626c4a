"""SQL-backed RDF graph store: term encoding, schema, migrations and the rdflib store.

``SQLStore`` is also registered as the rdflib store plugin ``catalogue``, so
``rdflib.Dataset(store="catalogue")`` works without importing this package.
"""

from .database import (
    current_revision,
    database_url,
    ensure_schema,
    head_revision,
    make_engine,
    upgrade,
)
from .store import SQLStore
from .terms import TermCollisionError, comparable_value, decode, encode, term_hash

__all__ = [
    "SQLStore",
    "TermCollisionError",
    "comparable_value",
    "current_revision",
    "database_url",
    "decode",
    "encode",
    "ensure_schema",
    "head_revision",
    "make_engine",
    "term_hash",
    "upgrade",
]
