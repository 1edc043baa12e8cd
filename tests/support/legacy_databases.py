"""Databases as older versions left them, built with the real migrations up to a revision.

``provider_with_headers`` makes a SQLite file at revision 0009 (the one before provider
header values left the database) holding provider ``work`` whose ``headers`` column
holds ``headers`` exactly as given (pairs or a mapping, values included).
"""

from __future__ import annotations

import json
from pathlib import Path

import sqlalchemy as sa

from threadline.store import db, migrate

NOW = "2026-01-01 00:00:00.000000"


def insert_provider(connection: sa.Connection, name: str, headers: object) -> None:
    """A provider row written with raw SQL, as an older version's store wrote it."""
    connection.execute(
        sa.text(
            "INSERT INTO providers (name, kind, base_url, api_key_env, default_model, headers, updated_at)"
            " VALUES (:n, 'openai', 'http://127.0.0.1:9/v1', '', 'm', :h, :t)"
        ),
        {"n": name, "h": json.dumps(headers), "t": NOW},
    )


def provider_with_headers(path: Path, headers: object, *, revision: str = "0009") -> str:
    """A SQLite file at ``revision`` with provider ``work`` holding ``headers``; returns its URL."""
    url = f"sqlite:///{path}"
    engine = db.create_engine(url)
    try:
        migrate.run_alembic_upgrade(engine, revision)
        with engine.begin() as connection:
            insert_provider(connection, "work", headers)
    finally:
        engine.dispose()
    return url
