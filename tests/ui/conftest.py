"""Shared Qt fixtures for the UI tests.

* ``QT_QPA_PLATFORM=offscreen`` before any Qt import, so tests run headless.
* An in-memory keyring: a headless machine has no Secret Service (docs/design.md §9).
* Every test fails on a Qt warning or critical message (as qutebrowser does): a
  warning is a bug we have not understood yet. That is pytest-qt's
  ``qt_log_level_fail`` with the ``qt_log_ignore`` list in pyproject.toml, plus
  the teardown check in tests/conftest.py.
* ``qloop``: a qasync loop marked as running inside pytest-qt's QApplication, driven
  by ``qtbot.waitUntil`` / ``waitSignal`` (docs/design.md §9); ``run`` runs a coroutine on
  it to completion while Qt keeps processing events.
"""

from __future__ import annotations

import os

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
os.environ.setdefault("QT_ACCESSIBILITY", "0")

import asyncio
import concurrent.futures
from collections.abc import Callable, Coroutine, Iterator
from typing import Any

import keyring
import pytest
from tests.support.memory_keyring import MemoryKeyring
from tests.support.waiting import WAIT_MS

from threadline.engine.task_ends import has_started

keyring.set_keyring(MemoryKeyring())


TASKS_END_TIMEOUT_MS = 20000
"""How long a test's leftover tasks may take to end once cancelled (generous: a busy machine)."""


@pytest.fixture
def qloop(qapp: Any, qtbot: Any) -> Iterator[asyncio.AbstractEventLoop]:
    import qasync

    loop = qasync.QEventLoop(qapp, already_running=True)
    # Plain threads for asyncio.to_thread: qasync's default QThread executor, never shut
    # down between tests, aborts the process at exit ("QThread destroyed while running").
    executor = concurrent.futures.ThreadPoolExecutor(max_workers=4, thread_name_prefix="test-io")
    loop.set_default_executor(executor)
    asyncio.events._set_running_loop(loop)
    asyncio.set_event_loop(loop)
    try:
        yield loop
    finally:
        try:
            end_leftover_tasks(loop, qtbot)
        finally:
            asyncio.events._set_running_loop(None)
            asyncio.set_event_loop(None)
            executor.shutdown(wait=True, cancel_futures=True)


def end_leftover_tasks(loop: asyncio.AbstractEventLoop, qtbot: Any) -> None:
    """Cancel the tasks a test left running and wait until they (and any they start) have ended.

    Waiting on the condition, not a number of event-loop turns: a cancelled turn stores its
    ending first, which takes longer on a busy machine, and a task still pending when the
    loop goes away is destroyed mid-flight ("Task was destroyed but it is pending").
    """
    for _ in range(10):  # a cancelled task may start clean-up tasks of its own
        pending = [t for t in asyncio.all_tasks(loop) if not t.done()]
        if not pending:
            return
        # Not one that has not started: anyio's would drop its coroutine unawaited (``task_ends``).
        started = [t for t in pending if has_started(t)]
        for task in started:
            task.cancel()
        qtbot.waitUntil(
            lambda tasks=pending, cancelled=started: (
                all(t.done() or has_started(t) for t in tasks) and all(t.done() for t in cancelled)
            ),
            timeout=TASKS_END_TIMEOUT_MS,
        )
    names = [t.get_name() for t in asyncio.all_tasks(loop) if not t.done()]
    if names:
        pytest.fail(f"tasks kept starting new tasks after being cancelled: {names}", pytrace=False)


RunAsync = Callable[..., Any]


@pytest.fixture
def run(qloop: asyncio.AbstractEventLoop, qtbot: Any) -> RunAsync:
    """Run a coroutine on the qasync loop to completion; Qt events keep flowing meanwhile."""

    def _run(coro: Coroutine[Any, Any, Any], timeout: int = 15000) -> Any:
        task = qloop.create_task(coro)
        qtbot.waitUntil(task.done, timeout=timeout)
        return task.result()

    return _run


# -- the real Engine against the replay server ---------------------------------------------------

from pathlib import Path  # noqa: E402

from tests.support.fixtures import replay_server  # noqa: E402,F401  (fixture)
from tests.support.sse_server import ReplayServer  # noqa: E402


class AppHarness:
    """A real Engine on a data dir, a MainWindow bound to it, and helpers to drive both."""

    def __init__(self, qtbot: Any, run: RunAsync, data_dir: Path, server: ReplayServer | None) -> None:
        self.qtbot = qtbot
        self.run = run
        self.data_dir = data_dir
        self.server = server
        self.engine: Any = None
        self.window: Any = None
        self.windows: list[Any] = []
        self.database_url: str | None = None
        """A server database (``postgres_server.create_database()``) instead of the data dir's file."""

    def open(self, *, provider: bool = True) -> Any:
        from PySide6.QtWidgets import QApplication

        from threadline.core.config import ProviderConfig, ProviderKind
        from threadline.engine.engine import Engine
        from threadline.llm.retry import RetryPolicy
        from threadline.ui.common.theme import ThemeManager
        from threadline.ui.window.main_window import MainWindow

        async def start() -> Any:
            retry = RetryPolicy(max_attempts=2, base_delay=0.01, max_delay=0.02)
            engine = await Engine.open(
                self.data_dir,
                database_url=self.database_url,
                retry_policy=retry,
                provider_timeout=5.0,
                watch_changes=True,
            )
            if provider and self.server is not None and not await engine.providers.list_providers():
                await engine.providers.save_provider(
                    ProviderConfig(
                        "replay",
                        ProviderKind.OPENAI,
                        base_url=self.server.openai_base_url,
                        default_model="gpt-4o-mini",
                    ),
                    "sk-test",
                )
            return engine

        self.engine = self.run(start())
        app = QApplication.instance()
        theme = ThemeManager(app)
        theme.apply()
        self.window = MainWindow(theme, self.data_dir)
        self.window.tabs.confirm_close = lambda tab: True
        self.windows.append(self.window)  # not qtbot.addWidget: pytest-qt would delete it before close()
        self.window.resize(1100, 760)
        self.window.show()
        self.qtbot.waitExposed(self.window)
        self.run(self.window.attach_engine(self.engine))
        return self.window

    def close(self) -> None:
        """Close like a user: the window saves its state, then the engine closes."""
        if self.window is None:
            return
        with self.qtbot.waitSignal(self.window.closed, timeout=WAIT_MS):
            self.window.close()
        self.run(self.engine.aclose())
        self.window = None
        self.engine = None

    def crash(self) -> None:
        """End like a crash: no close event, no saved state; only the database is let go."""
        if self.window is None:
            return
        self.window._closing = True  # a dead process saves nothing more
        self.window.sidebar.detach()
        for tab in self.window.tabs.tabs():
            tab.close_tab()
        self.window.hide()
        self.run(self.engine.aclose())
        self.window = None
        self.engine = None


@pytest.fixture
def harness(qtbot: Any, run: RunAsync, tmp_path: Path, replay_server: ReplayServer) -> Iterator[AppHarness]:  # noqa: F811
    h = AppHarness(qtbot, run, tmp_path / "data", replay_server)
    yield h
    if h.window is not None:
        h.close()
    for window in h.windows:
        window.deleteLater()
    from PySide6.QtCore import QCoreApplication, QEvent

    QCoreApplication.sendPostedEvents(None, QEvent.Type.DeferredDelete)
