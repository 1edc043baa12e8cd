"""Both providers against the replay server: text, tool calls, usage, what is sent.

The official SDKs parse byte-exact streams from a real HTTP server on 127.0.0.1,
so these tests exercise the same code paths as a real service would.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from llm_helpers import (
    ANTHROPIC,
    OPENAI,
    PNG_1PX,
    Api,
    body_of,
    collect,
    image_request,
    simple_request,
    tool_round_request,
)
from tests.support import sse_streams as s
from tests.support.sse_server import ReplayServer

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.core.request import PLACEHOLDER_TOOL_NAME, ToolSpec
from threadline.llm.base import ChatParams, Provider
from threadline.llm.events import StreamFinished, TextDelta, ToolCallDelta, Usage
from threadline.llm.factory import make_provider

WEATHER = ToolSpec(
    "get_weather",
    "Current weather for a city",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)


@pytest.mark.asyncio
async def test_text_streams_in_order_with_usage_and_stop_reason(
    api: Api, provider: Provider, replay_server: ReplayServer
) -> None:
    pieces = ["Hel", "lo", ", wor", "ld", "!"]
    replay_server.enqueue(s.sse_response(api.text_stream(pieces, model=api.model), chunk_delay=0.001))

    got = await collect(provider.stream(simple_request(), ChatParams(api.model)))

    assert got.error is None
    assert [e.text for e in got.events if isinstance(e, TextDelta)] == pieces
    finished = got.finished
    assert finished.stop_reason == "end"
    assert finished.tool_calls == ()
    assert finished.model == api.model
    assert finished.request_id  # from the response header or the message id
    assert finished.usage is not None and finished.usage.input_tokens and finished.usage.output_tokens
    assert any(isinstance(e, Usage) for e in got.events[:-1])


@pytest.mark.asyncio
async def test_tool_calls_are_assembled_from_argument_deltas(
    api: Api, provider: Provider, replay_server: ReplayServer
) -> None:
    calls = [
        ("call_a1", "get_weather", {"city": "Paris", "units": "metric"}),
        ("call_b2", "get_time", {"timezone": "Europe/Paris"}),
    ]
    replay_server.enqueue(s.sse_response(api.tool_stream(calls, text_pieces=["Checking", "…"], piece_size=5)))

    got = await collect(provider.stream(simple_request("Weather?"), ChatParams(api.model), [WEATHER]))

    assert got.error is None
    assert got.text == "Checking…"
    deltas = got.tool_deltas
    assert len(deltas) > 6  # arguments really came in pieces
    firsts = [d for d in deltas if d.id]
    assert [(d.index, d.id, d.name) for d in firsts] == [
        (0, "call_a1", "get_weather"),
        (1, "call_b2", "get_time"),
    ]
    assert all(d.name == "" for d in deltas if not d.id)
    rebuilt = {i: "".join(d.arguments_delta for d in deltas if d.index == i) for i in (0, 1)}
    assert json.loads(rebuilt[0]) == calls[0][2]
    finished = got.finished
    assert finished.stop_reason == "tool_calls"
    assert [(c.id, c.name, c.parsed_arguments()) for c in finished.tool_calls] == [
        (cid, name, args) for cid, name, args in calls
    ]


@pytest.mark.asyncio
async def test_max_tokens_stop_reason_is_normalised(
    api: Api, provider: Provider, replay_server: ReplayServer
) -> None:
    if api is OPENAI:
        chunks = s.openai_text_stream(["cut"], finish_reason=api.length_reason)
    else:
        chunks = s.anthropic_text_stream(["cut"], stop_reason=api.length_reason)
    replay_server.enqueue(s.sse_response(chunks))
    got = await collect(provider.stream(simple_request(), ChatParams(api.model)))
    assert got.finished.stop_reason == "max_tokens"


@pytest.mark.asyncio
async def test_parameters_and_system_are_sent(
    api: Api, provider: Provider, replay_server: ReplayServer
) -> None:
    replay_server.enqueue(s.sse_response(api.text_stream(["ok"])))
    await collect(
        provider.stream(simple_request(system="Talk like a pirate."), ChatParams(api.model, 0.3, 321))
    )
    body = body_of(replay_server)
    assert body["model"] == api.model
    assert body["stream"] is True
    assert body["temperature"] == 0.3
    assert body["max_tokens"] == 321  # a local server: max_tokens, not max_completion_tokens
    if api is OPENAI:
        assert body["messages"][0] == {"role": "system", "content": "Talk like a pirate."}
        assert body["stream_options"] == {"include_usage": True}
    else:
        assert body["system"] == "Talk like a pirate."
        assert all(m["role"] != "system" for m in body["messages"])


@pytest.mark.asyncio
async def test_anthropic_max_tokens_has_a_default(replay_server: ReplayServer) -> None:
    provider = ANTHROPIC.make(replay_server)
    replay_server.enqueue(s.sse_response(s.anthropic_text_stream(["ok"])))
    await collect(provider.stream(simple_request(), ChatParams(ANTHROPIC.model)))
    await provider.aclose()
    assert body_of(replay_server)["max_tokens"] == 4096
    assert "temperature" not in body_of(replay_server)


@pytest.mark.asyncio
async def test_images_and_context_files_in_the_openai_wire_format(replay_server: ReplayServer) -> None:
    provider = OPENAI.make(replay_server)
    replay_server.enqueue(s.sse_response(s.openai_text_stream(["A dot."])))
    await collect(provider.stream(image_request(), ChatParams("gpt-4o")))
    await provider.aclose()
    (user,) = body_of(replay_server)["messages"]
    assert user["role"] == "user"
    assert user["content"] == [
        {"type": "text", "text": '<file name="notes.txt">\nremember the milk\n</file>'},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG_1PX}"}},
        {"type": "text", "text": "What is in this picture?"},
    ]


@pytest.mark.asyncio
async def test_images_and_context_files_in_the_anthropic_wire_format(replay_server: ReplayServer) -> None:
    provider = ANTHROPIC.make(replay_server)
    replay_server.enqueue(s.sse_response(s.anthropic_text_stream(["A dot."])))
    await collect(provider.stream(image_request(), ChatParams(ANTHROPIC.model)))
    await provider.aclose()
    (user,) = body_of(replay_server)["messages"]
    assert user["content"] == [
        {"type": "text", "text": '<file name="notes.txt">\nremember the milk\n</file>'},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG_1PX}},
        {"type": "text", "text": "What is in this picture?"},
    ]


@pytest.mark.asyncio
async def test_tool_results_go_back_as_openai_tool_messages(replay_server: ReplayServer) -> None:
    provider = OPENAI.make(replay_server)
    replay_server.enqueue(s.sse_response(s.openai_text_stream(["21 °C."])))
    await collect(provider.stream(tool_round_request(), ChatParams("gpt-4o"), [WEATHER]))
    await provider.aclose()
    messages = body_of(replay_server)["messages"]
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "tool", "tool", "user"]
    assistant = messages[2]
    assert assistant["content"] == "Let me check."
    assert assistant["tool_calls"] == [
        {
            "id": "call_1",
            "type": "function",
            "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
        },
        {
            "id": "call_2",
            "type": "function",
            "function": {"name": "read_file", "arguments": '{"path": "/etc/motd"}'},
        },
    ]
    assert messages[3] == {"role": "tool", "tool_call_id": "call_1", "content": '{"temp_c": 21}'}
    assert messages[4] == {"role": "tool", "tool_call_id": "call_2", "content": "Error: permission denied"}
    follow_up = messages[5]["content"]
    assert follow_up[0] == {"type": "text", "text": "Images returned by tool call call_2:"}
    assert follow_up[1]["type"] == "image_url"
    assert follow_up[-1] == {"type": "text", "text": "Also, thanks!"}


@pytest.mark.asyncio
async def test_tool_results_go_back_as_anthropic_tool_result_blocks(replay_server: ReplayServer) -> None:
    provider = ANTHROPIC.make(replay_server)
    replay_server.enqueue(s.sse_response(s.anthropic_text_stream(["21 °C."])))
    await collect(provider.stream(tool_round_request(), ChatParams(ANTHROPIC.model), [WEATHER]))
    await provider.aclose()
    body = body_of(replay_server)
    assert [m["role"] for m in body["messages"]] == ["user", "assistant", "user"]
    assert body["messages"][1]["content"] == [
        {"type": "text", "text": "Let me check."},
        {"type": "tool_use", "id": "call_1", "name": "get_weather", "input": {"city": "Paris"}},
        {"type": "tool_use", "id": "call_2", "name": "read_file", "input": {"path": "/etc/motd"}},
    ]
    results = body["messages"][2]["content"]
    assert results[0] == {
        "type": "tool_result",
        "tool_use_id": "call_1",
        "content": [{"type": "text", "text": '{"temp_c": 21}'}],
    }
    assert results[1]["tool_use_id"] == "call_2"
    assert results[1]["is_error"] is True
    assert results[1]["content"][0] == {"type": "text", "text": "permission denied"}
    assert results[1]["content"][1]["type"] == "image"
    assert results[2] == {"type": "text", "text": "Also, thanks!"}


@pytest.mark.asyncio
async def test_tools_and_the_placeholder_tool_are_offered(
    api: Api, provider: Provider, replay_server: ReplayServer
) -> None:
    from dataclasses import replace

    replay_server.enqueue(s.sse_response(api.text_stream(["ok"])), s.sse_response(api.text_stream(["ok"])))
    await collect(provider.stream(simple_request(), ChatParams(api.model)))
    assert "tools" not in body_of(replay_server)

    request = replace(simple_request(), needs_placeholder_tool=True)
    await collect(provider.stream(request, ChatParams(api.model), [WEATHER]))
    tools = body_of(replay_server)["tools"]
    if api is OPENAI:
        assert tools[0] == {
            "type": "function",
            "function": {
                "name": "get_weather",
                "description": WEATHER.description,
                "parameters": WEATHER.input_schema,
            },
        }
        names = [t["function"]["name"] for t in tools]
    else:
        assert tools[0] == {
            "name": "get_weather",
            "description": WEATHER.description,
            "input_schema": WEATHER.input_schema,
        }
        names = [t["name"] for t in tools]
    assert names == ["get_weather", PLACEHOLDER_TOOL_NAME]


@pytest.mark.asyncio
async def test_list_models(api: Api, provider: Provider, replay_server: ReplayServer) -> None:
    replay_server.models = ["model-b", "model-a"]
    models = await provider.list_models()
    assert sorted(m.id for m in models) == ["model-a", "model-b"]
    request = replay_server.requests[-1]
    assert (request.method, request.path) == ("GET", "/v1/models")
    assert request.is_anthropic == (api is ANTHROPIC)


@pytest.mark.asyncio
async def test_the_api_key_is_sent(api: Api, replay_server: ReplayServer) -> None:
    provider = make_provider(api.config(replay_server), "sk-secret-123", timeout=1)
    replay_server.enqueue(s.sse_response(api.text_stream(["ok"])))
    await collect(provider.stream(simple_request(), ChatParams(api.model)))
    await provider.aclose()
    headers = replay_server.last_request.headers
    assert "sk-secret-123" in (headers.get("authorization", "") + headers.get("x-api-key", ""))


@pytest.mark.asyncio
async def test_a_keyless_local_server_works(replay_server: ReplayServer) -> None:
    config = ProviderConfig("Ollama (local)", ProviderKind.OPENAI, base_url=replay_server.openai_base_url)
    provider = make_provider(config, None, timeout=1)
    replay_server.enqueue(s.sse_response(s.openai_text_stream(["hi"], model="llama3.2")))
    got = await collect(provider.stream(simple_request(), ChatParams("llama3.2")))
    await provider.aclose()
    assert got.error is None and got.text == "hi"


@pytest.mark.asyncio
async def test_eight_concurrent_streams_are_not_serialised(api: Api, replay_server: ReplayServer) -> None:
    provider = api.make(replay_server, timeout=5)
    for n in range(8):
        pieces = [f"s{n}-{i} " for i in range(20)]
        replay_server.enqueue(s.sse_response(api.text_stream(pieces), chunk_delay=0.01))

    async def one() -> str:
        return (await collect(provider.stream(simple_request(), ChatParams(api.model)))).text

    loop = asyncio.get_running_loop()
    started = loop.time()
    texts = await asyncio.gather(*(one() for _ in range(8)))
    elapsed = loop.time() - started
    await provider.aclose()
    assert sorted(t.split("-")[0] for t in texts) == [f"s{n}" for n in range(8)]
    assert all(t == "".join(f"{t.split('-')[0]}-{i} " for i in range(20)) for t in texts)
    assert replay_server.max_concurrent_streams == 8
    assert elapsed < 8 * 20 * 0.01  # serialised streams would take at least 1.6 s


@pytest.mark.asyncio
async def test_closing_the_stream_early_closes_the_response(
    api: Api, provider: Provider, replay_server: ReplayServer
) -> None:
    replay_server.enqueue(s.sse_response(api.text_stream([f"t{i} " for i in range(500)]), chunk_delay=0.005))
    stream = provider.stream(simple_request(), ChatParams(api.model))
    seen = 0
    async for event in stream:  # type: ignore[attr-defined]
        seen += isinstance(event, TextDelta)
        if seen == 3:
            break
    await stream.aclose()  # type: ignore[attr-defined]
    for _ in range(1500):  # the server notices the closed connection on its next write (up to 30 s)
        if replay_server.active_streams == 0:
            break
        await asyncio.sleep(0.02)
    assert replay_server.active_streams == 0


@pytest.mark.asyncio
async def test_cancelling_the_consumer_closes_the_response(
    api: Api, provider: Provider, replay_server: ReplayServer
) -> None:
    replay_server.enqueue(s.sse_response(api.text_stream([f"t{i} " for i in range(500)]), chunk_delay=0.005))
    first = asyncio.Event()

    async def consume() -> None:
        async for event in provider.stream(simple_request(), ChatParams(api.model)):
            if isinstance(event, TextDelta):
                first.set()

    task = asyncio.create_task(consume())
    await asyncio.wait_for(first.wait(), 30)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for _ in range(1500):  # the server sees the closed connection: a condition, up to 30 s
        if replay_server.active_streams == 0:
            break
        await asyncio.sleep(0.02)
    assert replay_server.active_streams == 0


@pytest.mark.asyncio
async def test_tool_call_delta_ids_only_on_the_first_delta(replay_server: ReplayServer) -> None:
    provider = OPENAI.make(replay_server)
    replay_server.enqueue(
        s.sse_response(s.openai_tool_call_stream([("call_z", "f", '{"a": "' + "x" * 40 + '"}')]))
    )
    got = await collect(provider.stream(simple_request(), ChatParams("m")))
    await provider.aclose()
    deltas = [e for e in got.events if isinstance(e, ToolCallDelta)]
    assert deltas[0].id == "call_z" and deltas[0].name == "f"
    assert all(d.id == "" and d.name == "" for d in deltas[1:])
    assert isinstance(got.events[-1], StreamFinished)
