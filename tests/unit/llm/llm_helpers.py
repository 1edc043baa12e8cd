"""Shared helpers of the provider tests (requests to send, stream collection, checks)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any

from tests.support import sse_streams as s
from tests.support.sse_server import ReplayServer

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.core.messages import ContextFile, ImageBlock, Role, ToolCall, ToolResult
from threadline.core.request import BuiltRequest, SentMessage
from threadline.llm.base import Provider
from threadline.llm.errors import ProviderError
from threadline.llm.events import StreamEvent, StreamFinished, TextDelta, ToolCallDelta
from threadline.llm.factory import make_provider

PNG_1PX = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="


def simple_request(text: str = "Hello?", system: str = "Be brief.") -> BuiltRequest:
    return BuiltRequest(system=system, messages=(SentMessage(Role.USER, text=text),), estimated_tokens=10)


def image_request() -> BuiltRequest:
    prompt = SentMessage(
        Role.USER,
        text="What is in this picture?",
        images=(ImageBlock("image/png", PNG_1PX, "dot.png"),),
        context=(ContextFile("notes.txt", "remember the milk"),),
    )
    return BuiltRequest(system="", messages=(prompt,), estimated_tokens=900)


def tool_round_request() -> BuiltRequest:
    """prompt → assistant with two calls → results (one failed, one with an image) + more text."""
    calls = (
        ToolCall("call_1", "get_weather", '{"city": "Paris"}'),
        ToolCall("call_2", "read_file", '{"path": "/etc/motd"}'),
    )
    results = (
        ToolResult("call_1", text='{"temp_c": 21}', tool_name="get_weather"),
        ToolResult(
            "call_2",
            text="permission denied",
            is_error=True,
            tool_name="read_file",
            images=(ImageBlock("image/png", PNG_1PX),),
        ),
    )
    return BuiltRequest(
        system="You are helpful.",
        messages=(
            SentMessage(Role.USER, text="Weather in Paris?"),
            SentMessage(Role.ASSISTANT, text="Let me check.", tool_calls=calls),
            SentMessage(Role.USER, text="Also, thanks!", tool_results=results),
        ),
        estimated_tokens=100,
    )


@dataclass
class Collected:
    events: list[StreamEvent] = field(default_factory=list)
    error: ProviderError | None = None

    @property
    def text(self) -> str:
        return "".join(e.text for e in self.events if isinstance(e, TextDelta))

    @property
    def tool_deltas(self) -> list[ToolCallDelta]:
        return [e for e in self.events if isinstance(e, ToolCallDelta)]

    @property
    def finished(self) -> StreamFinished:
        finals = [e for e in self.events if isinstance(e, StreamFinished)]
        assert len(finals) == 1, self.events
        assert self.events[-1] is finals[0]
        return finals[0]


async def collect(stream: AsyncIterator[StreamEvent]) -> Collected:
    """Every event, and the ProviderError that ended the stream if one did."""
    out = Collected()
    try:
        async with aclosing(stream):  # type: ignore[type-var]
            async for event in stream:
                out.events.append(event)
    except ProviderError as err:
        out.error = err
    return out


def assert_human(err: ProviderError, provider: str, *, model: str | None = None) -> None:
    """A message fit for a user: names the provider (and model), no traceback or SDK text."""
    message = err.user_message
    assert message == str(err)
    assert provider in message, message
    if model is not None:
        assert model in message, message
    for leak in ("Traceback", "Error code:", "{'", '{"', "httpx", "openai.", "anthropic.", "Exception"):
        assert leak not in message, (leak, message)
    assert message.rstrip().endswith((".", ")")), message
    assert 20 < len(message) < 400, message


TEST_TIMEOUT = 0.5
"""Read timeout of the providers under test: short, so timeout faults take half a second."""


@dataclass(frozen=True)
class Api:
    """One provider API as the fault tests see it: its builders and names."""

    kind: ProviderKind
    name: str
    model: str
    path: str
    text_stream: Callable[..., list[bytes]]
    tool_stream: Callable[..., list[bytes]]
    auth_error: Callable[[], s.ScriptedResponse]
    model_not_found: Callable[[str], s.ScriptedResponse]
    rate_limited: Callable[[float | None], s.ScriptedResponse]
    server_error: Callable[[int], s.ScriptedResponse]
    context_length: Callable[[], s.ScriptedResponse]
    malformed_event: bytes
    length_reason: str

    def config(self, server: ReplayServer, name: str | None = None) -> ProviderConfig:
        base = server.openai_base_url if self.kind is ProviderKind.OPENAI else server.anthropic_base_url
        return ProviderConfig(name or self.name, self.kind, base_url=base)

    def make(self, server: ReplayServer, timeout: float = TEST_TIMEOUT) -> Provider:
        return make_provider(self.config(server), "sk-test", timeout=timeout, connect_timeout=timeout)


OPENAI = Api(
    ProviderKind.OPENAI,
    "Local OpenAI",
    "gpt-4o-mini",
    "/v1/chat/completions",
    s.openai_text_stream,
    s.openai_tool_call_stream,
    s.openai_auth_error,
    s.openai_model_not_found,
    s.openai_rate_limited,
    s.openai_server_error,
    s.openai_context_length_error,
    s.OPENAI_MALFORMED_EVENT,
    "length",
)
ANTHROPIC = Api(
    ProviderKind.ANTHROPIC,
    "Claude",
    "claude-replay-1",
    "/v1/messages",
    s.anthropic_text_stream,
    s.anthropic_tool_use_stream,
    s.anthropic_auth_error,
    s.anthropic_model_not_found,
    s.anthropic_rate_limited,
    s.anthropic_server_error,
    s.anthropic_context_length_error,
    s.ANTHROPIC_MALFORMED_EVENT,
    "max_tokens",
)


def body_of(server: ReplayServer, index: int = -1) -> Any:
    return server.stream_requests()[index].body
