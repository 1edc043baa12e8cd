"""Fixtures for tool tests: a real Engine on a temp data dir, the replay server, MCP server records."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import pytest_asyncio
from tests.support.engines import open_engine
from tests.support.fixtures import replay_server  # noqa: F401  (fixture)
from tests.support.oauth_servers import oauth_server  # noqa: F401  (fixture)
from tests.support.sse_server import ReplayServer

from threadline.engine.engine import Engine
from threadline.tools.mcp.config import McpServerConfig

SERVERS = Path(__file__).parent / "servers"
FAULTY_SERVER = SERVERS / "faulty_server.py"
BIN = Path(sys.executable).parent


@pytest.fixture(autouse=True)
def memory_keyring() -> None:
    import keyring
    from tests.support.memory_keyring import MemoryKeyring

    keyring.set_keyring(MemoryKeyring())


@pytest_asyncio.fixture
async def engine(tmp_path: Path, replay_server: ReplayServer) -> AsyncIterator[Engine]:  # noqa: F811
    engine = await open_engine(tmp_path / "data", replay_server, provider_timeout=5.0)
    yield engine
    await engine.aclose()


def faulty_server(name: str = "faulty", *extra: str, call_timeout: float = 10.0) -> McpServerConfig:
    return McpServerConfig(
        name, command=sys.executable, args=(str(FAULTY_SERVER), *extra), call_timeout=call_timeout
    )


def time_server() -> McpServerConfig:
    return McpServerConfig("time", command=str(BIN / "mcp-server-time"), args=("--local-timezone", "UTC"))


def git_server(repository: Path) -> McpServerConfig:
    return McpServerConfig("git", command=str(BIN / "mcp-server-git"), args=("--repository", str(repository)))


@pytest.fixture
def git_repository(tmp_path: Path) -> Path:
    """A temporary git repository with one commit and one modified file."""
    repository = tmp_path / "repo"
    repository.mkdir()

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repository, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    git("config", "user.email", "test@example.com")
    git("config", "user.name", "Test")
    (repository / "README.md").write_text("# Threadline test\n")
    git("add", "README.md")
    git("commit", "-q", "-m", "Initial commit for the MCP test")
    (repository / "README.md").write_text("# Threadline test\nchanged\n")
    return repository


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def http_server() -> Iterator[str]:
    """The faulty server over streamable HTTP (requests need ``X-Test-Token: secret``); its URL."""
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, str(FAULTY_SERVER), "--http", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(10)
