"""A real Engine on a temporary data dir, pointed at the replay server (engine, tool and CLI tests)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from tests.support.sse_server import ReplayServer

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.engine.engine import Engine
from threadline.llm.retry import RetryPolicy

FAST_RETRIES = RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.05)
"""Three attempts, milliseconds apart: retries are exercised without slowing the suite."""

REPLAY_MODELS = {ProviderKind.OPENAI: "gpt-4o-mini", ProviderKind.ANTHROPIC: "claude-replay"}
"""Made-up Anthropic name: the SDK warns about deprecated real ones."""


async def open_engine(
    data_dir: Path,
    server: ReplayServer,
    kind: ProviderKind = ProviderKind.OPENAI,
    *,
    provider_timeout: float = 2.0,
) -> Engine:
    """An engine with one provider, "replay", talking to ``server`` in ``kind``'s format."""
    engine = await Engine.open(data_dir, retry_policy=FAST_RETRIES, provider_timeout=provider_timeout)
    base_url = server.openai_base_url if kind is ProviderKind.OPENAI else server.anthropic_base_url
    config = ProviderConfig("replay", kind, base_url=base_url, default_model=REPLAY_MODELS[kind])
    await engine.providers.save_provider(config, "sk-test")
    return engine


@pytest.fixture
def keychain_in_memory() -> None:
    """A keychain in memory for every test of the folder whose conftest uses it (autouse there)."""
    import keyring
    from tests.support.memory_keyring import MemoryKeyring

    keyring.set_keyring(MemoryKeyring())


@pytest_asyncio.fixture
async def engine(tmp_path: Path, replay_server: ReplayServer) -> AsyncIterator[Engine]:
    """A real engine on ``tmp_path / "data"`` with the "replay" provider, closed after the test."""
    opened = await open_engine(tmp_path / "data", replay_server)
    yield opened
    await opened.aclose()
