"""The spatial index rebuilt: literals outside CRS84 lon/lat space are no geometries.

Revision ID: 0004_spatial_lon_lat
Revises: 0003_spatial_index
Create Date: 2026-01-02 00:00:00

Since this revision a ``geo:wktLiteral`` whose coordinates are not a longitude in
-180..180 and a latitude in -90..90 (``<EPSG:4326> POINT(95 10)``, a 1e300 vertex,
NaN) is unreadable: a SPARQL error, like unparseable text (:mod:`catalogue.graph.wkt`).
Unreadable literals have no row in ``geo_index``, and the relations rely on that
(``sfDisjoint`` takes every indexed geometry that is no candidate as disjoint), so the
rows written for such literals under ``0003_spatial_index`` are removed by rebuilding
the index from the stored literals.  Downgrading keeps the rebuilt index (the older
code then treats those literals as geometries the index does not list).
"""

from __future__ import annotations

from collections.abc import Sequence

from alembic import op

from catalogue.graph.spatial import fill_index

revision: str = "0004_spatial_lon_lat"
down_revision: str | Sequence[str] | None = "0003_spatial_index"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    conn = op.get_bind()
    conn.exec_driver_sql("DELETE FROM geo_index")
    fill_index(conn)


def downgrade() -> None:
    pass
