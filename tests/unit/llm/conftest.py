"""Fixtures for the provider tests: the replay server and providers pointed at it."""

from __future__ import annotations

import sys
from pathlib import Path

_ROOT = str(Path(__file__).resolve().parents[3])
if _ROOT not in sys.path:  # so ``tests.support`` imports however pytest was started
    sys.path.insert(0, _ROOT)

from collections.abc import AsyncIterator  # noqa: E402

import pytest  # noqa: E402
import pytest_asyncio  # noqa: E402
from llm_helpers import ANTHROPIC, OPENAI, Api  # noqa: E402
from tests.support import fixtures as _fixtures  # noqa: E402
from tests.support.sse_server import ReplayServer  # noqa: E402

from threadline.llm.base import Provider  # noqa: E402

replay_server = _fixtures.replay_server
memory_keyring = _fixtures.memory_keyring
no_keyring = _fixtures.no_keyring


@pytest.fixture(params=[OPENAI, ANTHROPIC], ids=["openai", "anthropic"])
def api(request: pytest.FixtureRequest) -> Api:
    value: Api = request.param
    return value


@pytest_asyncio.fixture
async def provider(api: Api, replay_server: ReplayServer) -> AsyncIterator[Provider]:
    made = api.make(replay_server)
    yield made
    await made.aclose()
