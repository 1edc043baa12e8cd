"""One instance per user and data folder: a second start hands over its words and exits 0.

The first instance is this test's process (``single_instance.claim``, as the window does
after its first paint); the second is a real ``python -m threadline`` on the same data
folder. A crashed instance is a real app process killed with SIGKILL: its lock and its
socket stay behind, and the next start must still become the first (docs/desktop.md).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from tests.support.waiting import WAIT, WAIT_MS

from threadline.app import single_instance
from threadline.app.single_instance import InstanceServer, claim, is_listening

ENV = {
    **{k: v for k, v in os.environ.items() if k not in ("XDG_ACTIVATION_TOKEN", "DESKTOP_STARTUP_ID")},
    "QT_QPA_PLATFORM": "offscreen",
    "PYTHON_KEYRING_BACKEND": "keyring.backends.fail.Keyring",
}
"""No launcher tokens: they would be handed over as words too (test_activation_token.py)."""


def start(data_dir: Path, *words: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "threadline", "--data-dir", str(data_dir), *words],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )


def finished(qtbot: Any, process: subprocess.Popen[str]) -> tuple[int, str]:
    """Wait (with Qt's loop running, so this process's server answers) for ``process`` to end."""
    qtbot.waitUntil(lambda: process.poll() is not None, timeout=WAIT_MS)
    _out, err = process.communicate()
    return process.returncode, err


@pytest.fixture
def first(qapp: Any, tmp_path: Path) -> Any:
    server = claim(tmp_path / "data")
    assert isinstance(server, InstanceServer)
    got: list[list[str]] = []
    server.set_handler(got.append)
    yield server, got
    server.close()


def test_a_second_start_hands_its_file_and_link_to_the_first_and_exits_0(
    qtbot: Any, tmp_path: Path, first: Any
) -> None:
    _server, got = first
    export = tmp_path / "exports" / "chats.json"
    export.parent.mkdir()
    export.write_text("[]", encoding="utf-8")
    link = "threadline://new?prompt=hello%20there"
    began = time.monotonic()
    second = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "threadline",
            "--data-dir",
            str(tmp_path / "data"),
            "chats.json",
            link,
            "--new-chat",
        ],
        cwd=export.parent,  # a relative path: the first instance gets it whole
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=ENV,
    )
    code, err = finished(qtbot, second)
    assert code == 0, err
    assert got == [["--show", "--new-chat", str(export), link]]
    assert time.monotonic() - began < WAIT  # (its speed is measured in docs/desktop.md, not here)


def test_a_plain_second_start_asks_the_first_to_show_itself(qtbot: Any, tmp_path: Path, first: Any) -> None:
    _server, got = first
    code, err = finished(qtbot, start(tmp_path / "data"))
    assert code == 0, err
    assert got == [["--show"]]


def test_words_that_arrive_before_the_window_is_ready_wait_for_it(qtbot: Any, tmp_path: Path) -> None:
    server = claim(tmp_path / "data")
    assert server is not None
    try:
        code, err = finished(qtbot, start(tmp_path / "data", "--quick-ask"))
        assert code == 0, err
        got: list[list[str]] = []
        server.set_handler(got.append)
        assert got == [["--show", "--quick-ask"]]
    finally:
        server.close()


def test_another_data_folder_is_another_instance(qapp: Any, tmp_path: Path, first: Any) -> None:
    assert single_instance.server_name(tmp_path / "data") != single_instance.server_name(tmp_path / "other")
    other = claim(tmp_path / "other")
    assert other is not None
    other.close()


@pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL and a socket file are POSIX")
def test_a_killed_instance_does_not_block_the_next_start(qtbot: Any, tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    crashed = start(data_dir)
    try:
        qtbot.waitUntil(lambda: crashed.poll() is None and is_listening(data_dir), timeout=WAIT_MS)
    finally:
        os.kill(crashed.pid, signal.SIGKILL)
        crashed.communicate(timeout=WAIT)
    from PySide6.QtCore import QDir

    left = Path(QDir.tempPath()) / single_instance.server_name(data_dir)
    assert left.exists(), "the killed instance should have left its socket behind"
    assert (data_dir / single_instance.LOCK_NAME).exists()
    assert not is_listening(data_dir)

    server = claim(data_dir)
    assert server is not None, "the dead instance's lock blocked the start"
    try:
        assert server.server.isListening(), server.server.errorString()
        got: list[list[str]] = []
        server.set_handler(got.append)
        code, err = finished(qtbot, start(data_dir, "--new-chat"))
        assert code == 0, err
        assert got == [["--show", "--new-chat"]]
    finally:
        server.close()


def test_a_start_whose_first_instance_never_answers_says_so_and_exits_1(tmp_path: Path, qapp: Any) -> None:
    """The lock is held (by this process) but nobody listens: the second start gives up, saying why."""
    lock = single_instance.take_lock(tmp_path / "data")
    assert lock is not None
    try:
        with pytest.raises(single_instance.HandOffFailed):
            single_instance.hand_off(tmp_path / "data", ["--show"], wait_s=0.5)
    finally:
        lock.unlock()


def test_messages_are_read_whole_and_others_are_refused() -> None:
    data = single_instance.encode(["--show", "/tmp/a b.json", "threadline://new?prompt=ü"])
    assert single_instance.decode(data[:-3]) is None
    assert single_instance.decode(data) == ["--show", "/tmp/a b.json", "threadline://new?prompt=ü"]
    with pytest.raises(ValueError):
        single_instance.decode(b"GET / HTTP/1.1\r\n\r\n")
