"""``threadline ask`` with no terminal: an MCP server's question is declined with one line.

A real run: the replay provider asks for the ``asking`` server's ``book`` tool, the
server asks the user a form question (elicitation), and with standard input not a
terminal ``ask`` declines it with one clear line on standard error; the tool goes on
with the answer "decline" and the turn ends well.
"""

from __future__ import annotations

import sys
from pathlib import Path

from tests.integration.cli.test_cli_ask import add_replay_provider
from tests.support.cli_process import threadline
from tests.support.sse_server import ReplayServer, openai_text_stream, openai_tool_call_stream, sse_response

ASKING_SERVER = Path(__file__).parents[1] / "tools" / "servers" / "asking_server.py"


def test_ask_without_a_terminal_declines_a_servers_question_with_one_line(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    add_replay_provider(tmp_path, replay_server)
    added = threadline(tmp_path, "mcp", "add", "asking", "--", sys.executable, str(ASKING_SERVER))
    assert added.returncode == 0, added.stderr
    edited = threadline(tmp_path, "agent", "edit", "Default", "--tool", "asking/*")
    assert edited.returncode == 0, edited.stderr
    replay_server.enqueue(
        sse_response(openai_tool_call_stream([("call_1", "asking__book", {})], text_pieces=["Booking. "])),
        sse_response(openai_text_stream(["Not booked."])),
    )
    result = threadline(tmp_path, "ask", "--yes", "Book a table")
    assert result.returncode == 0, result.stderr
    declined = [line for line in result.stderr.splitlines() if "asked" in line]
    assert declined == [
        "threadline: MCP server asking asked “Who is the table for?”; declined (no terminal to answer on)"
    ]
    tool_message = next(m for m in replay_server.requests[1].body["messages"] if m["role"] == "tool")
    assert '"action": "decline"' in tool_message["content"]
