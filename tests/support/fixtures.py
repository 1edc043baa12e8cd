"""Pytest fixtures for the replay server and test keychains; import them into a conftest::

from tests.support.fixtures import memory_keyring, no_keyring, replay_server  # noqa: F401
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.support.memory_keyring import MemoryKeyring
from tests.support.sse_server import ReplayServer


@pytest.fixture
def replay_server() -> Iterator[ReplayServer]:
    """A fresh replay server on a free port of 127.0.0.1, stopped after the test."""
    with ReplayServer() as server:
        yield server


@pytest.fixture
def memory_keyring() -> Iterator[MemoryKeyring]:
    """An empty in-memory keychain for the test, the previous backend restored after."""
    import keyring

    previous = keyring.get_keyring()
    backend = MemoryKeyring()
    keyring.set_keyring(backend)
    yield backend
    keyring.set_keyring(previous)


@pytest.fixture
def no_keyring() -> Iterator[None]:
    """No usable keychain, as on a headless Linux (keyring's fail backend)."""
    import keyring
    from keyring.backends import fail

    previous = keyring.get_keyring()
    keyring.set_keyring(fail.Keyring())  # type: ignore[no-untyped-call]
    yield
    keyring.set_keyring(previous)
