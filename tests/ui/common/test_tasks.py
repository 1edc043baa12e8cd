"""spawn: an error is expected exactly when it carries a user message; the rest goes to the crash handler."""

from __future__ import annotations

import asyncio
import inspect
import sys
from collections.abc import Iterator
from types import TracebackType
from typing import Any

import pytest
from PySide6.QtWidgets import QWidget
from tests.support.waiting import WAIT_MS

from threadline.engine.errors import SessionClosedError
from threadline.llm.errors import ProviderError
from threadline.store.errors import StoreBusyError
from threadline.ui.common.message_bridge import MessageBridge, MessageLevel, UserMessage
from threadline.ui.common.tasks import LogOnly, cancel_running, describe, is_expected, running_tasks, spawn

HookCall = tuple[type[BaseException], BaseException, TracebackType | None]


@pytest.fixture
def hook_calls() -> Iterator[list[HookCall]]:
    """What reached ``sys.excepthook`` (the crash handler's place) during the test."""
    calls: list[HookCall] = []
    previous = sys.excepthook
    sys.excepthook = lambda kind, err, tb: calls.append((kind, err, tb))
    try:
        yield calls
    finally:
        sys.excepthook = previous


async def _fail(err: BaseException) -> None:
    await asyncio.sleep(0)
    raise err


def _provider_error() -> ProviderError:
    return ProviderError("The server refused the key. Check it in Settings.", provider="p")


@pytest.mark.parametrize(
    "err",
    [SessionClosedError(), StoreBusyError("database is locked"), "provider"],
    ids=["engine", "store", "provider"],
)
def test_an_error_with_a_user_message_goes_to_the_bridge_after_on_failed(
    err: Any, qloop: Any, qtbot: Any, hook_calls: list[HookCall]
) -> None:
    err = _provider_error() if err == "provider" else err
    bridge = MessageBridge()
    order: list[object] = []
    bridge.shown.connect(order.append)
    task = spawn(_fail(err), tell=bridge, on_failed=order.append, context="Could not rename the chat")
    qtbot.waitUntil(task.done, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: len(order) == 2, timeout=WAIT_MS)
    assert order[0] is err  # the site puts its state back first
    assert isinstance(order[1], UserMessage)
    assert order[1].text == f"Could not rename the chat: {err.user_message}"
    assert order[1].level is MessageLevel.ERROR
    assert hook_calls == []
    assert is_expected(err) and describe(err) == err.user_message


def test_a_widget_reaches_the_bridge_of_its_nearest_holder(
    qloop: Any, qtbot: Any, hook_calls: list[HookCall]
) -> None:
    holder = QWidget()
    holder.bridge = MessageBridge(holder)  # type: ignore[attr-defined]
    inner = QWidget(QWidget(holder))
    qtbot.addWidget(holder)
    seen: list[UserMessage] = []
    holder.bridge.shown.connect(seen.append)  # type: ignore[attr-defined]
    spawn(_fail(SessionClosedError()), tell=inner, context="Could not open the chat", session_id="s9")
    qtbot.waitUntil(lambda: bool(seen), timeout=WAIT_MS)
    assert seen[0].text == f"Could not open the chat: {SessionClosedError.default_message}"
    assert seen[0].session_id == "s9"
    assert hook_calls == []


@pytest.mark.expected_log_warnings("could not save the draft")
def test_log_only_tells_nobody_but_the_log(
    qloop: Any, qtbot: Any, hook_calls: list[HookCall], caplog: Any
) -> None:
    task = spawn(_fail(SessionClosedError()), tell=LogOnly("could not save the draft"))
    qtbot.waitUntil(task.done, timeout=WAIT_MS)
    qtbot.waitUntil(lambda: "could not save the draft" in caplog.text, timeout=WAIT_MS)
    assert hook_calls == []


def test_spawn_has_no_on_error_and_needs_a_way_to_the_bridge() -> None:
    """A site cannot pick its own sink: there is no ``on_error`` to pass one, and ``tell`` (the
    bridge, a widget that reaches it, or an explicit ``LogOnly``) has no default."""
    parameters = inspect.signature(spawn).parameters
    assert "on_error" not in parameters and "bridge" not in parameters
    tell = parameters["tell"]
    assert tell.kind is inspect.Parameter.KEYWORD_ONLY and tell.default is inspect.Parameter.empty


@pytest.mark.parametrize("err", [ValueError("x"), KeyError("no session 'a'"), OSError(5, "I/O error")])
def test_an_error_without_a_user_message_goes_to_the_crash_handler(
    err: BaseException, qloop: Any, qtbot: Any, hook_calls: list[HookCall]
) -> None:
    bridge = MessageBridge()
    seen: list[UserMessage] = []
    bridge.shown.connect(seen.append)
    got: list[BaseException] = []
    spawn(_fail(err), tell=bridge, on_failed=got.append)
    qtbot.waitUntil(lambda: bool(hook_calls), timeout=WAIT_MS)
    assert hook_calls[0][1] is err
    assert hook_calls[0][2] is not None  # with its traceback, for the log
    assert got == [] and seen == []  # never shown as if the user could fix it
    assert not is_expected(err)
    assert "I/O" not in describe(err) and "no session" not in describe(err)


def test_results_come_back_and_cancel_running_leaves_nothing_pending(
    qloop: Any, qtbot: Any, run: Any
) -> None:
    results: list[int] = []

    async def answer() -> int:
        return 42

    spawn(answer(), tell=LogOnly("a test task"), on_done=results.append)
    qtbot.waitUntil(lambda: results == [42], timeout=WAIT_MS)

    forever = asyncio.Event()
    task = spawn(forever.wait(), tell=LogOnly("a test task"))
    assert task in running_tasks()
    run(cancel_running())
    assert task.cancelled()
    assert task not in running_tasks()
