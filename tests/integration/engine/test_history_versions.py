"""History is never rewritten: continuing a reply that later turns were built on makes a new version.

Checked in the SQLite file itself: the original row keeps its text and status, the
new version is a new row (a sibling), and the later turn still follows the original.
"""

from __future__ import annotations

import asyncio
import sqlite3

import pytest
from tests.integration.engine.helpers import stored_path, turn
from tests.support.sse_server import ReplayServer, ScriptedResponse, openai_text_stream, sse_response

from threadline.core.messages import MessageStatus
from threadline.engine.engine import DATABASE_FILENAME, Engine

pytestmark = pytest.mark.asyncio


def text_reply(*pieces: str, **options: float) -> ScriptedResponse:
    return sse_response(openai_text_stream(list(pieces)), **options)


def rows(engine: Engine, session_id: str) -> dict[str, tuple[str | None, str, str]]:
    """id → (parent, text, status) as stored, read with sqlite3 (not through the store)."""
    with sqlite3.connect(engine.data_dir / DATABASE_FILENAME) as db:
        found = db.execute(
            "SELECT id, parent_id, text, status FROM messages WHERE session_id = ? ORDER BY ordinal",
            (session_id,),
        ).fetchall()
    return {id_: (parent, text, status) for id_, parent, text, status in found}


async def test_continuing_an_earlier_stopped_reply_appends_a_new_version(
    engine: Engine, replay_server: ReplayServer
) -> None:
    replay_server.enqueue(
        text_reply(*[f"w{i} " for i in range(100)], chunk_delay=0.02),
        text_reply("Later answer"),
        text_reply("and the rest."),
    )
    session = await engine.sessions.new_session()
    live = await engine.sessions.open_session(session.id)
    engine.turns.send(session.id, "Write")
    while live.conversation.reply is None or len(live.conversation.reply.text) < 6:
        await asyncio.sleep(0.01)
    engine.turns.cancel(session.id)
    await engine.turns.wait_idle(session.id)
    stopped = live.conversation.path()[-1]
    await turn(engine, session.id, "Something else")  # a later turn built on the stopped reply
    before = rows(engine, session.id)
    assert before[stopped.id][2] == MessageStatus.CANCELLED.value

    engine.turns.resume(session.id, stopped.id)
    await asyncio.wait_for(engine.turns.wait_idle(session.id), 20)

    after = rows(engine, session.id)
    assert {k: after[k] for k in before} == before  # nothing that was stored changed
    [new_id] = [k for k in after if k not in before]
    parent, text, status = after[new_id]
    assert parent == before[stopped.id][0] and status == MessageStatus.COMPLETE.value
    assert text == before[stopped.id][1] + "and the rest."
    assert replay_server.requests[-1].body["messages"][1]["content"] == before[stopped.id][1]
    # The new version is shown; the original and the turn built on it are one switch away.
    path = await stored_path(engine.data_dir, session.id)
    assert path[-1].id == new_id
    await engine.controls.switch_version(session.id, new_id, -1)
    assert [m.text for m in live.conversation.path()][-2:] == ["Something else", "Later answer"]
