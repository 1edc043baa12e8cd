"""A provider's timeouts and stream ends through the real engine, store and replay server.

The wait before the user hears anything is bounded by the provider's first-byte
timeout (retries included); each retry is announced with its count; an
OpenAI-style stream that ends with ``[DONE]`` but no finish reason completes.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

import pytest
import pytest_asyncio
from tests.integration.engine.helpers import failure, stored_path, turn
from tests.support.sse_server import ReplayServer, openai_server_error, openai_text_stream, sse_response

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.core.messages import MessageStatus
from threadline.engine.engine import Engine
from threadline.engine.events import RetryScheduled
from threadline.llm.retry import RetryPolicy

pytestmark = pytest.mark.asyncio

FIRST_BYTE = 0.3
MANY_RETRIES = RetryPolicy(max_attempts=10, base_delay=0.01, max_delay=0.02)
"""Ten quick attempts: without the time budget a silent server would cost ten first-byte waits."""


@pytest_asyncio.fixture
async def engine(tmp_path: Path, replay_server: ReplayServer) -> AsyncIterator[Engine]:
    """One provider, "slowpoke", whose first-byte timeout is 0.3 s (the app-wide bound stays 10 s)."""
    engine = await Engine.open(tmp_path / "data", retry_policy=MANY_RETRIES, provider_timeout=10.0)
    config = ProviderConfig(
        "slowpoke",
        ProviderKind.OPENAI,
        base_url=replay_server.openai_base_url,
        default_model="gpt-4o-mini",
        first_byte_timeout=FIRST_BYTE,
    )
    await engine.providers.save_provider(config, "sk-test")
    yield engine
    await engine.aclose()


def finish_free(chunks: list[bytes]) -> list[bytes]:
    """``chunks`` without the chunk that carries a ``finish_reason``."""

    def finishes(chunk: bytes) -> bool:
        data = chunk.removeprefix(b"data: ").strip()
        return data != b"[DONE]" and any(c.get("finish_reason") for c in json.loads(data)["choices"])

    return [c for c in chunks if not finishes(c)]


async def test_a_server_that_never_answers_fails_within_the_first_byte_budget(
    engine: Engine, replay_server: ReplayServer
) -> None:
    replay_server.default = sse_response(openai_text_stream(["never"]), first_byte_delay=30)
    session = await engine.sessions.new_session()
    loop = asyncio.get_running_loop()
    started = loop.time()
    events = await turn(engine, session.id, "Anyone there?")
    elapsed = loop.time() - started

    failed = failure(events)
    assert failed is not None and failed.error.kind == "timeout"
    # Two first-byte timeouts at most (0.6 s), not ten attempts (3 s and more); generous for a busy machine.
    assert elapsed < 2.5, elapsed
    assert len(replay_server.stream_requests()) <= 3
    message = failed.error.message
    assert message.startswith("slowpoke did not answer within ")
    attempts = len(replay_server.stream_requests())
    assert f"({attempts} attempts)" in message  # it says how often it tried, truly
    assert "“First reply within” for slowpoke in Settings → Providers" in message
    assert "threadline provider add slowpoke --timeout SECONDS" in message
    retries = [e for e in events if isinstance(e, RetryScheduled)]
    # The budget holds one more first-byte wait, not nine: the total announced is what can happen.
    assert [r.max_attempts for r in retries] == [attempts] * len(retries) and attempts == 2
    assert retries[0].describe().startswith("Retrying (2 of 2) in 1 s: slowpoke did not answer within 1 s")
    path = await stored_path(engine.data_dir, session.id)
    assert path[0].text == "Anyone there?"  # the prompt is kept for a retry


async def test_retries_are_announced_with_their_count_and_a_plain_reason(
    engine: Engine, replay_server: ReplayServer
) -> None:
    replay_server.enqueue(openai_server_error(503), sse_response(openai_text_stream(["Back."])))
    session = await engine.sessions.new_session()
    events = await turn(engine, session.id, "Hi")
    assert failure(events) is None
    (retry,) = [e for e in events if isinstance(e, RetryScheduled)]
    assert retry.describe() == "Retrying (2 of 10) in 1 s: slowpoke is overloaded right now."


async def test_done_without_a_finish_reason_completes_the_reply(
    engine: Engine, replay_server: ReplayServer
) -> None:
    chunks = finish_free(openai_text_stream(["Complete ", "text."], usage=None))
    replay_server.enqueue(sse_response(chunks))
    session = await engine.sessions.new_session()
    events = await turn(engine, session.id, "Say something")
    assert failure(events) is None
    reply = (await stored_path(engine.data_dir, session.id))[-1]
    assert reply.is_assistant and reply.text == "Complete text."
    assert reply.status is MessageStatus.COMPLETE
    assert reply.metadata is not None and reply.metadata.stop_reason == "end"


async def test_no_done_and_no_finish_reason_is_an_incomplete_reply(
    engine: Engine, replay_server: ReplayServer
) -> None:
    chunks = finish_free(openai_text_stream(["Cut ", "off"], usage=None, done=False))
    replay_server.enqueue(sse_response(chunks))
    session = await engine.sessions.new_session()
    events = await turn(engine, session.id, "Say something")
    failed = failure(events)
    assert failed is not None and "ended before the reply was finished" in failed.error.message
    reply = (await stored_path(engine.data_dir, session.id))[-1]
    assert reply.text == "Cut off" and reply.status is MessageStatus.FAILED


async def test_saved_timeouts_reach_the_next_client_and_one_client_is_made(engine: Engine) -> None:
    config = await engine.store.get_provider("slowpoke")
    assert config is not None
    first, second = await asyncio.gather(engine.hub.client(config), engine.hub.client(config))
    assert first is second  # two callers at once share one client (the other one is closed)
    assert first.timeouts.first_byte == FIRST_BYTE

    await engine.providers.save_provider(replace(config, first_byte_timeout=45.0, connect_timeout=2.0))
    saved = await engine.store.get_provider("slowpoke")
    assert saved is not None
    changed = await engine.hub.client(saved)
    assert changed is not first  # saving dropped the old client
    assert (changed.timeouts.connect, changed.timeouts.first_byte) == (2.0, 45.0)
