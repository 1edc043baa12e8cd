"""Change sets on real SQLite and PostgreSQL: stored byte-exact, gone with their session."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from tests.support.backends import BACKENDS, empty_database
from tests.support.postgres import PostgresServer

from threadline.core.file_changes import ABSENT, ChangeKind, ChangeSet, ChangeSource, FileChange, FileState
from threadline.store.copy import copy_database
from threadline.store.repository import Store

pytestmark = pytest.mark.asyncio

ODD_NAME = os.fsdecode(b"/w/caf\xe9-\xff.txt")
"""Not UTF-8: ``os.fsdecode`` keeps the bytes as surrogate escapes."""


@pytest.fixture(params=BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from empty_database(request, tmp_path / "changes.db")


@pytest_asyncio.fixture
async def store(url: str) -> AsyncIterator[Store]:
    opened = await Store.open(url)
    try:
        yield opened
    finally:
        await opened.close()


def _change_set(session_id: str, set_id: str, created_at: float) -> ChangeSet:
    before = FileState("a" * 64, 10, kept=True)
    after = FileState("b" * 64, 2**40, kept=False, binary=True, not_kept="larger than 2 MB")
    return ChangeSet(
        id=set_id,
        session_id=session_id,
        source=ChangeSource.TOOL,
        created_at=created_at,
        machine="machine-1",
        changes=(
            FileChange(ODD_NAME, ChangeKind.MODIFIED, before, after, added=3, removed=1),
            FileChange("/w/new.txt", ChangeKind.RENAMED, before, before, renamed_from=ODD_NAME + ".old"),
            FileChange("/w/gone.txt", ChangeKind.DELETED, FileState(unknown=True), ABSENT),
        ),
        message_id="m1",
        call_id="call-1",
        tool_name="shell",
        note="a note",
        skipped=("/w/locked: locked by another program",),
    )


async def test_change_sets_come_back_exactly_in_order(store: Store) -> None:
    session = await store.create_session(title="changes")
    later = _change_set(session.id, "set-2", 1_700_000_001.25)
    earlier = _change_set(session.id, "set-1", 1_700_000_000.5)
    await store.add_change_set(later)
    await store.add_change_set(earlier)
    assert await store.change_sets(session.id) == [earlier, later]
    assert os.fsencode((await store.change_sets(session.id))[0].changes[0].path) == b"/w/caf\xe9-\xff.txt"
    assert await store.kept_digests("machine-1") == {"a" * 64, "b" * 64}
    assert await store.kept_digests("machine-1", newer_than=1_800_000_000) == set()
    assert await store.kept_digests("another") == set()


async def test_change_sets_go_with_their_session(store: Store) -> None:
    session = await store.create_session(title="changes")
    other = await store.create_session(title="other")
    await store.add_change_set(_change_set(session.id, "set-1", 1.0))
    await store.add_change_set(_change_set(other.id, "set-2", 2.0))
    await store.delete_session(session.id)
    assert await store.change_sets(session.id) == []
    assert [s.id for s in await store.change_sets(other.id)] == ["set-2"]


@pytest.mark.postgres
async def test_a_copy_to_a_server_carries_the_change_sets_byte_exact(
    postgres_server: PostgresServer, tmp_path: Path
) -> None:
    source = Store.sqlite_url(tmp_path / "source.db")
    server = postgres_server.create_database()

    async def fill() -> str:
        store = await Store.open(source)
        try:
            session = await store.create_session(title="changes")
            await store.add_change_set(_change_set(session.id, "set-1", 1_700_000_000.5))
            return session.id
        finally:
            await store.close()

    async def read(url: str, session_id: str) -> list[ChangeSet]:
        store = await Store.open(url)
        try:
            return await store.change_sets(session_id)
        finally:
            await store.close()

    try:
        session_id = await fill()
        report = await asyncio.to_thread(copy_database, source, server)
        assert report.identical, report.differences()
        assert await read(server, session_id) == await read(source, session_id)
    finally:
        postgres_server.drop_database(server)
