"""``threadline show`` as a real subprocess: the path, and with ``--follow`` a reply another process streams.

The reply is streamed by ``threadline ask`` (a second process) from the replay SSE
server, slowly, while ``show --follow --json`` runs; it must print the text as it
grows and the final status, and exit 130 on Ctrl+C (SIGINT).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support.sse_server import ReplayServer, openai_text_stream, sse_response

from threadline.core.config import ProviderConfig, ProviderKind
from threadline.engine.engine import Engine

pytestmark = pytest.mark.asyncio
WAIT = 60.0
PIECES = [f"chunk{n} " for n in range(10)]
ENV = {**os.environ, "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}


async def prepared_chat(data_dir: Path, server: ReplayServer) -> str:
    engine = await Engine.open(data_dir)
    try:
        await engine.providers.save_provider(
            ProviderConfig("replay", ProviderKind.OPENAI, base_url=server.openai_base_url, default_model="m")
        )
        info = await engine.sessions.new_session("Followed")
        return info.id
    finally:
        await engine.aclose()


async def threadline(data_dir: Path, *args: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "threadline",
        "--data-dir",
        str(data_dir),
        *args,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env=ENV,
    )


async def test_show_follow_prints_a_reply_streamed_by_another_process(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    replay_server.enqueue(sse_response(openai_text_stream(PIECES), chunk_delay=0.2))
    session_id = await prepared_chat(tmp_path, replay_server)
    show = await threadline(tmp_path, "show", session_id, "--follow", "--json")
    try:
        assert show.stdout is not None
        lines: list[dict[str, Any]] = []

        async def read_until(done: Any) -> None:
            async with asyncio.timeout(WAIT):
                while not done():
                    raw = await show.stdout.readline()  # type: ignore[union-attr]
                    assert raw, "show ended early"
                    lines.append(json.loads(raw))

        await read_until(lambda: any(line["type"] == "session" for line in lines))
        ask = await threadline(tmp_path, "ask", "--session", session_id, "hello")
        expected = "".join(PIECES)

        def finished() -> bool:
            return any(
                line["type"] == "message" and line["text"] == expected and line["status"] == "complete"
                for line in lines
            )

        await read_until(finished)
        _, ask_errors = await asyncio.wait_for(ask.communicate(), WAIT)
        assert ask.returncode == 0, ask_errors.decode()
        messages = [line for line in lines if line["type"] == "message"]
        assert [m["role"] for m in messages][:2] == ["user", "assistant"]
        assert messages[0]["text"] == "hello"
        deltas = [line["delta"] for line in lines if line["type"] == "text"]
        assert len(deltas) >= 2, lines  # printed as it grew, not only at the end
        reply_id = messages[1]["id"]
        shown = messages[1]["text"] + "".join(deltas)
        assert expected.startswith(shown) and all(line.get("id", reply_id) for line in lines)
        show.send_signal(signal.SIGINT)
        await asyncio.wait_for(show.wait(), WAIT)
        assert show.returncode == 130
    finally:
        if show.returncode is None:
            show.kill()
            await show.wait()


async def test_show_prints_the_path_and_an_unknown_chat_is_one_line(
    tmp_path: Path, replay_server: ReplayServer
) -> None:
    replay_server.enqueue(sse_response(openai_text_stream(["Paris."])))
    session_id = await prepared_chat(tmp_path, replay_server)
    ask = await threadline(tmp_path, "ask", "--session", session_id, "Capital of France?")
    await asyncio.wait_for(ask.communicate(), WAIT)
    show = await threadline(tmp_path, "show", session_id)
    out, _ = await asyncio.wait_for(show.communicate(), WAIT)
    assert show.returncode == 0
    assert out.decode() == "# Followed\n\n── user ──\nCapital of France?\n\n── assistant ──\nParis.\n"
    missing = await threadline(tmp_path, "show", "nope")
    _, errors = await asyncio.wait_for(missing.communicate(), WAIT)
    assert missing.returncode == 1
    assert errors.decode().strip() == "threadline: no chat 'nope'; `threadline list` shows the ids"
