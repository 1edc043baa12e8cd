"""Two engines on one database follow each other through the change feed.

Real parts only: one SQLite file, or the private PostgreSQL server; the replay SSE
server streams a slow reply (several chunks) in engine A while engine B has the
session open and must see the text grow, the final status, new versions and
checkpoints, and the sidebar's creates, renames and deletes. Waits are on
conditions, never fixed sleeps.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.backends import BACKENDS, empty_database
from tests.support.engines import FAST_RETRIES
from tests.support.postgres import PostgresServer, postgres_server  # noqa: F401  (fixture)
from tests.support.sse_server import ReplayServer, openai_text_stream, sse_response
from tests.support.waiting import until

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.core.messages import MessageStatus
from threadline.engine.engine import Engine
from threadline.engine.events import (
    ActivePathChanged,
    CheckpointsChanged,
    ConversationEvent,
    MemoriesChanged,
    MessageAdded,
    MessageChanged,
    SessionEvent,
    SessionRemoved,
    SessionUpdated,
    TextDelta,
    TurnStateChanged,
)
from threadline.engine.live import LiveConversation
from threadline.store.change_feed import ChangeFeed

pytestmark = pytest.mark.asyncio

PIECES = [f"piece{n} " for n in range(12)]
REPLY = "".join(PIECES)


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from empty_database(request, tmp_path / "shared.db")


async def engine_on(url: str, data_dir: Path, server: ReplayServer) -> Engine:
    engine = await Engine.open(
        data_dir, database_url=url, retry_policy=FAST_RETRIES, provider_timeout=10.0, watch_changes=True
    )
    config = ProviderConfig("replay", ProviderKind.OPENAI, base_url=server.openai_base_url, default_model="m")
    await engine.providers.save_provider(config, "sk-test")
    return engine


def slow_reply(server: ReplayServer, pieces: list[str] = PIECES) -> None:
    server.enqueue(sse_response(openai_text_stream(pieces), chunk_delay=0.15))


async def feed_came_round(a: Engine, live_b: LiveConversation) -> None:
    """Return once B's feed has read two batches since B opened the chat.

    A batch B asked for before it opened the chat does not read the chat's messages, so B
    takes the stored tree instead: correct, but as one reload (``ActivePathChanged``), and the
    re-read runs after that batch is applied. A rename seen by B's open chat shows a batch read
    since the open; a second one shows the loop also finished the re-read that may have
    followed the first. Only then does a turn in A arrive in B message by message, in place.
    """
    for title in ("Shared chat", "Shared chat (seen)"):
        await a.sessions.rename_session(live_b.session_id, title)
        await until(functools.partial(_titled, live_b, title))


def _titled(live: LiveConversation, title: str) -> bool:
    return live.info.title == title


class Tab:
    """What an open tab in engine B is told, and the reply texts it could show."""

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

    def added(self) -> list[str]:
        return [e.message.id for e in self.events if isinstance(e, MessageAdded)]


async def test_a_reply_streamed_in_one_engine_grows_in_the_other_and_versions_and_checkpoints_follow(
    database_url: str, tmp_path: Path, replay_server: ReplayServer
) -> None:
    slow_reply(replay_server)
    a = await engine_on(database_url, tmp_path / "a", replay_server)
    b = await engine_on(database_url, tmp_path / "b", replay_server)
    try:
        info = await a.sessions.new_session("Shared")
        live_b = await b.sessions.open_session(info.id)
        tab = Tab(b, info.id)
        live_b.subscribe(tab)
        await feed_came_round(a, live_b)
        await a.sessions.open_session(info.id)
        a.turns.send(info.id, "hello")
        await a.turns.wait_idle(info.id)
        reply_id = a.sessions.live(info.id).conversation.path()[-1].id  # type: ignore[union-attr]

        def finished() -> bool:
            if reply_id not in live_b.conversation.tree:
                return False
            reply = live_b.conversation.tree.get(reply_id)
            return reply.status is MessageStatus.COMPLETE and reply.text == REPLY

        await until(finished)
        partial = [t for t in dict.fromkeys(tab.texts) if t != REPLY]
        assert len(partial) >= 3, tab.texts  # seen growing, not only at the end
        assert all(REPLY.startswith(t) for t in tab.texts)
        assert [m.text for m in live_b.conversation.path()] == ["hello", REPLY]
        assert tab.added() == [m.id for m in live_b.conversation.path()]  # each once, in place
        assert any(isinstance(e, MessageChanged) and e.message.id == reply_id for e in tab.events)

        await a.controls.set_checkpoint(info.id, "first answer")
        await until(lambda: any(isinstance(e, CheckpointsChanged) for e in tab.events))
        assert live_b.conversation.tree.named_checkpoints == {"first answer": reply_id}

        slow_reply(replay_server, ["another ", "answer"])
        a.turns.regenerate(info.id, reply_id)
        await a.turns.wait_idle(info.id)
        new_leaf = a.sessions.live(info.id).conversation.tree.active_leaf  # type: ignore[union-attr]
        await until(lambda: live_b.conversation.tree.active_leaf == new_leaf)
        await until(lambda: live_b.conversation.path()[-1].status is MessageStatus.COMPLETE)
        assert live_b.conversation.path()[-1].text == "another answer"
        assert live_b.conversation.tree.version(new_leaf).count == 2
        assert b.sessions.live(info.id) is live_b
    finally:
        await a.aclose()
        await b.aclose()


async def test_sessions_created_renamed_and_deleted_in_one_engine_follow_in_the_other(
    database_url: str, tmp_path: Path, replay_server: ReplayServer
) -> None:
    a = await engine_on(database_url, tmp_path / "a", replay_server)
    b = await engine_on(database_url, tmp_path / "b", replay_server)
    try:
        seen: list[SessionEvent] = []
        b.sessions.subscribe_sessions(seen.append)
        await b.sessions.list_sessions()

        def updates(session_id: str) -> list[SessionUpdated]:
            return [e for e in seen if isinstance(e, SessionUpdated) and e.session.id == session_id]

        created = await a.sessions.new_session("Made in A")
        await until(lambda: bool(updates(created.id)))
        assert updates(created.id)[-1].session.title == "Made in A"
        await b.sessions.open_session(created.id)
        await a.sessions.rename_session(created.id, "Renamed in A")
        await until(lambda: updates(created.id)[-1].session.title == "Renamed in A")
        await a.sessions.pin_session(created.id, True)
        await until(lambda: updates(created.id)[-1].session.pinned)
        assert [e.session.title for e in updates(created.id)] == ["Made in A", "Renamed in A", "Renamed in A"]
        await a.sessions.delete_session(created.id)
        await a.sessions.purge_deleted()
        await until(lambda: any(isinstance(e, SessionRemoved) for e in seen))
        assert [e.session_id for e in seen if isinstance(e, SessionRemoved)] == [created.id]
        await until(lambda: b.sessions.live(created.id) is None)  # the open tab closed
    finally:
        await a.aclose()
        await b.aclose()


async def test_memories_saved_edited_and_deleted_in_one_engine_follow_in_the_other(
    database_url: str, tmp_path: Path, replay_server: ReplayServer
) -> None:
    """Memories travel on the feed like projects (migration 0013): B hears ``MemoriesChanged``
    with the whole list for each change A makes, and its own change once, with no echo."""
    a = await engine_on(database_url, tmp_path / "a", replay_server)
    b = await engine_on(database_url, tmp_path / "b", replay_server)
    try:
        seen: list[SessionEvent] = []
        b.sessions.subscribe_sessions(seen.append)
        assert await b.memory.memories() == []
        watch = b.change_watch
        assert watch is not None
        await until(lambda: watch.feed is not None)

        def lists() -> list[list[str]]:
            return [[m.text for m in e.memories] for e in seen if isinstance(e, MemoriesChanged)]

        saved = await a.memory.add("Prefers metric units")
        await until(lambda: lists() == [["Prefers metric units"]])
        await a.memory.edit(saved.id, "Prefers SI units")
        await until(lambda: lists()[-1:] == [["Prefers SI units"]])
        await a.memory.delete(saved.id)
        await until(lambda: lists()[-1:] == [[]])
        assert len(lists()) == 3

        await b.memory.add("Writes in British English")  # B's own: told at once, not again by its feed
        marker = await a.sessions.new_session("after the memory")
        await until(lambda: any(isinstance(e, SessionUpdated) and e.session.id == marker.id for e in seen))
        assert lists()[3:] == [["Writes in British English"]]
    finally:
        await a.aclose()
        await b.aclose()


async def test_what_another_instance_writes_while_the_feed_connects_still_arrives(
    database_url: str, tmp_path: Path, replay_server: ReplayServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The feed connects in the background after the engine opened (a window reads its sidebar
    meanwhile). A chat another instance creates in between must still reach B: its feed starts
    after the entry read when B opened, not after the newest one when it got connected."""
    connect = asyncio.Event()
    real_open = ChangeFeed.open.__func__  # type: ignore[attr-defined]

    async def open_late(cls: type[ChangeFeed], url: str, **options: Any) -> ChangeFeed:
        await connect.wait()  # as a busy machine or a slow server connects late
        feed: ChangeFeed = await real_open(cls, url, **options)
        return feed

    monkeypatch.setattr(ChangeFeed, "open", classmethod(open_late))
    b = await engine_on(database_url, tmp_path / "b", replay_server)
    a = await engine_on(database_url, tmp_path / "a", replay_server)
    try:
        seen: list[SessionEvent] = []
        b.sessions.subscribe_sessions(seen.append)
        created = await a.sessions.new_session("Written while B connected")
        connect.set()
        await until(lambda: any(isinstance(e, SessionUpdated) and e.session.id == created.id for e in seen))
    finally:
        await a.aclose()
        await b.aclose()


