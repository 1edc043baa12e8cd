"""Losing the PostgreSQL server mid-stream: shown, retried in order, nothing lost, both sides resume.

Real parts only: the private PostgreSQL server of the test session is stopped
(``pg_ctl stop -m fast``: every session is cut off, new connections are refused)
and started again on the same port, or its backends are terminated from an
admin connection; the replay SSE server streams the reply meanwhile. Engine A
runs the turn (the writer), engine B has the chat open and follows it through
the change feed (the reader). Waits are on conditions, never fixed sleeps.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from tests.support.engines import FAST_RETRIES
from tests.support.postgres import PostgresServer, postgres_server  # noqa: F401  (fixture)
from tests.support.sse_server import ReplayServer, openai_text_stream, sse_response
from tests.support.tcp_proxy import TcpProxy
from tests.support.waiting import until

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.core.messages import Message, MessageStatus, utcnow
from threadline.engine.engine import Engine
from threadline.engine.events import ConversationEvent, SaveStateChanged, TextDelta, TurnFailed
from threadline.store.repository import Store
from threadline.store.retry import RetryPolicy

pytestmark = [pytest.mark.asyncio, pytest.mark.postgres]

WAIT = 60.0
"""Generous: a server restart and both cores busy with other tests."""
PIECES = [f"part{n} " for n in range(50)]
REPLY = "".join(PIECES)
TOLD_WITHIN = 12.0
"""Seconds from the server stopping to the tab being told (the store alone would take 30)."""
LOST = "connection to the database server was lost"
DRIVER_WORDS = ("psycopg", "sqlalchemy", "SELECT", "UPDATE", "INSERT", "terminating", "Traceback", "errno")


@pytest.fixture
def server(postgres_server: PostgresServer) -> PostgresServer:  # noqa: F811
    if not postgres_server.can_restart:
        pytest.skip("the PostgreSQL server was not started by the tests, so they may not stop it")
    return postgres_server


@pytest_asyncio.fixture
async def url(server: PostgresServer) -> AsyncIterator[str]:
    url = server.create_database()
    yield url
    server.drop_database(url)


@contextlib.contextmanager
def server_down(server: PostgresServer) -> Iterator[Callable[[], None]]:
    """Stop the server; the caller starts it again with the function given (or it is, on the way out)."""
    up = [False]

    def start() -> None:
        if not up[0]:
            server.start_again()
            up[0] = True

    server.stop_for_a_while()
    try:
        yield start
    finally:
        start()


async def open_engine(
    url: str, data_dir: Path, replay: ReplayServer, *, store_retry: float = 30.0, lease_heartbeat: float = 5.0
) -> Engine:
    store = await Store.open(url, retry=RetryPolicy(total=store_retry))
    data_dir.mkdir(parents=True)
    engine = Engine(
        store,
        data_dir,
        retry_policy=FAST_RETRIES,
        provider_timeout=30.0,
        watch_changes=True,
        lease_heartbeat=lease_heartbeat,
    )
    config = ProviderConfig("replay", ProviderKind.OPENAI, base_url=replay.openai_base_url, default_model="m")
    await engine.providers.save_provider(config, "sk-test")
    return engine


class Watcher:
    """What one engine's open tab is told: events, and the reply's text as each delta showed it."""

    def __init__(self, engine: Engine, session_id: str) -> None:
        self.engine = engine
        self.session_id = session_id
        self.events: list[ConversationEvent] = []
        self.texts: list[str] = []

    def __call__(self, event: ConversationEvent) -> None:
        self.events.append(event)
        live = self.engine.sessions.live(self.session_id)
        if isinstance(event, TextDelta) and live is not None:
            self.texts.append(live.conversation.tree.get(event.message_id).text)

    def saves(self) -> list[SaveStateChanged]:
        return [e for e in self.events if isinstance(e, SaveStateChanged)]

    def last(self) -> Message:
        live = self.engine.sessions.live(self.session_id)
        assert live is not None
        return live.conversation.path()[-1]


async def stored(url: str, session_id: str) -> list[Message]:
    """The active path as a fresh connection reads it, and every message of the session."""
    store = await Store.open(url)
    try:
        tree = await store.load_tree(session_id)
        assert len(tree) == len(tree.path()), "a write was stored twice"
        return tree.path()
    finally:
        await store.close()


def plain(message: str) -> bool:
    return not any(word.lower() in message.lower() for word in DRIVER_WORDS)


async def test_a_server_restart_mid_stream_loses_nothing_and_writer_and_reader_resume(
    server: PostgresServer, url: str, tmp_path: Path, replay_server: ReplayServer
) -> None:
    replay_server.enqueue(sse_response(openai_text_stream(PIECES), chunk_delay=0.1))
    replay_server.enqueue(sse_response(openai_text_stream(["second ", "answer"]), chunk_delay=0.05))
    a = await open_engine(url, tmp_path / "a", replay_server)
    b = await open_engine(url, tmp_path / "b", replay_server)
    try:
        info = await a.sessions.new_session("Shared")
        other = await a.sessions.new_session("Asked while the server was down")
        live_b = await b.sessions.open_session(info.id)
        reader = Watcher(b, info.id)
        live_b.subscribe(reader)
        writer = Watcher(a, info.id)
        (await a.sessions.open_session(info.id)).subscribe(writer)
        other_tab = Watcher(a, other.id)
        (await a.sessions.open_session(other.id)).subscribe(other_tab)
        watch = b.change_watch
        assert watch is not None
        await until(lambda: watch.feed is not None and watch.feed.listen_pid is not None)
        assert watch.feed is not None
        reconnects = watch.feed.reconnects

        a.turns.send(info.id, "hello")
        await until(lambda: len(reader.texts) >= 2)  # mid-stream, and B follows it
        with server_down(server) as start_again:
            at_stop = writer.last().text
            # Told within seconds, long before the store's 30 s retry window ends.
            await until(lambda: writer.saves(), timeout=TOLD_WITHIN)
            shown = writer.saves()[0]
            assert shown.saving and shown.error is not None
            assert LOST in shown.error.message and plain(shown.error.message), shown.error.message
            assert "kept in memory" in shown.error.message
            rename = asyncio.ensure_future(
                a.sessions.rename_session(info.id, "Renamed while the server was down")
            )
            a.turns.send(other.id, "a question sent while the server was down")
            await until(lambda: other_tab.saves(), timeout=TOLD_WITHIN)  # the new message waits, and says so
            waiting = other_tab.saves()[0]
            assert waiting.saving and waiting.error is not None and LOST in waiting.error.message
            assert "waits" in waiting.error.message and plain(waiting.error.message)
            await until(lambda: len(writer.last().text) > len(at_stop))  # the reply goes on streaming
            assert not rename.done()  # never "saved" while it was not
            assert a.turns.running(info.id)  # idle means saved: the turn waits for its writes
            start_again()

        await asyncio.wait_for(a.turns.wait_idle(info.id), WAIT)
        await asyncio.wait_for(rename, WAIT)
        await asyncio.wait_for(a.turns.wait_idle(other.id), WAIT)
        assert writer.saves()[-1] == SaveStateChanged(info.id, saving=False)
        assert [m.text for m in await stored(url, info.id)] == ["hello", REPLY]
        assert (await stored(url, info.id))[-1].status is MessageStatus.COMPLETE
        asked = await stored(url, other.id)
        assert [m.text for m in asked] == ["a question sent while the server was down", "second answer"]
        assert not any(isinstance(e, TurnFailed) for e in writer.events + other_tab.events)
        assert other_tab.saves()[-1] == SaveStateChanged(other.id, saving=False)

        # The reader: its feed reconnected and shows the whole reply, its final status, the new title.
        await until(lambda: live_b.conversation.path()[-1].text == REPLY)
        await until(lambda: live_b.conversation.path()[-1].status is MessageStatus.COMPLETE)
        await until(lambda: live_b.info.title == "Renamed while the server was down")
        assert watch.feed.reconnects > reconnects
        assert all(REPLY.startswith(t) for t in reader.texts)
    finally:
        await a.aclose()
        await b.aclose()


async def test_terminated_writer_connections_mid_stream_lose_nothing(
    server: PostgresServer, url: str, tmp_path: Path, replay_server: ReplayServer
) -> None:
    import psycopg

    replay_server.enqueue(sse_response(openai_text_stream(PIECES), chunk_delay=0.08))
    a = await open_engine(url, tmp_path / "a", replay_server)
    b = await open_engine(url, tmp_path / "b", replay_server)
    try:
        info = await a.sessions.new_session("Shared")
        live_b = await b.sessions.open_session(info.id)
        reader = Watcher(b, info.id)
        live_b.subscribe(reader)
        writer = Watcher(a, info.id)
        (await a.sessions.open_session(info.id)).subscribe(writer)
        a.turns.send(info.id, "hello")
        name = url.rsplit("/", 1)[1]
        killed = 0
        with psycopg.connect(server.admin_url, autocommit=True) as admin:
            for wanted in (5, 20, 35):  # three times mid-stream, every connection to the database
                await until(lambda wanted=wanted: len(writer.texts) >= wanted)
                rows = admin.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = %s AND pid <> pg_backend_pid()",
                    (name,),
                ).fetchall()
                killed += len(rows)
        assert killed >= 3
        assert len(writer.texts) < len(PIECES)  # still streaming after the last kill
        await asyncio.wait_for(a.turns.wait_idle(info.id), WAIT)
        path = await stored(url, info.id)
        assert [m.text for m in path] == ["hello", REPLY]
        assert path[-1].status is MessageStatus.COMPLETE
        assert not writer.saves() or writer.saves()[-1] == SaveStateChanged(info.id, saving=False)
        await until(lambda: live_b.conversation.path()[-1].text == REPLY)
        await until(lambda: live_b.conversation.path()[-1].status is MessageStatus.COMPLETE)
        assert all(REPLY.startswith(t) for t in reader.texts)
    finally:
        await a.aclose()
        await b.aclose()


@pytest.mark.expected_log_warnings("a write failed", "database write gave up", "prompt could not be stored")
async def test_an_outage_longer_than_the_store_s_retry_window_loses_nothing(
    server: PostgresServer,
    url: str,
    tmp_path: Path,
    replay_server: ReplayServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="threadline")
    replay_server.enqueue(sse_response(openai_text_stream(PIECES[:20]), chunk_delay=0.05))
    # The lease would expire after 1 s of silence: the outage outlasts it, and nobody else took it.
    a = await open_engine(url, tmp_path / "a", replay_server, store_retry=1.0, lease_heartbeat=0.25)
    try:
        info = await a.sessions.new_session("Long outage")
        other = await a.sessions.new_session("Refused send")
        writer = Watcher(a, info.id)
        (await a.sessions.open_session(info.id)).subscribe(writer)
        refused = Watcher(a, other.id)
        (await a.sessions.open_session(other.id)).subscribe(refused)
        a.turns.send(info.id, "hello")
        await until(lambda: len(writer.texts) >= 2)

        def gave_up(times: int) -> bool:
            return sum("a write failed" in r.getMessage() for r in caplog.records) >= times

        with server_down(server) as start_again:
            await until(lambda: writer.saves())
            await until(lambda: writer.last().text == "".join(PIECES[:20]))  # the stream ended meanwhile
            await until(lambda: gave_up(3))  # the store's window ran out three times; the writer goes on
            assert a.turns.running(info.id)
            assert all(s.saving for s in writer.saves())
            a.turns.send(other.id, "my question")  # a send while down: refused in plain words, text back
            await until(lambda: any(isinstance(e, TurnFailed) for e in refused.events))
            failed = next(e for e in refused.events if isinstance(e, TurnFailed))
            assert failed.unsent_prompt is not None and failed.unsent_prompt.text == "my question"
            assert "not sent" in failed.error.message and LOST in failed.error.message
            assert plain(failed.error.message), failed.error.message
            assert not refused.saves() or refused.saves()[-1].saving is False
            start_again()

        await asyncio.wait_for(a.turns.wait_idle(info.id), WAIT)
        assert writer.saves()[-1] == SaveStateChanged(info.id, saving=False)
        path = await stored(url, info.id)
        assert [m.text for m in path] == ["hello", "".join(PIECES[:20])]
        assert path[-1].status is MessageStatus.COMPLETE
        assert await stored(url, other.id) == []  # nothing of the refused send was stored
        assert not any(isinstance(e, TurnFailed) for e in writer.events)  # not stopped as a dead holder
    finally:
        await a.aclose()


@pytest.mark.expected_log_warnings("took this turn's lease over")
async def test_a_network_drop_on_the_writer_longer_than_its_lease_hands_the_chat_over_honestly(
    server: PostgresServer, url: str, tmp_path: Path, replay_server: ReplayServer
) -> None:
    """Only A is cut off (a relay between A and the server drops): B goes on, takes the chat over
    once A's lease expired, and A, back, stops its reply, keeps what it streamed, and says why."""
    port = url.rsplit(":", 1)[1].split("/", 1)[0]
    proxy = TcpProxy("127.0.0.1", int(port)).start()
    replay_server.enqueue(sse_response(openai_text_stream(PIECES), chunk_delay=0.1))
    replay_server.enqueue(sse_response(openai_text_stream(["taken ", "over"]), chunk_delay=0.01))
    a_url = url.replace(f":{port}/", f":{proxy.port}/")
    a = await open_engine(a_url, tmp_path / "a", replay_server, lease_heartbeat=0.25)  # expires after 1 s
    b = await open_engine(url, tmp_path / "b", replay_server, lease_heartbeat=0.25)
    try:
        info = await a.sessions.new_session("Shared")
        writer = Watcher(a, info.id)
        (await a.sessions.open_session(info.id)).subscribe(writer)
        live_b = await b.sessions.open_session(info.id)
        a.turns.send(info.id, "hello")
        await until(lambda: len(writer.texts) >= 5)
        proxy.cut()
        assert proxy.cuts > 0
        await until(lambda: writer.saves(), timeout=TOLD_WITHIN)  # A says it cannot save
        assert LOST in (writer.saves()[0].error.message if writer.saves()[0].error else "")

        async def a_silent_for(seconds: float) -> bool:
            lease = await b.leases.current(info.id)
            return lease is not None and (utcnow() - lease.heartbeat_at).total_seconds() > seconds

        async with asyncio.timeout(WAIT):
            while not await a_silent_for(2.0):
                await asyncio.sleep(0.1)
        b.turns.send(info.id, "taking over")
        await asyncio.wait_for(b.turns.wait_idle(info.id), WAIT)
        assert [m.text for m in live_b.conversation.path()][-2:] == ["taking over", "taken over"]
        a_reply_id = next(m.id for m in live_b.conversation.path() if m.text.startswith("part0"))
        assert live_b.conversation.tree.get(a_reply_id).status is MessageStatus.INTERRUPTED
        assert a.turns.running(info.id)  # A, cut off, still streams and keeps its text

        proxy.restore()
        await asyncio.wait_for(a.turns.wait_idle(info.id), WAIT)
        told = [e for e in writer.events if isinstance(e, TurnFailed)]
        assert len(told) == 1 and "taken over" in told[0].error.message, told
        assert plain(told[0].error.message)
        assert writer.saves()[-1] == SaveStateChanged(info.id, saving=False)
        a_reply = a.sessions.live(info.id).conversation.tree.get(a_reply_id)  # type: ignore[union-attr]
        store = await Store.open(url)
        try:
            tree = await store.load_tree(info.id)
        finally:
            await store.close()
        assert tree.get(a_reply_id).text == a_reply.text  # all A streamed before it stopped
        assert len(a_reply.text) > len("".join(PIECES[:5]))
        assert tree.get(a_reply_id).status is not MessageStatus.STREAMING
        prompt = tree.children(a_reply_id)
        assert [m.text for m in prompt] == ["taking over"]
        assert [m.text for m in tree.children(prompt[0].id)] == ["taken over"]
        assert tree.path()[-1].text == "taken over"  # A's ending did not move the chat back to its reply
    finally:
        await a.aclose()
        await b.aclose()
        proxy.close()
