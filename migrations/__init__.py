"""Alembic migrations for the catalogue database, shipped as ``catalogue.migrations``."""
