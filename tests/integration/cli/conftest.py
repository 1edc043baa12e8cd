"""Fixtures for the command-line tests: a keychain in memory, and a real Engine on a temp data dir
talking to the replay server (to set up or read what a `threadline` process stores)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
from tests.support.engines import open_engine
from tests.support.fixtures import replay_server  # noqa: F401  (fixture)
from tests.support.sse_server import ReplayServer

from threadline.engine.engine import Engine


@pytest.fixture(autouse=True)
def memory_keyring() -> None:
    import keyring
    from tests.support.memory_keyring import MemoryKeyring

    keyring.set_keyring(MemoryKeyring())


@pytest_asyncio.fixture
async def engine(tmp_path: Path, replay_server: ReplayServer) -> AsyncIterator[Engine]:  # noqa: F811
    engine = await open_engine(tmp_path / "data", replay_server)
    yield engine
    await engine.aclose()
