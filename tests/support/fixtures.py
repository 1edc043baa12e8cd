"""Pytest fixtures for the replay server; import them into a conftest::

from tests.support.fixtures import replay_server  # noqa: F401
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from tests.support.sse_server import ReplayServer


@pytest.fixture
def replay_server() -> Iterator[ReplayServer]:
    """A fresh replay server on a free port of 127.0.0.1, stopped after the test."""
    with ReplayServer() as server:
        yield server
