"""PostgreSQL catalogues get pgcrypto, for SPARQL's ``SHA1`` in SQL.

Revision ID: 0013_pgcrypto
Revises: 0012_search_huge_layout
Create Date: 2026-11-29 00:00:00

PostgreSQL computes MD5 and the SHA-2 hashes itself but SHA-1 only through pgcrypto's
``digest`` (a contrib extension, trusted since PostgreSQL 13: a role that may create
objects in the database may install it). Where ``pgcrypto`` is in
``pg_available_extensions`` the upgrade installs it, in a savepoint so that a refusal
(an older server, a role without the right) changes nothing but a logged warning (the
revision is recorded all the same: ``CREATE EXTENSION pgcrypto`` by hand later is enough,
a server notices it when it next starts); the SPARQL compiler then
sends ``SHA1`` to the database (:func:`catalogue.graph.sparql.functions.has_digest`),
and leaves it to rdflib otherwise. SQLite is untouched. The downgrade leaves the
extension installed (other objects may use it), as PostGIS's does.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from alembic import op
from sqlalchemy.exc import DBAPIError

revision: str = "0013_pgcrypto"
down_revision: str | Sequence[str] | None = "0012_search_huge_layout"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

log = logging.getLogger(__name__)


def upgrade() -> None:
    conn = op.get_bind()
    if conn.dialect.name != "postgresql":
        return
    if not conn.exec_driver_sql("SELECT 1 FROM pg_available_extensions WHERE name = 'pgcrypto'").scalar():
        return
    savepoint = conn.begin_nested()
    try:
        conn.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS pgcrypto")
    except DBAPIError as exc:
        savepoint.rollback()
        reason = (str(exc.orig or exc).splitlines() or ["refused"])[0]
        log.warning("pgcrypto not installed (SPARQL's SHA1 will be evaluated in Python): %s", reason)
        return
    savepoint.commit()


def downgrade() -> None:
    """The extension stays."""
