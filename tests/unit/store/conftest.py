"""Store fixtures: every repository test runs on SQLite and on a real PostgreSQL server."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio

ROOT = Path(__file__).resolve().parents[3]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.support.backends import BACKENDS, empty_database  # noqa: E402
from tests.support.postgres import postgres_server  # noqa: E402

from threadline.store.repository import Store  # noqa: E402

__all__ = ["postgres_server"]


@pytest.fixture(params=BACKENDS)
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A URL of an empty database on each backend (PostgreSQL: a fresh database per test)."""
    yield from empty_database(request, tmp_path / "data" / "threadline.sqlite3")


@pytest_asyncio.fixture
async def store(store_url: str) -> AsyncIterator[Store]:
    """An open store on an empty database, closed after the test."""
    opened = await Store.open(store_url)
    try:
        yield opened
    finally:
        await opened.close()
