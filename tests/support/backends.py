"""``BACKENDS``: the parameters that run a test once on SQLite and once on a real PostgreSQL server.

Use it as ``@pytest.fixture(params=BACKENDS)`` and ``yield from empty_database(request, path)``
(or branch on ``request.param``). The PostgreSQL case
carries the ``postgres`` marker, so ``-m "not postgres"`` leaves it out where no server can start.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.postgres import PostgresServer

from threadline.store.repository import Store

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]


def empty_database(request: pytest.FixtureRequest, sqlite_file: Path) -> Iterator[str]:
    """The body of a ``params=BACKENDS`` fixture: the URL of an empty database on the backend
    ``request`` names — SQLite at ``sqlite_file``, or a fresh PostgreSQL database, dropped after
    the test (its test module must import the ``postgres_server`` fixture)."""
    if request.param == "sqlite":
        yield Store.sqlite_url(sqlite_file)
        return
    server: PostgresServer = request.getfixturevalue("postgres_server")
    url = server.create_database()
    try:
        yield url
    finally:
        server.drop_database(url)
