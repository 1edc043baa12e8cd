"""Alembic migrations of the store (a package so it ships in wheels with its ``versions``)."""
