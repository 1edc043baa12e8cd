"""The store while its PostgreSQL server is gone: a write waits, says why (``Store.trouble``), lands.

Against the test session's private server, stopped (``pg_ctl stop -m fast``) and started
again on its port. Also: every server connection carries the libpq timeouts that turn a
silent network drop into an error, unless the database address sets its own.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest
import pytest_asyncio
from tests.support.postgres import PostgresServer, postgres_server  # noqa: F401  (fixture)
from tests.support.waiting import until

from threadline.core.messages import Message
from threadline.store import db
from threadline.store.errors import DatabaseUnreachableError
from threadline.store.repository import Store
from threadline.store.retry import RetryPolicy

pytestmark = [pytest.mark.asyncio, pytest.mark.postgres]

WAIT = 60.0


@pytest_asyncio.fixture
async def url(postgres_server: PostgresServer) -> AsyncIterator[str]:  # noqa: F811
    url = postgres_server.create_database()
    yield url
    postgres_server.drop_database(url)


async def test_a_write_during_a_restart_reports_the_trouble_then_lands_in_order(
    postgres_server: PostgresServer,  # noqa: F811
    url: str,
) -> None:
    if not postgres_server.can_restart:
        pytest.skip("the PostgreSQL server was not started by the tests, so they may not stop it")
    store = await Store.open(url, retry=RetryPolicy(total=60.0))
    try:
        session = await store.create_session(title="Outage")
        reply = Message.prompt("first words")
        await store.append_message(session.id, reply)
        assert store.trouble is None
        postgres_server.stop_for_a_while()
        try:
            append = asyncio.ensure_future(store.update_message_text(reply.id, "first words, then more"))
            rename = asyncio.ensure_future(store.rename_session(session.id, "Renamed during the outage"))
            await until(lambda: isinstance(store.trouble, DatabaseUnreachableError))
            assert store.trouble is not None and "connection to the database server was lost" in (
                store.trouble.user_message
            )
            assert not append.done() and not rename.done()
        finally:
            postgres_server.start_again()
        await asyncio.wait_for(append, WAIT)
        await asyncio.wait_for(rename, WAIT)
        assert store.trouble is None
        tree = await store.load_tree(session.id)
        assert [m.text for m in tree.path()] == ["first words, then more"]
        info = await store.get_session(session.id)
        assert info is not None and info.title == "Renamed during the outage"
    finally:
        await store.close()


async def test_server_connections_carry_the_network_drop_timeouts(url: str) -> None:
    engine = db.create_engine(url)
    own = db.create_engine(url + "?connect_timeout=3&keepalives_idle=7")
    try:
        with engine.connect() as connection:
            parameters = connection.connection.dbapi_connection.info.get_parameters()  # type: ignore[union-attr]
        assert parameters["connect_timeout"] == "10"
        assert parameters["keepalives_idle"] == "10"
        assert parameters["tcp_user_timeout"] == "30000"
        with own.connect() as connection:
            parameters = connection.connection.dbapi_connection.info.get_parameters()  # type: ignore[union-attr]
        assert parameters["connect_timeout"] == "3" and parameters["keepalives_idle"] == "7"
        assert parameters["keepalives_count"] == "3"
    finally:
        engine.dispose()
        own.dispose()
