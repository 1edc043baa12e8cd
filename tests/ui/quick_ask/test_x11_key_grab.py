"""The X11 key grab on its own, for real: Xvfb, windowless child processes, keys sent with xdotool.

The children show no window, so a press reaches one only through its passive grab on the
root window (``test_quick_ask_x11`` has a focused window, which would get the key anyway).
A second client asking for the same keys is refused by the X server and says the shortcut
is taken; once the first lets go (still running), the keys are free again. Skipped where Xvfb or xdotool is
not installed (.ci/setup --dev installs both).
"""

from __future__ import annotations

import os
import queue
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from tests.support.waiting import WAIT
from tests.support.xvfb import have, x11_env, xvfb_display

pytestmark = pytest.mark.skipif(
    not have("Xvfb", "xdotool"), reason="needs Xvfb and xdotool (.ci/setup --dev)"
)

ROOT = Path(__file__).resolve().parents[3]
CHILD = Path(__file__).with_name("x11_grab_child.py")


class Grabber:
    """One child process; its output lines arrive on a queue, read by a thread."""

    def __init__(self, display: str, shortcut: str) -> None:
        env = x11_env(display, PYTHONPATH=os.pathsep.join([str(ROOT), *sys.path]))
        self.process = subprocess.Popen(
            [sys.executable, str(CHILD), shortcut],
            env=env,
            cwd=ROOT,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
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
            line = self.lines.get(timeout=WAIT)
        except queue.Empty:
            raise AssertionError(f"no {word} from the child within {WAIT:.0f} s: {self.stderr()}") from None
        assert line.startswith(word), f"expected {word}, got {line!r}: {self.stderr()}"
        return line[len(word) :].strip()

    def unbind(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write("unbind\n")
        self.process.stdin.flush()

    def stderr(self) -> str:
        return "".join(self.errors)[-3000:]

    def end(self) -> int:
        """Close its input (it lets go and exits); its exit code."""
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(timeout=WAIT)

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


def press(display: str, keys: str) -> None:
    done = subprocess.run(
        ["xdotool", "key", keys], env=x11_env(display), capture_output=True, text=True, timeout=WAIT
    )
    assert done.returncode == 0, done.stderr


def test_the_grab_catches_the_keys_without_a_window_refuses_a_second_client_and_lets_go() -> None:
    with xvfb_display() as display:
        first = Grabber(display, "Ctrl+Alt+Space")
        others: list[Grabber] = []
        try:
            assert first.expect("BOUND") == "4"  # with and without Caps Lock and Num Lock
            press(display, "ctrl+alt+space")
            first.expect("HIT")

            others.append(second := Grabber(display, "Ctrl+Alt+Space"))
            assert "is taken by another program" in second.expect("TAKEN")
            assert second.end() == 0

            first.unbind()
            assert first.expect("UNBOUND") == "0"
            others.append(third := Grabber(display, "Ctrl+Alt+Space"))
            assert third.expect("BOUND") == "4"  # let go: free for the next client
            press(display, "ctrl+alt+space")
            third.expect("HIT")
            assert third.end() == 0
            assert first.end() == 0
        finally:
            for grabber in (first, *others):
                grabber.kill()
