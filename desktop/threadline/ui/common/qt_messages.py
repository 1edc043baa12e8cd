"""Qt's own messages (``qWarning`` from inside Qt: "QPainter::begin", "Ambiguous shortcut") into our log.

Without this they go to stderr, which a desktop app's user never sees and cannot send
with a bug report. Each message lands on the ``threadline.qt`` logger at the matching
level, with the Qt category when there is one.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QMessageLogContext, QtMsgType, qInstallMessageHandler

qt_log = logging.getLogger("threadline.qt")

_LEVELS = {
    QtMsgType.QtDebugMsg: logging.DEBUG,
    QtMsgType.QtInfoMsg: logging.INFO,
    QtMsgType.QtWarningMsg: logging.WARNING,
    QtMsgType.QtCriticalMsg: logging.ERROR,
    QtMsgType.QtFatalMsg: logging.CRITICAL,
}


def log_qt_message(mode: QtMsgType, context: QMessageLogContext, message: str) -> None:
    category = getattr(context, "category", None)
    where = f"[{category}] " if category and category != "default" else ""
    qt_log.log(_LEVELS.get(mode, logging.WARNING), "%s%s", where, message)


def install_qt_message_handler() -> Callable[[], None]:
    """Route Qt's messages to the log; returns a function that puts the previous handler back."""
    previous: Any = qInstallMessageHandler(log_qt_message)

    def restore() -> None:
        qInstallMessageHandler(previous)

    return restore
