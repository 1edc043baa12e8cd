"""An engine notices what other processes write to its database (the change watch).

Real parts only: two engines on one SQLite file, `threadline ask` as a subprocess
against the replay server, and a PostgreSQL database when one can be started.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest
from tests.support.engines import FAST_RETRIES, open_engine
from tests.support.postgres import PostgresServer, postgres_server  # noqa: F401  (fixture)
from tests.support.sse_server import ReplayServer, openai_text_stream, sse_response
from tests.support.waiting import until

from threadline.core.messages import MessageStatus
from threadline.engine.engine import Engine
from threadline.engine.events import (
    ConversationEvent,
    MessageAdded,
    MessageChanged,
    SessionEvent,
    SessionRemoved,
    SessionUpdated,
    TextDelta,
)
from threadline.store.change_counter import ChangeCounter

pytestmark = pytest.mark.asyncio


class Recorder:
    def __init__(self) -> None:
        self.events: list[SessionEvent] = []

    def __call__(self, event: SessionEvent) -> None:
        self.events.append(event)

    def updated(self, session_id: str) -> list[SessionUpdated]:
        return [e for e in self.events if isinstance(e, SessionUpdated) and e.session.id == session_id]


async def watching(data_dir: Path, server: ReplayServer) -> Engine:
    engine = await Engine.open(data_dir, retry_policy=FAST_RETRIES, provider_timeout=5.0, watch_changes=True)
    if not await engine.providers.list_providers():
        await open_engine_config(engine, server)
    return engine


async def open_engine_config(engine: Engine, server: ReplayServer) -> None:
    from threadline.core.config import ProviderConfig, ProviderKind

    await engine.providers.save_provider(
        ProviderConfig(
            "replay", ProviderKind.OPENAI, base_url=server.openai_base_url, default_model="gpt-4o-mini"
        )
    )


async def test_a_rename_and_a_new_chat_by_a_second_engine_arrive_as_session_updates(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    window = await watching(tmp_path, replay_server)
    other = await open_engine(tmp_path, replay_server)
    try:
        seen = Recorder()
        window.sessions.subscribe_sessions(seen)
        mine = await window.sessions.new_session("Mine")
        await window.sessions.list_sessions()  # what a sidebar shows is watched
        await until(lambda: window.change_watch is not None and window.change_watch.checks > 0)
        created = await other.sessions.new_session("Made elsewhere")
        await until(lambda: bool(seen.updated(created.id)))
        assert seen.updated(created.id)[-1].session.title == "Made elsewhere"
        await other.sessions.rename_session(mine.id, "Renamed elsewhere")
        await until(lambda: any(e.session.title == "Renamed elsewhere" for e in seen.updated(mine.id)))
        await other.sessions.pin_session(created.id, True)
        await until(lambda: seen.updated(created.id)[-1].session.pinned)
        assert len(seen.updated(created.id)) == 2  # created, pinned: no echoes
        await other.sessions.delete_session(created.id)
        await other.sessions.purge_deleted()
        await until(lambda: any(isinstance(e, SessionRemoved) for e in seen.events))
        assert [e.session_id for e in seen.events if isinstance(e, SessionRemoved)] == [created.id]
    finally:
        await other.aclose()
        await window.aclose()


async def test_its_own_changes_are_not_echoed(tmp_path: Path, replay_server: ReplayServer) -> None:
    engine = await watching(tmp_path, replay_server)
    other = await open_engine(tmp_path, replay_server)
    try:
        seen = Recorder()
        engine.sessions.subscribe_sessions(seen)
        await engine.sessions.list_sessions()
        info = await engine.sessions.new_session()
        for n in range(5):
            await engine.sessions.rename_session(info.id, f"Title {n}")
        # Checks run one after another: once a later change made elsewhere has arrived,
        # every commit before it has been re-read.
        marker = await other.sessions.new_session("Marker")
        await until(lambda: bool(seen.updated(marker.id)))
        titles = [e.session.title for e in seen.updated(info.id)]
        assert titles == ["", "Title 0", "Title 1", "Title 2", "Title 3", "Title 4"]
    finally:
        await other.aclose()
        await engine.aclose()


async def test_a_chat_made_by_threadline_ask_arrives_and_an_open_idle_chat_shows_its_new_turn(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    replay_server.enqueue(
        sse_response(openai_text_stream(["Hello ", "from the command line."])),
        sse_response(openai_text_stream(["A second ", "answer."])),
    )
    engine = await watching(tmp_path, replay_server)
    try:
        seen = Recorder()
        engine.sessions.subscribe_sessions(seen)
        await engine.sessions.list_sessions()
        result = await ask(tmp_path, "hi")
        assert result[0] == 0, result[1]
        await until(lambda: any(e.session.preview for e in seen.events if isinstance(e, SessionUpdated)))
        [session_id] = {e.session.id for e in seen.events if isinstance(e, SessionUpdated)}
        live = await engine.sessions.open_session(session_id)
        assert [m.text for m in live.conversation.path()] == ["hi", "Hello from the command line."]
        tab: list[ConversationEvent] = []
        live.subscribe(tab.append)
        result = await ask(tmp_path, "--session", session_id, "again")
        assert result[0] == 0, result[1]
        expected = ["hi", "Hello from the command line.", "again", "A second answer."]
        # The feed may deliver the reply while it grows: wait for its final text, not the path's length.
        await until(lambda: [m.text for m in live.conversation.path()] == expected)
        await until(lambda: live.conversation.path()[-1].status is MessageStatus.COMPLETE)
        added = [e.message.id for e in tab if isinstance(e, MessageAdded)]
        assert added == [m.id for m in live.conversation.path()[2:]]  # in place, not a reload
        await until(lambda: live.info.preview.startswith("A second"))
    finally:
        await engine.aclose()


async def ask(data_dir: Path, *args: str) -> tuple[int, str]:
    env = {**os.environ, "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "threadline",
        "--data-dir",
        str(data_dir),
        "ask",
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=env,
    )
    _, stderr = await asyncio.wait_for(process.communicate(), 60)
    return process.returncode or 0, stderr.decode()


async def test_close_stops_the_watch_with_nothing_pending(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    engine = await watching(tmp_path, replay_server)
    watch = engine.change_watch
    assert watch is not None
    await until(lambda: watch.feed is not None)
    await engine.aclose()
    assert watch._task is None and watch.feed is None
    leftovers = [t for t in asyncio.all_tasks() if t is not asyncio.current_task() and not t.done()]
    assert leftovers == []


@pytest.mark.parametrize("backend", ["sqlite", "postgresql"])
async def test_the_counter_moves_only_after_a_commit(
    backend: str, tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    from threadline.store.repository import Store

    if backend == "sqlite":
        url = Store.sqlite_url(tmp_path / "t.db")
    else:
        server: PostgresServer = request.getfixturevalue("postgres_server")
        url = server.create_database()
    store = await Store.open(url)
    counter = await ChangeCounter.open(url)
    try:
        first = await counter.counter()
        assert await counter.counter() == first
        info = await store.create_session(title="one")
        second = await counter.counter()
        assert second != first
        rows = await counter.changed_sessions(None, [info.id, "gone"])
        assert [r.title for r in rows] == ["one"]
        assert await counter.latest_activity() == info.updated_at
        assert [r.id for r in await counter.changed_sessions(info.updated_at, [])] == [info.id]
    finally:
        await counter.close()
        await store.close()


@pytest.mark.postgres
@pytest.mark.expected_log_warnings("not following other windows' changes yet")
async def test_a_feed_that_cannot_open_at_start_is_tried_again_until_it_does(
    postgres_server: PostgresServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    """The window's engine starts while the server cannot be reached (a relay between them is
    cut just after its store opened): the change watch keeps trying, and once the network is
    back another instance's new chat arrives."""
    from tests.support.tcp_proxy import TcpProxy

    from threadline.store.repository import Store

    url = postgres_server.create_database()
    port = url.rsplit(":", 1)[1].split("/", 1)[0]
    proxy = TcpProxy("127.0.0.1", int(port)).start()
    other = await Engine.open(tmp_path / "other", database_url=url)
    store = await Store.open(url.replace(f":{port}/", f":{proxy.port}/"))
    proxy.cut()
    window = Engine(store, tmp_path / "window", watch_changes=True)
    try:
        watch = window.change_watch
        assert watch is not None
        seen = Recorder()
        window.sessions.subscribe_sessions(seen)
        await until(lambda: watch.open_failures >= 2)  # tried, and tried again
        assert watch.feed is None
        proxy.restore()
        await until(lambda: watch.feed is not None)
        created = await other.sessions.new_session("Made while it was starting")
        await until(lambda: bool(seen.updated(created.id)))
        assert seen.updated(created.id)[-1].session.title == "Made while it was starting"
    finally:
        proxy.restore()
        await window.aclose()
        await other.aclose()
        proxy.close()
        postgres_server.drop_database(url)


