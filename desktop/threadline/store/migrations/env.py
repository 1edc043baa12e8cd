"""Alembic environment, driven from code (``threadline.store.migrate``), not a CLI.

The caller hands over an open connection in ``config.attributes["connection"]``
so migrations run inside the store's own engine (same pragmas, same file). A URL
in the main options is accepted as well, for running ``alembic`` by hand while
developing a new revision.
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import context

from threadline.store.tables import metadata


def _run(connection: sa.Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
    )
    with context.begin_transaction():
        context.run_migrations()


def run() -> None:
    connection = context.config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    url = context.config.get_main_option("sqlalchemy.url")
    if not url:
        raise RuntimeError("threadline migrations need a connection or sqlalchemy.url")
    engine = sa.create_engine(url)
    try:
        with engine.begin() as conn:
            _run(conn)
    finally:
        engine.dispose()


if context.is_offline_mode():
    raise RuntimeError("threadline migrations run online only")
run()