async def test_an_engine_s_own_turn_is_not_echoed_back_to_it(
    database_url: str, tmp_path: Path, replay_server: ReplayServer
) -> None:
    slow_reply(replay_server)
    a = await engine_on(database_url, tmp_path / "a", replay_server)
    b = await engine_on(database_url, tmp_path / "b", replay_server)
    try:
        info = await b.sessions.new_session("Mine")
        live = await b.sessions.open_session(info.id)
        tab = Tab(b, info.id)
        live.subscribe(tab)
        b.turns.send(info.id, "hello")
        await b.turns.wait_idle(info.id)
        ended = len(tab.events)
        assert isinstance(tab.events[-1], TurnStateChanged)
        marker = await a.sessions.new_session("Marker")  # once B has read this, it has read its own turn too
        watch = b.change_watch
        assert watch is not None
        await until(lambda: watch.is_news(marker) is False and not watch._deferred)
        # The feed may tell the sidebar the row's new preview; never a message again.
        assert all(isinstance(e, SessionUpdated) for e in tab.events[ended:])
        infos = [e.session for e in tab.events if isinstance(e, SessionUpdated)]
        assert all(x != y for x, y in itertools.pairwise(infos))  # no repeats
        assert len(tab.added()) == len(set(tab.added())) == 2
    finally:
        await a.aclose()
        await b.aclose()


