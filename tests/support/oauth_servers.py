"""``oauth_server``: an OAuth-protected MCP server on 127.0.0.1 (the SDK's own auth server pieces).

The server is tests/integration/tools/servers/oauth_server.py, run as a process of its own;
the fixture gives a function that starts one with extra arguments (``--token-seconds N``,
``--deny``, ``--client-id ID --client-secret S``) and returns its MCP URL. Every server
started is stopped after the test.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

OAUTH_SERVER = Path(__file__).parents[1] / "integration" / "tools" / "servers" / "oauth_server.py"

ServerFactory = Callable[..., str]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture
def oauth_server() -> Iterator[ServerFactory]:
    processes: list[subprocess.Popen[bytes]] = []

    def start(*args: str) -> str:
        port = _free_port()
        process = subprocess.Popen(
            [sys.executable, str(OAUTH_SERVER), "--port", str(port), *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        processes.append(process)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                time.sleep(0.1)
        return f"http://127.0.0.1:{port}/mcp"

    yield start
    for process in processes:
        process.terminate()
        process.wait(10)