@pytest.mark.postgres
async def test_an_open_chat_is_told_while_other_windows_changes_do_not_arrive(
    postgres_server: PostgresServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    """A window that only reads loses its link to the server: its open chat hears
    ChangesReceiving(False) (a tab opened meanwhile too), and True once the link is back,
    with what was written meanwhile arriving after all."""
    from tests.support.tcp_proxy import TcpProxy

    from threadline.engine.events import ChangesReceiving

    url = postgres_server.create_database()
    port = url.rsplit(":", 1)[1].split("/", 1)[0]
    proxy = TcpProxy("127.0.0.1", int(port)).start()
    other = await Engine.open(tmp_path / "other", database_url=url)
    window = await Engine.open(
        tmp_path / "window", database_url=url.replace(f":{port}/", f":{proxy.port}/"), watch_changes=True
    )
    try:
        watch = window.change_watch
        assert watch is not None
        info = await other.sessions.new_session("Followed")
        told: list[ChangesReceiving] = []
        live = await window.sessions.open_session(info.id)
        live.subscribe(lambda e: told.append(e) if isinstance(e, ChangesReceiving) else None)
        await until(lambda: watch.receiving is True)
        assert told == []  # all well from the start: nothing to say

        proxy.cut()
        await until(lambda: told == [ChangesReceiving(info.id, False)])
        second: list[ChangesReceiving] = []  # another tab on the chat, opened while cut off
        (await window.sessions.open_session(info.id)).subscribe(
            lambda e: second.append(e) if isinstance(e, ChangesReceiving) else None
        )
        await until(lambda: second == [ChangesReceiving(info.id, False)])
        await other.sessions.rename_session(info.id, "Renamed while cut off")

        proxy.restore()
        await until(lambda: told[-1] == ChangesReceiving(info.id, True), timeout=60)
        await until(lambda: live.info.title == "Renamed while cut off")
        assert second[-1] == ChangesReceiving(info.id, True)
    finally:
        proxy.restore()
        await window.aclose()
        await other.aclose()
        proxy.close()
        postgres_server.drop_database(url)


async def test_another_writers_change_reaches_a_message_held_packed(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    """A message with children is held packed (``core/packed_history.py``); should another
    process rewrite it all the same, the open chat shows the stored text, not a stale copy."""
    from threadline.core.messages import Message, MessageStatus

    window = await watching(tmp_path, replay_server)
    other = await open_engine(tmp_path, replay_server)
    try:
        info = await other.sessions.new_session("Packed")  # written elsewhere: nothing here to settle
        prompt = Message.prompt("question")
        reply = Message.reply(parent_id=prompt.id, text="first answer", status=MessageStatus.COMPLETE)
        follow = Message.prompt("and then?", parent_id=reply.id)
        await other.store.append_messages(info.id, [prompt, reply, follow])
        live = await window.sessions.open_session(info.id)
        assert live.conversation.tree.packed_count == 2  # the prompt and the reply
        events: list[ConversationEvent] = []
        live.subscribe(events.append)
        await until(lambda: window.change_watch is not None and window.change_watch.checks > 0)

        await other.store.update_message(reply.copy(text="rewritten answer"))

        await until(lambda: live.conversation.tree.get(reply.id).text == "rewritten answer")
        assert [m.text for m in live.conversation.path()] == ["question", "rewritten answer", "and then?"]
        changed = [e for e in events if isinstance(e, MessageChanged | TextDelta)]
        assert changed, events  # told in place, as the tab's rows need
    finally:
        await other.aclose()
        await window.aclose()
