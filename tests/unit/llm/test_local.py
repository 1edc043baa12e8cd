"""Local server detection against replay servers placed on chosen ports."""

from __future__ import annotations

import asyncio
import socket

import pytest
from tests.support import sse_streams as s
from tests.support.sse_server import ReplayServer

from threadline.core.config import ProviderKind
from threadline.llm.local import DEFAULT_PORTS, detect_local_servers


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_default_ports() -> None:
    assert DEFAULT_PORTS == {"Ollama": 11434, "LM Studio": 1234, "llama.cpp": 8080, "vLLM": 8000}


@pytest.mark.asyncio
async def test_finds_a_server_on_its_port_and_ignores_the_rest() -> None:
    port = free_port()
    with ReplayServer(port=port, models=["llama3.2:latest", "qwen2.5"]) as server:
        ports = {"Ollama": port, "LM Studio": free_port(), "vLLM": free_port()}
        found = await detect_local_servers(timeout=0.5, ports=ports)
        assert server.requests[0].path == "/v1/models"
    assert len(found) == 1
    (config,) = found
    assert config.name == "Ollama (local)"
    assert config.kind is ProviderKind.OPENAI
    assert config.base_url == f"http://127.0.0.1:{port}/v1"
    assert config.default_model == "llama3.2:latest"


@pytest.mark.asyncio
async def test_probes_run_concurrently_with_a_short_timeout() -> None:
    slow = [ReplayServer(port=free_port()) for _ in range(3)]
    for server in slow:
        server.start()
        server.models_response = s.json_response(200, s.openai_models_body(["m"]), first_byte_delay=5)
    try:
        loop = asyncio.get_running_loop()
        started = loop.time()
        found = await detect_local_servers(timeout=0.3, ports={f"s{i}": x.port for i, x in enumerate(slow)})
        elapsed = loop.time() - started
    finally:
        for server in slow:
            server.stop()
    assert found == []
    assert elapsed < 1.0  # three 0.3 s probes at once, not one after another


@pytest.mark.asyncio
async def test_something_else_on_the_port_is_not_a_model_server() -> None:
    with ReplayServer(port=free_port()) as server:
        server.models_response = s.json_response(200, {"hello": "world"})
        assert await detect_local_servers(timeout=0.5, ports={"vLLM": server.port}) == []
        server.models_response = s.openai_auth_error()
        assert await detect_local_servers(timeout=0.5, ports={"vLLM": server.port}) == []
