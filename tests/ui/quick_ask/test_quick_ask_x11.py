"""The X11 global shortcut, for real: Xvfb, the window in a child process, keys pressed with xdotool.

Ctrl+Alt+Space is sent to the X server as a person's keyboard would send it; the child's
passive grab must catch it and open Quick ask, the question is typed with xdotool into
the focused composer, the reply streams from the loopback server, and Continue in window
opens the tab (``x11_child.py`` reports each step). Skipped where Xvfb or xdotool is not
installed (.ci/setup --dev installs both).
"""

from __future__ import annotations

import os
import queue
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.support.sse_server import ReplayServer, openai_text_stream, split_text, sse_response
from tests.support.xvfb import xvfb_display

pytestmark = pytest.mark.skipif(
    not (shutil.which("Xvfb") and shutil.which("xdotool")), reason="needs Xvfb and xdotool (.ci/setup --dev)"
)

STEP = 90.0
"""Seconds a step may take (the child's window start included) on a loaded machine."""
ROOT = Path(__file__).resolve().parents[3]
REPLY = " ".join(f"token{i}" for i in range(60))


@pytest.fixture
def display() -> Iterator[str]:
    """A private Xvfb server (``tests/support/xvfb.py``)."""
    with xvfb_display() as number:
        yield number


class Child:
    """The window's process: its lines arrive on a queue, read by a thread."""

    def __init__(self, args: list[str], env: dict[str, str]) -> None:
        self.process = subprocess.Popen(
            args, env=env, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        self.lines: queue.Queue[str] = queue.Queue()
        self.errors: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()
        threading.Thread(target=lambda: self.errors.extend(self.process.stderr or []), daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line.rstrip("\n"))
        self.lines.put("")  # the end

    def expect(self, word: str) -> str:
        """The next line, which must start with ``word``; its rest."""
        try:
            line = self.lines.get(timeout=STEP)
        except queue.Empty:
            raise AssertionError(
                f"no {word} from the window within {STEP:.0f} s; stderr: {self.stderr()}"
            ) from None
        assert line.startswith(word), f"expected {word}, got {line!r}; stderr: {self.stderr()}"
        return line[len(word) :].strip()

    def stderr(self) -> str:
        return "".join(self.errors)[-3000:]

    def end(self) -> int:
        try:
            return self.process.wait(timeout=STEP)
        finally:
            if self.process.poll() is None:
                self.process.kill()
                self.process.wait()


def xdotool(display: str, *args: str) -> str:
    done = subprocess.run(
        ["xdotool", *args],
        env={**os.environ, "DISPLAY": display},
        capture_output=True,
        text=True,
        timeout=STEP,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_ctrl_alt_space_opens_quick_ask_and_a_reply_streams_in_it(
    display: str, tmp_path: Path, replay_server: ReplayServer
) -> None:
    replay_server.enqueue(sse_response(openai_text_stream(split_text(REPLY, 3)), chunk_delay=0.01))
    env = {
        **os.environ,
        "DISPLAY": display,
        "QT_QPA_PLATFORM": "xcb",
        "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path]),
    }
    env.pop("WAYLAND_DISPLAY", None)
    child = Child(
        [
            sys.executable,
            str(Path(__file__).with_name("x11_child.py")),
            str(tmp_path / "data"),
            replay_server.openai_base_url,
        ],
        env,
    )
    try:
        ready = child.expect("READY")
        assert ready.startswith("True"), ready  # the grab is held
        assert "Ctrl+Alt+Space" in ready and "X11 key grab" in ready
        xdotool(display, "key", "ctrl+alt+space")
        assert child.expect("OPENED") == "Quick ask"
        # The window is on the X server under its title, frameless above the main window.
        found = xdotool(display, "search", "--onlyvisible", "--name", "^Quick ask$").split()
        assert len(found) == 1
        xdotool(display, "windowfocus", "--sync", found[0])
        xdotool(display, "type", "--delay", "20", "What comes next?")
        assert child.expect("TYPED") == "What comes next?"
        assert child.expect("STREAMING") == "True"
        assert child.expect("REPLY") == REPLY
        assert child.expect("TAB") == "True False"  # the main window's tab, Quick ask hidden
        # A new shortcut recorded in Settings with the keyboard: the held Ctrl+Alt+Space is
        # recorded rather than opening Quick ask, and the new one opens it from then on.
        dialog = child.expect("RECORDING")
        xdotool(display, "windowfocus", "--sync", dialog)
        xdotool(display, "key", "ctrl+alt+space")
        assert child.expect("HELD") == "False"
        xdotool(display, "key", "ctrl+alt+k")
        recorded = child.expect("RECORDED")
        assert recorded.startswith("True") and "Ctrl+Alt+K" in recorded, recorded
        xdotool(display, "key", "ctrl+alt+k")
        child.expect("REOPENED")
        child.expect("DONE")
        assert child.end() == 0, child.stderr()
    finally:
        if child.process.poll() is None:
            child.process.kill()
            child.process.wait()
