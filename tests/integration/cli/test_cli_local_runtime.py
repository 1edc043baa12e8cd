"""``threadline ask --provider threadline --model NAME``: a downloaded model answered by the
real llama.cpp server of the ``threadline[local]`` extra, started for the question and
stopped when ``ask`` ends; ``threadline models runtime`` shows and sets its settings."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from tests.support.cli_process import ENV, threadline
from tests.support.tiny_gguf import make_tiny_gguf

from threadline.models.runtime import llama_cpp_installed

pytestmark = pytest.mark.skipif(
    not llama_cpp_installed(), reason="needs the threadline[local] extra (llama-cpp-python[server])"
)


def test_ask_a_downloaded_model_on_this_computer(tmp_path: Path) -> None:
    data = tmp_path / "data"
    source = make_tiny_gguf(tmp_path / "tiny.gguf")
    imported = threadline(data, "models", "import", str(source))
    assert imported.returncode == 0, imported.stderr
    setting = threadline(data, "models", "runtime", "--context", "256", "--idle", "5")
    assert setting.returncode == 0, setting.stderr
    assert "Context: 256 tokens, GPU layers: 0, unloads after 5 min unused" in setting.stdout
    assert "Not running" in setting.stdout

    listed = threadline(data, "provider", "list")
    assert "On this computer" in listed.stdout, listed.stdout

    asked = threadline(data, "ask", "--provider", "threadline", "--model", "tiny.gguf", "Hello", timeout=600)
    assert asked.returncode == 0, asked.stderr
    assert asked.stdout.strip(), asked  # random words from random weights, but words
    # stderr is not a terminal: one plain line says why the first reply takes a while
    assert "Loading tiny.gguf…\n" in asked.stderr, asked.stderr
    assert "Loading" not in asked.stdout, asked.stdout  # stdout holds the reply alone
    after = threadline(data, "models", "runtime")
    assert "Not running" in after.stdout  # ask started it, and stopped it on the way out
    assert f"Log: {data / 'runtime' / 'runtime.log'}" in after.stdout
    assert "Serving tiny.gguf on 127.0.0.1:" in (data / "runtime" / "runtime.log").read_text()


def test_ask_names_a_model_that_is_not_there(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert threadline(data, "models", "import", str(make_tiny_gguf(tmp_path / "tiny.gguf"))).returncode == 0
    asked = threadline(data, "ask", "--provider", "threadline", "--model", "nope.gguf", "Hello", timeout=300)
    assert asked.returncode != 0
    assert "No model nope.gguf in " in asked.stderr, asked.stderr


def _run_on_a_terminal(data: Path, *args: str, timeout: float) -> tuple[int, bytes]:
    """``threadline ARGS…`` with stdout and stderr on one pseudo-terminal: its exit code and
    everything the terminal received, in the order it was written."""
    leader, follower = pty.openpty()
    received = bytearray()

    def drain() -> None:
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # EIO once the process and its terminal are gone
                return
            if not chunk:
                return
            received.extend(chunk)

    reader = threading.Thread(target=drain, daemon=True)
    reader.start()
    try:
        process = subprocess.Popen(
            [sys.executable, "-m", "threadline", "--data-dir", str(data), *args],
            stdin=subprocess.DEVNULL,
            stdout=follower,
            stderr=follower,
            env=ENV,
        )
        os.close(follower)
        code = process.wait(timeout=timeout)
        reader.join(timeout=timeout)
    finally:
        os.close(leader)
    return code, bytes(received)


def test_ask_says_loading_on_a_terminal_and_wipes_it_before_the_reply(tmp_path: Path) -> None:
    data = tmp_path / "data"
    assert threadline(data, "models", "import", str(make_tiny_gguf(tmp_path / "tiny.gguf"))).returncode == 0
    assert threadline(data, "models", "runtime", "--context", "256").returncode == 0  # a short reply
    code, screen = _run_on_a_terminal(
        data, "ask", "--provider", "threadline", "--model", "tiny.gguf", "Hello", timeout=600
    )
    text = screen.decode("utf-8", "replace")
    assert code == 0, text
    shown = text.index("\r\x1b[KLoading tiny.gguf…")
    wiped = text.index("\r\x1b[K", shown + 1)  # the status line is cleared…
    reply = text[wiped + len("\r\x1b[K") :]
    assert reply.strip(), text  # …and the reply follows on the line it leaves
    assert "Loading" not in reply, text