@pytest.mark.postgres
async def test_the_reader_s_feed_connection_killed_mid_stream_resumes_and_misses_nothing(
    postgres_server: PostgresServer,  # noqa: F811
    tmp_path: Path,
    replay_server: ReplayServer,
) -> None:
    import psycopg

    url = postgres_server.create_database()
    slow_reply(replay_server, [f"part{n} " for n in range(20)])
    a = await engine_on(url, tmp_path / "a", replay_server)
    b = await engine_on(url, tmp_path / "b", replay_server)
    try:
        info = await a.sessions.new_session("Shared")
        live_b = await b.sessions.open_session(info.id)
        tab = Tab(b, info.id)
        live_b.subscribe(tab)
        watch = b.change_watch
        assert watch is not None
        await until(lambda: watch.feed is not None and watch.feed.listen_pid is not None)
        assert watch.feed is not None
        await feed_came_round(a, live_b)
        await a.sessions.open_session(info.id)
        a.turns.send(info.id, "hello")
        await until(lambda: len(tab.texts) >= 2)  # mid-stream
        pid = watch.feed.listen_pid
        with psycopg.connect(postgres_server.admin_url, autocommit=True) as admin:
            admin.execute("SELECT pg_terminate_backend(%s)", (pid,))
        await a.turns.wait_idle(info.id)
        expected = "".join(f"part{n} " for n in range(20))
        await until(lambda: live_b.conversation.path()[-1].text == expected)
        await until(lambda: live_b.conversation.path()[-1].status is MessageStatus.COMPLETE)
        assert watch.feed.reconnects >= 1
        assert all(expected.startswith(t) for t in tab.texts)
        assert not any(isinstance(e, ActivePathChanged) for e in tab.events)  # followed in place
    finally:
        await a.aclose()
        await b.aclose()
        postgres_server.drop_database(url)
