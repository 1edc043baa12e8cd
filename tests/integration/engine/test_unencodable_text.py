"""A lone surrogate from a model's stream or an import file: stored as U+FFFD, never a failed turn.

JSON allows ``"\\ud800"`` and Python decodes it to a string UTF-8 cannot encode.
These run the real paths, on SQLite and PostgreSQL: a reply streamed over HTTP
from the replay server through a turn, and an import file read from disk.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.integration.cli.test_cli_ask import add_replay_provider, stored_sessions
from tests.support.backends import BACKENDS, empty_database
from tests.support.cli_process import threadline
from tests.support.engines import FAST_RETRIES
from tests.support.postgres import PostgresServer, postgres_server  # noqa: F401  (fixture)
from tests.support.sse_server import ReplayServer, openai_text_stream, sse_response

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.core.messages import MessageStatus
from threadline.engine.engine import Engine
from threadline.engine.events import TurnFailed
from threadline.engine.importer import import_file
from threadline.interchange.detect import read_file
from threadline.interchange.model import ImportedConversation
from threadline.store.repository import Store

REPAIRED = pytest.mark.expected_log_warnings("cannot be stored .* U\\+FFFD")
CHATGPT = Path(__file__).resolve().parents[2] / "fixtures" / "import" / "chatgpt_conversations.json"


@pytest.fixture(params=BACKENDS)
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    yield from empty_database(request, tmp_path / "threadline.db")


def stream_with_lone_surrogate() -> list[bytes]:
    """An OpenAI stream whose second piece is ``"\\ud800"`` escaped in the JSON, as a server sends it."""
    chunks = openai_text_stream(["Hel", "@LONE@", "lo"])
    return [chunk.replace(b"@LONE@", b"\\ud800") for chunk in chunks]


@pytest.mark.asyncio
@REPAIRED
async def test_a_streamed_lone_surrogate_is_stored_and_the_turn_completes(
    database_url: str, tmp_path: Path, replay_server: ReplayServer
) -> None:
    engine = await Engine.open(tmp_path / "data", database_url=database_url, retry_policy=FAST_RETRIES)
    try:
        config = ProviderConfig(
            "replay", ProviderKind.OPENAI, base_url=replay_server.openai_base_url, default_model="gpt-4o-mini"
        )
        await engine.providers.save_provider(config, "sk-test")
        session = await engine.sessions.new_session()
        live = await engine.sessions.open_session(session.id)
        events: list[object] = []
        live.subscribe(events.append)
        replay_server.enqueue(sse_response(stream_with_lone_surrogate(), chunk_delay=0.01))
        engine.turns.send(session.id, "Say hello")
        await asyncio.wait_for(engine.turns.wait_idle(session.id), 60)
        # the reply (the lone surrogate still in memory) goes back to the model in the next request
        replay_server.enqueue(sse_response(openai_text_stream(["Again."])))
        engine.turns.send(session.id, "Once more")
        await asyncio.wait_for(engine.turns.wait_idle(session.id), 60)
        assert not [e for e in events if isinstance(e, TurnFailed)]
        sent = replay_server.stream_requests()[-1].body["messages"]
        assert [m["content"] for m in sent if m["role"] == "assistant"] == ["Hel\ufffdlo"]
    finally:
        await engine.aclose()

    store = await Store.open(database_url)
    try:
        prompt, reply, _again, _answer = (await store.load_tree(session.id)).path()
    finally:
        await store.close()
    assert prompt.text == "Say hello"
    assert reply.text == "Hel\ufffdlo"
    assert reply.status is MessageStatus.COMPLETE


@pytest.mark.asyncio
@REPAIRED
async def test_an_import_file_holding_a_lone_surrogate_is_stored(database_url: str, tmp_path: Path) -> None:
    export = json.loads(CHATGPT.read_text(encoding="utf-8"))
    export[0]["title"] = "Sum \ud800 in Python"
    for node in export[0]["mapping"].values():
        message = node.get("message")
        if message and message["author"]["role"] == "user":
            message["content"]["parts"] = [part + " \udc00" for part in message["content"]["parts"]]
    path = tmp_path / "conversations.json"
    path.write_text(json.dumps(export), encoding="ascii")  # "\ud800" escaped, as in a real file

    store = await Store.open(database_url)
    try:
        report = await import_file(store, path)
        assert report.imported >= 1 and not [f for f in report.failed if "Sum" in str(f)]
        (conversation,) = [c for c in read_file(path) if isinstance(c, ImportedConversation)][:1]
        info = await store.get_session(conversation.session_id)
        assert info is not None and info.title == "Sum \ufffd in Python"
        texts = [m.text for m in await store.load_tree(conversation.session_id)]
    finally:
        await store.close()
    assert "What is 2+2? Use python. \ufffd" in texts


def test_ask_shows_and_stores_a_streamed_lone_surrogate(tmp_path: Path, replay_server: ReplayServer) -> None:
    add_replay_provider(tmp_path, replay_server)
    replay_server.enqueue(sse_response(stream_with_lone_surrogate()))
    result = threadline(tmp_path, "ask", "Say hello")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Hel\ufffdlo\n"
    assert "Traceback" not in result.stderr
    (path,) = stored_sessions(tmp_path)
    assert [m.text for m in path] == ["Say hello", "Hel\ufffdlo"]
