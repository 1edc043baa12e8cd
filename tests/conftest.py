"""Suite-wide guards: a test fails when the code logs an error or warning it did not expect.

Errors and warnings in the log are how unexpected failures show up in a desktop
app (the engine logs and carries on), so a test that provokes them on purpose says
so: ``@pytest.mark.expected_log_errors`` for errors (any logger), and
``@pytest.mark.expected_log_warnings`` for warnings of our own ``threadline``
loggers, optionally with the patterns (regular expressions, searched in
``logger: message``) the expected warnings match, so an unrelated warning still fails.
Other libraries' warnings are theirs to make and are not checked.

Qt's warnings fail a test through pytest-qt (``qt_log_level_fail`` in
pyproject.toml, with its ``qt_log_ignore`` list) during setup and the test itself;
pytest-qt stops listening before teardown, so ``pytest_runtest_teardown`` below
listens there with the same list (closing windows is where Qt tends to complain).

pytest-qt's waits (``waitUntil``, ``waitSignal``…) default to 5 s, too short for a 2-core
machine running the suite beside other work: ``_qtbot_waits_as_long_as_until`` makes a wait
that names no ``timeout`` of its own wait ``WAIT_MS``, the bound ``until`` uses. A passing test
is not slowed; only a failing one takes longer to say so.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Generator, Iterator
from typing import Any

import pytest

OUR_LOGGERS = "threadline"


def _qtbot_waits_as_long_as_until() -> None:
    from pytestqt.qtbot import QtBot
    from tests.support.waiting import WAIT_MS

    for name in ("waitUntil", "waitSignal", "waitSignals", "waitCallback", "waitExposed", "waitActive"):
        defaults = getattr(QtBot, name).__kwdefaults__
        assert defaults is not None and "timeout" in defaults, f"pytest-qt's QtBot.{name} changed"
        defaults["timeout"] = WAIT_MS


_qtbot_waits_as_long_as_until()


class _LogCollector(logging.Handler):
    def __init__(self) -> None:
        super().__init__(level=logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


def _ours(record: logging.LogRecord) -> bool:
    return record.name == OUR_LOGGERS or record.name.startswith(OUR_LOGGERS + ".")


def _line(record: logging.LogRecord) -> str:
    return f"{record.name}: {record.getMessage()}"


def unexpected_records(records: list[logging.LogRecord], node: pytest.Item) -> tuple[list[str], list[str]]:
    """The errors and the warnings the test's markers do not allow, as ``logger: message`` lines."""
    errors = [_line(r) for r in records if r.levelno >= logging.ERROR]
    if node.get_closest_marker("expected_log_errors") is not None:
        errors = []
    warnings = [_line(r) for r in records if logging.WARNING <= r.levelno < logging.ERROR and _ours(r)]
    marker = node.get_closest_marker("expected_log_warnings")
    if marker is not None:
        patterns = [re.compile(p) for p in marker.args]
        warnings = [w for w in warnings if patterns and not any(p.search(w) for p in patterns)]
    return errors, warnings


@pytest.fixture(autouse=True)
def fail_on_unexpected_log_records(request: pytest.FixtureRequest) -> Iterator[None]:
    collector = _LogCollector()
    root = logging.getLogger()
    root.addHandler(collector)
    try:
        yield
    finally:
        root.removeHandler(collector)
    errors, warnings = unexpected_records(collector.records, request.node)
    problems = []
    if errors:
        problems.append("unexpected errors were logged:\n" + "\n".join(errors[:5]))
    if warnings:
        problems.append(
            "unexpected warnings were logged (mark the test expected_log_warnings if it provokes them):\n"
            + "\n".join(warnings[:5])
        )
    if problems:
        pytest.fail("\n".join(problems), pytrace=False)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_teardown(item: pytest.Item, nextitem: pytest.Item | None) -> Generator[None, Any, Any]:
    """Fail a test whose teardown makes Qt warn (pytest-qt's own check ends with the test's call)."""
    if item.get_closest_marker("no_qt_log") is not None or item.config.getini("qt_log_level_fail") == "NO":
        return (yield)
    from PySide6.QtCore import QtMsgType, qInstallMessageHandler

    ignored = [re.compile(p) for p in item.config.getini("qt_log_ignore")]
    serious = (QtMsgType.QtWarningMsg, QtMsgType.QtCriticalMsg, QtMsgType.QtFatalMsg)
    problems: list[str] = []

    def handler(mode: QtMsgType, context: object, message: str) -> None:
        if mode in serious and not any(p.search(message) for p in ignored):
            problems.append(f"{mode.name}: {message}")

    previous = qInstallMessageHandler(handler)
    try:
        result = yield
    finally:
        qInstallMessageHandler(previous)
    if problems:
        pytest.fail("Qt warnings during teardown:\n" + "\n".join(problems), pytrace=False)
    return result
