"""The PostgreSQL spatial index uses PostGIS when it is installed.

Revision ID: 0005_spatial_postgis
Revises: 0004_spatial_lon_lat
Create Date: 2026-01-03 00:00:00

On PostgreSQL, when ``postgis`` is in ``pg_available_extensions``, this role may
``CREATE EXTENSION IF NOT EXISTS postgis`` (tried in a savepoint: a refusal falls back
cleanly) and the operator has not set ``CATALOGUE_POSTGIS=off``, ``geo_index.env``
becomes a ``geometry(Polygon, 4326)`` envelope (converted in place from the ``box``
of every existing row) with a GiST index, which the candidate search queries with
PostGIS's ``&&``.  Otherwise nothing changes: the core ``box`` column stays.  SQLite
is untouched.  The relations stay shapely's either way (:mod:`catalogue.graph.spatial`).
Downgrading turns the envelopes back into boxes and leaves the extension installed.
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from catalogue.graph.spatial import to_box, to_postgis

revision: str = "0005_spatial_postgis"
down_revision: str | Sequence[str] | None = "0004_spatial_lon_lat"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    to_postgis(op.get_bind())


def downgrade() -> None:
    to_box(op.get_bind())
