"""The session lifecycle in the engine's registry: model pinning, undoable delete, fork, drafts."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from tests.integration.engine.helpers import failure, stored_path, turn
from tests.support.sse_server import ReplayServer, ScriptedResponse, openai_text_stream, sse_response

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.core.messages import ContextFile, ImageBlock, MessageStatus
from threadline.engine.drafts import Draft
from threadline.engine.engine import Engine
from threadline.engine.errors import SessionClosedError
from threadline.engine.events import (
    ErrorAction,
    SessionEvent,
    SessionForked,
    SessionRemoved,
    SessionRestored,
    TextDelta,
)
from threadline.store.repository import Store

pytestmark = pytest.mark.asyncio

UNREACHABLE = "http://127.0.0.1:9/v1"


def text_reply(*pieces: str, **options: float) -> ScriptedResponse:
    return sse_response(openai_text_stream(list(pieces)), **options)


def watch(engine: Engine) -> list[SessionEvent]:
    events: list[SessionEvent] = []
    engine.sessions.subscribe_sessions(events.append)
    return events


async def test_a_new_session_starts_with_the_model_used_last(
    engine: Engine, replay_server: ReplayServer
) -> None:
    first = await engine.sessions.new_session()
    assert (first.provider, first.model) == ("replay", "gpt-4o-mini")  # nothing used yet: the default
    await engine.providers.save_provider(
        ProviderConfig("other", ProviderKind.OPENAI, base_url=UNREACHABLE), "k"
    )
    await engine.sessions.set_session_model(first.id, "replay", "gpt-4o")
    second = await engine.sessions.new_session()
    assert (second.provider, second.model) == ("replay", "gpt-4o")
    # sending with a model makes it the last used, too
    await engine.sessions.set_session_model(second.id, "other", "o-1")
    third = await engine.sessions.new_session()
    assert (third.provider, third.model) == ("other", "o-1")
    replay_server.enqueue(text_reply("ok"))
    await turn(engine, first.id, "hi")
    assert replay_server.requests[-1].body["model"] == "gpt-4o"
    fourth = await engine.sessions.new_session()
    assert (fourth.provider, fourth.model) == ("replay", "gpt-4o")
    # a removed provider is not offered to new chats
    await engine.sessions.set_session_model(third.id, "other", "o-1")
    await engine.providers.remove_provider("other")
    fifth = await engine.sessions.new_session()
    assert fifth.provider == "replay"


async def test_adding_a_provider_named_aaa_moves_no_existing_session(
    engine: Engine, replay_server: ReplayServer
) -> None:
    old = await engine.sessions.new_session()
    await engine.providers.save_provider(
        ProviderConfig("aaa", ProviderKind.OPENAI, base_url=UNREACHABLE, default_model="a-1"), "k"
    )
    replay_server.enqueue(text_reply("still replay"))
    events = await turn(engine, old.id, "where do you go?")
    assert failure(events) is None
    assert replay_server.requests[-1].body["model"] == "gpt-4o-mini"
    info = await engine.store.get_session(old.id)
    assert info is not None and (info.provider, info.model) == ("replay", "gpt-4o-mini")


async def test_a_session_without_provider_asks_for_a_model_instead_of_taking_the_first(
    engine: Engine, replay_server: ReplayServer
) -> None:
    bare = await engine.store.create_session(title="made before any provider existed")
    events = await turn(engine, bare.id, "hello")
    failed = failure(events)
    assert failed is not None and failed.error.kind == "no_model"
    assert ErrorAction.PICK_MODEL in failed.error.actions
    assert replay_server.requests == []


async def test_delete_is_undoable_then_final(engine: Engine, replay_server: ReplayServer) -> None:
    events = watch(engine)
    replay_server.enqueue(text_reply("a zebra answer"))
    session = await engine.sessions.new_session()
    await turn(engine, session.id, "tell me about zebras")
    await engine.sessions.save_draft(session.id, Draft("unsent"))
    await engine.sessions.delete_session(session.id)
    assert SessionRemoved(session.id) in events
    assert engine.sessions.live(session.id) is None
    assert session.id not in [s.id for s in await engine.sessions.list_sessions()]
    assert await engine.library.search("zebra") == []
    with pytest.raises(SessionClosedError):
        await engine.sessions.open_session(session.id)
    restored = await engine.sessions.restore_session(session.id)
    assert restored is not None and restored.id == session.id
    assert any(isinstance(e, SessionRestored) and e.session.id == session.id for e in events)
    live = await engine.sessions.open_session(session.id)
    assert [m.text for m in live.conversation.path()] == ["tell me about zebras", "a zebra answer"]
    assert [h.session_id for h in await engine.library.search("zebra")] == [session.id, session.id]
    assert await engine.sessions.get_draft(session.id) == Draft("unsent")
    # delete again and let the undo window pass: gone from the store, with its draft
    engine.sessions.undo_seconds = 0.05
    await engine.sessions.delete_session(session.id)
    while engine.sessions.pending_deletes():
        await asyncio.sleep(0.02)
    assert await engine.store.get_session(session.id) is None
    assert await engine.sessions.get_draft(session.id) is None
    assert await engine.sessions.restore_session(session.id) is None


async def test_delete_cancels_a_running_turn_and_keeps_its_partial_reply(
    engine: Engine, replay_server: ReplayServer
) -> None:
    replay_server.enqueue(text_reply(*[f"w{i} " for i in range(200)], chunk_delay=0.02))
    session = await engine.sessions.new_session()
    live = await engine.sessions.open_session(session.id)
    deltas: list[str] = []
    live.subscribe(lambda e: deltas.append(e.delta) if isinstance(e, TextDelta) else None)
    engine.turns.send(session.id, "Count slowly")
    while len(deltas) < 3:
        await asyncio.sleep(0.01)
    await engine.sessions.delete_session(session.id)
    assert not engine.turns.running(session.id)
    path = await stored_path(engine.data_dir, session.id)
    assert path[-1].status is MessageStatus.CANCELLED and path[-1].text.startswith("w0 w1 w2")
    assert session.id not in [
        s.id for s in await engine.sessions.list_sessions()
    ]  # no late row from the turn


async def test_closing_the_engine_carries_out_pending_deletes(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    from tests.support.engines import open_engine

    engine = await open_engine(tmp_path / "d", replay_server)
    keep = await engine.sessions.new_session("keep")
    gone = await engine.sessions.new_session("gone")
    await engine.sessions.delete_session(gone.id)
    await engine.aclose()
    store = await Store.open(Store.sqlite_url(tmp_path / "d" / "threadline.db"))
    try:
        assert [s.id for s in await store.list_sessions()] == [keep.id]
    finally:
        await store.close()


async def test_fork_keeps_the_model_and_announces_the_copy(
    engine: Engine, replay_server: ReplayServer
) -> None:
    events = watch(engine)
    replay_server.enqueue(text_reply("first answer"))
    source = await engine.sessions.new_session()
    await engine.sessions.set_session_model(source.id, "replay", "gpt-4o")
    await turn(engine, source.id, "question")
    copy = await engine.sessions.fork_session(source.id)
    assert SessionForked(source.id, copy) in events
    assert (copy.provider, copy.model) == ("replay", "gpt-4o")
    assert [m.text for m in (await engine.sessions.open_session(copy.id)).conversation.path()] == [
        "question",
        "first answer",
    ]


async def test_drafts_survive_a_restart(tmp_path: Path, replay_server: ReplayServer) -> None:
    from tests.support.engines import open_engine

    engine = await open_engine(tmp_path / "d", replay_server)
    session = await engine.sessions.new_session()
    draft = Draft(
        "half a thought", (ContextFile("notes.txt", "abc"), ImageBlock("image/png", "AAAA", "p.png"))
    )
    await engine.sessions.save_draft(session.id, draft)
    await engine.aclose()
    engine = await open_engine(tmp_path / "d", replay_server)
    try:
        assert await engine.sessions.get_draft(session.id) == draft
        await engine.sessions.save_draft(session.id, Draft())
        assert await engine.sessions.get_draft(session.id) is None
    finally:
        await engine.aclose()
