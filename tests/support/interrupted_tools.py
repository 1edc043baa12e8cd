"""A chat left as a crash while a tool ran leaves it: the call stored, its round ``interrupted``.

Written straight into the store before the window opens, as the database looks after
a SIGKILL (``tests/integration/tools/test_tools_history_state.py`` makes one for real).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from threadline.core.config import AgentConfig
from threadline.core.messages import Message, MessageStatus, ToolCall

FOLDER_FILE = "notes-from-before-the-crash.txt"


async def seed_interrupted_round(engine: Any, folder: Path, tool: str = "list_directory") -> str:
    """A session whose last tool round (``list_directory`` of ``folder``) a crash interrupted.

    ``tool`` names another tool for the call (same arguments), e.g. one of a remote server.
    """
    (folder / FOLDER_FILE).write_text("kept\n")
    await engine.agents.save_agent(
        AgentConfig("default", "Default", enabled_tools=("list_directory",), allowed_folders=(str(folder),))
    )
    info = await engine.sessions.new_session("Cut short by a crash")
    prompt = Message.prompt("What is in my folder?")
    calls = Message.reply(
        parent_id=prompt.id,
        text="Let me look.",
        tool_calls=(ToolCall("call_1", tool, f'{{"path": "{folder}"}}'),),
        status=MessageStatus.COMPLETE,
    )
    answer = Message.tool_results_message((), parent_id=calls.id).copy(status=MessageStatus.INTERRUPTED)
    await engine.store.append_messages(info.id, [prompt, calls, answer])
    return str(info.id)
