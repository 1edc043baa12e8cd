"""The pure accumulators on recorded chunks, without HTTP.

OpenAI chunks are fed as the provider feeds them: decoded JSON, plain dicts.
Anthropic events are parsed by the SDK's own models, as its provider gets them.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from tests.support import sse_streams as s

from threadline.llm.accumulate import AnthropicAccumulator, OpenAIAccumulator
from threadline.llm.errors import MalformedStreamError
from threadline.llm.events import StreamEvent, StreamFinished, TextDelta, ToolCallDelta, Usage


def openai_chunks(chunks: list[bytes]) -> list[Any]:
    return [json.loads(data) for _, data in s.parse_sse(chunks) if data != "[DONE]"]


def anthropic_events(chunks: list[bytes]) -> list[Any]:
    from anthropic._models import construct_type
    from anthropic.types import RawMessageStreamEvent

    return [
        construct_type(type_=RawMessageStreamEvent, value=json.loads(data))
        for event, data in s.parse_sse(chunks)
        if event != "ping"  # the SDK drops pings before they reach us
    ]


def feed_all(accumulator: OpenAIAccumulator | AnthropicAccumulator, items: list[Any]) -> list[StreamEvent]:
    events: list[StreamEvent] = []
    for item in items:
        events.extend(accumulator.feed(item))
    events.append(accumulator.finish())
    return events


def text_of(events: list[StreamEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def test_openai_recorded_text() -> None:
    accumulator = OpenAIAccumulator(provider="OpenAI", model="gpt-4o-mini")
    events = feed_all(accumulator, openai_chunks(s.load_sse_fixture("openai_text.sse")))
    assert text_of(events) == "Hello there"
    assert events[-2] == Usage(9, 2)
    assert events[-1] == StreamFinished("end", (), "chatcmpl-123", "gpt-4o-mini", Usage(9, 2))


def test_openai_recorded_parallel_tool_calls() -> None:
    accumulator = OpenAIAccumulator(provider="OpenAI", model="gpt-4o")
    events = feed_all(accumulator, openai_chunks(s.load_sse_fixture("openai_parallel_tool_calls.sse")))
    finished = events[-1]
    assert isinstance(finished, StreamFinished)
    assert finished.stop_reason == "tool_calls"
    assert finished.usage is None  # this recording was made without include_usage
    assert [(c.id, c.name, c.parsed_arguments()) for c in finished.tool_calls] == [
        ("call_DdmO9pD3xa9XTPNJ32zg2hcA", "get_weather", {"location": "Paris"}),
        ("call_ABCf8n9sxBYkV2gUY5vK1mxJ", "get_time", {"timezone": "Europe/Paris"}),
    ]
    assert [(d.index, d.id) for d in events if isinstance(d, ToolCallDelta) and d.id] == [
        (0, "call_DdmO9pD3xa9XTPNJ32zg2hcA"),
        (1, "call_ABCf8n9sxBYkV2gUY5vK1mxJ"),
    ]


def test_ollama_style_whole_call_in_one_delta_with_stop_reason() -> None:
    accumulator = OpenAIAccumulator(provider="Ollama (local)", model="llama3.2")
    events = feed_all(accumulator, openai_chunks(s.load_sse_fixture("ollama_tool_call.sse")))
    finished = events[-1]
    assert isinstance(finished, StreamFinished)
    assert finished.stop_reason == "tool_calls"  # "stop" with calls still means the calls must run
    assert finished.tool_calls[0].parsed_arguments() == {"city": "Toronto"}


def test_anthropic_recorded_text() -> None:
    accumulator = AnthropicAccumulator(provider="Claude", model="claude")
    events = feed_all(accumulator, anthropic_events(s.load_sse_fixture("anthropic_text.sse")))
    assert text_of(events) == "Hello!"
    assert events[-1] == StreamFinished(
        "end", (), "msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY", "claude-sonnet-4-5-20250929", Usage(25, 15)
    )


def test_anthropic_recorded_tool_use() -> None:
    accumulator = AnthropicAccumulator(provider="Claude", model="claude")
    events = feed_all(accumulator, anthropic_events(s.load_sse_fixture("anthropic_tool_use.sse")))
    assert text_of(events) == "Okay, let's check the weather for San Francisco, CA:"
    finished = events[-1]
    assert isinstance(finished, StreamFinished)
    assert finished.stop_reason == "tool_calls"
    (call,) = finished.tool_calls
    assert (call.id, call.name) == ("toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather")
    assert call.parsed_arguments() == {"location": "San Francisco, CA", "unit": "fahrenheit"}
    assert finished.usage == Usage(472, 89)
    deltas = [e for e in events if isinstance(e, ToolCallDelta)]
    assert deltas[0] == ToolCallDelta(0, "toolu_01T1x1fJ34qAmk2tNTrN7Up6", "get_weather", "")
    assert "".join(d.arguments_delta for d in deltas) == call.arguments


def test_tool_without_arguments_gets_an_empty_object() -> None:
    chunks = s.anthropic_tool_use_stream([("toolu_1", "list_files", "")])
    accumulator = AnthropicAccumulator(provider="Claude", model="claude")
    finished = feed_all(accumulator, anthropic_events(chunks))[-1]
    assert isinstance(finished, StreamFinished)
    assert finished.tool_calls[0].arguments == "{}"


@pytest.mark.parametrize("broken", ['{"city": "Par', '{"city": }', "[1, 2]"])
def test_invalid_tool_arguments_are_malformed(broken: str) -> None:
    accumulator = OpenAIAccumulator(provider="OpenAI", model="m")
    with pytest.raises(MalformedStreamError) as caught:
        feed_all(accumulator, openai_chunks(s.openai_tool_call_stream([("c", "get_weather", broken)])))
    assert "get_weather" in caught.value.user_message


def test_truncated_arguments_at_max_tokens_say_so() -> None:
    chunks = s.anthropic_tool_use_stream(
        [("t", "write_file", '{"path": "a.txt", "text": "lo')], stop_reason="max_tokens"
    )
    accumulator = AnthropicAccumulator(provider="Claude", model="claude")
    with pytest.raises(MalformedStreamError) as caught:
        feed_all(accumulator, anthropic_events(chunks))
    assert "max tokens" in caught.value.user_message


def test_a_stream_without_finish_is_malformed() -> None:
    accumulator = OpenAIAccumulator(provider="OpenAI", model="m")
    with pytest.raises(MalformedStreamError):
        feed_all(accumulator, openai_chunks(s.openai_text_stream(["a"], usage=None, done=False)[:-1]))
    anthropic = AnthropicAccumulator(provider="Claude", model="m")
    with pytest.raises(MalformedStreamError):
        feed_all(anthropic, anthropic_events(s.anthropic_text_stream(["a"], stop=False)))


def test_missing_index_and_id_are_tolerated() -> None:
    accumulator = OpenAIAccumulator(provider="LM Studio", model="m")
    call = {"index": None, "id": None, "function": {"name": "f", "arguments": '{"x": 1}'}}
    accumulator.feed(
        {
            "id": "c1",
            "model": "m",
            "usage": None,
            "choices": [
                {"index": 0, "delta": {"content": None, "tool_calls": [call]}, "finish_reason": "tool_calls"}
            ],
        }
    )
    finished = accumulator.finish()
    assert finished.tool_calls[0].id == "call_0"
    assert finished.tool_calls[0].name == "f"


def test_the_usage_chunk_and_minimal_chunks() -> None:
    accumulator = OpenAIAccumulator(provider="vLLM", model="m")
    assert accumulator.feed({"choices": [{"delta": {"content": "Hi"}}]}) == [TextDelta("Hi")]
    assert accumulator.feed({"choices": [{"delta": {}, "finish_reason": "stop"}]}) == []
    assert accumulator.feed({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 1}}) == [
        Usage(3, 1)
    ]
    assert accumulator.feed({}) == []  # nothing in it: ignored
    finished = accumulator.finish()
    assert finished == StreamFinished("end", (), "", "m", Usage(3, 1))


def test_other_choices_are_ignored() -> None:
    accumulator = OpenAIAccumulator(provider="OpenAI", model="m")
    events = accumulator.feed(
        {"choices": [{"index": 1, "delta": {"content": "no"}}, {"index": 0, "delta": {"content": "yes"}}]}
    )
    assert events == [TextDelta("yes")]


@pytest.mark.parametrize(
    "chunk",
    [
        {"choices": {"index": 0}},  # an object where a list belongs
        {"choices": ["text"]},
        {"choices": [{"delta": "text"}]},
        {"choices": [{"delta": {"content": 42}}]},
        {"choices": [{"delta": {"tool_calls": [{"index": "first"}]}}]},
        {"choices": [{"delta": {"tool_calls": [{"function": {"arguments": {"x": 1}}}]}}]},
        {"choices": [], "usage": [1, 2]},
    ],
)
def test_a_chunk_of_the_wrong_shape_is_malformed(chunk: dict[str, Any]) -> None:
    accumulator = OpenAIAccumulator(provider="OpenAI", model="m")
    with pytest.raises(MalformedStreamError) as caught:
        accumulator.feed(chunk)
    assert "chat-completions shape" in caught.value.user_message
