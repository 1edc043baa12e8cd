"""Finding local model servers on their default ports (first run, DESIGN.md §4).

Each candidate is probed with ``GET /v1/models`` at once, with a short timeout,
so detection costs at most ``timeout`` seconds however many servers are absent.
A server counts when it answers 200 with an OpenAI-style model list; it is
offered as an OpenAI-compatible provider config whose default model is the
first one listed.
"""

from __future__ import annotations

import asyncio
from typing import Any

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.llm._http import httpx_module

DEFAULT_PORTS: dict[str, int] = {
    "Ollama": 11434,
    "LM Studio": 1234,
    "llama.cpp": 8080,
    "vLLM": 8000,
}


async def detect_local_servers(
    host: str = "127.0.0.1",
    timeout: float = 0.5,  # noqa: ASYNC109 (a per-probe HTTP timeout, as the API promises)
    ports: dict[str, int] | None = None,
) -> list[ProviderConfig]:
    """Provider configs for the servers that answered, in the order of ``ports``."""
    httpx = httpx_module()

    candidates = ports if ports is not None else DEFAULT_PORTS
    async with httpx.AsyncClient(timeout=httpx.Timeout(timeout), trust_env=False) as client:
        found = await asyncio.gather(
            *(_probe(client, name, host, port) for name, port in candidates.items()),
        )
    return [config for config in found if config is not None]


async def _probe(client: Any, name: str, host: str, port: int) -> ProviderConfig | None:
    base_url = f"http://{host}:{port}/v1"
    try:
        response = await client.get(base_url + "/models")
        if response.status_code != 200:
            return None
        payload = response.json()
    except Exception:  # refused, timed out, not JSON: nothing usable there
        return None
    data = payload.get("data") if isinstance(payload, dict) else None
    if not isinstance(data, list):
        return None
    models = [m["id"] for m in data if isinstance(m, dict) and isinstance(m.get("id"), str)]
    return ProviderConfig(
        name=f"{name} (local)",
        kind=ProviderKind.OPENAI,
        base_url=base_url,
        default_model=models[0] if models else "",
    )
