"""A stdio MCP server that prints its environment does not put Threadline's secrets in the log.

The real test server (``--print-env``) writes every variable to stderr at start, among
them values Threadline injected: one from the keychain, one read from Threadline's own
environment (``${VAR}``, what ``--env-from`` writes). The server's log file and the stderr
tail quoted when it fails to start show those values masked; a value the user marked
"not a secret" stays readable.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from tests.integration.tools.conftest import faulty_server
from tests.support.waiting import until

from threadline.engine.engine import Engine
from threadline.tools.mcp.config import McpServerConfig
from threadline.tools.mcp.state import ServerStatus
from threadline.tools.mcp.stderr import MASK

pytestmark = pytest.mark.asyncio

FROM_KEYCHAIN = "kc-secret-0123456789abcdef"
FROM_ENVIRONMENT = "env-secret-fedcba9876543210"
PUBLIC = "chatty-but-public"


def leaky(name: str, *extra: str) -> McpServerConfig:
    return replace(
        faulty_server(name, "--print-env", *extra),
        env={
            "ZZ_KEYCHAIN": FROM_KEYCHAIN,
            "ZZ_ENVIRONMENT": "${THREADLINE_TEST_INJECTED}",
            "ZZ_PUBLIC": PUBLIC,
        },
        public_env=("ZZ_PUBLIC",),
    )


def assert_masked(text: str) -> None:
    assert FROM_KEYCHAIN not in text and FROM_ENVIRONMENT not in text
    assert f"ZZ_KEYCHAIN={MASK}" in text and f"ZZ_ENVIRONMENT={MASK}" in text
    assert f"ZZ_PUBLIC={PUBLIC}" in text


async def test_injected_values_are_masked_in_the_server_log(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("THREADLINE_TEST_INJECTED", FROM_ENVIRONMENT)
    await engine.tool_servers.save_server(leaky("leaky"))
    assert (await engine.tool_servers.start("leaky")).status is ServerStatus.READY
    log = tmp_path / "data" / "logs" / "mcp-leaky.log"
    await until(lambda: "ZZ_PUBLIC=" in log.read_text(), "the environment in the log")
    assert_masked(log.read_text())
    await engine.tool_servers.stop("leaky")
    assert_masked(log.read_text())


@pytest.mark.expected_log_warnings("could not start")
async def test_injected_values_are_masked_in_the_error_of_a_server_that_cannot_start(
    engine: Engine, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("THREADLINE_TEST_INJECTED", FROM_ENVIRONMENT)
    await engine.tool_servers.save_server(leaky("broken", "--fail-start"))
    state = await engine.tool_servers.start("broken")
    assert state.status is ServerStatus.FAILED and "giving up" in state.error
    assert_masked(state.error)
    assert_masked((tmp_path / "data" / "logs" / "mcp-broken.log").read_text())
