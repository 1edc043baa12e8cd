"""The log: a rotating file in the data folder that Qt, threads and the asyncio loop reach; no secrets."""

from __future__ import annotations

import logging
import logging.handlers
import sys
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

import pytest
from PySide6.QtCore import qWarning

from threadline.app.logging_setup import (
    BACKUP_COUNT,
    MAX_BYTES,
    LoggingSetup,
    hold_records,
    install_loop_exception_handler,
    mask_secrets,
    setup_logging,
)
from threadline.ui.common.qt_messages import install_qt_message_handler


@pytest.fixture
def logged(tmp_path: Path) -> Iterator[LoggingSetup]:
    setup = setup_logging(tmp_path / "data")
    yield setup
    setup.close()


def _text(setup: LoggingSetup) -> str:
    setup.handler.flush()
    assert setup.log_path is not None
    return setup.log_path.read_text(encoding="utf-8")


def test_the_root_logger_writes_a_rotating_file_in_the_data_folder(
    logged: LoggingSetup, tmp_path: Path
) -> None:
    assert logged.log_path == tmp_path / "data" / "logs" / "threadline.log"
    assert isinstance(logged.handler, logging.handlers.RotatingFileHandler)
    assert logged.handler.maxBytes == MAX_BYTES and logged.handler.backupCount == BACKUP_COUNT
    assert 1024 * 1024 <= MAX_BYTES <= 10 * 1024 * 1024 and 2 <= BACKUP_COUNT <= 9

    logging.getLogger("threadline.store").info("opened %s", "threadline.db")
    logging.getLogger("some.library").warning("a library speaks too")

    text = _text(logged)
    assert "INFO    threadline.store: opened threadline.db" in text
    assert "some.library: a library speaks too" in text


@pytest.mark.expected_log_errors
def test_records_held_before_the_log_opens_are_written_first_and_in_order(tmp_path: Path) -> None:
    """The window opens its log after the first paint; what was logged before is not lost."""
    import threading

    root = logging.getLogger()
    level, hook = root.level, threading.excepthook
    held = hold_records()
    logging.getLogger("threadline.app").info("before the first paint")
    try:
        raise ValueError("sk-abcdefghijklmnop leaked")
    except ValueError:
        logging.getLogger("threadline.ui").exception("a failure in the first frame")
    assert held in root.handlers
    setup = setup_logging(tmp_path / "data", held=held)
    try:
        assert held not in root.handlers
        text = _text(setup)
        first = text.index("threadline.app: before the first paint")
        failure = text.index("threadline.ui: a failure in the first frame")
        assert first < failure < text.index("log started")
        assert "ValueError" in text and "sk-abcdefghijklmnop" not in text  # masked like any line
    finally:
        setup.close()
    assert (root.level, threading.excepthook) == (level, hook)  # as before hold_records


def test_closing_takes_the_handler_away(tmp_path: Path) -> None:
    setup = setup_logging(tmp_path / "d")
    setup.close()
    assert setup.handler not in logging.getLogger().handlers


def test_an_unwritable_folder_falls_back_to_stderr(tmp_path: Path, capsys: Any) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    setup = setup_logging(blocker)
    try:
        assert setup.log_path is None
        assert "cannot write the log" in capsys.readouterr().err
    finally:
        setup.close()


@pytest.mark.parametrize(
    ("line", "secret"),
    [
        ("request failed: Authorization: Bearer sk-abcdefghijklmnopqrstuvwx", "sk-abcdefghijklmnop"),
        ("url http://h/v1/models?api_key=hunter2hunter2&x=1", "hunter2"),
        ("headers {'x-api-key': 'ant-secret-value-123'}", "ant-secret-value-123"),
        ("key sk-ant-api03-AAAAAAAAAAAAAAAAAAAA was refused", "AAAAAAAAAAAA"),
        ("postgresql+psycopg://alice:s3cret-pw@db.example/threadline", "s3cret-pw"),
        ("groq gsk_0123456789abcdefghij", "0123456789abcdef"),
        (
            'HTTP Request: GET https://g.example/v1/models?key=AIzaSyA0123456789abcdefgh "200 OK"',
            "0123456789abc",
        ),
    ],
)
def test_secrets_are_masked(line: str, secret: str) -> None:
    masked = mask_secrets(line)
    assert secret not in masked
    assert "***" in masked


def test_ordinary_text_is_left_alone() -> None:
    line = "turn done: input_tokens=120, max_tokens: 4096, model gpt-4o-mini, session 3f2a"
    assert mask_secrets(line) == line


@pytest.mark.expected_log_errors
def test_secrets_in_a_traceback_are_masked_in_the_file(logged: LoggingSetup) -> None:
    try:
        raise ConnectionError("refused: Authorization: Bearer sk-live-0123456789abcdef")
    except ConnectionError:
        logging.getLogger("threadline.llm").exception("request failed")
    text = _text(logged)
    assert "ConnectionError" in text
    assert "0123456789abcdef" not in text


@pytest.mark.expected_log_warnings("threadline.qt: QPainter::begin")
def test_qt_messages_reach_the_log(logged: LoggingSetup, qapp: Any) -> None:
    restore = install_qt_message_handler()
    try:
        qWarning("QPainter::begin: a widget painted outside paintEvent")
    finally:
        restore()
    assert "WARNING threadline.qt: QPainter::begin: a widget painted outside paintEvent" in _text(logged)


@pytest.mark.expected_log_warnings(
    "Task exception was never retrieved", "Fatal read error on socket transport"
)
@pytest.mark.expected_log_warnings("threadline.asyncio: (Task exception|Fatal read error)")
def test_an_exception_nobody_awaited_goes_to_the_crash_handler(
    logged: LoggingSetup, qloop: Any, qtbot: Any
) -> None:
    calls: list[tuple[type[BaseException], BaseException, TracebackType | None]] = []
    previous = sys.excepthook
    sys.excepthook = lambda kind, err, tb: calls.append((kind, err, tb))
    install_loop_exception_handler(qloop)
    try:
        err = LookupError("lost in a fire-and-forget task")
        qloop.call_exception_handler(
            {"message": "Task exception was never retrieved", "exception": err, "task": None}
        )
        assert [c[1] for c in calls] == [err]

        qloop.call_exception_handler(
            {"message": "Fatal read error on socket transport", "exception": OSError(104, "reset")}
        )
        assert len(calls) == 1  # transport noise is logged, not a crash
    finally:
        qloop.set_exception_handler(None)
        sys.excepthook = previous
    text = _text(logged)
    assert "Fatal read error on socket transport" in text and "ConnectionResetError" in text


def test_an_exception_in_a_thread_reaches_the_excepthook(logged: LoggingSetup) -> None:
    import threading

    calls: list[BaseException] = []
    previous = sys.excepthook
    sys.excepthook = lambda kind, err, tb: calls.append(err)
    try:
        thread = threading.Thread(target=lambda: 1 / 0)
        thread.start()
        thread.join()
    finally:
        sys.excepthook = previous
    assert len(calls) == 1 and isinstance(calls[0], ZeroDivisionError)
