"""`threadline ask` and `threadline provider` end to end, as separate processes.

These run the real command (``python -m threadline``) against the replay server,
so argument parsing, the engine, the store and the SDKs are all exercised the
way a script would use them. The keychain is the ``fail`` backend, as on a
headless Linux without a Secret Service.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.support.cli_process import ENV, threadline
from tests.support.sse_server import (
    ReplayServer,
    openai_auth_error,
    openai_text_stream,
    openai_tool_call_stream,
    sse_response,
)

from threadline.core.messages import MessageKind, MessageStatus
from threadline.engine.engine import DATABASE_FILENAME
from threadline.store.repository import Store


def ask_streaming(
    data_dir: Path, prompt: str, printed_at_least: int
) -> tuple[subprocess.Popen[bytes], bytes]:
    """Start ``threadline ask PROMPT``; return it once it printed ``printed_at_least`` bytes (or 60 s)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "threadline", "--data-dir", str(data_dir), "ask", prompt],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=ENV,
    )
    assert process.stdout is not None
    printed = b""
    deadline = time.monotonic() + 60
    while len(printed) < printed_at_least and time.monotonic() < deadline:
        printed += os.read(process.stdout.fileno(), 4096)
    return process, printed


def add_replay_provider(data_dir: Path, server: ReplayServer) -> None:
    result = threadline(
        data_dir,
        "provider",
        "add",
        "replay",
        "--kind",
        "openai",
        "--base-url",
        server.openai_base_url,
        "--model",
        "gpt-4o-mini",
    )
    assert result.returncode == 0, result.stderr


def stored_sessions(data_dir: Path) -> list[list]:  # type: ignore[type-arg]
    async def read() -> list[list]:  # type: ignore[type-arg]
        store = await Store.open(Store.sqlite_url(data_dir / DATABASE_FILENAME))
        try:
            return [(await store.load_tree(s.id)).path() for s in await store.list_sessions()]
        finally:
            await store.close()

    return asyncio.run(read())


def test_version_and_help() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "threadline", "--version"], capture_output=True, text=True, env=ENV
    )
    assert result.returncode == 0 and result.stdout.startswith("threadline 0.")


def test_provider_add_list_remove_without_keychain(tmp_path: Path, replay_server: ReplayServer) -> None:
    add_replay_provider(tmp_path, replay_server)
    listed = threadline(tmp_path, "provider", "list")
    assert listed.returncode == 0 and "replay\topenai" in listed.stdout and "key: none" in listed.stdout

    refused = threadline(
        tmp_path, "provider", "add", "cloud", "--kind", "anthropic", "--api-key-stdin", stdin="sk-secret\n"
    )
    assert refused.returncode == 1
    assert "keychain" in refused.stderr and "--api-key-env" in refused.stderr
    assert "sk-secret" not in refused.stderr + refused.stdout
    assert "cloud" not in threadline(tmp_path, "provider", "list").stdout  # nothing half-saved

    with_env = threadline(
        tmp_path, "provider", "add", "cloud", "--kind", "anthropic", "--api-key-env", "MY_KEY"
    )
    assert with_env.returncode == 0
    assert "key: $MY_KEY" in threadline(tmp_path, "provider", "list").stdout
    assert threadline(tmp_path, "provider", "remove", "cloud").returncode == 0
    assert "cloud" not in threadline(tmp_path, "provider", "list").stdout
    missing = threadline(tmp_path, "provider", "remove", "nope")
    assert missing.returncode == 1 and missing.stderr.count("\n") == 1


def test_provider_models_lists_the_servers_models(tmp_path: Path, replay_server: ReplayServer) -> None:
    add_replay_provider(tmp_path, replay_server)
    result = threadline(tmp_path, "provider", "models", "replay")
    assert result.returncode == 0 and sorted(result.stdout.split()) == ["claude-sonnet-4-5", "gpt-4o-mini"]


