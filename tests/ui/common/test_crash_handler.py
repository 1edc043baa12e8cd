"""The crash handler: an unexpected error is logged with its traceback, tabs saved, the user told."""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from tests.support.waiting import WAIT_MS

from threadline.app.logging_setup import LoggingSetup, hold_records, setup_logging
from threadline.ui.common.crash_dialog import CrashChoice
from threadline.ui.common.crash_handler import CrashHandler
from threadline.ui.common.tasks import LogOnly, spawn


@pytest.fixture
def logged(tmp_path: Path) -> Iterator[LoggingSetup]:
    setup = setup_logging(tmp_path / "data")
    yield setup
    setup.close()


@pytest.fixture
def handler(logged: LoggingSetup, qtbot: Any) -> Iterator[CrashHandler]:
    saved: list[str] = []
    crash = CrashHandler(logged.log_path, save_session=lambda: saved.append("tabs"))
    crash.saved = saved  # type: ignore[attr-defined]
    crash.install()
    yield crash
    crash.uninstall()
    if crash.dialog is not None:
        crash.dialog.close()


def _log_text(setup: LoggingSetup) -> str:
    setup.handler.flush()
    assert setup.log_path is not None
    return setup.log_path.read_text(encoding="utf-8")


def _boom() -> None:
    raise ZeroDivisionError("the reason is in the traceback")


@pytest.mark.expected_log_errors
def test_an_unexpected_error_in_a_task_is_logged_saved_and_shown(
    handler: CrashHandler, logged: LoggingSetup, qloop: Any, qtbot: Any
) -> None:
    async def broken() -> None:
        _boom()

    with qtbot.waitSignal(handler.crashed, timeout=WAIT_MS) as crashed:
        spawn(broken(), tell=LogOnly("a test task"))

    assert crashed.args == ["ZeroDivisionError"]
    assert handler.saved == ["tabs"]  # type: ignore[attr-defined]
    text = _log_text(logged)
    assert "unexpected error (ZeroDivisionError)" in text
    assert "Traceback (most recent call last)" in text and "in _boom" in text
    dialog = handler.dialog
    assert dialog is not None and dialog.isVisible()
    assert str(logged.log_path) in dialog.message.text()
    assert "Traceback" not in dialog.message.text()

    qtbot.mouseClick(dialog.keep_button, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: handler.dialog is None, timeout=WAIT_MS)
    assert dialog.choice is CrashChoice.KEEP_GOING


@pytest.mark.expected_log_errors
def test_more_errors_while_the_dialog_is_open_are_only_logged(
    handler: CrashHandler, logged: LoggingSetup, qtbot: Any
) -> None:
    for _ in range(3):
        try:
            _boom()
        except ZeroDivisionError:
            handler(*sys.exc_info())  # type: ignore[arg-type]
    dialog = handler.dialog
    assert dialog is not None
    assert handler.count == 3
    assert handler.saved == ["tabs"]  # type: ignore[attr-defined]
    assert "2 more unexpected problem(s)" in dialog.more.text()
    assert _log_text(logged).count("unexpected error (ZeroDivisionError)") == 3

    with qtbot.waitSignal(handler.quitRequested, timeout=WAIT_MS):
        qtbot.mouseClick(dialog.quit_button, Qt.MouseButton.LeftButton)
    assert dialog.choice is CrashChoice.QUIT


@pytest.mark.expected_log_errors
def test_an_error_in_another_thread_reaches_the_dialog_on_the_gui_thread(
    handler: CrashHandler, logged: LoggingSetup, qtbot: Any
) -> None:
    thread = threading.Thread(target=_boom, name="worker-1")
    with qtbot.waitSignal(handler.crashed, timeout=WAIT_MS):
        thread.start()
        thread.join()
    assert handler.dialog is not None
    assert "in _boom" in _log_text(logged)


def test_keyboard_interrupt_is_not_a_crash(handler: CrashHandler, qtbot: Any, monkeypatch: Any) -> None:
    passed_on: list[type[BaseException]] = []
    monkeypatch.setattr(handler, "_previous", lambda kind, err, tb: passed_on.append(kind))
    handler(KeyboardInterrupt, KeyboardInterrupt(), None)
    assert passed_on == [KeyboardInterrupt]
    assert handler.count == 0 and handler.dialog is None


def test_the_hook_is_put_back(logged: LoggingSetup) -> None:
    before = sys.excepthook
    crash = CrashHandler(logged.log_path)
    crash.install()
    assert sys.excepthook is crash
    crash.uninstall()
    assert sys.excepthook is before


@pytest.mark.expected_log_errors
def test_a_failing_session_saver_does_not_stop_the_report(logged: LoggingSetup, qtbot: Any) -> None:
    def save() -> None:
        raise RuntimeError("saving failed too")

    crash = CrashHandler(logged.log_path, save_session=save)
    try:
        _boom()
    except ZeroDivisionError:
        crash(*sys.exc_info())  # type: ignore[arg-type]
    assert crash.dialog is not None
    assert "could not save the open tabs" in _log_text(logged)
    crash.dialog.close()


@pytest.mark.expected_log_errors
def test_a_crash_before_the_log_is_open_opens_it_before_the_dialog_names_it(
    tmp_path: Path, qtbot: Any
) -> None:
    """The window holds log records until after its first paint; a crash in the first frame
    must not show a dialog pointing at a file that does not have the traceback yet."""
    held = hold_records()
    crash = CrashHandler(None)
    opened: list[LoggingSetup] = []

    def open_log() -> None:
        if not opened:
            opened.append(setup_logging(tmp_path / "data", held=held))
            crash.log_path = opened[0].log_path

    crash.open_log = open_log
    crash.install()
    try:
        try:
            _boom()
        except ZeroDivisionError:
            crash(*sys.exc_info())  # type: ignore[arg-type]
        assert opened, "the log was not opened before the dialog"
        text = _log_text(opened[0])
        assert "unexpected error (ZeroDivisionError)" in text and "in _boom" in text
        assert crash.dialog is not None and str(opened[0].log_path) in crash.dialog.message.text()
    finally:
        crash.uninstall()
        if crash.dialog is not None:
            crash.dialog.close()
        if opened:
            opened[0].close()
        else:
            logging.getLogger().removeHandler(held)
