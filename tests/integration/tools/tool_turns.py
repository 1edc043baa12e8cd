"""Helpers for tool tests: script a tool-call reply in either provider's format, read what was sent."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from tests.support.sse_server import (
    ReplayServer,
    ScriptedResponse,
    anthropic_text_stream,
    anthropic_tool_use_stream,
    openai_text_stream,
    openai_tool_call_stream,
    sse_response,
)

from threadline.core.config import ProviderKind
from threadline.engine.engine import Engine
from threadline.engine.events import ConversationEvent, TurnFailed


def tool_call_reply(kind: ProviderKind, calls: list[tuple[str, str, dict[str, Any]]]) -> ScriptedResponse:
    if kind is ProviderKind.OPENAI:
        return sse_response(openai_tool_call_stream(calls, text_pieces=["Let me check."]))
    return sse_response(anthropic_tool_use_stream(calls, text_pieces=["Let me check."]))


def text_reply(kind: ProviderKind, text: str) -> ScriptedResponse:
    if kind is ProviderKind.OPENAI:
        return sse_response(openai_text_stream([text]))
    return sse_response(anthropic_text_stream([text]))


def sent_tool_results(server: ReplayServer, index: int) -> dict[str, tuple[str, bool]]:
    """The tool results request ``index`` carried, by call id: (text, is_error), in either format."""
    body = server.requests[index].body
    found: dict[str, tuple[str, bool]] = {}
    for message in body["messages"]:
        if message.get("role") == "tool":  # OpenAI: one message per result, text only
            found[message["tool_call_id"]] = (str(message["content"]), False)
        content = message.get("content")
        if message.get("role") == "user" and isinstance(content, list):  # Anthropic: tool_result blocks
            for block in content:
                if block.get("type") == "tool_result":
                    inner = block.get("content")
                    text = (
                        "".join(b.get("text", "") for b in inner if isinstance(b, dict))
                        if isinstance(inner, list)
                        else str(inner)
                    )
                    found[block["tool_use_id"]] = (text, bool(block.get("is_error")))
    return found


def offered_tool_names(server: ReplayServer, index: int) -> list[str]:
    tools = server.requests[index].body.get("tools") or []
    return [t["function"]["name"] if "function" in t else t["name"] for t in tools]


def offered_tool_schema(server: ReplayServer, index: int, name: str) -> dict[str, Any]:
    for tool in server.requests[index].body.get("tools") or []:
        if "function" in tool and tool["function"]["name"] == name:
            return dict(tool["function"]["parameters"])
        if tool.get("name") == name:
            return dict(tool["input_schema"])
    raise KeyError(name)


async def run_turn(
    engine: Engine, session_id: str, text: str, timeout: float = 60
) -> list[ConversationEvent]:
    live = await engine.sessions.open_session(session_id)
    events: list[ConversationEvent] = []
    unsubscribe = live.subscribe(events.append)
    try:
        engine.turns.send(session_id, text)
        await asyncio.wait_for(engine.turns.wait_idle(session_id), timeout)
    finally:
        unsubscribe()
    return events


def failure(events: list[ConversationEvent]) -> TurnFailed | None:
    return next((e for e in events if isinstance(e, TurnFailed)), None)


def as_json(text: str) -> Any:
    return json.loads(text)


CRASH_SCRIPT = Path(__file__).parent / "crash_during_tool.py"


async def kill_mid_tool(
    data_dir: Path, base_url: str, marker: Path, *mcp_server: str, kill_server: bool = True
) -> str:
    """Run ``crash_during_tool.py`` in a child process, SIGKILL it once its tool runs; its session id.

    The marker file appears when the tool has started (the condition waited on). An MCP
    server the child started writes its pid there and is killed too, rather than left
    to notice its closed stdin (unless ``kill_server`` is false: the test watches it end).
    """
    env = {
        **os.environ,
        "THREADLINE_TEST_KEY": "sk-test",
        "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
    }
    process = subprocess.Popen(  # noqa: ASYNC220  (the process must outlive awaits we control)
        [sys.executable, str(CRASH_SCRIPT), str(data_dir), base_url, str(marker), *mcp_server],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    server_pid = 0
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            if process.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(
                    f"the tool never started: {process.stderr.read() if process.stderr else ''}"
                )
            await asyncio.sleep(0.05)
        text = marker.read_text()
        server_pid = int(text) if mcp_server and text.isdigit() else 0
        os.kill(process.pid, signal.SIGKILL)
        process.wait(10)
        assert process.stdout is not None
        return process.stdout.readline().strip()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(10)
        if server_pid and kill_server:
            with contextlib.suppress(ProcessLookupError):
                os.kill(server_pid, signal.SIGKILL)
        for stream in (process.stdout, process.stderr):
            if stream is not None:
                stream.close()
