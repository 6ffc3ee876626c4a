"""Alembic environment for the catalogue database.

Normally driven programmatically by :func:`catalogue.graph.database.upgrade`, which
passes an open connection in ``config.attributes["connection"]`` so the migration runs
inside the caller's transaction (and, for in-memory SQLite, on the only connection that
can see the database).  Run from the ``alembic`` command line it builds an engine from
``sqlalchemy.url``, falling back to ``$CATALOGUE_DB``.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy.engine import Connection

from catalogue.graph.database import database_url, make_engine
from catalogue.graph.schema import metadata
from catalogue.graph.spatial import include_name

config = context.config
target_metadata = metadata


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=target_metadata,
        # SQLite cannot ALTER most things; batch mode rebuilds tables instead.
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
        include_name=include_name,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_offline() -> None:
    """Emit SQL to stdout (``alembic upgrade --sql``) without a database."""
    url = database_url(config.get_main_option("sqlalchemy.url"))
    context.configure(
        url=url,
        target_metadata=target_metadata,
        literal_binds=True,
        dialect_opts={"paramstyle": "named"},
        render_as_batch=url.startswith("sqlite"),
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    engine = make_engine(database_url(config.get_main_option("sqlalchemy.url")))
    try:
        with engine.connect() as conn:
            _run(conn)
            conn.commit()
    finally:
        engine.dispose()


if context.is_offline_mode():
    run_migrations_offline()
else:
    run_migrations_online()