def test_ask_streams_reply_and_continues_a_session(tmp_path: Path, replay_server: ReplayServer) -> None:
    add_replay_provider(tmp_path, replay_server)
    replay_server.enqueue(sse_response(openai_text_stream(["Paris ", "is the capital."])))
    first = threadline(tmp_path, "ask", "What is the capital of France?")
    assert first.returncode == 0, first.stderr
    assert first.stdout == "Paris is the capital.\n"
    session_id = first.stderr.split("session ")[1].split()[0]

    replay_server.enqueue(sse_response(openai_text_stream(["About 2 million."])))
    second = threadline(tmp_path, "ask", "--session", session_id, stdin="And its population?\n")
    assert second.returncode == 0 and second.stdout == "About 2 million.\n"
    sent = replay_server.requests[-1].body["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[-1]["content"] == "And its population?\n"
    (path,) = stored_sessions(tmp_path)
    assert [m.text for m in path][1] == "Paris is the capital."


def test_ask_with_a_tool_call_round(tmp_path: Path, replay_server: ReplayServer) -> None:
    """The model asks for a tool that is not available: the error result goes back, the turn ends well."""
    add_replay_provider(tmp_path, replay_server)
    replay_server.enqueue(
        sse_response(
            openai_tool_call_stream([("call_1", "weather", {"city": "Oslo"})], text_pieces=["Checking. "])
        ),
        sse_response(openai_text_stream(["I cannot check the weather here."])),
    )
    result = threadline(tmp_path, "ask", "--yes", "Weather in Oslo?")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Checking. \nI cannot check the weather here.\n"
    assert "[tool weather: error]" in result.stderr
    tool_message = next(m for m in replay_server.requests[1].body["messages"] if m["role"] == "tool")
    assert tool_message["tool_call_id"] == "call_1" and "not available" in tool_message["content"]
    (path,) = stored_sessions(tmp_path)
    assert [m.kind for m in path] == [
        MessageKind.PROMPT,
        MessageKind.TOOL_CALLS,
        MessageKind.TOOL_RESULTS,
        MessageKind.RESPONSE,
    ]


def test_ask_failure_is_one_line_and_non_zero(tmp_path: Path, replay_server: ReplayServer) -> None:
    add_replay_provider(tmp_path, replay_server)
    replay_server.enqueue(openai_auth_error())
    result = threadline(tmp_path, "ask", "hello")
    assert result.returncode == 1
    error_lines = [line for line in result.stderr.splitlines() if line.startswith("threadline:")]
    assert len(error_lines) == 1 and "key" in error_lines[0].lower()
    assert "Traceback" not in result.stderr
    (path,) = stored_sessions(tmp_path)
    assert path[0].text == "hello"  # the prompt is kept


def test_ask_unknown_session_and_empty_prompt(tmp_path: Path) -> None:
    assert "no session" in threadline(tmp_path, "ask", "--session", "nope", "hi").stderr
    empty = threadline(tmp_path, "ask", stdin="")
    assert empty.returncode == 1 and "no prompt" in empty.stderr


def test_sigkill_mid_stream_keeps_prompt_and_coalesced_text(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    add_replay_provider(tmp_path, replay_server)
    pieces = [f"t{i:03d} " for i in range(400)]
    replay_server.enqueue(sse_response(openai_text_stream(pieces), chunk_delay=0.01))
    process, printed = ask_streaming(tmp_path, "Count to 400", 100 * 5)
    time.sleep(0.6)  # past two coalescing intervals since those tokens were printed
    os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=10)
    process.stdout.close()
    process.stderr.close() if process.stderr else None

    (path,) = stored_sessions(tmp_path)  # opening the store marks the reply interrupted
    prompt, reply = path
    assert prompt.text == "Count to 400"
    assert reply.status is MessageStatus.INTERRUPTED
    full = "".join(pieces)
    assert full.startswith(reply.text)
    assert len(reply.text) >= len(printed.decode())  # everything printed ≥ 250 ms before the kill was stored
    assert len(reply.text) < len(full)


@pytest.mark.parametrize("kind", ["openai", "anthropic"])
def test_provider_kinds_are_accepted(tmp_path: Path, kind: str) -> None:
    result = threadline(tmp_path, "provider", "add", f"p-{kind}", "--kind", kind)
    assert result.returncode == 0
