"""Fixtures for the web tests: loopback fakes of the search providers and a page server."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.engines import engine, keychain_in_memory  # noqa: F401  (fixtures)
from tests.support.fixtures import replay_server  # noqa: F401  (fixture)
from tests.support.web_servers import WebServer


@pytest.fixture(autouse=True)
def memory_keyring(keychain_in_memory: None) -> None:  # noqa: F811
    """Every test here gets a keychain in memory."""


@pytest.fixture
def web(tmp_path: Path) -> Iterator[WebServer]:
    (tmp_path / "pdf-source").mkdir()
    with WebServer(tmp_path / "pdf-source") as server:
        yield server


@pytest.fixture
def other_web(tmp_path: Path) -> Iterator[WebServer]:
    """A second origin (another port on 127.0.0.1)."""
    (tmp_path / "pdf-source-2").mkdir()
    with WebServer(tmp_path / "pdf-source-2") as server:
        yield server
