"""Fixtures for the command-line tests: a keychain in memory, and a real Engine on a temp data dir
talking to the replay server (to set up or read what a `threadline` process stores)."""

from __future__ import annotations

import pytest
from tests.support.engines import engine, keychain_in_memory  # noqa: F401  (fixtures)
from tests.support.fixtures import replay_server  # noqa: F401  (fixture)
from tests.support.oauth_servers import oauth_server  # noqa: F401  (fixture)


@pytest.fixture(autouse=True)
def memory_keyring(keychain_in_memory: None) -> None:  # noqa: F811
    """Every test here gets a keychain in memory."""
