"""Fixtures for engine tests: a real Engine on a temp data dir, talking to the replay server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from tests.support.fixtures import replay_server  # noqa: F401  (fixture)
from tests.support.sse_server import ReplayServer

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.engine.engine import Engine
from threadline.llm.retry import RetryPolicy

FAST_RETRIES = RetryPolicy(max_attempts=3, base_delay=0.01, max_delay=0.05)


@pytest.fixture(autouse=True)
def memory_keyring() -> None:
    import keyring
    from tests.support.memory_keyring import MemoryKeyring

    keyring.set_keyring(MemoryKeyring())


async def open_engine(
    data_dir: Path, server: ReplayServer, kind: ProviderKind = ProviderKind.OPENAI
) -> Engine:
    engine = await Engine.open(data_dir, retry_policy=FAST_RETRIES, provider_timeout=2.0)
    base_url = server.openai_base_url if kind is ProviderKind.OPENAI else server.anthropic_base_url
    model = "gpt-4o-mini" if kind is ProviderKind.OPENAI else "claude-replay"
    await engine.save_provider(
        ProviderConfig("replay", kind, base_url=base_url, default_model=model), "sk-test"
    )
    return engine


@pytest_asyncio.fixture
async def engine(tmp_path: Path, replay_server: ReplayServer) -> AsyncIterator[Engine]:  # noqa: F811
    engine = await open_engine(tmp_path / "data", replay_server)
    yield engine
    await engine.aclose()
