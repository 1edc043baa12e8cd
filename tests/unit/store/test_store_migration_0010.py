"""Migration 0010 on a 0009 database: provider header values leave the database.

The old database is built with the real migrations up to 0009 and holds a provider row as
older versions wrote it (header values in ``providers.headers``). After the upgrade the
keychain holds the value and the database holds the header's name only; without a keychain
the value is dropped and one warning says which headers and how to set them again.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import sqlalchemy as sa
from tests.support.fixtures import memory_keyring, no_keyring  # noqa: F401  (fixtures)
from tests.support.legacy_databases import provider_with_headers
from tests.support.memory_keyring import MemoryKeyring

from threadline.core.config import STORED_IN_KEYCHAIN
from threadline.llm.credentials import HEADER_SERVICE
from threadline.store import db
from threadline.store.key_values import NOTICES_SETTING
from threadline.store.repository import Store

SECRET = "org-secret-7f3a9c"


def database_at_0009(path: Path, headers: object) -> str:
    return provider_with_headers(path, headers)


def raw_headers(url: str) -> object:
    engine = db.create_engine(url)
    try:
        with engine.connect() as connection:
            (value,) = connection.execute(sa.text("SELECT headers FROM providers")).one()
            return json.loads(value)
    finally:
        engine.dispose()


def file_bytes(path: Path) -> bytes:
    """The database file and its WAL, as they lie on disk."""
    return b"".join(p.read_bytes() for p in path.parent.glob(path.name + "*"))


@pytest.mark.asyncio
async def test_a_header_value_moves_to_the_keychain_and_only_its_name_stays(
    tmp_path: Path,
    memory_keyring: MemoryKeyring,  # noqa: F811
) -> None:
    path = tmp_path / "threadline.db"
    url = database_at_0009(path, [["X-Org", SECRET], ["X-Team", "${TEAM_ID}"]])
    store = await Store.open(url, keep_daily_backups=0)
    try:
        provider = await store.get_provider("work")
    finally:
        await store.close()
    assert memory_keyring.entries[(HEADER_SERVICE, "work/X-Org")] == SECRET
    assert provider is not None
    assert provider.headers == (("X-Org", STORED_IN_KEYCHAIN), ("X-Team", "${TEAM_ID}"))
    assert raw_headers(url) == [["X-Org", ""], ["X-Team", "${TEAM_ID}"]]
    assert SECRET.encode() not in file_bytes(path)


@pytest.mark.asyncio
async def test_without_a_keychain_the_value_is_dropped_and_a_notice_left_once(
    tmp_path: Path,
    no_keyring: None,  # noqa: F811
) -> None:
    path = tmp_path / "threadline.db"
    url = database_at_0009(path, {"X-Org": SECRET, "Authorization": "Bearer " + SECRET})
    store = await Store.open(url, keep_daily_backups=0)
    await store.close()
    store = await Store.open(url, keep_daily_backups=0)  # opened again: no second notice
    try:
        provider = await store.get_provider("work")
        notices = await store.get_setting(NOTICES_SETTING)
    finally:
        await store.close()
    (notice,) = notices
    assert notice.startswith(
        "Provider work: the value of header X-Org, Authorization was kept in the database"
    )
    assert "no system keychain" in notice
    assert (
        "threadline provider add work --header 'X-Org=${X_ORG}' --header 'Authorization=${AUTHORIZATION}'"
        in (notice)
    )
    assert SECRET not in notice
    assert provider is not None
    assert provider.headers == (("X-Org", STORED_IN_KEYCHAIN), ("Authorization", STORED_IN_KEYCHAIN))
    assert raw_headers(url) == [["X-Org", ""], ["Authorization", ""]]
    assert SECRET.encode() not in file_bytes(path)
