"""A tool result holding a lone surrogate: the round is stored, the surrogate as U+FFFD.

A file name that is not UTF-8 (``caf\\xe9.txt``, written by a Latin-1 system) comes
out of ``os.scandir`` with a lone surrogate (``caf\\udce9.txt``), so the real
``list_directory`` tool hands one over. The turn must go on and the store keep
everything but the character UTF-8 cannot encode.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from tests.integration.engine.helpers import stored_path
from tests.integration.tools.tool_turns import failure, run_turn, sent_tool_results
from tests.support.sse_server import ReplayServer, openai_text_stream, openai_tool_call_stream, sse_response

from threadline.core.config import AgentConfig, Approval, ApprovalRule
from threadline.core.messages import MessageKind
from threadline.engine.engine import Engine

pytestmark = [pytest.mark.asyncio, pytest.mark.expected_log_warnings("cannot be stored .* U\\+FFFD")]


async def test_a_tool_result_holding_a_lone_surrogate_is_stored(
    engine: Engine, replay_server: ReplayServer, tmp_path: Path
) -> None:
    folder = tmp_path / "files"
    folder.mkdir()
    descriptor = os.open(os.fsencode(folder) + b"/caf\xe9.txt", os.O_WRONLY | os.O_CREAT, 0o600)
    os.close(descriptor)
    await engine.agents.save_agent(
        AgentConfig(
            "default",
            "Default",
            enabled_tools=("list_directory",),
            allowed_folders=(str(folder),),
            approval_rules=(ApprovalRule("list_directory", Approval.ALLOW),),
        )
    )
    replay_server.enqueue(
        sse_response(
            openai_tool_call_stream(
                [("c1", "list_directory", {"path": str(folder)})], text_pieces=["Looking."]
            )
        ),
        sse_response(openai_text_stream(["Listed."])),
    )
    session = await engine.sessions.new_session()
    events = await run_turn(engine, session.id, "What is in the folder?")
    assert failure(events) is None

    path = await stored_path(engine.data_dir, session.id)
    assert [m.kind for m in path] == [
        MessageKind.PROMPT,
        MessageKind.TOOL_CALLS,
        MessageKind.TOOL_RESULTS,
        MessageKind.RESPONSE,
    ]
    (result,) = path[2].tool_results
    assert not result.is_error
    assert result.text == "caf\ufffd.txt\t0 bytes"
    assert path[3].text == "Listed."
    assert "caf\ufffd.txt" in sent_tool_results(replay_server, 1)["c1"][0]  # the model read it too
