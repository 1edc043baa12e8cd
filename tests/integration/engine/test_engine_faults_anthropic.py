"""Every fault of issue 3 through the engine, in the Anthropic format (the OpenAI ones are in
test_engine_turns.py): the right error, a message fit for a user, the prompt and any partial
text stored, and the session usable for the next turn."""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from tests.integration.engine.helpers import failure, stored_path, turn
from tests.support.engines import open_engine
from tests.support.sse_server import (
    ANTHROPIC_MALFORMED_EVENT,
    ReplayServer,
    ScriptedResponse,
    anthropic_auth_error,
    anthropic_context_length_error,
    anthropic_model_not_found,
    anthropic_overloaded,
    anthropic_rate_limited,
    anthropic_server_error,
    anthropic_stream_error_event,
    anthropic_text_stream,
    anthropic_tool_use_stream,
    sse_response,
)

from threadline.core.config import ProviderKind
from threadline.core.messages import MessageStatus
from threadline.engine.engine import Engine
from threadline.engine.events import ErrorAction, RetryScheduled

pytestmark = pytest.mark.asyncio


@pytest_asyncio.fixture
async def claude(tmp_path: Path, replay_server: ReplayServer) -> AsyncIterator[Engine]:
    engine = await open_engine(tmp_path / "data", replay_server, ProviderKind.ANTHROPIC)
    yield engine
    await engine.aclose()


def reply(*pieces: str, **options: float) -> ScriptedResponse:
    return sse_response(anthropic_text_stream(list(pieces), model="claude-replay"), **options)


def three(response: ScriptedResponse) -> list[ScriptedResponse]:
    """A transient fault on every attempt the retry policy makes (3 in these tests)."""
    return [dataclasses.replace(response) for _ in range(3)]


FAULTS: dict[str, tuple[list[ScriptedResponse], str, ErrorAction, str, bool]] = {
    # name: (responses, error kind, an offered action, partial text kept, retried first)
    "401": ([anthropic_auth_error()], "authentication", ErrorAction.ADD_KEY, "", False),
    "404 model": (
        [anthropic_model_not_found("claude-replay")],
        "model_not_found",
        ErrorAction.PICK_MODEL,
        "",
        False,
    ),
    "429 with Retry-After": (
        three(anthropic_rate_limited(retry_after=0)),
        "rate_limit",
        ErrorAction.RETRY,
        "",
        True,
    ),
    "500": (three(anthropic_server_error(500)), "server", ErrorAction.RETRY, "", True),
    "503": (three(anthropic_server_error(503)), "overloaded", ErrorAction.RETRY, "", True),
    "529 overloaded": (three(anthropic_overloaded()), "overloaded", ErrorAction.RETRY, "", True),
    "slow first byte": (
        three(sse_response(anthropic_text_stream(["late"]), first_byte_delay=3.0)),
        "timeout",
        ErrorAction.RETRY,
        "",
        True,
    ),
    "stall mid-stream": (
        [sse_response(anthropic_text_stream(["half ", "way"]), stall_after=4, stall_for=30)],
        "timeout",
        ErrorAction.RETRY,
        "half ",
        False,
    ),
    "disconnect mid-stream": (
        [sse_response(anthropic_text_stream(["cut ", "off"]), disconnect_after=5)],
        "",
        ErrorAction.RETRY,
        "cut off",
        False,
    ),
    "malformed event": (
        [sse_response([*anthropic_text_stream(["fine"], stop=False), ANTHROPIC_MALFORMED_EVENT])],
        "malformed_stream",
        ErrorAction.RETRY,
        "fine",
        False,
    ),
    "overloaded error event mid-stream": (
        [sse_response([*anthropic_text_stream(["so far"], stop=False), anthropic_stream_error_event()])],
        "overloaded",
        ErrorAction.RETRY,
        "so far",
        False,
    ),
    "truncated tool-call JSON": (
        [sse_response(anthropic_tool_use_stream([("toolu_1", "lookup", '{"q": "unfin')]))],
        "malformed_stream",
        ErrorAction.RETRY,
        "",
        False,
    ),
    "context length with nothing to compact": (
        [anthropic_context_length_error()],
        "context_overflow",
        ErrorAction.NEW_SESSION,
        "",
        False,
    ),
}


@pytest.mark.parametrize("fault", list(FAULTS))
async def test_anthropic_fault(fault: str, claude: Engine, replay_server: ReplayServer) -> None:
    responses, kind, action, partial, retried = FAULTS[fault]
    replay_server.enqueue(*responses)
    session = await claude.sessions.new_session()
    events = await turn(claude, session.id, "Explain looms")

    failed = failure(events)
    assert failed is not None, f"{fault}: no error reported"
    if kind:
        assert failed.error.kind == kind, failed.error
    assert action in failed.error.actions
    message = failed.error.message
    assert "Traceback" not in message and "anthropic." not in message and len(message) > 20
    assert any(isinstance(e, RetryScheduled) for e in events) is retried
    path = await stored_path(claude.data_dir, session.id)
    assert path[0].text == "Explain looms"
    assert path[-1].is_assistant and path[-1].status is MessageStatus.FAILED and path[-1].text == partial

    replay_server.enqueue(reply("Back ", "again."))
    events = await turn(claude, session.id, "Try once more")
    assert failure(events) is None
    path = await stored_path(claude.data_dir, session.id)
    assert path[-1].text == "Back again." and path[-1].status is MessageStatus.COMPLETE
    sent = replay_server.requests[-1].body["messages"]
    assert sent[-1]["role"] == "user" and "Try once more" in str(sent[-1]["content"])
    assert "Explain looms" in str(sent[0]["content"])  # the failed turn's prompt is still sent
