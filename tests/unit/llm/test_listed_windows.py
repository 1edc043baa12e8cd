"""Context windows from an OpenAI-compatible server's model listing, as each kind of server
states them: a listing field (vLLM, OpenRouter), and llama.cpp's configured window from
``/props`` rather than the trained one its listing gives."""

from __future__ import annotations

import pytest
from tests.support import sse_streams as s
from tests.support.sse_server import ReplayServer

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.llm.factory import make_provider

pytestmark = pytest.mark.asyncio


def listing(*entries: dict[str, object]) -> s.ScriptedResponse:
    return s.json_response(200, {"object": "list", "data": list(entries)})


def llama_cpp_entry(model: str = "qwen2.5-0.5b-instruct-q4_k_m.gguf") -> dict[str, object]:
    return {
        "id": model,
        "object": "model",
        "created": 1763900000,
        "owned_by": "llamacpp",
        "meta": {"vocab_type": 2, "n_vocab": 151936, "n_ctx_train": 32768, "n_embd": 896},
    }


async def windows(server: ReplayServer) -> dict[str, int | None]:
    config = ProviderConfig("local", ProviderKind.OPENAI, base_url=server.openai_base_url)
    provider = make_provider(config, None, timeout=5)
    try:
        return {m.id: m.context_window for m in await provider.list_models()}
    finally:
        await provider.aclose()


async def test_a_listing_field_gives_the_window(replay_server: ReplayServer) -> None:
    replay_server.models_response = listing(
        {"id": "Qwen/Qwen2.5-7B-Instruct", "object": "model", "owned_by": "vllm", "max_model_len": 8192},
        {"id": "meta-llama/llama-3.1-8b", "object": "model", "context_length": 131072},
        {"id": "plain", "object": "model", "owned_by": "someone"},
    )
    assert await windows(replay_server) == {
        "Qwen/Qwen2.5-7B-Instruct": 8192,
        "meta-llama/llama-3.1-8b": 131072,
        "plain": None,
    }
    assert [r.path for r in replay_server.requests] == ["/v1/models"]  # no /props for others


async def test_llama_cpp_gives_the_window_it_was_started_with(replay_server: ReplayServer) -> None:
    replay_server.models_response = listing(llama_cpp_entry())
    replay_server.get_routes["/props"] = s.json_response(
        200,
        {
            "default_generation_settings": {"id": 0, "n_ctx": 512, "params": {"n_predict": -1}},
            "total_slots": 1,
            "model_path": "/models/qwen2.5-0.5b-instruct-q4_k_m.gguf",
        },
    )
    assert await windows(replay_server) == {"qwen2.5-0.5b-instruct-q4_k_m.gguf": 512}
    assert [r.path for r in replay_server.requests] == ["/v1/models", "/props"]


async def test_llama_cpp_without_props_falls_back_to_the_trained_window(replay_server: ReplayServer) -> None:
    replay_server.models_response = listing(llama_cpp_entry())
    assert await windows(replay_server) == {"qwen2.5-0.5b-instruct-q4_k_m.gguf": 32768}  # /props: 404
    replay_server.get_routes["/props"] = s.json_response(200, {"default_generation_settings": {"n_ctx": "x"}})
    assert await windows(replay_server) == {"qwen2.5-0.5b-instruct-q4_k_m.gguf": 32768}
