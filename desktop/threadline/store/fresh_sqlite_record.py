"""Rewrites ``fresh_sqlite_schema.py`` from the migrations: ``python -m
threadline.store.fresh_sqlite_record`` after adding one (then ``ruff format`` the file)."""

from __future__ import annotations

import tempfile
from pathlib import Path

import sqlalchemy as sa

from threadline.store import migrate
from threadline.store.fresh_sqlite import snapshot


def main() -> None:
    """Rewrite ``fresh_sqlite_schema.py`` from the migrations (after adding one)."""
    with tempfile.TemporaryDirectory() as folder:
        engine = sa.create_engine(f"sqlite:///{Path(folder) / 'schema.db'}")
        migrate.run_alembic_upgrade(engine)
        with engine.connect() as connection:
            statements = snapshot(connection)
        engine.dispose()
    lines = [
        "# ruff: noqa: E501",
        '"""The schema the migrations end in, as SQLite holds it: written by',
        '``python -m threadline.store.fresh_sqlite_record`` (see ``fresh_sqlite.py``); do not edit."""',
        "",
        f"REVISION = {migrate.HEAD_REVISION!r}",
        "STATEMENTS: tuple[str, ...] = (",
        *(f"    {statement!r}," for statement in statements),
        ")",
        "",
    ]
    target = Path(__file__).with_name("fresh_sqlite_schema.py")
    target.write_text("\n".join(lines), encoding="utf-8")
    print(f"wrote {target} ({len(statements)} statements, revision {migrate.HEAD_REVISION}); ruff format it")


if __name__ == "__main__":
    main()
