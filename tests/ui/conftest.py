"""Shared Qt fixtures for the UI tests.

* ``QT_QPA_PLATFORM=offscreen`` before any Qt import, so tests run headless.
* An in-memory keyring: a headless machine has no Secret Service (DESIGN.md §9).
* Every test fails on a Qt warning or critical message (as qutebrowser does): a
  warning is a bug we have not understood yet.
* ``qloop``: a qasync loop marked as running inside pytest-qt's QApplication, driven
  by ``qtbot.waitUntil`` / ``waitSignal`` (DESIGN.md §9); ``run`` runs a coroutine on
  it to completion while Qt keeps processing events.
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_ACCESSIBILITY", "0")

import asyncio
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

import keyring
import pytest
from keyring.backend import KeyringBackend
from PySide6.QtCore import QtMsgType, qInstallMessageHandler


class MemoryKeyring(KeyringBackend):
    priority = 1  # type: ignore[assignment]

    def __init__(self) -> None:
        super().__init__()
        self._store: dict[tuple[str, str], str] = {}

    def get_password(self, service: str, username: str) -> str | None:
        return self._store.get((service, username))

    def set_password(self, service: str, username: str, password: str) -> None:
        self._store[(service, username)] = password

    def delete_password(self, service: str, username: str) -> None:
        self._store.pop((service, username), None)


keyring.set_keyring(MemoryKeyring())

# Messages Qt prints on a headless platform that say nothing about our code.
BENIGN_QT_MESSAGES = (
    "This plugin does not support",
    "QFont::setPointSizeF: Point size <= 0",
    "propagateSizeHints",
)


@pytest.fixture(autouse=True)
def fail_on_qt_warnings() -> Iterator[list[str]]:
    problems: list[str] = []

    def handler(mode: QtMsgType, context: Any, message: str) -> None:
        if mode in (QtMsgType.QtWarningMsg, QtMsgType.QtCriticalMsg, QtMsgType.QtFatalMsg):
            if not any(b in message for b in BENIGN_QT_MESSAGES):
                problems.append(f"{mode.name}: {message}")

    previous = qInstallMessageHandler(handler)
    yield problems
    qInstallMessageHandler(previous)
    if problems:
        pytest.fail("Qt warnings during the test:\n" + "\n".join(problems))


@pytest.fixture
def qloop(qapp: Any) -> Iterator[asyncio.AbstractEventLoop]:
    import qasync

    loop = qasync.QEventLoop(qapp, already_running=True)
    asyncio.events._set_running_loop(loop)
    asyncio.set_event_loop(loop)
    try:
        yield loop
    finally:
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        for task in pending:
            task.cancel()
        if pending:
            from PySide6.QtCore import QCoreApplication

            for _ in range(50):
                QCoreApplication.processEvents()
                if all(t.done() for t in pending):
                    break
        asyncio.events._set_running_loop(None)
        asyncio.set_event_loop(None)


RunAsync = Callable[..., Any]


@pytest.fixture
def run(qloop: asyncio.AbstractEventLoop, qtbot: Any) -> RunAsync:
    """Run a coroutine on the qasync loop to completion; Qt events keep flowing meanwhile."""

    def _run(coro: Coroutine[Any, Any, Any], timeout: int = 15000) -> Any:
        task = qloop.create_task(coro)
        qtbot.waitUntil(task.done, timeout=timeout)
        return task.result()

    return _run
