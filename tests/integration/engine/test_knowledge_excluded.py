"""Excluding a passage from a chat (the Sources list's Exclude): a real engine, a real index,
the request the replay server received.

The exclusion is the chat's, kept as a setting: it outlasts a restart, wins over a pin, does
not touch the reply (which keeps what was sent), and another chat still gets the passage.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.integration.engine.helpers import failure, stored_path, turn
from tests.support.engines import open_engine
from tests.support.knowledge_folders import PDF_ANSWER, knowledge_folder
from tests.support.sse_server import ReplayServer, openai_text_stream, sse_response

from threadline.core.knowledge import AttachScope
from threadline.engine.engine import Engine
from threadline.engine.errors import MessageGoneError
from threadline.engine.knowledge import KnowledgeError

pytestmark = pytest.mark.asyncio


def system_sent(server: ReplayServer) -> str:
    first = server.requests[-1].body["messages"][0]
    return str(first["content"]) if first["role"] == "system" else ""


async def ask(engine: Engine, server: ReplayServer, session_id: str, text: str = "valve torque?") -> str:
    server.enqueue(sse_response(openai_text_stream(["ok [1]"])))
    assert failure(await turn(engine, session_id, text)) is None
    return system_sent(server)


async def test_an_excluded_passage_stays_out_of_the_chat_after_a_restart_even_when_pinned(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    folder = knowledge_folder(tmp_path / "docs")
    session = await engine.sessions.new_session()
    other = await engine.sessions.new_session()
    await engine.knowledge.add("handbook", [folder])
    await engine.knowledge.index("handbook")
    for chat in (session.id, other.id):
        await engine.knowledge.attach("handbook", AttachScope.SESSION, chat)

    assert PDF_ANSWER in await ask(engine, replay_server, session.id)
    reply = (await engine.sessions.open_session(session.id)).conversation.path()[-1]
    position = next(i for i, s in enumerate(reply.sources) if PDF_ANSWER in s.text)
    await engine.knowledge.set_pinned(session.id, reply.id, position, True)
    keys = await engine.knowledge.set_excluded(session.id, reply.id, position, True)
    assert len(keys) == 1

    assert PDF_ANSWER not in await ask(engine, replay_server, session.id), "excluded wins over pinned"
    assert PDF_ANSWER in await ask(engine, replay_server, other.id), "only this chat leaves it out"
    stored = (await stored_path(tmp_path / "data", session.id))[1]
    assert PDF_ANSWER in stored.sources[position].text, "the reply still records what was sent"

    await engine.aclose()
    reopened = await open_engine(tmp_path / "data", replay_server)
    try:
        assert await reopened.knowledge.excluded(session.id) == keys
        assert PDF_ANSWER not in await ask(reopened, replay_server, session.id)
        await reopened.knowledge.set_excluded(session.id, reply.id, position, False)
        assert PDF_ANSWER in await ask(reopened, replay_server, session.id), "included again"
        with pytest.raises(KnowledgeError):
            await reopened.knowledge.set_excluded(session.id, reply.id, 99, True)
        with pytest.raises(MessageGoneError):
            await reopened.knowledge.set_excluded(session.id, "no-such-message", 0, True)
    finally:
        await reopened.aclose()
