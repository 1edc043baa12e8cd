"""A real MCP server process, a real SIGKILL mid-call: after the restart the call is "interrupted".

The child process runs a turn whose tool is the test MCP server's ``wait`` (a real
server written with the ``mcp`` SDK, over stdio); once the server says the call runs,
the child is killed with SIGKILL. The reopened database must show the tool round
``interrupted`` (stored as running before the tool started), the engine must offer the
call for Run again / Skip, and after Skip the model must be told exactly that the call
was interrupted, never that the user cancelled it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.integration.engine.helpers import stored_path
from tests.integration.tools.conftest import FAULTY_SERVER
from tests.integration.tools.tool_turns import sent_tool_results, text_reply, tool_call_reply
from tests.support.engines import open_engine
from tests.support.sse_server import ReplayServer

from threadline.core.config import ProviderKind
from threadline.core.messages import INTERRUPTED_RESULT_TEXT, MessageKind, MessageStatus
from threadline.llm.convert import TOOL_ERROR_PREFIX

pytestmark = pytest.mark.asyncio
OPENAI = ProviderKind.OPENAI


async def until_exists(path: Path, process: subprocess.Popen[str], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not path.exists():
        if process.poll() is not None:
            raise AssertionError(
                f"the turn's process ended first: {process.stderr.read() if process.stderr else ''}"
            )
        if time.monotonic() > deadline:
            raise AssertionError(f"{path.name} did not appear within {timeout:g} s")
        await asyncio.sleep(0.05)


async def test_sigkill_while_an_mcp_tool_runs_leaves_it_interrupted_and_the_model_is_told_so(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    data_dir, marker = tmp_path / "data", tmp_path / "tool-started"
    replay_server.enqueue(tool_call_reply(OPENAI, [("m1", "faulty__wait", {"started": str(marker)})]))
    env = {
        **os.environ,
        "THREADLINE_TEST_KEY": "sk-test",
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
    }
    script = Path(__file__).parent / "crash_during_mcp_tool.py"
    process = subprocess.Popen(  # noqa: ASYNC220  (the process must outlive awaits we control)
        [sys.executable, str(script), str(data_dir), replay_server.openai_base_url, str(FAULTY_SERVER)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    server_pid = 0
    try:
        await until_exists(marker, process)
        server_pid = int(marker.read_text() or 0)  # the MCP server writes its pid when the call runs
        os.kill(process.pid, signal.SIGKILL)
        process.wait(10)
        assert process.stdout is not None
        session_id = process.stdout.readline().strip()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
        if server_pid:  # the orphaned server would notice its closed stdin; do not leave it to that
            with contextlib.suppress(ProcessLookupError):
                os.kill(server_pid, signal.SIGKILL)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()

    path = await stored_path(data_dir, session_id)
    assert [m.kind for m in path] == [MessageKind.PROMPT, MessageKind.TOOL_CALLS, MessageKind.TOOL_RESULTS]
    assert path[2].status is MessageStatus.INTERRUPTED and not path[2].tool_results

    engine = await open_engine(data_dir, replay_server)
    try:
        await engine.open_session(session_id)
        stopped = engine.interrupted_tools(session_id)
        assert stopped is not None and [c.id for c in stopped.calls] == ["m1"]
        await engine.skip_interrupted_tools(session_id)
        assert engine.interrupted_tools(session_id) is None

        replay_server.enqueue(text_reply(OPENAI, "Understood."))
        engine.send(session_id, "go on without it")
        await asyncio.wait_for(engine.wait_idle(session_id), 60)
        sent = sent_tool_results(replay_server, len(replay_server.requests) - 1)
        text, _flag = sent["m1"]  # OpenAI's format has no error flag: the prefix says it
        assert list(sent) == ["m1"] and text == TOOL_ERROR_PREFIX + INTERRUPTED_RESULT_TEXT
        assert "cancelled" not in text.lower()
    finally:
        await engine.aclose()
