"""A SIGKILL of Threadline ends the processes its tools started, their children too.

A real engine process runs a turn whose tool is the real ``shell`` tool (a command
that leaves a background ``sleep`` and waits on another) or a real stdio MCP server
(which started a ``sleep`` child of its own); once the tool runs, the engine is
killed with SIGKILL. Every process of the tool must be gone (or a zombie nobody
reaps, which no longer runs) within a second: ``process_guard``'s watcher ends the
group when the engine's end of its channel closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import time
from pathlib import Path

import pytest
from tests.integration.tools.conftest import FAULTY_SERVER
from tests.integration.tools.tool_turns import kill_mid_tool, tool_call_reply
from tests.support.engines import open_engine
from tests.support.interrupted_tools import seed_interrupted_round
from tests.support.sse_server import ReplayServer

from threadline.core.config import ProviderKind
from threadline.engine.engine import Engine
from threadline.tools.mcp_config import McpServerConfig, Transport
from threadline.tools.mcp_state import ServerStatus

pytestmark = [
    pytest.mark.asyncio,
    pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads processes from /proc"),
]
OPENAI = ProviderKind.OPENAI
DEADLINE = 1.0
"""Seconds the processes may take to end after the engine's death."""


def running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie does not: it is dead, waiting for a parent that may never reap it)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def group_members(pgid: int) -> list[int]:
    """The running processes of process group ``pgid``."""
    members = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except (FileNotFoundError, ProcessLookupError):
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            members.append(int(entry.name))
    return members


async def survivors(pids: list[int], pgid: int) -> list[int]:
    """Poll until none of ``pids`` and no member of ``pgid`` runs, or ``DEADLINE`` passes.

    Returns those still running then, after killing them (a failing test leaves nothing behind).
    """
    deadline = time.monotonic() + DEADLINE
    while True:
        left = sorted({p for p in pids if running(p)} | set(group_members(pgid)))
        if not left or time.monotonic() > deadline:
            break
        await asyncio.sleep(0.02)
    for pid in left:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return left


async def test_sigkill_of_the_engine_ends_the_shell_command_and_its_children(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    data_dir, marker = tmp_path / "data", tmp_path / "tool-started"
    partial = shlex.quote(f"{marker}.part")
    command = f'sleep 100 & echo "$$ $!" > {partial} && mv {partial} {shlex.quote(str(marker))}; sleep 100'
    replay_server.enqueue(tool_call_reply(OPENAI, [("s1", "shell", {"command": command})]))
    session_id = await kill_mid_tool(data_dir, replay_server.openai_base_url, marker, "--shell")

    shell, background = (int(pid) for pid in marker.read_text().split())
    assert not await survivors([shell, background], shell), "the shell command outlived Threadline"

    engine = await open_engine(data_dir, replay_server)
    try:  # Run again is offered without a doubt: the command surely stopped
        await engine.sessions.open_session(session_id)
        stopped = engine.turns.interrupted_tools(session_id)
        assert stopped is not None and [c.id for c in stopped.calls] == ["s1"]
        assert engine.turns.interrupted_tools_unsure(session_id) == ()
    finally:
        await engine.aclose()


async def test_sigkill_of_the_engine_ends_the_stdio_mcp_server_and_its_children(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    data_dir, marker, child_file = tmp_path / "data", tmp_path / "tool-started", tmp_path / "child"
    replay_server.enqueue(tool_call_reply(OPENAI, [("m1", "faulty__wait", {"started": str(marker)})]))
    session_id = await kill_mid_tool(
        data_dir,
        replay_server.openai_base_url,
        marker,
        str(FAULTY_SERVER),
        "--child-file",
        str(child_file),
        kill_server=False,
    )

    server, child = int(marker.read_text()), int(child_file.read_text())
    assert not await survivors([server, child], server), "the MCP server outlived Threadline"

    engine = await open_engine(data_dir, replay_server)
    try:  # a stdio server's call surely stopped with it
        await engine.sessions.open_session(session_id)
        assert engine.turns.interrupted_tools(session_id) is not None
        assert engine.turns.interrupted_tools_unsure(session_id) == ()
    finally:
        await engine.aclose()


async def test_run_again_of_a_remote_servers_call_is_not_vouched_for(
    engine: Engine, tmp_path: Path, http_server: str
) -> None:
    """A remote (HTTP) server works on whatever happens to Threadline: the call may have gone on."""
    config = McpServerConfig(
        "remote", transport=Transport.HTTP, url=http_server, headers={"X-Test-Token": "secret"}
    )
    await engine.tool_servers.save_server(config)
    assert (await engine.tool_servers.start("remote")).status is ServerStatus.READY
    session_id = await seed_interrupted_round(engine, tmp_path, "remote__echo")
    await engine.sessions.open_session(session_id)
    assert engine.turns.interrupted_tools_unsure(session_id) == ("remote__echo",)
