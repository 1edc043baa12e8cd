"""Finding local model servers on their default ports (first run, docs/design.md §4).

Each candidate is probed with ``GET /v1/models`` at once, with a short timeout,
so detection costs at most ``timeout`` seconds per step (connect, then ask) however
many servers are absent.
A server counts when it answers 200 with an OpenAI-style model list; it is
offered as an OpenAI-compatible provider config whose default model is the
first one listed.

Ports are first tried with a bare TCP connect: on most machines nothing listens,
and then the HTTP client (httpx, several MB and tens of ms to import) is never
loaded at start (docs/design.md §5).
"""

from __future__ import annotations

import asyncio
import contextlib
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
    candidates = ports if ports is not None else DEFAULT_PORTS
    listening = await asyncio.gather(*(_listening(host, port, timeout) for port in candidates.values()))
    candidates = {name: port for (name, port), up in zip(candidates.items(), listening, strict=True) if up}
    if not candidates:
        return []
    httpx = httpx_module()
    async with httpx.AsyncClient(timeout=httpx.Timeout(timeout), trust_env=False) as client:
        found = await asyncio.gather(
            *(_probe(client, name, host, port) for name, port in candidates.items()),
        )
    return [config for config in found if config is not None]


async def _listening(host: str, port: int, wait: float) -> bool:
    try:
        _reader, writer = await asyncio.wait_for(asyncio.open_connection(host, port), wait)
    except (OSError, TimeoutError):
        return False
    writer.close()
    with contextlib.suppress(OSError):
        await writer.wait_closed()
    return True


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
