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
from pathlib import Path

import pytest
from tests.integration.engine.helpers import stored_path
from tests.integration.tools.conftest import FAULTY_SERVER
from tests.integration.tools.tool_turns import kill_mid_tool, sent_tool_results, text_reply, tool_call_reply
from tests.support.engines import open_engine
from tests.support.sse_server import ReplayServer

from threadline.core.config import ProviderKind
from threadline.core.messages import INTERRUPTED_RESULT_TEXT, MessageKind, MessageStatus
from threadline.llm.convert import TOOL_ERROR_PREFIX

pytestmark = pytest.mark.asyncio
OPENAI = ProviderKind.OPENAI


async def test_sigkill_while_an_mcp_tool_runs_leaves_it_interrupted_and_the_model_is_told_so(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    data_dir, marker = tmp_path / "data", tmp_path / "tool-started"
    replay_server.enqueue(tool_call_reply(OPENAI, [("m1", "faulty__wait", {"started": str(marker)})]))
    session_id = await kill_mid_tool(data_dir, replay_server.openai_base_url, marker, str(FAULTY_SERVER))

    path = await stored_path(data_dir, session_id)
    assert [m.kind for m in path] == [MessageKind.PROMPT, MessageKind.TOOL_CALLS, MessageKind.TOOL_RESULTS]
    assert path[2].status is MessageStatus.INTERRUPTED and not path[2].tool_results

    engine = await open_engine(data_dir, replay_server)
    try:
        await engine.sessions.open_session(session_id)
        stopped = engine.turns.interrupted_tools(session_id)
        assert stopped is not None and [c.id for c in stopped.calls] == ["m1"]
        await engine.turns.skip_interrupted_tools(session_id)
        assert engine.turns.interrupted_tools(session_id) is None

        replay_server.enqueue(text_reply(OPENAI, "Understood."))
        engine.turns.send(session_id, "go on without it")
        await asyncio.wait_for(engine.turns.wait_idle(session_id), 60)
        sent = sent_tool_results(replay_server, len(replay_server.requests) - 1)
        text, _flag = sent["m1"]  # OpenAI's format has no error flag: the prefix says it
        assert list(sent) == ["m1"] and text == TOOL_ERROR_PREFIX + INTERRUPTED_RESULT_TEXT
        assert "cancelled" not in text.lower()
    finally:
        await engine.aclose()
