"""`threadline memory …` and a memory proposal during `threadline ask`: the real commands, in
their own processes (docs/memory.md).

On a terminal (a pty here) the proposal is asked and answered; without one it is declined with
a line saying how to save it by hand, also with ``--yes`` (which allows tools, not memories).
"""

from __future__ import annotations

import asyncio
import json
import os
import pty
import subprocess
import sys
from pathlib import Path

from tests.integration.cli.test_cli_ask import add_replay_provider
from tests.support.cli_process import ENV, threadline
from tests.support.sse_server import ReplayServer, openai_text_stream, openai_tool_call_stream, sse_response

from threadline.core.config import AgentConfig
from threadline.core.memory import MEMORY_HEADING
from threadline.engine.engine import Engine

PROPOSED = "Uses PostgreSQL 16"


def test_add_list_and_remove(tmp_path: Path) -> None:
    data = tmp_path / "data"
    made = threadline(data, "agent", "add", "Reviewer")
    assert made.returncode == 0, made.stderr
    assert "No saved memories." in threadline(data, "memory", "list").stdout
    added = threadline(data, "memory", "add", "Likes short answers")
    assert added.returncode == 0, added.stderr
    assert "(all chats)" in added.stdout
    scoped = threadline(data, "memory", "add", "Reviews in British English", "--agent", "Reviewer")
    assert scoped.returncode == 0, scoped.stderr
    assert "(agent Reviewer)" in scoped.stdout

    listed = json.loads(threadline(data, "memory", "list", "--json").stdout)
    assert [(m["text"], m["scope"], m["target_name"]) for m in listed] == [
        ("Likes short answers", "global", ""),
        ("Reviews in British English", "agent", "Reviewer"),
    ]
    plain = threadline(data, "memory", "list").stdout.splitlines()
    assert plain[0].startswith(listed[0]["id"] + "\tall chats\t") and plain[0].endswith(
        "\tLikes short answers"
    )

    removed = threadline(data, "memory", "rm", listed[0]["id"][:8])
    assert removed.returncode == 0 and "Deleted memory" in removed.stdout
    assert [m["text"] for m in json.loads(threadline(data, "memory", "list", "--json").stdout)] == [
        "Reviews in British English"
    ]


def test_refusals_are_one_line(tmp_path: Path) -> None:
    data = tmp_path / "data"
    empty = threadline(data, "memory", "add", "   ")
    assert (empty.returncode, empty.stderr.strip()) == (1, "threadline: A memory needs some text.")
    nowhere = threadline(data, "memory", "add", "x", "--project", "Nope")
    assert (nowhere.returncode, nowhere.stderr.strip()) == (1, "threadline: no project named 'Nope'")
    missing = threadline(data, "memory", "rm", "abcdef")
    assert missing.returncode == 1 and "no memory has the id 'abcdef'" in missing.stderr


def enable_proposals(data: Path, server: ReplayServer) -> None:
    add_replay_provider(data, server)

    async def save() -> None:
        engine = await Engine.open(data)
        try:
            default = await engine.agents.get_agent()
            await engine.agents.save_agent(
                AgentConfig(
                    default.id,
                    default.name,
                    provider="replay",
                    model="gpt-4o-mini",
                    enabled_tools=("propose_memory",),
                )
            )
        finally:
            await engine.aclose()

    asyncio.run(save())


def propose(server: ReplayServer) -> None:
    server.enqueue(
        sse_response(openai_tool_call_stream([("m1", "propose_memory", {"text": PROPOSED})])),
        sse_response(openai_text_stream(["Noted."])),
    )


def sent_result(server: ReplayServer) -> str:
    body = server.stream_requests()[-1].body
    return next(str(m["content"]) for m in body["messages"] if m.get("role") == "tool")


def memories(data: Path) -> list[str]:
    return [m["text"] for m in json.loads(threadline(data, "memory", "list", "--json").stdout)]


def test_without_a_terminal_a_proposal_is_declined_even_with_yes(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    data = tmp_path / "data"
    enable_proposals(data, replay_server)
    propose(replay_server)
    asked = subprocess.run(
        [sys.executable, "-m", "threadline", "--data-dir", str(data), "ask", "--yes", "I use PostgreSQL 16"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=ENV,
        timeout=60,
    )
    assert asked.returncode == 0, asked.stderr
    assert "not saved, no terminal to answer on" in asked.stderr
    assert "threadline memory add 'Uses PostgreSQL 16'" in asked.stderr
    assert "not saved" in sent_result(replay_server)
    assert memories(data) == []


def ask_on_a_terminal(data: Path, prompt: str, answers: str) -> subprocess.CompletedProcess[str]:
    """``threadline ask PROMPT`` with a pty as standard input, ``answers`` typed ahead."""
    main, child = pty.openpty()
    try:
        os.write(main, answers.encode())
        return subprocess.run(
            [sys.executable, "-m", "threadline", "--data-dir", str(data), "ask", prompt],
            stdin=child,
            capture_output=True,
            text=True,
            env=ENV,
            timeout=60,
        )
    finally:
        os.close(child)
        os.close(main)


def test_on_a_terminal_a_proposal_is_asked_and_an_edit_is_saved(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    data = tmp_path / "data"
    enable_proposals(data, replay_server)
    propose(replay_server)
    asked = ask_on_a_terminal(data, "I use PostgreSQL 17 at work", "e\nUses PostgreSQL 17 at work\n")
    assert asked.returncode == 0, asked.stderr
    assert f"The assistant suggests remembering: “{PROPOSED}”" in asked.stderr
    assert "edited it and accepted" in sent_result(replay_server)
    assert memories(data) == ["Uses PostgreSQL 17 at work"]

    replay_server.enqueue(sse_response(openai_text_stream(["Hello."])))
    again = threadline(data, "ask", "Which database?")
    assert again.returncode == 0, again.stderr
    system = replay_server.stream_requests()[-1].body["messages"][0]["content"]
    assert MEMORY_HEADING in system and "- Uses PostgreSQL 17 at work" in system


def test_on_a_terminal_no_declines(tmp_path: Path, replay_server: ReplayServer) -> None:
    data = tmp_path / "data"
    enable_proposals(data, replay_server)
    propose(replay_server)
    asked = ask_on_a_terminal(data, "I use PostgreSQL 16", "n\n")
    assert asked.returncode == 0, asked.stderr
    assert "declined" in sent_result(replay_server)
    assert memories(data) == []
