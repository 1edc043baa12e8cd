"""Running engine coroutines from Qt slots, and where their errors go.

A slot cannot ``await``; it spawns a task on the qasync loop. Errors the user can
meet (a session that vanished, a busy session, a network failure, a keychain that
is not there) are *expected*: they go to the given ``on_error`` callback, which
shows them calmly in the window (one message bridge, as qutebrowser has). Anything
else is a bug and goes to ``sys.excepthook`` — the crash handler, which logs it.
"""

from __future__ import annotations

import asyncio
import logging
import sys
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

log = logging.getLogger("threadline.ui.common.tasks")

T = TypeVar("T")

ErrorCallback = Callable[[BaseException], None]

_EXPECTED: tuple[type[BaseException], ...] = (
    LookupError,
    ValueError,
    RuntimeError,
    OSError,
    TimeoutError,
)

_running: set[asyncio.Task[Any]] = set()


def is_expected(err: BaseException) -> bool:
    if isinstance(err, _EXPECTED):
        return True
    # Provider and store errors have their own hierarchies; their names say what they are.
    return any(
        cls.__module__.startswith(
            (
                "threadline.llm",
                "threadline.store",
                "threadline.engine",
                "keyring",
                "openai",
                "anthropic",
                "httpx",
                "sqlalchemy",
            )
        )
        for cls in type(err).__mro__
    )


def describe(err: BaseException) -> str:
    """A sentence for the user: the error's message without a traceback or class path."""
    text = str(err).strip().strip("'\"")
    if isinstance(err, KeyError) and text:
        return text
    return text or type(err).__name__


def spawn(
    coro: Coroutine[Any, Any, T],
    *,
    on_done: Callable[[T], None] | None = None,
    on_error: ErrorCallback | None = None,
    name: str = "",
) -> asyncio.Task[T]:
    """Run ``coro`` on the running loop; results and errors come back through callbacks."""
    loop = asyncio.get_event_loop()
    task = loop.create_task(coro, name=name or getattr(coro, "__qualname__", "ui-task"))
    _running.add(task)

    def done(t: asyncio.Task[T]) -> None:
        _running.discard(t)
        if t.cancelled():
            return
        err = t.exception()
        if err is None:
            if on_done is not None:
                on_done(t.result())
            return
        if is_expected(err) and on_error is not None:
            log.info("expected error in %s: %s", t.get_name(), err)
            on_error(err)
        elif is_expected(err):
            log.warning("unhandled expected error in %s: %s", t.get_name(), err)
        else:
            sys.excepthook(type(err), err, err.__traceback__)

    task.add_done_callback(done)
    return task


def running_tasks() -> set[asyncio.Task[Any]]:
    return set(_running)
