"""Windows agree with the command line: what another process writes to the same database
shows in an open window's sidebar without a restart (the engine's change watch)."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from tests.support.sse_server import openai_text_stream, sse_response

from threadline.engine.engine import Engine

WAIT_MS = 30000
"""Generous: a Python process has to start (and both cores may be busy)."""


def titles(window: Any) -> list[str]:
    return [s.display_title for s in window.sidebar.model.sessions()]


def test_a_chat_made_by_threadline_ask_appears_in_the_open_windows_sidebar(harness: Any) -> None:
    harness.server.enqueue(sse_response(openai_text_stream(["Hello ", "from the command line."])))
    window = harness.open()
    assert window.sidebar.model.sessions() == []
    env = {**os.environ, "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
    process = subprocess.Popen(
        [sys.executable, "-m", "threadline", "--data-dir", str(harness.data_dir), "ask", "hi"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
    )
    try:
        harness.qtbot.waitUntil(lambda: len(window.sidebar.model.sessions()) == 1, timeout=WAIT_MS)
        harness.qtbot.waitUntil(lambda: process.poll() is not None, timeout=WAIT_MS)
        assert process.returncode == 0, process.stderr.read() if process.stderr else ""
        harness.qtbot.waitUntil(
            lambda: window.sidebar.model.sessions()[0].preview.startswith("Hello from"), timeout=WAIT_MS
        )
        assert titles(window) == ["hi"]
    finally:
        if process.poll() is None:
            process.kill()
        process.communicate()


def test_a_rename_by_a_second_engine_on_the_same_file_shows_in_the_sidebar(harness: Any) -> None:
    window = harness.open()
    info = harness.run(harness.engine.sessions.new_session("Before"))
    harness.qtbot.waitUntil(lambda: titles(window) == ["Before"], timeout=WAIT_MS)

    async def rename_elsewhere() -> None:
        other = await Engine.open(harness.data_dir)
        try:
            await other.sessions.rename_session(info.id, "Renamed by another instance")
        finally:
            await other.aclose()

    harness.run(rename_elsewhere())
    harness.qtbot.waitUntil(lambda: titles(window) == ["Renamed by another instance"], timeout=WAIT_MS)
