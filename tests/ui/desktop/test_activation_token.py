"""The launcher's activation token of a second start reaches the running window, which uses it.

A second ``threadline`` never shows a window: the token its launcher gave it
(``XDG_ACTIVATION_TOKEN``, ``DESKTOP_STARTUP_ID``) goes with its words to the first
instance, and the window that comes to the front activates with it (docs/desktop.md,
"Coming to the front"). On X11 that is seen on the X server: the window carries the
start-up id and its time stamp as its user time. Real processes throughout; the X11 part
is skipped, saying why, where Xvfb, xdotool or xprop is missing (.ci/setup --dev installs them).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from tests.support.waiting import WAIT, WAIT_MS
from tests.support.xvfb import have, x11_env, xvfb_display

from threadline.app import single_instance
from threadline.app.single_instance import InstanceServer, claim, is_listening
from threadline.ui.common import activation
from threadline.ui.common.activation import ActivationToken, split_token

KEYRING = {"PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring"}
STARTUP_ID = "launcher-7-host_TIME4242"


def second_start(data_dir: Path, env: dict[str, str], *words: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "threadline", "--data-dir", str(data_dir), *words],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def test_the_word_prefixes_are_the_same_on_both_ends() -> None:
    assert single_instance.XDG_TOKEN_WORD == activation.XDG_TOKEN_WORD
    assert single_instance.STARTUP_ID_WORD == activation.STARTUP_ID_WORD


def test_a_second_start_hands_its_launcher_tokens_to_the_first(qtbot: Any, tmp_path: Path) -> None:
    server = claim(tmp_path / "data")
    assert isinstance(server, InstanceServer)
    got: list[list[str]] = []
    server.set_handler(got.append)
    try:
        env = {
            **os.environ,
            "QT_QPA_PLATFORM": "offscreen",
            **KEYRING,
            "XDG_ACTIVATION_TOKEN": "wayland-token-1",
            "DESKTOP_STARTUP_ID": STARTUP_ID,
        }
        second = second_start(tmp_path / "data", env, "--new-chat")
        qtbot.waitUntil(lambda: second.poll() is not None, timeout=WAIT_MS)
        _out, err = second.communicate()
        assert second.returncode == 0, err
        (words,) = got
        assert split_token(words) == (
            ["--show", "--new-chat"],
            ActivationToken(xdg="wayland-token-1", startup_id=STARTUP_ID),
        )
    finally:
        server.close()


def test_a_start_without_a_launcher_token_sends_none() -> None:
    assert single_instance.activation_words({"HOME": "/home/x"}) == []
    assert split_token(["--show", "/a.json"]) == (["--show", "/a.json"], None)


def xprop(display: str, window: str, *names: str) -> str:
    done = subprocess.run(
        ["xprop", "-id", window, *names],
        env=x11_env(display),
        capture_output=True,
        text=True,
        timeout=WAIT,
    )
    return done.stdout


SEARCH = ("xdotool", "search", "--onlyvisible", "--pid")
NEEDS = "needs Xvfb, xdotool and xprop (.ci/setup --dev)"


@pytest.mark.skipif(not have("Xvfb", "xdotool", "xprop"), reason=NEEDS)
@pytest.mark.skipif(sys.platform != "linux", reason="X11")
def test_on_x11_the_running_window_activates_with_the_second_starts_startup_id(
    qapp: Any, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    with xvfb_display() as display:
        first = second_start(data_dir, x11_env(display, **KEYRING))
        try:
            deadline = time.monotonic() + WAIT
            found: list[str] = []
            while time.monotonic() < deadline and first.poll() is None:
                if is_listening(data_dir):
                    done = subprocess.run(
                        [*SEARCH, str(first.pid), "--name", "^Threadline$"],
                        env=x11_env(display),
                        capture_output=True,
                        text=True,
                        timeout=WAIT,
                    )
                    found = done.stdout.split()
                    if found:
                        break
                time.sleep(0.1)
            assert found, f"the first window did not come up: {first.poll()}"
            (window,) = found
            assert STARTUP_ID not in xprop(display, window, "_NET_STARTUP_ID")

            second = second_start(data_dir, x11_env(display, **KEYRING, DESKTOP_STARTUP_ID=STARTUP_ID))
            _out, err = second.communicate(timeout=WAIT)
            assert second.returncode == 0, err

            deadline = time.monotonic() + WAIT
            shown = ""
            while time.monotonic() < deadline:
                shown = xprop(display, window, "_NET_STARTUP_ID", "_NET_WM_USER_TIME")
                if STARTUP_ID in shown:
                    break
                time.sleep(0.1)
            assert f'_NET_STARTUP_ID(UTF8_STRING) = "{STARTUP_ID}"' in shown, shown
            assert "_NET_WM_USER_TIME(CARDINAL) = 4242" in shown, shown
        finally:
            first.terminate()
            try:
                first.communicate(timeout=WAIT)
            except subprocess.TimeoutExpired:
                first.kill()
                first.communicate()
