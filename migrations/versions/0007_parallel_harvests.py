"""Harvests in parallel: per-source status, filled from the PROV records, and the queue
of terms whose collection concurrent harvests defer.

Revision ID: 0007_parallel_harvests
Revises: 0006_search_index
Create Date: 2026-11-26 00:00:01

Creates ``harvest_sources`` (:mod:`catalogue.graph.schema`; kept by
:mod:`catalogue.harvest.status` from here on) and replays every recorded run of the
provenance graph into it, oldest first, read with one SQL statement over the runs'
properties (no SPARQL, no rdflib terms); and ``term_gc_queue``, the terms that harvests
writing side by side on PostgreSQL left for the next exclusive writer to collect
(:meth:`catalogue.graph.store.SQLStore.collect_queued`).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import sqlalchemy as sa
from alembic import op
from rdflib import URIRef

revision: str = "0007_parallel_harvests"
down_revision: str | Sequence[str] | None = "0006_search_index"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

_PROPERTIES = {
    "http://www.w3.org/ns/prov#used": "source", "http://www.w3.org/ns/prov#startedAtTime": "started",
    "http://www.w3.org/ns/prov#endedAtTime": "ended", "https://w3id.org/zarr-catalogue/vocab#outcome": "outcome",
    "http://www.w3.org/2000/01/rdf-schema#label": "label", "http://www.w3.org/ns/prov#generated": "graph",
    "https://w3id.org/zarr-catalogue/vocab#error": "error", "https://w3id.org/zarr-catalogue/vocab#lockHolder": "holder",
}


def _time(text: str) -> datetime | None:
    try:
        moment = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def upgrade() -> None:
    op.create_table(
        "harvest_sources",
        sa.Column("source", sa.Text, primary_key=True),
        sa.Column("name", sa.Text, nullable=False),
        sa.Column("graph", sa.Text, nullable=True),
        sa.Column("run", sa.Text, nullable=True),
        sa.Column("holder", sa.Text, nullable=True),
        sa.Column("outcome", sa.Text, nullable=False),
        sa.Column("started", sa.BigInteger, nullable=True),
        sa.Column("ended", sa.BigInteger, nullable=True),
        sa.Column("error", sa.Text, nullable=True),
        sa.Column("runs", sa.Integer, nullable=False),
        sa.Column("last_success", sa.BigInteger, nullable=True),
        sa.Column("failing_since", sa.BigInteger, nullable=True),
        sa.Column("failures", sa.Integer, nullable=False),
    )
    op.create_index("ix_harvest_sources_failing", "harvest_sources", ["failing_since"])
    op.create_table("term_gc_queue", sa.Column("term", sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
                                               primary_key=True, autoincrement=False))
    from catalogue.harvest.status import replay
    from catalogue.rdf.provenance import HARVESTS_GRAPH, Run

    conn = op.get_bind()
    rows = conn.execute(sa.text(
        "SELECT s.value, p.value, o.value FROM quads q JOIN terms g ON g.id = q.g JOIN terms s ON s.id = q.s "
        "JOIN terms p ON p.id = q.p JOIN terms o ON o.id = q.o WHERE g.kind = 1 AND g.value = :g"
    ), {"g": str(HARVESTS_GRAPH)})
    found: dict[str, dict[str, list[str]]] = {}
    for run, predicate, value in rows:
        name = _PROPERTIES.get(predicate)
        if name is not None:
            found.setdefault(run, {}).setdefault(name, []).append(value)
    runs = []
    for iri, props in found.items():
        started = _time(min(props.get("started", [""])))
        if "source" not in props or started is None:
            continue
        ended = _time(props["ended"][0]) if "ended" in props else None
        outcome = props.get("outcome", ["running" if ended is None else "succeeded"])[0]
        runs.append(Run(source=props["source"][0], label=props.get("label", [""])[0],
                        graph=props.get("graph", [None])[0], started=started,
                        ended=ended if outcome != "running" else None, outcome=outcome,
                        errors=sorted(props.get("error", [])), iri=URIRef(iri),
                        holder=props.get("holder", [""])[0]))
    replay(conn, runs)


def downgrade() -> None:
    op.drop_table("term_gc_queue")
    op.drop_table("harvest_sources")
