"""Session leases on a real SQLite file and a real PostgreSQL server.

Exactly one holder gets a session's lease even when several ask at once; the holder
beats, reads a stop asked by another, and releases; a holder that stopped beating
loses the lease, and the reply it left streaming becomes interrupted.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
import pytest_asyncio
import sqlalchemy as sa
from tests.support.backends import BACKENDS, empty_database

from threadline.core.messages import Message, MessageStatus, utcnow
from threadline.store import leases
from threadline.store.coltypes import UTCDateTime
from threadline.store.repository import Store

pytestmark = pytest.mark.asyncio
EXPIRY = timedelta(seconds=30)


@pytest.fixture(params=BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from empty_database(request, tmp_path / "leases.db")


@pytest_asyncio.fixture
async def stores(url: str) -> AsyncIterator[tuple[Store, Store]]:
    first = await Store.open(url)
    second = await Store.open(url)
    try:
        yield first, second
    finally:
        await second.close()
        await first.close()


async def test_one_holder_beats_is_asked_to_stop_and_releases(stores: tuple[Store, Store]) -> None:
    a, b = stores
    info = await a.create_session(title="leased")
    mine, theirs = leases.new_holder(), leases.new_holder()

    assert (await a.acquire_lease(info.id, mine, EXPIRY)).ok
    refused = await b.acquire_lease(info.id, theirs, EXPIRY)
    assert not refused.ok and refused.held is not None
    assert refused.held.holder == mine and refused.held.host == mine.split("|")[0]
    assert (await a.acquire_lease(info.id, mine, EXPIRY)).ok  # ours already: renewed

    assert await a.lease_heartbeat(info.id, mine) == leases.Beat(held=True, stop_requested=False)
    asked = await b.request_lease_stop(info.id)
    assert asked is not None and asked.holder == mine and asked.stop_requested
    assert await a.lease_heartbeat(info.id, mine) == leases.Beat(held=True, stop_requested=True)
    assert await b.lease_heartbeat(info.id, theirs) == leases.Beat(held=False, stop_requested=False)

    await b.release_lease(info.id, theirs)  # not theirs: nothing happens
    assert (await a.get_lease(info.id)) is not None
    await a.release_lease(info.id, mine)
    assert await a.get_lease(info.id) is None
    taken = await b.acquire_lease(info.id, theirs, EXPIRY)
    assert taken.ok and taken.taken_from is None
    lease = await a.get_lease(info.id)
    assert lease is not None and lease.holder == theirs and not lease.stop_requested


async def test_many_asking_at_once_exactly_one_gets_it(stores: tuple[Store, Store]) -> None:
    a, b = stores
    for round_ in range(5):
        info = await a.create_session(title=f"race {round_}")
        holders = [leases.new_holder() for _ in range(6)]
        results = await asyncio.gather(
            *((a if i % 2 else b).acquire_lease(info.id, holder, EXPIRY) for i, holder in enumerate(holders))
        )
        winners = [h for h, r in zip(holders, results, strict=True) if r.ok]
        assert len(winners) == 1
        lease = await a.get_lease(info.id)
        assert lease is not None and lease.holder == winners[0]
        assert all(r.held is not None and r.held.holder == winners[0] for r in results if not r.ok)


async def test_a_silent_holder_loses_the_lease_and_its_streaming_reply_is_interrupted(
    stores: tuple[Store, Store], url: str
) -> None:
    a, b = stores
    info = await a.create_session(title="abandoned")
    prompt = Message.prompt("hello")
    await a.append_message(info.id, prompt)
    reply = Message.reply(parent_id=prompt.id)
    reply.status = MessageStatus.STREAMING
    await a.append_message(info.id, reply)
    # Another machine held the lease and wrote the reply, then went silent 31 s ago.
    gone = "elsewhere.example|4242|cafe"
    long_ago = utcnow() - EXPIRY - timedelta(seconds=1)
    engine = sa.create_engine(url)
    try:
        with engine.begin() as connection:
            connection.execute(
                sa.text(
                    "UPDATE messages SET writer = 'elsewhere.example|4242', heartbeat_at = :at WHERE id = :id"
                ).bindparams(sa.bindparam("at", type_=UTCDateTime())),
                {"at": long_ago, "id": reply.id},
            )
            connection.execute(
                sa.text(
                    "INSERT INTO session_leases (session_id, holder, host, acquired_at, heartbeat_at, "
                    "stop_requested) VALUES (:s, :h, 'elsewhere.example', :at, :at, :no)"
                ).bindparams(sa.bindparam("at", type_=UTCDateTime()), sa.bindparam("no", type_=sa.Boolean())),
                {"s": info.id, "h": gone, "at": long_ago, "no": False},
            )
    finally:
        engine.dispose()

    mine = leases.new_holder()
    assert not (await b.acquire_lease(info.id, mine, EXPIRY * 2)).ok  # not silent long enough for that bound
    taken = await b.acquire_lease(info.id, mine, EXPIRY)
    assert taken.ok and taken.taken_from == gone and taken.interrupted == (reply.id,)
    tree = await a.load_tree(info.id)
    assert tree.get(reply.id).status is MessageStatus.INTERRUPTED
    assert tree.get(prompt.id).status is not MessageStatus.INTERRUPTED


async def test_a_lease_of_a_closed_engine_in_this_process_is_free_at_once(
    stores: tuple[Store, Store],
) -> None:
    a, b = stores
    info = await a.create_session(title="closed")
    first, second = leases.new_holder(), leases.new_holder()
    assert (await a.acquire_lease(info.id, first, EXPIRY)).ok
    assert not (await b.acquire_lease(info.id, second, EXPIRY)).ok
    leases.retire_holder(first)
    taken = await b.acquire_lease(info.id, second, EXPIRY)
    assert taken.ok and taken.taken_from == first
