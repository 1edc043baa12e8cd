"""Store integration fixtures: SQLite files and the private PostgreSQL server."""

from __future__ import annotations

from tests.support.postgres import postgres_server

__all__ = ["postgres_server"]
