"""Clear, tangents, checkpoints and manual compaction through the engine: the captured request
that follows each one proves what is sent; all of it survives a restart."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.integration.engine.helpers import failure, stored_path, turn
from tests.support.engines import open_engine
from tests.support.sse_server import ReplayServer, openai_text_stream, sse_response

from threadline.core.messages import MarkerType
from threadline.engine.conversation_controls import ControlRefusedError
from threadline.engine.engine import Engine
from threadline.engine.errors import EngineError, SessionBusyError
from threadline.engine.events import (
    ActivePathChanged,
    CheckpointsChanged,
    ConversationEvent,
    MessageAdded,
    SessionUpdated,
)

pytestmark = pytest.mark.asyncio


def sent(server: ReplayServer, index: int = -1) -> list[str]:
    """The user and assistant texts of a captured request (the system message left out)."""
    return [str(m["content"]) for m in server.requests[index].body["messages"] if m["role"] != "system"]


async def talk(engine: Engine, server: ReplayServer, session_id: str, *exchanges: tuple[str, str]) -> None:
    for prompt, answer in exchanges:
        server.enqueue(sse_response(openai_text_stream([answer])))
        assert failure(await turn(engine, session_id, prompt)) is None


async def test_after_clear_nothing_before_the_marker_is_sent(
    engine: Engine, replay_server: ReplayServer
) -> None:
    info = await engine.sessions.new_session()
    await talk(engine, replay_server, info.id, ("Q1", "A1"), ("Q2", "A2"))
    marker = await engine.controls.clear_context(info.id)
    assert marker.marker is not None and marker.marker.type is MarkerType.CLEAR
    await talk(engine, replay_server, info.id, ("Q3", "A3"))
    assert sent(replay_server) == ["Q3"]
    await talk(engine, replay_server, info.id, ("Q4", "A4"))
    assert sent(replay_server) == ["Q3", "A3", "Q4"]
    # Nothing was deleted: the earlier part is still on the path and in search.
    texts = [m.text for m in engine.sessions.live(info.id).conversation.path()]  # type: ignore[union-attr]
    assert texts[:4] == ["Q1", "A1", "Q2", "A2"]
    assert {h.session_id for h in await engine.library.search("Q1")} == {info.id}


async def test_a_tangent_leaves_out_the_later_main_line_and_returns_to_it(
    engine: Engine, replay_server: ReplayServer
) -> None:
    info = await engine.sessions.new_session()
    await talk(engine, replay_server, info.id, ("Q1", "A1"), ("Q2", "A2"))
    live = await engine.sessions.open_session(info.id)
    a1, a2 = live.conversation.path()[1].id, live.conversation.path()[3].id
    events: list[ConversationEvent] = []
    live.subscribe(events.append)
    await engine.controls.start_tangent(info.id, from_message_id=a1)
    origin = live.conversation.tree.tangent_origin
    assert origin == a2  # where the main line was left, not where the tangent branched off
    assert any(isinstance(e, CheckpointsChanged) and e.tangent_origin == origin for e in events)
    await talk(engine, replay_server, info.id, ("T1", "TA1"))
    assert sent(replay_server) == ["Q1", "A1", "T1"]  # the main line's later turn is absent
    with pytest.raises(ControlRefusedError, match="already in a tangent"):
        await engine.controls.start_tangent(info.id)

    await engine.controls.end_tangent(info.id)
    assert live.conversation.tree.tangent_origin is None
    await talk(engine, replay_server, info.id, ("Q3", "A3"))
    assert sent(replay_server) == ["Q1", "A1", "Q2", "A2", "Q3"]
    # The tangent stays in the tree, browsable.
    assert any(m.text == "TA1" for m in live.conversation.tree)

    await engine.controls.start_tangent(info.id)
    await talk(engine, replay_server, info.id, ("T2", "TA2"))
    await engine.controls.end_tangent(info.id, bring_last_exchange=True)
    await talk(engine, replay_server, info.id, ("Q4", "A4"))
    assert sent(replay_server)[-3:] == ["T2", "TA2", "Q4"]
    assert "T1" not in sent(replay_server)
    with pytest.raises(ControlRefusedError, match="not in a tangent"):
        await engine.controls.end_tangent(info.id)


async def test_a_restored_checkpoint_is_what_the_next_request_follows(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    info = await engine.sessions.new_session()
    await talk(engine, replay_server, info.id, ("Q1", "A1"))
    await engine.controls.set_checkpoint(info.id, "  before   the detour ")
    await talk(engine, replay_server, info.id, ("Q2", "A2"))
    live = await engine.sessions.open_session(info.id)
    assert list(live.conversation.tree.named_checkpoints) == ["before the detour"]
    a1 = live.conversation.tree.named_checkpoints["before the detour"]
    await engine.controls.set_checkpoint(info.id, "before the detour")  # used again: moves to A2
    assert live.conversation.tree.named_checkpoints["before the detour"] == live.conversation.path()[-1].id
    await engine.controls.set_checkpoint(info.id, "before the detour", a1)  # and back
    with pytest.raises(ControlRefusedError, match="no checkpoint"):
        await engine.controls.restore_checkpoint(info.id, "nowhere")
    await engine.controls.restore_checkpoint(info.id, "before the detour")
    await talk(engine, replay_server, info.id, ("Q3", "A3"))
    assert sent(replay_server) == ["Q1", "A1", "Q3"]
    await engine.controls.set_checkpoint(info.id, "gone soon")
    await engine.controls.remove_checkpoint(info.id, "gone soon")
    await engine.controls.start_tangent(info.id)

    # A restart finds the checkpoint, the tangent's return point and the path as they were.
    leaf = live.conversation.tree.active_leaf
    await engine.aclose()
    again = await open_engine(tmp_path / "data", replay_server)
    try:
        reopened = await again.sessions.open_session(info.id)
        tree = reopened.conversation.tree
        assert list(tree.named_checkpoints) == ["before the detour"]
        assert tree.tangent_origin is not None and tree.active_leaf == leaf
        await again.controls.end_tangent(info.id)
        await talk(again, replay_server, info.id, ("Q4", "A4"))
        assert sent(replay_server) == ["Q1", "A1", "Q3", "A3", "Q4"]
    finally:
        await again.aclose()


async def test_compact_keeps_turns_and_follows_instructions(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    info = await engine.sessions.new_session()
    await talk(engine, replay_server, info.id, ("Q1", "A1"), ("Q2", "A2"), ("Q3", "A3"))
    replay_server.enqueue(sse_response(openai_text_stream(["The user asked three questions."])))
    summary = await engine.turns.compact(info.id, "keep every number", keep_turns=1)
    assert summary is not None
    assert "keep every number" in str(replay_server.requests[-1].body["messages"][-1]["content"])
    await talk(engine, replay_server, info.id, ("Q4", "A4"))
    body = replay_server.requests[-1].body["messages"]
    assert "The user asked three questions." in str(body[0]["content"])
    assert sent(replay_server) == ["Q3", "A3", "Q4"]

    # After a restart the stored summary is still what stands for the older turns, and a
    # clear made then starts the context afresh, summary included.
    await engine.aclose()
    again = await open_engine(tmp_path / "data", replay_server)
    try:
        await talk(again, replay_server, info.id, ("Q5", "A5"))
        assert "The user asked three questions." in str(
            replay_server.requests[-1].body["messages"][0]["content"]
        )
        assert sent(replay_server) == ["Q3", "A3", "Q4", "A4", "Q5"]
        await again.controls.clear_context(info.id)
        await talk(again, replay_server, info.id, ("Q6", "A6"))
        assert replay_server.requests[-1].body["messages"][0][
            "role"
        ] != "system" or "three questions" not in str(
            replay_server.requests[-1].body["messages"][0]["content"]
        )
        assert sent(replay_server) == ["Q6"]
    finally:
        await again.aclose()


async def test_controls_tell_open_tabs_and_refuse_with_a_message(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    info = await engine.sessions.new_session()
    await talk(engine, replay_server, info.id, ("Q1", "A1"))
    live = await engine.sessions.open_session(info.id)
    a1 = live.conversation.tree.active_leaf
    assert a1 is not None
    events: list[ConversationEvent] = []
    live.subscribe(events.append)

    marker = await engine.controls.clear_context(info.id)
    assert [type(e) for e in events if not isinstance(e, SessionUpdated)] == [MessageAdded, ActivePathChanged]
    assert MessageAdded(info.id, marker) in events and ActivePathChanged(info.id, marker.id) in events

    events.clear()
    await engine.controls.set_checkpoint(info.id, "first", a1)
    assert [e for e in events if not isinstance(e, SessionUpdated)] == [
        CheckpointsChanged(info.id, {"first": a1}, None)
    ]
    for name, refusal in [("", "needs a name"), ("x" * 61, "at most 60")]:
        with pytest.raises(EngineError, match=refusal) as refused:
            await engine.controls.set_checkpoint(info.id, name)
        assert refusal in refused.value.user_message

    # In a tangent, restoring a checkpoint on the main line leaves the tangent: the tab hears it.
    await engine.controls.start_tangent(info.id)
    await talk(engine, replay_server, info.id, ("T1", "TA1"))
    events.clear()
    await engine.controls.restore_checkpoint(info.id, "first")
    assert live.conversation.tree.active_leaf == a1 and live.conversation.tree.tangent_origin is None
    assert ActivePathChanged(info.id, a1) in events
    assert CheckpointsChanged(info.id, {"first": a1}, None) in events

    # While a reply runs every control is refused, with a message and nothing changed.
    replay_server.enqueue(sse_response(openai_text_stream(["slow"]), first_byte_delay=0.3))
    engine.turns.send(info.id, "Q2")
    for control in (
        engine.controls.clear_context(info.id),
        engine.controls.start_tangent(info.id),
        engine.controls.set_checkpoint(info.id, "later"),
        engine.controls.restore_checkpoint(info.id, "first"),
        engine.controls.remove_checkpoint(info.id, "first"),
    ):
        with pytest.raises(SessionBusyError) as busy:
            await control
        assert busy.value.user_message
    await engine.turns.wait_idle(info.id)
    assert list(live.conversation.tree.named_checkpoints) == ["first"]


async def test_a_brought_exchange_is_marked_and_survives_a_restart(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    info = await engine.sessions.new_session()
    await talk(engine, replay_server, info.id, ("Q1", "A1"))
    await engine.controls.start_tangent(info.id)
    await talk(engine, replay_server, info.id, ("T1", "TA1"))
    await engine.controls.end_tangent(info.id, bring_last_exchange=True)
    path = await stored_path(engine.data_dir, info.id)
    originals = {m.id: m for m in engine.sessions.live(info.id).conversation.tree}  # type: ignore[union-attr]
    assert [m.text for m in path] == ["Q1", "A1", "T1", "TA1"]
    for copy in path[-2:]:
        assert copy.metadata is not None and originals[copy.metadata.brought_from].text == copy.text
        assert copy.metadata.brought_from != copy.id


async def test_the_branch_map_or_a_version_out_of_a_tangent_leaves_it_for_good(
    engine: Engine, replay_server: ReplayServer
) -> None:
    info = await engine.sessions.new_session()
    await talk(engine, replay_server, info.id, ("Q1", "A1"), ("Q2", "A2"))
    live = await engine.sessions.open_session(info.id)
    a1 = live.conversation.path()[1].id
    await engine.controls.start_tangent(info.id)
    await talk(engine, replay_server, info.id, ("T1", "TA1"))
    events: list[ConversationEvent] = []
    live.subscribe(events.append)

    await engine.controls.set_active_leaf(info.id, a1)  # the branch map: a point above the tangent
    assert live.conversation.tree.tangent_origin is None
    assert any(isinstance(e, CheckpointsChanged) and e.tangent_origin is None for e in events)
    stored = await engine.store.get_session(info.id)
    assert stored is not None and "__tangent_return__" not in (stored.checkpoints or {})
    await talk(engine, replay_server, info.id, ("Q3", "A3"))
    assert sent(replay_server) == ["Q1", "A1", "Q3"]  # a new branch under A1, no tangent
    with pytest.raises(ControlRefusedError, match="not in a tangent"):
        await engine.controls.end_tangent(info.id)
