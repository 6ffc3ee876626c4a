"""Alembic migrations for the catalogue database, shipped as ``catalogue.migrations``."""

#: The newest revision in ``versions/``: what an up-to-date database is at. Recorded here so that
#: opening a catalogue need not import Alembic to scan the scripts; ``tests/graph`` holds it
#: to Alembic's own answer, so a new migration that forgets it fails there.
HEAD = "0013_pgcrypto"
